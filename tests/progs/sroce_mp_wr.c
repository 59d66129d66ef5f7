// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_mp_wr - multi-packet receive work requests (seed 000;
 * Documentation/mp-wr.md) on one device, QPs connected to each other:
 *
 *   sroce_mp_wr DEV reassembly [PEER]
 *                     RC messages of 1 B to 1 MiB from DEV to PEER (or to
 *                     DEV) rebuilt from the offsets and flags, read through
 *                     cq_ex and through the formatted CQ (sroce_mp_wr/reassembly.c)
 *   sroce_mp_wr DEV   the seed's Example A on RC (64 KiB buffers, 512 B
 *                     alignment, MTU 4096: every offset, length and flag
 *                     asserted) and Example B (1 MiB, 4 KiB: 256 packets a
 *                     WR); UC out of buffers within a message (MP_WR_INCOMPLETE);
 *                     UD datagrams; an SRQ shared by 4 RC QPs whose mixed
 *                     messages are rebuilt per qp_num from the offsets and
 *                     flags; an XRC SRQ (srocedv_create_srq_ex); a WQ behind an RSS
 *                     QP (srocedv_create_wq); and the bad inputs: posts of another length,
 *                     sizes above the caps, the attribute on a QP with an
 *                     SRQ, a CQ without SROCEDV_WC_EX_WITH_MP_WR, and a
 *                     posted descriptor rewritten in the ring (it reaches
 *                     the rings through the provider's private structs).
 * The helpers are in sroce_mp_wr/ (mp_wr.h).
 * Needs the port's active MTU at 4096 (a netdev MTU of at least 4200).
 */
#include <fcntl.h>

#include "sroce_mp_wr/mp_wr.h"

static void example_a(void)
{
	struct srocedv_mp_wr_attr mp = { 65536, 512 };
	struct ibv_cq_ex *scq, *rcq;
	struct ibv_qp *a, *b;
	bool up = pair_open(IBV_QPT_RC, &mp, &scq, &rcq, &a, &b);
	static struct mpc c[256];
	size_t n, bad = 0;
	const uint32_t len3[3] = { 4096, 4096, 3808 };

	CHECK(up && !connect_pair(a, b), "Example A: an RC pair, the receiver's RQ multi-packet");
	if (!up) {
		pair_close(a, b, scq, rcq);
		return;
	}
	CHECK(mp.wr_buffer_sz == 65536 && mp.packet_align_sz == 512, "sizes in use 65536/512: %zu/%u",
	      mp.wr_buffer_sz, mp.packet_align_sz);
	for (size_t i = 0; i < 65536; i++)
		mem[i] = (uint8_t)(i * 7 + 3);
	CHECK(post_mp(b, NULL, 1, 1 << 20, 65536) == 0 && post_mp(b, NULL, 2, 2 << 20, 65536) == 0,
	      "two 64 KiB WRs posted");
	for (unsigned int i = 0; i < 128; i++)
		send_msg(a, i * 512, 512, 0, NULL);
	drain_sends(scq, 128);
	n = poll_mp(rcq, c, 128);
	for (unsigned int i = 0; i < n; i++)
		bad += c[i].wr_id != 1 || c[i].status || c[i].opcode != IBV_WC_RECV || c[i].len != 512 ||
		       c[i].offset != i * 512u || (c[i].flags & MORE) || !!(c[i].flags & CONSUMED) != (i == 127);
	CHECK(n == 128 && !bad, "128 messages of 512 B fill WR 1, the last CONSUMED (%zu, %zu wrong)", n, bad);
	CHECK(!memcmp(mem + (1 << 20), mem, 65536), "their bytes at their offsets");
	send_msg(a, 0, 12000, 0, NULL);
	drain_sends(scq, 1);
	n = poll_mp(rcq, c, 3);
	bad = 0;
	for (unsigned int i = 0; i < n; i++)
		bad += c[i].wr_id != 2 || c[i].len != len3[i] || c[i].offset != i * 4096u ||
		       !!(c[i].flags & MORE) != (i < 2) || (c[i].flags & CONSUMED);
	CHECK(n == 3 && !bad, "12,000 bytes: 4096, 4096, 3808 with MORE_IN_MSG on the first two");
	CHECK(!memcmp(mem + (2 << 20), mem, 12000), "the 12,000 bytes");
	send_msg(a, 0, 53248, 0, NULL);
	drain_sends(scq, 1);
	n = poll_mp(rcq, c, 13);
	CHECK(n == 13 && c[0].offset == 12288 && c[12].offset == 12288 + 12 * 4096 && (c[12].flags & CONSUMED) &&
		      !(c[11].flags & CONSUMED),
	      "52 KiB were left: a 53,248-byte message fills WR 2 exactly");
	pair_close(a, b, scq, rcq);
}

static void example_b(void)
{
	struct srocedv_mp_wr_attr mp = { 1 << 20, 4096 };
	struct ibv_cq_ex *scq, *rcq;
	struct ibv_qp *a, *b;
	bool up = pair_open(IBV_QPT_RC, &mp, &scq, &rcq, &a, &b);
	static struct mpc c[512];
	size_t n, bad = 0;

	CHECK(up && !connect_pair(a, b), "Example B: 1 MiB buffers, 4 KiB alignment");
	if (!up) {
		pair_close(a, b, scq, rcq);
		return;
	}
	CHECK(post_mp(b, NULL, 1, 1 << 20, 1 << 20) == 0 && post_mp(b, NULL, 2, 2 << 20, 1 << 20) == 0,
	      "two 1 MiB WRs posted");
	for (unsigned int i = 0; i < 512; i++) {
		send_msg(a, (i % 16) * 64, 64, 0, NULL);
		if (i % 128 == 127)
			drain_sends(scq, 128);
	}
	n = poll_mp(rcq, c, 512);
	for (unsigned int i = 0; i < n; i++)
		bad += c[i].wr_id != 1 + i / 256 || c[i].offset != (i % 256) * 4096u || c[i].len != 64 ||
		       !!(c[i].flags & CONSUMED) != (i % 256 == 255);
	CHECK(n == 512 && !bad, "512 packets: 256 per WR, 4 KiB apart, CONSUMED on the 256th (%zu wrong)", bad);
	pair_close(a, b, scq, rcq);
}

static void uc_incomplete(void)
{
	struct srocedv_mp_wr_attr mp = { 8192, 4096 };
	struct ibv_cq_ex *scq, *rcq;
	struct ibv_qp *a, *b;
	bool up = pair_open(IBV_QPT_UC, &mp, &scq, &rcq, &a, &b);
	struct mpc c[4];
	size_t n;

	CHECK(up && !connect_pair(a, b), "UC: an 8 KiB multi-packet RQ");
	if (!up) {
		pair_close(a, b, scq, rcq);
		return;
	}
	post_mp(b, NULL, 1, 1 << 20, 8192);
	send_msg(a, 0, 12000, 0, NULL);
	drain_sends(scq, 1);
	n = poll_mp(rcq, c, 3);
	CHECK(n == 3 && (c[1].flags & CONSUMED) && c[2].opcode == SROCEDV_WC_RECV_NOP && c[2].wr_id == 1 &&
		      c[2].flags == SROCEDV_WC_MP_WR_INCOMPLETE,
	      "a 12,000-byte UC message out of buffers after 8 KiB ends with MP_WR_INCOMPLETE");
	post_mp(b, NULL, 2, 2 << 20, 8192);
	send_msg(a, 100, 300, 0, NULL);
	drain_sends(scq, 1);
	n = poll_mp(rcq, c, 1);
	CHECK(n == 1 && c[0].wr_id == 2 && c[0].offset == 0 && c[0].len == 300 && !memcmp(mem + (2 << 20), mem + 100, 300),
	      "the next UC message is whole");
	pair_close(a, b, scq, rcq);
}

static void ud(void)
{
	struct srocedv_mp_wr_attr mp = { 8192, 256 };
	struct ibv_cq_ex *scq, *rcq;
	struct ibv_qp *a, *b;
	bool up = pair_open(IBV_QPT_UD, &mp, &scq, &rcq, &a, &b);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = gid, .sgid_index = (uint8_t)gid_idx, .hop_limit = 64 } };
	struct ibv_ah *ah = NULL;
	struct mpc c[2];
	size_t n;

	CHECK(up && !qp_to_rts(a, 0, &gid, gid_idx, 0, 14) && !qp_to_rts(b, 0, &gid, gid_idx, 0, 14) &&
		      (ah = ibv_create_ah(pd, &aa)),
	      "UD: a multi-packet RQ, 256 B alignment");
	if (!ah) {
		pair_close(a, b, scq, rcq);
		return;
	}
	post_mp(b, NULL, 7, 1 << 20, 8192);
	send_msg(a, 0, 300, b->qp_num, ah);
	send_msg(a, 0, 300, b->qp_num, ah);
	drain_sends(scq, 2);
	n = poll_mp(rcq, c, 2);
	CHECK(n == 2 && c[0].offset == 0 && c[0].len == 340 && (c[0].flags & IBV_WC_GRH) && c[1].offset == 512 &&
		      !memcmp(mem + (1 << 20) + 512 + 40, mem, 300),
	      "two datagrams of 300 B: GRH and payload at 0 and 512");
	ibv_destroy_ah(ah);
	pair_close(a, b, scq, rcq);
}

/* Four RC senders into one multi-packet SRQ, messages of mixed sizes; each
 * is rebuilt from its completions (per qp_num) and compared. */
static void shared_srq(void)
{
	struct srocedv_mp_wr_attr mp = { 65536, 512 };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = MAX_RECV, .max_sge = 1 } };
	struct srocedv_srq_init_attr sd = { .comp_mask = SROCEDV_SRQ_INIT_ATTR_MP_WR, .mp_wr = &mp };
	struct ibv_srq *srq = srocedv_create_srq(pd, &sa, &sd);
	struct ibv_cq_ex *scq = make_cq(false), *rcq = make_cq(true);
	struct ibv_qp *s[4] = {}, *r[4] = {};
	static const uint32_t sizes[] = { 1, 100, 512, 4096, 5000, 12000, 70000, 200 };
	enum { ROUNDS = 8 };
	static uint8_t got[4][70000];
	uint32_t have[4] = {}, done = 0, mismatches = 0;
	static struct mpc c[1024];
	uint64_t wr = 0, next = 1 << 20;
	size_t posted = 0, consumed = 0;

	CHECK(srq && mp.wr_buffer_sz == 65536, "a multi-packet SRQ (%s)", srq ? "ok" : strerror(errno));
	if (!srq)
		return;
	for (int i = 0; i < 4; i++) {
		s[i] = make_qp(IBV_QPT_RC, scq, scq, NULL, NULL);
		r[i] = make_qp(IBV_QPT_RC, scq, rcq, srq, NULL);
		CHECK(s[i] && r[i] && !connect_pair(s[i], r[i]), "sender %d connected to the SRQ's QP", i);
		if (!s[i] || !r[i])
			return;
	}
	for (; posted < 32; posted++, next += 65536)
		post_mp(NULL, srq, ++wr, next, 65536);
	for (int round = 0; round < ROUNDS; round++) {
		uint32_t len = sizes[round];

		for (int i = 0; i < 4; i++)
			send_msg(s[i], (size_t)i * 1000, len, 0, NULL);
		drain_sends(scq, 4);
		memset(have, 0, sizeof(have));
		done = 0;
		while (done < 4) {
			size_t n = poll_mp(rcq, c, 1);

			if (!n)
				break;
			for (int i = 0; i < 4; i++) {
				if (c[0].qp_num != r[i]->qp_num || c[0].opcode == SROCEDV_WC_RECV_NOP)
					continue;
				/* The data is at (wr_id - 1) * 64 KiB + 1 MiB + offset. */
				memcpy(got[i] + have[i], mem + (1 << 20) + (c[0].wr_id - 1) * 65536 + c[0].offset,
				       c[0].len);
				have[i] += c[0].len;
				if (!(c[0].flags & MORE)) {
					done++;
					mismatches += have[i] != len || memcmp(got[i], mem + (size_t)i * 1000, len);
				}
			}
			if (c[0].flags & CONSUMED) {
				consumed++;
				if (posted < MAX_RECV - 1) /* the buffer is free again: repost it */
					post_mp(NULL, srq, c[0].wr_id, (1 << 20) + (c[0].wr_id - 1) * 65536, 65536),
						posted++;
			}
		}
		CHECK(done == 4, "round %d (%u B): 4 messages rebuilt", round, len);
	}
	CHECK(!mismatches, "every message rebuilt from offsets and flags equals what was sent (%u differ)",
	      mismatches);
	CHECK(consumed > 0, "buffers were released and reposted (%zu)", consumed);
	for (int i = 0; i < 4; i++) {
		ibv_destroy_qp(s[i]);
		ibv_destroy_qp(r[i]);
	}
	ibv_destroy_srq(srq);
	ibv_destroy_cq(ibv_cq_ex_to_cq(scq));
	ibv_destroy_cq(ibv_cq_ex_to_cq(rcq));
}

/* XRC: INIT -> RTR (-> RTS) with the masks of ib_core's XRC columns, MTU 4096. */
static int xrc_connect(struct ibv_qp *qp, uint32_t dest, bool tgt)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096, .dest_qp_num = dest,
				  .min_rnr_timer = 1,
				  .ah_attr = { .is_global = 1, .port_num = 1,
					       .grh = { .dgid = gid, .sgid_index = (uint8_t)gid_idx, .hop_limit = 64 } } };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				       (tgt ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0)))
		return -1;
	if (tgt)
		return 0;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7 };
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN | IBV_QP_RETRY_CNT |
					     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* A multi-packet XRC SRQ (srocedv_create_srq_ex): an initiator's messages
 * complete into the SRQ's CQ at their offsets; a CQ without the flag is
 * refused. */
static void xrc(void)
{
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS, .fd = -1,
					 .oflags = O_CREAT };
	struct ibv_xrcd *x = ibv_open_xrcd(ctx, &xa);
	struct ibv_cq_ex *scq = make_cq(false), *rcq = make_cq(true);
	struct srocedv_mp_wr_attr mp = { 65536, 512 };
	struct srocedv_srq_init_attr sd = { .comp_mask = SROCEDV_SRQ_INIT_ATTR_MP_WR, .mp_wr = &mp };
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = x, .cq = scq ? ibv_cq_ex_to_cq(scq) : NULL,
	};
	struct ibv_qp_init_attr_ex ta = { .qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x };
	struct ibv_qp_init_attr ia = { .send_cq = scq ? ibv_cq_ex_to_cq(scq) : NULL, .qp_type = IBV_QPT_XRC_SEND,
				       .cap = { .max_send_wr = 16, .max_send_sge = 1 } };
	struct ibv_qp *ini = NULL, *tgt = NULL;
	struct ibv_srq *srq = NULL;
	static struct mpc c[8];
	uint32_t srqn = 0;
	size_t n;

	CHECK(x && scq && rcq, "an XRC domain and CQs");
	if (!x || !scq || !rcq)
		goto out;
	errno = 0;
	CHECK(!srocedv_create_srq_ex(ctx, &sa, &sd) && errno == EINVAL,
	      "a multi-packet XRC SRQ on a CQ without SROCEDV_WC_EX_WITH_MP_WR: EINVAL");
	sa.cq = ibv_cq_ex_to_cq(rcq);
	srq = srocedv_create_srq_ex(ctx, &sa, &sd);
	ini = ibv_create_qp(pd, &ia);
	tgt = ibv_create_qp_ex(ctx, &ta);
	CHECK(srq && ini && tgt && !ibv_get_srq_num(srq, &srqn) && !xrc_connect(tgt, ini->qp_num, true) &&
		      !xrc_connect(ini, tgt->qp_num, false),
	      "a multi-packet XRC SRQ (srocedv_create_srq_ex), an initiator and a target (%s)", strerror(errno));
	if (!srq || !ini || !tgt)
		goto out;
	post_mp(NULL, srq, 1, 1 << 20, 65536);
	for (int i = 0; i < 2; i++) {
		struct ibv_sge s = { (uintptr_t)mem, i ? 5000 : 100, mr->lkey };
		struct ibv_send_wr w = { .wr_id = 1, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		w.qp_type.xrc.remote_srqn = srqn;
		ibv_post_send(ini, &w, &bad);
	}
	drain_sends(scq, 2);
	n = poll_mp(rcq, c, 3);
	CHECK(n == 3 && c[0].offset == 0 && c[0].len == 100 && c[1].offset == 512 && (c[1].flags & MORE) &&
		      c[2].offset == 512 + 4096 && c[2].len == 5000 - 4096 && c[2].qp_num == tgt->qp_num &&
		      !memcmp(mem + (1 << 20) + 512, mem, 5000),
	      "two messages into the XRC SRQ's buffer at 0, 512 and 4608, in its CQ");
out:
	if (ini)
		ibv_destroy_qp(ini);
	if (tgt)
		ibv_destroy_qp(tgt);
	if (srq)
		ibv_destroy_srq(srq);
	pair_close(NULL, NULL, scq, rcq);
	if (x)
		ibv_close_xrcd(x);
}


static void bad_inputs(void)
{
	struct srocedv_device_attr da = { .comp_mask = SROCEDV_DEVICE_ATTR_MASK_MP_WR_CAPS };
	struct ibv_cq_ex *scq = make_cq(false), *rcq = make_cq(true), *plain = make_cq(false);
	struct srocedv_mp_wr_attr mp = { 8192, 512 };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct srocedv_srq_init_attr sd = { .comp_mask = SROCEDV_SRQ_INIT_ATTR_MP_WR, .mp_wr = &mp };
	struct ibv_srq *srq;
	struct ibv_qp *a, *b;
	struct mpc c[2];
	size_t n;

	CHECK(srocedv_query_device(ctx, &da) == 0 && (da.comp_mask & SROCEDV_DEVICE_ATTR_MASK_MP_WR_CAPS) &&
		      da.mp_wr_caps.max_wr_buffer_sz == SROCE_MP_WR_MAX_BUFFER &&
		      da.mp_wr_caps.max_packet_align_sz == SROCE_MP_WR_MAX_ALIGN,
	      "srocedv_query_device: mp_wr_caps %zu / %u", da.mp_wr_caps.max_wr_buffer_sz,
	      da.mp_wr_caps.max_packet_align_sz);
	mp = (struct srocedv_mp_wr_attr){ 8192, SROCE_MP_WR_MAX_ALIGN * 2 };
	errno = 0;
	CHECK(!make_qp(IBV_QPT_RC, scq, rcq, NULL, &mp) && errno == EINVAL, "an alignment above the cap: EINVAL");
	mp = (struct srocedv_mp_wr_attr){ (size_t)SROCE_MP_WR_MAX_BUFFER + 1, 512 };
	errno = 0;
	CHECK(!make_qp(IBV_QPT_RC, scq, rcq, NULL, &mp) && errno == EINVAL, "a buffer above the cap: EINVAL");
	mp = (struct srocedv_mp_wr_attr){ 8192, 512 };
	errno = 0;
	CHECK(!make_qp(IBV_QPT_RC, scq, plain, NULL, &mp) && errno == EINVAL,
	      "a receive CQ without SROCEDV_WC_EX_WITH_MP_WR: EINVAL");
	srq = srocedv_create_srq(pd, &sa, &sd);
	CHECK(srq != NULL, "a multi-packet SRQ");
	errno = 0;
	CHECK(srq && !make_qp(IBV_QPT_RC, scq, rcq, srq, &mp) && errno == EINVAL,
	      "the attribute on a QP with an SRQ: EINVAL");
	errno = 0;
	CHECK(srq && !make_qp(IBV_QPT_RC, scq, plain, srq, NULL) && errno == EINVAL,
	      "a QP on the multi-packet SRQ with a CQ without the flag: EINVAL");
	if (srq)
		ibv_destroy_srq(srq);

	a = make_qp(IBV_QPT_RC, scq, scq, NULL, NULL);
	b = make_qp(IBV_QPT_RC, scq, rcq, NULL, &mp);
	CHECK(a && b && !connect_pair(a, b), "an RC pair with an 8 KiB multi-packet RQ");
	if (!a || !b) {
		pair_close(a, b, scq, rcq);
		return;
	}
	{
		struct ibv_sge sg[2] = { { (uintptr_t)mem + (1 << 20), 4096, mr->lkey },
					 { (uintptr_t)mem + (1 << 20) + 4096, 4000, mr->lkey } };
		struct ibv_recv_wr w[2] = { { .wr_id = 1, .sg_list = sg, .num_sge = 1, .next = &w[1] },
					    { .wr_id = 2, .sg_list = sg, .num_sge = 2 } },
				   *badw = NULL;
		struct sroce_uring *rq = &to_sqp(b)->rq;
		uint32_t idx = rq->idx;

		/* A post stops at its first bad WR (the host test covers the WRs
		 * before it being posted); here that is the first. */
		sg[1].length = 4096;
		CHECK(ibv_post_recv(b, w, &badw) == EINVAL && badw == &w[0] && rq->idx == idx,
		      "a list whose first WR is 4096 bytes on an 8 KiB queue: EINVAL at it, nothing posted");
	}
	/* A right-sized WR, then its SGE rewritten in the ring before any packet
	 * came: the kernel's check, not the provider's, refuses it. */
	memset(mem + (3 << 20), 0xee, 8192 + CANARY);
	post_mp(b, NULL, 9, 3 << 20, 8192);
	{
		struct sroce_uring *rq = &to_sqp(b)->rq;
		struct sroce_sge *sg = (struct sroce_sge *)((struct sroce_wqe *)sroce_ring_entry(rq, rq->idx - 1) + 1);

		__atomic_store_n(&sg->length, 8192 + CANARY, __ATOMIC_RELAXED);
	}
	send_msg(a, 0, 100, 0, NULL);
	n = poll_mp(rcq, c, 1);
	CHECK(n == 1 && c[0].wr_id == 9 && c[0].status == IBV_WC_LOC_LEN_ERR && (c[0].flags & CONSUMED),
	      "a descriptor rewritten to 12 KiB completes LOC_LEN_ERR (%s)",
	      n ? ibv_wc_status_str(c[0].status) : "nothing");
	n = 0;
	for (size_t i = 0; i < 8192 + CANARY; i++)
		n += mem[(3 << 20) + i] != 0xee;
	CHECK(!n, "no byte placed in the buffer or past it (%zu changed)", n);
	{
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qi;

		CHECK(!ibv_query_qp(b, &qa, IBV_QP_STATE, &qi) && qa.qp_state == IBV_QPS_ERR,
		      "the receiver's QP is in error");
	}
	pair_close(a, b, scq, rcq);
	ibv_destroy_cq(ibv_cq_ex_to_cq(plain));
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DEV [reassembly [PEER]]\n", argv[0]);
		return 2;
	}
	mem = aligned_alloc(4096, MEM);
	if (!mem || open_dev(argv[1], &here) || (argc > 3 ? open_dev(argv[3], &peer) : (peer = here, 0)))
		return 1;
	use(&here);
	if (argc > 2 && !strcmp(argv[2], "reassembly")) {
		failures += reassembly();
		goto out;
	}
	example_a();
	example_b();
	uc_incomplete();
	ud();
	shared_srq();
	xrc();
	failures += rss_wq();
	bad_inputs();
out:
	failures += common_failures();
	printf("sroce_mp_wr: %s (%d failed)\n", failures ? "FAILED" : "all passed", failures);
	return failures ? 1 : 0;
}

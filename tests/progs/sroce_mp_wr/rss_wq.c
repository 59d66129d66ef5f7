// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rss_wq.c - a multi-packet WQ behind an RSS QP (issues 18 and 19):
 * srocedv_create_wq with SROCEDV_WQ_INIT_ATTR_MP_WR, its refusals (a CQ
 * without SROCEDV_WC_EX_WITH_MP_WR, sizes above the caps, a post of
 * another length), 80 datagrams of 4 UD senders placed 512-aligned into
 * 64 KiB buffers with the hash in each completion and every byte checked,
 * a RECV_NOP when a buffer's rest is too short, and ERR flushing the
 * buffer in use first.
 */
#include "mp_wr.h"

enum { QKEY = 0x600d, SENDERS = 4, PER_SENDER = 20, LEN = 1000, BASE = 4 << 20, NBUF = 4 };

static const uint8_t key[40] = { 0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
				 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb };

static uint8_t pattern(uint32_t k, uint32_t i)
{
	return (uint8_t)(k * 31 + i * 7);
}

/* Datagram k's payload (its number first) where completion c put it. */
static bool payload_ok(const struct mpc *c)
{
	const uint8_t *p = mem + BASE + (c->wr_id - 1) * 65536 + c->offset + 40;
	uint32_t k;

	memcpy(&k, p, sizeof(k));
	for (uint32_t i = sizeof(k); i < LEN; i++)
		if (p[i] != pattern(k, i))
			return false;
	return k < SENDERS * PER_SENDER;
}

static struct ibv_wq *make_mp_wq(struct ibv_cq_ex *cq, struct srocedv_mp_wr_attr *mp)
{
	struct ibv_wq_init_attr a = {
		.wq_type = IBV_WQT_RQ, .max_wr = 8, .max_sge = 1, .pd = pd, .cq = ibv_cq_ex_to_cq(cq)
	};
	struct srocedv_wq_init_attr sa = { .comp_mask = SROCEDV_WQ_INIT_ATTR_MP_WR, .mp_wr = mp };

	return srocedv_create_wq(ctx, &a, &sa);
}

static int wq_post(struct ibv_wq *wq, uint64_t wr_id, uint32_t len)
{
	struct ibv_sge s = { (uintptr_t)mem + BASE + (wr_id - 1) * 65536, len, mr->lkey };
	struct ibv_recv_wr w = { .wr_id = wr_id, .sg_list = &s, .num_sge = 1 }, *bad;

	return ibv_post_wq_recv(wq, &w, &bad);
}

/* The RSS QP over a table of wq, in RTS, and its table. */
static struct ibv_qp *make_rss_qp(struct ibv_wq *wq, struct ibv_rwq_ind_table **table)
{
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = 0, .ind_tbl = &wq };
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_UD,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH,
		.pd = pd,
		.rx_hash_conf = { .rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ, .rx_hash_key_len = sizeof(key),
				  .rx_hash_key = (uint8_t *)key,
				  .rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 |
							 IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP },
	};
	struct ibv_qp *qp;

	*table = ibv_create_rwq_ind_table(ctx, &ta);
	if (!*table)
		return NULL;
	a.rwq_ind_tbl = *table;
	qp = ibv_create_qp_ex(ctx, &a);
	if (qp && ud_qp_rts(qp, QKEY)) {
		ibv_destroy_qp(qp);
		qp = NULL;
	}
	return qp;
}

/* What the 80 datagrams' completions say: placement, flags, hash, bytes. */
static void check_datagrams(const struct mpc *c, size_t n, uint32_t rss_qpn)
{
	size_t data = 0, nops = 0, bad = 0, wrong_bytes = 0;
	uint32_t next_off[NBUF + 1] = { 0 };

	for (size_t i = 0; i < n; i++) {
		bool nop = c[i].opcode == SROCEDV_WC_RECV_NOP;

		if (c[i].status != IBV_WC_SUCCESS || c[i].wr_id < 1 || c[i].wr_id > NBUF ||
		    c[i].offset != next_off[c[i].wr_id]) {
			bad++;
			continue;
		}
		if (nop) { /* the rest, 1024 bytes, is shorter than 1040 */
			nops++;
			bad += !(c[i].flags & CONSUMED) || c[i].offset != 42 * 1536;
			continue;
		}
		data++;
		next_off[c[i].wr_id] += 1536; /* 40 + 1000 bytes, 512-aligned */
		bad += c[i].len != 40 + LEN || c[i].qp_num != rss_qpn || c[i].hash_type != SROCEDV_RSS_HASH_UDP_IPV4 ||
		       !!(c[i].flags & CONSUMED);
		wrong_bytes += !payload_ok(&c[i]);
	}
	CHECK(n == SENDERS * PER_SENDER + 1 && data == SENDERS * PER_SENDER && nops == 1 && !bad && !wrong_bytes,
	      "RSS over a multi-packet WQ: %zu datagrams of %u senders at 1536-byte steps, hashed (UDP/IPv4), "
	      "buffer 1 released as a RECV_NOP after 42, %zu wrong, %zu with wrong bytes",
	      data, SENDERS, bad, wrong_bytes);
}

int rss_wq(void)
{
	struct srocedv_mp_wr_attr mp = { 65536, 512 }, huge = { (size_t)1 << 40, 512 };
	struct ibv_cq_ex *rcq = make_cq(true), *plain = make_cq(false);
	struct ibv_wq *wq = NULL;
	struct ibv_rwq_ind_table *table = NULL;
	struct ibv_qp *qp = NULL;
	struct ud_senders s = { 0 };
	static struct mpc c[128];
	size_t n;

	if (!rcq || !plain)
		goto out;
	CHECK(!make_mp_wq(plain, &mp) && errno == EINVAL, "a multi-packet WQ on a CQ without the flag: EINVAL (%s)",
	      strerror(errno));
	CHECK(!make_mp_wq(rcq, &huge) && errno == EINVAL, "a multi-packet WQ of 1 TiB buffers: EINVAL (%s)",
	      strerror(errno));
	wq = make_mp_wq(rcq, &mp);
	CHECK(wq && mp.wr_buffer_sz == 65536 && mp.packet_align_sz == 512, "a multi-packet WQ, 64 KiB / 512 (%s)",
	      wq ? "made" : strerror(errno));
	if (!wq)
		goto out;
	CHECK(!ibv_modify_wq(wq, &(struct ibv_wq_attr){ .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_RDY }),
	      "the WQ to RDY");
	CHECK(wq_post(wq, 1, 4096) == EINVAL, "a 4 KiB receive on the WQ: EINVAL");
	for (uint64_t i = 1; i <= NBUF; i++)
		wq_post(wq, i, 65536);
	qp = make_rss_qp(wq, &table);
	CHECK(qp != NULL, "an RSS UD QP over the WQ (%s)", qp ? "in RTS" : strerror(errno));
	if (!qp || ud_senders_make(&s, ctx, pd, &gid, gid_idx, SENDERS, 64, QKEY)) {
		CHECK(false, "UD senders: %s", strerror(errno));
		goto out;
	}
	for (uint32_t k = 0; k < SENDERS * PER_SENDER; k++) {
		uint8_t *p = s.buf + (size_t)(k % 64) * LEN;

		memcpy(p, &k, sizeof(k));
		for (uint32_t i = sizeof(k); i < LEN; i++)
			p[i] = pattern(k, i);
		ud_senders_send(&s, k % SENDERS, qp->qp_num, p, LEN);
		if (k % 32 == 31) { /* the sender buffer's slots are reused */
			struct ibv_wc wc[32];
			uint64_t deadline = now_ns() + 10000000000ull;

			for (int got = 0; got < 32 && now_ns() < deadline;)
				got += ibv_poll_cq(s.cq, 32 - got, wc);
		}
	}
	n = poll_mp(rcq, c, SENDERS * PER_SENDER + 1);
	check_datagrams(c, n, qp->qp_num);
	/* ERR: buffer 2, in use, flushes first (CONSUMED), then 3 and 4. */
	ibv_modify_wq(wq, &(struct ibv_wq_attr){ .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_ERR });
	n = poll_mp(rcq, c, 3);
	CHECK(n == 3 && c[0].wr_id == 2 && (c[0].flags & CONSUMED) && c[1].wr_id == 3 && c[2].wr_id == 4 &&
		      c[0].status == IBV_WC_WR_FLUSH_ERR && c[2].status == IBV_WC_WR_FLUSH_ERR,
	      "ERR flushes the buffer in use first, released, then the posted ones (%zu)", n);
out:
	ud_senders_free(&s);
	if (qp)
		ibv_destroy_qp(qp);
	if (table)
		ibv_destroy_rwq_ind_table(table);
	if (wq)
		ibv_destroy_wq(wq);
	if (rcq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(rcq));
	if (plain)
		ibv_destroy_cq(ibv_cq_ex_to_cq(plain));
	return failures;
}

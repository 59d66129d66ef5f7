// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_ud_srq DEV [SENDERS [N]]: SRQ with UD (seed 002-D) on one device.
 * srocedv_query_device must report SROCEDV_DEVICE_FLAG_UD_SRQ; then one UD
 * QP whose receives come from an SRQ takes N datagrams from each of
 * SENDERS UD QPs (default 4 x 200), interleaved, of sizes up to the MTU.
 * Every datagram is checked: its completion (status, source QP, GRH flag,
 * length) and every byte after the 40-byte GRH area, whose pattern names
 * the sender and the datagram.
 */
#include <stdbool.h>
#include <unistd.h>

#include <infiniband/srocedv.h>

#include "progs_common.h"

enum { MAX_SENDERS = 8, SLOT = 1024 + 40, RECVS = 64, QKEY = 0x11111111 };

static uint64_t rng = 0x5eed;

static uint8_t pattern(unsigned int sender, unsigned int seq, unsigned int j)
{
	return (uint8_t)(sender * 67 + seq * 13 + j);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
	int gid_idx;
	unsigned int senders = argc > 2 ? (unsigned int)atoi(argv[2]) : 4;
	unsigned int n = argc > 3 ? (unsigned int)atoi(argv[3]) : 200;
	struct srocedv_device_attr da = { 0 };

	if (argc < 2 || senders < 1 || senders > MAX_SENDERS) {
		fprintf(stderr, "usage: %s DEV [SENDERS (1-%d) [N]]\n", argv[0], MAX_SENDERS);
		return 2;
	}
	if (open_with_gid(argv[1], &ctx, &pd, &gid, &gid_idx))
		return 1;
	CHECK(!srocedv_query_device(ctx, &da) && (da.flags & SROCEDV_DEVICE_FLAG_UD_SRQ),
	      "srocedv_query_device: SROCEDV_DEVICE_FLAG_UD_SRQ (flags %#x)", da.flags);

	struct ibv_cq *rcq = ibv_create_cq(ctx, RECVS, NULL, NULL, 0), *scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = RECVS, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	struct ibv_qp_init_attr ra = { .send_cq = scq, .recv_cq = rcq, .srq = srq, .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 1, .max_send_sge = 1 } };
	struct ibv_qp *rq = srq && rcq && scq ? ibv_create_qp(pd, &ra) : NULL;
	struct ibv_qp *sq[MAX_SENDERS] = { 0 };
	uint8_t *rbuf = calloc(RECVS, SLOT), *sbuf = calloc(MAX_SENDERS, SLOT);
	struct ibv_mr *rmr = rbuf ? ibv_reg_mr(pd, rbuf, RECVS * SLOT, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_mr *smr = sbuf ? ibv_reg_mr(pd, sbuf, MAX_SENDERS * SLOT, 0) : NULL;
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = gid, .sgid_index = (uint8_t)gid_idx, .hop_limit = 64 } };
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	unsigned int sent[MAX_SENDERS] = { 0 }, got[MAX_SENDERS] = { 0 }, bad = 0, total = 0;

	CHECK(rq && rmr && smr && ah && !ud_qp_rts(rq, QKEY), "a UD QP 0x%x on an SRQ", rq ? rq->qp_num : 0);
	if (!rq || !rmr || !smr || !ah)
		return 1;
	for (unsigned int s = 0; s < senders; s++) {
		struct ibv_qp_init_attr qa = { .send_cq = scq, .recv_cq = scq, .qp_type = IBV_QPT_UD,
					       .cap = { .max_send_wr = 4, .max_recv_wr = 1, .max_send_sge = 1,
							.max_recv_sge = 1 } };

		sq[s] = ibv_create_qp(pd, &qa);
		if (!sq[s] || ud_qp_rts(sq[s], QKEY)) {
			CHECK(0, "sender %u", s);
			return 1;
		}
	}
	for (unsigned int i = 0; i < RECVS; i++) {
		struct ibv_sge sg = { (uintptr_t)rbuf + i * SLOT, SLOT, rmr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sg, .num_sge = 1 }, *badr;

		if (ibv_post_srq_recv(srq, &wr, &badr))
			return 1;
	}
	/* One datagram at a time from a random sender: each lands in some SRQ
	 * slot, checked and reposted before the next. */
	while (total < senders * n && !bad) {
		unsigned int s = (unsigned int)(xorshift64(&rng) % senders);

		if (sent[s] == n)
			continue;
		uint32_t len = (uint32_t)(xorshift64(&rng) % 1025);
		struct ibv_sge sg = { (uintptr_t)sbuf + s * SLOT, len, smr->lkey };
		struct ibv_send_wr wr = { .wr_id = s, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *badw;
		struct ibv_wc wc;
		int k;

		for (uint32_t j = 0; j < len; j++)
			sbuf[s * SLOT + j] = pattern(s, sent[s], j);
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = rq->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
		if (ibv_post_send(sq[s], &wr, &badw))
			return 1;
		for (k = 0; k < 10000 && ibv_poll_cq(scq, 1, &wc) != 1; k++)
			usleep(100);
		if (k == 10000 || wc.status != IBV_WC_SUCCESS) {
			bad++;
			break;
		}
		for (k = 0; k < 10000 && ibv_poll_cq(rcq, 1, &wc) != 1; k++)
			usleep(100);
		if (k == 10000) {
			printf("  datagram %u of sender %u: no receive completion\n", sent[s], s);
			bad++;
			break;
		}
		const uint8_t *at = rbuf + wc.wr_id * SLOT + 40;
		bool ok = wc.status == IBV_WC_SUCCESS && wc.src_qp == sq[s]->qp_num && (wc.wc_flags & IBV_WC_GRH) &&
			  wc.byte_len == 40 + len && wc.qp_num == rq->qp_num;

		for (uint32_t j = 0; ok && j < len; j++)
			ok = at[j] == pattern(s, sent[s], j);
		if (!ok)
			printf("  datagram %u of sender %u (%u B): status %s src_qp %#x len %u wrong\n", sent[s], s, len,
			       ibv_wc_status_str(wc.status), wc.src_qp, wc.byte_len);
		bad += !ok;
		got[s] += ok;
		sent[s]++;
		total++;
		{
			struct ibv_sge rsg = { (uintptr_t)rbuf + wc.wr_id * SLOT, SLOT, rmr->lkey };
			struct ibv_recv_wr rw = { .wr_id = wc.wr_id, .sg_list = &rsg, .num_sge = 1 }, *badr;

			memset(rbuf + wc.wr_id * SLOT, 0, SLOT);
			if (ibv_post_srq_recv(srq, &rw, &badr))
				return 1;
		}
	}
	for (unsigned int s = 0; s < senders; s++)
		CHECK(got[s] == n, "sender %u (QP 0x%x): %u of %u datagrams through the SRQ, every byte", s,
		      sq[s]->qp_num, got[s], n);
	for (unsigned int s = 0; s < senders; s++)
		ibv_destroy_qp(sq[s]);
	CHECK(!ibv_destroy_qp(rq) && !ibv_destroy_srq(srq), "destroy the UD QP and its SRQ");
	ibv_destroy_ah(ah);
	ibv_dereg_mr(rmr);
	ibv_dereg_mr(smr);
	ibv_destroy_cq(rcq);
	ibv_destroy_cq(scq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}

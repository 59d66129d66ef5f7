// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_mp_rate - the 64-byte SEND receive rate of one RC QP, and the
 * receive WRs it takes per packet, with ordinary receives or with
 * multi-packet ones (issue 19's Example B), for `make bench`
 * (scripts/bench/in-vm.sh). Not a test: it asserts nothing about speed.
 *
 *   sroce_mp_rate DEV PEER_DEV plain|mp SECONDS
 *
 * One process holds RC QP A on DEV and QP B on PEER_DEV (two hosts'
 * devices, both visible from init_net). A keeps up to DEPTH SENDs of 64
 * bytes outstanding to B, posted BATCH at a time, every BATCH-th signaled.
 * B receives them
 *   plain  into ordinary receive WRs of 64 bytes (RQ_WRS of them), each
 *          reposted once its completion is polled; standard verbs only, so
 *          that it runs on rdma_rxe too;
 *   mp     into multi-packet WRs (sroce only, Documentation/mp-wr.md) of
 *          1 MiB with 4 KiB alignment, 256 packets each (MP_BUFS of them),
 *          a buffer reposted when its CONSUMED completion comes.
 * Every SEND carries its sequence number and a pattern made from it. B
 * checks each message's length and number (RC delivers in order), in mp
 * its offset's alignment, and every SAMPLE-th message's bytes.
 * Received messages and the receive WRs posted (through ibv_post_recv) are
 * counted over the middle of the run (one second of margin at each end, as
 * perftest -D S -f 1). Output: perftest's bandwidth header and row
 * (scripts/bench/report.py reads both alike),
 *   #bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]
 * then
 *   recv_posts P packets N posts_per_packet P/N
 * Exit 0; 1 on a failure (set-up, a post, a completion in error, a wrong
 * length, number, offset or byte); 2 on bad arguments.
 */
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/srocedv.h>

#include "progs_common.h"
#include "rate_common.h"

enum {
	BYTES = 64, DEPTH = 128, BATCH = 16,
	/* plain: twice the SENDs in flight, so that A waits for no repost (RNR). */
	RQ_WRS = 2 * DEPTH,
	MP_BUF = 1 << 20, MP_ALIGN = 4096, MP_BUFS = 4,
	/* Completions read per poll, and so receive WRs per repost chain. */
	POLL = 32,
	SAMPLE = 32,
};

enum mode { PLAIN, MP };

static enum mode mode;
static struct qp_end A, B;
static uint8_t *sbuf, *rbuf;     /* A's DEPTH send slots; B's receive buffers */
static struct ibv_mr *smr, *rmr;
static struct ibv_cq_ex *rcq_ex; /* mp: B's CQ, read through cq_ex for the offsets */
static uint64_t next_seq, expect_seq;

/* Message seq: its number, then a pattern made from it. */
static void fill(uint8_t *p, uint64_t seq)
{
	memcpy(p, &seq, sizeof(seq));
	for (int j = sizeof(seq); j < BYTES; j++)
		p[j] = (uint8_t)(seq * 31 + j);
}

/* The next message, received at p: 0, or -1 with a message. */
static int check_msg(const uint8_t *p, uint32_t len)
{
	uint8_t want[BYTES];
	uint64_t seq;

	if (len != BYTES) {
		CHECK(0, "message %llu: %u bytes, want %d", (unsigned long long)expect_seq, len, BYTES);
		return -1;
	}
	memcpy(&seq, p, sizeof(seq));
	if (seq != expect_seq) {
		CHECK(0, "message %llu arrived as number %llu", (unsigned long long)expect_seq,
		      (unsigned long long)seq);
		return -1;
	}
	if (seq % SAMPLE == 0) {
		fill(want, seq);
		if (memcmp(p, want, BYTES)) {
			CHECK(0, "message %llu: its bytes differ from those sent", (unsigned long long)seq);
			return -1;
		}
	}
	expect_seq++;
	return 0;
}

/* B's CQ: ibv_create_cq (plain), or srocedv_create_cq with the multi-packet
 * flag (mp; libibverbs' ibv_create_cq_ex refuses a flag it does not know). */
static struct ibv_cq *recv_cq(void)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 4096,
					 .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | SROCEDV_WC_EX_WITH_MP_WR };

	if (mode == PLAIN)
		return ibv_create_cq(B.ctx, 2 * RQ_WRS, NULL, NULL, 0);
	rcq_ex = srocedv_create_cq(B.ctx, &a, NULL);
	return rcq_ex ? ibv_cq_ex_to_cq(rcq_ex) : NULL;
}

static int setup(const char *dev, const char *peer)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};
	struct srocedv_mp_wr_attr mp = { MP_BUF, MP_ALIGN };
	struct srocedv_qp_init_attr d = { .comp_mask = SROCEDV_QP_INIT_ATTR_MP_WR, .mp_wr = &mp };
	size_t rsize = mode == MP ? (size_t)MP_BUFS * MP_BUF : (size_t)RQ_WRS * BYTES;

	if (open_with_gid(dev, &A.ctx, &A.pd, &A.gid, &A.gid_idx) ||
	    open_with_gid(peer, &B.ctx, &B.pd, &B.gid, &B.gid_idx))
		return -1;
	sbuf = aligned_alloc(4096, DEPTH * BYTES);
	rbuf = aligned_alloc(4096, rsize);
	A.cq = ibv_create_cq(A.ctx, DEPTH, NULL, NULL, 0);
	B.cq = recv_cq();
	if (!sbuf || !rbuf || !A.cq || !B.cq)
		return -1;
	smr = ibv_reg_mr(A.pd, sbuf, DEPTH * BYTES, IBV_ACCESS_LOCAL_WRITE);
	rmr = ibv_reg_mr(B.pd, rbuf, rsize, IBV_ACCESS_LOCAL_WRITE);
	ia.pd = A.pd;
	ia.send_cq = ia.recv_cq = A.cq;
	A.qp = ibv_create_qp_ex(A.ctx, &ia);
	ia.pd = B.pd;
	ia.send_cq = ia.recv_cq = B.cq;
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_wr = mode == MP ? MP_BUFS : RQ_WRS;
	B.qp = mode == MP ? srocedv_create_qp(B.ctx, &ia, &d) : ibv_create_qp_ex(B.ctx, &ia);
	if (!smr || !rmr || !A.qp || !B.qp)
		return -1;
	if (mode == MP && (mp.wr_buffer_sz != MP_BUF || mp.packet_align_sz != MP_ALIGN)) {
		fprintf(stderr, "multi-packet sizes in use %zu/%u, asked %d/%d\n", mp.wr_buffer_sz,
			mp.packet_align_sz, MP_BUF, MP_ALIGN);
		return -1;
	}
	return qp_to_init(A.qp, 0) || qp_to_init(B.qp, 0) ||
	       qp_to_rts(A.qp, B.qp->qp_num, &B.gid, A.gid_idx, 1, 14) ||
	       qp_to_rts(B.qp, A.qp->qp_num, &A.gid, B.gid_idx, 1, 14);
}

/* BATCH SENDs from A, the last signaled, each from its own slot (free
 * again once its batch completed: at most DEPTH in flight). */
static int post_sends(void)
{
	struct ibv_sge sge[BATCH];
	struct ibv_send_wr wr[BATCH], *bad;

	for (int i = 0; i < BATCH; i++, next_seq++) {
		uint8_t *p = sbuf + (next_seq % DEPTH) * BYTES;

		fill(p, next_seq);
		sge[i] = (struct ibv_sge){ (uintptr_t)p, BYTES, smr->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = next_seq, .sg_list = &sge[i], .num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = i == BATCH - 1 ? IBV_SEND_SIGNALED : 0,
			.next = i == BATCH - 1 ? NULL : &wr[i + 1],
		};
	}
	return ibv_post_send(A.qp, wr, &bad);
}

/* Receive WRs for B's buffers idx[0..n-1] (64-byte slots, or 1 MiB
 * buffers), as one chain. */
static int post_recvs(const uint32_t *idx, int n)
{
	size_t sz = mode == MP ? MP_BUF : BYTES;
	struct ibv_sge sge[POLL];
	struct ibv_recv_wr wr[POLL], *bad;

	if (!n)
		return 0;
	for (int i = 0; i < n; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)rbuf + idx[i] * sz, (uint32_t)sz, rmr->lkey };
		wr[i] = (struct ibv_recv_wr){ .wr_id = idx[i], .sg_list = &sge[i], .num_sge = 1,
					      .next = i == n - 1 ? NULL : &wr[i + 1] };
	}
	return ibv_post_recv(B.qp, wr, &bad);
}

/* What one poll of B's CQ received: messages, and receive WRs reposted. */
struct got {
	int msgs, posts;
};

/* plain: every completion is a message in its slot (wr_id), reposted. */
static int poll_plain(struct got *g)
{
	struct ibv_wc wc[POLL];
	uint32_t idx[POLL];
	int n = ibv_poll_cq(B.cq, POLL, wc);

	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS || wc[i].opcode != IBV_WC_RECV || wc[i].wr_id >= RQ_WRS) {
			CHECK(0, "receive completion: %s, opcode %d, wr_id %llu", ibv_wc_status_str(wc[i].status),
			      wc[i].opcode, (unsigned long long)wc[i].wr_id);
			return -1;
		}
		if (check_msg(rbuf + wc[i].wr_id * BYTES, wc[i].byte_len))
			return -1;
		idx[i] = (uint32_t)wc[i].wr_id;
	}
	g->msgs = g->posts = n > 0 ? n : 0;
	return n < 0 ? -1 : post_recvs(idx, g->posts);
}

/* mp: a message at its offset in its buffer (wr_id); a buffer is reposted
 * on its CONSUMED completion, which is a message's or, for a buffer
 * released without data, a RECV_NOP's. */
static int poll_mp(struct got *g)
{
	struct ibv_poll_cq_attr pa = {};
	uint32_t idx[POLL];
	int err = ibv_start_poll(rcq_ex, &pa), n = 0;

	g->msgs = g->posts = 0;
	if (err == ENOENT)
		return 0;
	if (err) {
		CHECK(0, "ibv_start_poll: %s", strerror(err));
		return -1;
	}
	do {
		enum ibv_wc_opcode op = ibv_wc_read_opcode(rcq_ex);
		unsigned int flags = ibv_wc_read_wc_flags(rcq_ex);
		uint32_t len = ibv_wc_read_byte_len(rcq_ex);
		size_t off = srocedv_wc_read_mp_wr_offset(rcq_ex);
		uint64_t id = rcq_ex->wr_id;
		bool data = op == IBV_WC_RECV;

		if (rcq_ex->status != IBV_WC_SUCCESS || id >= MP_BUFS ||
		    !(data || (op == SROCEDV_WC_RECV_NOP && (flags & SROCEDV_WC_MP_WR_CONSUMED))) ||
		    (flags & SROCEDV_WC_MP_WR_MORE_IN_MSG) || off % MP_ALIGN || off + len > MP_BUF) {
			CHECK(0, "receive completion: %s, opcode %d, flags %#x, wr_id %llu, offset %zu, %u bytes",
			      ibv_wc_status_str(rcq_ex->status), op, flags, (unsigned long long)id, off, len);
			err = -1;
			break;
		}
		if (data && check_msg(rbuf + id * MP_BUF + off, len)) {
			err = -1;
			break;
		}
		g->msgs += data;
		if (flags & SROCEDV_WC_MP_WR_CONSUMED)
			idx[g->posts++] = (uint32_t)id;
	} while (++n < POLL && ibv_next_poll(rcq_ex) == 0);
	ibv_end_poll(rcq_ex);
	return err ? -1 : post_recvs(idx, g->posts);
}

int main(int argc, char **argv)
{
	uint64_t msgs = 0, posts = 0;
	unsigned int batches_out = 0;
	uint32_t idx[POLL];
	struct rate_run run;
	double seconds;

	if (argc != 5 || (strcmp(argv[3], "plain") && strcmp(argv[3], "mp"))) {
		fprintf(stderr, "usage: %s DEV PEER_DEV plain|mp SECONDS\n", argv[0]);
		return 2;
	}
	mode = !strcmp(argv[3], "mp") ? MP : PLAIN;
	seconds = atof(argv[4]);
	if (setup(argv[1], argv[2])) {
		CHECK(0, "set up %s -> %s (%s): %s", argv[1], argv[2], argv[3], strerror(errno));
		return 1;
	}
	/* Every receive buffer posted before the first SEND. */
	for (int first = 0, total = mode == MP ? MP_BUFS : RQ_WRS; first < total; first += POLL) {
		int n = total - first < POLL ? total - first : POLL, err;

		for (int i = 0; i < n; i++)
			idx[i] = first + i;
		err = post_recvs(idx, n);
		if (err) {
			CHECK(0, "post the first receives (%s): %s", argv[3], strerror(err));
			return 1;
		}
	}
	run = rate_run_begin(seconds);
	for (;;) {
		struct got g;
		double t = now_s();
		int err;

		if (t >= run.stop)
			break;
		if (rate_send_step(A.cq, &batches_out, DEPTH / BATCH, post_sends) < 0)
			return 1;
		err = mode == MP ? poll_mp(&g) : poll_plain(&g);
		if (err) {
			if (err > 0)
				CHECK(0, "repost receives (%s): %s", argv[3], strerror(err));
			return 1;
		}
		if (rate_run_counts(&run, t)) {
			msgs += g.msgs;
			posts += g.posts;
		}
	}
	rate_run_print(&run, BYTES, msgs);
	printf("recv_posts %llu packets %llu posts_per_packet %.6f\n", (unsigned long long)posts,
	       (unsigned long long)msgs, msgs ? (double)posts / (double)msgs : 0.0);
	return 0;
}

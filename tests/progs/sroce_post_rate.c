// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_post_rate - the 64-byte RDMA WRITE message rate of one RC QP,
 * posted through ibv_post_send, through the ibv_wr_* builders or through
 * the interface families (sroce only), for `make bench`
 * (scripts/bench/in-vm.sh). Not a test: it asserts nothing about speed.
 *
 *   sroce_post_rate DEV PEER_DEV post|wr|family SECONDS
 *
 * One process holds QP A on DEV and QP B on PEER_DEV (two hosts' devices,
 * both visible from init_net) and keeps up to DEPTH WRITEs of 64 bytes
 * outstanding from A to B, posting BATCH at a time (one ibv_post_send
 * chain, one ibv_wr_start .. ibv_wr_complete, or BATCH write_pending of
 * an unsignalled and a signalled RDMA table and one flush), every BATCH-th
 * signaled.
 * It counts completed WRITEs over the middle of the run (one second of
 * margin at each end, as perftest -D S -f 1) and prints perftest's
 * bandwidth header and row, so that report.py reads both alike:
 *   #bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]
 * and, on stderr, "posted N": the WRs of the whole run, to divide the
 * instruction count of post_batch by.
 */
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/srocedv.h>

#include "progs_common.h"
#include "rate_common.h"

enum { BYTES = 64, DEPTH = 128, BATCH = 16 };

struct end {
	struct qp_end q;
	struct ibv_mr *mr;
	uint8_t *buf;
};

static int end_init(struct end *e, const char *dev, bool ex)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | (ex ? IBV_QP_INIT_ATTR_SEND_OPS_FLAGS : 0),
		.send_ops_flags = ex ? IBV_QP_EX_WITH_RDMA_WRITE : 0,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	if (open_with_gid(dev, &e->q.ctx, &e->q.pd, &e->q.gid, &e->q.gid_idx))
		return -1;
	e->buf = aligned_alloc(4096, 4096);
	e->q.cq = ibv_create_cq(e->q.ctx, DEPTH, NULL, NULL, 0);
	if (!e->buf || !e->q.cq)
		return -1;
	ia.pd = e->q.pd;
	ia.send_cq = ia.recv_cq = e->q.cq;
	e->mr = ibv_reg_mr(e->q.pd, e->buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	e->q.qp = ibv_create_qp_ex(e->q.ctx, &ia);
	if (!e->mr || !e->q.qp)
		return -1;
	return ibv_modify_qp(e->q.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static struct end A, B;

/* The families' mode: two RDMA tables of A's QP, for selective signalling. */
static const struct srocedv_qp_ops_rdma *quiet, *loud;

static int family_tables(void)
{
	struct srocedv_query_intf_params p = { .intf = SROCEDV_INTF_QP_RDMA, .intf_version = SROCEDV_INTF_VERSION,
					       .obj = A.q.qp, .family_flags = SROCEDV_QP_OPS_UNSIGNALED };

	quiet = srocedv_query_intf(A.q.qp->context, &p);
	p.family_flags = 0;
	loud = srocedv_query_intf(A.q.qp->context, &p);
	return quiet && loud ? 0 : -1;
}

enum mode { POST, WR, FAMILY };

static enum mode mode;
static uint64_t posted;

/* BATCH WRITEs from A to B, the last signaled. Not inlined: make bench
 * counts the instructions under it by name (callgrind,
 * scripts/bench/in-vm.sh's post_ir). */
static __attribute__((noinline)) int post_batch(void)
{
	struct ibv_sge sge = { (uintptr_t)A.buf, BYTES, A.mr->lkey };

	if (mode == FAMILY) {
		for (int i = 0; i < BATCH; i++) {
			int err = (i == BATCH - 1 ? loud : quiet)->write_pending(A.q.qp, sge.addr, BYTES, sge.lkey,
										(uintptr_t)B.buf, B.mr->rkey, i);
			if (err)
				return err;
		}
		return quiet->flush(A.q.qp);
	}
	if (mode == WR) {
		struct ibv_qp_ex *x = ibv_qp_to_qp_ex(A.q.qp);

		ibv_wr_start(x);
		for (int i = 0; i < BATCH; i++) {
			x->wr_id = i;
			x->wr_flags = i == BATCH - 1 ? IBV_SEND_SIGNALED : 0;
			ibv_wr_rdma_write(x, B.mr->rkey, (uintptr_t)B.buf);
			ibv_wr_set_sge(x, sge.lkey, sge.addr, sge.length);
		}
		return ibv_wr_complete(x);
	}
	struct ibv_send_wr wr[BATCH], *bad;

	for (int i = 0; i < BATCH; i++)
		wr[i] = (struct ibv_send_wr){
			.wr_id = i, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			.send_flags = i == BATCH - 1 ? IBV_SEND_SIGNALED : 0,
			.next = i == BATCH - 1 ? NULL : &wr[i + 1],
			.wr = { .rdma = { .remote_addr = (uintptr_t)B.buf, .rkey = B.mr->rkey } },
		};
	return ibv_post_send(A.q.qp, wr, &bad);
}

/* rate_send_step's post: a batch, counted. */
static int post_counted(void)
{
	int err = post_batch();

	if (!err)
		posted += BATCH;
	return err;
}

int main(int argc, char **argv)
{
	double seconds;
	struct rate_run run;
	uint64_t counted = 0;
	unsigned int batches_out = 0;

	if (argc != 5) {
		fprintf(stderr, "usage: %s DEV PEER_DEV post|wr|family SECONDS\n", argv[0]);
		return 2;
	}
	mode = !strcmp(argv[3], "wr") ? WR : !strcmp(argv[3], "family") ? FAMILY : POST;
	seconds = atof(argv[4]);
	if (end_init(&A, argv[1], mode == WR) || end_init(&B, argv[2], false) ||
	    qp_to_rts(A.q.qp, B.q.qp->qp_num, &B.q.gid, A.q.gid_idx, 1, 14) ||
	    qp_to_rts(B.q.qp, A.q.qp->qp_num, &A.q.gid, B.q.gid_idx, 1, 14) ||
	    (mode == FAMILY && family_tables())) {
		CHECK(0, "set up %s -> %s: %s", argv[1], argv[2], strerror(errno));
		return 1;
	}
	run = rate_run_begin(seconds);
	for (;;) {
		double t = now_s();
		int n;

		if (t >= run.stop)
			break;
		n = rate_send_step(A.q.cq, &batches_out, DEPTH / BATCH, post_counted);
		if (n < 0)
			return 1;
		if (rate_run_counts(&run, t))
			counted += (uint64_t)n * BATCH;
	}
	rate_run_print(&run, BYTES, counted);
	/* For the instruction count: the WRs under post_batch. */
	fprintf(stderr, "posted %llu\n", (unsigned long long)posted);
	return 0;
}

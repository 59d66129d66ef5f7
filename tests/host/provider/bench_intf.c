// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench_intf.c - the cost of posting and polling through the provider's
 * three interfaces (ibv_post_send/ibv_poll_cq, ibv_wr_* / ibv_cq_ex, and
 * the interface families), on rings in this process's memory: the kernel's
 * side is played between the measured calls, and the doorbell is never
 * needed (the SQ poller's mode: no system call). Not a test: nothing is
 * asserted (make bench-intf; scripts/bench/intf.sh).
 *
 *   bench_intf              ns per WR or completion, each case
 *   bench_intf --case NAME  runs only NAME (callgrind counts its phase_*
 *                           function: instructions per WR or completion)
 *
 * Each case is a phase_NAME function doing one round of BURST operations;
 * the rings are emptied or refilled between rounds, outside it.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_qp.h"
#include "infiniband/srocedv.h"

enum { BURST = 16, CQ_LOG = 6 };

static struct fake_qp fq;
static struct ibv_qp *qp;
static struct ibv_qp_ex *qpx;
static const struct srocedv_qp_ops_msg *msg;
static const struct srocedv_qp_ops_rdma *rdma;
static uint64_t seq;

static struct {
	struct sroce_cq cq;
	struct sroce_ring_header hdr;
	struct sroce_cqe entries[1 << CQ_LOG];
} fc;
static const struct srocedv_cq_formatted_ops *fmt;
static uint64_t sink;

#define PHASE static __attribute__((noinline)) void

/* Posting, one WR per call: a 64-byte SEND, signalled. */
PHASE phase_post_send(void)
{
	for (int i = 0; i < BURST; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)payload, .length = 64, .lkey = 1 };
		struct ibv_send_wr wr = { .wr_id = seq++, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

		sink += (uint64_t)ibv_post_send(qp, &wr, &bad);
	}
}

PHASE phase_wr_send(void)
{
	for (int i = 0; i < BURST; i++) {
		ibv_wr_start(qpx);
		qpx->wr_id = seq++;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, 1, (uintptr_t)payload, 64);
		sink += (uint64_t)ibv_wr_complete(qpx);
	}
}

PHASE phase_family_send(void)
{
	for (int i = 0; i < BURST; i++)
		sink += (uint64_t)msg->send(qp, (uintptr_t)payload, 64, 1, seq++);
}

/* A 64-byte RDMA WRITE, signalled. */
PHASE phase_post_write(void)
{
	for (int i = 0; i < BURST; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)payload, .length = 64, .lkey = 1 };
		struct ibv_send_wr wr = { .wr_id = seq++, .sg_list = &sge, .num_sge = 1,
					  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED }, *bad;

		wr.wr.rdma.remote_addr = 0x1000;
		wr.wr.rdma.rkey = 2;
		sink += (uint64_t)ibv_post_send(qp, &wr, &bad);
	}
}

PHASE phase_wr_write(void)
{
	for (int i = 0; i < BURST; i++) {
		ibv_wr_start(qpx);
		qpx->wr_id = seq++;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(qpx, 2, 0x1000);
		ibv_wr_set_sge(qpx, 1, (uintptr_t)payload, 64);
		sink += (uint64_t)ibv_wr_complete(qpx);
	}
}

PHASE phase_family_write(void)
{
	for (int i = 0; i < BURST; i++)
		sink += (uint64_t)rdma->write(qp, (uintptr_t)payload, 64, 1, 0x1000, 2, seq++);
}

/* A burst of 16 SENDs published at once: a chain, a batch, pendings. */
PHASE phase_post_send_burst(void)
{
	struct ibv_sge sge = { .addr = (uintptr_t)payload, .length = 64, .lkey = 1 };
	struct ibv_send_wr wr[BURST], *bad;

	for (int i = 0; i < BURST; i++)
		wr[i] = (struct ibv_send_wr){ .wr_id = seq++, .sg_list = &sge, .num_sge = 1,
					      .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
					      .next = i + 1 < BURST ? &wr[i + 1] : NULL };
	sink += (uint64_t)ibv_post_send(qp, wr, &bad);
}

PHASE phase_wr_send_burst(void)
{
	ibv_wr_start(qpx);
	for (int i = 0; i < BURST; i++) {
		qpx->wr_id = seq++;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, 1, (uintptr_t)payload, 64);
	}
	sink += (uint64_t)ibv_wr_complete(qpx);
}

PHASE phase_family_send_burst(void)
{
	for (int i = 0; i < BURST; i++)
		sink += (uint64_t)msg->send_pending(qp, (uintptr_t)payload, 64, 1, seq++);
	sink += (uint64_t)msg->flush(qp);
}

/* Polling BURST successful receive completions, one per call. */
PHASE phase_poll_cq(void)
{
	struct ibv_wc wc;

	for (int i = 0; i < BURST; i++) {
		sink += (uint64_t)ibv_poll_cq(&fc.cq.vcq.cq, 1, &wc);
		sink += wc.wr_id + wc.byte_len + wc.wc_flags;
	}
}

PHASE phase_cq_ex(void)
{
	struct ibv_poll_cq_attr attr = { 0 };
	struct ibv_cq_ex *ex = &fc.cq.vcq.cq_ex;

	for (int i = 0; i < BURST; i++) {
		if (ibv_start_poll(ex, &attr))
			continue;
		sink += ex->wr_id + ex->status + ibv_wc_read_byte_len(ex) + ibv_wc_read_wc_flags(ex);
		ibv_end_poll(ex);
	}
}

PHASE phase_formatted(void)
{
	struct srocedv_wc_base base;

	for (int i = 0; i < BURST; i++) {
		sink += (uint64_t)fmt->poll_formatted(&fc.cq.vcq.cq, &base, sizeof(base));
		sink += base.wr_id + base.byte_len + base.wc_flags;
	}
}

/* The same, 16 completions per call. */
PHASE phase_poll_cq_burst(void)
{
	struct ibv_wc wc[BURST];
	int n = ibv_poll_cq(&fc.cq.vcq.cq, BURST, wc);

	for (int i = 0; i < n; i++)
		sink += wc[i].wr_id + wc[i].byte_len + wc[i].wc_flags;
}

PHASE phase_cq_ex_burst(void)
{
	struct ibv_poll_cq_attr attr = { 0 };
	struct ibv_cq_ex *ex = &fc.cq.vcq.cq_ex;

	if (ibv_start_poll(ex, &attr))
		return;
	do
		sink += ex->wr_id + ex->status + ibv_wc_read_byte_len(ex) + ibv_wc_read_wc_flags(ex);
	while (!ibv_next_poll(ex));
	ibv_end_poll(ex);
}

PHASE phase_formatted_burst(void)
{
	struct srocedv_wc_base base[BURST];
	int n = fmt->poll_formatted(&fc.cq.vcq.cq, base, sizeof(base));

	for (int i = 0; i < n; i++)
		sink += base[i].wr_id + base[i].byte_len + base[i].wc_flags;
}

/* The kernel's side between rounds: every WQE taken; BURST CQEs written. */
static __attribute__((noinline)) void kernel_side(void)
{
	consume_all(&fq);
	for (int i = 0; i < BURST && fc.hdr.producer - fc.hdr.consumer < (1u << CQ_LOG); i++) {
		struct sroce_cqe *c = &fc.entries[fc.hdr.producer & fc.cq.ring.mask];

		*c = (struct sroce_cqe){ .wr_id = seq, .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV,
					 .byte_len = 64, .qp_num = 17 };
		__atomic_store_n(&fc.hdr.producer, fc.hdr.producer + 1, __ATOMIC_RELEASE);
	}
}

static const struct {
	const char *name;
	void (*phase)(void);
	int per_round;           /* WRs or completions per call of phase */
	const char *what;
} cases[] = {
	{ "post_send", phase_post_send, BURST, "SEND, 1 WR per call: ibv_post_send" },
	{ "wr_send", phase_wr_send, BURST, "SEND, 1 WR per call: ibv_wr_start/send/set_sge/complete" },
	{ "family_send", phase_family_send, BURST, "SEND, 1 WR per call: family send" },
	{ "post_write", phase_post_write, BURST, "WRITE, 1 WR per call: ibv_post_send" },
	{ "wr_write", phase_wr_write, BURST, "WRITE, 1 WR per call: ibv_wr_*" },
	{ "family_write", phase_family_write, BURST, "WRITE, 1 WR per call: family write" },
	{ "post_send_burst", phase_post_send_burst, BURST, "SEND, 16 per publication: ibv_post_send chain" },
	{ "wr_send_burst", phase_wr_send_burst, BURST, "SEND, 16 per publication: one ibv_wr_* batch" },
	{ "family_send_burst", phase_family_send_burst, BURST, "SEND, 16 per publication: send_pending + flush" },
	{ "poll_cq", phase_poll_cq, BURST, "poll, 1 per call: ibv_poll_cq" },
	{ "cq_ex", phase_cq_ex, BURST, "poll, 1 per call: ibv_start_poll/read/end_poll" },
	{ "formatted", phase_formatted, BURST, "poll, 1 per call: poll_formatted (BASE)" },
	{ "poll_cq_burst", phase_poll_cq_burst, BURST, "poll, 16 per call: ibv_poll_cq" },
	{ "cq_ex_burst", phase_cq_ex_burst, BURST, "poll, 16 per call: start/next/end_poll" },
	{ "formatted_burst", phase_formatted_burst, BURST, "poll, 16 per call: poll_formatted (BASE)" },
};

static void setup(void)
{
	struct srocedv_cq_attr attr = { .format_mask = SROCEDV_WC_BASE };
	struct srocedv_query_intf_params p = { .intf_version = SROCEDV_INTF_VERSION, .obj = NULL };

	fake_qp_init(&fq, IBV_QPT_RC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE);
	qp = &fq.qp.vqp.qp;
	qpx = &fq.qp.vqp.qp_ex;
	sctx.vctx.context.ops.post_send = sroce_post_send;
	sctx.vctx.context.ops.poll_cq = sroce_poll_cq;
	fc.cq.vcq.cq.context = &sctx.vctx.context;
	fc.cq.ring.hdr = &fc.hdr;
	fc.cq.ring.entries = (uint8_t *)fc.entries;
	fc.cq.ring.mask = (1u << CQ_LOG) - 1;
	fc.cq.ring.stride = sizeof(struct sroce_cqe);
	sroce_spin_init(&fc.cq.ring.lock);
	sroce_cq_ex_init(&fc.cq, IBV_WC_EX_WITH_BYTE_LEN, false);
	srocedv_modify_cq(&fc.cq.vcq.cq, &attr, SROCEDV_CQ_FORMAT_MASK);
	/* The locked tables, as ibv_post_send and ibv_poll_cq take locks too. */
	p.intf = SROCEDV_INTF_QP_MSG;
	p.obj = qp;
	msg = srocedv_query_intf(&sctx.vctx.context, &p);
	p.intf = SROCEDV_INTF_QP_RDMA;
	rdma = srocedv_query_intf(&sctx.vctx.context, &p);
	p.intf = SROCEDV_INTF_CQ_FORMATTED;
	p.obj = &fc.cq.vcq.cq;
	fmt = srocedv_query_intf(&sctx.vctx.context, &p);
	if (!msg || !rdma || !fmt) {
		fprintf(stderr, "bench_intf: no tables\n");
		exit(1);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ns per operation: the best of 5 runs of `rounds` rounds, the kernel's
 * side excluded. */
static double time_case(int c, int rounds)
{
	double best = 1e18;

	for (int run = 0; run < 5; run++) {
		uint64_t spent = 0;

		for (int r = 0; r < rounds; r++) {
			uint64_t t0;

			kernel_side();
			t0 = now_ns();
			cases[c].phase();
			spent += now_ns() - t0;
		}
		if ((double)spent / ((double)rounds * cases[c].per_round) < best)
			best = (double)spent / ((double)rounds * cases[c].per_round);
	}
	return best;
}

int main(int argc, char **argv)
{
	const char *only = argc == 3 && !strcmp(argv[1], "--case") ? argv[2] : NULL;
	int rounds = only ? 1000 : 20000;

	setup();
	if (!only)
		printf("name\tper_round\tns\twhat\n");
	for (int c = 0; c < (int)(sizeof(cases) / sizeof(cases[0])); c++) {
		if (only) {
			if (strcmp(only, cases[c].name))
				continue;
			for (int r = 0; r < rounds; r++) {
				kernel_side();
				cases[c].phase();
			}
			printf("%s\t%d\t%d\n", cases[c].name, cases[c].per_round, rounds);
			return sink == 42 ? 3 : 0;
		}
		printf("%s\t%d\t%.1f\t%s\n", cases[c].name, cases[c].per_round, time_case(c, rounds), cases[c].what);
	}
	return only ? 2 : (sink == 42 ? 3 : 0);
}

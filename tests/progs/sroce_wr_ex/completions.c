// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* completions.c - sroce_wr_ex's completion readers and clocks (wr_ex.h). */
#include <arpa/inet.h>

#include "wr_ex.h"

int64_t clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* A preemption between two readings must not count: the pair read closest
 * together wins. */
int64_t realtime_offset(void)
{
	int64_t best = 0, width = INT64_MAX;

	for (int i = 0; i < 8; i++) {
		int64_t m1 = clock_ns(CLOCK_MONOTONIC), r = clock_ns(CLOCK_REALTIME);
		int64_t m2 = clock_ns(CLOCK_MONOTONIC);

		if (m2 - m1 < width) {
			width = m2 - m1;
			best = r - (m1 + (m2 - m1) / 2);
		}
	}
	return best;
}

/* Still worth waiting, since start: the transport's retries end sooner. */
static bool waiting(int64_t start)
{
	return clock_ns(CLOCK_MONOTONIC) - start < 30 * 1000000000ll;
}

int read_cq_ex(struct ibv_cq_ex *cq, bool ts, struct got *g, unsigned int n)
{
	struct ibv_poll_cq_attr attr = {};
	int64_t start = clock_ns(CLOCK_MONOTONIC);
	unsigned int k = 0;

	while (k < n) {
		if (ibv_start_poll(cq, &attr)) {
			if (!waiting(start))
				break;
			continue;
		}
		do {
			g[k] = (struct got){
				.wr_id = cq->wr_id, .status = cq->status, .opcode = ibv_wc_read_opcode(cq),
				.byte_len = ibv_wc_read_byte_len(cq), .qp_num = ibv_wc_read_qp_num(cq),
				.src_qp = ibv_wc_read_src_qp(cq), .flags = ibv_wc_read_wc_flags(cq),
			};
			if (ts) {
				g[k].ts = ibv_wc_read_completion_ts(cq);
				g[k].wall = ibv_wc_read_completion_wallclock_ns(cq);
			}
			if (g[k].flags & IBV_WC_WITH_IMM)
				g[k].imm = ntohl(ibv_wc_read_imm_data(cq));
			k++;
		} while (k < n && ibv_next_poll(cq) == 0);
		ibv_end_poll(cq);
	}
	return (int)k;
}

/* librxe's ibv_next_poll once gave all-zero entries: a peer's CQ is read
 * one completion at a time. */
int read_cq_plain(struct ibv_cq_ex *cq, struct got *g, unsigned int n)
{
	int64_t start = clock_ns(CLOCK_MONOTONIC);
	unsigned int k = 0;
	struct ibv_wc wc;

	while (k < n) {
		int got = ibv_poll_cq(ibv_cq_ex_to_cq(cq), 1, &wc);

		if (got < 0)
			break;
		if (got == 0) {
			if (!waiting(start))
				break;
			continue;
		}
		g[k++] = (struct got){ .wr_id = wc.wr_id, .status = wc.status, .opcode = wc.opcode,
				       .byte_len = wc.byte_len, .qp_num = wc.qp_num, .src_qp = wc.src_qp,
				       .flags = wc.wc_flags,
				       .imm = (wc.wc_flags & IBV_WC_WITH_IMM) ? ntohl(wc.imm_data) : 0 };
	}
	return (int)k;
}

/* The device clock (ibv_query_rt_values_ex's raw clock) in ns; 0 if none. */
uint64_t device_clock_ns(struct ibv_context *ctx)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	if (ibv_query_rt_values_ex(ctx, &v) || !(v.comp_mask & IBV_VALUES_MASK_RAW_CLOCK))
		return 0;
	return (uint64_t)v.raw_clock.tv_sec * 1000000000ull + (uint64_t)v.raw_clock.tv_nsec;
}

struct ibv_cq_ex *make_cq_ex(struct ibv_context *ctx, bool ts)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 256,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
			    IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SL | IBV_WC_EX_WITH_SLID |
			    IBV_WC_EX_WITH_DLID_PATH_BITS |
			    (ts ? IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK
				: 0),
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
	};

	return ibv_create_cq_ex(ctx, &a);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wr_ex.h - sroce_wr_ex's helpers: the completion side (completions.c):
 * the CQ it creates, what the checks of ../sroce_wr_ex.c read from it and
 * the clocks they compare completion timestamps with; the device promises
 * (promises.c); the count per builder (tally.c).
 */
#pragma once
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "sroce-abi.h"

/* IBV_WR_FLUSH of rdma-core 45, which 44's enum lacks. */
#define WR_FLUSH ((enum ibv_wr_opcode)SROCE_WQE_FLUSH)

/* One completion as read. */
struct got {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len, imm, qp_num, src_qp;
	unsigned int flags;
	uint64_t ts, wall; /* with ts only */
};

/* Up to n completions through the cq_ex readers (the timestamps too when
 * ts), or through ibv_poll_cq (a peer device's CQ, which is not what is
 * tested). Each waits at most 30 s for the next; the count read. */
int read_cq_ex(struct ibv_cq_ex *cq, bool ts, struct got *g, unsigned int n);
int read_cq_plain(struct ibv_cq_ex *cq, struct got *g, unsigned int n);

/* A CQ every reader works on (every wc_flag sroce fills; the timestamps
 * when ts), single-threaded. */
struct ibv_cq_ex *make_cq_ex(struct ibv_context *ctx, bool ts);

int64_t clock_ns(clockid_t id);
/* The device clock (ibv_query_rt_values_ex's raw clock) in ns; 0 if none. */
uint64_t device_clock_ns(struct ibv_context *ctx);
/* CLOCK_REALTIME - CLOCK_MONOTONIC, from the tightest of a few readings. */
int64_t realtime_offset(void);

/* sroce's own promises for these verbs (promises.c), printed as ok/FAIL
 * lines; the number that failed. */
int check_device_promises(const struct ibv_device_attr_ex *dx, struct ibv_pd *pd);

/* Work requests posted per builder (by WR opcode) and per gather setter. */
struct tally {
	unsigned long op[16], sge, sge_list, inl, inl_list;
	unsigned long flush_mr; /* FLUSHes of a whole MR, among op[WR_FLUSH] */
};

/* Whether the builder of WR opcode i is in use (ops: QP A's
 * send_ops_flags, whose bits 0-6 are IBV_WR_* 0-6; flush: FLUSH posted). */
bool builder_used(unsigned int i, uint64_t ops, bool flush);
/* The fewest work requests any builder in use has posted. */
unsigned long fewest_per_builder(const struct tally *t, uint64_t ops, bool flush);
/* Prints the count of each builder in use and of each setter. */
void print_tally(const struct tally *t, uint64_t ops, bool flush);

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wr_ex.h - sroce_wr_ex's completion side (completions.c): the CQ it
 * creates, what the checks of ../sroce_wr_ex.c read from it, and the clocks
 * they compare completion timestamps with.
 */
#pragma once
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

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

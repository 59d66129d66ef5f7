/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The message-rate programs of `make bench` (sroce_post_rate,
 * sroce_mp_rate): the timed run, counted over its middle, and the result
 * printed as perftest prints its bandwidth row, so that
 * scripts/bench/report.py reads them as it reads perftest.
 */
#ifndef SROCE_RATE_COMMON_H
#define SROCE_RATE_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "progs_common.h"

static inline double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A run of `seconds` from now, counted between start and end: one second of
 * margin at each end, as perftest -D S -f 1. */
struct rate_run {
	double start, end, stop;
};

static inline struct rate_run rate_run_begin(double seconds)
{
	double t0 = now_s();

	return (struct rate_run){ .start = t0 + 1, .end = t0 + seconds - 1, .stop = t0 + seconds };
}

static inline bool rate_run_counts(const struct rate_run *r, double t)
{
	return t >= r->start && t < r->end;
}

/* One step of a sender that keeps `max` batches in flight, each ending in
 * one signaled WR: post() until that many are out, then reap what cq has
 * completed. *out counts the batches in flight. Returns the batches
 * completed, or -1 after a failed post or completion (with a message). */
static inline int rate_send_step(struct ibv_cq *cq, unsigned int *out, unsigned int max, int (*post)(void))
{
	struct ibv_wc wc[8];
	int n;

	for (; *out < max; (*out)++) {
		int err = post();

		if (err) {
			CHECK(0, "post: %s", strerror(err));
			return -1;
		}
	}
	n = ibv_poll_cq(cq, 8, wc);
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			CHECK(0, "send completion: %s", ibv_wc_status_str(wc[i].status));
			return -1;
		}
	}
	if (n < 0) {
		CHECK(0, "ibv_poll_cq on the send CQ failed");
		return -1;
	}
	*out -= n;
	return n;
}

/* perftest's header and row for `counted` messages of `bytes` in the middle:
 *   #bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps] */
static inline void rate_run_print(const struct rate_run *r, int bytes, uint64_t counted)
{
	double rate = (double)counted / (r->end - r->start);

	printf("---------------------------------------------------------------------------------------\n");
	printf(" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n");
	printf(" %-10d %-14llu %-18.2f %-20.2f %.6f\n", bytes, (unsigned long long)counted, rate * bytes / 1e6,
	       rate * bytes / 1e6, rate / 1e6);
}

#endif

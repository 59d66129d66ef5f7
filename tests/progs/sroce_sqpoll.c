// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_sqpoll - the SQ poller seen from user space (tests/vm/78-sq-poll.sh).
 *
 *   sroce_sqpoll query DEV          prints "sq_poll N" (srocedv_query_device
 *                                   of an ibv_open_device context) and
 *                                   "sq_poll_dv_off N" (of a context opened
 *                                   by srocedv_open_device with
 *                                   SROCEDV_CONTEXT_FLAG_NO_SQ_POLL)
 *   sroce_sqpoll burst DEV CYCLES GAP_US
 *                                   RC RDMA WRITEs between two QPs of DEV in
 *                                   bursts of 1-8, with idle gaps of 0 to
 *                                   GAP_US between bursts; every WR must
 *                                   complete within 5 s
 *   sroce_sqpoll hold DEV           posts 64 KiB WRITEs without end, keeping
 *                                   the SQ full (to be killed mid-burst)
 */
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "infiniband/srocedv.h"
#include "progs_common.h"

#define BUF (1 << 20)
#define DEPTH 64

struct side {
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static union ibv_gid gid;
static int gid_idx;

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int side_init(struct side *s)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE };

	s->buf = aligned_alloc(4096, BUF);
	if (!s->buf)
		return -1;
	memset(s->buf, 0x5a, BUF);
	s->mr = ibv_reg_mr(pd, s->buf, BUF, a.qp_access_flags);
	s->qp = ibv_create_qp(pd, &ia);
	if (!s->mr || !s->qp)
		return -1;
	return ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static int post_write(struct side *from, struct side *to, uint64_t id, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)from->buf, .length = len, .lkey = from->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)to->buf, .rkey = to->mr->rkey },
	}, *bad;

	return ibv_post_send(from->qp, &wr, &bad);
}

static int mode_query(struct ibv_device *dev)
{
	struct srocedv_device_attr attr = { 0 };
	struct srocedv_context_attr ca = { .flags = SROCEDV_CONTEXT_FLAG_NO_SQ_POLL };
	struct ibv_context *off;

	CHECK(srocedv_query_device(ctx, &attr) == 0, "srocedv_query_device");
	printf("sq_poll %d\n", !!(attr.flags & SROCEDV_DEVICE_FLAG_SQ_POLL));
	off = srocedv_open_device(dev, &ca);
	CHECK(off != NULL, "srocedv_open_device NO_SQ_POLL");
	if (!off)
		return 1;
	memset(&attr, 0, sizeof(attr));
	CHECK(srocedv_query_device(off, &attr) == 0, "srocedv_query_device (dv context)");
	printf("sq_poll_dv_off %d\n", !!(attr.flags & SROCEDV_DEVICE_FLAG_SQ_POLL));
	ca.flags = 1u << 7;
	errno = 0;
	CHECK(srocedv_open_device(dev, &ca) == NULL && errno == EOPNOTSUPP, "unknown flag refused");
	ibv_close_device(off);
	return 0;
}

/* Waits for n completions, each within 5 s of the previous one. */
static int reap(int n, uint64_t *max_us)
{
	uint64_t t0 = now_us();

	while (n > 0) {
		struct ibv_wc wc[16];
		int got = ibv_poll_cq(cq, 16, wc);

		if (got < 0)
			return -1;
		for (int i = 0; i < got; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				printf("FAIL: wr %llu status %s\n", (unsigned long long)wc[i].wr_id,
				       ibv_wc_status_str(wc[i].status));
				return -1;
			}
		}
		n -= got;
		if (got) {
			uint64_t d = now_us() - t0;

			if (d > *max_us)
				*max_us = d;
			t0 = now_us();
		} else if (now_us() - t0 > 5000000) {
			return -1;
		}
	}
	return 0;
}

static int mode_burst(struct side *a, struct side *b, long cycles, long gap_us)
{
	uint64_t wrs = 0, max_us = 0, t_start = now_us();

	srand(78);
	for (long c = 0; c < cycles; c++) {
		int burst = 1 + rand() % 8;

		for (int i = 0; i < burst; i++) {
			if (post_write(a, b, wrs++, 64)) {
				printf("FAIL: post_send at cycle %ld\n", c);
				return 1;
			}
		}
		if (reap(burst, &max_us)) {
			printf("FAIL: cycle %ld: a WR did not complete within 5 s (%llu posted)\n", c,
			       (unsigned long long)wrs);
			return 1;
		}
		if (gap_us)
			usleep(rand() % gap_us);
	}
	printf("ok: %ld cycles, %llu WRs completed in %.1f s, longest wait %llu us\n", cycles,
	       (unsigned long long)wrs, (now_us() - t_start) / 1e6, (unsigned long long)max_us);
	return 0;
}

static int mode_hold(struct side *a, struct side *b)
{
	uint64_t id = 0;
	int out = 0;

	printf("holding\n");
	fflush(stdout);
	for (;;) {
		struct ibv_wc wc[16];
		int got;

		while (out < DEPTH && !post_write(a, b, id++, 65536))
			out++;
		got = ibv_poll_cq(cq, 16, wc);
		if (got > 0)
			out -= got;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_device *dev = NULL;
	struct side a = { 0 }, b = { 0 };
	int rc = 1;

	if (argc < 3) {
		fprintf(stderr, "usage: %s query|burst|hold DEV [CYCLES GAP_US]\n", argv[0]);
		return 2;
	}
	list = ibv_get_device_list(NULL);
	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[2]))
			dev = list[i];
	ctx = dev ? ibv_open_device(dev) : NULL;
	if (!ctx) {
		fprintf(stderr, "cannot open %s\n", argv[2]);
		return 1;
	}
	if (!strcmp(argv[1], "query")) {
		rc = mode_query(dev);
		goto out;
	}
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4 * DEPTH, NULL, NULL, 0);
	gid_idx = ipv4_gid_index(ctx, &gid);
	/* ACK timeout 18 (1 s): TCG stalls. */
	if (!pd || !cq || gid_idx < 0 || side_init(&a) || side_init(&b) ||
	    qp_to_rts(a.qp, b.qp->qp_num, &gid, gid_idx, 1, 18) ||
	    qp_to_rts(b.qp, a.qp->qp_num, &gid, gid_idx, 1, 18)) {
		fprintf(stderr, "setup failed: %s\n", strerror(errno));
		goto out;
	}
	if (!strcmp(argv[1], "burst") && argc == 5)
		rc = mode_burst(&a, &b, atol(argv[3]), atol(argv[4]));
	else if (!strcmp(argv[1], "hold"))
		rc = mode_hold(&a, &b);
	ibv_destroy_qp(a.qp);
	ibv_destroy_qp(b.qp);
	ibv_dereg_mr(a.mr);
	ibv_dereg_mr(b.mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
out:
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return rc || failures ? 1 : 0;
}

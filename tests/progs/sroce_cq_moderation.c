// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_cq_moderation - CQ moderation through ibv_modify_cq on one device
 * (QP A sends to QP B through the device's own address).
 *
 *   sroce_cq_moderation DEV N
 *
 * B's CQ has a completion channel and is consumed the event-driven way: wait
 * for the event, acknowledge it, re-arm, drain. A sends N messages, one at a
 * time, with and without moderation:
 * - the caps in ibv_query_device_ex (65535 completions, 4095 us), and a
 *   period above them refused with EINVAL;
 * - unmoderated: one event per message (B takes each before A sends on);
 * - cq_count 16, no period: every event covers at least 16 completions
 *   (at most N/16 events), and no completion is held back: all N arrive;
 * - a lone completion under cq_count 16: no event without a period, one
 *   within the period when it is 2 ms.
 */
#include <poll.h>
#include <stdint.h>
#include <time.h>

#include "progs_common.h"

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_idx;
static struct ibv_comp_channel *ch;
static struct ibv_cq *cqa, *cqb;
static struct ibv_qp *qa, *qb;
static struct ibv_mr *mr;
static uint8_t *buf;

static int make_qp(struct ibv_cq *cq, struct ibv_qp **qp)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 512, .max_send_sge = 1,
						.max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE };

	*qp = ibv_create_qp(pd, &ia);
	return !*qp || ibv_modify_qp(*qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						  IBV_QP_ACCESS_FLAGS);
}

/* B's side: takes every event there is within wait_ms, re-arms, drains B's
 * CQ. Returns the events taken; *cqes counts the completions drained. */
static int take_events(int wait_ms, unsigned int *cqes)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	int events = 0;

	while (poll(&pfd, 1, wait_ms) == 1) {
		struct ibv_cq *ev_cq;
		void *ev_ctx;
		struct ibv_wc wc[16];
		int n;

		if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx))
			break;
		ibv_ack_cq_events(ev_cq, 1);
		events++;
		if (ibv_req_notify_cq(cqb, 0))
			CHECK(0, "re-arm B's CQ");
		while ((n = ibv_poll_cq(cqb, 16, wc)) > 0) {
			for (int i = 0; i < n; i++)
				if (wc[i].status != IBV_WC_SUCCESS)
					CHECK(0, "B's completion: %s", ibv_wc_status_str(wc[i].status));
			*cqes += (unsigned int)n;
		}
		wait_ms = 0;
	}
	return events;
}

/* A sends one message to B and waits for its completion. */
static int send_one(uint64_t id)
{
	struct ibv_sge s = { (uintptr_t)buf, 64, mr->lkey }, rs = { (uintptr_t)buf + 4096, 64, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr rwr = { .wr_id = id, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_wc wc;

	if (ibv_post_recv(qb, &rwr, &rbad) || ibv_post_send(qa, &wr, &bad))
		return -1;
	for (int i = 0; i < 10000000; i++) {
		int n = ibv_poll_cq(cqa, 1, &wc);

		if (n)
			return n == 1 && wc.status == IBV_WC_SUCCESS ? 0 : -1;
	}
	return -1;
}

/* Streams n messages; returns B's events, with *cqes its completions.
 * With each_event, B waits (up to 5 s) for every message's completion before
 * A sends the next: the event comes from the kernel after A's completion,
 * and on a loaded machine it can be late enough for two messages to share
 * one (CI saw 121 events for 256). Moderated, B does not wait: the event is
 * meant to be held back. */
static int stream(unsigned int n, unsigned int *cqes, int each_event)
{
	int events = 0;

	*cqes = 0;
	for (unsigned int i = 0; i < n; i++) {
		if (send_one(i)) {
			CHECK(0, "message %u: %s", i, strerror(errno));
			return -1;
		}
		events += take_events(0, cqes);
		for (int t = 0; each_event && *cqes <= i && t < 100; t++)
			events += take_events(50, cqes);
	}
	/* What is still held back comes with the period or not at all. */
	events += take_events(50, cqes);
	return events;
}

static int moderate(uint16_t count, uint16_t period)
{
	struct ibv_modify_cq_attr m = { .attr_mask = IBV_CQ_ATTR_MODERATE,
					.moderate = { .cq_count = count, .cq_period = period } };

	return ibv_modify_cq(cqb, &m);
}

/* Drains B's CQ without events and re-arms it. */
static void reset_b(void)
{
	struct ibv_wc wc[16];

	while (ibv_poll_cq(cqb, 16, wc) > 0)
		;
	ibv_req_notify_cq(cqb, 0);
}

int main(int argc, char **argv)
{
	struct ibv_device_attr_ex dx;
	unsigned int n, got;
	int ev, ev_plain;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEV N\n", argv[0]);
		return 2;
	}
	n = (unsigned int)strtoul(argv[2], NULL, 0);
	if (open_with_gid(argv[1], &ctx, &pd, &gid, &gid_idx))
		return 1;
	ch = ibv_create_comp_channel(ctx);
	cqa = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	cqb = ch ? ibv_create_cq(ctx, 1024, NULL, ch, 0) : NULL;
	buf = aligned_alloc(4096, 8192);
	mr = pd && buf ? ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!cqa || !cqb || !mr || make_qp(cqa, &qa) || make_qp(cqb, &qb) ||
	    qp_to_rts(qa, qb->qp_num, &gid, gid_idx, 1, 14) || qp_to_rts(qb, qa->qp_num, &gid, gid_idx, 1, 14)) {
		CHECK(0, "set up: %s", strerror(errno));
		return 1;
	}
	CHECK(ibv_query_device_ex(ctx, NULL, &dx) == 0 && dx.cq_mod_caps.max_cq_count == 65535 &&
		      dx.cq_mod_caps.max_cq_period == 4095,
	      "moderation caps: %u completions, %u us", dx.cq_mod_caps.max_cq_count,
	      dx.cq_mod_caps.max_cq_period);
	CHECK(moderate(16, 4096) == EINVAL, "a period above the cap: EINVAL");
	CHECK(moderate(65535, 4095) == 0, "the caps themselves are taken");

	CHECK(moderate(1, 0) == 0, "moderation off (cq_count 1)");
	reset_b();
	ev_plain = stream(n, &got, 1);
	/* Each message's completion found the CQ armed: one event each. */
	CHECK(got == n && ev_plain == (int)n,
	      "unmoderated: %u messages, %u completions, %d events", n, got, ev_plain);

	CHECK(moderate(16, 0) == 0, "cq_count 16, no period");
	reset_b();
	ev = stream(n, &got, 0);
	CHECK(ev >= 1 && ev <= (int)n / 16, "cq_count 16: %d events for %u completions (at most %u)", ev,
	      got, n / 16);
	/* The CQEs are never held back: what the events did not cover is in
	 * the CQ already. */
	{
		struct ibv_wc wc[16];
		int k;

		while ((k = ibv_poll_cq(cqb, 16, wc)) > 0)
			got += (unsigned int)k;
	}
	CHECK(got == n, "cq_count 16: all %u completions there (%u)", n, got);
	printf("  events per completion: %.2f unmoderated, %.3f with cq_count 16 (%.1fx fewer)\n",
	       (double)ev_plain / n, (double)ev / n, ev ? (double)ev_plain / ev : 0.0);

	reset_b();
	CHECK(send_one(1) == 0 && take_events(300, &got) == 0,
	      "cq_count 16, no period: a lone completion raises no event (300 ms)");
	CHECK(moderate(16, 2000) == 0, "cq_count 16, cq_period 2 ms");
	reset_b();
	{
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		got = 0;
		CHECK(send_one(2) == 0 && take_events(1000, &got) == 1 && got == 1,
		      "cq_count 16, cq_period 2 ms: a lone completion's event comes");
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("  after %.1f ms\n",
		       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	}
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_destroy_cq(cqa);
	CHECK(ibv_destroy_cq(cqb) == 0, "destroy the moderated CQ");
	ibv_destroy_comp_channel(ch);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}

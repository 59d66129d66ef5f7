// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_sqpoll_errors - many QPs erroring in one SQ poller pass
 * (tests/vm/78-sq-poll-errors.sh).
 *
 *   sroce_sqpoll_errors DEV NQPS POLLER_CPU SQ_POLL_FILE
 *
 * NQPS UD QPs of one polled context share one armed CQ (with a completion
 * channel). Each gets a SEND naming an AH of another PD: the kernel fails it
 * with LOC_QP_OP_ERR and moves the QP to the error state (an
 * IBV_EVENT_QP_FATAL each). The posts are made while a SCHED_FIFO child
 * holds POLLER_CPU, where the awake poller runs, so the poller finds them
 * all in one pass. Every error completion, the completion channel event and
 * every QP's async event must arrive (within 10 s). The poller's debugfs
 * file (SQ_POLL_FILE) says whether it drained them: a poller that napped
 * or dozed meanwhile (NEED_WAKEUP up) left them to the posts' own
 * doorbells, so the round is tried again, up to 6 times.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "infiniband/srocedv.h"
#include "progs_common.h"

#define MAX_QPS 256

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int ud_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111 };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static int post_ud(struct ibv_qp *qp, struct ibv_ah *ah, uint64_t id)
{
	struct ibv_send_wr wr = {
		.wr_id = id, .num_sge = 0, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = 0xfffff0, .remote_qkey = 0x11111111 },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* A SCHED_FIFO busy loop on cpu for ms: the poller there cannot run. */
static pid_t hog(int cpu, int ms)
{
	int fds[2];
	char c = 0;
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		cpu_set_t set;
		struct sched_param sp = { .sched_priority = 50 };
		uint64_t end;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		/* FIFO before it moves: as a normal task there it would make
		 * the poller nap with NEED_WAKEUP set, and the posts ring. */
		if (sched_setscheduler(0, SCHED_FIFO, &sp) || sched_setaffinity(0, sizeof(set), &set))
			_exit(3);
		/* On the CPU now, and FIFO: the poller there cannot run. */
		if (write(fds[1], &c, 1) != 1)
			_exit(4);
		end = now_ms() + ms;
		while (now_ms() < end)
			;
		_exit(0);
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], &c, 1) != 1)
		pid = -1;
	close(fds[0]);
	return pid;
}

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_comp_channel *ch;
static struct ibv_ah *good_ah, *bad_ah;
static const char *dev_name;

/* The device's sq_doorbells (rdma statistic): posts that rang. */
static long doorbells(void)
{
	char cmd[128], word[64];
	long v = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma statistic show link %s/1", dev_name);
	f = popen(cmd, "r");
	while (f && fscanf(f, "%63s", word) == 1)
		if (!strcmp(word, "sq_doorbells") && fscanf(f, "%ld", &v) != 1)
			v = -1;
	if (f)
		pclose(f);
	return v;
}

static long stat_of(const char *path, const char *name)
{
	char key[64];
	long v, out = -1;
	FILE *f = fopen(path, "r");

	while (f && fscanf(f, "%63s %ld", key, &v) == 2)
		if (!strcmp(key, name))
			out = v;
	if (f)
		fclose(f);
	return out;
}

/* One round: nqps QPs error in what should be one poller pass. Returns the
 * poller's drains during the round, or -1 if setup failed. */
static long round_once(int nqps, int cpu, const char *statpath)
{
	struct ibv_qp *qps[MAX_QPS + 1];
	uint8_t fatal_seen[MAX_QPS] = { 0 };
	struct ibv_wc wc[16];
	int cqes = 0, errs = 0, fatal = 0, comp_events = 0, status;
	long d0;
	pid_t child;
	uint64_t deadline;

	for (int i = 0; i <= nqps; i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
			.cap = { .max_send_wr = 64, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		};

		qps[i] = ibv_create_qp(pd, &ia);
		if (!qps[i] || ud_rts(qps[i])) {
			fprintf(stderr, "QP %d: %s\n", i, strerror(errno));
			return -1;
		}
	}
	/* Good SENDs from the last QP (to a QPN nobody has) until the poller
	 * is awake: the first doorbell wakes it (a doze holds doorbells for
	 * sq_idle_us), and it stays awake while it has work. */
	deadline = now_ms() + 3000;
	for (int i = 0; now_ms() < deadline; i++) {
		post_ud(qps[nqps], good_ah, 1);
		usleep(2000);
		while (ibv_poll_cq(cq, 16, wc) > 0)
			;
		if (i > 10 && stat_of(statpath, "asleep") == 0)
			break;
	}
	while (ibv_poll_cq(cq, 16, wc) > 0)
		;
	CHECK(ibv_req_notify_cq(cq, 0) == 0, "CQ armed");
	d0 = stat_of(statpath, "drains");
	child = hog(cpu, 300);
	long b0 = doorbells();
	usleep(20000); /* the hog holds the poller's CPU */
	for (int i = 0; i < nqps; i++)
		if (post_ud(qps[i], bad_ah, 100 + i))
			fprintf(stderr, "post on QP %d failed\n", i);
	long rang = doorbells() - b0;
	CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "SCHED_FIFO task on CPU %d ran", cpu);

	/* Everything must come: nqps error CQEs, one channel event, nqps
	 * QP_FATAL async events. */
	deadline = now_ms() + 10000;
	while ((cqes < nqps || !comp_events || fatal < nqps) && now_ms() < deadline) {
		struct pollfd pf[2] = { { .fd = ch->fd, .events = POLLIN }, { .fd = ctx->async_fd, .events = POLLIN } };
		int n = ibv_poll_cq(cq, 16, wc);

		for (int i = 0; i < n; i++) {
			cqes++;
			if (wc[i].status == IBV_WC_LOC_QP_OP_ERR && wc[i].wr_id >= 100)
				errs++;
		}
		if (n)
			continue;
		poll(pf, 2, 100);
		if (pf[0].revents & POLLIN) {
			struct ibv_cq *ecq;
			void *ectx;

			if (!ibv_get_cq_event(ch, &ecq, &ectx)) {
				comp_events++;
				ibv_ack_cq_events(ecq, 1);
			}
		}
		if (pf[1].revents & POLLIN) {
			struct ibv_async_event ev;

			if (!ibv_get_async_event(ctx, &ev)) {
				for (int i = 0; i < nqps; i++)
					if (ev.event_type == IBV_EVENT_QP_FATAL && ev.element.qp == qps[i] &&
					    !fatal_seen[i]) {
						fatal_seen[i] = 1;
						fatal++;
					}
				ibv_ack_async_event(&ev);
			}
		}
	}
	CHECK(cqes == nqps && errs == nqps, "%d of %d error completions (LOC_QP_OP_ERR: %d)", cqes, nqps, errs);
	CHECK(comp_events == 1, "completion channel events: %d", comp_events);
	CHECK(fatal == nqps, "QP_FATAL async events: %d of %d QPs", fatal, nqps);
	for (int i = 0; i <= nqps; i++)
		ibv_destroy_qp(qps[i]);
	printf("posts that rang: %ld, poller drains: %ld\n", rang, stat_of(statpath, "drains") - d0);
	/* A post that rang ran inline: only a round where none did was all
	 * the poller's. */
	return rang == 0 ? stat_of(statpath, "drains") - d0 : 0;
}

int main(int argc, char **argv)
{
	struct srocedv_device_attr dv = { 0 };
	union ibv_gid gid;
	int gid_idx, nqps, cpu;
	long drained = 0;
	cpu_set_t set;

	if (argc != 5 || (nqps = atoi(argv[2])) < 1 || nqps > MAX_QPS) {
		fprintf(stderr, "usage: %s DEV NQPS POLLER_CPU SQ_POLL_FILE\n", argv[0]);
		return 2;
	}
	cpu = atoi(argv[3]);
	dev_name = argv[1];
	/* The poster stays off the poller's CPU. */
	CPU_ZERO(&set);
	CPU_SET(cpu ? 0 : 1, &set);
	sched_setaffinity(0, sizeof(set), &set);

	ctx = open_by_name(argv[1]);
	if (!ctx)
		return 1;
	CHECK(srocedv_query_device(ctx, &dv) == 0 && (dv.flags & SROCEDV_DEVICE_FLAG_SQ_POLL),
	      "the context is polled");
	pd = ibv_alloc_pd(ctx);
	struct ibv_pd *other_pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	cq = ch ? ibv_create_cq(ctx, 4 * nqps + 256, NULL, ch, 0) : NULL;
	gid_idx = ipv4_gid_index(ctx, &gid);
	if (!pd || !other_pd || !cq || gid_idx < 0) {
		fprintf(stderr, "setup failed: %s\n", strerror(errno));
		return 1;
	}
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = gid, .sgid_index = gid_idx, .hop_limit = 64 } };
	good_ah = ibv_create_ah(pd, &aa);
	bad_ah = ibv_create_ah(other_pd, &aa); /* not the QPs' PD: LOC_QP_OP_ERR */
	if (!good_ah || !bad_ah) {
		fprintf(stderr, "ibv_create_ah: %s\n", strerror(errno));
		return 1;
	}
	for (int r = 1; r <= 6 && drained < nqps; r++) {
		drained = round_once(nqps, cpu, argv[4]);
		printf("round %d: the poller drained %ld QPs, none rang\n", r, drained);
		if (drained < 0)
			break;
	}
	CHECK(drained >= nqps, "the poller drained all %d QPs in one round (%ld)", nqps, drained);
	ibv_destroy_ah(good_ah);
	ibv_destroy_ah(bad_ah);
	ibv_destroy_cq(cq);
	ibv_destroy_comp_channel(ch);
	ibv_dealloc_pd(pd);
	ibv_dealloc_pd(other_pd);
	ibv_close_device(ctx);
	return failures ? 1 : 0;
}

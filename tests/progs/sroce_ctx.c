// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_ctx - exercises a device's context through libibverbs, for the VM
 * tests. Each mode prints what it saw and exits 0 only if every check held.
 *
 *   sroce_ctx check DEV          open, query, PD alloc/dealloc, srocedv query
 *   sroce_ctx notsroce DEV       srocedv_query_device must say EOPNOTSUPP
 *   sroce_ctx open DEV           only open the device (exit status = errno)
 *   sroce_ctx events DEV READY   touch READY, then expect PORT_ERR followed
 *                                by PORT_ACTIVE async events (the test
 *                                takes the netdev down and up)
 *   sroce_ctx hold DEV READY     open + PD, touch READY, wait for SIGUSR1,
 *                                then expect the device to be gone: verbs
 *                                fail, a DEVICE_FATAL event arrives, cleanup
 *                                still succeeds
 *   sroce_ctx ah DEV READY GIDX  an AH from GID GIDX to itself, touch READY,
 *                                wait for SIGUSR1, then destroy it (the test
 *                                deletes the GID's netdev meanwhile)
 */
#include <errno.h>
#include <fcntl.h>
#include <infiniband/srocedv.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "progs_common.h"


static int mode_check(struct ibv_context *ctx)
{
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	struct srocedv_device_attr dv = {0};
	struct ibv_pd *pds[64];
	struct ibv_cq *cq;

	CHECK(ibv_query_device(ctx, &dattr) == 0, "query_device");
	/* Objects that exist have limits. */
	CHECK(dattr.max_pd > 64 && dattr.max_qp > 0 && dattr.max_cq > 0 && dattr.phys_port_cnt == 1,
	      "device caps: max_pd %d max_qp %d max_cq %d ports %u", dattr.max_pd, dattr.max_qp,
	      dattr.max_cq, dattr.phys_port_cnt);
	CHECK(dattr.node_guid != 0, "node_guid %016llx", (unsigned long long)be64toh(dattr.node_guid));
	CHECK(ibv_query_port(ctx, 1, &pattr) == 0, "query_port 1");
	CHECK(pattr.link_layer == IBV_LINK_LAYER_ETHERNET, "link layer ethernet");
	CHECK(ibv_query_port(ctx, 2, &pattr) != 0, "query_port 2 refused");

	/* PD numbers are distinct and PDs come and go without leaking. */
	for (int round = 0; round < 3; round++) {
		int n = 0;

		for (; n < 64; n++)
			if (!(pds[n] = ibv_alloc_pd(ctx)))
				break;
		CHECK(n == 64, "round %d: allocated %d PDs", round, n);
		for (int i = 0; i < n; i++)
			if (ibv_dealloc_pd(pds[i]))
				failures++;
	}

	CHECK(srocedv_query_device(ctx, &dv) == 0 && dv.comp_mask == 0 && dv.abi_version > 0,
	      "srocedv_query_device: abi %u flags %#x", dv.abi_version, dv.flags);
	CHECK(srocedv_query_device(ctx, NULL) == EINVAL, "srocedv_query_device(NULL attr) = EINVAL");

	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(cq && cq->cqe >= 16, "create_cq: %s", cq ? "ok" : strerror(errno));
	if (cq)
		CHECK(ibv_destroy_cq(cq) == 0, "destroy_cq");
	return failures;
}

static void touch(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY, 0644);

	if (fd >= 0)
		close(fd);
}

static int mode_events(struct ibv_context *ctx, const char *ready)
{
	const enum ibv_event_type want[] = { IBV_EVENT_PORT_ERR, IBV_EVENT_PORT_ACTIVE };
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	unsigned int seen = 0;

	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	touch(ready);
	while (seen < 2 && poll(&pfd, 1, 20000) > 0) {
		if (ibv_get_async_event(ctx, &ev))
			continue;
		printf("event: %s port %d\n", ibv_event_type_str(ev.event_type), ev.element.port_num);
		if (ev.event_type == want[seen] && ev.element.port_num == 1)
			seen++;
		ibv_ack_async_event(&ev);
	}
	CHECK(seen == 2, "PORT_ERR then PORT_ACTIVE on port 1");
	return failures;
}

static volatile sig_atomic_t go;
static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static int mode_hold(struct ibv_context *ctx, const char *ready)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_async_event ev;
	struct ibv_port_attr pattr;
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	int got_fatal = 0;

	CHECK(pd != NULL, "alloc_pd before removal");
	signal(SIGUSR1, on_usr1);
	touch(ready);
	while (!go)
		pause();

	/* The device is gone: uverbs reports DEVICE_FATAL and refuses work. */
	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	while (poll(&pfd, 1, 2000) > 0 && ibv_get_async_event(ctx, &ev) == 0) {
		if (ev.event_type == IBV_EVENT_DEVICE_FATAL)
			got_fatal = 1;
		ibv_ack_async_event(&ev);
		if (got_fatal)
			break;
	}
	CHECK(got_fatal, "DEVICE_FATAL async event");
	errno = 0;
	CHECK(ibv_alloc_pd(ctx) == NULL, "alloc_pd after removal fails: %s", strerror(errno));
	CHECK(ibv_query_port(ctx, 1, &pattr) != 0, "query_port after removal fails");
	CHECK(!pd || ibv_dealloc_pd(pd) == 0, "dealloc_pd after removal");
	CHECK(ibv_close_device(ctx) == 0, "close_device after removal");
	return failures;
}

static int mode_ah(struct ibv_context *ctx, const char *ready, int gidx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_ah_attr attr = {
		.is_global = 1,
		.grh = { .sgid_index = gidx, .hop_limit = 64 },
		.port_num = 1,
	};
	struct ibv_ah *ah = NULL;

	CHECK(pd != NULL, "alloc_pd");
	CHECK(ibv_query_gid(ctx, 1, gidx, &attr.grh.dgid) == 0, "query_gid %d", gidx);
	if (pd)
		ah = ibv_create_ah(pd, &attr);
	CHECK(ah != NULL, "create_ah on GID %d: %s", gidx, ah ? "ok" : strerror(errno));
	signal(SIGUSR1, on_usr1);
	touch(ready);
	while (!go)
		pause();
	CHECK(!ah || ibv_destroy_ah(ah) == 0, "destroy_ah after its netdev went");
	CHECK(!pd || ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	CHECK(ibv_close_device(ctx) == 0, "close_device");
	return failures;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct srocedv_device_attr dv = {0};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		fprintf(stderr, "usage: %s check|notsroce|open|events|hold|ah DEV [READY [GIDX]]\n", argv[0]);
		return 2;
	}
	errno = 0;
	ctx = open_by_name(argv[2]);
	if (strcmp(argv[1], "open") == 0) {
		printf("open %s: %s\n", argv[2], ctx ? "ok" : strerror(errno));
		return ctx ? (ibv_close_device(ctx) ? 1 : 0) : errno;
	}
	if (!ctx) {
		printf("FAIL: cannot open %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	if (strcmp(argv[1], "check") == 0) {
		mode_check(ctx);
	} else if (strcmp(argv[1], "notsroce") == 0) {
		CHECK(srocedv_query_device(ctx, &dv) == EOPNOTSUPP, "srocedv on %s = EOPNOTSUPP", argv[2]);
	} else if (strcmp(argv[1], "events") == 0 && argc == 4) {
		mode_events(ctx, argv[3]);
	} else if (strcmp(argv[1], "hold") == 0 && argc == 4) {
		return mode_hold(ctx, argv[3]) ? 1 : 0;
	} else if (strcmp(argv[1], "ah") == 0 && argc == 5) {
		return mode_ah(ctx, argv[3], atoi(argv[4])) ? 1 : 0;
	} else {
		fprintf(stderr, "unknown mode %s\n", argv[1]);
		return 2;
	}
	CHECK(ibv_close_device(ctx) == 0, "close_device");
	return failures ? 1 : 0;
}

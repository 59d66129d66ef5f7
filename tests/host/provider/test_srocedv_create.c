// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_srocedv_create.c - srocedv_create_srq and srocedv_create_srq_ex
 * (libuser/srocedv.c) with the kernel's commands answered here: the SRQ's
 * ring is in a memfd, which the provider maps as it maps the kernel's.
 *
 * 1. A create that succeeds leaves errno as it was (as libibverbs' creates
 *    do: errno is the failure's only); a refused one sets it.
 */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "sroce.h"

enum { LOG_ENTRIES = 4, STRIDE = 128, RING_BYTES = 4096 };

static struct sroce_context sctx; /* no device: sroce's (fake_context.c) */

/* The create commands, in place of libibverbs' (this executable's
 * definitions win): the ring at offset 0 of the context's memfd. */
static void srq_resp(struct ib_uverbs_create_srq_resp *resp)
{
	struct sroce_create_srq_resp *drv = (void *)(resp + 1);

	drv->ring = (struct sroce_ring_info){ .bytes = RING_BYTES, .log_size = LOG_ENTRIES, .stride = STRIDE };
	drv->srqn = 7;
}

int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq, struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size, struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size)
{
	srq_resp(resp);
	return 0;
}

int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq, struct ibv_srq_init_attr_ex *attr_ex,
			  struct ibv_create_xsrq *cmd, size_t cmd_size, struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size)
{
	srq->srq_type = IBV_SRQT_BASIC;
	srq_resp(resp);
	return 0;
}

int ibv_cmd_destroy_srq(struct ibv_srq *srq)
{
	return 0;
}

/* 1: errno on success and on failure. */
static void test_errno(void)
{
	struct ibv_pd pd = { .context = &sctx.vctx.context };
	struct ibv_srq_init_attr attr = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq_init_attr_ex ex = { .attr = attr.attr, .comp_mask = IBV_SRQ_INIT_ATTR_PD, .pd = &pd };
	struct srocedv_srq_init_attr none = { 0 }, unknown = { .comp_mask = 1ull << 40 };
	struct ibv_srq *srq;

	errno = 123;
	srq = srocedv_create_srq(&pd, &attr, &none);
	CHECK(srq != NULL && errno == 123);
	CHECK(srq && sroce_destroy_srq(srq) == 0);
	errno = 123;
	srq = srocedv_create_srq_ex(&sctx.vctx.context, &ex, NULL);
	CHECK(srq != NULL && errno == 123);
	CHECK(srq && sroce_destroy_srq(srq) == 0);
	/* Refused: errno says why. */
	errno = 123;
	CHECK(srocedv_create_srq(&pd, &attr, &unknown) == NULL && errno == EOPNOTSUPP);
	errno = 123;
	CHECK(srocedv_create_srq_ex(&sctx.vctx.context, &ex, &unknown) == NULL && errno == EOPNOTSUPP);
}

int main(void)
{
	int fd = memfd_create("srq-ring", 0);

	CHECK(fd >= 0 && ftruncate(fd, RING_BYTES) == 0);
	sctx.vctx.context.cmd_fd = fd;
	test_errno();
	close(fd);
	printf("provider srocedv_create: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}

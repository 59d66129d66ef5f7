// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_intf_wq.c - the WQ receive family (srocedv_wq_ops, libuser/intf.c
 * and intf_qp.c) on a WQ ring in this process's memory: the test plays the
 * kernel.
 *
 * 1. recv writes the WQE ibv_post_wq_recv writes, byte for byte.
 * 2. recv and recv_repost against the model of intf_fixture.h, in the
 *    locked and the single-threaded table.
 * 3. In RESET and ERR both post nothing (EINVAL), as ibv_post_wq_recv.
 * 4. The query's checks: family flags, another context, a WQ without a
 *    scatter entry; ibv_destroy_wq is EBUSY while a table is held, and no
 *    longer once it is released.
 * 5. A multi-packet WQ (srocedv_create_wq's SROCEDV_WQ_INIT_ATTR_MP_WR)
 *    takes only receives of its buffer size, through ibv_post_wq_recv
 *    (the WRs before the first wrong one posted, bad_wr at it) and recv.
 * 6. A query in destroy's window (its check passed, the WQ not yet freed)
 *    is refused with EBUSY and takes no table; a destroy the kernel
 *    refuses leaves the WQ to queries again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intf_fixture.h"

struct fake_wq {
	struct sroce_wq wq;
	struct sroce_ring_header hdr;
	uint8_t entries[STRIDE << LOG_ENTRIES];
};

static void wq_init(struct fake_wq *f)
{
	memset(f, 0, sizeof(*f));
	sctx.ctx_page = &ctx_page;
	f->wq.ibv_wq.context = &sctx.vctx.context;
	f->wq.ibv_wq.wq_type = IBV_WQT_RQ;
	f->wq.ibv_wq.state = IBV_WQS_RDY;
	f->wq.ring.map = f->entries;
	f->wq.ring.hdr = &f->hdr;
	f->wq.ring.entries = f->entries;
	f->wq.ring.mask = (1u << LOG_ENTRIES) - 1;
	f->wq.ring.stride = STRIDE;
	f->wq.max_sge = MAX_SGE;
	sroce_spin_init(&f->wq.ring.lock);
}

/* Destroy's kernel command, in place of libibverbs' (this executable's
 * definition wins): it runs in destroy's window, after the check that no
 * table is held and before the free, so it queries the WQ there, then
 * answers destroy_err. */
static int destroy_err;
static const void *raced;
static int raced_errno;

int ibv_cmd_destroy_wq(struct ibv_wq *wq)
{
	errno = 0;
	raced = query(wq, SROCEDV_INTF_WQ_RECV, 0, 0);
	raced_errno = errno;
	return destroy_err;
}

static int wq_recv(void *obj, const void *ops, uint64_t addr, uint32_t length, uint32_t lkey, uint64_t wr_id)
{
	return ((const struct srocedv_wq_ops *)ops)->recv(obj, addr, length, lkey, wr_id);
}

static int wq_repost(void *obj, const void *ops, int num)
{
	return ((const struct srocedv_wq_ops *)ops)->recv_repost(obj, num);
}

static int wq_post(void *obj, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	return sroce_post_wq_recv(obj, wr, bad);
}

/* 1: the family's WQE is ibv_post_wq_recv's. */
static void test_same_wqe(void)
{
	static struct fake_wq a, b;
	const struct srocedv_wq_ops *ops;

	wq_init(&a);
	wq_init(&b);
	ops = query(&a.wq.ibv_wq, SROCEDV_INTF_WQ_RECV, 0, 0);
	CHECK(ops && ops->recv && ops->recv_repost);
	if (!ops)
		return;
	same_wqe_model(&a.wq.ring, &a.wq.ibv_wq, &b.wq.ring, &b.wq.ibv_wq, ops, wq_recv, wq_post);
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)ops) == 0);
}

/* 2: the repost model, per table. */
static void test_recv_repost(uint32_t flags)
{
	static struct fake_wq f;
	const struct srocedv_wq_ops *ops;

	wq_init(&f);
	f.wq.ring.idx = f.hdr.producer = f.hdr.consumer = f.wq.intf_repost = 0xfffff000u;
	f.wq.ring.peer = f.hdr.consumer;
	ops = query(&f.wq.ibv_wq, SROCEDV_INTF_WQ_RECV, flags, 0);
	CHECK(ops != NULL);
	if (!ops)
		return;
	recv_repost_model(&f.wq.ring, &f.wq.ibv_wq, ops, wq_recv, wq_repost);
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)ops) == 0);
}

/* 3: RESET and ERR take nothing; RDY again does. */
static void test_states(void)
{
	static struct fake_wq f;
	const struct srocedv_wq_ops *ops;
	enum ibv_wq_state refused[] = { IBV_WQS_RESET, IBV_WQS_ERR };

	wq_init(&f);
	ops = query(&f.wq.ibv_wq, SROCEDV_INTF_WQ_RECV, SROCEDV_INTF_FLAG_SINGLE_THREADED, 0);
	CHECK(ops != NULL);
	if (!ops)
		return;
	CHECK(ops->recv(&f.wq.ibv_wq, 0x1000, 64, 7, 1) == 0);
	f.hdr.consumer = 1; /* taken: one to repost */
	for (unsigned int i = 0; i < 2; i++) {
		f.wq.ibv_wq.state = refused[i];
		CHECK(ops->recv(&f.wq.ibv_wq, 0x1000, 64, 7, 2) == EINVAL);
		CHECK(ops->recv_repost(&f.wq.ibv_wq, 1) == EINVAL);
		CHECK(f.hdr.producer == 1);
	}
	f.wq.ibv_wq.state = IBV_WQS_RDY;
	CHECK(ops->recv_repost(&f.wq.ibv_wq, 1) == 0 && f.hdr.producer == 2);
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)ops) == 0);
}

/* 4: what the query refuses; destroy while held. */
static void test_query_checks(void)
{
	static struct fake_wq f;
	struct ibv_context other = { .device = (struct ibv_device *)&other };
	const struct srocedv_wq_ops *ops, *ops2;

	wq_init(&f);
	CHECK(query(&f.wq.ibv_wq, SROCEDV_INTF_WQ_RECV, 0, SROCEDV_QP_OPS_RECV) == NULL && errno == EINVAL);
	CHECK(query(&f.wq.ibv_wq, SROCEDV_INTF_WQ_RECV, 1u << 5, 0) == NULL && errno == EINVAL);
	{
		struct srocedv_query_intf_params p = { .intf = SROCEDV_INTF_WQ_RECV + 1,
						       .intf_version = SROCEDV_INTF_VERSION, .obj = &f.wq.ibv_wq };

		CHECK(srocedv_query_intf(&sctx.vctx.context, &p) == NULL && errno == EOPNOTSUPP);
	}
	f.wq.ibv_wq.context = &other;
	CHECK(query(&f.wq.ibv_wq, SROCEDV_INTF_WQ_RECV, 0, 0) == NULL && errno == EINVAL);
	f.wq.ibv_wq.context = &sctx.vctx.context;
	f.wq.max_sge = 0;
	CHECK(query(&f.wq.ibv_wq, SROCEDV_INTF_WQ_RECV, 0, 0) == NULL && errno == EINVAL);
	f.wq.max_sge = MAX_SGE;
	CHECK(f.wq.intf_refs == 0);

	ops = query(&f.wq.ibv_wq, SROCEDV_INTF_WQ_RECV, 0, 0);
	ops2 = query(&f.wq.ibv_wq, SROCEDV_INTF_WQ_RECV, SROCEDV_INTF_FLAG_SINGLE_THREADED, 0);
	CHECK(ops && ops2 && ops != ops2 && f.wq.intf_refs == 2);
	CHECK(sroce_destroy_wq(&f.wq.ibv_wq) == EBUSY);
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)ops) == 0);
	CHECK(sroce_destroy_wq(&f.wq.ibv_wq) == EBUSY);
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)ops2) == 0);
	/* Released: destroy goes ahead (test_destroy_race). */
	CHECK(f.wq.intf_refs == 0);
}

/* 5: a multi-packet WQ's receives are its buffer size: a post stops at the
 * first that is not (the WRs before it posted), the family's recv refuses it. */
static void test_mp_sizes(void)
{
	static struct fake_wq f;
	const struct srocedv_wq_ops *ops;
	struct ibv_sge ok = { 0x10000, 8192, 7 }, short_sge = { 0x20000, 4096, 7 };
	struct ibv_recv_wr w2 = { .wr_id = 2, .sg_list = &short_sge, .num_sge = 1 };
	struct ibv_recv_wr w1 = { .wr_id = 1, .next = &w2, .sg_list = &ok, .num_sge = 1 }, *bad = NULL;

	wq_init(&f);
	f.wq.ring.mp_size = 8192;
	f.wq.ring.mp_align = 256;
	CHECK(sroce_post_wq_recv(&f.wq.ibv_wq, &w1, &bad) == EINVAL && bad == &w2 && f.hdr.producer == 1);
	CHECK(sroce_post_wq_recv(&f.wq.ibv_wq, &w2, &bad) == EINVAL && bad == &w2 && f.hdr.producer == 1);
	ops = query(&f.wq.ibv_wq, SROCEDV_INTF_WQ_RECV, 0, 0);
	CHECK(ops != NULL);
	if (!ops)
		return;
	CHECK(ops->recv(&f.wq.ibv_wq, 0x20000, 4096, 7, 3) == EINVAL && f.hdr.producer == 1);
	CHECK(ops->recv(&f.wq.ibv_wq, 0x20000, 8192, 7, 3) == 0 && f.hdr.producer == 2);
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)ops) == 0);
}

/* 6: destroy racing a query. */
static void test_destroy_race(void)
{
	struct fake_wq *f = malloc(sizeof(*f)); /* destroy frees it */
	const struct srocedv_wq_ops *ops;

	wq_init(f);
	f->wq.ring.map = NULL; /* the ring is the test's: nothing to unmap */
	destroy_err = EIO;
	CHECK(sroce_destroy_wq(&f->wq.ibv_wq) == EIO);
	CHECK(raced == NULL && raced_errno == EBUSY);
	if (raced)
		srocedv_release_intf(&sctx.vctx.context, (void *)raced);
	/* Refused by the kernel: the WQ lives on, and takes tables again. */
	ops = query(&f->wq.ibv_wq, SROCEDV_INTF_WQ_RECV, 0, 0);
	CHECK(ops && srocedv_release_intf(&sctx.vctx.context, (void *)ops) == 0);
	destroy_err = 0;
	CHECK(sroce_destroy_wq(&f->wq.ibv_wq) == 0);
	/* Freed: no table of it may be live. */
	CHECK(raced == NULL && raced_errno == EBUSY);
}

int main(void)
{
	test_same_wqe();
	test_recv_repost(0);
	test_recv_repost(SROCEDV_INTF_FLAG_SINGLE_THREADED);
	test_states();
	test_query_checks();
	test_mp_sizes();
	test_destroy_race();
	printf("provider intf_wq: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}

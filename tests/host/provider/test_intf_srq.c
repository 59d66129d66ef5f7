// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_intf_srq.c - the SRQ receive family (srocedv_srq_ops, libuser/intf.c
 * and intf_qp.c) on an SRQ ring in this process's memory: the test plays
 * the kernel.
 *
 * 1. recv writes the WQE ibv_post_srq_recv writes, byte for byte.
 * 2. recv and recv_repost against the model of intf_fixture.h, in the
 *    locked and the single-threaded table, on a basic and an XRC SRQ.
 * 3. The query's checks: family flags, another context, an SRQ without a
 *    scatter entry, version; ibv_destroy_srq is EBUSY while a table is
 *    held, and no longer once it is released.
 * 4. A query in destroy's window (its check passed, the SRQ not yet freed)
 *    is refused with EBUSY and takes no table; a destroy the kernel
 *    refuses leaves the SRQ to queries again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intf_fixture.h"

struct fake_srq {
	struct sroce_srq srq;
	struct sroce_ring_header hdr;
	uint8_t entries[STRIDE << LOG_ENTRIES];
};

static void srq_init(struct fake_srq *f, enum ibv_srq_type type)
{
	memset(f, 0, sizeof(*f));
	sctx.ctx_page = &ctx_page;
	f->srq.vsrq.srq.context = &sctx.vctx.context;
	f->srq.vsrq.srq_type = type;
	f->srq.ring.map = f->entries;
	f->srq.ring.hdr = &f->hdr;
	f->srq.ring.entries = f->entries;
	f->srq.ring.mask = (1u << LOG_ENTRIES) - 1;
	f->srq.ring.stride = STRIDE;
	f->srq.max_sge = MAX_SGE;
	sroce_spin_init(&f->srq.ring.lock);
}

static struct ibv_srq *ibsrq_of(struct fake_srq *f)
{
	return &f->srq.vsrq.srq;
}

/* Destroy's kernel command, in place of libibverbs' (this executable's
 * definition wins): it runs in destroy's window, after the check that no
 * table is held and before the free, so it queries the SRQ there, then
 * answers destroy_err. */
static int destroy_err;
static const void *raced;
static int raced_errno;

int ibv_cmd_destroy_srq(struct ibv_srq *srq)
{
	errno = 0;
	raced = query(srq, SROCEDV_INTF_SRQ_RECV, 0, 0);
	raced_errno = errno;
	return destroy_err;
}

static int srq_recv(void *obj, const void *ops, uint64_t addr, uint32_t length, uint32_t lkey, uint64_t wr_id)
{
	return ((const struct srocedv_srq_ops *)ops)->recv(obj, addr, length, lkey, wr_id);
}

static int srq_repost(void *obj, const void *ops, int num)
{
	return ((const struct srocedv_srq_ops *)ops)->recv_repost(obj, num);
}

static int srq_post(void *obj, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	return sroce_post_srq_recv(obj, wr, bad);
}

/* 1: the family's WQE is ibv_post_srq_recv's. */
static void test_same_wqe(void)
{
	static struct fake_srq a, b;
	const struct srocedv_srq_ops *ops;

	srq_init(&a, IBV_SRQT_BASIC);
	srq_init(&b, IBV_SRQT_BASIC);
	ops = query(ibsrq_of(&a), SROCEDV_INTF_SRQ_RECV, 0, 0);
	CHECK(ops && ops->recv && ops->recv_repost);
	if (!ops)
		return;
	same_wqe_model(&a.srq.ring, ibsrq_of(&a), &b.srq.ring, ibsrq_of(&b), ops, srq_recv, srq_post);
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)ops) == 0);
}

/* 2: the repost model, per table and SRQ type. */
static void test_recv_repost(enum ibv_srq_type type, uint32_t flags)
{
	static struct fake_srq f;
	const struct srocedv_srq_ops *ops;

	srq_init(&f, type);
	/* Start where a ring that has wrapped would be. */
	f.srq.ring.idx = f.hdr.producer = f.hdr.consumer = f.srq.intf_repost = 0xfffff000u;
	f.srq.ring.peer = f.hdr.consumer;
	ops = query(ibsrq_of(&f), SROCEDV_INTF_SRQ_RECV, flags, 0);
	CHECK(ops != NULL);
	if (!ops)
		return;
	recv_repost_model(&f.srq.ring, ibsrq_of(&f), ops, srq_recv, srq_repost);
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)ops) == 0);
}

/* 3: what the query refuses; destroy while held. */
static void test_query_checks(void)
{
	static struct fake_srq f;
	struct ibv_context other = { .device = (struct ibv_device *)&other };
	const struct srocedv_srq_ops *ops, *ops2;

	srq_init(&f, IBV_SRQT_BASIC);
	CHECK(query(ibsrq_of(&f), SROCEDV_INTF_SRQ_RECV, 0, SROCEDV_QP_OPS_RECV) == NULL && errno == EINVAL);
	CHECK(query(ibsrq_of(&f), SROCEDV_INTF_SRQ_RECV, 1u << 5, 0) == NULL && errno == EINVAL);
	{
		struct srocedv_query_intf_params p = { .intf = SROCEDV_INTF_SRQ_RECV, .intf_version = 2,
						       .obj = ibsrq_of(&f) };

		CHECK(srocedv_query_intf(&sctx.vctx.context, &p) == NULL && errno == EOPNOTSUPP);
		p.intf = SROCEDV_INTF_WQ_RECV + 1; /* past the last family */
		p.intf_version = SROCEDV_INTF_VERSION;
		CHECK(srocedv_query_intf(&sctx.vctx.context, &p) == NULL && errno == EOPNOTSUPP);
	}
	ibsrq_of(&f)->context = &other;
	CHECK(query(ibsrq_of(&f), SROCEDV_INTF_SRQ_RECV, 0, 0) == NULL && errno == EINVAL);
	ibsrq_of(&f)->context = &sctx.vctx.context;
	f.srq.max_sge = 0;
	CHECK(query(ibsrq_of(&f), SROCEDV_INTF_SRQ_RECV, 0, 0) == NULL && errno == EINVAL);
	f.srq.max_sge = MAX_SGE;
	CHECK(f.srq.intf_refs == 0);

	ops = query(ibsrq_of(&f), SROCEDV_INTF_SRQ_RECV, 0, 0);
	ops2 = query(ibsrq_of(&f), SROCEDV_INTF_SRQ_RECV, SROCEDV_INTF_FLAG_SINGLE_THREADED, 0);
	CHECK(ops && ops2 && ops != ops2 && f.srq.intf_refs == 2);
	CHECK(sroce_destroy_srq(ibsrq_of(&f)) == EBUSY);
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)ops) == 0);
	CHECK(sroce_destroy_srq(ibsrq_of(&f)) == EBUSY);
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)ops2) == 0);
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)ops2) == EINVAL);
	/* Released: destroy goes ahead (test_destroy_race). */
	CHECK(f.srq.intf_refs == 0);
}

/* 4: destroy racing a query. */
static void test_destroy_race(void)
{
	struct fake_srq *f = malloc(sizeof(*f)); /* destroy frees it */
	const struct srocedv_srq_ops *ops;

	srq_init(f, IBV_SRQT_BASIC);
	f->srq.ring.map = NULL; /* the ring is the test's: nothing to unmap */
	destroy_err = EIO;
	CHECK(sroce_destroy_srq(ibsrq_of(f)) == EIO);
	CHECK(raced == NULL && raced_errno == EBUSY);
	if (raced)
		srocedv_release_intf(&sctx.vctx.context, (void *)raced);
	/* Refused by the kernel: the SRQ lives on, and takes tables again. */
	ops = query(ibsrq_of(f), SROCEDV_INTF_SRQ_RECV, 0, 0);
	CHECK(ops && srocedv_release_intf(&sctx.vctx.context, (void *)ops) == 0);
	destroy_err = 0;
	CHECK(sroce_destroy_srq(ibsrq_of(f)) == 0);
	/* Freed: no table of it may be live. */
	CHECK(raced == NULL && raced_errno == EBUSY);
}

int main(void)
{
	test_same_wqe();
	test_recv_repost(IBV_SRQT_BASIC, 0);
	test_recv_repost(IBV_SRQT_BASIC, SROCEDV_INTF_FLAG_SINGLE_THREADED);
	test_recv_repost(IBV_SRQT_XRC, 0);
	test_query_checks();
	test_destroy_race();
	printf("provider intf_srq: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_qp_ex_windows.c - the provider's ibv_qp_ex builders that ibv_post_send
 * cannot stand in for, on the fake QPs of fake_qp.h (no kernel, the test
 * plays the kernel's consumer); test_qp_ex.c has the others.
 *
 * 1. ATOMIC WRITE, which ibv_post_send cannot post: its WQE, and no data
 *    setter after it.
 * 2. FLUSH (srocedv_wr_flush): its WQE, the type and level checked, no data
 *    setter after it.
 * 3. The window builders: ibv_wr_bind_mw (type 2 windows only),
 *    ibv_wr_local_inv and ibv_wr_send_inv.
 *
 * Exit status 0 when every check passed; each failure is printed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fake_qp.h"
#include "infiniband/srocedv.h"

static const uint8_t aw_bytes[8] = { 1, 2, 3, 4, 5, 6, 7, 0xf8 };

static void atomic_write(struct ibv_qp_ex *ex)
{
	ex->wr_id = 0xfeed;
	ex->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	ibv_wr_atomic_write(ex, 0x4321, 0x10008, aw_bytes);
}

static void atomic_write_with_sge(struct ibv_qp_ex *ex)
{
	good_send(ex);
	ibv_wr_atomic_write(ex, 0x4321, 0x10008, aw_bytes);
	ibv_wr_set_sge(ex, 1, (uintptr_t)payload, 8);
}

static void atomic_write_inline(struct ibv_qp_ex *ex)
{
	ibv_wr_atomic_write(ex, 0x4321, 0x10008, aw_bytes);
	ibv_wr_set_inline_data(ex, payload, 8);
}

static void test_atomic_write(void)
{
	static struct fake_qp rc, plain;
	const uint64_t ops = 0x7f | IBV_QP_EX_WITH_ATOMIC_WRITE;

	CHECK(sroce_qp_ex_check_ops(IBV_QPT_RC, ops) == 0);
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_WRITE) == EOPNOTSUPP);
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_UD, IBV_QP_EX_WITH_ATOMIC_WRITE) == EOPNOTSUPP);
	fake_qp_init(&rc, IBV_QPT_RC, ops);
	CHECK(batch_of(&rc, atomic_write) == 0);
	CHECK(rc.hdr.producer == 1);
	const struct sroce_wqe *w = sroce_ring_entry(&rc.qp.sq, 0);
	CHECK(w->opcode == SROCE_WQE_ATOMIC_WRITE);
	CHECK(w->wr_id == 0xfeed);
	CHECK(w->flags == (SROCE_WQE_SIGNALED | SROCE_WQE_FENCE));
	CHECK(w->num_sge == 0 && w->inline_len == 0);
	CHECK(w->rdma.rkey == 0x4321 && w->rdma.remote_addr == 0x10008);
	CHECK(memcmp(&w->rdma.compare_add, aw_bytes, 8) == 0);
	/* Its data is its 8 bytes: a gather list or inline data after it
	 * fails the batch, and nothing of it is published. */
	CHECK(batch_of(&rc, atomic_write_with_sge) == EINVAL);
	CHECK(batch_of(&rc, atomic_write_inline) == EINVAL);
	CHECK(rc.hdr.producer == 1);
	/* ibv_post_send has no field for its bytes: refused, nothing
	 * published (it would go out with no target and no bytes). */
	{
		struct ibv_send_wr wr = { .wr_id = 9, .opcode = IBV_WR_ATOMIC_WRITE,
					  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;

		CHECK(sroce_post_send(&rc.qp.vqp.qp, &wr, &bad) == EINVAL);
		CHECK(bad == &wr);
		CHECK(rc.hdr.producer == 1 && rc.qp.sq.idx == 1);
	}
	/* A QP created without it refuses it. */
	fake_qp_init(&plain, IBV_QPT_RC, 0x7f);
	CHECK(batch_of(&plain, atomic_write) == EOPNOTSUPP);
	CHECK(plain.hdr.producer == 0);
}

static uint8_t fl_type = SROCEDV_FLUSH_GLOBAL, fl_level = SROCEDV_FLUSH_RANGE;
static size_t fl_len = 4096;

static void flush_one(struct ibv_qp_ex *ex)
{
	ex->wr_id = 0xf1;
	ex->wr_flags = IBV_SEND_SIGNALED;
	sroce_wr_flush(ex, 0x5678, 0x20000, fl_len, fl_type, fl_level);
}

static void flush_with_sge(struct ibv_qp_ex *ex)
{
	flush_one(ex);
	ibv_wr_set_sge(ex, 1, (uintptr_t)payload, 8);
}

static void flush_inline(struct ibv_qp_ex *ex)
{
	flush_one(ex);
	ibv_wr_set_inline_data(ex, payload, 8);
}

/* FLUSH (srocedv_wr_flush, the ibv_wr_flush of rdma-core 45): the WQE's
 * flush member, the type and level checked, no data setter after it. */
static void test_flush(void)
{
	static struct fake_qp rc, plain;
	const uint64_t ops = 0x7f | SROCEDV_QP_EX_WITH_FLUSH;
	const struct sroce_wqe *w;

	CHECK(SROCEDV_QP_EX_WITH_FLUSH != IBV_QP_EX_WITH_TSO && SROCEDV_QP_EX_WITH_FLUSH < IBV_QP_EX_WITH_ATOMIC_WRITE);
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_RC, ops) == 0);
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_UC, SROCEDV_QP_EX_WITH_FLUSH) == EOPNOTSUPP);
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_UD, SROCEDV_QP_EX_WITH_FLUSH) == EOPNOTSUPP);
	fake_qp_init(&rc, IBV_QPT_RC, ops);
	CHECK(batch_of(&rc, flush_one) == 0);
	w = sroce_ring_entry(&rc.qp.sq, 0);
	CHECK(w->opcode == SROCE_WQE_FLUSH && w->wr_id == 0xf1 && w->flags == SROCE_WQE_SIGNALED);
	CHECK(w->num_sge == 0 && w->inline_len == 0);
	CHECK(w->flush.rkey == 0x5678 && w->flush.remote_addr == 0x20000 && w->flush.length == 4096);
	CHECK(w->flush.type == SROCE_FLUSH_GLOBAL && w->flush.level == SROCE_FLUSH_RANGE);
	/* The whole MR: the length means nothing and goes out as 0. */
	fl_level = SROCEDV_FLUSH_MR;
	fl_len = SIZE_MAX;
	fl_type = SROCEDV_FLUSH_GLOBAL | SROCEDV_FLUSH_PERSISTENT;
	CHECK(batch_of(&rc, flush_one) == 0);
	w = sroce_ring_entry(&rc.qp.sq, 1);
	CHECK(w->flush.level == SROCE_FLUSH_MR && w->flush.length == 0);
	CHECK(w->flush.type == (SROCE_FLUSH_GLOBAL | SROCE_FLUSH_PERSISTENT));
	CHECK(rc.hdr.producer == 2);
	/* Bad arguments fail the batch; nothing of it is published. */
	fl_level = SROCEDV_FLUSH_RANGE; /* a range above 4 GiB - 1 */
	CHECK(batch_of(&rc, flush_one) == EINVAL);
	fl_len = 8;
	fl_type = 0;
	CHECK(batch_of(&rc, flush_one) == EINVAL);
	fl_type = 4;
	CHECK(batch_of(&rc, flush_one) == EINVAL);
	fl_type = SROCEDV_FLUSH_GLOBAL;
	fl_level = 2;
	CHECK(batch_of(&rc, flush_one) == EINVAL);
	fl_level = SROCEDV_FLUSH_RANGE;
	CHECK(batch_of(&rc, flush_with_sge) == EINVAL);
	CHECK(batch_of(&rc, flush_inline) == EINVAL);
	CHECK(rc.hdr.producer == 2);
	/* ibv_post_send has no field for the type and level. */
	{
		struct ibv_send_wr wr = { .wr_id = 9, .opcode = (enum ibv_wr_opcode)SROCE_WQE_FLUSH,
					  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;

		CHECK(sroce_post_send(&rc.qp.vqp.qp, &wr, &bad) == EINVAL);
		CHECK(bad == &wr && rc.hdr.producer == 2);
	}
	/* Outside a batch: errno EINVAL, nothing written. */
	errno = 0;
	flush_one(ex_of(&rc));
	CHECK(errno == EINVAL && rc.qp.sq.idx == 2);
	/* A QP created without it refuses it. */
	fake_qp_init(&plain, IBV_QPT_RC, 0x7f);
	CHECK(batch_of(&plain, flush_one) == EOPNOTSUPP);
	CHECK(plain.hdr.producer == 0);
}

/* The window builders: ibv_wr_bind_mw (type 2 windows only),
 * ibv_wr_local_inv and ibv_wr_send_inv fill the WQE the kernel reads. */
static struct ibv_mw bind_mw_window;
static struct ibv_mr bind_mw_mr;

static void bind_one(struct ibv_qp_ex *ex)
{
	struct ibv_mw_bind_info info = {
		.mr = &bind_mw_mr, .addr = 0x10000, .length = 4096, .mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	ex->wr_id = 0xb1;
	ex->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(ex, &bind_mw_window, 0x4243, &info);
}

static void invalidations(struct ibv_qp_ex *ex)
{
	ibv_wr_local_inv(ex, 0x777);
	ibv_wr_send_inv(ex, 0x888);
	ibv_wr_set_sge(ex, 1, (uintptr_t)payload, 8);
}

static void test_window_builders(void)
{
	static struct fake_qp rc;
	const struct sroce_wqe *w;

	fake_qp_init(&rc, IBV_QPT_RC, IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV);
	bind_mw_window.type = IBV_MW_TYPE_2;
	bind_mw_window.rkey = 0x4242;
	bind_mw_mr.lkey = 0x1301;
	CHECK(batch_of(&rc, bind_one) == 0);
	w = sroce_ring_entry(&rc.qp.sq, 0);
	CHECK(w->opcode == IBV_WR_BIND_MW && w->wr_id == 0xb1 && w->flags == SROCE_WQE_SIGNALED);
	CHECK(w->num_sge == 0 && w->reg.new_key == 0x4243 && w->reg.mr_lkey == 0x1301);
	CHECK(w->reg.addr == 0x10000 && w->reg.length == 4096 && w->reg.access == IBV_ACCESS_REMOTE_WRITE);
	/* A type 1 window is bound by ibv_bind_mw, not by this builder. */
	bind_mw_window.type = IBV_MW_TYPE_1;
	CHECK(batch_of(&rc, bind_one) == EINVAL);
	CHECK(batch_of(&rc, invalidations) == 0);
	w = sroce_ring_entry(&rc.qp.sq, 1);
	CHECK(w->opcode == IBV_WR_LOCAL_INV && w->imm_or_inv == 0x777 && w->num_sge == 0);
	w = sroce_ring_entry(&rc.qp.sq, 2);
	CHECK(w->opcode == IBV_WR_SEND_WITH_INV && w->imm_or_inv == 0x888 && w->num_sge == 1);
	CHECK(rc.hdr.producer == 3);
}

int main(void)
{
	test_atomic_write();
	test_flush();
	test_window_builders();
	printf("provider qp_ex_windows: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_qp_ex.c - the provider's ibv_qp_ex builders (libuser/qp_ex.c) against
 * its ibv_post_send (libuser/qp.c), on QPs whose rings live in this
 * process's memory: no kernel, the test plays the kernel's consumer.
 *
 * 1. Random work requests, posted once through ibv_post_send and once
 *    through the builders, give byte-identical WQEs, with the rings
 *    wrapping many times.
 * 2. The batch rules: nothing is published before ibv_wr_complete; an
 *    error anywhere discards the whole batch; ibv_wr_abort discards it;
 *    builders and setters outside a batch write nothing (errno EINVAL).
 * 3. Creation refuses builders a QP type does not have (EOPNOTSUPP), and
 *    libibverbs' own ibv_qp_to_qp_ex() finds the builders (the PABI layout).
 * 4. ATOMIC WRITE, which ibv_post_send cannot post: its WQE, and no data
 *    setter after it.
 *
 * Exit status 0 when every check passed; each failure is printed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sroce.h"
#include "infiniband/srocedv.h"

enum { LOG_ENTRIES = 6, MAX_SGE = 4, STRIDE = 64 + 16 * MAX_SGE, MAX_INLINE = 16 * MAX_SGE };

static struct sroce_context sctx;
static struct sroce_context_page ctx_page; /* flags 0: no doorbell system call */

struct fake_qp {
	struct sroce_qp qp;
	struct sroce_ring_header hdr;
	uint8_t entries[STRIDE << LOG_ENTRIES];
};

static void fake_qp_init(struct fake_qp *f, enum ibv_qp_type type, uint64_t ops)
{
	memset(f, 0, sizeof(*f));
	sctx.ctx_page = &ctx_page;
	f->qp.vqp.qp.context = &sctx.vctx.context;
	f->qp.vqp.qp.qp_type = type;
	f->qp.vqp.qp.state = IBV_QPS_RTS;
	f->qp.sq.hdr = &f->hdr;
	f->qp.sq.entries = f->entries;
	f->qp.sq.mask = (1u << LOG_ENTRIES) - 1;
	f->qp.sq.stride = STRIDE;
	f->qp.max_send_sge = MAX_SGE;
	f->qp.max_inline = MAX_INLINE;
	pthread_spin_init(&f->qp.sq.lock, PTHREAD_PROCESS_PRIVATE);
	sroce_qp_ex_init(&f->qp, ops);
}

static struct ibv_qp_ex *ex_of(struct fake_qp *f)
{
	return &f->qp.vqp.qp_ex;
}

/* The kernel's side: everything published is consumed. */
static void consume_all(struct fake_qp *f)
{
	f->hdr.consumer = f->hdr.producer;
}

static const enum ibv_wr_opcode rc_ops[] = {
	IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
	IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
};

struct wr_buf {
	struct ibv_send_wr wr;
	struct ibv_sge sge[MAX_SGE];
	uint8_t data[MAX_INLINE];
};

static void random_wr(struct wr_buf *b, enum ibv_qp_type type, struct ibv_ah *ah)
{
	unsigned int n_ops = type == IBV_QPT_RC ? 7 : type == IBV_QPT_UC ? 4 : 2;
	enum ibv_wr_opcode op = rc_ops[rnd() % n_ops];
	bool atomic = op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
	bool inl = !atomic && op != IBV_WR_RDMA_READ && rnd() % 3 == 0;
	unsigned int n = atomic ? 1 : (unsigned int)(rnd() % (MAX_SGE + 1));

	memset(b, 0, sizeof(*b));
	for (unsigned int i = 0; i < sizeof(b->data); i++)
		b->data[i] = (uint8_t)rnd();
	b->wr.wr_id = rnd();
	b->wr.opcode = op;
	b->wr.send_flags = (unsigned int)(rnd() & (IBV_SEND_FENCE | IBV_SEND_SIGNALED |
						   IBV_SEND_SOLICITED)) |
			   (inl ? IBV_SEND_INLINE : 0);
	b->wr.imm_data = (uint32_t)rnd();
	b->wr.sg_list = b->sge;
	b->wr.num_sge = (int)n;
	for (unsigned int i = 0; i < n; i++) {
		uint32_t len = inl ? (uint32_t)(rnd() % (MAX_INLINE / MAX_SGE + 1)) : (uint32_t)rnd();

		b->sge[i].addr = inl ? (uintptr_t)(b->data + i * (MAX_INLINE / MAX_SGE)) : rnd();
		b->sge[i].length = atomic ? 8 : len;
		b->sge[i].lkey = (uint32_t)rnd();
	}
	if (type == IBV_QPT_UD) {
		b->wr.wr.ud.ah = ah;
		b->wr.wr.ud.remote_qpn = (uint32_t)rnd() & 0xffffff;
		b->wr.wr.ud.remote_qkey = (uint32_t)rnd();
	} else if (atomic) {
		b->wr.wr.atomic.remote_addr = rnd() & ~7ull;
		b->wr.wr.atomic.rkey = (uint32_t)rnd();
		b->wr.wr.atomic.compare_add = rnd();
		b->wr.wr.atomic.swap = rnd();
	} else {
		b->wr.wr.rdma.remote_addr = rnd();
		b->wr.wr.rdma.rkey = (uint32_t)rnd();
	}
}

/* The same work request through the builders. */
static void build_wr(struct ibv_qp_ex *ex, const struct ibv_send_wr *wr)
{
	ex->wr_id = wr->wr_id;
	ex->wr_flags = wr->send_flags;
	switch (wr->opcode) {
	case IBV_WR_SEND:
		ibv_wr_send(ex);
		break;
	case IBV_WR_SEND_WITH_IMM:
		ibv_wr_send_imm(ex, wr->imm_data);
		break;
	case IBV_WR_RDMA_WRITE:
		ibv_wr_rdma_write(ex, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		ibv_wr_rdma_write_imm(ex, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr, wr->imm_data);
		break;
	case IBV_WR_RDMA_READ:
		ibv_wr_rdma_read(ex, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		ibv_wr_atomic_cmp_swp(ex, wr->wr.atomic.rkey, wr->wr.atomic.remote_addr,
				      wr->wr.atomic.compare_add, wr->wr.atomic.swap);
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		ibv_wr_atomic_fetch_add(ex, wr->wr.atomic.rkey, wr->wr.atomic.remote_addr,
					wr->wr.atomic.compare_add);
		break;
	default:
		CHECK(!"an opcode the test does not build");
	}
	if (ex->qp_base.qp_type == IBV_QPT_UD)
		ibv_wr_set_ud_addr(ex, wr->wr.ud.ah, wr->wr.ud.remote_qpn, wr->wr.ud.remote_qkey);
	if (wr->send_flags & IBV_SEND_INLINE) {
		struct ibv_data_buf bufs[MAX_SGE];

		for (int i = 0; i < wr->num_sge; i++)
			bufs[i] = (struct ibv_data_buf){ (void *)(uintptr_t)wr->sg_list[i].addr,
							 wr->sg_list[i].length };
		if (wr->num_sge == 1)
			ibv_wr_set_inline_data(ex, bufs[0].addr, bufs[0].length);
		else
			ibv_wr_set_inline_data_list(ex, (size_t)wr->num_sge, bufs);
	} else if (wr->num_sge == 1 && rnd() % 2) {
		ibv_wr_set_sge(ex, wr->sg_list[0].lkey, wr->sg_list[0].addr, wr->sg_list[0].length);
	} else {
		ibv_wr_set_sge_list(ex, (size_t)wr->num_sge, wr->sg_list);
	}
}

static void test_same_wqes(enum ibv_qp_type type, unsigned int batches)
{
	static struct fake_qp a, b;
	struct sroce_ah ah = { .handle = 0x1234 };
	struct wr_buf bufs[8];
	uint64_t ops = type == IBV_QPT_RC ? 0x7f : type == IBV_QPT_UC ? 0xf : 0xc;
	unsigned int wrs = 0, differ = 0;

	fake_qp_init(&a, type, 0);
	fake_qp_init(&b, type, ops);
	for (unsigned int n = 0; n < batches; n++) {
		unsigned int count = 1 + (unsigned int)(rnd() % 8);
		struct ibv_send_wr *bad = NULL;
		uint32_t pa = a.hdr.producer;
		int err;

		for (unsigned int i = 0; i < count; i++) {
			random_wr(&bufs[i], type, &ah.ibv_ah);
			bufs[i].wr.next = i + 1 < count ? &bufs[i + 1].wr : NULL;
		}
		err = sroce_post_send(&a.qp.vqp.qp, &bufs[0].wr, &bad);
		CHECK(err == 0);
		ibv_wr_start(ex_of(&b));
		for (unsigned int i = 0; i < count; i++)
			build_wr(ex_of(&b), &bufs[i].wr);
		CHECK(ibv_wr_complete(ex_of(&b)) == 0);
		CHECK(a.hdr.producer == pa + count);
		CHECK(b.hdr.producer == a.hdr.producer);
		for (uint32_t i = pa; i != a.hdr.producer; i++, wrs++)
			differ += memcmp(sroce_ring_entry(&a.qp.sq, i), sroce_ring_entry(&b.qp.sq, i),
					 STRIDE) != 0;
		consume_all(&a);
		consume_all(&b);
	}
	printf("%s: %u work requests in %u batches, %u WQEs differ\n",
	       type == IBV_QPT_RC ? "RC" : type == IBV_QPT_UC ? "UC" : "UD", wrs, batches, differ);
	CHECK(differ == 0);
}

/* Starts a batch, runs `build`, and returns ibv_wr_complete's result; the
 * producer index must not move when it fails. */
static int batch_of(struct fake_qp *f, void (*build)(struct ibv_qp_ex *))
{
	uint32_t before = f->hdr.producer;
	int err;

	ibv_wr_start(ex_of(f));
	build(ex_of(f));
	err = ibv_wr_complete(ex_of(f));
	CHECK(f->qp.batch.open == false);
	if (err) {
		CHECK(f->hdr.producer == before);
		CHECK(f->qp.sq.idx == before);
	}
	return err;
}

static uint8_t payload[4096];

static void good_send(struct ibv_qp_ex *ex)
{
	ibv_wr_send(ex);
	ibv_wr_set_sge(ex, 1, (uintptr_t)payload, 64);
}

static void send_then_too_many_sges(struct ibv_qp_ex *ex)
{
	struct ibv_sge sges[MAX_SGE + 1] = {};

	good_send(ex);
	ibv_wr_send(ex);
	ibv_wr_set_sge_list(ex, MAX_SGE + 1, sges);
	good_send(ex);
}

static void send_then_long_inline(struct ibv_qp_ex *ex)
{
	good_send(ex);
	ibv_wr_send(ex);
	ibv_wr_set_inline_data(ex, payload, MAX_INLINE + 1);
}

static void setter_first(struct ibv_qp_ex *ex)
{
	ibv_wr_set_sge(ex, 1, (uintptr_t)payload, 64);
	good_send(ex);
}

static void read_on_uc(struct ibv_qp_ex *ex)
{
	good_send(ex);
	ibv_wr_rdma_read(ex, 7, 0x1000);
	ibv_wr_set_sge(ex, 1, (uintptr_t)payload, 64);
}

static void local_inv(struct ibv_qp_ex *ex)
{
	good_send(ex);
	ibv_wr_local_inv(ex, 0x100);
}

static void ud_without_addr(struct ibv_qp_ex *ex)
{
	good_send(ex);
}

static void too_many_for_ring(struct ibv_qp_ex *ex)
{
	for (unsigned int i = 0; i <= (1u << LOG_ENTRIES); i++)
		good_send(ex);
}

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

static void test_batch_rules(void)
{
	static struct fake_qp rc, uc, ud;
	uint32_t p;

	fake_qp_init(&rc, IBV_QPT_RC, 0x7f);
	fake_qp_init(&uc, IBV_QPT_UC, 0xf);
	fake_qp_init(&ud, IBV_QPT_UD, 0xc);

	CHECK(batch_of(&rc, good_send) == 0);
	CHECK(rc.hdr.producer == 1);
	CHECK(batch_of(&rc, send_then_too_many_sges) == EINVAL);
	CHECK(batch_of(&rc, send_then_long_inline) == EINVAL);
	CHECK(batch_of(&rc, setter_first) == EINVAL);
	CHECK(batch_of(&uc, read_on_uc) == EOPNOTSUPP);
	CHECK(batch_of(&rc, local_inv) == EOPNOTSUPP);
	CHECK(batch_of(&ud, ud_without_addr) == EINVAL);
	CHECK(batch_of(&rc, too_many_for_ring) == ENOMEM);
	consume_all(&rc);
	CHECK(batch_of(&rc, good_send) == 0);
	CHECK(rc.hdr.producer == 2);

	/* Not before RTS: the batch fails, nothing is written. */
	rc.qp.vqp.qp.state = IBV_QPS_RTR;
	CHECK(batch_of(&rc, good_send) == EINVAL);
	rc.qp.vqp.qp.state = IBV_QPS_RTS;

	/* ibv_wr_abort discards everything since ibv_wr_start. */
	p = rc.hdr.producer;
	ibv_wr_start(ex_of(&rc));
	good_send(ex_of(&rc));
	good_send(ex_of(&rc));
	ibv_wr_abort(ex_of(&rc));
	CHECK(rc.hdr.producer == p && rc.qp.sq.idx == p && !rc.qp.batch.open);
	/* The lock was released: the next batch starts and posts. */
	CHECK(batch_of(&rc, good_send) == 0);
	CHECK(rc.hdr.producer == p + 1);

	/* Outside a batch: nothing written, errno EINVAL. */
	p = rc.hdr.producer;
	memset(sroce_ring_entry(&rc.qp.sq, p), 0xa5, STRIDE);
	errno = 0;
	ibv_wr_send(ex_of(&rc));
	CHECK(errno == EINVAL);
	errno = 0;
	ibv_wr_set_sge(ex_of(&rc), 1, (uintptr_t)payload, 64);
	CHECK(errno == EINVAL);
	errno = 0;
	ibv_wr_local_inv(ex_of(&rc), 1);
	CHECK(errno == EINVAL);
	CHECK(((uint8_t *)sroce_ring_entry(&rc.qp.sq, p))[0] == 0xa5);
	CHECK(rc.hdr.producer == p && rc.qp.sq.idx == p);
	CHECK(ibv_wr_complete(ex_of(&rc)) == EINVAL);
	ibv_wr_abort(ex_of(&rc)); /* harmless */
	CHECK(batch_of(&rc, good_send) == 0);
}

static void test_creation_rules(void)
{
	static struct fake_qp rc;

	CHECK(sroce_qp_ex_check_ops(IBV_QPT_RC, 0x7f) == 0);
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_UC, 0xf) == 0);
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_UD, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM) == 0);
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE) == EOPNOTSUPP);
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_UC, IBV_QP_EX_WITH_RDMA_READ) == EOPNOTSUPP);
	/* Windows are bound on connected QPs, SEND with invalidate is RC's,
	 * LOCAL_INV any QP's (the kernel's Qp::validate_wqe agrees). */
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_RC, IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW |
							IBV_QP_EX_WITH_SEND_WITH_INV) == 0);
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_UC, IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW) == 0);
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_UC, IBV_QP_EX_WITH_SEND_WITH_INV) == EOPNOTSUPP);
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_UD, IBV_QP_EX_WITH_LOCAL_INV) == 0);
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_UD, IBV_QP_EX_WITH_BIND_MW) == EOPNOTSUPP);
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_UD, IBV_QP_EX_WITH_TSO) == EOPNOTSUPP);
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_RC, 1ull << 40) == EOPNOTSUPP);
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_RAW_PACKET, IBV_QP_EX_WITH_SEND) == EOPNOTSUPP);
	/* An XRC initiator has RC's builders; a target has no SQ. */
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_XRC_SEND, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ) == 0);
	CHECK(sroce_qp_ex_check_ops(IBV_QPT_XRC_RECV, IBV_QP_EX_WITH_SEND) == EOPNOTSUPP);

	/* libibverbs finds the builders through the provider's verbs_qp. */
	memset(&rc, 0, sizeof(rc));
	CHECK(ibv_qp_to_qp_ex(&rc.qp.vqp.qp) == NULL);
	fake_qp_init(&rc, IBV_QPT_RC, 0x7f);
	CHECK(ibv_qp_to_qp_ex(&rc.qp.vqp.qp) == &rc.qp.vqp.qp_ex);
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
	test_creation_rules();
	test_batch_rules();
	test_atomic_write();
	test_flush();
	test_window_builders();
	test_same_wqes(IBV_QPT_RC, 20000);
	test_same_wqes(IBV_QPT_UC, 10000);
	test_same_wqes(IBV_QPT_UD, 10000);
	printf("provider qp_ex: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}

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
 *
 * ATOMIC WRITE, FLUSH and the window builders: test_qp_ex_windows.c; the
 * fake QP both use: fake_qp.h.
 *
 * Exit status 0 when every check passed; each failure is printed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_qp.h"

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

static void ud_local_inv(struct ibv_qp_ex *ex)
{
	ibv_wr_local_inv(ex, 0x100);
}

static void too_many_for_ring(struct ibv_qp_ex *ex)
{
	for (unsigned int i = 0; i <= (1u << LOG_ENTRIES); i++)
		good_send(ex);
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
	/* A LOCAL_INV has no destination: a UD QP posts it without an
	 * address, through the builder and through ibv_post_send alike. */
	{
		static struct fake_qp udi;
		struct ibv_send_wr w = { .opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = 0x200 }, *bad = NULL;
		const struct sroce_wqe *q;

		fake_qp_init(&udi, IBV_QPT_UD, IBV_QP_EX_WITH_LOCAL_INV);
		CHECK(batch_of(&udi, ud_local_inv) == 0 && udi.hdr.producer == 1);
		CHECK(sroce_post_send(&udi.qp.vqp.qp, &w, &bad) == 0 && udi.hdr.producer == 2);
		q = sroce_ring_entry(&udi.qp.sq, 0);
		CHECK(q->opcode == IBV_WR_LOCAL_INV && q->imm_or_inv == 0x100);
		q = sroce_ring_entry(&udi.qp.sq, 1);
		CHECK(q->opcode == IBV_WR_LOCAL_INV && q->imm_or_inv == 0x200);
	}
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

int main(void)
{
	test_creation_rules();
	test_batch_rules();
	test_same_wqes(IBV_QPT_RC, 20000);
	test_same_wqes(IBV_QPT_UC, 10000);
	test_same_wqes(IBV_QPT_UD, 10000);
	printf("provider qp_ex: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}

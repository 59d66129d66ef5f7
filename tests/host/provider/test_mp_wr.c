// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_mp_wr.c - the provider's side of multi-packet receive (seed 000,
 * Documentation/mp-wr.md) on rings in this process's memory, the test
 * playing the kernel:
 *
 * 1. ibv_post_recv and ibv_post_srq_recv on a multi-packet queue take no
 *    part of a list with one WR whose SGEs are not the buffer size
 *    (EINVAL, bad_wr that WR, nothing written or published); a list of
 *    right-sized WRs is posted whole. The receive families' recv refuses
 *    another length too.
 * 2. Completions: MORE_IN_MSG, CONSUMED and INCOMPLETE come in
 *    ibv_poll_cq's wc_flags and ibv_wc_read_wc_flags as SROCEDV_WC_MP_WR_*,
 *    the RECV_NOP opcode as SROCEDV_WC_RECV_NOP, and the offset through
 *    srocedv_wc_read_mp_wr_offset; ibv_create_cq_ex takes
 *    SROCEDV_WC_EX_WITH_MP_WR.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intf_fixture.h"

enum { MP = 8192 };

static struct ibv_sge sges[3] = {
	{ .addr = 0x10000, .length = 4096, .lkey = 7 },
	{ .addr = 0x20000, .length = 4096, .lkey = 7 },
	{ .addr = 0x30000, .length = 100, .lkey = 7 },
};

/* 1: a list [whole, short, whole] posts the first WR and stops at the short
 * one, as any post stops at its first bad WR (bad_wr: the first not posted);
 * [whole, whole, whole] posts all three. */
static void check_post(struct sroce_uring *r, int (*post)(void *obj, struct ibv_recv_wr *wr,
							  struct ibv_recv_wr **bad),
		       void *obj)
{
	struct ibv_recv_wr w[3] = {
		{ .wr_id = 1, .sg_list = sges, .num_sge = 2, .next = &w[1] },
		{ .wr_id = 2, .sg_list = sges, .num_sge = 3, .next = &w[2] }, /* 8292 bytes */
		{ .wr_id = 3, .sg_list = sges, .num_sge = 2 },
	};
	struct ibv_recv_wr *bad = NULL;
	uint32_t idx = r->idx, prod = r->hdr->producer;

	r->mp_size = MP;
	CHECK(post(obj, w, &bad) == EINVAL && bad == &w[1]);
	CHECK(r->idx == idx + 1 && r->hdr->producer == prod + 1);
	w[1].num_sge = 1; /* 4096 bytes */
	CHECK(post(obj, w, &bad) == EINVAL && bad == &w[1]);
	CHECK(r->idx == idx + 2 && r->hdr->producer == prod + 2);
	/* More SGEs than the queue takes: refused before its list is read. */
	w[1].num_sge = MAX_SGE + 1;
	CHECK(post(obj, w, &bad) == EINVAL && bad == &w[1]);
	CHECK(r->idx == idx + 3 && r->hdr->producer == prod + 3);
	/* A short first WR: nothing posted, bad_wr at the head. */
	CHECK(post(obj, &w[1], &bad) == EINVAL && bad == &w[1]);
	CHECK(r->idx == idx + 3 && r->hdr->producer == prod + 3);
	w[1].num_sge = 2;
	bad = NULL;
	CHECK(post(obj, w, &bad) == 0 && bad == NULL);
	CHECK(r->idx == idx + 6 && r->hdr->producer == prod + 6);
	/* An ordinary queue takes any length. */
	r->mp_size = 0;
	w[1].num_sge = 3;
	CHECK(post(obj, w, &bad) == 0);
	CHECK(r->idx == idx + 9);
}

static int qp_post(void *obj, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	return sroce_post_recv(obj, wr, bad);
}

static int srq_post(void *obj, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	return sroce_post_srq_recv(obj, wr, bad);
}

static void test_posting(void)
{
	static struct fake_qp_rq q;
	static struct {
		struct sroce_srq srq;
		struct sroce_ring_header hdr;
		uint8_t entries[STRIDE << LOG_ENTRIES];
	} s;
	const struct srocedv_qp_ops_msg *ops;

	qp_init(&q, IBV_QPT_RC);
	ibqp_of(&q)->state = IBV_QPS_INIT;
	check_post(&q.f.qp.rq, qp_post, ibqp_of(&q));

	memset(&s, 0, sizeof(s));
	s.srq.vsrq.srq.context = &sctx.vctx.context;
	s.srq.ring.map = s.entries;
	s.srq.ring.hdr = &s.hdr;
	s.srq.ring.entries = s.entries;
	s.srq.ring.mask = (1u << LOG_ENTRIES) - 1;
	s.srq.ring.stride = STRIDE;
	s.srq.max_sge = MAX_SGE;
	sroce_spin_init(&s.srq.ring.lock);
	check_post(&s.srq.ring, srq_post, &s.srq.vsrq.srq);

	/* The message family's recv: one SGE of the buffer size, or EINVAL. */
	ops = query(ibqp_of(&q), SROCEDV_INTF_QP_MSG, 0, SROCEDV_QP_OPS_RECV);
	CHECK(ops != NULL);
	if (ops) {
		uint32_t idx = q.f.qp.rq.idx;

		q.f.qp.rq.mp_size = MP;
		CHECK(ops->recv(ibqp_of(&q), 0x10000, MP - 64, 7, 9) == EINVAL);
		CHECK(q.f.qp.rq.idx == idx);
		CHECK(ops->recv(ibqp_of(&q), 0x10000, MP, 7, 9) == 0);
		CHECK(q.f.qp.rq.idx == idx + 1);
		CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)ops) == 0);
	}
}

struct fake_cq {
	struct sroce_cq cq;
	struct sroce_ring_header hdr;
	struct sroce_cqe entries[16];
};

static void produce(struct fake_cq *f, const struct sroce_cqe *c)
{
	f->entries[f->hdr.producer & f->cq.ring.mask] = *c;
	__atomic_store_n(&f->hdr.producer, f->hdr.producer + 1, __ATOMIC_RELEASE);
}

/* 2: the flags, opcode and offset through both pollers. */
static void test_completions(void)
{
	static struct fake_cq f;
	const struct sroce_cqe cqes[] = {
		{ .wr_id = 5, .opcode = IBV_WC_RECV, .byte_len = 4096, .mp_offset = 0,
		  .flags = SROCE_CQE_MP_MORE_IN_MSG },
		{ .wr_id = 5, .opcode = IBV_WC_RECV, .byte_len = 100, .mp_offset = 4096,
		  .flags = SROCE_CQE_MP_CONSUMED | SROCE_CQE_WITH_IMM },
		{ .wr_id = 6, .opcode = SROCE_CQE_OP_RECV_NOP, .mp_offset = 512, .flags = SROCE_CQE_MP_CONSUMED },
		{ .wr_id = 6, .opcode = SROCE_CQE_OP_RECV_NOP, .flags = SROCE_CQE_MP_INCOMPLETE },
	};
	const unsigned int want[] = {
		SROCEDV_WC_MP_WR_MORE_IN_MSG,
		SROCEDV_WC_MP_WR_CONSUMED | IBV_WC_WITH_IMM,
		SROCEDV_WC_MP_WR_CONSUMED,
		SROCEDV_WC_MP_WR_INCOMPLETE,
	};
	const size_t n = sizeof(cqes) / sizeof(cqes[0]);
	struct ibv_poll_cq_attr pa = {};
	struct ibv_cq_init_attr_ex bad = { .cqe = 4, .wc_flags = 1ULL << 47 };
	struct ibv_wc wc[4];
	size_t i = 0;

	CHECK(SROCEDV_WC_RECV_NOP == SROCE_CQE_OP_RECV_NOP);
	memset(&f, 0, sizeof(f));
	f.cq.ring.hdr = &f.hdr;
	f.cq.ring.entries = (uint8_t *)f.entries;
	f.cq.ring.mask = 15;
	f.cq.ring.stride = sizeof(struct sroce_cqe);
	sroce_spin_init(&f.cq.ring.lock);
	sroce_cq_ex_init(&f.cq, IBV_WC_EX_WITH_BYTE_LEN | SROCEDV_WC_EX_WITH_MP_WR, false);
	for (i = 0; i < n; i++)
		produce(&f, &cqes[i]);
	CHECK(ibv_start_poll(&f.cq.vcq.cq_ex, &pa) == 0);
	for (i = 0; i < n; i++) {
		CHECK(f.cq.vcq.cq_ex.wr_id == cqes[i].wr_id);
		CHECK(ibv_wc_read_wc_flags(&f.cq.vcq.cq_ex) == want[i]);
		CHECK(ibv_wc_read_opcode(&f.cq.vcq.cq_ex) == (enum ibv_wc_opcode)cqes[i].opcode);
		CHECK(srocedv_wc_read_mp_wr_offset(&f.cq.vcq.cq_ex) == cqes[i].mp_offset);
		CHECK(ibv_wc_read_byte_len(&f.cq.vcq.cq_ex) == cqes[i].byte_len);
		if (i + 1 < n)
			CHECK(ibv_next_poll(&f.cq.vcq.cq_ex) == 0);
	}
	CHECK(ibv_next_poll(&f.cq.vcq.cq_ex) == ENOENT);
	ibv_end_poll(&f.cq.vcq.cq_ex);

	for (i = 0; i < n; i++)
		produce(&f, &cqes[i]);
	CHECK(sroce_poll_cq(&f.cq.vcq.cq, 4, wc) == 4);
	for (i = 0; i < n; i++) {
		CHECK(wc[i].wc_flags == want[i]);
		CHECK(wc[i].opcode == (enum ibv_wc_opcode)cqes[i].opcode);
	}
	CHECK(wc[2].opcode == SROCEDV_WC_RECV_NOP);

	/* The flag is among what ibv_create_cq_ex may ask; others above are not. */
	CHECK(sroce_create_cq_ex(&sctx.vctx.context, &bad) == NULL && errno == EOPNOTSUPP);
}

int main(void)
{
	test_posting();
	test_completions();
	printf("provider mp_wr: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}

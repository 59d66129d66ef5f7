/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* For the interface-family host tests (test_intf*.c): a QP with a receive
 * queue, and a table of the fake context's object by family and flags. */
#ifndef SROCE_PROVIDER_TEST_INTF_FIXTURE_H
#define SROCE_PROVIDER_TEST_INTF_FIXTURE_H

#include "fake_qp.h"
#include "infiniband/srocedv.h"

/* A QP with an RQ beside fake_qp's SQ. */
struct fake_qp_rq {
	struct fake_qp f;
	struct sroce_ring_header rq_hdr;
	uint8_t rq_entries[STRIDE << LOG_ENTRIES];
};

static inline void qp_init(struct fake_qp_rq *q, enum ibv_qp_type type)
{
	fake_qp_init(&q->f, type, 0);
	memset(&q->rq_hdr, 0, sizeof(q->rq_hdr));
	q->f.qp.rq.map = q->rq_entries; /* only tested for NULL (an SRQ) */
	q->f.qp.rq.hdr = &q->rq_hdr;
	q->f.qp.rq.entries = q->rq_entries;
	q->f.qp.rq.mask = (1u << LOG_ENTRIES) - 1;
	q->f.qp.rq.stride = STRIDE;
	q->f.qp.max_recv_sge = MAX_SGE;
	sroce_spin_init(&q->f.qp.rq.lock);
}

static inline struct ibv_qp *ibqp_of(struct fake_qp_rq *q)
{
	return &q->f.qp.vqp.qp;
}

static inline void *query(void *obj, enum srocedv_intf_family fam, uint32_t flags, uint32_t family_flags)
{
	struct srocedv_query_intf_params p = {
		.intf = fam,
		.intf_version = SROCEDV_INTF_VERSION,
		.obj = obj,
		.flags = flags,
		.family_flags = family_flags,
	};

	return srocedv_query_intf(&sctx.vctx.context, &p);
}


/*
 * recv and recv_repost of one receive ring (an RQ or an SRQ, through
 * `recv` and `repost`, which call the table `ops` on `obj`) against a
 * model, the list of WRs posted in order: recv fills the ring, never more;
 * the kernel (the test) takes some; recv_repost posts again exactly the WRs
 * taken, oldest first, never one not taken, never a slot overwritten since.
 */
static inline void recv_repost_model(struct sroce_uring *r, void *obj, const void *ops,
				     int (*recv)(void *obj, const void *ops, uint64_t addr, uint32_t length,
						 uint32_t lkey, uint64_t wr_id),
				     int (*repost)(void *obj, const void *ops, int num))
{
	static uint64_t model[1 << 16];     /* wr_id of each posted WQE, by index */
	static uint64_t addr_of[1 << 16];
	uint32_t size = r->mask + 1, cursor = r->idx;
	const uint32_t start = r->idx;

	for (int step = 0; step < 20000 && r->idx - start < (1u << 16) - 2 * size; step++) {
		uint32_t idx = r->idx, posted = idx - r->hdr->consumer;

		switch (rnd() % 3) {
		case 0: { /* a new buffer */
			uint64_t a = rnd();
			int err = recv(obj, ops, a, 256, 7, idx);

			CHECK(err == (posted < size ? 0 : ENOMEM));
			if (!err) {
				const struct sroce_wqe *w = sroce_ring_entry(r, idx);

				model[idx & 0xffff] = idx;
				addr_of[idx & 0xffff] = a;
				CHECK(w->num_sge == 1 && w->opcode == SROCE_WQE_RECV);
			}
			break;
		}
		case 1: /* the kernel takes some: copies them out, then moves the consumer */
			__atomic_store_n(&r->hdr->consumer, r->hdr->consumer + (uint32_t)(rnd() % (posted + 1)),
					 __ATOMIC_RELEASE);
			break;
		default: { /* repost some, sometimes too many */
			uint32_t lo = idx - cursor > size ? idx - size : cursor; /* older ones were overwritten */
			uint32_t taken = r->hdr->consumer - lo;
			uint32_t n = (uint32_t)(rnd() % (taken + 2));
			int err = repost(obj, ops, (int)n);

			if (n > taken) {
				CHECK(err == EINVAL && r->idx == idx);
				break;
			}
			CHECK(err == 0 && r->idx == idx + n);
			for (uint32_t i = 0; i < n; i++) {
				const struct sroce_wqe *w = sroce_ring_entry(r, idx + i);
				const struct sroce_sge *s = (const void *)(w + 1);

				model[(idx + i) & 0xffff] = model[(lo + i) & 0xffff];
				addr_of[(idx + i) & 0xffff] = addr_of[(lo + i) & 0xffff];
				CHECK(w->wr_id == model[(lo + i) & 0xffff] && s->addr == addr_of[(lo + i) & 0xffff] &&
				      s->length == 256);
			}
			cursor = lo + n;
			break;
		}
		}
		CHECK(r->hdr->producer == r->idx);
	}
	CHECK(repost(obj, ops, -1) == EINVAL);
}

/* A receive family's recv writes the WQE the queue's post verb writes, byte
 * for byte: ring ra through `recv` (the table ops on a), ring rb through
 * `post` on b; the kernel (the test) takes each. */
static inline void same_wqe_model(struct sroce_uring *ra, void *a, struct sroce_uring *rb, void *b, const void *ops,
				  int (*recv)(void *obj, const void *ops, uint64_t addr, uint32_t length,
					      uint32_t lkey, uint64_t wr_id),
				  int (*post)(void *obj, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad))
{
	for (uint32_t i = 0; i < 3u << LOG_ENTRIES; i++) {
		uint64_t addr = rnd(), wr_id = rnd();
		uint32_t len = (uint32_t)rnd(), lkey = (uint32_t)rnd();
		struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
		struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad = NULL;

		CHECK(recv(a, ops, addr, len, lkey, wr_id) == 0);
		CHECK(post(b, &wr, &bad) == 0);
		CHECK(memcmp(sroce_ring_entry(ra, i), sroce_ring_entry(rb, i), STRIDE) == 0);
		CHECK(ra->hdr->producer == rb->hdr->producer && ra->hdr->producer == i + 1);
		ra->hdr->consumer = rb->hdr->consumer = i + 1; /* the kernel takes each */
	}
}

/* SQ slot idx of a fake QP. */
static inline const uint8_t *slot(struct fake_qp *f, uint32_t idx)
{
	return f->entries + (size_t)(idx & f->qp.sq.mask) * STRIDE;
}

#endif

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


/* SQ slot idx of a fake QP. */
static inline const uint8_t *slot(struct fake_qp *f, uint32_t idx)
{
	return f->entries + (size_t)(idx & f->qp.sq.mask) * STRIDE;
}

#endif

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* For the provider's qp_ex host tests: a QP whose send ring lives in the
 * test's memory (no kernel; the test plays the kernel's consumer), and
 * batch_of(), which posts one builder batch and checks nothing leaks. */
#ifndef SROCE_PROVIDER_TEST_FAKE_QP_H
#define SROCE_PROVIDER_TEST_FAKE_QP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "sroce.h"

enum { LOG_ENTRIES = 6, MAX_SGE = 4, STRIDE = 64 + 16 * MAX_SGE, MAX_INLINE = 16 * MAX_SGE };

static struct sroce_context sctx;
static struct sroce_context_page ctx_page; /* flags 0: no doorbell system call */

struct fake_qp {
	struct sroce_qp qp;
	struct sroce_ring_header hdr;
	uint8_t entries[STRIDE << LOG_ENTRIES];
};

static inline void fake_qp_init(struct fake_qp *f, enum ibv_qp_type type, uint64_t ops)
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
	sroce_spin_init(&f->qp.sq.lock);
	sroce_qp_ex_init(&f->qp, ops);
}

static inline struct ibv_qp_ex *ex_of(struct fake_qp *f)
{
	return &f->qp.vqp.qp_ex;
}

/* The kernel's side: everything published is consumed. */
static inline void consume_all(struct fake_qp *f)
{
	f->hdr.consumer = f->hdr.producer;
}

/* Starts a batch, runs `build`, and returns ibv_wr_complete's result; the
 * producer index must not move when it fails. */
static inline int batch_of(struct fake_qp *f, void (*build)(struct ibv_qp_ex *))
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

/* One SEND of 64 bytes of payload. */
static inline void good_send(struct ibv_qp_ex *ex)
{
	ibv_wr_send(ex);
	ibv_wr_set_sge(ex, 1, (uintptr_t)payload, 64);
}

#endif

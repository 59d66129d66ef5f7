// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srocedv.c - the srocedv_* extension API (see <infiniband/srocedv.h>).
 */
#include <errno.h>

#include "infiniband/srocedv.h"
#include "sroce.h"

int srocedv_query_device(struct ibv_context *ibctx, struct srocedv_device_attr *attr)
{
	struct sroce_context *ctx;

	if (!ibctx || !attr)
		return EINVAL;
	if (!sroce_is_sroce_context(ibctx))
		return EOPNOTSUPP;
	ctx = to_sctx(ibctx);
	/* No optional fields exist yet: report none as filled. */
	attr->comp_mask = 0;
	attr->abi_version = SROCE_PROVIDER_ABI_VERSION;
	attr->flags = (ctx->caps & SROCE_UCTX_CAP_SQ_POLL) ? SROCEDV_DEVICE_FLAG_SQ_POLL : 0;
	return 0;
}

struct ibv_context *srocedv_open_device(struct ibv_device *device, struct srocedv_context_attr *attr)
{
	if (!device || !attr) {
		errno = EINVAL;
		return NULL;
	}
	if (!sroce_is_sroce_device(device) || attr->comp_mask || attr->reserved ||
	    (attr->flags & ~(uint32_t)SROCEDV_CONTEXT_FLAG_NO_SQ_POLL)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* alloc_context receives attr as its private data. */
	return verbs_open_device(device, attr);
}

/* The comp_mask bits each create knows: the kernel request's bits. A test
 * build (SROCEDV_TEST_FUTURE_MASK) claims one more, to show that the kernel
 * gets the mask and refuses what it does not know. */
#ifndef SROCEDV_TEST_FUTURE_MASK
#define SROCEDV_TEST_FUTURE_MASK 0ull
#endif

/* 0, or the errno of a create that cannot start: not sroce, NULL, unknown
 * attribute bits. */
static int srocedv_create_check(struct ibv_context *ibctx, const void *attr, uint64_t comp_mask,
				uint64_t known)
{
	if (!ibctx || !attr)
		return EINVAL;
	if (!sroce_is_sroce_context(ibctx) || (comp_mask & ~(known | SROCEDV_TEST_FUTURE_MASK)))
		return EOPNOTSUPP;
	return 0;
}

struct ibv_qp *srocedv_create_qp(struct ibv_context *ibctx, struct ibv_qp_init_attr_ex *qp_attr,
				 struct srocedv_qp_init_attr *sroce_attr)
{
	struct sroce_create_qp_req req = { .comp_mask = sroce_attr ? sroce_attr->comp_mask : 0 };
	int err = srocedv_create_check(ibctx, qp_attr, req.comp_mask, SROCE_CREATE_QP_REQ_MASK);

	if (err) {
		errno = err;
		return NULL;
	}
	return sroce_create_qp_ex_req(ibctx, qp_attr, &req);
}

struct ibv_cq_ex *srocedv_create_cq(struct ibv_context *ibctx, struct ibv_cq_init_attr_ex *cq_attr,
				    struct srocedv_cq_init_attr *sroce_attr)
{
	struct sroce_create_cq_req req = { .comp_mask = sroce_attr ? sroce_attr->comp_mask : 0 };
	int err = srocedv_create_check(ibctx, cq_attr, req.comp_mask, SROCE_CREATE_CQ_REQ_MASK);
	struct ibv_cq_ex *cq;

	if (err) {
		errno = err;
		return NULL;
	}
	cq = sroce_create_cq_ex_req(ibctx, cq_attr, &req);
	/* What ibv_create_cq_ex does after the provider's create_cq_ex. */
	if (cq)
		verbs_init_cq(ibv_cq_ex_to_cq(cq), ibctx, cq_attr->channel, cq_attr->cq_context);
	return cq;
}

struct ibv_srq *srocedv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_attr,
				   struct srocedv_srq_init_attr *sroce_attr)
{
	struct sroce_create_srq_req req = { .comp_mask = sroce_attr ? sroce_attr->comp_mask : 0 };
	int err = srocedv_create_check(pd ? pd->context : NULL, srq_attr, req.comp_mask,
				       SROCE_CREATE_SRQ_REQ_MASK);
	struct ibv_srq *srq;

	if (err) {
		errno = err;
		return NULL;
	}
	srq = sroce_create_srq_req(pd, srq_attr, &req);
	/* What ibv_create_srq does after the provider's create_srq. */
	if (srq) {
		srq->context = pd->context;
		srq->srq_context = srq_attr->srq_context;
		srq->pd = pd;
		srq->events_completed = 0;
		pthread_mutex_init(&srq->mutex, NULL);
		pthread_cond_init(&srq->cond, NULL);
	}
	return srq;
}

void srocedv_wr_flush(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, size_t len,
		      uint8_t type, uint8_t level)
{
	/* Another provider's QP has no batch to record the error in. */
	if (!qp || !sroce_is_sroce_context(qp->qp_base.context)) {
		errno = EOPNOTSUPP;
		return;
	}
	sroce_wr_flush(qp, rkey, remote_addr, len, type, level);
}

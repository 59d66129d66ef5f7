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

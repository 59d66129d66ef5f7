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

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * verbs.c - the control-path verbs of the provider: queries and protection
 * domains (memory regions: mr.c). Each is one uverbs command; the fast
 * paths arrive with queues.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "sroce.h"

static int sroce_query_device_ex(struct ibv_context *ibctx, const struct ibv_query_device_ex_input *input,
				 struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int err;

	err = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp, &resp_size);
	if (err)
		return err;
	/* The kernel's fw_ver is major.minor.sub in 16-bit fields. */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver), "%u.%u.%u",
		 (unsigned int)(fw >> 32) & 0xffff, (unsigned int)(fw >> 16) & 0xffff,
		 (unsigned int)fw & 0xffff);
	return 0;
}

static int sroce_query_port(struct ibv_context *ibctx, uint8_t port, struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *sroce_alloc_pd(struct ibv_context *ibctx)
{
	struct ibv_alloc_pd cmd;
	struct {
		struct ib_uverbs_alloc_pd_resp ibv;
		struct sroce_alloc_pd_resp drv;
	} resp = {};
	struct sroce_pd *pd = calloc(1, sizeof(*pd));
	int err;

	if (!pd)
		return NULL;
	err = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd, sizeof(cmd), &resp.ibv, sizeof(resp));
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	pd->pdn = resp.drv.pdn;
	return &pd->ibv_pd;
}

static int sroce_dealloc_pd(struct ibv_pd *ibpd)
{
	int err = ibv_cmd_dealloc_pd(ibpd);

	if (err)
		return err;
	free(sroce_container_of(ibpd, struct sroce_pd, ibv_pd));
	return 0;
}

const struct verbs_context_ops sroce_ctx_ops = {
	.alloc_pd = sroce_alloc_pd,
	.dealloc_pd = sroce_dealloc_pd,
	.dereg_mr = sroce_dereg_mr,
	.free_context = sroce_free_context,
	.query_device_ex = sroce_query_device_ex,
	.query_port = sroce_query_port,
	.reg_mr = sroce_reg_mr,
};

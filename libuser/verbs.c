// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * verbs.c - the control-path verbs of the provider: queries, protection
 * domains and XRC domains, and the table of every verb the provider implements (memory
 * regions are in mr.c, queues in cq.c, qp.c, srq.c, ah.c).
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

/* XRC domains: ib_core shares one between the processes that open the same
 * file (attr->fd, O_CREAT, O_EXCL), or makes a private one for fd -1. */
static struct ibv_xrcd *sroce_open_xrcd(struct ibv_context *ibctx, struct ibv_xrcd_init_attr *attr)
{
	struct ibv_open_xrcd cmd;
	struct ib_uverbs_open_xrcd_resp resp;
	struct verbs_xrcd *xrcd = calloc(1, sizeof(*xrcd));
	int err;

	if (!xrcd)
		return NULL;
	err = ibv_cmd_open_xrcd(ibctx, xrcd, sizeof(*xrcd), attr, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(xrcd);
		errno = err;
		return NULL;
	}
	return &xrcd->xrcd;
}

static int sroce_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = sroce_container_of(ibxrcd, struct verbs_xrcd, xrcd);
	int err = ibv_cmd_close_xrcd(xrcd);

	if (err)
		return err;
	free(xrcd);
	return 0;
}

const struct verbs_context_ops sroce_ctx_ops = {
	.alloc_mw = sroce_alloc_mw,
	.alloc_pd = sroce_alloc_pd,
	.bind_mw = sroce_bind_mw,
	.close_xrcd = sroce_close_xrcd,
	.create_ah = sroce_create_ah,
	.create_cq = sroce_create_cq,
	.create_cq_ex = sroce_create_cq_ex,
	.create_qp = sroce_create_qp,
	.create_qp_ex = sroce_create_qp_ex,
	.create_srq = sroce_create_srq,
	.create_srq_ex = sroce_create_srq_ex,
	.create_rwq_ind_table = sroce_create_rwq_ind_table,
	.create_wq = sroce_create_wq,
	.dealloc_mw = sroce_dealloc_mw,
	.dealloc_pd = sroce_dealloc_pd,
	.dereg_mr = sroce_dereg_mr,
	.destroy_ah = sroce_destroy_ah,
	.destroy_cq = sroce_destroy_cq,
	.destroy_qp = sroce_destroy_qp,
	.destroy_srq = sroce_destroy_srq,
	.destroy_rwq_ind_table = sroce_destroy_rwq_ind_table,
	.destroy_wq = sroce_destroy_wq,
	.free_context = sroce_free_context,
	.get_srq_num = sroce_get_srq_num,
	.modify_qp = sroce_modify_qp,
	.modify_cq = sroce_modify_cq,
	.modify_srq = sroce_modify_srq,
	.modify_wq = sroce_modify_wq,
	.open_qp = sroce_open_qp,
	.open_xrcd = sroce_open_xrcd,
	.poll_cq = sroce_poll_cq,
	.post_recv = sroce_post_recv,
	.post_send = sroce_post_send,
	.post_srq_recv = sroce_post_srq_recv,
	.query_device_ex = sroce_query_device_ex,
	.query_port = sroce_query_port,
	.reg_mr = sroce_reg_mr,
	.query_qp = sroce_query_qp,
	.query_rt_values = sroce_query_rt_values,
	.query_srq = sroce_query_srq,
	/* Arming is a command: the kernel owns the notification state. */
	.req_notify_cq = ibv_cmd_req_notify_cq,
	.resize_cq = sroce_resize_cq,
};

// SPDX-License-Identifier: GPL-2.0
/*
 * xrcd.c - XRC domains (IBTA annex A14) and the targets made in them.
 * ib_core keeps the inode table that shares one domain between processes
 * and counts its users (opens, XRC SRQs, XRC target QPs); dealloc_xrcd runs
 * when the last is gone. The core's domain is only what XRC SRQs and
 * targets compare.
 */
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"

static int sroce_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct sroce_xrcd *xrcd = to_sxrcd(ibxrcd);
	int err = sroce_check_empty_req(udata);

	if (err)
		return err;
	mutex_init(&xrcd->lock);
	INIT_LIST_HEAD(&xrcd->dev_node);
	return sroce_core_xrcd_create(to_sdev(ibxrcd->device)->core, &xrcd->core);
}

static int sroce_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct sroce_xrcd *xrcd = to_sxrcd(ibxrcd);

	/* Its kernel-owned receive QPs die with it (xrc_rcv.c). */
	sroce_xrc_rcv_unlist(xrcd);
	mutex_lock(&xrcd->lock);
	sroce_xrc_rcv_destroy_all(xrcd);
	mutex_unlock(&xrcd->lock);
	mutex_destroy(&xrcd->lock);
	sroce_core_xrcd_destroy(xrcd->core);
	return 0;
}

/*
 * An XRC target as uverbs makes it: for a process (it counts against the
 * user ceilings) but without udata, PD, CQs or rings; each request's
 * XRCETH picks the SRQ of its domain it uses. It takes work requests from
 * no one (post_send and post_recv refuse it: qp->user, no rings). The
 * kernel-owned receive QP (xrc_rcv.c) is one too, made with a PD of its
 * own that it does not use.
 */
int sroce_create_xrc_tgt(struct sroce_qp *qp, struct ib_qp_init_attr *init)
{
	struct sroce_core_qp_init qi = {
		.owner = &qp->ibqp,
		.qp_type = IB_QPT_XRC_TGT,
		.port = 1,
		.xrcd = to_sxrcd(init->xrcd)->core,
		.user = 1,
	};
	int err;

	qp->user = true;
	err = sroce_core_qp_create(to_sdev(qp->ibqp.device)->core, &qi, &qp->core);
	if (err)
		return err;
	qp->ibqp.qp_num = sroce_core_qp_number(qp->core);
	memset(&init->cap, 0, sizeof(init->cap)); /* no queues */
	return 0;
}

const struct ib_device_ops sroce_xrcd_ops = {
	.alloc_xrcd = sroce_alloc_xrcd,
	.dealloc_xrcd = sroce_dealloc_xrcd,

	INIT_RDMA_OBJ_SIZE(ib_xrcd, sroce_xrcd, ibxrcd),
};

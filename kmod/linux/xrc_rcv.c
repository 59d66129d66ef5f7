// SPDX-License-Identifier: GPL-2.0
/*
 * xrc_rcv.c - the seed's kernel-owned XRC receive QP (seed 001,
 * srocedv_alloc_xrc_rcv_qp, Documentation/xrc.md): a driver method on an
 * XRC domain that makes an XRC target through ib_core's kernel verbs, in a
 * PD of the domain's own, and takes it RESET -> INIT -> RTR. User space
 * gets only its number: no object, no query, no destroy. It lives until the
 * domain's last user is gone (dealloc_xrcd destroys it), whichever process
 * that is; its async events go to the kernel log.
 */
#define UVERBS_MODULE_NAME sroce_ib
#include <rdma/uverbs_ioctl.h>
#include <rdma/uverbs_named_ioctl.h>
#include <linux/seq_file.h>

#include "sroce.h"

static_assert(SROCE_XRC_RCV_QP_REQUIRED ==
	      (IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_AV | IB_QP_PATH_MTU |
	       IB_QP_RQ_PSN | IB_QP_MIN_RNR_TIMER | IB_QP_DEST_QPN));
static_assert(SROCE_XRC_RCV_QP_OPTIONAL == IB_QP_MAX_DEST_RD_ATOMIC);
static_assert(SROCE_METHOD_XRC_RCV_QP_ALLOC == 1u << UVERBS_ID_NS_SHIFT &&
	      SROCE_ATTR_XRC_RCV_QP_XRCD == 1u << UVERBS_ID_NS_SHIFT);

static void sroce_xrc_rcv_event(struct ib_event *ev, void *context)
{
	pr_warn_ratelimited("sroce: kernel-owned XRC receive QP 0x%x: %s\n", ev->element.qp->qp_num,
			    ib_event_msg(ev->event));
}

/*
 * ib_modify_qp trusts a kernel caller: before the driver sees anything it
 * indexes the device's port array with the port number and the port's GID
 * table with the source GID index (the debug kernel's KASAN caught port 2
 * reading past port_data). uverbs checks these for user space's own
 * modify_qp; here user space's values reach a kernel verb, so every field
 * is checked first, against the same limits the core applies.
 */
static int sroce_xrc_rcv_check(struct ib_device *dev, const struct sroce_xrc_rcv_qp_req *req)
{
	const u32 access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			   IB_ACCESS_REMOTE_ATOMIC;

	if (!rdma_is_port_valid(dev, req->port_num) || req->pkey_index >= SROCE_PKEY_TABLE_LEN ||
	    req->sgid_index >= SROCE_GID_TABLE_LEN || req->path_mtu < IB_MTU_256 || req->path_mtu > IB_MTU_4096 ||
	    req->min_rnr_timer > 31 || req->max_dest_rd_atomic > SROCE_MAX_QP_RD_ATOM ||
	    req->dest_qp_num > 0xffffff || req->flow_label > 0xfffff || (req->qp_access_flags & ~access))
		return -EINVAL;
	return 0;
}

/* The request as two modifies: INIT's attributes, then RTR's. */
static int sroce_xrc_rcv_modify(struct ib_qp *qp, const struct sroce_xrc_rcv_qp_req *req)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.qp_access_flags = req->qp_access_flags,
		.pkey_index = req->pkey_index,
		.port_num = req->port_num,
	};
	union ib_gid dgid;
	int err;

	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX | IB_QP_PORT);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = req->path_mtu;
	a.dest_qp_num = req->dest_qp_num;
	a.rq_psn = req->rq_psn;
	/* The seed's default: SENDs only. ib_core's table wants the bit. */
	a.max_dest_rd_atomic = req->attr_mask & IB_QP_MAX_DEST_RD_ATOMIC ? req->max_dest_rd_atomic : 0;
	a.min_rnr_timer = req->min_rnr_timer;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, req->port_num);
	memcpy(dgid.raw, req->dgid, sizeof(dgid.raw));
	rdma_ah_set_grh(&a.ah_attr, &dgid, req->flow_label, req->sgid_index, req->hop_limit,
			req->traffic_class);
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
					    IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
}

static int UVERBS_HANDLER(SROCE_METHOD_XRC_RCV_QP_ALLOC)(struct uverbs_attr_bundle *attrs)
{
	struct ib_xrcd *ibxrcd = uverbs_attr_get_obj(attrs, SROCE_ATTR_XRC_RCV_QP_XRCD);
	struct sroce_xrcd *xrcd = to_sxrcd(ibxrcd);
	struct sroce_dev *sdev = to_sdev(ibxrcd->device);
	struct ib_qp_init_attr init = {
		.event_handler = sroce_xrc_rcv_event,
		.qp_context = xrcd,
		.xrcd = ibxrcd,
		.qp_type = IB_QPT_XRC_TGT,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.create_flags = SROCE_QP_CREATE_KERNEL_RCV,
		.port_num = 1,
	};
	struct sroce_xrc_rcv_qp_req req;
	struct ib_qp *qp;
	u32 qpn;
	int err;

	err = uverbs_copy_from(&req, attrs, SROCE_ATTR_XRC_RCV_QP_REQ);
	if (err)
		return err;
	if (req.comp_mask || (req.attr_mask & SROCE_XRC_RCV_QP_REQUIRED) != SROCE_XRC_RCV_QP_REQUIRED ||
	    (req.attr_mask & ~(SROCE_XRC_RCV_QP_REQUIRED | SROCE_XRC_RCV_QP_OPTIONAL)))
		return -EINVAL;
	err = sroce_xrc_rcv_check(ibxrcd->device, &req);
	if (err)
		return err;
	mutex_lock(&xrcd->lock);
	err = -ENOSPC;
	if (xrcd->nrcv == ARRAY_SIZE(xrcd->rcv))
		goto out;
	if (!xrcd->kpd) {
		struct ib_pd *pd = ib_alloc_pd(ibxrcd->device, 0);

		if (IS_ERR(pd)) {
			err = PTR_ERR(pd);
			goto out;
		}
		xrcd->kpd = pd;
	}
	qp = ib_create_qp(xrcd->kpd, &init);
	if (IS_ERR(qp)) {
		err = PTR_ERR(qp);
		goto out;
	}
	err = sroce_xrc_rcv_modify(qp, &req);
	if (err) {
		/* A bad attribute leaves nothing behind. */
		ib_destroy_qp(qp);
		goto out;
	}
	xrcd->rcv[xrcd->nrcv++] = qp;
	qpn = qp->qp_num;
	err = 0;
out:
	mutex_unlock(&xrcd->lock);
	if (err)
		return err;
	/* After the domain's lock: debugfs takes the list's lock first. No
	 * dealloc_xrcd races this: the method holds the caller's handle. */
	mutex_lock(&sdev->xrc_rcv_lock);
	if (list_empty(&xrcd->dev_node))
		list_add_tail(&xrcd->dev_node, &sdev->xrc_rcv);
	mutex_unlock(&sdev->xrc_rcv_lock);
	return uverbs_copy_to(attrs, SROCE_ATTR_XRC_RCV_QP_QPN, &qpn, sizeof(qpn));
}

/* dealloc_xrcd, before it takes the domain's lock: debugfs lists it no more. */
void sroce_xrc_rcv_unlist(struct sroce_xrcd *xrcd)
{
	struct sroce_dev *sdev = to_sdev(xrcd->ibxrcd.device);

	mutex_lock(&sdev->xrc_rcv_lock);
	list_del_init(&xrcd->dev_node);
	mutex_unlock(&sdev->xrc_rcv_lock);
}

/* <debugfs>/sroce/<ibdev>/xrc_rcv_qps: one line per kernel-owned QP. */
int sroce_xrc_rcv_show(struct seq_file *m, struct sroce_dev *sdev)
{
	static const char *const states[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };
	struct sroce_core_qp_view v;
	struct sroce_xrcd *xrcd;
	unsigned int i;

	mutex_lock(&sdev->xrc_rcv_lock);
	list_for_each_entry(xrcd, &sdev->xrc_rcv, dev_node) {
		mutex_lock(&xrcd->lock);
		for (i = 0; i < xrcd->nrcv; i++) {
			sroce_core_qp_snapshot(to_sqp(xrcd->rcv[i])->core, &v);
			seq_printf(m, "qpn 0x%x state %s xrcd %llu dest_qpn 0x%x rq_psn %u\n", xrcd->rcv[i]->qp_num,
				   v.state < ARRAY_SIZE(states) ? states[v.state] : "?", v.xrcd, v.dest_qpn, v.rq_psn);
		}
		mutex_unlock(&xrcd->lock);
	}
	mutex_unlock(&sdev->xrc_rcv_lock);
	return 0;
}

/* dealloc_xrcd: the domain's last user is gone; so go its receive QPs, then
 * their PD. Process context, under uverbs' XRCD table mutex. */
void sroce_xrc_rcv_destroy_all(struct sroce_xrcd *xrcd)
{
	while (xrcd->nrcv)
		ib_destroy_qp(xrcd->rcv[--xrcd->nrcv]);
	if (xrcd->kpd)
		ib_dealloc_pd(xrcd->kpd);
	xrcd->kpd = NULL;
}

DECLARE_UVERBS_NAMED_METHOD(
	SROCE_METHOD_XRC_RCV_QP_ALLOC,
	UVERBS_ATTR_IDR(SROCE_ATTR_XRC_RCV_QP_XRCD, UVERBS_OBJECT_XRCD, UVERBS_ACCESS_READ, UA_MANDATORY),
	UVERBS_ATTR_PTR_IN(SROCE_ATTR_XRC_RCV_QP_REQ, UVERBS_ATTR_STRUCT(struct sroce_xrc_rcv_qp_req, dgid),
			   UA_MANDATORY),
	UVERBS_ATTR_PTR_OUT(SROCE_ATTR_XRC_RCV_QP_QPN, UVERBS_ATTR_TYPE(u32), UA_MANDATORY));

DECLARE_UVERBS_GLOBAL_METHODS(UVERBS_OBJECT_XRCD, &UVERBS_METHOD(SROCE_METHOD_XRC_RCV_QP_ALLOC));

const struct uapi_definition sroce_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE_NAMED(UVERBS_OBJECT_XRCD),
	UAPI_DEF_CHAIN(sroce_mw_uapi_defs),
	UAPI_DEF_CHAIN(sroce_cq_uapi_defs),
	{},
};

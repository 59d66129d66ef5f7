// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srocedv.c - the srocedv_* extension API (see <infiniband/srocedv.h>).
 */
#include <errno.h>
#include <string.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl_cmds.h>

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
	/* The layout caps are the ABI's limits (abi/sroce-abi.h). */
	if (attr->comp_mask & SROCEDV_DEVICE_ATTR_MASK_MW_LAYOUT_CAPS)
		attr->mw_layout_caps = (struct srocedv_mw_layout_caps){
			.general_caps = SROCEDV_MW_LAYOUT_SUPPORT_COMPOSITE | SROCEDV_MW_LAYOUT_SUPPORT_INTERLEAVED |
					SROCEDV_MW_LAYOUT_SUPPORT_INTERLEAVED_REPETITION |
					SROCEDV_MW_LAYOUT_SUPPORT_INTERLEAVED_NONUNIFORM_REPETITION,
			.max_list_size = SROCE_MW_LAYOUT_MAX_ENTRIES,
			.max_recursion_depth = SROCE_MW_LAYOUT_MAX_DEPTH,
			.max_stride_dimension = SROCE_MW_LAYOUT_MAX_DIMS,
			.max_descriptors = SROCE_MW_LAYOUT_MAX_DESCRIPTORS,
		};
	if (attr->comp_mask & SROCEDV_DEVICE_ATTR_MASK_MP_WR_CAPS)
		attr->mp_wr_caps = (struct srocedv_mp_wr_caps){
			.max_wr_buffer_sz = SROCE_MP_WR_MAX_BUFFER,
			.max_packet_align_sz = SROCE_MP_WR_MAX_ALIGN,
		};
	attr->comp_mask &= SROCEDV_DEVICE_ATTR_MASK_MW_LAYOUT_CAPS | SROCEDV_DEVICE_ATTR_MASK_MP_WR_CAPS;
	attr->abi_version = SROCE_PROVIDER_ABI_VERSION;
	attr->flags = (ctx->caps & SROCE_UCTX_CAP_SQ_POLL) ? SROCEDV_DEVICE_FLAG_SQ_POLL : 0;
	/* Every sroce kernel takes a UD QP's receives from its SRQ. */
	attr->flags |= SROCEDV_DEVICE_FLAG_UD_SRQ;
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

/* The multi-packet sizes of a request (srocedv_mp_wr_attr into the
 * kernel's u32 fields): EINVAL for a missing attribute or a buffer size the
 * kernel's cap refuses anyway. */
static int mp_wr_req(uint64_t comp_mask, const struct srocedv_mp_wr_attr *mp, uint32_t *buf, uint32_t *align)
{
	_Static_assert((uint64_t)SROCEDV_QP_INIT_ATTR_MP_WR == SROCE_CREATE_REQ_MP_WR &&
			       (uint64_t)SROCEDV_SRQ_INIT_ATTR_MP_WR == SROCE_CREATE_REQ_MP_WR &&
			       (uint64_t)SROCEDV_WQ_INIT_ATTR_MP_WR == SROCE_CREATE_REQ_MP_WR,
		       "the srocedv comp_mask bits are the kernel request's");
	if (!(comp_mask & SROCE_CREATE_REQ_MP_WR))
		return 0;
	if (!mp || mp->wr_buffer_sz > SROCE_MP_WR_MAX_BUFFER)
		return EINVAL;
	*buf = (uint32_t)mp->wr_buffer_sz;
	*align = mp->packet_align_sz;
	return 0;
}

/* The sizes in use, back into the caller's attribute. */
static void mp_wr_resp(struct srocedv_mp_wr_attr *mp, const struct sroce_uring *r)
{
	mp->wr_buffer_sz = r->mp_size;
	mp->packet_align_sz = r->mp_align;
}

struct ibv_qp *srocedv_create_qp(struct ibv_context *ibctx, struct ibv_qp_init_attr_ex *qp_attr,
				 struct srocedv_qp_init_attr *sroce_attr)
{
	struct sroce_create_qp_req req = { .comp_mask = sroce_attr ? sroce_attr->comp_mask : 0 };
	/* RX_HASH (from an RSS QP's rx_hash_conf) and RSS_CHILD
	 * (srocedv_create_rss_ud_qps) are the provider's own. */
	int err = srocedv_create_check(ibctx, qp_attr, req.comp_mask,
				       SROCE_CREATE_QP_REQ_MASK &
					       ~(SROCE_CREATE_QP_REQ_RX_HASH | SROCE_CREATE_QP_REQ_RSS_CHILD));
	struct ibv_qp *qp;

	if (!err && sroce_attr)
		err = mp_wr_req(req.comp_mask, sroce_attr->mp_wr, &req.mp_wr_buffer_sz, &req.mp_packet_align_sz);
	if (!err && (req.comp_mask & SROCEDV_QP_INIT_ATTR_RSS_DEFAULT_WQ)) {
		_Static_assert((uint64_t)SROCEDV_QP_INIT_ATTR_RSS_DEFAULT_WQ == SROCE_CREATE_QP_REQ_RSS_DEFAULT_WQ,
			       "the srocedv comp_mask bit is the kernel request's");
		struct ibv_wq *dw = sroce_attr->rss_default_wq;

		err = !dw || dw->context != ibctx ? EINVAL : 0;
		if (!err)
			req.rx_default_wqn = dw->wq_num;
	}
	if (err) {
		errno = err;
		return NULL;
	}
	qp = sroce_create_qp_ex_req(ibctx, qp_attr, &req);
	if (qp && (req.comp_mask & SROCE_CREATE_REQ_MP_WR))
		mp_wr_resp(sroce_attr->mp_wr, &to_sqp(qp)->rq);
	return qp;
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

/* What ibv_create_srq(_ex) does after the provider's create. */
static struct ibv_srq *srq_made(struct ibv_srq *srq, struct ibv_pd *pd, void *srq_context,
				const struct sroce_create_srq_req *req, struct srocedv_srq_init_attr *sroce_attr)
{
	if (srq) {
		srq->context = pd->context;
		srq->srq_context = srq_context;
		srq->pd = pd;
		srq->events_completed = 0;
		pthread_mutex_init(&srq->mutex, NULL);
		pthread_cond_init(&srq->cond, NULL);
		if (req->comp_mask & SROCE_CREATE_REQ_MP_WR)
			mp_wr_resp(sroce_attr->mp_wr, &to_ssrq(srq)->ring);
	}
	return srq;
}

/* The SRQ request of sroce_attr, or 0 with errno set. */
static int srq_req(struct ibv_context *ibctx, const void *attr, struct srocedv_srq_init_attr *sroce_attr,
		   struct sroce_create_srq_req *req)
{
	int err;

	*req = (struct sroce_create_srq_req){ .comp_mask = sroce_attr ? sroce_attr->comp_mask : 0 };
	err = srocedv_create_check(ibctx, attr, req->comp_mask, SROCE_CREATE_SRQ_REQ_MASK);
	if (!err && sroce_attr)
		err = mp_wr_req(req->comp_mask, sroce_attr->mp_wr, &req->mp_wr_buffer_sz, &req->mp_packet_align_sz);
	if (err)
		errno = err; /* a success leaves the caller's errno */
	return err;
}

struct ibv_srq *srocedv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_attr,
				   struct srocedv_srq_init_attr *sroce_attr)
{
	struct sroce_create_srq_req req;

	if (srq_req(pd ? pd->context : NULL, srq_attr, sroce_attr, &req))
		return NULL;
	return srq_made(sroce_create_srq_req(pd, srq_attr, &req), pd, srq_attr->srq_context, &req, sroce_attr);
}

struct ibv_srq *srocedv_create_srq_ex(struct ibv_context *ibctx, struct ibv_srq_init_attr_ex *srq_attr,
				      struct srocedv_srq_init_attr *sroce_attr)
{
	struct sroce_create_srq_req req;

	if (srq_req(ibctx, srq_attr, sroce_attr, &req))
		return NULL;
	/* The PD is checked by the create (EINVAL without one). */
	return srq_made(sroce_create_srq_ex_req(ibctx, srq_attr, &req), srq_attr->pd, srq_attr->srq_context, &req,
			sroce_attr);
}

struct ibv_wq *srocedv_create_wq(struct ibv_context *ibctx, struct ibv_wq_init_attr *wq_attr,
				 struct srocedv_wq_init_attr *sroce_attr)
{
	struct sroce_create_wq_req req = { .comp_mask = sroce_attr ? sroce_attr->comp_mask : 0 };
	int err = srocedv_create_check(ibctx, wq_attr, req.comp_mask, SROCE_CREATE_WQ_REQ_MASK);
	struct ibv_wq *wq;

	if (!err && sroce_attr)
		err = mp_wr_req(req.comp_mask, sroce_attr->mp_wr, &req.mp_wr_buffer_sz, &req.mp_packet_align_sz);
	if (err) {
		errno = err;
		return NULL;
	}
	wq = sroce_create_wq_req(ibctx, wq_attr, &req);
	if (!wq)
		return NULL;
	/* What ibv_create_wq does after the provider's create_wq. */
	wq->events_completed = 0;
	pthread_mutex_init(&wq->mutex, NULL);
	pthread_cond_init(&wq->cond, NULL);
	if (req.comp_mask & SROCE_CREATE_REQ_MP_WR)
		mp_wr_resp(sroce_attr->mp_wr, &to_swq(wq)->ring);
	return wq;
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

/* The seed's attributes that do not apply to a receive QP made RESET ->
 * INIT -> RTR by the kernel: accepted and ignored. */
#define SROCEDV_XRC_RCV_IGNORED                                                                   \
	(IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_QKEY | IBV_QP_SQ_PSN | IBV_QP_PATH_MIG_STATE | \
	 IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |       \
	 IBV_QP_EN_SQD_ASYNC_NOTIFY | IBV_QP_CAP)

_Static_assert(SROCE_XRC_RCV_QP_REQUIRED ==
		       (IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_AV | IBV_QP_PATH_MTU |
			IBV_QP_RQ_PSN | IBV_QP_MIN_RNR_TIMER | IBV_QP_DEST_QPN),
	       "the kernel's required bits are libibverbs'");
_Static_assert(SROCE_XRC_RCV_QP_OPTIONAL == IBV_QP_MAX_DEST_RD_ATOMIC, "and its optional one");
_Static_assert(SROCEDV_MAX_XRC_RCV_QPS == 64, "the kernel's SROCE_MAX_XRC_RCV_QPS");

/* The driver method on the domain (abi/sroce-abi.h), called with a plain
 * ioctl: the domain's handle, the request in, the QP number out. */
static int sroce_xrc_rcv_ioctl(struct ibv_context *ctx, uint32_t xrcd_handle,
			       const struct sroce_xrc_rcv_qp_req *req, uint32_t *qpn)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attrs[3];
	} cmd = {
		.hdr = { .length = sizeof(cmd), .object_id = UVERBS_OBJECT_XRCD,
			 .method_id = SROCE_METHOD_XRC_RCV_QP_ALLOC, .num_attrs = 3 },
		.attrs = {
			{ .attr_id = SROCE_ATTR_XRC_RCV_QP_XRCD, .flags = UVERBS_ATTR_F_MANDATORY,
			  .data = xrcd_handle },
			{ .attr_id = SROCE_ATTR_XRC_RCV_QP_REQ, .len = sizeof(*req),
			  .flags = UVERBS_ATTR_F_MANDATORY, .data = (uintptr_t)req },
			{ .attr_id = SROCE_ATTR_XRC_RCV_QP_QPN, .len = sizeof(*qpn),
			  .flags = UVERBS_ATTR_F_MANDATORY, .data = (uintptr_t)qpn },
		},
	};

	return -sroce_method_ioctl(ctx, &cmd);
}

int srocedv_alloc_xrc_rcv_qp(struct ibv_pd *pd, struct ibv_xrcd *xrcd, struct ibv_qp_attr *attr,
			     int attr_mask, uint32_t *xrc_rcv_qpn)
{
	struct verbs_xrcd *vx;
	struct sroce_xrc_rcv_qp_req req = { 0 };
	unsigned int mask = (unsigned int)attr_mask & ~(unsigned int)SROCEDV_XRC_RCV_IGNORED;

	if (!pd || !xrcd || !attr || !xrc_rcv_qpn || pd->context != xrcd->context)
		return -EINVAL;
	if (!sroce_is_sroce_context(pd->context))
		return -EOPNOTSUPP;
	vx = sroce_container_of(xrcd, struct verbs_xrcd, xrcd);
	if ((mask & SROCE_XRC_RCV_QP_REQUIRED) != SROCE_XRC_RCV_QP_REQUIRED ||
	    (mask & ~(unsigned int)(SROCE_XRC_RCV_QP_REQUIRED | SROCE_XRC_RCV_QP_OPTIONAL)) ||
	    !attr->ah_attr.is_global || !(vx->comp_mask & VERBS_XRCD_HANDLE))
		return -EINVAL;
	req.attr_mask = mask;
	req.qp_access_flags = attr->qp_access_flags;
	req.pkey_index = attr->pkey_index;
	req.port_num = attr->port_num;
	req.path_mtu = (uint8_t)attr->path_mtu;
	req.dest_qp_num = attr->dest_qp_num;
	req.rq_psn = attr->rq_psn;
	req.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	req.min_rnr_timer = attr->min_rnr_timer;
	req.sgid_index = attr->ah_attr.grh.sgid_index;
	req.hop_limit = attr->ah_attr.grh.hop_limit;
	req.traffic_class = attr->ah_attr.grh.traffic_class;
	req.flow_label = attr->ah_attr.grh.flow_label;
	memcpy(req.dgid, attr->ah_attr.grh.dgid.raw, sizeof(req.dgid));
	return sroce_xrc_rcv_ioctl(pd->context, vx->handle, &req, xrc_rcv_qpn);
}

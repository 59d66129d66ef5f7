// SPDX-License-Identifier: GPL-2.0
/*
 * srq.c - shared receive queues: creation with a mapped or kernel ring, the
 * limit event, queries and kernel posts. XRC SRQs (user space's only: no
 * kernel consumer uses XRC) add their domain and CQ, and publish their
 * number for ibv_get_srq_num.
 */
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"

static int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
			    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_create_srq_resp resp = {};
	struct sroce_create_srq_req req;
	struct sroce_core_srq_init si = {};
	int err;

	if (init->srq_type != IB_SRQT_BASIC && (init->srq_type != IB_SRQT_XRC || !udata))
		return -EOPNOTSUPP;
	err = sroce_create_udata(udata, &req, sizeof(req), SROCE_CREATE_SRQ_REQ_MASK,
				 offsetof(struct sroce_create_srq_resp, mp_wr_buffer_sz)) ?:
	      sroce_mp_wr_req(udata, req.comp_mask, &req.mp_wr_buffer_sz, &req.mp_packet_align_sz, true, sizeof(resp));
	if (err)
		return err;
	/* max_wr and max_sge are the core's to check (the ring's size, then
	 * sroce_core_srq_create). */
	srq->user = !!udata;
	si.stride = sroce_core_wqe_stride(init->attr.max_sge, 0);
	err = sroce_ring_alloc(&srq->ring, max(init->attr.max_wr, 1u), SROCE_MAX_SRQ_WR, si.stride,
			       srq->user);
	if (err)
		return err;
	si.owner = ibsrq;
	si.pd = to_spd(ibsrq->pd)->core;
	if (init->srq_type == IB_SRQT_XRC) {
		/* ib_core holds both for the SRQ's life (usecnt). */
		si.xrcd = to_sxrcd(init->ext.xrc.xrcd)->core;
		si.cq = to_scq(init->ext.cq)->core;
	}
	si.ring = srq->ring.vaddr;
	si.log_size = srq->ring.log_size;
	si.max_sge = init->attr.max_sge;
	si.srq_limit = init->attr.srq_limit;
	si.user = srq->user;
	si.mp_wr_buffer_sz = req.mp_wr_buffer_sz;
	si.mp_packet_align_sz = req.mp_packet_align_sz;
	err = sroce_core_srq_create(sdev->core, &si, &srq->core);
	if (err)
		goto err_ring;
	if (init->srq_type == IB_SRQT_XRC)
		ibsrq->ext.xrc.srq_num = sroce_core_srq_number(srq->core);
	if (udata) {
		err = sroce_ring_map(&srq->ring, udata, &resp.ring);
		if (err)
			goto err_core;
		resp.srqn = sroce_core_srq_number(srq->core);
		resp.mp_wr_buffer_sz = req.mp_wr_buffer_sz;
		resp.mp_packet_align_sz = req.mp_packet_align_sz;
		err = sroce_copy_resp(udata, &resp, sizeof(resp));
		if (err)
			goto err_core;
	}
	/* What the queue really holds goes back to the caller. */
	sroce_core_srq_query(srq->core, &init->attr.max_wr, &init->attr.max_sge,
			     &init->attr.srq_limit);
	return 0;

err_core:
	sroce_core_srq_destroy(srq->core);
err_ring:
	sroce_ring_free(&srq->ring);
	return err;
}

static int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	unsigned int max_wr, max_sge, limit;
	int err;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	err = sroce_check_empty_req(udata);
	if (err)
		return err;
	sroce_core_srq_query(srq->core, &max_wr, &max_sge, &limit);
	/* Resizing is not supported (no IB_DEVICE_SRQ_RESIZE); asking for no
	 * more than the SRQ already holds changes nothing. */
	if ((mask & IB_SRQ_MAX_WR) && attr->max_wr > max_wr)
		return -EOPNOTSUPP;
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > max_wr)
			return -EINVAL;
		return sroce_core_srq_set_limit(srq->core, attr->srq_limit);
	}
	return 0;
}

static int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	sroce_core_srq_query(to_ssrq(ibsrq)->core, &attr->max_wr, &attr->max_sge,
			     &attr->srq_limit);
	return 0;
}

static int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	/* ib_core refuses while a QP uses the SRQ (usecnt). */
	sroce_core_srq_destroy(srq->core);
	/* No limit event for ibsrq can still be in a batch being flushed. */
	synchronize_rcu();
	sroce_ring_free(&srq->ring);
	return 0;
}

static int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			       const struct ib_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct sroce_env_batch b;
	int err = 0;

	/* A user SRQ's producer index belongs to the provider. */
	if (srq->user) {
		*bad_wr = wr;
		return -EINVAL;
	}
	sroce_batch_init(&b);
	for (; wr; wr = wr->next) {
		struct sroce_wqe wqe;

		err = sroce_recv_wqe(wr, &wqe);
		if (!err)
			err = sroce_core_srq_post_recv(srq->core, &wqe, sroce_sges(wr->sg_list), &b);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	sroce_batch_flush(to_sdev(ibsrq->device), &b);
	return err;
}

const struct ib_device_ops sroce_srq_ops = {
	.create_srq = sroce_create_srq,
	.destroy_srq = sroce_destroy_srq,
	.modify_srq = sroce_modify_srq,
	.post_srq_recv = sroce_post_srq_recv,
	.query_srq = sroce_query_srq,

	INIT_RDMA_OBJ_SIZE(ib_srq, sroce_srq, ibsrq),
};

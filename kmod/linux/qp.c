// SPDX-License-Identifier: GPL-2.0
/*
 * qp.c - queue pairs (RC, UC, UD and the GSI QP1 of ib_mad): creation with
 * their rings, the ib_qp_attr <-> core attribute conversion, and posting.
 * User QPs post into their mapped rings and only ring the doorbell here;
 * kernel consumers' work requests are converted to WQEs.
 */
#include <linux/string.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"
#include "wq.h"

/* What ib_core may ask for that the core has no notion of. The caps
 * (max_*_wr, max_*_sge, max_inline_data) are the core's to check, against
 * param.h: the rings are sized by sroce_core_ring_size, the strides clamped
 * by sroce_core_wqe_stride, and sroce_core_qp_create refuses the rest. */
static int sroce_check_qp_init(const struct ib_qp *ibqp, const struct ib_qp_init_attr *init,
			       const struct ib_udata *udata)
{
	/* The kernel-owned XRC receive QP (xrc_rcv.c): a target with a PD. */
	bool kernel_rcv = init->create_flags == SROCE_QP_CREATE_KERNEL_RCV &&
			  init->qp_type == IB_QPT_XRC_TGT && !udata;

	/* An RSS QP (wq.c): user space's UD; it may have no send side. */
	if ((init->create_flags && !kernel_rcv) || (init->rwq_ind_tbl && (!udata || init->qp_type != IB_QPT_UD)))
		return -EOPNOTSUPP;
	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		/* QP1 belongs to ib_mad, on the one port. */
		if (udata || init->port_num != 1)
			return -EINVAL;
		break;
	case IB_QPT_XRC_INI:
		/* ib_send_wr has no field for the target SRQ: user space's. */
		if (!udata)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_XRC_TGT:
		/* uverbs makes a target with neither udata nor PD, only its
		 * domain (ib_create_qp_user); a kernel caller brings a PD. */
		if (udata || (ibqp->pd && !kernel_rcv))
			return -EOPNOTSUPP;
		return init->xrcd ? 0 : -EINVAL;
	default:
		return -EOPNOTSUPP;
	}
	if (init->sq_sig_type != IB_SIGNAL_ALL_WR && init->sq_sig_type != IB_SIGNAL_REQ_WR)
		return -EINVAL;
	if (!init->rwq_ind_tbl && (!init->send_cq || (init->qp_type != IB_QPT_XRC_INI && !init->recv_cq)))
		return -EINVAL;
	if (init->srq && init->srq->srq_type != IB_SRQT_BASIC)
		return -EINVAL;
	return 0;
}

/* Fills the caps the core really gave the QP (rings round up). */
static void sroce_qp_caps(struct sroce_qp *qp, struct ib_qp_cap *cap)
{
	struct sroce_core_qp_attr ca = {};

	sroce_core_qp_query(qp->core, &ca);
	cap->max_send_wr = ca.max_send_wr;
	cap->max_recv_wr = ca.max_recv_wr;
	cap->max_send_sge = ca.max_send_sge;
	cap->max_recv_sge = ca.max_recv_sge;
	cap->max_inline_data = ca.max_inline_data;
}

static int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	const struct ib_qp_cap *cap = &init->cap;
	struct sroce_create_qp_resp resp = {};
	struct sroce_create_qp_req req;
	struct sroce_core_qp_init qi = {};
	struct sroce_rss_req rr;
	unsigned int stride;

	bool tgt = init->qp_type == IB_QPT_XRC_TGT;
	/* Its own RQ: not with an SRQ, nor for either XRC half or RSS. */
	bool rq = !init->srq && init->qp_type != IB_QPT_XRC_INI && !tgt && !init->rwq_ind_tbl;
	bool sq = !!init->send_cq; /* an RSS QP may have none */
	int err;

	err = sroce_check_qp_init(ibqp, init, udata);
	if (err)
		return err;
	/* An older provider's response ends before the multi-packet sizes. */
	err = sroce_create_udata(udata, &req, sizeof(req), SROCE_CREATE_QP_REQ_MASK,
				 offsetof(struct sroce_create_qp_resp, mp_wr_buffer_sz)) ?:
	      sroce_mp_wr_req(udata, req.comp_mask, &req.mp_wr_buffer_sz, &req.mp_packet_align_sz, rq, sizeof(resp));
	if (!err && (init->rwq_ind_tbl || (req.comp_mask & ~SROCE_CREATE_REQ_MP_WR)))
		err = sroce_rss_init(init, &req, &rr, &qi);
	if (err)
		return err;
	rq = rq && !qi.rss_child; /* a child receives into its WQ */
	if (tgt)
		return sroce_create_xrc_tgt(qp, init);

	qp->user = !!udata;
	qp->sq_sig_type = init->sq_sig_type;
	/* A QP may be created without room on one side (max_*_wr 0); the
	 * ring still has one entry so that both sides look the same. */
	stride = sroce_core_wqe_stride(cap->max_send_sge, cap->max_inline_data);
	err = sq ? sroce_ring_alloc(&qp->sq, max(cap->max_send_wr, 1u), SROCE_MAX_QP_WR, stride, qp->user) : 0;
	if (err)
		return err;
	if (rq) {
		stride = sroce_core_wqe_stride(cap->max_recv_sge, 0);
		err = sroce_ring_alloc(&qp->rq, max(cap->max_recv_wr, 1u), SROCE_MAX_QP_WR, stride, qp->user);
		if (err)
			goto err_rings;
	}

	qi.owner = ibqp;
	qi.qp_type = init->qp_type;
	qi.port = 1;
	qi.pd = to_spd(ibqp->pd)->core;
	qi.send_cq = sq ? to_scq(init->send_cq)->core : NULL;
	qi.recv_cq = init->recv_cq ? to_scq(init->recv_cq)->core : NULL;
	qi.srq = init->srq ? to_ssrq(init->srq)->core : NULL;
	qi.max_send_sge = sq ? cap->max_send_sge : 0;
	qi.max_recv_sge = rq ? cap->max_recv_sge : 0;
	qi.max_inline_data = sq ? cap->max_inline_data : 0;
	qi.sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qi.user = qp->user;
	if (udata)
		qi.uctx = rdma_udata_to_drv_context(udata, struct sroce_ucontext, ibuc)->core;
	qi.sq_ring = qp->sq.vaddr;
	qi.sq_log_size = qp->sq.log_size;
	qi.sq_stride = qp->sq.stride;
	qi.rq_ring = qp->rq.vaddr;
	qi.rq_log_size = qp->rq.log_size;
	qi.rq_stride = qp->rq.stride;
	qi.mp_wr_buffer_sz = req.mp_wr_buffer_sz;
	qi.mp_packet_align_sz = req.mp_packet_align_sz;
	err = sroce_core_qp_create(sdev->core, &qi, &qp->core);
	if (err)
		goto err_rings;
	/* ib_core takes the QP number from the driver (1 for GSI). */
	ibqp->qp_num = sroce_core_qp_number(qp->core);

	if (udata) {
		err = sq ? sroce_ring_map(&qp->sq, udata, &resp.sq) : 0;
		if (!err && rq)
			err = sroce_ring_map(&qp->rq, udata, &resp.rq);
		if (err)
			goto err_core;
		resp.qpn = ibqp->qp_num;
		resp.max_inline_data = cap->max_inline_data;
		resp.mp_wr_buffer_sz = req.mp_wr_buffer_sz;
		resp.mp_packet_align_sz = req.mp_packet_align_sz;
		err = sroce_copy_resp(udata, &resp, sizeof(resp));
		if (err)
			goto err_core;
	}
	sroce_qp_caps(qp, &init->cap);
	return 0;

err_core:
	/* Never published: no batch can hold it as an event owner. */
	sroce_core_qp_destroy(qp->core);
err_rings:
	sroce_ring_free(&qp->rq);
	sroce_ring_free(&qp->sq);
	return err;
}

static int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	sroce_core_qp_destroy(qp->core);
	/* No event for ibqp can still be in a batch being flushed (sroce.h). */
	sroce_qp_wait_events(qp);
	sroce_ring_free(&qp->rq);
	sroce_ring_free(&qp->sq);
	return 0;
}

/* ib_qp_attr -> the attributes the core keeps. IB_QP_AV resolves the
 * route here; its reference goes to the core with the call. */
static int sroce_qp_attr_to_core(struct sroce_dev *sdev, const struct ib_qp_attr *attr, int mask,
				 struct sroce_core_qp_attr *ca)
{
	ca->qp_state = attr->qp_state;
	ca->cur_qp_state = attr->cur_qp_state;
	ca->path_mtu = attr->path_mtu;
	ca->qkey = attr->qkey;
	ca->rq_psn = attr->rq_psn;
	ca->sq_psn = attr->sq_psn;
	ca->dest_qp_num = attr->dest_qp_num;
	ca->qp_access_flags = attr->qp_access_flags;
	ca->pkey_index = attr->pkey_index;
	ca->en_sqd_async_notify = attr->en_sqd_async_notify;
	ca->max_rd_atomic = attr->max_rd_atomic;
	ca->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	ca->min_rnr_timer = attr->min_rnr_timer;
	ca->timeout = attr->timeout;
	ca->retry_cnt = attr->retry_cnt;
	ca->rnr_retry = attr->rnr_retry;
	ca->port_num = attr->port_num;
	ca->max_send_wr = attr->cap.max_send_wr;
	ca->max_recv_wr = attr->cap.max_recv_wr;
	ca->max_send_sge = attr->cap.max_send_sge;
	ca->max_recv_sge = attr->cap.max_recv_sge;
	ca->max_inline_data = attr->cap.max_inline_data;
	if (mask & IB_QP_AV) {
		struct sroce_env_path *path;
		int err = sroce_check_roce_ah_attr(&attr->ah_attr);

		if (err)
			return err;
		path = sroce_path_create(sdev, &attr->ah_attr, &ca->path_info, true);
		if (IS_ERR(path))
			return PTR_ERR(path);
		ca->path = path;
		ca->sgid_index = rdma_ah_read_grh(&attr->ah_attr)->sgid_index;
	}
	return 0;
}

static int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
			   struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_core_qp_attr ca = {};
	struct sroce_env_batch b;
	int err;

	/* No automatic path migration: there is no alternate path to keep,
	 * and the only state it can be in is "migrated". */
	if (mask & ~IB_QP_ATTR_STANDARD_BITS || (mask & IB_QP_ALT_PATH))
		return -EOPNOTSUPP;
	if (mask & IB_QP_PATH_MIG_STATE) {
		if (attr->path_mig_state != IB_MIG_MIGRATED)
			return -EOPNOTSUPP;
		mask &= ~IB_QP_PATH_MIG_STATE;
	}
	err = sroce_check_empty_req(udata) ?: sroce_qp_attr_to_core(sdev, attr, mask, &ca);
	if (err)
		return err;
	/* Receive steering (vector.c): may sleep, so outside the batch's RCU. */
	sroce_qp_owner_seen(to_sqp(ibqp));
	sroce_batch_init(&b);
	err = sroce_core_qp_modify(to_sqp(ibqp)->core, &ca, mask, &b); /* checks as ib_modify_qp_is_ok */
	sroce_batch_flush(sdev, &b);
	return err;
}

static int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
			  struct ib_qp_init_attr *init)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_core_qp_attr ca = {};

	sroce_core_qp_query(qp->core, &ca);
	/* uverbs hands in unzeroed memory. */
	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	attr->qp_state = ca.qp_state;
	attr->cur_qp_state = ca.cur_qp_state;
	attr->path_mtu = ca.path_mtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qkey = ca.qkey;
	attr->rq_psn = ca.rq_psn;
	attr->sq_psn = ca.sq_psn;
	attr->dest_qp_num = ca.dest_qp_num;
	attr->qp_access_flags = ca.qp_access_flags;
	attr->pkey_index = ca.pkey_index;
	attr->en_sqd_async_notify = ca.en_sqd_async_notify;
	attr->sq_draining = ca.sq_draining;
	attr->max_rd_atomic = ca.max_rd_atomic;
	attr->max_dest_rd_atomic = ca.max_dest_rd_atomic;
	attr->min_rnr_timer = ca.min_rnr_timer;
	attr->timeout = ca.timeout;
	attr->retry_cnt = ca.retry_cnt;
	attr->rnr_retry = ca.rnr_retry;
	attr->port_num = ca.port_num;
	attr->cap.max_send_wr = ca.max_send_wr;
	attr->cap.max_recv_wr = ca.max_recv_wr;
	attr->cap.max_send_sge = ca.max_send_sge;
	attr->cap.max_recv_sge = ca.max_recv_sge;
	attr->cap.max_inline_data = ca.max_inline_data;
	/* The destination of a connected QP, once it has one. */
	if (memchr_inv(ca.path_info.dst, 0, sizeof(ca.path_info.dst))) {
		union ib_gid dgid;

		memcpy(dgid.raw, ca.path_info.dst, sizeof(dgid.raw));
		attr->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
		rdma_ah_set_port_num(&attr->ah_attr, 1);
		rdma_ah_set_grh(&attr->ah_attr, &dgid, ca.path_info.flow_label, ca.sgid_index,
				ca.path_info.hop_limit, ca.path_info.tclass);
	}

	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_type;
	init->qp_type = ibqp->qp_type;
	init->port_num = 1;
	return 0;
}

/* ---- kernel consumers' posts --------------------------------------------- */

static_assert((unsigned int)SROCE_WQE_FENCE == (unsigned int)IB_SEND_FENCE &&
		      (unsigned int)SROCE_WQE_SIGNALED == (unsigned int)IB_SEND_SIGNALED &&
		      (unsigned int)SROCE_WQE_SOLICITED == (unsigned int)IB_SEND_SOLICITED &&
		      (unsigned int)SROCE_WQE_INLINE == (unsigned int)IB_SEND_INLINE &&
		      (unsigned int)SROCE_WQE_IP_CSUM == (unsigned int)IB_SEND_IP_CSUM,
	      "WQE flags are the IB_SEND_ values");

static u16 sroce_wqe_flags(int send_flags)
{
	return send_flags & SROCE_WQE_FLAGS_MASK;
}

/* The opcode-specific part of a send WQE (the core checks the QP type's). */
static void sroce_send_wr_fields(const struct ib_qp *ibqp, const struct ib_send_wr *wr,
				 struct sroce_wqe *wqe)
{
	if (ibqp->qp_type == IB_QPT_UD || ibqp->qp_type == IB_QPT_GSI) {
		const struct ib_ud_wr *ud = ud_wr(wr);

		/* Only SENDs are ib_ud_wrs. ib_drain_sq posts an RDMA_WRITE in
		 * an on-stack ib_rdma_wr, shorter than an ib_ud_wr, to the QP in
		 * ERR: it is flushed and needs no UD fields (handle 0 names no
		 * AH); in any other state the core refuses the opcode. */
		if (wr->opcode != IB_WR_SEND && wr->opcode != IB_WR_SEND_WITH_IMM)
			return;
		wqe->ud.ah_handle = ud->ah ? sroce_core_ah_handle(to_sah(ud->ah)->core) : 0;
		wqe->ud.remote_qpn = ud->remote_qpn;
		wqe->ud.remote_qkey = ud->remote_qkey;
		if (wr->opcode == IB_WR_SEND_WITH_IMM)
			wqe->imm_or_inv = (__force u32)wr->ex.imm_data;
		return;
	}
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE_WITH_IMM:
		wqe->imm_or_inv = (__force u32)wr->ex.imm_data;
		fallthrough;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_READ:
		wqe->rdma.remote_addr = rdma_wr(wr)->remote_addr;
		wqe->rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		wqe->rdma.remote_addr = atomic_wr(wr)->remote_addr;
		wqe->rdma.rkey = atomic_wr(wr)->rkey;
		wqe->rdma.compare_add = atomic_wr(wr)->compare_add;
		wqe->rdma.swap = atomic_wr(wr)->swap;
		break;
	case IB_WR_SEND_WITH_IMM:
		wqe->imm_or_inv = (__force u32)wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		wqe->imm_or_inv = wr->ex.invalidate_rkey;
		break;
	case IB_WR_REG_MR: {
		const struct ib_reg_wr *reg = reg_wr(wr);

		wqe->reg.addr = reg->mr->iova;
		wqe->reg.length = reg->mr->length;
		wqe->reg.mr_lkey = reg->mr->lkey;
		wqe->reg.new_key = reg->key;
		wqe->reg.access = reg->access;
		break;
	}
	default:
		break;
	}
}

/* Gathers inline data from the SGEs (kernel virtual addresses). */
static int sroce_gather_inline(const struct ib_send_wr *wr, u8 *buf, unsigned int *len)
{
	unsigned int total = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sge = &wr->sg_list[i];

		if (sge->length > SROCE_MAX_INLINE_DATA - total)
			return -EINVAL;
		memcpy(buf + total, (void *)(uintptr_t)sge->addr, sge->length);
		total += sge->length;
	}
	*len = total;
	return 0;
}

static int sroce_post_one_send(struct sroce_qp *qp, const struct ib_send_wr *wr)
{
	u8 data[SROCE_MAX_INLINE_DATA];
	unsigned int inline_len = 0;
	struct sroce_wqe wqe = {
		.wr_id = wr->wr_id,
		.opcode = wr->opcode,
		.flags = sroce_wqe_flags(wr->send_flags),
	};
	int err;

	if (wr->opcode > U8_MAX || wr->num_sge < 0 || wr->num_sge > U8_MAX)
		return -EINVAL;
	/* ATOMIC WRITE and FLUSH (named from 6.2 on) are user space's: no
	 * kernel user posts them, and ib_send_wr has no field for ATOMIC
	 * WRITE's 8 bytes or FLUSH's type and level. */
	if (wr->opcode == SROCE_WQE_ATOMIC_WRITE || wr->opcode == SROCE_WQE_FLUSH)
		return -EOPNOTSUPP;
	sroce_send_wr_fields(&qp->ibqp, wr, &wqe);
	if (wr->send_flags & IB_SEND_INLINE) {
		err = sroce_gather_inline(wr, data, &inline_len);
		if (err)
			return err;
		wqe.inline_len = inline_len;
		return sroce_core_qp_post_send(qp->core, &wqe, NULL, data, inline_len);
	}
	wqe.num_sge = wr->num_sge;
	return sroce_core_qp_post_send(qp->core, &wqe, sroce_sges(wr->sg_list), NULL, 0);
}

static int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			   const struct ib_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int err = 0;

	if (qp->user) {
		struct sroce_env_batch b;

		/* The provider posts through the mapped SQ and rings with an
		 * empty list; it never sends work requests through here. */
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		sroce_batch_init(&b);
		sroce_core_qp_doorbell(qp->core, &b);
		sroce_batch_flush(to_sdev(ibqp->device), &b);
		return 0;
	}
	/* May run in atomic context: the core queues, its work sends. */
	for (; wr; wr = wr->next) {
		err = sroce_post_one_send(qp, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	return err;
}

static int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int err = 0;

	/* A user RQ's producer index belongs to the provider; a QP with an
	 * SRQ has no RQ. */
	if (qp->user || ibqp->srq) {
		*bad_wr = wr;
		return -EINVAL;
	}
	for (; wr; wr = wr->next) {
		struct sroce_wqe wqe;

		err = sroce_recv_wqe(wr, &wqe);
		if (!err)
			err = sroce_core_qp_post_recv(qp->core, &wqe, sroce_sges(wr->sg_list));
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	return err;
}

const struct ib_device_ops sroce_qp_ops = {
	.create_qp = sroce_create_qp,
	.destroy_qp = sroce_destroy_qp,
	.modify_qp = sroce_modify_qp,
	.post_recv = sroce_post_recv,
	.post_send = sroce_post_send,
	.query_qp = sroce_query_qp,

	INIT_RDMA_OBJ_SIZE(ib_qp, sroce_qp, ibqp),
};

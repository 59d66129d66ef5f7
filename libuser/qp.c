// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qp.c - queue pairs. Control is uverbs commands; post_send writes WQEs into
 * the mapped SQ, publishes them and rings the doorbell only when the kernel
 * asks for it (NEED_WAKEUP: its SQ poller sleeps, or the context is in
 * doorbell mode); post_recv writes the mapped RQ and never enters the
 * kernel. XRC: an initiator (XRC_SEND) has only the SQ and names the
 * target SRQ in each WQE; a target (XRC_RECV, made or opened) has no rings
 * and takes no work requests. srocedv_modify_qp_rx_cpu: receive steering.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "infiniband/srocedv.h"
#include "sroce.h"

/* SGEs, or inline bytes, a WQE of `stride` bytes has room for. */
static uint32_t sroce_stride_sges(uint32_t stride)
{
	return (stride - sizeof(struct sroce_wqe)) / sizeof(struct sroce_sge);
}

static uint32_t sroce_min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* A provider QP before its command: zeroed, its ring locks ready. */
static struct sroce_qp *sroce_qp_alloc(void)
{
	struct sroce_qp *qp = calloc(1, sizeof(*qp));

	if (qp) {
		sroce_spin_init(&qp->sq.lock);
		sroce_spin_init(&qp->rq.lock);
	}
	return qp;
}

/* Frees what sroce_qp_alloc made (rings unmapped). */
static void sroce_qp_free(struct sroce_qp *qp)
{
	free(qp);
}

/* Creates the QP the kernel side and maps its rings. attr->comp_mask holds
 * at most PD, XRCD and SEND_OPS_FLAGS here; attr->cap returns what was
 * granted. req, if any, goes to the kernel as the request's driver data. */
static struct ibv_qp *sroce_create_qp_common(struct ibv_context *ctx,
					     struct ibv_qp_init_attr_ex *attr,
					     const struct sroce_create_qp_req *req)
{
	struct {
		struct ibv_create_qp ibv;
		struct sroce_create_qp_req drv;
	} cmd = { .drv = req ? *req : (struct sroce_create_qp_req){ 0 } };
	struct {
		struct ib_uverbs_create_qp_resp ibv;
		struct sroce_create_qp_resp drv;
	} resp = {};
	/* An RSS QP: uverbs' extended command carries the table. */
	struct {
		struct ibv_create_qp_ex ibv;
		struct sroce_create_qp_req drv;
	} xcmd = { .drv = cmd.drv };
	struct {
		struct ib_uverbs_ex_create_qp_resp ibv;
		struct sroce_create_qp_resp drv;
	} xresp = {};
	bool rss = attr->comp_mask & IBV_QP_INIT_ATTR_IND_TABLE;
	const struct sroce_create_qp_resp *drv = rss ? &xresp.drv : &resp.drv;
	struct sroce_qp *qp = sroce_qp_alloc();
	int err;

	if (!qp)
		return NULL;
	/* The receive CQ of a multi-packet queue (the QP's own, or its
	 * SRQ's) reads the offsets and flags: SROCEDV_WC_EX_WITH_MP_WR. */
	if (((req && (req->comp_mask & SROCE_CREATE_REQ_MP_WR)) || (attr->srq && to_ssrq(attr->srq)->ring.mp_size)) &&
	    !sroce_cq_reads_mp(attr->recv_cq)) {
		err = EINVAL;
		goto err_free;
	}
	if (rss)
		err = ibv_cmd_create_qp_ex2(ctx, &qp->vqp, attr, &xcmd.ibv, sizeof(xcmd), &xresp.ibv, sizeof(xresp));
	else
		err = ibv_cmd_create_qp_ex(ctx, &qp->vqp, attr, &cmd.ibv, req ? sizeof(cmd) : sizeof(cmd.ibv),
					   &resp.ibv, sizeof(resp));
	if (err)
		goto err_free;
	/* The kernel makes an XRC target without the request's driver data
	 * and answers with none: it has no rings. */
	if (attr->qp_type == IBV_QPT_XRC_RECV)
		return &qp->vqp.qp;
	/* An RSS QP has no RQ, and no SQ without max_send_wr. */
	if (drv->sq.bytes)
		err = sroce_ring_map(&qp->sq, ctx->cmd_fd, &drv->sq, sizeof(struct sroce_wqe));
	if (!err && !attr->srq && attr->qp_type != IBV_QPT_XRC_SEND && !rss && drv->rq.bytes)
		err = sroce_ring_map(&qp->rq, ctx->cmd_fd, &drv->rq, sizeof(struct sroce_wqe));
	if (err)
		goto err_unmap;
	if (qp->sq.map) {
		/* What the kernel granted, bounded by what a WQE slot holds. */
		qp->max_send_sge = sroce_min_u32(attr->cap.max_send_sge, sroce_stride_sges(qp->sq.stride));
		qp->max_inline = sroce_min_u32(drv->max_inline_data, qp->sq.stride - sizeof(struct sroce_wqe));
		qp->sq.idx = qp->sq.hdr->producer;
		qp->sq.peer = qp->sq.hdr->consumer;
	}
	if (qp->rq.map) {
		qp->max_recv_sge = sroce_min_u32(attr->cap.max_recv_sge,
						 sroce_stride_sges(qp->rq.stride));
		qp->rq.idx = qp->rq.hdr->producer;
		qp->rq.mp_size = drv->mp_wr_buffer_sz;
		qp->rq.mp_align = drv->mp_packet_align_sz;
		qp->intf.rq_repost = qp->rq.idx;
		qp->rq.peer = qp->rq.hdr->consumer;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		sroce_qp_ex_init(qp, attr->send_ops_flags);
	return &qp->vqp.qp;

err_unmap:
	sroce_ring_unmap(&qp->sq);
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	sroce_qp_free(qp);
	errno = err;
	return NULL;
}

struct ibv_qp *sroce_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp = sroce_create_qp_common(pd->context, &ex, NULL);

	if (qp)
		attr->cap = ex.cap;
	return qp;
}

/*
 * ibv_create_qp_ex: a PD (an XRC target: its XRCD instead), at most an
 * empty create_flags (pyverbs' tests pick that mask at random), and the
 * ibv_qp_ex builders the QP type has.
 */
struct ibv_qp *sroce_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
	return sroce_create_qp_ex_req(ctx, attr, NULL);
}

struct ibv_qp *sroce_create_qp_ex_req(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr,
				      const struct sroce_create_qp_req *req)
{
	uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
			 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH;
	struct sroce_create_qp_req rss_req = req ? *req : (struct sroce_create_qp_req){ 0 };
	bool tgt = attr->qp_type == IBV_QPT_XRC_RECV;
	/* What names the device: the PD, or a target's domain. */
	uint32_t owner = tgt ? IBV_QP_INIT_ATTR_XRCD : IBV_QP_INIT_ATTR_PD;
	struct ibv_qp_init_attr_ex ex = *attr;
	struct ibv_context *owner_ctx;
	struct ibv_qp *qp;
	int err = 0;

	if ((attr->comp_mask & ~known) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	owner_ctx = !(attr->comp_mask & owner) ? NULL : tgt ? (attr->xrcd ? attr->xrcd->context : NULL)
							    : (attr->pd ? attr->pd->context : NULL);
	if (owner_ctx != ctx || (tgt && req && req->comp_mask)) {
		/* A target gets no create-time attributes: the kernel makes it
		 * without the request's driver data. */
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		err = sroce_qp_ex_check_ops(attr->qp_type, attr->send_ops_flags);
		if (err) {
			errno = err;
			return NULL;
		}
	}
	/* An RSS QP (wq.c): the table and its hashing go together. */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_IND_TABLE) {
		err = !attr->rwq_ind_tbl || attr->rwq_ind_tbl->context != ctx ? EINVAL : sroce_rss_req(attr, &rss_req);
		req = &rss_req;
	} else if ((attr->comp_mask & IBV_QP_INIT_ATTR_RX_HASH) ||
		   (req && (req->comp_mask & (SROCE_CREATE_QP_REQ_RSS_PAYLOAD | SROCE_CREATE_QP_REQ_RSS_DEFAULT_WQ)))) {
		err = EINVAL;
	}
	if (err) {
		errno = err;
		return NULL;
	}
	ex.comp_mask &= ~(uint32_t)IBV_QP_INIT_ATTR_CREATE_FLAGS;
	qp = sroce_create_qp_common(ctx, &ex, tgt ? NULL : req);
	if (qp)
		attr->cap = ex.cap;
	return qp;
}

int sroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct ibv_modify_qp cmd;

	return ibv_cmd_modify_qp(ibqp, attr, mask, &cmd, sizeof(cmd));
}

int sroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
		   struct ibv_qp_init_attr *init)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(ibqp, attr, mask, init, &cmd, sizeof(cmd));
}

int sroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int err = sroce_intf_qp_dying(qp);

	if (err)
		return err;
	err = ibv_cmd_destroy_qp(ibqp);
	if (err) {
		sroce_intf_revive(&qp->intf.dying); /* the QP lives on */
		return err;
	}
	/* Unmapped rings (XRC, an SRQ) unmap as nothing. */
	sroce_ring_unmap(&qp->rq);
	sroce_ring_unmap(&qp->sq);
	sroce_qp_free(qp);
	return 0;
}

/* ibv_open_qp: another process's XRC target, by number, in a domain this
 * process opened too. Only modify, query and destroy work on the handle;
 * the target itself lives until its last handle is destroyed. */
struct ibv_qp *sroce_open_qp(struct ibv_context *ctx, struct ibv_qp_open_attr *attr)
{
	struct ibv_open_qp cmd;
	struct ib_uverbs_create_qp_resp resp;
	struct sroce_qp *qp = sroce_qp_alloc();
	int err;

	if (!qp)
		return NULL;
	err = ibv_cmd_open_qp(ctx, &qp->vqp, sizeof(qp->vqp), attr, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		sroce_qp_free(qp);
		errno = err;
		return NULL;
	}
	return &qp->vqp.qp;
}

/* The opcode-specific part. The kernel validates it all again. */
static int sroce_wqe_fields(const struct ibv_qp *ibqp, const struct ibv_send_wr *wr,
			    struct sroce_wqe *wqe)
{
	if (ibqp->qp_type == IBV_QPT_XRC_SEND)
		wqe->xrc_remote_srqn = wr->qp_type.xrc.remote_srqn;
	if (ibqp->qp_type == IBV_QPT_UD && wr->opcode != IBV_WR_LOCAL_INV) {
		/* SENDs only, to an address; LOCAL_INV any QP's (validate_wqe). */
		if ((wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM) ||
		    !wr->wr.ud.ah)
			return EINVAL;
		wqe->ud.ah_handle = to_sah(wr->wr.ud.ah)->handle;
		wqe->ud.remote_qpn = wr->wr.ud.remote_qpn;
		wqe->ud.remote_qkey = wr->wr.ud.remote_qkey;
		if (wr->opcode == IBV_WR_SEND_WITH_IMM)
			wqe->imm_or_inv = wr->imm_data;
		return 0;
	}
	switch ((unsigned int)wr->opcode) { /* SROCE_WQE_FLUSH is not in 44's enum */
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		wqe->imm_or_inv = wr->imm_data;
		/* fall through */
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_READ:
		wqe->rdma.remote_addr = wr->wr.rdma.remote_addr;
		wqe->rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		wqe->rdma.swap = wr->wr.atomic.swap;
		/* fall through */
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe->rdma.remote_addr = wr->wr.atomic.remote_addr;
		wqe->rdma.rkey = wr->wr.atomic.rkey;
		wqe->rdma.compare_add = wr->wr.atomic.compare_add;
		break;
	case IBV_WR_SEND_WITH_IMM:
		wqe->imm_or_inv = wr->imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		wqe->imm_or_inv = wr->invalidate_rkey;
		break;
	case IBV_WR_ATOMIC_WRITE:
	case SROCE_WQE_FLUSH:
		/* ibv_send_wr has no field for ATOMIC WRITE's 8 bytes or FLUSH's
		 * type and level: the builders only (qp_ex.c), as librxe. */
		return EINVAL;
	case IBV_WR_BIND_MW: /* type 2 windows; type 1 through sroce_bind_mw */
		if (!wr->bind_mw.mw ||
		    wr->bind_mw.mw->type != ((wqe->flags & SROCE_WQE_BIND_TYPE1) ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2) ||
		    (!wr->bind_mw.bind_info.mr && wr->bind_mw.bind_info.length))
			return EINVAL;
		sroce_wqe_set_bind(wqe, wr->bind_mw.rkey, &wr->bind_mw.bind_info);
		break;
	default:
		break;
	}
	return 0;
}

/* A BIND_MW WQE's window: the new key (its index names the window), and
 * the MR part and rights. */
void sroce_wqe_set_bind(struct sroce_wqe *wqe, uint32_t new_rkey, const struct ibv_mw_bind_info *info)
{
	wqe->reg.addr = info->addr;
	wqe->reg.length = info->length;
	wqe->reg.mr_lkey = info->mr ? info->mr->lkey : 0;
	wqe->reg.new_key = new_rkey;
	wqe->reg.access = info->mw_access_flags;
}

/* What only the provider adds to a WQE: flags (SROCE_WQE_BIND_TYPE1) and a
 * bind's staged layout (srocedv_bind_mw). */
struct sroce_post_extra {
	uint16_t flags;
	uint32_t layout;
};

/* Writes one WQE into the next SQ slot; the caller publishes. */
static int sroce_post_one_send(struct sroce_qp *qp, const struct ibv_send_wr *wr,
			       const struct sroce_post_extra *extra)
{
	struct sroce_wqe *wqe;
	int err;

	if (wr->num_sge < 0 || wr->opcode > UINT8_MAX)
		return EINVAL;
	wqe = sroce_sq_claim(qp, wr->wr_id, (uint8_t)wr->opcode, wr->send_flags);
	if (!wqe)
		return ENOMEM;
	wqe->flags |= extra->flags;
	if (extra->layout) {
		/* A layout bind names no MR: the kernel checks the staged layout. */
		sroce_wqe_set_bind(wqe, wr->bind_mw.rkey, &wr->bind_mw.bind_info);
		wqe->reg.layout = extra->layout;
	} else {
		err = sroce_wqe_fields(&qp->vqp.qp, wr, wqe);
		if (err)
			return err;
	}
	if (wr->send_flags & IBV_SEND_INLINE) {
		wqe->flags |= SROCE_WQE_INLINE;
		for (int i = 0; i < wr->num_sge && !err; i++)
			err = sroce_wqe_add_inline(qp, wqe,
						   (const void *)(uintptr_t)wr->sg_list[i].addr,
						   wr->sg_list[i].length);
	} else {
		err = sroce_wqe_set_sges(qp, wqe, wr->sg_list, (size_t)wr->num_sge);
	}
	if (err)
		return err;
	qp->sq.idx++;
	return 0;
}

static int sroce_post_send_extra(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr,
				 const struct sroce_post_extra *extra)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	bool posted;
	int err = 0, db;

	/* No sends before RTS; ERR accepts them, to flush them. An XRC target
	 * has no SQ. */
	if (ibqp->state <= IBV_QPS_RTR || !qp->sq.hdr) {
		*bad_wr = wr;
		return EINVAL;
	}
	sroce_spin_lock(&qp->sq.lock);
	{
		uint32_t start = qp->sq.idx;

		for (; wr; wr = wr->next) {
			err = sroce_post_one_send(qp, wr, extra);
			if (err) {
				*bad_wr = wr;
				break;
			}
		}
		posted = qp->sq.idx != start;
	}
	if (posted)
		sroce_wq_publish(&qp->sq);
	sroce_spin_unlock(&qp->sq.lock);
	if (!posted)
		return err;
	/* Outside the lock: a system call must not stall other posters. */
	db = sroce_sq_doorbell(ibqp);
	return err ? err : db;
}

int sroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	static const struct sroce_post_extra none;

	return sroce_post_send_extra(ibqp, wr, bad_wr, &none);
}

/* One BIND_MW WQE of ibv_bind_mw (mr.c) or srocedv_bind_mw (mw_layout.c):
 * marked as the verb's for a type 1 window, with a staged layout's handle
 * or 0. */
int sroce_post_bind(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr, uint32_t layout)
{
	struct sroce_post_extra extra = {
		.flags = wr->bind_mw.mw->type == IBV_MW_TYPE_1 ? SROCE_WQE_BIND_TYPE1 : 0,
		.layout = layout,
	};

	wr->next = NULL;
	return sroce_post_send_extra(ibqp, wr, bad_wr, &extra);
}

int sroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	/* With an SRQ the QP has no RQ; a QP in RESET takes no receives. A
	 * child of the consecutive-QPN form posts into its WQ. */
	if ((!qp->rq.map && !qp->rwq) || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	if (qp->rwq)
		return sroce_post_wq_recv(&qp->rwq->ibv_wq, wr, bad_wr);
	return sroce_post_recv_list(&qp->rq, qp->max_recv_sge, wr, bad_wr);
}

/* The receive CPU method on the QP (abi/sroce-abi-methods.h): in (0: a
 * query), the choice now out, both in the kernel's encoding (CPU c is c + 1). */
static int sroce_qp_rx_cpu_ioctl(struct ibv_qp *qp, uint32_t in, uint32_t *cur)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attrs[3];
	} cmd = {
		.hdr = { .length = sizeof(cmd), .object_id = UVERBS_OBJECT_QP,
			 .method_id = SROCE_METHOD_QP_RX_CPU, .num_attrs = 3 },
		.attrs = {
			{ .attr_id = SROCE_ATTR_QP_RX_CPU_QP, .flags = UVERBS_ATTR_F_MANDATORY, .data = qp->handle },
			{ .attr_id = SROCE_ATTR_QP_RX_CPU_IN, .len = sizeof(in), .data = in },
			{ .attr_id = SROCE_ATTR_QP_RX_CPU_CUR, .len = sizeof(*cur), .flags = UVERBS_ATTR_F_MANDATORY,
			  .data = (uintptr_t)cur },
		},
	};

	if (!sroce_is_sroce_context(qp->context))
		return EOPNOTSUPP;
	return sroce_method_ioctl(qp->context, &cmd);
}

int srocedv_modify_qp_rx_cpu(struct ibv_qp *qp, int cpu)
{
	uint32_t cur;

	if (!qp || cpu < SROCEDV_QP_RX_CPU_OWNER)
		return EINVAL;
	return sroce_qp_rx_cpu_ioctl(qp, cpu == SROCEDV_QP_RX_CPU_OWNER ? SROCE_QP_RX_CPU_OWNER : (uint32_t)cpu + 1,
				     &cur);
}

int srocedv_query_qp_rx_cpu(struct ibv_qp *qp, int *cpu)
{
	uint32_t cur;
	int err;

	if (!qp || !cpu)
		return EINVAL;
	err = sroce_qp_rx_cpu_ioctl(qp, SROCE_QP_RX_CPU_NO_CHANGE, &cur);
	if (!err)
		*cpu = cur == SROCE_QP_RX_CPU_OWNER ? SROCEDV_QP_RX_CPU_OWNER : (int)(cur - 1);
	return err;
}

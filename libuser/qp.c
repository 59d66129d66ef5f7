// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qp.c - queue pairs. Control is uverbs commands; post_send writes WQEs into
 * the mapped SQ, publishes them and rings the doorbell only when the kernel
 * asks for it (NEED_WAKEUP: its SQ poller sleeps, or the context is in
 * doorbell mode); post_recv writes the mapped RQ and never enters the
 * kernel.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

struct ibv_qp *sroce_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	int cmd_fd = pd->context->cmd_fd;
	struct ibv_create_qp cmd;
	struct {
		struct ib_uverbs_create_qp_resp ibv;
		struct sroce_create_qp_resp drv;
	} resp = {};
	struct sroce_qp *qp = calloc(1, sizeof(*qp));
	int err;

	if (!qp)
		return NULL;
	err = ibv_cmd_create_qp(pd, &qp->ibv_qp, attr, &cmd, sizeof(cmd), &resp.ibv, sizeof(resp));
	if (err)
		goto err_free;
	err = sroce_ring_map(&qp->sq, cmd_fd, &resp.drv.sq, sizeof(struct sroce_wqe));
	if (!err && !attr->srq)
		err = sroce_ring_map(&qp->rq, cmd_fd, &resp.drv.rq, sizeof(struct sroce_wqe));
	if (err)
		goto err_unmap;
	/* What the kernel granted, bounded by what a WQE slot holds. */
	qp->max_send_sge = sroce_min_u32(attr->cap.max_send_sge, sroce_stride_sges(qp->sq.stride));
	qp->max_inline = sroce_min_u32(resp.drv.max_inline_data,
				       qp->sq.stride - sizeof(struct sroce_wqe));
	qp->sq.idx = qp->sq.hdr->producer;
	qp->sq.peer = qp->sq.hdr->consumer;
	if (qp->rq.map) {
		qp->max_recv_sge = sroce_min_u32(attr->cap.max_recv_sge,
						 sroce_stride_sges(qp->rq.stride));
		qp->rq.idx = qp->rq.hdr->producer;
		qp->rq.peer = qp->rq.hdr->consumer;
	}
	pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq.lock, PTHREAD_PROCESS_PRIVATE);
	return &qp->ibv_qp;

err_unmap:
	sroce_ring_unmap(&qp->sq);
	ibv_cmd_destroy_qp(&qp->ibv_qp);
err_free:
	free(qp);
	errno = err;
	return NULL;
}

/*
 * ibv_create_qp_ex asking for nothing ibv_create_qp cannot give: a PD and
 * at most an empty create_flags (pyverbs' tests pick that mask at random).
 * The ibv_qp_ex builders and XRC come with their issues. The two init
 * attribute structs share their leading fields, as libibverbs relies on.
 */
struct ibv_qp *sroce_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
	uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;

	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || (attr->comp_mask & ~known) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->pd || attr->pd->context != ctx) {
		errno = EINVAL;
		return NULL;
	}
	return sroce_create_qp(attr->pd, (struct ibv_qp_init_attr *)attr);
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
	int err = ibv_cmd_destroy_qp(ibqp);

	if (err)
		return err;
	sroce_ring_unmap(&qp->rq);
	sroce_ring_unmap(&qp->sq);
	pthread_spin_destroy(&qp->rq.lock);
	pthread_spin_destroy(&qp->sq.lock);
	free(qp);
	return 0;
}

_Static_assert((unsigned)SROCE_WQE_FENCE == (unsigned)IBV_SEND_FENCE &&
		       (unsigned)SROCE_WQE_SIGNALED == (unsigned)IBV_SEND_SIGNALED &&
		       (unsigned)SROCE_WQE_SOLICITED == (unsigned)IBV_SEND_SOLICITED &&
		       (unsigned)SROCE_WQE_INLINE == (unsigned)IBV_SEND_INLINE &&
		       (unsigned)SROCE_WQE_IP_CSUM == (unsigned)IBV_SEND_IP_CSUM,
	       "WQE flags are the IBV_SEND_ values");

static uint16_t sroce_wqe_flags(unsigned int send_flags)
{
	return send_flags & SROCE_WQE_FLAGS_MASK;
}

/* The opcode-specific part. The kernel validates it all again. */
static int sroce_wqe_fields(const struct ibv_qp *ibqp, const struct ibv_send_wr *wr,
			    struct sroce_wqe *wqe)
{
	if (ibqp->qp_type == IBV_QPT_UD) {
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
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		wqe->imm_or_inv = wr->imm_data;
		/* fall through */
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_READ:
		wqe->rdma.remote_addr = wr->wr.rdma.remote_addr;
		wqe->rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe->rdma.remote_addr = wr->wr.atomic.remote_addr;
		wqe->rdma.rkey = wr->wr.atomic.rkey;
		wqe->rdma.compare_add = wr->wr.atomic.compare_add;
		wqe->rdma.swap = wr->wr.atomic.swap;
		break;
	case IBV_WR_SEND_WITH_IMM:
		wqe->imm_or_inv = wr->imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		wqe->imm_or_inv = wr->invalidate_rkey;
		break;
	case IBV_WR_BIND_MW:
		if (!wr->bind_mw.bind_info.mr)
			return EINVAL;
		wqe->reg.addr = wr->bind_mw.bind_info.addr;
		wqe->reg.length = wr->bind_mw.bind_info.length;
		wqe->reg.mr_lkey = wr->bind_mw.bind_info.mr->lkey;
		wqe->reg.new_key = wr->bind_mw.rkey;
		wqe->reg.access = wr->bind_mw.bind_info.mw_access_flags;
		break;
	default:
		break;
	}
	return 0;
}

/* Writes one WQE into the next SQ slot; the caller publishes. */
static int sroce_post_one_send(struct sroce_qp *qp, const struct ibv_send_wr *wr)
{
	struct sroce_wqe *wqe;
	int err;

	if (wr->num_sge < 0 || wr->opcode > UINT8_MAX)
		return EINVAL;
	if (!(wr->send_flags & IBV_SEND_INLINE) && (uint32_t)wr->num_sge > qp->max_send_sge)
		return EINVAL;
	wqe = sroce_wq_next(&qp->sq);
	if (!wqe)
		return ENOMEM;
	/* The slot is ours until published: a failure below leaves it. */
	*wqe = (struct sroce_wqe){
		.wr_id = wr->wr_id,
		.opcode = (uint8_t)wr->opcode,
		.flags = sroce_wqe_flags(wr->send_flags),
	};
	err = sroce_wqe_fields(&qp->ibv_qp, wr, wqe);
	if (err)
		return err;
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint8_t *data = (uint8_t *)(wqe + 1);
		uint32_t total = 0;

		for (int i = 0; i < wr->num_sge; i++) {
			const struct ibv_sge *sge = &wr->sg_list[i];

			if (sge->length > qp->max_inline - total)
				return EINVAL;
			memcpy(data + total, (const void *)(uintptr_t)sge->addr, sge->length);
			total += sge->length;
		}
		wqe->inline_len = total;
	} else {
		wqe->num_sge = (uint8_t)wr->num_sge;
		memcpy(wqe + 1, wr->sg_list, (size_t)wr->num_sge * sizeof(struct sroce_sge));
	}
	qp->sq.idx++;
	return 0;
}

/* A post_send with no work requests: uverbs hands it to the driver, which
 * runs the requester on the published WQEs. */
static int sroce_doorbell(struct ibv_qp *ibqp)
{
	const volatile struct sroce_context_page *page = to_sctx(ibqp->context)->ctx_page;
	struct ibv_post_send cmd;
	struct ib_uverbs_post_send_resp resp;

	/* Store->load: the producer store in sroce_wq_publish must be visible
	 * before NEED_WAKEUP is read. Pairs with the SQ poller's full barrier
	 * between setting NEED_WAKEUP and re-checking the producers (SQ-W1):
	 * either it sees our WQEs or we see the flag. */
	atomic_thread_fence(memory_order_seq_cst);
	if (!(page->flags & SROCE_CTX_NEED_WAKEUP))
		return 0;
	memset(&cmd, 0, sizeof(cmd));
	cmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.core_payload.response = (uintptr_t)&resp;
	cmd.core_payload.qp_handle = ibqp->handle;
	/* The kernel insists on a plausible WR size even for zero WRs. */
	cmd.core_payload.wqe_size = sizeof(struct ib_uverbs_send_wr);
	if (write(ibqp->context->cmd_fd, &cmd, sizeof(cmd)) != sizeof(cmd))
		return errno;
	return 0;
}

int sroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	bool posted;
	int err = 0, db;

	/* No sends before RTS; ERR accepts them, to flush them. */
	if (ibqp->state <= IBV_QPS_RTR) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->sq.lock);
	{
		uint32_t start = qp->sq.idx;

		for (; wr; wr = wr->next) {
			err = sroce_post_one_send(qp, wr);
			if (err) {
				*bad_wr = wr;
				break;
			}
		}
		posted = qp->sq.idx != start;
	}
	if (posted)
		sroce_wq_publish(&qp->sq);
	pthread_spin_unlock(&qp->sq.lock);
	if (!posted)
		return err;
	/* Outside the lock: a system call must not stall other posters. */
	db = sroce_doorbell(ibqp);
	return err ? err : db;
}

int sroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	uint32_t start;
	int err = 0;

	/* With an SRQ the QP has no RQ; a QP in RESET takes no receives. */
	if (!qp->rq.map || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->rq.lock);
	start = qp->rq.idx;
	for (; wr; wr = wr->next) {
		err = sroce_post_one_recv(&qp->rq, qp->max_recv_sge, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	if (qp->rq.idx != start)
		sroce_wq_publish(&qp->rq);
	pthread_spin_unlock(&qp->rq.lock);
	return err;
}

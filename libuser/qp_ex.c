// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qp_ex.c - the ibv_qp_ex work-request builders (ibv_wr_start, the
 * ibv_wr_<opcode> builders and their setters, ibv_wr_complete and
 * ibv_wr_abort). They write the same WQEs as ibv_post_send (sq.c) into the
 * mapped SQ, one batch at a time under the SQ lock (struct sroce_wr_batch).
 *
 * Errors: a builder returns nothing, so the batch keeps its first error and
 * ibv_wr_complete returns it after discarding the whole batch, as mlx5 does.
 * A builder or setter called outside ibv_wr_start/ibv_wr_complete writes
 * nothing and sets errno to EINVAL; ibv_wr_complete there returns EINVAL.
 */
#include <errno.h>
#include <string.h>

#include "infiniband/srocedv.h"
#include "sroce.h"

/* Which builders each QP type has (the kernel's Qp::validate_wqe agrees):
 * windows are bound on connected QPs, SEND with invalidate is RC's. TSO
 * comes with its issue. */
#define SROCE_QP_EX_UD_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_LOCAL_INV)
#define SROCE_QP_EX_UC_OPS                                                                     \
	(SROCE_QP_EX_UD_OPS | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
	 IBV_QP_EX_WITH_BIND_MW)
#define SROCE_QP_EX_RC_OPS                                                                     \
	(SROCE_QP_EX_UC_OPS | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |   \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_ATOMIC_WRITE | SROCEDV_QP_EX_WITH_FLUSH | \
	 IBV_QP_EX_WITH_SEND_WITH_INV)

int sroce_qp_ex_check_ops(enum ibv_qp_type type, uint64_t send_ops_flags)
{
	uint64_t allowed;

	switch (type) {
	case IBV_QPT_RC:
	case IBV_QPT_XRC_SEND: /* RC's send half */
		allowed = SROCE_QP_EX_RC_OPS;
		break;
	case IBV_QPT_UC:
		allowed = SROCE_QP_EX_UC_OPS;
		break;
	case IBV_QPT_UD:
		allowed = SROCE_QP_EX_UD_OPS;
		break;
	default:
		return EOPNOTSUPP;
	}
	return (send_ops_flags & ~allowed) ? EOPNOTSUPP : 0;
}

static struct sroce_qp *ex_to_sqp(struct ibv_qp_ex *ex)
{
	return sroce_container_of(ex, struct sroce_qp, vqp.qp_ex);
}

static void batch_fail(struct sroce_wr_batch *b, int err)
{
	if (!b->err)
		b->err = err;
}

/* The checks a WQE can only pass once its setters ran. */
static void batch_close_cur(struct sroce_wr_batch *b)
{
	if (b->cur && b->cur_needs_addr)
		batch_fail(b, EINVAL);
	b->cur = NULL;
}

/* The slot for a builder's WQE, or NULL: outside a batch (errno EINVAL),
 * after an error, or with the error it records. */
static struct sroce_wqe *batch_claim(struct ibv_qp_ex *ex, uint64_t op, enum ibv_wr_opcode opcode)
{
	struct sroce_qp *qp = ex_to_sqp(ex);
	struct sroce_wr_batch *b = &qp->batch;
	struct sroce_wqe *wqe;

	if (!b->open) {
		errno = EINVAL;
		return NULL;
	}
	batch_close_cur(b);
	if (b->err)
		return NULL;
	if (!(b->ops & op)) {
		batch_fail(b, EOPNOTSUPP);
		return NULL;
	}
	wqe = sroce_sq_claim(qp, ex->wr_id, (uint8_t)opcode, ex->wr_flags);
	if (!wqe) {
		batch_fail(b, ENOMEM);
		return NULL;
	}
	qp->sq.idx++;
	b->cur = wqe;
	/* A UD SEND needs ibv_wr_set_ud_addr; a LOCAL_INV has no destination. */
	b->cur_needs_addr = qp->vqp.qp.qp_type == IBV_QPT_UD && opcode != IBV_WR_LOCAL_INV;
	return wqe;
}

/* The WQE a setter fills, or NULL (outside a batch: errno EINVAL; before a
 * builder: the batch fails). */
static struct sroce_wqe *batch_cur(struct ibv_qp_ex *ex)
{
	struct sroce_wr_batch *b = &ex_to_sqp(ex)->batch;

	if (!b->open) {
		errno = EINVAL;
		return NULL;
	}
	if (!b->cur)
		batch_fail(b, EINVAL);
	return b->cur;
}

/* batch_cur for the data setters: an ATOMIC WRITE has its 8 bytes already
 * and a FLUSH has none; neither takes a gather list or inline data (the
 * batch fails, EINVAL). */
static struct sroce_wqe *batch_cur_data(struct ibv_qp_ex *ex)
{
	struct sroce_wqe *wqe = batch_cur(ex);

	if (wqe && (wqe->opcode == IBV_WR_ATOMIC_WRITE || wqe->opcode == SROCE_WQE_FLUSH)) {
		batch_fail(&ex_to_sqp(ex)->batch, EINVAL);
		return NULL;
	}
	return wqe;
}

static void batch_check(struct ibv_qp_ex *ex, int err)
{
	if (err)
		batch_fail(&ex_to_sqp(ex)->batch, err);
}

/* A builder this QP does not have: the batch fails with EOPNOTSUPP. */
static void batch_refuse(struct ibv_qp_ex *ex)
{
	struct sroce_wr_batch *b = &ex_to_sqp(ex)->batch;

	if (!b->open) {
		errno = EINVAL;
		return;
	}
	batch_close_cur(b);
	batch_fail(b, EOPNOTSUPP);
}

static void wr_start(struct ibv_qp_ex *ex)
{
	struct sroce_qp *qp = ex_to_sqp(ex);
	struct sroce_wr_batch *b = &qp->batch;

	sroce_spin_lock(&qp->sq.lock);
	b->open = true;
	b->start = qp->sq.idx;
	b->cur = NULL;
	/* No sends before RTS, as ibv_post_send; ERR takes them, to flush. */
	b->err = qp->vqp.qp.state <= IBV_QPS_RTR ? EINVAL : 0;
}

static int wr_complete(struct ibv_qp_ex *ex)
{
	struct sroce_qp *qp = ex_to_sqp(ex);
	struct sroce_wr_batch *b = &qp->batch;
	bool posted;
	int err;

	if (!b->open)
		return EINVAL;
	batch_close_cur(b);
	err = b->err;
	if (err)
		qp->sq.idx = b->start;
	posted = qp->sq.idx != b->start;
	if (posted)
		sroce_wq_publish(&qp->sq);
	b->open = false;
	sroce_spin_unlock(&qp->sq.lock);
	if (!posted)
		return err;
	/* Outside the lock, as ibv_post_send. */
	return sroce_sq_doorbell(&qp->vqp.qp);
}

static void wr_abort(struct ibv_qp_ex *ex)
{
	struct sroce_qp *qp = ex_to_sqp(ex);
	struct sroce_wr_batch *b = &qp->batch;

	if (!b->open)
		return;
	qp->sq.idx = b->start;
	b->cur = NULL;
	b->open = false;
	sroce_spin_unlock(&qp->sq.lock);
}

static void wr_send(struct ibv_qp_ex *ex)
{
	batch_claim(ex, IBV_QP_EX_WITH_SEND, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *ex, __be32 imm_data)
{
	struct sroce_wqe *wqe = batch_claim(ex, IBV_QP_EX_WITH_SEND_WITH_IMM, IBV_WR_SEND_WITH_IMM);

	if (wqe)
		wqe->imm_or_inv = imm_data;
}

static struct sroce_wqe *claim_rdma(struct ibv_qp_ex *ex, uint64_t op, enum ibv_wr_opcode opcode,
				    uint32_t rkey, uint64_t remote_addr)
{
	struct sroce_wqe *wqe = batch_claim(ex, op, opcode);

	if (wqe) {
		wqe->rdma.remote_addr = remote_addr;
		wqe->rdma.rkey = rkey;
	}
	return wqe;
}

static void wr_rdma_write(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t remote_addr)
{
	claim_rdma(ex, IBV_QP_EX_WITH_RDMA_WRITE, IBV_WR_RDMA_WRITE, rkey, remote_addr);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t remote_addr,
			      __be32 imm_data)
{
	struct sroce_wqe *wqe = claim_rdma(ex, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
					   IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr);

	if (wqe)
		wqe->imm_or_inv = imm_data;
}

static void wr_rdma_read(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t remote_addr)
{
	claim_rdma(ex, IBV_QP_EX_WITH_RDMA_READ, IBV_WR_RDMA_READ, rkey, remote_addr);
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t remote_addr,
			      uint64_t compare, uint64_t swap)
{
	struct sroce_wqe *wqe = claim_rdma(ex, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP,
					   IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr);

	if (wqe) {
		wqe->rdma.compare_add = compare;
		wqe->rdma.swap = swap;
	}
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t remote_addr,
				uint64_t add)
{
	struct sroce_wqe *wqe = claim_rdma(ex, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
					   IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr);

	if (wqe)
		wqe->rdma.compare_add = add;
}

_Static_assert(IBV_WR_ATOMIC_WRITE == SROCE_WQE_ATOMIC_WRITE, "the WQE opcode is libibverbs'");

/* IBA 1.5 ATOMIC WRITE: the 8 bytes at atomic_wr, as they are (no byte
 * order), go in the WQE; the responder stores them in one piece. */
static void wr_atomic_write(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t remote_addr,
			    const void *atomic_wr)
{
	struct sroce_wqe *wqe = claim_rdma(ex, IBV_QP_EX_WITH_ATOMIC_WRITE, IBV_WR_ATOMIC_WRITE, rkey,
					   remote_addr);

	if (wqe)
		memcpy(&wqe->rdma.compare_add, atomic_wr, sizeof(wqe->rdma.compare_add));
}

_Static_assert(SROCEDV_FLUSH_GLOBAL == SROCE_FLUSH_GLOBAL && SROCEDV_FLUSH_PERSISTENT == SROCE_FLUSH_PERSISTENT &&
		       SROCEDV_FLUSH_RANGE == SROCE_FLUSH_RANGE && SROCEDV_FLUSH_MR == SROCE_FLUSH_MR,
	       "FLUSH's WQE fields take the srocedv values");

/* IBA 1.5 FLUSH: srocedv_wr_flush (srocedv.c) on a sroce QP. */
void sroce_wr_flush(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t remote_addr, size_t len,
		    uint8_t type, uint8_t level)
{
	const uint8_t types = SROCEDV_FLUSH_GLOBAL | SROCEDV_FLUSH_PERSISTENT;
	struct sroce_wqe *wqe = claim_rdma(ex, SROCEDV_QP_EX_WITH_FLUSH,
					   (enum ibv_wr_opcode)SROCE_WQE_FLUSH, rkey, remote_addr);

	if (!wqe)
		return;
	if (!type || (type & ~types) || level > SROCEDV_FLUSH_MR ||
	    (level == SROCEDV_FLUSH_RANGE && len > UINT32_MAX)) {
		batch_fail(&ex_to_sqp(ex)->batch, EINVAL);
		return;
	}
	/* The whole MR: the RETH's length means nothing, as rdma-core 45. */
	wqe->flush.length = level == SROCEDV_FLUSH_RANGE ? (uint32_t)len : 0;
	wqe->flush.type = type;
	wqe->flush.level = level;
}

static void wr_set_ud_addr(struct ibv_qp_ex *ex, struct ibv_ah *ah, uint32_t remote_qpn,
			   uint32_t remote_qkey)
{
	struct sroce_qp *qp = ex_to_sqp(ex);
	struct sroce_wqe *wqe = batch_cur(ex);

	if (!wqe)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_UD || !ah) {
		batch_fail(&qp->batch, EINVAL);
		return;
	}
	wqe->ud.ah_handle = to_sah(ah)->handle;
	wqe->ud.remote_qpn = remote_qpn;
	wqe->ud.remote_qkey = remote_qkey;
	qp->batch.cur_needs_addr = false;
}

static void wr_set_sge(struct ibv_qp_ex *ex, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct sroce_wqe *wqe = batch_cur_data(ex);

	if (wqe)
		batch_check(ex, sroce_wqe_set_sge(ex_to_sqp(ex), wqe, addr, length, lkey));
}

static void wr_set_sge_list(struct ibv_qp_ex *ex, size_t num_sge, const struct ibv_sge *sg_list)
{
	struct sroce_wqe *wqe = batch_cur_data(ex);

	if (wqe)
		batch_check(ex, sroce_wqe_set_sges(ex_to_sqp(ex), wqe, sg_list, num_sge));
}

/* Inline data replaces whatever gather list or inline bytes were set. */
static void wr_set_inline_data_list(struct ibv_qp_ex *ex, size_t num_buf,
				    const struct ibv_data_buf *buf_list)
{
	struct sroce_qp *qp = ex_to_sqp(ex);
	struct sroce_wqe *wqe = batch_cur_data(ex);
	int err;

	if (!wqe)
		return;
	err = sroce_wqe_set_sges(qp, wqe, NULL, 0);
	for (size_t i = 0; i < num_buf && !err; i++)
		err = sroce_wqe_add_inline(qp, wqe, buf_list[i].addr, buf_list[i].length);
	if (!err)
		wqe->flags |= SROCE_WQE_INLINE;
	batch_check(ex, err);
}

static void wr_set_inline_data(struct ibv_qp_ex *ex, void *addr, size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(ex, 1, &buf);
}

/* A type 2 window's bind (type 1 windows: ibv_bind_mw, mr.c). */
static void wr_bind_mw(struct ibv_qp_ex *ex, struct ibv_mw *mw, uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	struct sroce_wqe *wqe = batch_claim(ex, IBV_QP_EX_WITH_BIND_MW, IBV_WR_BIND_MW);

	if (!wqe)
		return;
	if (!mw || !info || !info->mr || mw->type != IBV_MW_TYPE_2) {
		batch_fail(&ex_to_sqp(ex)->batch, EINVAL);
		return;
	}
	sroce_wqe_set_bind(wqe, rkey, info);
}

static void wr_local_inv(struct ibv_qp_ex *ex, uint32_t invalidate_rkey)
{
	struct sroce_wqe *wqe = batch_claim(ex, IBV_QP_EX_WITH_LOCAL_INV, IBV_WR_LOCAL_INV);

	if (wqe)
		wqe->imm_or_inv = invalidate_rkey;
}

static void wr_send_inv(struct ibv_qp_ex *ex, uint32_t invalidate_rkey)
{
	struct sroce_wqe *wqe = batch_claim(ex, IBV_QP_EX_WITH_SEND_WITH_INV, IBV_WR_SEND_WITH_INV);

	if (wqe)
		wqe->imm_or_inv = invalidate_rkey;
}

/* XRC: the SRQ the last claimed WQE goes to at the target (every packet's
 * XRCETH). Only an initiator has one. */
static void wr_set_xrc_srqn(struct ibv_qp_ex *ex, uint32_t remote_srqn)
{
	struct sroce_qp *qp = ex_to_sqp(ex);
	struct sroce_wqe *wqe = batch_cur(ex);

	if (!wqe)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_XRC_SEND) {
		batch_fail(&qp->batch, EINVAL);
		return;
	}
	wqe->xrc_remote_srqn = remote_srqn;
}

static void wr_refuse_tso(struct ibv_qp_ex *ex, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr, (void)hdr_sz, (void)mss;
	batch_refuse(ex);
}

void sroce_qp_ex_init(struct sroce_qp *qp, uint64_t send_ops_flags)
{
	struct ibv_qp_ex *ex = &qp->vqp.qp_ex;

	qp->batch.ops = send_ops_flags;
	ex->wr_start = wr_start;
	ex->wr_complete = wr_complete;
	ex->wr_abort = wr_abort;
	ex->wr_send = wr_send;
	ex->wr_send_imm = wr_send_imm;
	ex->wr_rdma_write = wr_rdma_write;
	ex->wr_rdma_write_imm = wr_rdma_write_imm;
	ex->wr_rdma_read = wr_rdma_read;
	ex->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	ex->wr_atomic_fetch_add = wr_atomic_fetch_add;
	ex->wr_set_ud_addr = wr_set_ud_addr;
	ex->wr_set_sge = wr_set_sge;
	ex->wr_set_sge_list = wr_set_sge_list;
	ex->wr_set_inline_data = wr_set_inline_data;
	ex->wr_set_inline_data_list = wr_set_inline_data_list;
	ex->wr_bind_mw = wr_bind_mw;
	ex->wr_local_inv = wr_local_inv;
	ex->wr_send_inv = wr_send_inv;
	ex->wr_set_xrc_srqn = wr_set_xrc_srqn;
	ex->wr_send_tso = wr_refuse_tso;
	ex->wr_atomic_write = wr_atomic_write;
	qp->vqp.comp_mask |= VERBS_QP_EX;
}

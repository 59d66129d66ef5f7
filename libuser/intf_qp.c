// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * intf_qp.c - the QP interface families of seed 004 (srocedv_qp_ops_rdma,
 * srocedv_qp_ops_msg) and the SRQ's (srocedv_srq_ops, beyond the seed's
 * list): one function per kind of work request, whose checks
 * srocedv_query_intf made once (intf.c).
 *
 * Each function is a worker below, inlined with its constants: the opcode,
 * whether it is inline, UD, pending, signalled, and whether the table takes
 * the queue lock (four tables per family: SROCEDV_INTF_FLAG_SINGLE_THREADED
 * takes none, SROCEDV_QP_OPS_UNSIGNALED asks no completion), so that one
 * QP can hold a signalled and an unsignalled table at once, for selective
 * signalling. The rest of the mode (fence, solicited) is one WQE flags
 * word the QP keeps per family, stored as it is: no branch on it.
 * What is left per call depends on the call's data: a full ring, inline
 * bytes beyond max_inline_data, and the doorbell (sq.c).
 *
 * The WQE is written as ibv_post_send writes it (sq.c, qp.c), and
 * published with the same barrier (WQ-P1, ring.c).
 */
#include <errno.h>
#include <string.h>

#include "infiniband/srocedv.h"
#include "sroce.h"

#define INTF_INLINE static inline __attribute__((always_inline))

/* One WR's WQE, or NULL (and the lock dropped) when the ring is full. */
INTF_INLINE struct sroce_wqe *wr_begin(struct sroce_qp *qp, bool locked, int family, uint16_t signaled,
				       uint8_t opcode, uint64_t wr_id)
{
	struct sroce_wqe *wqe;

	if (locked)
		sroce_spin_lock(&qp->sq.lock);
	wqe = sroce_wq_next(&qp->sq);
	if (!wqe) {
		if (locked)
			sroce_spin_unlock(&qp->sq.lock);
		return NULL;
	}
	*wqe = (struct sroce_wqe){ .wr_id = wr_id, .opcode = opcode,
				   .flags = (uint16_t)(qp->intf.wqe_flags[family] | signaled) };
	return wqe;
}

/* Counts the WR; unless it is pending, publishes it with every pending one
 * and rings the doorbell if the kernel asked for it (outside the lock, as
 * ibv_post_send does). */
INTF_INLINE int wr_end(struct sroce_qp *qp, bool locked, bool pending)
{
	qp->sq.idx++;
	if (!pending)
		sroce_wq_publish(&qp->sq);
	if (locked)
		sroce_spin_unlock(&qp->sq.lock);
	return pending ? 0 : sroce_sq_doorbell(&qp->vqp.qp);
}

INTF_INLINE void wqe_sge(struct sroce_wqe *wqe, uint64_t addr, uint32_t length, uint32_t lkey)
{
	struct sroce_sge *sge = (struct sroce_sge *)(wqe + 1);

	wqe->num_sge = 1;
	sge->addr = addr;
	sge->length = length;
	sge->lkey = lkey;
}

INTF_INLINE void wqe_inline(struct sroce_wqe *wqe, uint64_t addr, uint32_t length)
{
	memcpy(wqe + 1, (const void *)(uintptr_t)addr, length);
	wqe->flags |= SROCE_WQE_INLINE;
	wqe->inline_len = length;
}

/* What a WR names besides its gather: the remote side. */
struct wr_dest {
	uint64_t remote_addr;
	uint32_t rkey;
	uint32_t imm;              /* big-endian, as ibv_send_wr's */
	struct ibv_ah *ah;         /* UD */
	uint32_t remote_qpn;
	uint32_t remote_qkey;
};

INTF_INLINE int post(struct ibv_qp *ibqp, bool locked, uint16_t signaled, int family, uint8_t opcode,
		     bool inl, bool ud, bool pending, uint64_t addr, uint32_t length, uint32_t lkey,
		     const struct wr_dest *d, uint64_t wr_id)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_wqe *wqe;

	if (inl && length > qp->max_inline)
		return EINVAL;
	/* As ibv_post_send refuses a UD WR without an AH. */
	if (ud && !d->ah)
		return EINVAL;
	wqe = wr_begin(qp, locked, family, signaled, opcode, wr_id);
	if (!wqe)
		return ENOMEM;
	wqe->imm_or_inv = d->imm;
	if (ud) {
		wqe->ud.ah_handle = to_sah(d->ah)->handle;
		wqe->ud.remote_qpn = d->remote_qpn;
		wqe->ud.remote_qkey = d->remote_qkey;
	} else {
		wqe->rdma.remote_addr = d->remote_addr;
		wqe->rdma.rkey = d->rkey;
	}
	if (inl)
		wqe_inline(wqe, addr, length);
	else
		wqe_sge(wqe, addr, length, lkey);
	return wr_end(qp, locked, pending);
}

/* Publishes what the pending functions wrote. */
INTF_INLINE int flush_pending(struct ibv_qp *ibqp, bool locked)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	bool any;

	if (locked)
		sroce_spin_lock(&qp->sq.lock);
	/* Our own last publication: the kernel never writes the producer. */
	any = qp->sq.idx != qp->sq.hdr->producer;
	if (any)
		sroce_wq_publish(&qp->sq);
	if (locked)
		sroce_spin_unlock(&qp->sq.lock);
	return any ? sroce_sq_doorbell(ibqp) : 0;
}

INTF_INLINE int recv_one(struct sroce_uring *r, bool locked, uint64_t addr, uint32_t length, uint32_t lkey,
			 uint64_t wr_id)
{
	struct sroce_wqe *wqe;
	int err = ENOMEM;

	if (r->mp_size && length != r->mp_size)
		return EINVAL; /* a multi-packet queue's WR is its buffer size */
	if (locked)
		sroce_spin_lock(&r->lock);
	wqe = sroce_wq_next(r);
	if (wqe) {
		*wqe = (struct sroce_wqe){ .wr_id = wr_id, .opcode = SROCE_WQE_RECV };
		wqe_sge(wqe, addr, length, lkey);
		r->idx++;
		sroce_wq_publish(r);
		err = 0;
	}
	if (locked)
		sroce_spin_unlock(&r->lock);
	return err;
}

/*
 * The kernel copies a receive WQE out before it moves the consumer index
 * past it and never writes the ring, so every slot between the repost
 * cursor and the consumer still holds the WR this process wrote there, and
 * the kernel is done reading it. An RQ or an SRQ is taken in ring order
 * (an SRQ by whichever of its QPs receives next; their completions may
 * reach the CQs in another order): those are the oldest taken, in order.
 * Reposting copies each to the producer's slot (the same slot when the
 * ring is kept full: no copy). *cursor is the ring's repost cursor.
 */
INTF_INLINE int recv_repost(struct sroce_uring *r, uint32_t *cursor, bool locked, int num)
{
	uint32_t size = r->mask + 1;
	int err = 0;

	if (locked)
		sroce_spin_lock(&r->lock);
	/* Slots a ring's length behind the producer were written again. */
	if (r->idx - *cursor > size)
		*cursor = r->idx - size;
	/* Pairs with the kernel's store_release of the consumer index after it
	 * copied the WQEs out (WQ-C1). */
	r->peer = sroce_load_acquire(&r->hdr->consumer);
	/* Taken WRs fit the ring: num <= peer - cursor <= size - (idx - peer). */
	if (num < 0 || (uint32_t)num > r->peer - *cursor) {
		err = EINVAL;
	} else if (num) {
		for (uint32_t i = 0; i < (uint32_t)num; i++, r->idx++) {
			const void *src = sroce_ring_entry(r, *cursor + i);
			void *dst = sroce_ring_entry(r, r->idx);

			if (src != dst)
				memcpy(dst, src, r->stride);
		}
		*cursor += (uint32_t)num;
		sroce_wq_publish(r);
	}
	if (locked)
		sroce_spin_unlock(&r->lock);
	return err;
}

/*
 * The four tables of each family: L is true for the locked ones, G the
 * signalled flag (SROCE_WQE_SIGNALED or 0); S names their functions.
 */
#define RDMA_FAMILY(L, G, S)                                                                          \
	static int read_##S(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint32_t lkey,       \
			    uint64_t remote_addr, uint32_t rkey, uint64_t wr_id)                    \
	{                                                                                          \
		const struct wr_dest d = { .remote_addr = remote_addr, .rkey = rkey };             \
		return post(qp, L, G, SROCE_INTF_RDMA, IBV_WR_RDMA_READ, false, false, false, addr,  \
			    length, lkey, &d, wr_id);                                              \
	}                                                                                          \
	static int write_##S(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint32_t lkey,      \
			     uint64_t remote_addr, uint32_t rkey, uint64_t wr_id)                   \
	{                                                                                          \
		const struct wr_dest d = { .remote_addr = remote_addr, .rkey = rkey };             \
		return post(qp, L, G, SROCE_INTF_RDMA, IBV_WR_RDMA_WRITE, false, false, false, addr, \
			    length, lkey, &d, wr_id);                                              \
	}                                                                                          \
	static int write_imm_##S(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint32_t lkey,  \
				 uint32_t imm, uint64_t remote_addr, uint32_t rkey, uint64_t wr_id) \
	{                                                                                          \
		const struct wr_dest d = { .remote_addr = remote_addr, .rkey = rkey, .imm = imm }; \
		return post(qp, L, G, SROCE_INTF_RDMA, IBV_WR_RDMA_WRITE_WITH_IMM, false, false,      \
			    false, addr, length, lkey, &d, wr_id);                                 \
	}                                                                                          \
	static int write_inline_##S(struct ibv_qp *qp, uint64_t addr, uint32_t length,             \
				    uint64_t remote_addr, uint32_t rkey, uint64_t wr_id)            \
	{                                                                                          \
		const struct wr_dest d = { .remote_addr = remote_addr, .rkey = rkey };             \
		return post(qp, L, G, SROCE_INTF_RDMA, IBV_WR_RDMA_WRITE, true, false, false, addr,  \
			    length, 0, &d, wr_id);                                                 \
	}                                                                                          \
	static int write_pending_##S(struct ibv_qp *qp, uint64_t addr, uint32_t length,            \
				     uint32_t lkey, uint64_t remote_addr, uint32_t rkey,            \
				     uint64_t wr_id)                                                \
	{                                                                                          \
		const struct wr_dest d = { .remote_addr = remote_addr, .rkey = rkey };             \
		return post(qp, L, G, SROCE_INTF_RDMA, IBV_WR_RDMA_WRITE, false, false, true, addr,  \
			    length, lkey, &d, wr_id);                                              \
	}                                                                                          \
	static int flush_##S(struct ibv_qp *qp)                                                    \
	{                                                                                          \
		return flush_pending(qp, L);                                                       \
	}                                                                                          \
	static const struct srocedv_qp_ops_rdma rdma_ops_##S = {                                   \
		.read = read_##S,                                                                  \
		.write = write_##S,                                                                \
		.write_imm = write_imm_##S,                                                        \
		.write_inline = write_inline_##S,                                                  \
		.write_pending = write_pending_##S,                                                \
		.flush = flush_##S,                                                                \
	};

#define MSG_FAMILY(L, G, S)                                                                           \
	static int recv_##S(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint32_t lkey,       \
			    uint64_t wr_id)                                                         \
	{                                                                                          \
		return recv_one(&to_sqp(qp)->rq, L, addr, length, lkey, wr_id);                                 \
	}                                                                                          \
	static int recv_repost_##S(struct ibv_qp *qp, int num)                                     \
	{                                                                                          \
		return recv_repost(&to_sqp(qp)->rq, &to_sqp(qp)->intf.rq_repost, L, num);                                                    \
	}                                                                                          \
	static int send_##S(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint32_t lkey,       \
			    uint64_t wr_id)                                                         \
	{                                                                                          \
		const struct wr_dest d = { 0 };                                                    \
		return post(qp, L, G, SROCE_INTF_MSG, IBV_WR_SEND, false, false, false, addr, length,\
			    lkey, &d, wr_id);                                                      \
	}                                                                                          \
	static int send_imm_##S(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint32_t lkey,   \
				uint32_t imm, uint64_t wr_id)                                       \
	{                                                                                          \
		const struct wr_dest d = { .imm = imm };                                           \
		return post(qp, L, G, SROCE_INTF_MSG, IBV_WR_SEND_WITH_IMM, false, false, false,      \
			    addr, length, lkey, &d, wr_id);                                        \
	}                                                                                          \
	static int send_inline_##S(struct ibv_qp *qp, uint64_t addr, uint32_t length,              \
				   uint64_t wr_id)                                                  \
	{                                                                                          \
		const struct wr_dest d = { 0 };                                                    \
		return post(qp, L, G, SROCE_INTF_MSG, IBV_WR_SEND, true, false, false, addr, length, \
			    0, &d, wr_id);                                                         \
	}                                                                                          \
	static int sendto_##S(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint32_t lkey,     \
			      struct ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey,         \
			      uint64_t wr_id)                                                       \
	{                                                                                          \
		const struct wr_dest d = { .ah = ah, .remote_qpn = remote_qpn,                     \
					   .remote_qkey = remote_qkey };                           \
		return post(qp, L, G, SROCE_INTF_MSG, IBV_WR_SEND, false, true, false, addr, length, \
			    lkey, &d, wr_id);                                                      \
	}                                                                                          \
	static int sendto_imm_##S(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint32_t lkey, \
				  uint32_t imm, struct ibv_ah *ah, uint32_t remote_qpn,             \
				  uint32_t remote_qkey, uint64_t wr_id)                             \
	{                                                                                          \
		const struct wr_dest d = { .imm = imm, .ah = ah, .remote_qpn = remote_qpn,         \
					   .remote_qkey = remote_qkey };                           \
		return post(qp, L, G, SROCE_INTF_MSG, IBV_WR_SEND_WITH_IMM, false, true, false, addr, \
			    length, lkey, &d, wr_id);                                              \
	}                                                                                          \
	static int sendto_inline_##S(struct ibv_qp *qp, uint64_t addr, uint32_t length,            \
				     struct ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey,  \
				     uint64_t wr_id)                                                \
	{                                                                                          \
		const struct wr_dest d = { .ah = ah, .remote_qpn = remote_qpn,                     \
					   .remote_qkey = remote_qkey };                           \
		return post(qp, L, G, SROCE_INTF_MSG, IBV_WR_SEND, true, true, false, addr, length,  \
			    0, &d, wr_id);                                                         \
	}                                                                                          \
	static int send_pending_##S(struct ibv_qp *qp, uint64_t addr, uint32_t length,             \
				    uint32_t lkey, uint64_t wr_id)                                  \
	{                                                                                          \
		const struct wr_dest d = { 0 };                                                    \
		return post(qp, L, G, SROCE_INTF_MSG, IBV_WR_SEND, false, false, true, addr, length, \
			    lkey, &d, wr_id);                                                      \
	}                                                                                          \
	static int send_inline_pending_##S(struct ibv_qp *qp, uint64_t addr, uint32_t length,      \
					   uint64_t wr_id)                                          \
	{                                                                                          \
		const struct wr_dest d = { 0 };                                                    \
		return post(qp, L, G, SROCE_INTF_MSG, IBV_WR_SEND, true, false, true, addr, length,  \
			    0, &d, wr_id);                                                         \
	}                                                                                          \
	static int msg_flush_##S(struct ibv_qp *qp)                                                \
	{                                                                                          \
		return flush_pending(qp, L);                                                       \
	}                                                                                          \
	static const struct srocedv_qp_ops_msg msg_ops_##S = {                                     \
		.recv = recv_##S,                                                                  \
		.recv_repost = recv_repost_##S,                                                    \
		.send = send_##S,                                                                  \
		.send_imm = send_imm_##S,                                                          \
		.send_inline = send_inline_##S,                                                    \
		.sendto = sendto_##S,                                                              \
		.sendto_imm = sendto_imm_##S,                                                      \
		.sendto_inline = sendto_inline_##S,                                                \
		.send_pending = send_pending_##S,                                                  \
		.send_inline_pending = send_inline_pending_##S,                                    \
		.flush = msg_flush_##S,                                                            \
	};

RDMA_FAMILY(true, SROCE_WQE_SIGNALED, locked_sig)
RDMA_FAMILY(true, 0, locked_unsig)
RDMA_FAMILY(false, SROCE_WQE_SIGNALED, single_sig)
RDMA_FAMILY(false, 0, single_unsig)
MSG_FAMILY(true, SROCE_WQE_SIGNALED, locked_sig)
MSG_FAMILY(true, 0, locked_unsig)
MSG_FAMILY(false, SROCE_WQE_SIGNALED, single_sig)
MSG_FAMILY(false, 0, single_unsig)

const struct srocedv_qp_ops_rdma *sroce_intf_rdma_ops(bool single_threaded, bool signaled)
{
	if (single_threaded)
		return signaled ? &rdma_ops_single_sig : &rdma_ops_single_unsig;
	return signaled ? &rdma_ops_locked_sig : &rdma_ops_locked_unsig;
}

const struct srocedv_qp_ops_msg *sroce_intf_msg_ops(bool single_threaded, bool signaled)
{
	if (single_threaded)
		return signaled ? &msg_ops_single_sig : &msg_ops_single_unsig;
	return signaled ? &msg_ops_locked_sig : &msg_ops_locked_unsig;
}

/* The receive families of SRQs (basic and XRC) and WQs: the QP message
 * family's recv and recv_repost on the queue's ring. refused: the check
 * the queue's own post verb makes on every call (a WQ's state). */
#define RQ_FAMILY(K, T, TO, refused, L, S)                                                         \
	static int K##_recv_##S(struct T *q, uint64_t addr, uint32_t length, uint32_t lkey,          \
				uint64_t wr_id)                                                     \
	{                                                                                          \
		if (refused)                                                                       \
			return EINVAL;                                                             \
		return recv_one(&TO(q)->ring, L, addr, length, lkey, wr_id);                       \
	}                                                                                          \
	static int K##_recv_repost_##S(struct T *q, int num)                                       \
	{                                                                                          \
		if (refused)                                                                       \
			return EINVAL;                                                             \
		return recv_repost(&TO(q)->ring, &TO(q)->intf_repost, L, num);                     \
	}                                                                                          \
	static const struct srocedv_##K##_ops K##_ops_##S = {                                      \
		.recv = K##_recv_##S,                                                              \
		.recv_repost = K##_recv_repost_##S,                                                \
	};

RQ_FAMILY(srq, ibv_srq, to_ssrq, false, true, locked)
RQ_FAMILY(srq, ibv_srq, to_ssrq, false, false, single)
RQ_FAMILY(wq, ibv_wq, to_swq, q->state != IBV_WQS_RDY, true, locked)
RQ_FAMILY(wq, ibv_wq, to_swq, q->state != IBV_WQS_RDY, false, single)

const struct srocedv_srq_ops *sroce_intf_srq_ops(bool single_threaded)
{
	return single_threaded ? &srq_ops_single : &srq_ops_locked;
}

const struct srocedv_wq_ops *sroce_intf_wq_ops(bool single_threaded)
{
	return single_threaded ? &wq_ops_single : &wq_ops_locked;
}

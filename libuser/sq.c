// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sq.c - the send WQE as both posting interfaces write it: ibv_post_send
 * (qp.c) and the ibv_qp_ex builders (qp_ex.c). A slot is claimed, its
 * header, gather list or inline bytes written, and the caller advances the
 * producer copy; publication and the doorbell follow once per batch.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "sroce.h"

_Static_assert((unsigned)SROCE_WQE_FENCE == (unsigned)IBV_SEND_FENCE &&
		       (unsigned)SROCE_WQE_SIGNALED == (unsigned)IBV_SEND_SIGNALED &&
		       (unsigned)SROCE_WQE_SOLICITED == (unsigned)IBV_SEND_SOLICITED &&
		       (unsigned)SROCE_WQE_INLINE == (unsigned)IBV_SEND_INLINE &&
		       (unsigned)SROCE_WQE_IP_CSUM == (unsigned)IBV_SEND_IP_CSUM,
	       "WQE flags are the IBV_SEND_ values");

struct sroce_wqe *sroce_sq_claim(struct sroce_qp *qp, uint64_t wr_id, uint8_t opcode,
				 unsigned int send_flags)
{
	struct sroce_wqe *wqe = sroce_wq_next(&qp->sq);

	if (!wqe)
		return NULL;
	/* The slot is ours until published: a failure later leaves it. */
	*wqe = (struct sroce_wqe){
		.wr_id = wr_id,
		.opcode = opcode,
		.flags = (uint16_t)(send_flags & SROCE_WQE_FLAGS_MASK & ~SROCE_WQE_INLINE),
	};
	return wqe;
}

int sroce_wqe_set_sges(const struct sroce_qp *qp, struct sroce_wqe *wqe,
		       const struct ibv_sge *sg_list, size_t num_sge)
{
	if (num_sge > qp->max_send_sge)
		return EINVAL;
	wqe->flags &= (uint16_t)~SROCE_WQE_INLINE;
	wqe->inline_len = 0;
	wqe->num_sge = (uint8_t)num_sge;
	/* Entry by entry: one or two in the common case, where a memcpy call
	 * of a variable length costs more than the copy. */
	for (size_t i = 0; i < num_sge; i++)
		((struct sroce_sge *)(wqe + 1))[i] = (struct sroce_sge){
			.addr = sg_list[i].addr, .length = sg_list[i].length, .lkey = sg_list[i].lkey };
	return 0;
}

int sroce_wqe_add_inline(const struct sroce_qp *qp, struct sroce_wqe *wqe, const void *addr,
			 size_t length)
{
	uint32_t used = (wqe->flags & SROCE_WQE_INLINE) ? wqe->inline_len : 0;

	if (length > qp->max_inline - used)
		return EINVAL;
	if (length)
		memcpy((uint8_t *)(wqe + 1) + used, addr, length);
	wqe->flags |= SROCE_WQE_INLINE;
	wqe->num_sge = 0;
	wqe->inline_len = used + (uint32_t)length;
	return 0;
}

/* A post_send with no work requests: uverbs hands it to the driver, which
 * runs the requester on the published WQEs. */
int sroce_sq_doorbell(struct ibv_qp *ibqp)
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
	/* The same barrier pairs with the kernel's full barrier between
	 * clearing ACK_DUE and reading the producer again (SQ-A1): while an
	 * answer is due, the kernel fetches our WQEs when it arrives. */
	if (!to_sctx(ibqp->context)->ring_every_post &&
	    (sroce_load_acquire(&to_sqp(ibqp)->sq.hdr->kflags) & SROCE_SQ_ACK_DUE))
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

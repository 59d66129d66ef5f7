// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cq.c - completion queues. The kernel writes CQEs into the mapped ring;
 * poll_cq reads them without a system call. Creation, resize, destroy and
 * arming (ibv_cmd_req_notify_cq) are uverbs commands.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "infiniband/srocedv.h"
#include "sroce.h"

struct ibv_cq *sroce_create_cq(struct ibv_context *ibctx, int cqe, struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct ibv_create_cq cmd;
	struct {
		struct ib_uverbs_create_cq_resp ibv;
		struct sroce_create_cq_resp drv;
	} resp = {};
	struct sroce_cq *cq = calloc(1, sizeof(*cq));
	int err;

	if (!cq)
		return NULL;
	err = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq, &cmd, sizeof(cmd),
				&resp.ibv, sizeof(resp));
	err = sroce_cq_created(cq, ibctx->cmd_fd, err, &resp.drv);
	if (err) {
		errno = err;
		return NULL;
	}
	return &cq->vcq.cq;
}

int sroce_cq_created(struct sroce_cq *cq, int cmd_fd, int err, const struct sroce_create_cq_resp *resp)
{
	if (!err) {
		err = sroce_ring_map(&cq->ring, cmd_fd, &resp->ring, sizeof(struct sroce_cqe));
		if (err)
			ibv_cmd_destroy_cq(&cq->vcq.cq);
	}
	if (err) {
		free(cq);
		return err;
	}
	cq->ring.idx = cq->ring.hdr->consumer;
	sroce_spin_init(&cq->ring.lock);
	return 0;
}

int sroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	int err = sroce_intf_cq_dying(cq);

	if (err)
		return err;
	err = ibv_cmd_destroy_cq(ibcq);
	if (err) {
		sroce_intf_revive(&cq->intf_dying); /* the CQ lives on */
		return err;
	}
	sroce_ring_unmap(&cq->ring);
	free(cq);
	return 0;
}

/*
 * The kernel moves the pending CQEs into a new ring and sets its indices;
 * from then on the old ring receives nothing. Polling waits on the lock
 * meanwhile.
 */
int sroce_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct ibv_resize_cq cmd;
	struct {
		struct ib_uverbs_resize_cq_resp ibv;
		struct sroce_resize_cq_resp drv;
	} resp = {};
	struct sroce_uring fresh = {};
	int err;

	sroce_spin_lock(&cq->ring.lock);
	err = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv, sizeof(resp));
	if (err)
		goto out;
	/* If this fails the CQ is lost to this process (as with rxe): the
	 * kernel already completes into the new ring. */
	err = sroce_ring_map(&fresh, ibcq->context->cmd_fd, &resp.drv.ring, sizeof(struct sroce_cqe));
	if (err)
		goto out;
	sroce_ring_unmap(&cq->ring);
	cq->ring.map = fresh.map;
	cq->ring.bytes = fresh.bytes;
	cq->ring.hdr = fresh.hdr;
	cq->ring.entries = fresh.entries;
	cq->ring.mask = fresh.mask;
	cq->ring.stride = fresh.stride;
	cq->ring.idx = fresh.hdr->consumer;
out:
	sroce_spin_unlock(&cq->ring.lock);
	return err;
}

/* CQ moderation (IBV_CQ_ATTR_MODERATE): the kernel checks the caps. */
int sroce_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr)
{
	struct ibv_modify_cq cmd = {};

	if (attr->attr_mask & ~(uint32_t)IBV_CQ_ATTR_MODERATE)
		return EOPNOTSUPP;
	return ibv_cmd_modify_cq(ibcq, attr, &cmd, sizeof(cmd));
}

static void sroce_cqe_to_wc(const struct sroce_cqe *cqe, struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	/* imm_data (big-endian as sent) or invalidated_rkey: one union. */
	wc->imm_data = cqe->imm_or_inv;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = sroce_cqe_wc_flags(cqe);
	wc->pkey_index = cqe->pkey_index;
	wc->slid = 0;
	wc->sl = sroce_cqe_sl(cqe);
	wc->dlid_path_bits = 0;
}

int sroce_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct sroce_uring *r = &to_scq(ibcq)->ring;
	uint32_t avail;
	int n = 0;

	sroce_spin_lock(&r->lock);
	avail = sroce_cq_available(r);
	for (; n < ne && (uint32_t)n < avail; n++)
		sroce_cqe_to_wc(sroce_ring_entry(r, r->idx + n), &wc[n]);
	if (n) {
		r->idx += n;
		sroce_cq_release(r);
	}
	sroce_spin_unlock(&r->lock);
	return n;
}

/* The vector method on the CQ (abi/sroce-abi.h): hid in (0: a query), the
 * current handler id out. */
static int sroce_cq_vector_ioctl(struct ibv_cq *cq, uint32_t hid, uint32_t *cur)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attrs[3];
	} cmd = {
		.hdr = { .length = sizeof(cmd), .object_id = UVERBS_OBJECT_CQ,
			 .method_id = SROCE_METHOD_CQ_VECTOR, .num_attrs = 3 },
		.attrs = {
			{ .attr_id = SROCE_ATTR_CQ_VECTOR_CQ, .flags = UVERBS_ATTR_F_MANDATORY, .data = cq->handle },
			{ .attr_id = SROCE_ATTR_CQ_VECTOR_HID, .len = sizeof(hid), .data = hid },
			{ .attr_id = SROCE_ATTR_CQ_VECTOR_CUR, .len = sizeof(*cur), .flags = UVERBS_ATTR_F_MANDATORY,
			  .data = (uintptr_t)cur },
		},
	};

	if (!sroce_is_sroce_context(cq->context))
		return EOPNOTSUPP;
	return sroce_method_ioctl(cq->context, &cmd);
}

_Static_assert(SROCEDV_CQ_VECTOR_NO_CHANGE == SROCE_CQ_HID_NO_CHANGE &&
		       SROCEDV_CQ_VECTOR_DEFAULT == SROCE_CQ_HID_DEFAULT && SROCEDV_CQ_VECTOR(0) == 1,
	       "srocedv's handler ids are the kernel's");

int srocedv_modify_cq_vector(struct ibv_cq *cq, uint32_t hid)
{
	uint32_t cur;

	if (!cq)
		return EINVAL;
	return sroce_cq_vector_ioctl(cq, hid, &cur);
}

int srocedv_query_cq_vector(struct ibv_cq *cq, uint32_t *hid)
{
	if (!cq || !hid)
		return EINVAL;
	return sroce_cq_vector_ioctl(cq, SROCEDV_CQ_VECTOR_NO_CHANGE, hid);
}

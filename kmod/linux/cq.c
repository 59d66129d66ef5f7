// SPDX-License-Identifier: GPL-2.0
/*
 * cq.c - completion queues: creation with a ring the core writes CQEs into
 * (mapped for user CQs, polled through the core for kernel CQs), resize,
 * notification and the struct sroce_cqe -> ib_wc conversion.
 */
#include <linux/version.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"

/* CQEs converted per core call in poll_cq: bounded stack use. */
#define SROCE_POLL_CHUNK 8

/* Since 6.10 create_cq takes the whole uverbs attribute bundle (NULL for
 * kernel CQs). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
static int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			   struct uverbs_attr_bundle *attrs)
{
	struct ib_udata *udata = attrs ? &attrs->driver_udata : NULL;
#else
static int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			   struct ib_udata *udata)
{
#endif
	struct sroce_dev *sdev = to_sdev(ibcq->device);
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_create_cq_resp resp = {};
	struct sroce_create_cq_req req;
	struct sroce_core_cq_init init = {};
	int err;

	/* Completion timestamps are the device clock, sroce_env_now_ns. */
	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION)
		return -EOPNOTSUPP;
	if (attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	/* Without the ring's location the provider cannot use the CQ. */
	err = sroce_create_udata(udata, &req, sizeof(req), SROCE_CREATE_CQ_REQ_MASK, sizeof(resp));
	if (err)
		return err;

	mutex_init(&cq->resize_lock);
	sroce_cq_vec_init(cq, attr->comp_vector);
	cq->user = !!udata;
	err = sroce_ring_alloc(&cq->ring, attr->cqe, SROCE_MAX_CQE, sizeof(struct sroce_cqe),
			       cq->user);
	if (err)
		return err;
	init.owner = ibcq;
	init.ring = cq->ring.vaddr;
	init.log_size = cq->ring.log_size;
	init.user = cq->user;
	init.timestamp = !!(attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION);
	err = sroce_core_cq_create(sdev->core, &init, &cq->core);
	if (err)
		goto err_ring;
	if (udata) {
		err = sroce_ring_map(&cq->ring, udata, &resp.ring);
		if (err)
			goto err_core;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_core;
	}
	ibcq->cqe = 1u << cq->ring.log_size;
	return 0;

err_core:
	/* Never published: no batch can hold it as an event owner. */
	sroce_core_cq_destroy(cq->core);
err_ring:
	sroce_ring_free(&cq->ring);
	return err;
}

static int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);

	/* ib_core refuses while a QP or SRQ uses the CQ (usecnt). */
	sroce_core_cq_destroy(cq->core);
	/* Events are raised by batches flushed under RCU: after this no
	 * completion handler can still be called with ibcq. */
	synchronize_rcu();
	sroce_cq_vec_cancel(cq); /* and none waits on another CPU */
	sroce_ring_free(&cq->ring);
	return 0;
}

static int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_resize_cq_resp resp = {};
	struct sroce_ring ring, old;
	int err;

	if (cqe < 1)
		return -EINVAL;
	err = sroce_check_udata(udata, sizeof(resp));
	if (err)
		return err;

	mutex_lock(&cq->resize_lock);
	err = sroce_ring_alloc(&ring, cqe, SROCE_MAX_CQE,
			       sizeof(struct sroce_cqe), cq->user);
	if (err)
		goto out;
	/* Tell the provider where the new ring is before the core switches
	 * to it: once it has, the old ring receives nothing more, so a
	 * response lost after the switch would strand the provider. */
	if (udata) {
		err = sroce_ring_map(&ring, udata, &resp.ring);
		if (!err)
			err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_ring;
	}
	/* -EINVAL when the pending CQEs do not fit the new ring. */
	err = sroce_core_cq_resize(cq->core, ring.vaddr, ring.log_size);
	if (err)
		goto err_ring;
	old = cq->ring;
	cq->ring = ring;
	ibcq->cqe = 1u << ring.log_size;
	/* The core no longer touches the old ring. */
	sroce_ring_free(&old);
	goto out;

err_ring:
	sroce_ring_free(&ring);
out:
	mutex_unlock(&cq->resize_lock);
	return err;
}

/* CQ moderation: ib_core checked the attribute mask; the core checks the
 * caps. */
static int sroce_modify_cq(struct ib_cq *ibcq, u16 cq_count, u16 cq_period)
{
	return sroce_core_cq_modify(to_scq(ibcq)->core, cq_count, cq_period);
}

static int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	/* The core takes the IB_CQ_* encoding as it is. */
	return sroce_core_cq_req_notify(to_scq(ibcq)->core, flags);
}

static void sroce_cqe_to_wc(const struct sroce_cqe *cqe, struct ib_qp *qp, struct ib_wc *wc)
{
	int flags = 0;

	if (cqe->flags & SROCE_CQE_WITH_IMM)
		flags |= IB_WC_WITH_IMM;
	if (cqe->flags & SROCE_CQE_WITH_INV)
		flags |= IB_WC_WITH_INVALIDATE;
	if (cqe->flags & SROCE_CQE_GRH)
		flags |= IB_WC_GRH;
	*wc = (struct ib_wc){
		.wr_id = cqe->wr_id, /* or wr_cqe: the same 64 bits */
		.status = cqe->status,
		/* IB_WC_REG_MR's value differs between kernels (abi). */
		.opcode = cqe->opcode == SROCE_CQE_OP_REG_MR ? IB_WC_REG_MR : cqe->opcode,
		.vendor_err = cqe->vendor_err,
		.byte_len = cqe->byte_len,
		.qp = qp,
		.src_qp = cqe->src_qp,
		.pkey_index = cqe->pkey_index,
		.sl = cqe->sl,
		.port_num = 1,
	};
	/* imm_data stays big-endian, as the CQE carries it. */
	if (cqe->flags & SROCE_CQE_WITH_INV)
		wc->ex.invalidate_rkey = cqe->imm_or_inv;
	else
		wc->ex.imm_data = (__force __be32)cqe->imm_or_inv;
	/* ib_mad and rdma_cm build reply AHs from UD receives: they need to
	 * know whether the GRH area holds an IPv4 or an IPv6 header. */
	if ((qp->qp_type == IB_QPT_UD || qp->qp_type == IB_QPT_GSI) &&
	    (cqe->opcode & IB_WC_RECV)) {
		flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
		wc->network_hdr_type = cqe->network_hdr_type;
	}
	wc->wc_flags = flags;
}

static int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_cqe cqe[SROCE_POLL_CHUNK];
	void *owner[SROCE_POLL_CHUNK];
	int done = 0;

	/* A user CQ's consumer index belongs to the provider. */
	if (cq->user)
		return -EINVAL;
	while (done < num_entries) {
		int want = min(num_entries - done, SROCE_POLL_CHUNK);
		int n = sroce_core_cq_poll(cq->core, cqe, owner, want);
		int i;

		for (i = 0; i < n; i++) {
			/* The QP was destroyed after this completion was
			 * queued: its consumer expects no more of them, and
			 * an ib_wc without a QP would crash it. */
			if (!owner[i])
				continue;
			sroce_cqe_to_wc(&cqe[i], owner[i], &wc[done++]);
		}
		if (n < want)
			break;
	}
	return done;
}

const struct ib_device_ops sroce_cq_ops = {
	.create_cq = sroce_create_cq,
	.modify_cq = sroce_modify_cq,
	.destroy_cq = sroce_destroy_cq,
	.poll_cq = sroce_poll_cq,
	.req_notify_cq = sroce_req_notify_cq,
	.resize_cq = sroce_resize_cq,
	.get_vector_affinity = sroce_get_vector_affinity,

	INIT_RDMA_OBJ_SIZE(ib_cq, sroce_cq, ibcq),
};

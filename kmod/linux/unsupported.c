// SPDX-License-Identifier: GPL-2.0
/*
 * unsupported.c - verbs that ib_core requires every device to have but that
 * sroce does not implement yet (queues and CQs arrive with the reliable
 * transport). Each fails with EOPNOTSUPP, which kernel users and uverbs pass
 * on as "operation not supported": nothing is half-done.
 */
#include <linux/version.h>

#include "sroce.h"

static int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
			   struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	return 0; /* never created */
}

static int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			   const struct ib_send_wr **bad_wr)
{
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

static int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad_wr)
{
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

/* Since 6.10 create_cq takes the whole uverbs attribute bundle. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
static int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			   struct uverbs_attr_bundle *attrs)
#else
static int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			   struct ib_udata *udata)
#endif
{
	return -EOPNOTSUPP;
}

static int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	return 0; /* never created */
}

static int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	return -EOPNOTSUPP;
}

static int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	return -EOPNOTSUPP;
}

const struct ib_device_ops sroce_unsupported_ops = {
	.create_cq = sroce_create_cq,
	.create_qp = sroce_create_qp,
	.destroy_cq = sroce_destroy_cq,
	.destroy_qp = sroce_destroy_qp,
	.modify_qp = sroce_modify_qp,
	.poll_cq = sroce_poll_cq,
	.post_recv = sroce_post_recv,
	.post_send = sroce_post_send,
	.req_notify_cq = sroce_req_notify_cq,

	/* ib_core allocates these objects before calling create_*. */
	INIT_RDMA_OBJ_SIZE(ib_qp, sroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_cq, sroce_cq, ibcq),
};

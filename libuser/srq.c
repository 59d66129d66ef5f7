// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srq.c - shared receive queues, basic and XRC: uverbs commands for
 * control, and post_srq_recv into the mapped ring without a system call.
 */
#include <errno.h>
#include <stdlib.h>

#include "sroce.h"

struct ibv_srq *sroce_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	return sroce_create_srq_req(pd, attr, NULL);
}

/* After the create command: maps the ring, ready to post; or destroys the
 * SRQ and frees it. max_sge is what the kernel granted. 0 or the errno. */
static int sroce_srq_created(struct sroce_srq *srq, int cmd_fd, uint32_t max_sge,
			     const struct sroce_create_srq_resp *resp)
{
	uint32_t room;
	int err = sroce_ring_map(&srq->ring, cmd_fd, &resp->ring, sizeof(struct sroce_wqe));

	if (err) {
		ibv_cmd_destroy_srq(&srq->vsrq.srq);
		free(srq);
		return err;
	}
	/* Bounded by what a WQE slot holds. */
	room = (srq->ring.stride - sizeof(struct sroce_wqe)) / sizeof(struct sroce_sge);
	srq->max_sge = max_sge < room ? max_sge : room;
	srq->srqn = resp->srqn;
	srq->ring.mp_size = resp->mp_wr_buffer_sz;
	srq->ring.mp_align = resp->mp_packet_align_sz;
	srq->ring.idx = srq->ring.hdr->producer;
	srq->ring.peer = srq->ring.hdr->consumer;
	srq->intf_repost = srq->ring.idx;
	sroce_spin_init(&srq->ring.lock);
	return 0;
}

struct ibv_srq *sroce_create_srq_req(struct ibv_pd *pd, struct ibv_srq_init_attr *attr,
				     const struct sroce_create_srq_req *req)
{
	struct {
		struct ibv_create_srq ibv;
		struct sroce_create_srq_req drv;
	} cmd = { .drv = req ? *req : (struct sroce_create_srq_req){ 0 } };
	struct {
		struct ib_uverbs_create_srq_resp ibv;
		struct sroce_create_srq_resp drv;
	} resp = {};
	struct sroce_srq *srq = calloc(1, sizeof(*srq));
	int err;

	if (!srq)
		return NULL;
	err = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd.ibv, req ? sizeof(cmd) : sizeof(cmd.ibv),
				 &resp.ibv, sizeof(resp));
	if (err) {
		free(srq);
	} else {
		srq->vsrq.srq_type = IBV_SRQT_BASIC;
		/* attr->attr now holds what the kernel granted. */
		err = sroce_srq_created(srq, pd->context->cmd_fd, attr->attr.max_sge, &resp.drv);
	}
	if (err) {
		errno = err;
		return NULL;
	}
	return &srq->vsrq.srq;
}

/*
 * ibv_create_srq_ex: a basic SRQ, or an XRC SRQ with its domain and the CQ
 * its targets' receive completions go to. Tag matching SRQs: EOPNOTSUPP.
 */
struct ibv_srq *sroce_create_srq_ex(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *attr)
{
	return sroce_create_srq_ex_req(ctx, attr, NULL);
}

struct ibv_srq *sroce_create_srq_ex_req(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *attr,
					const struct sroce_create_srq_req *req)
{
	uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
			 IBV_SRQ_INIT_ATTR_CQ;
	struct {
		struct ibv_create_xsrq ibv;
		struct sroce_create_srq_req drv;
	} cmd = { .drv = req ? *req : (struct sroce_create_srq_req){ 0 } };
	struct {
		struct ib_uverbs_create_srq_resp ibv;
		struct sroce_create_srq_resp drv;
	} resp = {};
	bool xrc = (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type == IBV_SRQT_XRC;
	struct sroce_srq *srq;
	int err;

	if ((attr->comp_mask & ~known) ||
	    ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type != IBV_SRQT_BASIC && !xrc)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd || attr->pd->context != ctx ||
	    (xrc && (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) ||
		     !attr->xrcd || !attr->cq))) {
		errno = EINVAL;
		return NULL;
	}
	/* An XRC SRQ's completions go to its CQ: a multi-packet one's must
	 * read the offsets and flags (a basic SRQ's QPs are checked at create). */
	if (xrc && req && (req->comp_mask & SROCE_CREATE_REQ_MP_WR) && !sroce_cq_reads_mp(attr->cq)) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	/* Fills vsrq: type, and for XRC the domain, CQ and number. */
	err = ibv_cmd_create_srq_ex(ctx, &srq->vsrq, attr, &cmd.ibv, req ? sizeof(cmd) : sizeof(cmd.ibv), &resp.ibv,
				    sizeof(resp));
	if (err)
		free(srq);
	else
		err = sroce_srq_created(srq, ctx->cmd_fd, attr->attr.max_sge, &resp.drv);
	if (err) {
		errno = err;
		return NULL;
	}
	return &srq->vsrq.srq;
}

/* The number an XRC sender names (ibv_wr_set_xrc_srqn); a basic SRQ has
 * none to give (EOPNOTSUPP, as mlx4). */
int sroce_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	if (srq->vsrq.srq_type != IBV_SRQT_XRC)
		return EOPNOTSUPP;
	*srq_num = srq->vsrq.srq_num;
	return 0;
}

int sroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
	struct ibv_modify_srq cmd;

	return ibv_cmd_modify_srq(ibsrq, attr, mask, &cmd, sizeof(cmd));
}

int sroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int sroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	int err = sroce_intf_srq_dying(srq);

	if (err)
		return err;
	err = ibv_cmd_destroy_srq(ibsrq);
	if (err) {
		sroce_intf_revive(&srq->intf_dying); /* the SRQ lives on */
		return err;
	}
	sroce_ring_unmap(&srq->ring);
	free(srq);
	return 0;
}

int sroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	return sroce_post_recv_list(&srq->ring, srq->max_sge, wr, bad_wr);
}

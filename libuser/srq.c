// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srq.c - shared receive queues: uverbs commands for control, and
 * post_srq_recv into the mapped ring without a system call.
 */
#include <errno.h>
#include <stdlib.h>

#include "sroce.h"

struct ibv_srq *sroce_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	return sroce_create_srq_req(pd, attr, NULL);
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
	uint32_t room;
	int err;

	if (!srq)
		return NULL;
	err = ibv_cmd_create_srq(pd, &srq->ibv_srq, attr, &cmd.ibv, req ? sizeof(cmd) : sizeof(cmd.ibv),
				 &resp.ibv, sizeof(resp));
	if (err)
		goto err_free;
	err = sroce_ring_map(&srq->ring, pd->context->cmd_fd, &resp.drv.ring, sizeof(struct sroce_wqe));
	if (err)
		goto err_destroy;
	/* What the kernel granted (attr->attr was updated), bounded by what a
	 * WQE slot holds. */
	room = (srq->ring.stride - sizeof(struct sroce_wqe)) / sizeof(struct sroce_sge);
	srq->max_sge = attr->attr.max_sge < room ? attr->attr.max_sge : room;
	srq->srqn = resp.drv.srqn;
	srq->ring.idx = srq->ring.hdr->producer;
	srq->ring.peer = srq->ring.hdr->consumer;
	pthread_spin_init(&srq->ring.lock, PTHREAD_PROCESS_PRIVATE);
	return &srq->ibv_srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->ibv_srq);
err_free:
	free(srq);
	errno = err;
	return NULL;
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
	int err = ibv_cmd_destroy_srq(ibsrq);

	if (err)
		return err;
	sroce_ring_unmap(&srq->ring);
	pthread_spin_destroy(&srq->ring.lock);
	free(srq);
	return 0;
}

int sroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	uint32_t start;
	int err = 0;

	pthread_spin_lock(&srq->ring.lock);
	start = srq->ring.idx;
	for (; wr; wr = wr->next) {
		err = sroce_post_one_recv(&srq->ring, srq->max_sge, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	if (srq->ring.idx != start)
		sroce_wq_publish(&srq->ring);
	pthread_spin_unlock(&srq->ring.lock);
	return err;
}

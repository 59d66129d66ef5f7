// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wq.c - receive work queues, RSS indirection tables and an RSS QP's
 * hashing (Documentation/rss.md). A WQ is a receive ring mapped like a
 * QP's RQ: ibv_post_wq_recv writes it without a system call (WQ-P1 is
 * RQ-P1). Control is uverbs' extended commands.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sroce.h"

_Static_assert((int)SROCEDV_RSS_HASH_NONE == (int)SROCE_HASH_NONE &&
		       (int)SROCEDV_RSS_HASH_TCP_IPV6 == (int)SROCE_HASH_TCP_IPV6 &&
		       (int)SROCEDV_RSS_HASH_UDP_IPV6 == (int)SROCE_HASH_UDP_IPV6,
	       "srocedv's hash types are the CQE's");

/* RESET and ERR take no receives (EINVAL, nothing posted): what the kernel
 * would drop or flush at once. The state is the one last set through
 * ibv_modify_wq: after IBV_EVENT_WQ_FATAL (the kernel moved the WQ to ERR)
 * posts still land, uncompleted, until ibv_modify_wq to ERR flushes them
 * or RESET discards them (Documentation/rss.md). */
int sroce_post_wq_recv(struct ibv_wq *ibwq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct sroce_wq *wq = to_swq(ibwq);

	if (ibwq->state != IBV_WQS_RDY) {
		*bad_wr = wr;
		return EINVAL;
	}
	return sroce_post_recv_list(&wq->ring, wq->max_sge, wr, bad_wr);
}

struct ibv_wq *sroce_create_wq(struct ibv_context *ctx, struct ibv_wq_init_attr *attr)
{
	return sroce_create_wq_req(ctx, attr, NULL);
}

struct ibv_wq *sroce_create_wq_req(struct ibv_context *ctx, struct ibv_wq_init_attr *attr,
				   const struct sroce_create_wq_req *req)
{
	struct {
		struct ibv_create_wq ibv;
		struct sroce_create_wq_req drv;
	} cmd = { .drv = req ? *req : (struct sroce_create_wq_req){ 0 } };
	struct {
		struct ib_uverbs_ex_create_wq_resp ibv;
		struct sroce_create_wq_resp drv;
	} resp = {};
	struct sroce_wq *wq;
	uint32_t room;
	int err;

	/* No create flags (VLAN stripping, FCS...): no such hardware. */
	if (attr->wq_type != IBV_WQT_RQ || (attr->comp_mask & ~(uint32_t)IBV_WQ_INIT_ATTR_FLAGS) ||
	    ((attr->comp_mask & IBV_WQ_INIT_ATTR_FLAGS) && attr->create_flags)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* A multi-packet WQ's CQ reads the offsets and flags. */
	if (req && (req->comp_mask & SROCE_CREATE_REQ_MP_WR) && !sroce_cq_reads_mp(attr->cq)) {
		errno = EINVAL;
		return NULL;
	}
	wq = calloc(1, sizeof(*wq));
	if (!wq)
		return NULL;
	err = ibv_cmd_create_wq(ctx, attr, &wq->ibv_wq, &cmd.ibv, sizeof(cmd), &resp.ibv, sizeof(resp));
	if (err)
		goto err_free;
	err = sroce_ring_map(&wq->ring, ctx->cmd_fd, &resp.drv.ring, sizeof(struct sroce_wqe));
	if (err) {
		ibv_cmd_destroy_wq(&wq->ibv_wq);
		goto err_free;
	}
	room = (wq->ring.stride - sizeof(struct sroce_wqe)) / sizeof(struct sroce_sge);
	wq->max_sge = attr->max_sge < room ? attr->max_sge : room;
	wq->ring.idx = wq->ring.hdr->producer;
	wq->ring.peer = wq->ring.hdr->consumer;
	wq->ring.mp_size = resp.drv.mp_wr_buffer_sz;
	wq->ring.mp_align = resp.drv.mp_packet_align_sz;
	sroce_spin_init(&wq->ring.lock);
	wq->ibv_wq.post_recv = sroce_post_wq_recv;
	wq->ibv_wq.state = IBV_WQS_RESET;
	return &wq->ibv_wq;

err_free:
	free(wq);
	errno = err;
	return NULL;
}

int sroce_modify_wq(struct ibv_wq *ibwq, struct ibv_wq_attr *attr)
{
	struct ibv_modify_wq cmd = {};

	return ibv_cmd_modify_wq(ibwq, attr, &cmd, sizeof(cmd));
}

int sroce_destroy_wq(struct ibv_wq *ibwq)
{
	struct sroce_wq *wq = to_swq(ibwq);
	int err = sroce_intf_wq_dying(wq); /* EBUSY while a table holds it */

	if (err)
		return err;
	err = ibv_cmd_destroy_wq(ibwq);
	if (err) {
		sroce_intf_revive(&wq->intf_dying); /* the WQ lives on */
		return err;
	}
	sroce_ring_unmap(&wq->ring);
	free(wq);
	return 0;
}

struct ibv_rwq_ind_table *sroce_create_rwq_ind_table(struct ibv_context *ctx, struct ibv_rwq_ind_table_init_attr *attr)
{
	struct ib_uverbs_ex_create_rwq_ind_table_resp resp = {};
	struct ibv_rwq_ind_table *t;
	int err;

	if (attr->comp_mask) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	err = ibv_cmd_create_rwq_ind_table(ctx, attr, t, &resp, sizeof(resp));
	if (err) {
		free(t);
		errno = err;
		return NULL;
	}
	return t;
}

int sroce_destroy_rwq_ind_table(struct ibv_rwq_ind_table *t)
{
	int err = ibv_cmd_destroy_rwq_ind_table(t);

	if (!err)
		free(t);
	return err;
}

_Static_assert((uint64_t)SROCEDV_QP_INIT_ATTR_RSS_PAYLOAD == SROCE_CREATE_QP_REQ_RSS_PAYLOAD,
	       "the srocedv comp_mask bit is the kernel request's");

int sroce_rss_req(const struct ibv_qp_init_attr_ex *attr, struct sroce_create_qp_req *req)
{
	const struct ibv_rx_hash_conf *h = &attr->rx_hash_conf;
	bool xor = h->rx_hash_function == SROCEDV_RX_HASH_FUNC_XOR;

	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_RX_HASH) || attr->qp_type != IBV_QPT_UD)
		return EINVAL;
	if (h->rx_hash_function != IBV_RX_HASH_FUNC_TOEPLITZ && !xor)
		return EOPNOTSUPP;
	/* Toeplitz takes a 40-byte key (the kernel checks the length). */
	if (!xor && (!h->rx_hash_key || h->rx_hash_key_len > sizeof(req->rx_hash_key)))
		return EINVAL;
	req->comp_mask |= SROCE_CREATE_QP_REQ_RX_HASH;
	req->rx_hash_fields = h->rx_hash_fields_mask;
	req->rx_hash_function = xor ? SROCE_RX_HASH_XOR : SROCE_RX_HASH_TOEPLITZ;
	req->rx_hash_key_len = xor ? 0 : h->rx_hash_key_len;
	if (!xor)
		memcpy(req->rx_hash_key, h->rx_hash_key, h->rx_hash_key_len);
	return 0;
}

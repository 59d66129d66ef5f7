/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rss_qps.c - the seed's consecutive-QPN form of RSS (srocedv.h,
 * Documentation/rss.md), built from the WQ form: a WQ per child, their
 * indirection table, the children (UD QPs numbered inside one aligned
 * block, each receiving into its WQ; SROCE_CREATE_QP_REQ_RSS_CHILD), and
 * an RSS QP over the table as the context QP.
 */
#include <errno.h>
#include <stdlib.h>

#include "sroce.h"

/* The kernel's bound too (an aligned QPN block, an indirection table). */
#define RSS_UD_QPS_MAX_LOG2 8

static int check_attr(struct ibv_pd *pd, const struct srocedv_rss_ud_qps_attr *a)
{
	uint32_t i;

	if (!pd || !a)
		return EINVAL;
	if (!sroce_is_sroce_context(pd->context) || a->comp_mask)
		return EOPNOTSUPP;
	if (a->log2 > RSS_UD_QPS_MAX_LOG2 || !a->send_cq || !a->recv_cqs ||
	    (a->flags & ~(uint32_t)(SROCEDV_RSS_UD_QPS_PAYLOAD | SROCEDV_RSS_UD_QPS_DEFAULT)) ||
	    ((a->flags & SROCEDV_RSS_UD_QPS_DEFAULT) && a->default_index >= (1u << a->log2)))
		return EINVAL;
	for (i = 0; i < (1u << a->log2); i++)
		if (!a->recv_cqs[i])
			return EINVAL;
	return 0;
}

static struct ibv_wq *make_wq(struct ibv_pd *pd, const struct srocedv_rss_ud_qps_attr *a, struct ibv_cq *cq)
{
	struct ibv_wq_init_attr wa = {
		.wq_type = IBV_WQT_RQ,
		.max_wr = a->cap.max_recv_wr,
		.max_sge = a->cap.max_recv_sge,
		.pd = pd,
		.cq = cq,
		.wq_context = a->qp_context,
	};
	struct ibv_wq_attr rdy = { .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_RDY };
	struct ibv_wq *wq = ibv_create_wq(pd->context, &wa);
	int err;

	if (!wq)
		return NULL;
	err = ibv_modify_wq(wq, &rdy);
	if (err) {
		ibv_destroy_wq(wq);
		errno = err;
		return NULL;
	}
	return wq;
}

/* Child i: the first reserves the block, the others claim in it. */
static struct ibv_qp *make_child(struct ibv_pd *pd, const struct srocedv_rss_ud_qps_attr *a,
				 struct srocedv_rss_ud_qps *set, uint32_t i)
{
	struct ibv_qp_init_attr_ex ex = {
		.qp_context = a->qp_context,
		.send_cq = a->send_cq,
		.recv_cq = a->recv_cqs[i],
		.cap = a->cap,
		.qp_type = IBV_QPT_UD,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct sroce_create_qp_req req = {
		.comp_mask = SROCE_CREATE_QP_REQ_RSS_CHILD,
		.rss_child_wqn = set->wqs[i]->wq_num,
		.rss_block_base = i ? set->base_qpn : SROCE_RSS_BLOCK_NEW,
		.rss_block_log2 = a->log2,
		.rss_child_index = i,
	};
	struct ibv_qp *qp = sroce_create_qp_ex_req(pd->context, &ex, &req);

	if (qp)
		to_sqp(qp)->rwq = to_swq(set->wqs[i]);
	return qp;
}

static struct ibv_qp *make_context_qp(struct ibv_pd *pd, const struct srocedv_rss_ud_qps_attr *a,
				      struct srocedv_rss_ud_qps *set)
{
	struct ibv_qp_init_attr_ex ex = {
		.qp_context = a->qp_context,
		.send_cq = a->cap.max_send_wr ? a->send_cq : NULL,
		.cap = { .max_send_wr = a->cap.max_send_wr, .max_send_sge = a->cap.max_send_sge,
			 .max_inline_data = a->cap.max_inline_data },
		.qp_type = IBV_QPT_UD,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH,
		.pd = pd,
		.rwq_ind_tbl = set->table,
		.rx_hash_conf = a->rx_hash_conf,
	};
	struct sroce_create_qp_req req = { 0 };

	if (a->flags & SROCEDV_RSS_UD_QPS_PAYLOAD)
		req.comp_mask |= SROCE_CREATE_QP_REQ_RSS_PAYLOAD;
	if (a->flags & SROCEDV_RSS_UD_QPS_DEFAULT) {
		req.comp_mask |= SROCE_CREATE_QP_REQ_RSS_DEFAULT_WQ;
		req.rx_default_wqn = set->wqs[a->default_index]->wq_num;
	}
	return sroce_create_qp_ex_req(pd->context, &ex, &req);
}

struct srocedv_rss_ud_qps *srocedv_create_rss_ud_qps(struct ibv_pd *pd, const struct srocedv_rss_ud_qps_attr *attr)
{
	struct ibv_rwq_ind_table_init_attr ta = { 0 };
	struct srocedv_rss_ud_qps *set;
	int err = check_attr(pd, attr);
	uint32_t i, n;

	if (err) {
		errno = err;
		return NULL;
	}
	n = 1u << attr->log2;
	set = calloc(1, sizeof(*set));
	if (!set || !(set->qps = calloc(n, sizeof(*set->qps))) || !(set->wqs = calloc(n, sizeof(*set->wqs))))
		goto err;
	set->log2 = attr->log2;
	for (i = 0; i < n; i++)
		if (!(set->wqs[i] = make_wq(pd, attr, attr->recv_cqs[i])))
			goto err;
	ta.log_ind_tbl_size = attr->log2;
	ta.ind_tbl = set->wqs;
	set->table = ibv_create_rwq_ind_table(pd->context, &ta);
	if (!set->table)
		goto err;
	for (i = 0; i < n; i++) {
		set->qps[i] = make_child(pd, attr, set, i);
		if (!set->qps[i])
			goto err;
		if (!i)
			set->base_qpn = set->qps[0]->qp_num;
	}
	set->context_qp = make_context_qp(pd, attr, set);
	if (!set->context_qp)
		goto err;
	return set;

err:
	err = errno ? errno : ENOMEM;
	if (set && set->qps && set->wqs)
		srocedv_destroy_rss_ud_qps(set);
	else if (set) {
		free(set->qps);
		free(set);
	}
	errno = err;
	return NULL;
}

int srocedv_destroy_rss_ud_qps(struct srocedv_rss_ud_qps *set)
{
	uint32_t i, n;
	int err;

	if (!set)
		return EINVAL;
	n = 1u << set->log2;
	if (set->context_qp && (err = ibv_destroy_qp(set->context_qp)))
		return err;
	set->context_qp = NULL;
	for (i = n; i-- > 0;) {
		if (set->qps[i] && (err = ibv_destroy_qp(set->qps[i])))
			return err;
		set->qps[i] = NULL;
	}
	if (set->table && (err = ibv_destroy_rwq_ind_table(set->table)))
		return err;
	set->table = NULL;
	for (i = n; i-- > 0;) {
		if (set->wqs[i] && (err = ibv_destroy_wq(set->wqs[i])))
			return err;
		set->wqs[i] = NULL;
	}
	free(set->wqs);
	free(set->qps);
	free(set);
	return 0;
}

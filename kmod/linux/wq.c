// SPDX-License-Identifier: GPL-2.0
/*
 * wq.c - receive work queues (ibv_create_wq), RSS indirection tables and an
 * RSS QP's hashing (Documentation/rss.md). User space's only: ib_core has
 * no kernel verb to post to a WQ. A WQ's ring is mapped as an RQ's is; the
 * core checks the sizes, the state moves and the hash configuration.
 */
#include <linux/seq_file.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"
#include "wq.h"

/* Receive work queues and RSS indirection tables. */
struct sroce_wq {
	struct ib_wq ibwq;
	struct sroce_core_wq *core;
	struct sroce_ring ring;
	struct list_head dev_node; /* sroce_dev.wqs, for debugfs */
};

struct sroce_ind_table {
	struct ib_rwq_ind_table ibtbl;
	struct sroce_core_ind_table *core;
};

static inline struct sroce_wq *to_swq(struct ib_wq *ibwq)
{
	return container_of(ibwq, struct sroce_wq, ibwq);
}

static inline struct sroce_ind_table *to_sind(struct ib_rwq_ind_table *ibtbl)
{
	return container_of(ibtbl, struct sroce_ind_table, ibtbl);
}

static struct ib_wq *sroce_create_wq(struct ib_pd *ibpd, struct ib_wq_init_attr *init,
				     struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_create_wq_resp resp = {};
	struct sroce_create_wq_req req;
	struct sroce_core_wq_init wi = {};
	struct sroce_wq *wq;
	int err;

	if (!udata)
		return ERR_PTR(-EOPNOTSUPP);
	if (init->wq_type != IB_WQT_RQ || init->create_flags)
		return ERR_PTR(-EOPNOTSUPP);
	err = sroce_create_udata(udata, &req, sizeof(req), SROCE_CREATE_WQ_REQ_MASK,
				 offsetof(struct sroce_create_wq_resp, mp_wr_buffer_sz)) ?:
	      sroce_mp_wr_req(udata, req.comp_mask, &req.mp_wr_buffer_sz, &req.mp_packet_align_sz, true, sizeof(resp));
	if (err)
		return ERR_PTR(err);
	wq = kzalloc(sizeof(*wq), GFP_KERNEL);
	if (!wq)
		return ERR_PTR(-ENOMEM);
	wi.stride = sroce_core_wqe_stride(init->max_sge, 0);
	err = sroce_ring_alloc(&wq->ring, max(init->max_wr, 1u), SROCE_MAX_WQ_WR, wi.stride, true);
	if (err)
		goto err_free;
	wi.owner = &wq->ibwq;
	wi.pd = to_spd(ibpd)->core;
	wi.cq = to_scq(init->cq)->core;
	wi.ring = wq->ring.vaddr;
	wi.log_size = wq->ring.log_size;
	wi.max_sge = init->max_sge;
	wi.user = 1;
	wi.uctx = rdma_udata_to_drv_context(udata, struct sroce_ucontext, ibuc)->core;
	wi.mp_wr_buffer_sz = req.mp_wr_buffer_sz;
	wi.mp_packet_align_sz = req.mp_packet_align_sz;
	err = sroce_core_wq_create(sdev->core, &wi, &wq->core);
	if (err)
		goto err_ring;
	err = sroce_ring_map(&wq->ring, udata, &resp.ring);
	if (err)
		goto err_core;
	resp.wqn = sroce_core_wq_number(wq->core);
	resp.mp_wr_buffer_sz = req.mp_wr_buffer_sz;
	resp.mp_packet_align_sz = req.mp_packet_align_sz;
	err = sroce_copy_resp(udata, &resp, sizeof(resp));
	if (err)
		goto err_core;
	/* ib_core fills the rest (PD, CQ, type, uobject) after this returns. */
	wq->ibwq.wq_num = resp.wqn;
	wq->ibwq.state = IB_WQS_RESET;
	wq->ibwq.event_handler = init->event_handler;
	wq->ibwq.wq_context = init->wq_context;
	init->max_wr = 1u << wq->ring.log_size;
	mutex_lock(&sdev->wqs_lock);
	list_add_tail(&wq->dev_node, &sdev->wqs);
	mutex_unlock(&sdev->wqs_lock);
	return &wq->ibwq;

err_core:
	sroce_core_wq_destroy(wq->core);
err_ring:
	sroce_ring_free(&wq->ring);
err_free:
	kfree(wq);
	return ERR_PTR(err);
}

static int sroce_destroy_wq(struct ib_wq *ibwq, struct ib_udata *udata)
{
	struct sroce_wq *wq = to_swq(ibwq);
	struct sroce_dev *sdev = to_sdev(ibwq->device);
	/* ib_core refuses while a table holds the WQ (usecnt); an RSS QP that
	 * names it as its default, or a child, is the core's to count. */
	int err = sroce_core_wq_close(wq->core);

	if (err)
		return err;
	mutex_lock(&sdev->wqs_lock);
	list_del(&wq->dev_node);
	mutex_unlock(&sdev->wqs_lock);
	sroce_core_wq_destroy(wq->core);
	/* No WQ_FATAL event for ibwq can still be in a batch being flushed. */
	synchronize_rcu();
	sroce_ring_free(&wq->ring);
	kfree(wq);
	return 0;
}

static int sroce_modify_wq(struct ib_wq *ibwq, struct ib_wq_attr *attr, u32 mask, struct ib_udata *udata)
{
	struct sroce_wq *wq = to_swq(ibwq);
	struct sroce_env_batch b;
	int err;

	/* No WQ flags (VLAN stripping, FCS, ...): there is no such hardware. */
	if (mask & ~(IB_WQ_STATE | IB_WQ_CUR_STATE) || sroce_check_empty_req(udata))
		return -EOPNOTSUPP;
	if (!(mask & IB_WQ_STATE))
		return 0;
	sroce_batch_init(&b);
	err = sroce_core_wq_modify(wq->core, attr->wq_state, mask & IB_WQ_CUR_STATE ? (int)attr->curr_wq_state : -1,
				   &b);
	sroce_batch_flush(to_sdev(ibwq->device), &b);
	if (!err)
		ibwq->state = attr->wq_state;
	return err;
}

static int sroce_create_rwq_ind_table(struct ib_rwq_ind_table *ibtbl, struct ib_rwq_ind_table_init_attr *init,
				      struct ib_udata *udata)
{
	struct sroce_ind_table *t = to_sind(ibtbl);
	u32 i, n = 1u << init->log_ind_tbl_size;
	struct sroce_core_wq **wqs;
	int err;

	err = sroce_check_empty_req(udata);
	if (err)
		return err;
	if (init->log_ind_tbl_size > SROCE_MAX_RWQ_IND_TABLE_LOG)
		return -EINVAL;
	wqs = kcalloc(n, sizeof(*wqs), GFP_KERNEL);
	if (!wqs)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		wqs[i] = to_swq(init->ind_tbl[i])->core;
	err = sroce_core_ind_table_create(to_sdev(ibtbl->device)->core, init->log_ind_tbl_size, wqs, &t->core);
	kfree(wqs);
	return err;
}

static int sroce_destroy_rwq_ind_table(struct ib_rwq_ind_table *ibtbl)
{
	/* ib_core refuses while a QP uses the table (usecnt). */
	sroce_core_ind_table_destroy(to_sind(ibtbl)->core);
	return 0;
}

int sroce_rss_init(const struct ib_qp_init_attr *init, const struct sroce_create_qp_req *req,
		   struct sroce_rss_req *r, struct sroce_core_qp_init *qi)
{
	struct sroce_core_rss_init *ri = &r->ri;

	if (req->comp_mask & SROCE_CREATE_QP_REQ_RSS_CHILD) {
		if (init->rwq_ind_tbl || init->qp_type != IB_QPT_UD ||
		    req->comp_mask != SROCE_CREATE_QP_REQ_RSS_CHILD)
			return -EINVAL;
		/* Checked against the caller's context by the core. */
		r->rc.wqn = req->rss_child_wqn;
		r->rc.block_base = req->rss_block_base;
		r->rc.block_log2 = req->rss_block_log2;
		r->rc.index = req->rss_child_index;
		qi->rss_child = &r->rc;
		return 0;
	}
	if (!init->rwq_ind_tbl || !(req->comp_mask & SROCE_CREATE_QP_REQ_RX_HASH))
		return -EINVAL; /* hashing without a table, or a table without hashing */
	if (req->reserved0[0] || req->reserved0[1])
		return -EOPNOTSUPP;
	if (!(req->comp_mask & SROCE_CREATE_QP_REQ_RSS_DEFAULT_WQ) != !req->rx_default_wqn)
		return -EINVAL;
	memset(ri, 0, sizeof(*ri));
	ri->table = to_sind(init->rwq_ind_tbl)->core;
	ri->default_wqn = req->rx_default_wqn; /* checked against the caller's context by the core */
	ri->fields = req->rx_hash_fields;
	ri->func = req->rx_hash_function;
	ri->headers = req->comp_mask & SROCE_CREATE_QP_REQ_RSS_PAYLOAD ? SROCE_CORE_RSS_PAYLOAD : SROCE_CORE_RSS_OUTER;
	ri->key_len = req->rx_hash_key_len;
	memcpy(ri->key, req->rx_hash_key, sizeof(ri->key));
	qi->rss = ri;
	return 0;
}

const struct ib_device_ops sroce_wq_ops = {
	.create_wq = sroce_create_wq,
	.destroy_wq = sroce_destroy_wq,
	.modify_wq = sroce_modify_wq,
	.create_rwq_ind_table = sroce_create_rwq_ind_table,
	.destroy_rwq_ind_table = sroce_destroy_rwq_ind_table,

	INIT_RDMA_OBJ_SIZE(ib_rwq_ind_table, sroce_ind_table, ibtbl),
};

/* <debugfs>/sroce/<ibdev>/wqs: one line per WQ, its state and receives. */
int sroce_wqs_show(struct seq_file *m, struct sroce_dev *sdev)
{
	static const char *const states[] = { "RESET", "RDY", "ERR" };
	struct sroce_core_wq_view v;
	struct sroce_wq *wq;
	unsigned int i, st;

	mutex_lock(&sdev->wqs_lock);
	list_for_each_entry(wq, &sdev->wqs, dev_node) {
		sroce_core_wq_snapshot(wq->core, &v);
		st = sroce_core_wq_state(wq->core);
		seq_printf(m, "wqn 0x%x state %s", wq->ibwq.wq_num, st < ARRAY_SIZE(states) ? states[st] : "?");
		for (i = 0; i < sroce_core_wq_view_nfields; i++)
			seq_printf(m, " %s %llu", sroce_core_wq_view_fields[i].name,
				   sroce_view_value(&v, &sroce_core_wq_view_fields[i]));
		seq_putc(m, '\n');
	}
	mutex_unlock(&sdev->wqs_lock);
	return 0;
}

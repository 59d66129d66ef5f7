// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * intf.c - srocedv_query_intf and srocedv_release_intf (seed 004): every
 * check of a family is made here, once, and the caller gets a table whose
 * functions (intf_qp.c, intf_cq.c) make none. Also srocedv_modify_cq,
 * which sets the format the formatted CQ's table is made for.
 *
 * Each query allocates a handle; the caller's pointer is its ops, the
 * first member. Live handles are listed, so release recognises one of its
 * own and never reads a stale pointer. Signalling and locking are the
 * tables' own (a QP may hold a signalled and an unsignalled table); fence
 * and solicited are one word per QP and family, so a second table of the
 * family with others would change them under the first (EBUSY). Held
 * tables make destroy fail with EBUSY; an object whose destroy passed that
 * check is dying, and queries refuse it with EBUSY (it is freed next).
 * Queries, releases and those destroy checks are serialised by one lock:
 * none is on a fast path.
 */
#include <errno.h>
#include <stdlib.h>

#include "infiniband/srocedv.h"
#include "sroce.h"

struct sroce_intf {
	union { /* first: the caller's pointer */
		struct srocedv_qp_ops_rdma rdma;
		struct srocedv_qp_ops_msg msg;
		struct srocedv_cq_formatted_ops cq;
		struct srocedv_srq_ops srq;
		struct srocedv_wq_ops wq;
	} ops;
	enum srocedv_intf_family family;
	void *obj;
	struct sroce_intf *next;
};

static pthread_mutex_t intf_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sroce_intf *intf_live;

#define QP_MODE_FLAGS (SROCEDV_QP_OPS_UNSIGNALED | SROCEDV_QP_OPS_FENCE | SROCEDV_QP_OPS_SOLICITED)
#define QP_GROUPS                                                                        \
	(SROCEDV_QP_OPS_READ | SROCEDV_QP_OPS_WRITE | SROCEDV_QP_OPS_SEND | SROCEDV_QP_OPS_SENDTO | \
	 SROCEDV_QP_OPS_RECV)

/* The groups a QP can use, per family: its type, and the queues it has. A
 * send queue with inline room but no gather entry (max_send_sge 0) takes
 * inline sends as ibv_post_send does; READ has no inline form. */
static uint32_t qp_groups(const struct sroce_qp *qp, enum srocedv_intf_family family)
{
	uint32_t g = 0;
	bool sq = qp->sq.hdr && (qp->max_send_sge || qp->max_inline);
	uint32_t read = qp->max_send_sge ? SROCEDV_QP_OPS_READ : 0;

	switch (qp->vqp.qp.qp_type) {
	case IBV_QPT_RC:
		g = sq ? read | SROCEDV_QP_OPS_WRITE | SROCEDV_QP_OPS_SEND : 0;
		break;
	case IBV_QPT_UC:
		g = sq ? SROCEDV_QP_OPS_WRITE | SROCEDV_QP_OPS_SEND : 0;
		break;
	case IBV_QPT_UD:
		g = sq ? SROCEDV_QP_OPS_SENDTO : 0;
		break;
	default: /* XRC: a WR needs its SRQ number, which no function takes */
		return 0;
	}
	if (qp->rq.map && qp->max_recv_sge)
		g |= SROCEDV_QP_OPS_RECV;
	return g & (family == SROCEDV_INTF_QP_RDMA ? SROCEDV_QP_OPS_READ | SROCEDV_QP_OPS_WRITE
						   : SROCEDV_QP_OPS_SEND | SROCEDV_QP_OPS_SENDTO |
							     SROCEDV_QP_OPS_RECV);
}

/* The table's entries outside the granted groups become NULL, and so do
 * those that write a gather entry when the QP has none (inline only): the
 * functions check nothing per call. */
static void qp_ops_trim(struct sroce_intf *h, uint32_t groups, bool gather)
{
	if (h->family == SROCEDV_INTF_QP_RDMA) {
		if (!(groups & SROCEDV_QP_OPS_READ))
			h->ops.rdma.read = NULL;
		if (!(groups & SROCEDV_QP_OPS_WRITE)) {
			h->ops.rdma.write = NULL;
			h->ops.rdma.write_imm = NULL;
			h->ops.rdma.write_inline = NULL;
			h->ops.rdma.write_pending = NULL;
			h->ops.rdma.flush = NULL;
		}
		if (!gather) { /* READ was not granted */
			h->ops.rdma.write = NULL;
			h->ops.rdma.write_imm = NULL;
			h->ops.rdma.write_pending = NULL;
		}
		return;
	}
	if (!(groups & SROCEDV_QP_OPS_RECV)) {
		h->ops.msg.recv = NULL;
		h->ops.msg.recv_repost = NULL;
	}
	if (!(groups & SROCEDV_QP_OPS_SEND)) {
		h->ops.msg.send = NULL;
		h->ops.msg.send_imm = NULL;
		h->ops.msg.send_inline = NULL;
		h->ops.msg.send_pending = NULL;
		h->ops.msg.send_inline_pending = NULL;
	}
	if (!(groups & SROCEDV_QP_OPS_SENDTO)) {
		h->ops.msg.sendto = NULL;
		h->ops.msg.sendto_imm = NULL;
		h->ops.msg.sendto_inline = NULL;
	}
	if (!gather) {
		h->ops.msg.send = NULL;
		h->ops.msg.send_imm = NULL;
		h->ops.msg.send_pending = NULL;
		h->ops.msg.sendto = NULL;
		h->ops.msg.sendto_imm = NULL;
	}
	if (!(groups & (SROCEDV_QP_OPS_SEND | SROCEDV_QP_OPS_SENDTO)))
		h->ops.msg.flush = NULL;
}

/* A QP family's table into h; 0 or the errno. Under intf_lock. */
static int qp_table(struct sroce_intf *h, const struct srocedv_query_intf_params *p)
{
	struct ibv_qp *ibqp = p->obj;
	struct sroce_qp *qp;
	int fam = p->intf == SROCEDV_INTF_QP_RDMA ? SROCE_INTF_RDMA : SROCE_INTF_MSG;
	uint32_t can, want, mode = p->family_flags & QP_MODE_FLAGS;
	uint16_t wqe_flags;
	bool single = p->flags & SROCEDV_INTF_FLAG_SINGLE_THREADED;

	if (ibqp->context != h->obj)
		return EINVAL;
	qp = to_sqp(ibqp);
	if (qp->intf.dying)
		return EBUSY;
	if (p->family_flags & ~(QP_MODE_FLAGS | QP_GROUPS))
		return EINVAL;
	can = qp_groups(qp, p->intf);
	want = (p->family_flags & QP_GROUPS) ? p->family_flags & QP_GROUPS : can;
	if (!want || (want & ~can))
		return EINVAL;
	/* Sends need RTS (the QP may go on to SQD or ERR, which flush them);
	 * receives anything but RESET. */
	if (((want & ~SROCEDV_QP_OPS_RECV) && ibqp->state != IBV_QPS_RTS) ||
	    ((want & SROCEDV_QP_OPS_RECV) && ibqp->state == IBV_QPS_RESET))
		return EINVAL;
	wqe_flags = (uint16_t)(((mode & SROCEDV_QP_OPS_FENCE) ? SROCE_WQE_FENCE : 0) |
			       ((mode & SROCEDV_QP_OPS_SOLICITED) ? SROCE_WQE_SOLICITED : 0));
	if (qp->intf.refs[fam] && qp->intf.wqe_flags[fam] != wqe_flags)
		return EBUSY;
	qp->intf.refs[fam]++;
	qp->intf.wqe_flags[fam] = wqe_flags;
	if (p->intf == SROCEDV_INTF_QP_RDMA)
		h->ops.rdma = *sroce_intf_rdma_ops(single, !(mode & SROCEDV_QP_OPS_UNSIGNALED));
	else
		h->ops.msg = *sroce_intf_msg_ops(single, !(mode & SROCEDV_QP_OPS_UNSIGNALED));
	qp_ops_trim(h, want, qp->max_send_sge);
	h->obj = qp;
	return 0;
}

static int cq_table(struct sroce_intf *h, const struct srocedv_query_intf_params *p)
{
	struct ibv_cq *ibcq = p->obj;
	struct sroce_cq *cq;
	const struct srocedv_cq_formatted_ops *ops;

	if (ibcq->context != h->obj || p->family_flags)
		return EINVAL;
	cq = to_scq(ibcq);
	if (cq->intf_dying)
		return EBUSY;
	ops = sroce_intf_cq_ops(cq->format_mask, p->flags & SROCEDV_INTF_FLAG_SINGLE_THREADED);
	if (!ops)
		return EINVAL; /* no format set */
	cq->intf_refs++;
	h->ops.cq = *ops;
	h->obj = cq;
	return 0;
}

static int srq_table(struct sroce_intf *h, const struct srocedv_query_intf_params *p)
{
	struct ibv_srq *ibsrq = p->obj;
	struct sroce_srq *srq;

	if (ibsrq->context != h->obj || p->family_flags)
		return EINVAL;
	srq = to_ssrq(ibsrq);
	if (srq->intf_dying)
		return EBUSY;
	if (!srq->max_sge)
		return EINVAL; /* recv writes one scatter entry */
	srq->intf_refs++;
	h->ops.srq = *sroce_intf_srq_ops(p->flags & SROCEDV_INTF_FLAG_SINGLE_THREADED);
	h->obj = srq;
	return 0;
}

static int wq_table(struct sroce_intf *h, const struct srocedv_query_intf_params *p)
{
	struct ibv_wq *ibwq = p->obj;
	struct sroce_wq *wq;

	if (ibwq->context != h->obj || p->family_flags || ibwq->wq_type != IBV_WQT_RQ)
		return EINVAL;
	wq = to_swq(ibwq);
	if (wq->intf_dying)
		return EBUSY;
	if (!wq->max_sge)
		return EINVAL; /* recv writes one scatter entry */
	wq->intf_refs++;
	h->ops.wq = *sroce_intf_wq_ops(p->flags & SROCEDV_INTF_FLAG_SINGLE_THREADED);
	h->obj = wq;
	return 0;
}

void *srocedv_query_intf(struct ibv_context *ibctx, struct srocedv_query_intf_params *p)
{
	struct sroce_intf *h;
	int err;

	if (!ibctx || !p || !p->obj) {
		errno = EINVAL;
		return NULL;
	}
	if (!sroce_is_sroce_context(ibctx) || p->comp_mask || p->family_params ||
	    p->intf < SROCEDV_INTF_QP_RDMA || p->intf > SROCEDV_INTF_WQ_RECV ||
	    p->intf_version != SROCEDV_INTF_VERSION) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (p->flags & ~(uint32_t)SROCEDV_INTF_FLAG_SINGLE_THREADED) {
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->family = p->intf;
	h->obj = ibctx; /* the tables check the object is the context's */
	pthread_mutex_lock(&intf_lock);
	switch (p->intf) {
	case SROCEDV_INTF_CQ_FORMATTED:
		err = cq_table(h, p);
		break;
	case SROCEDV_INTF_SRQ_RECV:
		err = srq_table(h, p);
		break;
	case SROCEDV_INTF_WQ_RECV:
		err = wq_table(h, p);
		break;
	default:
		err = qp_table(h, p);
	}
	if (!err) {
		h->next = intf_live;
		intf_live = h;
	}
	pthread_mutex_unlock(&intf_lock);
	if (err) {
		free(h);
		errno = err;
		return NULL;
	}
	return &h->ops;
}

int srocedv_release_intf(struct ibv_context *ibctx, void *intf)
{
	struct sroce_intf **pp, *h = NULL;

	(void)ibctx;
	pthread_mutex_lock(&intf_lock);
	for (pp = &intf_live; *pp; pp = &(*pp)->next) {
		if ((void *)&(*pp)->ops == intf) {
			h = *pp;
			*pp = h->next;
			break;
		}
	}
	if (h && h->family == SROCEDV_INTF_CQ_FORMATTED) {
		((struct sroce_cq *)h->obj)->intf_refs--;
	} else if (h && h->family == SROCEDV_INTF_SRQ_RECV) {
		((struct sroce_srq *)h->obj)->intf_refs--;
	} else if (h && h->family == SROCEDV_INTF_WQ_RECV) {
		((struct sroce_wq *)h->obj)->intf_refs--;
	} else if (h) {
		struct sroce_qp *qp = h->obj;

		qp->intf.refs[h->family == SROCEDV_INTF_QP_RDMA ? SROCE_INTF_RDMA : SROCE_INTF_MSG]--;
	}
	pthread_mutex_unlock(&intf_lock);
	if (!h)
		return EINVAL;
	free(h);
	return 0;
}

/* EBUSY while any of the counts of held tables is non-zero (b may be NULL).
 * Else the object is marked dying under the same lock: a query between
 * this check and destroy's free would hand out a table of freed memory. */
static int refs_busy(const uint32_t *a, const uint32_t *b, bool *dying)
{
	int busy;

	pthread_mutex_lock(&intf_lock);
	busy = *a || (b && *b);
	if (!busy)
		*dying = true;
	pthread_mutex_unlock(&intf_lock);
	return busy ? EBUSY : 0;
}

int sroce_intf_qp_dying(struct sroce_qp *qp)
{
	return refs_busy(&qp->intf.refs[SROCE_INTF_RDMA], &qp->intf.refs[SROCE_INTF_MSG], &qp->intf.dying);
}

int sroce_intf_cq_dying(struct sroce_cq *cq)
{
	return refs_busy(&cq->intf_refs, NULL, &cq->intf_dying);
}

int sroce_intf_srq_dying(struct sroce_srq *srq)
{
	return refs_busy(&srq->intf_refs, NULL, &srq->intf_dying);
}

int sroce_intf_wq_dying(struct sroce_wq *wq)
{
	return refs_busy(&wq->intf_refs, NULL, &wq->intf_dying);
}

/* The kernel refused the destroy: the object lives on, queries take it. */
void sroce_intf_revive(bool *dying)
{
	pthread_mutex_lock(&intf_lock);
	*dying = false;
	pthread_mutex_unlock(&intf_lock);
}

int srocedv_modify_cq(struct ibv_cq *ibcq, struct srocedv_cq_attr *attr, int attr_mask)
{
	struct sroce_cq *cq;
	uint64_t fmt;
	int err = 0;

	if (!ibcq || !attr)
		return EINVAL;
	if (!sroce_is_sroce_context(ibcq->context) ||
	    (attr_mask & ~(SROCEDV_CQ_MODERATION | SROCEDV_CQ_FORMAT_MASK)))
		return EOPNOTSUPP;
	cq = to_scq(ibcq);
	fmt = attr->format_mask;
	if ((attr_mask & SROCEDV_CQ_FORMAT_MASK) &&
	    (!sroce_intf_cq_ops(fmt, false) ||
	     ((fmt & SROCEDV_WC_TS) && !(cq->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)) ||
	     ((fmt & SROCEDV_WC_MP_WR) && !sroce_cq_reads_mp(ibcq))))
		return EINVAL;
	/* Held over the moderation command too: nothing changes when the
	 * format is refused. */
	pthread_mutex_lock(&intf_lock);
	if ((attr_mask & SROCEDV_CQ_FORMAT_MASK) && cq->intf_refs && cq->format_mask != fmt)
		err = EBUSY;
	if (!err && (attr_mask & SROCEDV_CQ_MODERATION)) {
		struct ibv_modify_cq_attr mod = {
			.attr_mask = IBV_CQ_ATTR_MODERATE,
			.moderate = { .cq_count = attr->moderation.cq_count,
				      .cq_period = attr->moderation.cq_period },
		};

		err = ibv_modify_cq(ibcq, &mod);
	}
	if (!err && (attr_mask & SROCEDV_CQ_FORMAT_MASK))
		cq->format_mask = fmt;
	pthread_mutex_unlock(&intf_lock);
	return err;
}

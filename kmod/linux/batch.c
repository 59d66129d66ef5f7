// SPDX-License-Identifier: GPL-2.0
/*
 * batch.c - the batches of env.h: what a core call wants sent and raised,
 * done by the glue after the call returned, with no core lock held.
 *
 * RCU rule (see also sroce.h and Documentation/transport.md): a batch is an
 * RCU read-side section from sroce_batch_init to sroce_batch_flush, so the
 * core call made with it must not sleep. An event names its owner (ib_cq,
 * ib_qp, ib_srq, ib_wq) by a raw pointer; the owner's destroy calls the
 * core destroy, then synchronize_rcu(), then lets ib_core free the object.
 * Any batch that could still hold an event for it started before the
 * synchronize_rcu() and has been flushed when it returns. A QP counts its
 * events in flight instead and its destroy waits for that count to reach
 * zero (sroce_qp_wait_events): no grace period per QP.
 *
 * Capacity: SROCE_BATCH_EVENTS distinct events. env.h states how the core
 * stays within it (one QP, its CQs and SRQ per batch; the SQ poller flushes
 * a batch per QP); an overflow is a core bug, warned once.
 */
#include <linux/bug.h>
#include <linux/rcupdate.h>
#include <linux/wait_bit.h>

#include "sroce.h"

void sroce_batch_init(struct sroce_env_batch *b)
	__acquires(RCU)
{
	b->paths = NULL;
	b->nevents = 0;
	rcu_read_lock();
}
SROCE_EXPORT_FOR_TESTS(sroce_batch_init);

/* The affiliated asynchronous events of a QP: their owner is an ib_qp. */
static bool sroce_qp_event(int kind)
{
	switch (kind) {
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
	case IB_EVENT_COMM_EST:
	case IB_EVENT_SQ_DRAINED:
	case IB_EVENT_PATH_MIG:
	case IB_EVENT_PATH_MIG_ERR:
	case IB_EVENT_QP_LAST_WQE_REACHED:
		return true;
	default:
		return false;
	}
}

void sroce_qp_wait_events(struct sroce_qp *qp)
{
	wait_var_event(&qp->events_inflight, !atomic_read_acquire(&qp->events_inflight));
}
SROCE_EXPORT_FOR_TESTS(sroce_qp_wait_events);

void sroce_env_event(struct sroce_env_batch *b, void *owner, int kind)
{
	unsigned int i;

	for (i = 0; i < b->nevents; i++)
		if (b->events[i].owner == owner && b->events[i].kind == kind)
			return; /* one call reports them all */
	if (WARN_ONCE(b->nevents == SROCE_BATCH_EVENTS, "sroce: batch event overflow, event %d dropped\n",
		      kind))
		return;
	b->events[b->nevents].owner = owner;
	b->events[b->nevents].kind = kind;
	b->nevents++;
	if (sroce_qp_event(kind))
		atomic_inc(&to_sqp(owner)->events_inflight);
}
SROCE_EXPORT_FOR_TESTS(sroce_env_event);

static void sroce_raise(const struct sroce_batch_event *e)
{
	struct ib_event ev = { .event = e->kind };

	if (e->kind == SROCE_ENV_EVENT_COMP) {
		sroce_cq_comp_event(to_scq(e->owner)); /* on its vector's CPU */
		return;
	}
	/* The owner's type follows from the event. */
	if (sroce_qp_event(e->kind)) {
		struct ib_qp *qp = e->owner;

		ev.device = qp->device;
		ev.element.qp = qp;
		if (qp->event_handler)
			qp->event_handler(&ev, qp->qp_context);
		return;
	}
	switch (e->kind) {
	case IB_EVENT_CQ_ERR: {
		struct ib_cq *cq = e->owner;

		ev.device = cq->device;
		ev.element.cq = cq;
		if (cq->event_handler)
			cq->event_handler(&ev, cq->cq_context);
		return;
	}
	case IB_EVENT_SRQ_ERR:
	case IB_EVENT_SRQ_LIMIT_REACHED: {
		struct ib_srq *srq = e->owner;

		ev.device = srq->device;
		ev.element.srq = srq;
		if (srq->event_handler)
			srq->event_handler(&ev, srq->srq_context);
		return;
	}
	case IB_EVENT_WQ_FATAL: {
		struct ib_wq *wq = e->owner;

		ev.device = wq->device;
		ev.element.wq = wq;
		if (wq->event_handler)
			wq->event_handler(&ev, wq->wq_context);
		return;
	}
	default:
		/* Device and port events have no owner object: a core bug. */
		WARN_ONCE(1, "sroce: event %d has no owner type\n", e->kind);
	}
}

void sroce_batch_flush(struct sroce_dev *sdev, struct sroce_env_batch *b)
	__releases(RCU)
{
	unsigned int i;

	/* Packets first: the peer's progress need not wait for our
	 * consumers' handlers. In each path's order (path.c). */
	sroce_path_tx_flush(sdev, b);
	for (i = 0; i < b->nevents; i++) {
		const struct sroce_batch_event *e = &b->events[i];

		sroce_raise(e);
		/* Fully ordered: a destroy that reads zero runs after the
		 * handler; the wake reads only the counter's address. */
		if (sroce_qp_event(e->kind) && atomic_dec_and_test(&to_sqp(e->owner)->events_inflight))
			wake_up_var(&to_sqp(e->owner)->events_inflight);
	}
	b->nevents = 0;
	rcu_read_unlock();
}
SROCE_EXPORT_FOR_TESTS(sroce_batch_flush);

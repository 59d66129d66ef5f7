// SPDX-License-Identifier: GPL-2.0
/*
 * glue.c - tests of the data-path services of sroce.ko's glue that need no
 * device: packets (kmod/linux/pkt.c), batches (batch.c), timers and work
 * (timer.c) and the ICRC's CRC-32 (crc.c), through the symbols sroce.ko
 * exports in the namespace SROCE_SELFTEST. Read <debugfs>/sroce_selftest/glue
 * to run them (main.c).
 */
#include <linux/completion.h>
#include <linux/crc32.h>
#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "sroce.h"
#include "selftest.h"

/* ---- packets ------------------------------------------------------------ */

#define ST_HEAD 40
#define ST_FRAG0 1000
#define ST_FRAG1 3000
#define ST_TAIL 500 /* in a frag_list skb */
#define ST_TOTAL (ST_HEAD + ST_FRAG0 + ST_FRAG1 + ST_TAIL)

void st_fill(u8 *p, unsigned int len, unsigned int start)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		p[i] = (u8)((start + i) * 7 + 3);
}

static bool st_add_frag(struct sk_buff *skb, int i, unsigned int off, unsigned int len,
			unsigned int start)
{
	struct page *page = alloc_page(GFP_KERNEL);

	if (!page)
		return false;
	st_fill(page_address(page) + off, len, start);
	skb_add_rx_frag(skb, i, page, off, len, PAGE_SIZE);
	return true;
}

/* 40 linear bytes, two page fragments, and a frag_list skb: the shapes GRO
 * and drivers hand to UDP. The flat copy of the same bytes is the reference. */
static struct sk_buff *st_nonlinear_skb(void)
{
	struct sk_buff *skb = alloc_skb(ST_HEAD, GFP_KERNEL), *tail;

	if (!skb)
		return NULL;
	st_fill(skb_put(skb, ST_HEAD), ST_HEAD, 0);
	if (!st_add_frag(skb, 0, 100, ST_FRAG0, ST_HEAD) ||
	    !st_add_frag(skb, 1, 50, ST_FRAG1, ST_HEAD + ST_FRAG0))
		goto err;
	tail = alloc_skb(ST_TAIL, GFP_KERNEL);
	if (!tail)
		goto err;
	st_fill(skb_put(tail, ST_TAIL), ST_TAIL, ST_HEAD + ST_FRAG0 + ST_FRAG1);
	skb_shinfo(skb)->frag_list = tail;
	skb->len += ST_TAIL;
	skb->data_len += ST_TAIL;
	skb->truesize += tail->truesize;
	return skb;
err:
	kfree_skb(skb);
	return NULL;
}

static void st_pkt_ranges(struct st_ctx *ctx, struct sk_buff *skb, const u8 *flat, const char *what)
{
	static const struct { unsigned int off, len; } r[] = {
		{ 0, ST_TOTAL }, { 0, 1 }, { 39, 2 }, { 30, 1100 }, { ST_HEAD + ST_FRAG0 - 1, 2 },
		{ 1, ST_TOTAL - 2 }, { ST_TOTAL - 1, 1 }, { ST_TOTAL, 0 }, { 4000, 540 },
	};
	const struct sroce_env_pkt *pkt = (const struct sroce_env_pkt *)skb;
	unsigned int total = skb->len, i;
	u8 *buf = kmalloc(ST_TOTAL, GFP_KERNEL);
	char name[64];

	if (!buf) {
		ST_CHECK(ctx, what, false, "no memory");
		return;
	}
	for (i = 0; i < ARRAY_SIZE(r); i++) {
		unsigned int off = r[i].off, len = r[i].len;
		u32 seed = 0xffffffff - i, crc;
		int err;

		if (off + len > total)
			continue;
		memset(buf, 0, ST_TOTAL);
		err = sroce_env_pkt_read(pkt, off, buf, len);
		snprintf(name, sizeof(name), "%s_read_%u_%u", what, off, len);
		ST_CHECK(ctx, name, !err && !memcmp(buf, flat + off, len), "err %d", err);
		crc = sroce_env_pkt_crc32(pkt, off, len, seed);
		snprintf(name, sizeof(name), "%s_crc32_%u_%u", what, off, len);
		ST_CHECK(ctx, name, crc == crc32_le(seed, flat + off, len), "%08x != %08x", crc,
			 crc32_le(seed, flat + off, len));
	}
	/* Out of range, including offsets and lengths that overflow. */
	snprintf(name, sizeof(name), "%s_read_out_of_range", what);
	ST_CHECK(ctx, name,
		 sroce_env_pkt_read(pkt, total, buf, 1) == -EFAULT &&
			 sroce_env_pkt_read(pkt, 0, buf, total + 1) == -EFAULT &&
			 sroce_env_pkt_read(pkt, UINT_MAX, buf, 2) == -EFAULT &&
			 sroce_env_pkt_read(pkt, 2, buf, UINT_MAX) == -EFAULT &&
			 sroce_env_pkt_read(pkt, total, buf, 0) == 0,
		 "a read outside [0, %u) was allowed", total);
	kfree(buf);
}

static void st_packets(struct st_ctx *ctx)
{
	u8 *flat = kmalloc(ST_TOTAL, GFP_KERNEL);
	struct sk_buff *skb;
	unsigned int linear, total;
	const unsigned char *head;

	if (!flat) {
		ST_CHECK(ctx, "pkt", false, "no memory");
		return;
	}
	st_fill(flat, ST_TOTAL, 0);

	skb = alloc_skb(ST_TOTAL, GFP_KERNEL);
	if (skb) {
		st_fill(skb_put(skb, ST_TOTAL), ST_TOTAL, 0);
		head = sroce_env_pkt_head((struct sroce_env_pkt *)skb, &linear, &total);
		ST_CHECK(ctx, "linear_head", head == skb->data && linear == ST_TOTAL && total == ST_TOTAL,
			 "linear %u total %u", linear, total);
		st_pkt_ranges(ctx, skb, flat, "linear");
		sroce_env_pkt_free((struct sroce_env_pkt *)skb);
	}
	skb = st_nonlinear_skb();
	ST_CHECK(ctx, "nonlinear_build", skb, "no memory");
	if (skb) {
		head = sroce_env_pkt_head((struct sroce_env_pkt *)skb, &linear, &total);
		ST_CHECK(ctx, "nonlinear_head", head == skb->data && linear == ST_HEAD && total == ST_TOTAL,
			 "linear %u total %u", linear, total);
		st_pkt_ranges(ctx, skb, flat, "nonlinear");
		sroce_env_pkt_free((struct sroce_env_pkt *)skb);
	}
	kfree(flat);
}

/* ---- batches: events ---------------------------------------------------- */

#define ST_LOG (SROCE_BATCH_EVENTS + 8)

/* The CQs are sroce CQs of a stub device with completion vectors: a COMP
 * event runs on its CQ's vector's CPU (vector.c). */
struct st_objs {
	struct sroce_dev *sdev;
	struct sroce_cq cq[SROCE_BATCH_EVENTS];
	struct sroce_qp qp; /* its events are counted in flight (batch.c) */
	struct ib_srq srq;
	atomic_t nlog;
	struct { void *obj; int kind; void *ctx; } log[ST_LOG];
};

static void st_log(struct st_objs *o, void *obj, int kind, void *ctx)
{
	int i = atomic_inc_return(&o->nlog) - 1;

	if (i < ST_LOG) {
		o->log[i].obj = obj;
		o->log[i].kind = kind;
		o->log[i].ctx = ctx;
	}
}

static void st_comp(struct ib_cq *cq, void *ctx)
{
	st_log(ctx, cq, SROCE_ENV_EVENT_COMP, ctx);
}

static void st_event(struct ib_event *ev, void *ctx)
{
	void *obj = ev->event == IB_EVENT_CQ_ERR ? (void *)ev->element.cq :
		    ev->event == IB_EVENT_SRQ_LIMIT_REACHED ? (void *)ev->element.srq :
							      (void *)ev->element.qp;

	st_log(ctx, obj, ev->event, ctx);
}

static struct st_objs *st_objs_new(void)
{
	struct st_objs *o = kzalloc(sizeof(*o), GFP_KERNEL);
	int i;

	if (!o)
		return NULL;
	o->sdev = kzalloc(sizeof(*o->sdev), GFP_KERNEL);
	if (!o->sdev || sroce_vectors_init(o->sdev)) {
		kfree(o->sdev);
		kfree(o);
		return NULL;
	}
	for (i = 0; i < SROCE_BATCH_EVENTS; i++) {
		o->cq[i].ibcq.device = &o->sdev->ibdev;
		o->cq[i].ibcq.comp_handler = st_comp;
		o->cq[i].ibcq.event_handler = st_event;
		o->cq[i].ibcq.cq_context = o;
		sroce_cq_vec_init(&o->cq[i], 0);
	}
	o->qp.ibqp.event_handler = st_event;
	o->qp.ibqp.qp_context = o;
	o->srq.event_handler = st_event;
	o->srq.srq_context = o;
	return o;
}

static void st_objs_free(struct st_objs *o)
{
	int i;

	for (i = 0; i < SROCE_BATCH_EVENTS; i++)
		flush_work(&o->cq[i].vec.work);
	sroce_vectors_free(o->sdev);
	kfree(o->sdev);
	kfree(o);
}

/* Every CQ on the vector of this CPU, so that their events run inline in
 * the flush; the caller keeps preemption off until it has flushed. */
static void st_cqs_here(struct st_objs *o)
{
	unsigned int v = 0, i;
	int cpu;

	for_each_online_cpu(cpu) {
		if (cpu == smp_processor_id())
			break;
		v++;
	}
	for (i = 0; i < SROCE_BATCH_EVENTS; i++)
		WRITE_ONCE(o->cq[i].vec.vector, v);
}

static bool st_logged(struct st_objs *o, int i, void *obj, int kind)
{
	return o->log[i].obj == obj && o->log[i].kind == kind && o->log[i].ctx == o;
}

/* A batch on another context that holds a QP event for a while: the QP's
 * destroy (sroce_qp_wait_events) must not return before its flush. */
struct st_late_flush {
	struct work_struct work;
	struct st_objs *o;
	struct completion queued;
};

static void st_late_flush_fn(struct work_struct *work)
{
	struct st_late_flush *l = container_of(work, struct st_late_flush, work);
	struct sroce_env_batch b;

	sroce_batch_init(&b);
	sroce_env_event(&b, &l->o->qp.ibqp, IB_EVENT_QP_FATAL);
	complete(&l->queued);
	mdelay(50);
	sroce_batch_flush(NULL, &b);
}

static void st_qp_wait_events(struct st_ctx *ctx, struct st_objs *o)
{
	struct st_late_flush l = { .o = o };
	int n;

	atomic_set(&o->nlog, 0);
	INIT_WORK_ONSTACK(&l.work, st_late_flush_fn);
	init_completion(&l.queued);
	schedule_work(&l.work);
	wait_for_completion(&l.queued);
	sroce_qp_wait_events(&o->qp);
	n = atomic_read(&o->nlog);
	ST_CHECK(ctx, "qp_destroy_waits_for_its_events_in_flight",
		 n == 1 && st_logged(o, 0, &o->qp.ibqp, IB_EVENT_QP_FATAL), "%d handler calls when it returned", n);
	flush_work(&l.work);
	destroy_work_on_stack(&l.work);
}

static void st_events(struct st_ctx *ctx)
{
	struct st_objs *o = st_objs_new();
	struct ib_cq *cq;
	struct sroce_env_batch b;
	bool all;
	int i, n, inflight;

	if (!o) {
		ST_CHECK(ctx, "events", false, "no memory");
		return;
	}
	cq = &o->cq[0].ibcq;
	preempt_disable();
	st_cqs_here(o);
	sroce_batch_init(&b);
	sroce_env_event(&b, cq, SROCE_ENV_EVENT_COMP);
	sroce_env_event(&b, &o->qp.ibqp, IB_EVENT_QP_FATAL);
	sroce_env_event(&b, cq, SROCE_ENV_EVENT_COMP);
	sroce_env_event(&b, &o->qp.ibqp, IB_EVENT_COMM_EST);
	sroce_env_event(&b, &o->srq, IB_EVENT_SRQ_LIMIT_REACHED);
	sroce_env_event(&b, &o->qp.ibqp, IB_EVENT_QP_FATAL);
	sroce_env_event(&b, cq, IB_EVENT_CQ_ERR);
	sroce_env_event(&b, cq, SROCE_ENV_EVENT_COMP);
	n = atomic_read(&o->nlog);
	inflight = atomic_read(&o->qp.events_inflight);
	sroce_batch_flush(NULL, &b);
	preempt_enable();
	ST_CHECK(ctx, "events_wait_for_flush", n == 0, "%d handler calls before the flush", n);
	ST_CHECK(ctx, "qp_events_in_flight_until_raised",
		 inflight == 2 && atomic_read(&o->qp.events_inflight) == 0, "%d before the flush, %d after",
		 inflight, atomic_read(&o->qp.events_inflight));
	n = atomic_read(&o->nlog);
	ST_CHECK(ctx, "events_deduped_in_order_to_their_owners",
		 n == 5 && st_logged(o, 0, cq, SROCE_ENV_EVENT_COMP) &&
			 st_logged(o, 1, &o->qp.ibqp, IB_EVENT_QP_FATAL) &&
			 st_logged(o, 2, &o->qp.ibqp, IB_EVENT_COMM_EST) &&
			 st_logged(o, 3, &o->srq, IB_EVENT_SRQ_LIMIT_REACHED) &&
			 st_logged(o, 4, cq, IB_EVENT_CQ_ERR),
		 "%d calls", n);

	/* A batch holds SROCE_BATCH_EVENTS distinct events. */
	atomic_set(&o->nlog, 0);
	preempt_disable();
	st_cqs_here(o);
	sroce_batch_init(&b);
	for (i = 0; i < SROCE_BATCH_EVENTS; i++) {
		sroce_env_event(&b, &o->cq[i].ibcq, SROCE_ENV_EVENT_COMP);
		sroce_env_event(&b, &o->cq[0].ibcq, SROCE_ENV_EVENT_COMP);
	}
	sroce_batch_flush(NULL, &b);
	preempt_enable();
	n = atomic_read(&o->nlog);
	all = n == SROCE_BATCH_EVENTS;
	for (i = 0; all && i < SROCE_BATCH_EVENTS; i++)
		all = st_logged(o, i, &o->cq[i].ibcq, SROCE_ENV_EVENT_COMP);
	ST_CHECK(ctx, "events_full_batch", all, "%d calls", n);
	st_qp_wait_events(ctx, o);
	st_objs_free(o);
}

/* ---- timers and work ------------------------------------------------------ */

struct st_async {
	struct st_objs *o;
	atomic_t runs;
	int rearm;            /* runs that re-arm or re-queue themselves */
	bool wrong_context;
	struct sroce_env_timer *timer;
	struct sroce_env_work *work;
};

static void st_timer_cb(void *arg, struct sroce_env_batch *b)
{
	struct st_async *a = arg;

	if (!in_serving_softirq())
		a->wrong_context = true;
	/* A QP event: delivered in the flush, one per run (a CQ's may run
	 * later on its vector's CPU, two pending as one). */
	sroce_env_event(b, &a->o->qp.ibqp, IB_EVENT_COMM_EST);
	if (atomic_inc_return(&a->runs) <= a->rearm)
		sroce_env_timer_arm(a->timer, 1000000);
}

static void st_work_cb(void *arg, struct sroce_env_batch *b)
{
	struct st_async *a = arg;

	if (in_interrupt())
		a->wrong_context = true;
	sroce_env_event(b, &a->o->qp.ibqp, IB_EVENT_COMM_EST);
	if (atomic_inc_return(&a->runs) <= a->rearm)
		sroce_env_work_queue(a->work); /* while running: runs once more */
}

static bool st_wait_runs(struct st_async *a, int n)
{
	int i;

	for (i = 0; i < 200 && atomic_read(&a->runs) < n; i++)
		msleep(10);
	msleep(30); /* and no more than n */
	return atomic_read(&a->runs) == n;
}

static void st_async(struct st_ctx *ctx)
{
	struct st_async a = {};
	int runs;

	a.o = st_objs_new();
	if (!a.o) {
		ST_CHECK(ctx, "async", false, "no memory");
		return;
	}
	a.rearm = 1;
	a.timer = sroce_env_timer_create(st_timer_cb, &a);
	ST_CHECK(ctx, "timer_create", a.timer, "no memory");
	if (a.timer) {
		sroce_env_timer_arm(a.timer, 2000000);
		ST_CHECK(ctx, "timer_fires_and_rearms_itself", st_wait_runs(&a, 2), "%d runs",
			 atomic_read(&a.runs));
		ST_CHECK(ctx, "timer_batch_flushed", atomic_read(&a.o->nlog) == 2, "%d events",
			 atomic_read(&a.o->nlog));
		ST_CHECK(ctx, "timer_in_softirq", !a.wrong_context, "ran outside softirq");
		/* Arming a pending timer moves its expiry. */
		sroce_env_timer_arm(a.timer, 10000000000ULL);
		sroce_env_timer_arm(a.timer, 2000000);
		ST_CHECK(ctx, "timer_rearm_moves_expiry", st_wait_runs(&a, 3), "%d runs",
			 atomic_read(&a.runs));
		sroce_env_timer_arm(a.timer, 10000000);
		sroce_env_timer_cancel(a.timer);
		msleep(50);
		ST_CHECK(ctx, "timer_cancel", atomic_read(&a.runs) == 3, "%d runs", atomic_read(&a.runs));
		sroce_env_timer_destroy(a.timer);
	}

	atomic_set(&a.runs, 0);
	atomic_set(&a.o->nlog, 0);
	a.wrong_context = false;
	a.work = sroce_env_work_create(st_work_cb, &a);
	ST_CHECK(ctx, "work_create", a.work, "no memory");
	if (a.work) {
		sroce_env_work_queue(a.work);
		ST_CHECK(ctx, "work_requeued_while_running_runs_again", st_wait_runs(&a, 2), "%d runs",
			 atomic_read(&a.runs));
		ST_CHECK(ctx, "work_batch_flushed", atomic_read(&a.o->nlog) == 2, "%d events",
			 atomic_read(&a.o->nlog));
		ST_CHECK(ctx, "work_in_process_context", !a.wrong_context, "ran in interrupt context");
		a.rearm = 1000000; /* keeps re-queueing itself until cancelled */
		sroce_env_work_queue(a.work);
		msleep(20);
		sroce_env_work_cancel(a.work);
		runs = atomic_read(&a.runs);
		msleep(50);
		ST_CHECK(ctx, "work_cancel_stops_self_requeueing", atomic_read(&a.runs) == runs,
			 "ran after cancel");
		sroce_env_work_destroy(a.work);
	}

	/* The last reference to a core object can go in atomic context (a
	 * packet held it): destroy must neither wait nor let a pending
	 * expiry fire. */
	atomic_set(&a.runs, 0);
	a.rearm = 0;
	a.timer = sroce_env_timer_create(st_timer_cb, &a);
	a.work = sroce_env_work_create(st_work_cb, &a);
	ST_CHECK(ctx, "create_for_atomic_destroy", a.timer && a.work, "no memory");
	if (a.timer && a.work) {
		unsigned long flags;
		spinlock_t lock;

		spin_lock_init(&lock);
		sroce_env_timer_arm(a.timer, 20000000);
		spin_lock_irqsave(&lock, flags);
		sroce_env_timer_destroy(a.timer);
		sroce_env_work_destroy(a.work);
		spin_unlock_irqrestore(&lock, flags);
		/* The deferred frees run later on sroce's workqueue and
		 * touch only the timer and the work item. */
		msleep(100);
		ST_CHECK(ctx, "destroy_in_atomic_context_cancels", atomic_read(&a.runs) == 0, "%d runs",
			 atomic_read(&a.runs));
	} else {
		sroce_env_timer_destroy(a.timer);
		sroce_env_work_destroy(a.work);
	}
	st_objs_free(a.o);
}

/* ---- the ICRC's CRC-32 (crc.c) ------------------------------------------- */

/* Whatever crc.c chose (icrc=auto|table|accel) must equal crc32_le for
 * every length around the accelerated path's threshold and alignment. */
static void st_crc(struct st_ctx *ctx)
{
	static const unsigned int lens[] = { 0, 1, 15, 63, 64, 65, 127, 1000, 1024, 4096, 9000 };
	unsigned int i, off, bad = 0;
	u8 *buf = kmalloc(9000 + 16, GFP_KERNEL);

	if (!buf) {
		ST_CHECK(ctx, "crc", false, "no memory");
		return;
	}
	st_fill(buf, 9000 + 16, 11);
	for (i = 0; i < ARRAY_SIZE(lens); i++)
		for (off = 0; off < 8; off++)
			if (sroce_env_crc32_le(~0u, buf + off, lens[i]) != crc32_le(~0u, buf + off, lens[i]))
				bad++;
	kfree(buf);
	ST_CHECK(ctx, "crc", !bad, "%u of %zu lengths and offsets differ from crc32_le", bad,
		 ARRAY_SIZE(lens) * 8);
}

void st_glue(struct st_ctx *ctx)
{
	st_crc(ctx);
	st_packets(ctx);
	st_zero_copy(ctx);
	st_events(ctx);
	st_async(ctx);
	st_train(ctx);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * timer.c - the timers and deferred work of env.h.
 *
 * Each callback gets a fresh batch that is flushed when it returns. Batches
 * carry no device (packets name their paths, events their owners), so a
 * timer or work item needs nothing but the core's fn and arg. The callback
 * runs inside the batch's RCU read-side section: it must not sleep, in a
 * work item too.
 */
#include <linux/jiffies.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/workqueue.h>

#include "sroce.h"

/* Created in main.c: unbound, and with a rescuer so that storage ULPs over
 * sroce make progress under memory pressure. */
struct workqueue_struct *sroce_dp_wq;

/*
 * Whether the caller may sleep. The core's locks disable interrupts and a
 * batch is an RCU read-side section, both visible here (the target kernels
 * count preemption); without a preemption count this says no, which is
 * safe.
 */
static bool sroce_may_sleep(void)
{
	return preemptible() && !rcu_preempt_depth();
}

static void sroce_run(sroce_env_callback fn, void *arg)
{
	struct sroce_env_batch b;

	sroce_batch_init(&b);
	fn(arg, &b);
	sroce_batch_flush(NULL, &b);
}

/* ---- timers ------------------------------------------------------------- */

struct sroce_env_timer {
	struct timer_list timer;
	sroce_env_callback fn;
	void *arg;
	struct work_struct free_work; /* destroy in atomic context */
};

static void sroce_timer_fn(struct timer_list *tl)
{
	struct sroce_env_timer *t = container_of(tl, struct sroce_env_timer, timer);

	sroce_run(t->fn, t->arg); /* softirq */
}

/* Any context: the core may create timers inside a batch. */
struct sroce_env_timer *sroce_env_timer_create(sroce_env_callback fn, void *arg)
{
	struct sroce_env_timer *t = kzalloc(sizeof(*t), GFP_ATOMIC);

	if (!t)
		return NULL;
	t->fn = fn;
	t->arg = arg;
	timer_setup(&t->timer, sroce_timer_fn, 0);
	return t;
}
SROCE_EXPORT_FOR_TESTS(sroce_env_timer_create);

void sroce_env_timer_arm(struct sroce_env_timer *t, unsigned long long delay_ns)
{
	/* Rounded up to whole jiffies: a timeout never fires early. */
	u64 ticks = div64_u64(delay_ns + TICK_NSEC - 1, TICK_NSEC);

	mod_timer(&t->timer, jiffies + (unsigned long)min_t(u64, ticks, MAX_JIFFY_OFFSET));
}
SROCE_EXPORT_FOR_TESTS(sroce_env_timer_arm);

/* Removes a pending expiry and waits for a running callback. A callback
 * that re-arms its own timer is stopped too; arming from elsewhere must
 * have stopped (the core destroys objects out of its tables first). */
void sroce_env_timer_cancel(struct sroce_env_timer *t)
{
	WARN_ON_ONCE(!sroce_may_sleep()); /* env.h: process context */
	timer_delete_sync(&t->timer);
}
SROCE_EXPORT_FOR_TESTS(sroce_env_timer_cancel);

static void sroce_timer_free_fn(struct work_struct *work)
{
	struct sroce_env_timer *t = container_of(work, struct sroce_env_timer, free_work);

	timer_delete_sync(&t->timer);
	kfree(t);
}

/*
 * The core destroys a timer with its object, and the last reference to an
 * object may go in atomic context: a received packet held it while the
 * object was destroyed, which already stopped the timer. Waiting is not
 * allowed there, so the free (and the then idle wait) happens in process
 * context.
 */
void sroce_env_timer_destroy(struct sroce_env_timer *t)
{
	if (!t)
		return;
	if (sroce_may_sleep()) {
		sroce_timer_free_fn(&t->free_work);
		return;
	}
	timer_delete(&t->timer);
	INIT_WORK(&t->free_work, sroce_timer_free_fn);
	queue_work(sroce_dp_wq, &t->free_work);
}
SROCE_EXPORT_FOR_TESTS(sroce_env_timer_destroy);

/* ---- work ----------------------------------------------------------------- */

struct sroce_env_work {
	struct work_struct work;
	sroce_env_callback fn;
	void *arg;
	struct work_struct free_work; /* destroy in atomic context */
};

static void sroce_work_fn(struct work_struct *work)
{
	struct sroce_env_work *w = container_of(work, struct sroce_env_work, work);

	sroce_run(w->fn, w->arg);
}

struct sroce_env_work *sroce_env_work_create(sroce_env_callback fn, void *arg)
{
	struct sroce_env_work *w = kzalloc(sizeof(*w), GFP_ATOMIC);

	if (!w)
		return NULL;
	w->fn = fn;
	w->arg = arg;
	INIT_WORK(&w->work, sroce_work_fn);
	return w;
}
SROCE_EXPORT_FOR_TESTS(sroce_env_work_create);

/* queue_work gives env.h's semantics: pending stays one run; queued while
 * running, it runs once more after; never on two CPUs at once. */
void sroce_env_work_queue(struct sroce_env_work *w)
{
	queue_work(sroce_dp_wq, &w->work);
}
SROCE_EXPORT_FOR_TESTS(sroce_env_work_queue);

void sroce_env_work_cancel(struct sroce_env_work *w)
{
	WARN_ON_ONCE(!sroce_may_sleep()); /* env.h: process context */
	cancel_work_sync(&w->work);
}
SROCE_EXPORT_FOR_TESTS(sroce_env_work_cancel);

static void sroce_work_free_fn(struct work_struct *work)
{
	struct sroce_env_work *w = container_of(work, struct sroce_env_work, free_work);

	cancel_work_sync(&w->work);
	kfree(w);
}

/* As sroce_env_timer_destroy. The module's exit drains sroce_dp_wq, so no
 * deferred free outlives the module. */
void sroce_env_work_destroy(struct sroce_env_work *w)
{
	if (!w)
		return;
	if (sroce_may_sleep()) {
		sroce_work_free_fn(&w->free_work);
		return;
	}
	cancel_work(&w->work);
	INIT_WORK(&w->free_work, sroce_work_free_fn);
	queue_work(sroce_dp_wq, &w->free_work);
}
SROCE_EXPORT_FOR_TESTS(sroce_env_work_destroy);

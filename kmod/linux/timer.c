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
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/workqueue.h>

#include "sroce.h"

/* Created in main.c: unbound, and with a rescuer so that storage ULPs over
 * sroce make progress under memory pressure. */
struct workqueue_struct *sroce_dp_wq;

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

void sroce_env_timer_arm(struct sroce_env_timer *t, unsigned long long delay_ns)
{
	/* Rounded up to whole jiffies: a timeout never fires early. */
	u64 ticks = div64_u64(delay_ns + TICK_NSEC - 1, TICK_NSEC);

	mod_timer(&t->timer, jiffies + (unsigned long)min_t(u64, ticks, MAX_JIFFY_OFFSET));
}

/* Removes a pending expiry and waits for a running callback. A callback
 * that re-arms its own timer is stopped too; arming from elsewhere must
 * have stopped (the core destroys objects out of its tables first). */
void sroce_env_timer_cancel(struct sroce_env_timer *t)
{
	timer_delete_sync(&t->timer);
}

void sroce_env_timer_destroy(struct sroce_env_timer *t)
{
	if (!t)
		return;
	timer_delete_sync(&t->timer);
	kfree(t);
}

/* ---- work ----------------------------------------------------------------- */

struct sroce_env_work {
	struct work_struct work;
	sroce_env_callback fn;
	void *arg;
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

/* queue_work gives env.h's semantics: pending stays one run; queued while
 * running, it runs once more after; never on two CPUs at once. */
void sroce_env_work_queue(struct sroce_env_work *w)
{
	queue_work(sroce_dp_wq, &w->work);
}

void sroce_env_work_cancel(struct sroce_env_work *w)
{
	cancel_work_sync(&w->work);
}

void sroce_env_work_destroy(struct sroce_env_work *w)
{
	if (!w)
		return;
	cancel_work_sync(&w->work);
	kfree(w);
}

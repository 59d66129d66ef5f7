// SPDX-License-Identifier: GPL-2.0
/*
 * thread.c - sroce_env_thread_* (core/env.h) over kthreads, for the SQ
 * poller, and sroce_env_run_batched. The core owns the poller's loop and
 * its sleep protocol; this file only maps each step onto the scheduler.
 */
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/stat.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "sroce.h"

struct sroce_env_thread {
	struct task_struct *task;
	sroce_env_thread_fn fn;
	void *arg;
};

static int sroce_thread_main(void *data)
{
	struct sroce_env_thread *t = data;

	/* Returns once kthread_should_stop(): kthread_stop is waiting. */
	t->fn(t->arg, t);
	return 0;
}

/* sq_poll_cpus: the CPUs the pollers may run on, a cpulist ("0-1,3").
 * Fills mask and returns true if it names an online CPU; empty or
 * unusable: false, the pollers run on any CPU. */
static bool sroce_sq_poll_mask(struct cpumask *mask)
{
	if (!sroce_sq_poll_cpus || !sroce_sq_poll_cpus[0])
		return false;
	if (cpulist_parse(sroce_sq_poll_cpus, mask) || !cpumask_intersects(mask, cpu_online_mask)) {
		pr_warn_once("sroce: sq_poll_cpus=%s is not a usable cpulist; pollers run on any CPU\n",
			     sroce_sq_poll_cpus);
		return false;
	}
	return true;
}

/* The online CPUs sq_poll_cpus names, into mask; false if none. */
bool sroce_sq_poll_cpus_named(struct cpumask *mask)
{
	if (!sroce_sq_poll_mask(mask))
		return false;
	cpumask_and(mask, mask, cpu_online_mask);
	return !cpumask_empty(mask);
}

static void sroce_thread_set_cpus(struct task_struct *task)
{
	cpumask_var_t mask;

	if (!zalloc_cpumask_var(&mask, GFP_KERNEL))
		return;
	if (sroce_sq_poll_mask(mask) && set_cpus_allowed_ptr(task, mask))
		pr_warn_once("sroce: sq_poll_cpus=%s: the poller cannot run there; it runs on any CPU\n",
			     sroce_sq_poll_cpus);
	free_cpumask_var(mask);
}

struct sroce_env_thread *sroce_env_thread_create(sroce_env_thread_fn fn, void *arg, const char *name, int cpu)
{
	struct sroce_env_thread *t = kzalloc(sizeof(*t), GFP_KERNEL);
	struct task_struct *task;

	if (!t)
		return NULL;
	t->fn = fn;
	t->arg = arg;
	task = kthread_create(sroce_thread_main, t, "%s", name);
	if (IS_ERR(task)) {
		kfree(t);
		return NULL;
	}
	/* kthread_stop needs the task even if it were to exit early. */
	get_task_struct(task);
	t->task = task;
	/* One CPU's shared poller (sqpoll.c) stays there while it is online
	 * (not kthread_bind: hotplug may move it). */
	if (cpu < 0 || set_cpus_allowed_ptr(task, cpumask_of(cpu)))
		sroce_thread_set_cpus(task);
	wake_up_process(task);
	return t;
}

void sroce_env_thread_stop(struct sroce_env_thread *t)
{
	if (!t)
		return;
	kthread_stop(t->task);
	put_task_struct(t->task);
	kfree(t);
}

int sroce_env_thread_should_stop(struct sroce_env_thread *self)
{
	return kthread_should_stop();
}

void sroce_env_thread_prepare_sleep(struct sroce_env_thread *self)
{
	/* smp_store_mb: the state store is ordered before the checks that
	 * follow (pairs with the barrier in try_to_wake_up). */
	set_current_state(TASK_INTERRUPTIBLE);
}

void sroce_env_thread_cancel_sleep(struct sroce_env_thread *self)
{
	__set_current_state(TASK_RUNNING);
}

void sroce_env_thread_sleep(struct sroce_env_thread *self)
{
	schedule();
	__set_current_state(TASK_RUNNING);
}

void sroce_env_thread_relax(struct sroce_env_thread *self)
{
	cond_resched();
	cpu_relax();
}

/* Spinning only helps while the CPU has nothing else to run: with a
 * busy-polling process on the same CPU, cond_resched alone lets the poller
 * keep the CPU for a whole time slice (milliseconds) per burst. */
int sroce_env_thread_contended(struct sroce_env_thread *self)
{
	return need_resched() || !single_task_running();
}

/* A real sleep, not yield(): CFS may pick the yielding poller again at
 * once (60,000 yields in 1 s of ping-pong in the TCG VM, the programs
 * 4x slower). */
void sroce_env_thread_nap(struct sroce_env_thread *self, unsigned long long ns)
{
	unsigned long us = max_t(unsigned long, ns / 1000, 1);

	usleep_range(us, us + us / 4 + 1);
}

void sroce_env_thread_wake(struct sroce_env_thread *t)
{
	if (t)
		wake_up_process(t->task);
}

void sroce_env_run_batched(sroce_env_callback fn, void *arg)
{
	struct sroce_env_batch b;

	sroce_batch_init(&b);
	fn(arg, &b);
	sroce_batch_flush(NULL, &b);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * sqpoll.c - the shared SQ pollers (Documentation/sq-poller.md, "Shared
 * pollers"): one thread per CPU named in sq_poll_cpus, or a single one
 * that runs anywhere when none is named, each polling the user send queues
 * of every device, of any namespace, that joined it. Per-device pollers
 * made two devices on one CPU take turns dozing; one thread per CPU has
 * nobody of its own kind to yield to. A device joins at creation and
 * leaves once its core is gone; the last to leave stops the thread.
 */
#include <linux/cpumask.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "sroce.h"

struct sroce_sq_poller {
	struct list_head node;          /* sroce_sq_pollers */
	struct sroce_core_sq_poller *core;
	int cpu;                        /* its thread's CPU; -1: anywhere allowed */
	unsigned int devices;           /* joined; sroce_sq_pollers_lock */
};

static LIST_HEAD(sroce_sq_pollers);
static DEFINE_MUTEX(sroce_sq_pollers_lock);

static struct sroce_sq_poller *sroce_sq_poller_new(int cpu)
{
	struct sroce_core_sq_poller_init init = {
		.cpu = cpu,
		.sq_idle_us = READ_ONCE(sroce_sq_idle_us),
		.sq_yield_us = READ_ONCE(sroce_sq_yield_us),
	};
	struct sroce_sq_poller *p = kzalloc(sizeof(*p), GFP_KERNEL);

	if (!p)
		return NULL;
	if (cpu >= 0)
		snprintf(init.name, sizeof(init.name), "sroce_sqpoll/%d", cpu);
	else
		strscpy(init.name, "sroce_sqpoll", sizeof(init.name));
	if (sroce_core_sq_poller_create(&init, &p->core)) {
		kfree(p);
		return NULL;
	}
	p->cpu = cpu;
	list_add_tail(&p->node, &sroce_sq_pollers);
	return p;
}

/*
 * The poller a new device joins (NULL: doorbell mode), by the module
 * parameter's mode: a named online CPU without a poller gets one, and with
 * none named the single poller is made, when the mode wants one
 * (sroce_core_sq_poll_wanted: Y always, auto by the machine); otherwise
 * the device joins the poller with the fewest devices, if there is one.
 * *threads: the poller threads before this call, for the kernel log.
 */
struct sroce_sq_poller *sroce_sq_poller_join(int mode, unsigned int *threads)
{
	struct sroce_sq_poller *p, *least = NULL;
	unsigned int named = 0, n = 0;
	cpumask_var_t free_cpus;
	bool need_new;
	int cpu = -1;

	*threads = 0;
	if (mode == SROCE_SQ_POLL_OFF || !zalloc_cpumask_var(&free_cpus, GFP_KERNEL))
		return NULL;
	if (sroce_sq_poll_cpus_named(free_cpus))
		named = cpumask_weight(free_cpus);
	mutex_lock(&sroce_sq_pollers_lock);
	list_for_each_entry(p, &sroce_sq_pollers, node) {
		n++;
		if (!least || p->devices < least->devices)
			least = p;
		if (p->cpu >= 0)
			cpumask_clear_cpu(p->cpu, free_cpus);
	}
	if (named && !cpumask_empty(free_cpus))
		cpu = cpumask_first(free_cpus);
	need_new = named ? cpu >= 0 : !least;
	p = NULL;
	if (need_new && sroce_core_sq_poll_wanted(mode, num_online_cpus(), named, n))
		p = sroce_sq_poller_new(cpu);
	if (!p)
		p = least; /* may be NULL: doorbell mode */
	if (p)
		p->devices++;
	mutex_unlock(&sroce_sq_pollers_lock);
	free_cpumask_var(free_cpus);
	*threads = n;
	return p;
}

struct sroce_core_sq_poller *sroce_sq_poller_core(const struct sroce_sq_poller *p)
{
	return p ? p->core : NULL;
}

int sroce_sq_poller_cpu(const struct sroce_sq_poller *p)
{
	return p->cpu;
}

/* After the device's core is gone (its contexts and QPs left the poller). */
void sroce_sq_poller_leave(struct sroce_sq_poller *p)
{
	if (!p)
		return;
	mutex_lock(&sroce_sq_pollers_lock);
	if (--p->devices) {
		mutex_unlock(&sroce_sq_pollers_lock);
		return;
	}
	list_del(&p->node); /* no device can join it now */
	mutex_unlock(&sroce_sq_pollers_lock);
	sroce_core_sq_poller_destroy(p->core);
	kfree(p);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * core_sq_poll.h - the SQ poller's part of the core's C interface (core.h
 * includes it): the module parameter's modes and the shared pollers the
 * glue keeps (kmod/linux/sqpoll.c). Documentation/sq-poller.md.
 */
#ifndef SROCE_CORE_SQ_POLL_H
#define SROCE_CORE_SQ_POLL_H

#ifdef __cplusplus
extern "C" {
#endif

/* The module parameter sq_poll: N, Y, or auto (the default: a poller only
 * where it gets a CPU of its own, sroce::sq_poll_auto in sq_poller.h). */
enum sroce_core_sq_poll { SROCE_SQ_POLL_OFF = 0, SROCE_SQ_POLL_ON = 1, SROCE_SQ_POLL_AUTO = 2 };

/* Shared SQ pollers (Documentation/sq-poller.md, "Shared pollers"): one
 * thread polls the user send queues of every device that joins it, in any
 * namespace, so that two devices' pollers never compete for one CPU. The
 * glue keeps one per CPU named in sq_poll_cpus, or one that runs anywhere;
 * a device joins one at creation (sroce_core_dev_init.sq_poller), and the
 * poller must outlive every device that joined it. cpu: where its thread
 * runs (-1: anywhere sq_poll_cpus allows); sq_idle_us and sq_yield_us as
 * below; name: the thread's (15 chars). Create may sleep; destroy stops
 * the thread (process context). */
struct sroce_core_sq_poller;
struct sroce_core_sq_poller_init {
	int cpu;
	unsigned int sq_idle_us;
	unsigned int sq_yield_us;
	char name[16];
};
int sroce_core_sq_poller_create(const struct sroce_core_sq_poller_init *init, struct sroce_core_sq_poller **out);
void sroce_core_sq_poller_destroy(struct sroce_core_sq_poller *p);
/* Whether a device should poll, by the module parameter's mode and, for
 * auto, the machine (sroce::sq_poll_auto): online CPUs, those sq_poll_cpus
 * names, and poller threads already running. */
int sroce_core_sq_poll_wanted(int mode, unsigned int online_cpus, unsigned int poll_cpus, unsigned int pollers);

#ifdef __cplusplus
}
#endif

#endif

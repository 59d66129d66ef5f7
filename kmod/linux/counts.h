/* SPDX-License-Identifier: GPL-2.0 */
/*
 * counts.h - the glue's own debug counts of a device (<debugfs>/sroce/<dev>/counts).
 *
 * Per CPU: a received or sent packet counts once or twice here, and with one
 * block per device the CPUs took its cache line from each other on every
 * packet. this_cpu_add is one interrupt-safe operation, so any context may
 * count; a read sums the CPUs (exact per count, no snapshot).
 */
#ifndef SROCE_COUNTS_H
#define SROCE_COUNTS_H

#include <linux/percpu.h>
#include <linux/stddef.h>

struct sroce_dev;

/* The glue's own debug counts of a device, per CPU (sroce_count_add), in
 * the order of debugfs.c's sroce_glue_count_names; longs only. */
struct sroce_glue_counts {
	long pkts_in_flight;       /* skbs the core owns: allocated or received, not yet sent or freed */
	long paths;                /* live struct sroce_env_path */
	long tx_pkts;              /* handed to ip_local_out / ip6_local_out */
	long tx_no_route;          /* dropped: the path has no route (any more) */
	long tx_errors;            /* dropped by the IP stack or malformed by the core */
	long rx_pkts;              /* handed to sroce_core_rx */
	long rx_short;             /* dropped: IP + UDP + BTH not readable */
	long tx_local;             /* of tx_pkts: to a device of this host, queued on its local_q */
	long rx_local;             /* of rx_pkts: from this host's devices, through local_q */
	long rx_local_full;        /* dropped: local_q full */
	long rx_loopback;          /* dropped: UDP 4791 on lo, for this device's address (not sent by sroce) */
	long tx_trains;            /* UDP GSO skbs of several packets (train.c) */
	long tx_train_pkts;        /* of tx_pkts: the packets in them */
};

/* Any context. */
#define sroce_count_add(sdev, field, n) this_cpu_add((sdev)->counts->field, (n))
#define sroce_count_inc(sdev, field) sroce_count_add(sdev, field, 1)
#define sroce_count_dec(sdev, field) sroce_count_add(sdev, field, -1)
/* A count summed over the CPUs: sroce_count_sum(sdev, paths). */
#define sroce_count_sum(sdev, field) sroce_counts_sum_at(sdev, offsetof(struct sroce_glue_counts, field))
long sroce_counts_sum_at(struct sroce_dev *sdev, size_t offset);

#endif

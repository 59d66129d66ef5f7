/* SPDX-License-Identifier: GPL-2.0 */
/* train.c: packet trains, consecutive packets of a path as one UDP GSO skb. */
#ifndef SROCE_TRAIN_H
#define SROCE_TRAIN_H

#include <linux/skbuff.h>

struct dst_entry;
struct net_device;
struct sroce_env_path;

/* How many packets, first and those queued right after it on pkts with the
 * same path, form a train for dev (1: none). */
unsigned int sroce_train_len(const struct sk_buff *first, const struct sk_buff_head *pkts, const void *path,
			     const struct net_device *dev, bool v6);
/* The train's skb of first and the n - 1 packets at the head of pkts (left
 * there); NULL without memory. */
struct sk_buff *sroce_train_build(const struct sk_buff *first, const struct sk_buff_head *pkts, unsigned int n,
				  const struct net_device *dev, bool v6);
/* For pkt.c's flush: the train starting with first (prepared, for dst), its
 * packets consumed and *count set; NULL: first goes alone. */
struct sk_buff *sroce_train_collect(struct sk_buff *first, struct sk_buff_head *pkts, struct dst_entry *dst,
				    struct sroce_env_path *path, unsigned int *count);

#endif /* SROCE_TRAIN_H */

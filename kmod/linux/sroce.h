/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private header of the sroce kernel glue. The glue translates ib_core
 * objects and calls into core.h calls; the protocol logic lives in ../core.
 */
#ifndef SROCE_GLUE_H
#define SROCE_GLUE_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

#include "core.h"
#include "env.h"
#include "sroce-abi.h"

#define SROCE_UDP_PORT 4791

/* One per network namespace that has at least one sroce device. */
struct sroce_net;

/* The glue's own debug counts of a device (debugfs.c prints them). */
struct sroce_glue_counts {
	atomic_long_t pkts_in_flight; /* skbs the core owns: allocated or received, not yet sent or freed */
	atomic_long_t paths;          /* live struct sroce_env_path */
	atomic_long_t tx_pkts;        /* handed to ip_local_out / ip6_local_out */
	atomic_long_t tx_no_route;    /* dropped: the path has no route (any more) */
	atomic_long_t tx_errors;      /* dropped by the IP stack or malformed by the core */
	atomic_long_t rx_pkts;        /* handed to sroce_core_rx */
	atomic_long_t rx_short;       /* dropped: IP + UDP + BTH not readable */
};

struct sroce_dev {
	struct ib_device ibdev;
	struct net_device *ndev;       /* held by ib_device_set_netdev while registered */
	struct sroce_core_dev *core;
	struct sroce_net *sn;          /* the namespace's sockets, one reference */
	struct list_head list;         /* sroce_devices, under sroce_devices_lock */
	struct work_struct unregister_work; /* netdev unregister, see net.c */
	char parent[IFNAMSIZ];
	struct sroce_glue_counts counts;
	struct dentry *debugfs;        /* <debugfs>/sroce/<ibdev>/, see debugfs.c */
};

struct sroce_ucontext {
	struct ib_ucontext ibuc;
	struct sroce_core_ucontext *core;
	struct rdma_user_mmap_entry *ctx_page; /* the context page's mmap entry */
};

struct sroce_pd {
	struct ib_pd ibpd;
	struct sroce_core_pd *core;
};

/* Placeholders until queues exist (see unsupported.c). */
struct sroce_qp {
	struct ib_qp ibqp;
};

struct sroce_cq {
	struct ib_cq ibcq;
};

/* Memory the provider maps, freed only when the last mapping is gone. */
struct sroce_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *vaddr; /* vmalloc_user() memory */
};

static inline struct sroce_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ibdev);
}

/* main.c */
extern bool sroce_ipv6;

/* device.c */
int sroce_dev_add(const char *ibdev_name, struct net_device *ndev);
void sroce_dev_remove_all(void);
struct sroce_dev *sroce_dev_get_by_netdev(struct net_device *ndev);
struct sroce_dev *sroce_dev_get_by_netdev_rcu(struct net_device *ndev);
void sroce_dev_netdev_event(struct sroce_dev *sdev, unsigned long event);
void sroce_dev_sync_port(struct sroce_dev *sdev);
void sroce_dev_dealloc(struct ib_device *ibdev);

/* verbs.c, unsupported.c (mr.c: below) */
extern const struct ib_device_ops sroce_dev_ops;
extern const struct ib_device_ops sroce_unsupported_ops;

/* mr.c */
extern const struct ib_device_ops sroce_mr_ops;
int sroce_mr_init(void);
void sroce_mr_exit(void);

/* debugfs.c */
void sroce_debugfs_init(void);
void sroce_debugfs_exit(void);
void sroce_debugfs_add_dev(struct sroce_dev *sdev);
void sroce_debugfs_remove_dev(struct sroce_dev *sdev);

/* net.c */
int sroce_net_init(void);
void sroce_net_exit(void);
struct sroce_net *sroce_net_get(struct net *net);
void sroce_net_put(struct sroce_net *sn);
void sroce_net_queue_unregister(struct sroce_dev *sdev);
void sroce_net_init_unregister_work(struct sroce_dev *sdev);

/* ---- data-path services (Documentation/transport.md, "Kernel glue") ---- */

/*
 * A batch lives on the stack of the caller of a core entry point. It collects
 * the packets to send and the events to raise while the core runs under its
 * own locks; sroce_batch_flush sends and raises them with no core lock held.
 *
 * sroce_batch_init opens an RCU read-side section that sroce_batch_flush
 * closes: the core call in between must not sleep, and every init must be
 * followed by a flush in the same context. A destroy path therefore calls
 * the core destroy (after which the core queues nothing for the object),
 * then synchronize_rcu() (every batch that may hold an event for it has been
 * flushed), then frees the ib_core object.
 */
#define SROCE_BATCH_EVENTS 32

struct sroce_batch_event {
	void *owner; /* ib_cq, ib_qp, ib_srq or ib_wq */
	int kind;    /* SROCE_ENV_EVENT_COMP or enum ib_event_type */
};

struct sroce_env_batch {
	struct sk_buff_head pkts; /* in order; each skb holds a path reference (skb->cb) */
	unsigned int nevents;
	struct sroce_batch_event events[SROCE_BATCH_EVENTS]; /* distinct entries */
};
#define SROCE_GLUE_HAS_BATCH 1

/* batch.c */
void sroce_batch_init(struct sroce_env_batch *b);
/* sdev: the device the core call acted on, or NULL (timers, work): the
 * batch itself needs none, packets carry their paths. */
void sroce_batch_flush(struct sroce_dev *sdev, struct sroce_env_batch *b);

/* pkt.c. While the core owns an skb, its cb holds this. */
struct sroce_skb_cb {
	struct sroce_dev *sdev;        /* whose pkts_in_flight counts it */
	struct sroce_env_path *path;   /* on a batch: a path reference */
};

static inline struct sroce_skb_cb *sroce_skb_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct sroce_skb_cb) > sizeof(skb->cb));
	return (struct sroce_skb_cb *)skb->cb;
}

/* Takes over a received skb whose data starts at the IP header. */
struct sroce_env_pkt *sroce_pkt_from_rx(struct sroce_dev *sdev, struct sk_buff *skb);
/* Sends a batch's packets, in order (flush). */
void sroce_pkts_xmit(struct sroce_dev *sdev, struct sk_buff_head *pkts);

/* path.c */
struct sroce_env_path *sroce_path_create(struct sroce_dev *sdev, const struct rdma_ah_attr *ah_attr,
					 struct sroce_core_path_info *info);
struct sroce_env_path *sroce_path_get(struct sroce_env_path *path);
struct sroce_dev *sroce_path_dev(const struct sroce_env_path *path);
struct net_device *sroce_path_netdev(const struct sroce_env_path *path);
/* A held, valid route of the path (re-resolved when the cached one is
 * obsolete) and the namespace to send in; NULL when there is none. BH
 * disabled. */
struct dst_entry *sroce_path_dst(struct sroce_env_path *path, struct net **net);

/* timer.c: sroce_env_timer_* and sroce_env_work_* over this workqueue. */
extern struct workqueue_struct *sroce_dp_wq;

extern atomic_long_t sroce_rx_no_dev; /* net.c: no sroce device for the receiving netdev */

/* selftest.c: debugfs hooks that exist only with the selftest parameter. */
void sroce_selftest_init(struct dentry *root);
void sroce_selftest_add_dev(struct sroce_dev *sdev);

#endif /* SROCE_GLUE_H */

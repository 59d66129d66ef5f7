/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private header of the sroce kernel glue. The glue translates ib_core
 * objects and calls into core.h calls; the protocol logic lives in ../core.
 */
#ifndef SROCE_GLUE_H
#define SROCE_GLUE_H

#include <linux/list.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#include "core.h"
#include "sroce-abi.h"

#define SROCE_UDP_PORT 4791

/* One per network namespace that has at least one sroce device. */
struct sroce_net;

struct sroce_dev {
	struct ib_device ibdev;
	struct net_device *ndev;       /* held by ib_device_set_netdev while registered */
	struct sroce_core_dev *core;
	struct sroce_net *sn;          /* the namespace's sockets, one reference */
	struct list_head list;         /* sroce_devices, under sroce_devices_lock */
	struct work_struct unregister_work; /* netdev unregister, see net.c */
	struct dentry *debugfs;        /* debugfs.c */
	char parent[IFNAMSIZ];
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

#endif /* SROCE_GLUE_H */

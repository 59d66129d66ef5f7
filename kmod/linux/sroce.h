/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private header of the sroce kernel glue. The glue translates ib_core
 * objects and calls into core.h calls; the protocol logic lives in ../core.
 */
#ifndef SROCE_GLUE_H
#define SROCE_GLUE_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/skbuff.h>
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

/* Memory the provider maps, freed only when the last mapping is gone. */
struct sroce_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *vaddr;   /* vmalloc_user() memory */
	bool writable; /* rings: the provider writes its index and entries */
};

/*
 * A shared ring (abi/sroce-abi.h): header + 2^log_size entries. The glue
 * allocates it; the core works in it. A user ring belongs to its mmap entry
 * once mapped (mmap_free releases it after the last mapping), a kernel ring
 * to the object.
 */
struct sroce_ring {
	void *vaddr;
	unsigned long bytes;
	unsigned int log_size;
	unsigned int stride;
	struct rdma_user_mmap_entry *entry; /* user rings only */
};

struct sroce_cq {
	struct ib_cq ibcq;
	struct sroce_core_cq *core;
	struct sroce_ring ring;
	struct mutex resize_lock; /* resize_cq against itself */
	bool user;
};

struct sroce_srq {
	struct ib_srq ibsrq;
	struct sroce_core_srq *core;
	struct sroce_ring ring;
	bool user;
};

struct sroce_qp {
	struct ib_qp ibqp;
	struct sroce_core_qp *core;
	struct sroce_ring sq;
	struct sroce_ring rq; /* vaddr NULL with an SRQ */
	u8 sq_sig_type;       /* enum ib_sig_type, for query_qp */
	bool user;
};

struct sroce_ah {
	struct ib_ah ibah;
	struct sroce_core_ah *core;
};

static inline struct sroce_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ibdev);
}

static inline struct sroce_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, ibcq);
}

static inline struct sroce_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct sroce_srq, ibsrq);
}

static inline struct sroce_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

static inline struct sroce_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct sroce_ah, ibah);
}

static inline struct sroce_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibpd);
}

/*
 * Requests that carry no driver data today: the bytes of a newer provider
 * are accepted only if they are zero (Documentation/abi.md).
 */
static inline int sroce_check_empty_req(struct ib_udata *udata)
{
	if (udata && udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	return 0;
}

/* ib_sge and sroce_sge are the same 16 bytes: a kernel consumer's SGE list
 * goes to the core as it is. */
static_assert(sizeof(struct ib_sge) == sizeof(struct sroce_sge));
static_assert(offsetof(struct ib_sge, addr) == offsetof(struct sroce_sge, addr));
static_assert(offsetof(struct ib_sge, length) == offsetof(struct sroce_sge, length));
static_assert(offsetof(struct ib_sge, lkey) == offsetof(struct sroce_sge, lkey));

static inline const struct sroce_sge *sroce_sges(const struct ib_sge *sg_list)
{
	return (const struct sroce_sge *)sg_list;
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

/* verbs.c, unsupported.c */
extern const struct ib_device_ops sroce_dev_ops;
extern const struct ib_device_ops sroce_unsupported_ops;
struct rdma_user_mmap_entry *sroce_mmap_insert(struct sroce_ucontext *uc, void *vaddr, size_t size,
					       bool writable, u64 *offset);

/* ring.c */
int sroce_ring_alloc(struct sroce_ring *ring, unsigned int entries, unsigned int max_entries,
		     unsigned int stride);
int sroce_ring_map(struct sroce_ring *ring, struct ib_udata *udata, struct sroce_ring_info *info);
void sroce_ring_free(struct sroce_ring *ring);

/* cq.c, srq.c, qp.c, ah.c: the transport objects' verbs. */
extern const struct ib_device_ops sroce_cq_ops;
extern const struct ib_device_ops sroce_srq_ops;
extern const struct ib_device_ops sroce_qp_ops;
extern const struct ib_device_ops sroce_ah_ops;
/* qp.c: the core's view of an ib_qp_attr path (IB_QP_AV); ah.c too. */
int sroce_check_roce_ah_attr(const struct rdma_ah_attr *ah_attr);

/*
 * Data-path services of the glue (batch.c, path.c; declared here until they
 * land on this branch - the merge keeps the glue helper's definitions).
 * Every core call that takes a batch is bracketed by sroce_batch_init and
 * sroce_batch_flush, which sends the queued packets and raises the queued
 * events inside an RCU read-side section.
 */
#ifndef SROCE_GLUE_HAS_BATCH
struct sroce_env_batch {
	struct sk_buff_head pkts;
	unsigned int nevents;
	struct {
		void *owner;
		int kind;
	} events[8];
};
#endif
void sroce_batch_init(struct sroce_env_batch *b);
void sroce_batch_flush(struct sroce_dev *sdev, struct sroce_env_batch *b);
/* Resolves the route for a RoCE ah_attr (GRH required); ERR_PTR on failure.
 * The reference goes to the core with the object it is given to. */
struct sroce_env_path *sroce_path_create(struct sroce_dev *sdev, const struct rdma_ah_attr *ah_attr,
					 struct sroce_core_path_info *info);

/* net.c */
int sroce_net_init(void);
void sroce_net_exit(void);
struct sroce_net *sroce_net_get(struct net *net);
void sroce_net_put(struct sroce_net *sn);
void sroce_net_queue_unregister(struct sroce_dev *sdev);
void sroce_net_init_unregister_work(struct sroce_dev *sdev);

#endif /* SROCE_GLUE_H */

/* SPDX-License-Identifier: GPL-2.0 */
/* Private header of the sroce kernel glue. The glue translates ib_core
 * objects and calls into core.h calls; the protocol logic lives in ../core. */
#ifndef SROCE_GLUE_H
#define SROCE_GLUE_H

#include <linux/atomic.h>
#include <linux/export.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/skbuff.h>
#include <linux/interrupt.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h> /* struct uapi_definition (xrc_rcv.c) */

#include "counts.h"
#include "core.h"
#include "param.h"
#include "env.h"
#include "sroce-abi.h"
#include "vector.h"

#define SROCE_UDP_PORT 4791

/* One per network namespace that has at least one sroce device. */
struct sroce_net;


struct sroce_dev {
	struct ib_device ibdev;
	struct net_device *ndev;       /* held by ib_device_set_netdev while registered */
	struct sroce_core_dev *core;
	struct sroce_sq_poller *sq_poller; /* the shared poller it joined (sqpoll.c); NULL: none */
	struct sroce_net *sn;          /* the namespace's sockets, one reference */
	struct list_head list;         /* sroce_devices, under sroce_devices_lock */
	struct hlist_node ndev_node;   /* sroce_dev_by_ndev, the same */
	struct work_struct unregister_work; /* netdev unregister, see net.c */
	char parent[IFNAMSIZ];
	struct sroce_glue_counts __percpu *counts;
	/* Packets this host's sroce devices sent to this one, which never
	 * touch the IP stack (net.c); drained by local_rx in softirq. */
	struct sk_buff_head local_q;
	struct tasklet_struct local_rx;
	struct dentry *debugfs;        /* <debugfs>/sroce/<ibdev>/, see debugfs.c */
	struct list_head counters;     /* struct sroce_counter, see counter.c */
	struct mutex counters_lock;
	unsigned long long counters_retired[SROCE_CNT_MAX]; /* released counters' sums */
	/* Domains with kernel-owned receive QPs, for debugfs (xrc_rcv.c). Taken
	 * before a domain's lock, never while holding one. */
	struct list_head xrc_rcv;
	struct mutex xrc_rcv_lock;
	struct sroce_vectors *vectors; /* vector.c */
	struct list_head wqs;          /* struct sroce_wq, for debugfs (wq.c) */
	struct mutex wqs_lock;
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

/* Kernel-owned XRC receive QPs per domain (xrc_rcv.c): they outlive
 * their creator, so a process may not pile up more than this. */
#define SROCE_MAX_XRC_RCV_QPS 64

struct sroce_xrcd {
	struct ib_xrcd ibxrcd;
	struct sroce_core_xrcd *core;
	struct mutex lock;      /* the fields below */
	struct ib_pd *kpd;      /* the receive QPs' PD, made with the first */
	struct ib_qp *rcv[SROCE_MAX_XRC_RCV_QPS];
	unsigned int nrcv;
	struct list_head dev_node; /* on sroce_dev.xrc_rcv once it has one */
};

/* create_flags of the kernel-owned receive QP (driver-reserved range:
 * uverbs lets no user set it). */
#define SROCE_QP_CREATE_KERNEL_RCV IB_QP_CREATE_RESERVED_START

/* Memory the provider maps, freed only when the last mapping is gone. */
struct sroce_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *vaddr;   /* vmalloc_user() memory */
	bool writable; /* rings: the provider writes its index and entries */
};

/* A shared ring (abi/sroce-abi.h): header + 2^log_size entries. The glue
 * allocates it; the core works in it. A user ring belongs to its mmap entry
 * once mapped (mmap_free releases it after the last mapping), a kernel ring
 * to the object. */
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
	struct sroce_cq_vec vec;  /* vector.c */
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
	atomic_t events_inflight; /* in batches not yet flushed (batch.c) */
	/* Bound to an rdma_counter (counter.c, under sdev->counters_lock):
	 * the QP's counters at bind time. */
	bool counter_bound;
	struct list_head counter_node;
	unsigned long long counter_base[SROCE_CNT_MAX];
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

static inline struct sroce_xrcd *to_sxrcd(struct ib_xrcd *ibxrcd)
{
	return container_of(ibxrcd, struct sroce_xrcd, ibxrcd);
}

/* Requests that carry no driver data today: the bytes of a newer provider
 * are accepted only if they are zero (Documentation/abi.md). */
static inline int sroce_check_empty_req(struct ib_udata *udata)
{
	if (udata && udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	return 0;
}

/* A user verb's response the provider cannot do without (a ring's
 * location, a handle): room for resp_len bytes (EINVAL). */
static inline int sroce_check_resp_room(struct ib_udata *udata, size_t resp_len)
{
	return udata && udata->outlen < resp_len ? -EINVAL : 0;
}

/*
 * A create request's driver data (abi/sroce-abi.h, "Create-time
 * attributes"): up to len bytes into req (zeroed first, so a shorter
 * request from an older provider leaves the newer fields 0); non-zero bytes
 * past them: EOPNOTSUPP; a comp_mask bit outside known: EINVAL. No udata or
 * none sent: an empty request. Then room for resp_len bytes of response.
 */
static inline int sroce_create_udata(struct ib_udata *udata, void *req, size_t len, u64 known,
				     size_t resp_len)
{
	u64 comp_mask;

	memset(req, 0, len);
	if (!udata || !udata->inlen)
		return sroce_check_resp_room(udata, resp_len);
	if (udata->inlen > len && !ib_is_udata_cleared(udata, len, udata->inlen - len))
		return -EOPNOTSUPP;
	if (ib_copy_from_udata(req, udata, min_t(size_t, udata->inlen, len)))
		return -EFAULT;
	memcpy(&comp_mask, req, sizeof(comp_mask)); /* every request opens with it */
	if (comp_mask & ~known)
		return -EINVAL;
	return sroce_check_resp_room(udata, resp_len);
}

/* The multi-packet receive sizes of a create request (SROCE_CREATE_REQ_MP_WR),
 * rounded in place to the ones the queue uses; both 0 without the bit.
 * EINVAL: sizes without the bit, the bit on a queue that has no receive
 * ring of its own (give the SRQ the sizes), or sizes above the caps. A
 * request with the bit needs the response's room for the sizes in use. */
static inline int sroce_mp_wr_req(struct ib_udata *udata, u64 comp_mask, u32 *buf, u32 *align, bool own_rq,
				  size_t resp_len)
{
	if (!(comp_mask & SROCE_CREATE_REQ_MP_WR))
		return *buf || *align ? -EINVAL : 0;
	if (!own_rq || sroce_check_resp_room(udata, resp_len))
		return -EINVAL;
	return sroce_core_mp_wr_round(buf, align);
}

/* A create response: as much of it as the provider has room for (an older
 * one's shorter struct; sroce_create_udata checked the room it needs). */
static inline int sroce_copy_resp(struct ib_udata *udata, void *resp, size_t len)
{
	return ib_copy_to_udata(udata, resp, min_t(size_t, udata->outlen, len));
}

/* A user verb whose request carries nothing and whose response the
 * provider cannot do without (a ring's location, a handle): no driver data
 * in (EOPNOTSUPP), room for resp_len bytes out (EINVAL). */
static inline int sroce_check_udata(struct ib_udata *udata, size_t resp_len)
{
	int err = sroce_check_empty_req(udata);

	return err ? err : sroce_check_resp_room(udata, resp_len);
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

/* A kernel consumer's receive WR as a WQE; its SGEs go to the core as they
 * are (sroce_sges). */
static inline int sroce_recv_wqe(const struct ib_recv_wr *wr, struct sroce_wqe *wqe)
{
	if (wr->num_sge < 0 || wr->num_sge > U8_MAX)
		return -EINVAL;
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = SROCE_WQE_RECV;
	wqe->num_sge = wr->num_sge;
	return 0;
}

/* One field of a core view or count struct, named by its table (core.h). */
static inline u64 sroce_view_value(const void *view, const struct sroce_core_view_field *f)
{
	const u8 *p = (const u8 *)view + f->offset;
	u32 v32;
	u64 v64;

	if (f->size == sizeof(u64)) {
		memcpy(&v64, p, sizeof(v64));
		return v64;
	}
	memcpy(&v32, p, sizeof(v32));
	return v32;
}

/* main.c: module parameters */
extern bool sroce_ipv6;
extern int sroce_sq_poll; /* enum sroce_core_sq_poll */
extern unsigned int sroce_sq_idle_us;
extern unsigned int sroce_sq_yield_us;
extern unsigned int sroce_zero_copy_min;
extern char *sroce_sq_poll_cpus;
bool sroce_sq_poll_cpus_named(struct cpumask *mask); /* thread.c: online CPUs it names */

/* sqpoll.c: the shared SQ pollers */
struct sroce_sq_poller;
struct sroce_sq_poller *sroce_sq_poller_join(int mode, unsigned int *threads);
struct sroce_core_sq_poller *sroce_sq_poller_core(const struct sroce_sq_poller *p);
int sroce_sq_poller_cpu(const struct sroce_sq_poller *p);
void sroce_sq_poller_leave(struct sroce_sq_poller *p);

/* device.c */
int sroce_dev_add(const char *ibdev_name, struct net_device *ndev);
void sroce_dev_remove_all(void);
struct sroce_dev *sroce_dev_get_by_netdev(struct net_device *ndev);
struct sroce_dev *sroce_dev_get_by_netdev_rcu(struct net_device *ndev);
void sroce_dev_netdev_event(struct sroce_dev *sdev, unsigned long event);
void sroce_dev_sync_port(struct sroce_dev *sdev);
void sroce_dev_sync_netdev(struct sroce_dev *sdev);
void sroce_dev_dealloc(struct ib_device *ibdev);

/* verbs.c (mr.c, cq.c, qp.c, srq.c, ah.c: below) */
extern const struct ib_device_ops sroce_dev_ops;
struct rdma_user_mmap_entry *sroce_mmap_insert(struct sroce_ucontext *uc, void *vaddr, size_t size,
					       bool writable, u64 *offset);

/* ring.c */
int sroce_ring_alloc(struct sroce_ring *ring, unsigned int entries, unsigned int max_entries,
		     unsigned int stride, bool user);
void *sroce_vmalloc_user_account(unsigned long bytes);
int sroce_remap_vmalloc(struct vm_area_struct *vma, void *vaddr);
int sroce_ring_map(struct sroce_ring *ring, struct ib_udata *udata, struct sroce_ring_info *info);
void sroce_ring_free(struct sroce_ring *ring);

/* cq.c, srq.c, qp.c, ah.c: the transport objects' verbs. */
extern const struct ib_device_ops sroce_cq_ops;
extern const struct ib_device_ops sroce_srq_ops;
extern const struct ib_device_ops sroce_xrcd_ops;
/* xrcd.c: an XRC target for create_qp (qp.c), as uverbs makes one. */
int sroce_create_xrc_tgt(struct sroce_qp *qp, struct ib_qp_init_attr *init);
/* xrc_rcv.c: the driver method of the kernel-owned receive QP. */
extern const struct uapi_definition sroce_uapi_defs[];
void sroce_xrc_rcv_destroy_all(struct sroce_xrcd *xrcd);
void sroce_xrc_rcv_unlist(struct sroce_xrcd *xrcd);
int sroce_xrc_rcv_show(struct seq_file *m, struct sroce_dev *sdev);
extern const struct ib_device_ops sroce_qp_ops;
extern const struct ib_device_ops sroce_ah_ops;
/* qp.c: the core's view of an ib_qp_attr path (IB_QP_AV); ah.c too. */
int sroce_check_roce_ah_attr(const struct rdma_ah_attr *ah_attr);

/* mr.c */
extern const struct ib_device_ops sroce_mr_ops;
/* mw.c: memory windows, bound by BIND_MW work requests in the core; a
 * layout (seed 003) is staged by the driver method SROCE_METHOD_MW_STAGE_LAYOUT. */
struct sroce_mw {
	struct ib_mw ibmw;
	struct sroce_core_mw *core;
};
int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int sroce_dealloc_mw(struct ib_mw *ibmw);
extern const struct uapi_definition sroce_mw_uapi_defs[];
int sroce_mr_init(void);
void sroce_mr_exit(void);
/* env.c: waits for the frees sroce_env_free_deferred queued. */
void sroce_env_exit(void);

/* stats.c: hw counters and resource views; mr.c's fill_res_mr_entry
 * formats its MR through sroce_fill_res_mr_view. */
extern const struct ib_device_ops sroce_stats_ops;
void sroce_stats_init(void);
struct rdma_hw_stats *sroce_stats_alloc(void);
/* counter.c: per-QP counters (rdma_counter binding). */
extern const struct ib_device_ops sroce_counter_ops;
void sroce_counter_counted(struct sroce_dev *sdev, unsigned long long *out);
/* keys: the caller may see keys and addresses (CAP_NET_ADMIN, mr.c). */
int sroce_fill_res_mr_view(struct sk_buff *msg, struct sroce_core_mr *mr, bool keys);

/* crc.c: the CRC-32 of the ICRC (sroce_env_crc32_le), chosen at load. */
void sroce_crc_init(void);
void sroce_crc_exit(void);
const char *sroce_crc_name(void);
int sroce_crc_show(struct seq_file *m, void *unused);

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
bool sroce_net_of(struct sroce_net *sn, struct net_device *ndev);
void sroce_net_queue_unregister(struct sroce_dev *sdev);
void sroce_net_init_unregister_work(struct sroce_dev *sdev);
void sroce_local_init(struct sroce_dev *sdev);
void sroce_local_exit(struct sroce_dev *sdev);
/* A prepared packet (data at the IP header) for a local destination of net:
 * queued for the sroce device owning the destination address, or dropped.
 * Consumes skb; true if queued. */
bool sroce_local_xmit(struct net *net, struct sk_buff *skb);

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
 * flushed), then frees the ib_core object. A QP waits only for its own
 * events in flight (sroce_qp_wait_events; a grace period per QP made 10,000
 * take minutes): nothing else reads it under RCU (a packet holds a core
 * reference, checked against the core QP's dead flag; the SQ poller drops
 * it under its lock). CQs keep the grace period: steering reads one.
 */
#define SROCE_BATCH_EVENTS SROCE_ENV_BATCH_EVENTS /* env.h says how the core stays within it */

struct sroce_batch_event {
	void *owner; /* ib_cq, ib_qp, ib_srq or ib_wq */
	int kind;    /* SROCE_ENV_EVENT_COMP or enum ib_event_type */
};

struct sroce_env_batch {
	/* The paths this batch sends at its flush (path.c, "Transmit order"),
	 * linked through the path, each with a reference. */
	struct sroce_env_path *paths;
	unsigned int nevents;
	struct sroce_batch_event events[SROCE_BATCH_EVENTS]; /* distinct entries */
};

/* batch.c */
void sroce_batch_init(struct sroce_env_batch *b);
/* sdev: the device the core call acted on, or NULL (timers, work). */
void sroce_batch_flush(struct sroce_dev *sdev, struct sroce_env_batch *b);
/* destroy_qp, after the core destroy: returns once no batch holds an event
 * for qp (they are raised, their handlers returned). Sleeps. */
void sroce_qp_wait_events(struct sroce_qp *qp);

/* pkt.c. While the core owns an skb, its cb holds this. */
struct sroce_skb_cb {
	struct sroce_dev *sdev;        /* whose pkts_in_flight counts it */
	struct sroce_env_path *path;   /* on a batch: a path reference */
	void *steer_token;             /* steered (vector.c): the core's */
};

static inline struct sroce_skb_cb *sroce_skb_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct sroce_skb_cb) > sizeof(skb->cb));
	return (struct sroce_skb_cb *)skb->cb;
}

/* Takes over a received skb whose data starts at the IP header. */
struct sroce_env_pkt *sroce_pkt_from_rx(struct sroce_dev *sdev, struct sk_buff *skb);
/* Sends packets, in order. */
void sroce_pkts_xmit(struct sroce_dev *sdev, struct sk_buff_head *pkts);
void sroce_pkt_uncount(struct sk_buff *skb);

/* path.c */
struct sroce_env_path *sroce_path_create(struct sroce_dev *sdev, const struct rdma_ah_attr *ah_attr,
					 struct sroce_core_path_info *info, bool sleepable);
struct sroce_env_path *sroce_path_get(struct sroce_env_path *path);
/* Transmit order: queues skb (which holds a path reference) on its path
 * and makes b send the path's queue at its flush, unless another batch
 * already will. */
void sroce_path_tx_queue(struct sroce_env_path *path, struct sk_buff *skb, struct sroce_env_batch *b);
/* At b's flush: sends the queues of the paths b owns, in order. */
void sroce_path_tx_flush(struct sroce_dev *sdev, struct sroce_env_batch *b);
struct sroce_dev *sroce_path_dev(const struct sroce_env_path *path);
unsigned int sroce_path_headroom(const struct sroce_env_path *path);
/* A held, valid route of the path (re-resolved when the cached one is
 * obsolete) and the namespace to send in; NULL when there is none. BH
 * disabled. */
struct dst_entry *sroce_path_dst(struct sroce_env_path *path, struct net **net);

/* timer.c: sroce_env_timer_* and sroce_env_work_* over this workqueue. */
extern struct workqueue_struct *sroce_dp_wq;

extern atomic_long_t sroce_rx_no_dev; /* net.c: no sroce device for the receiving netdev */
extern atomic_long_t sroce_rx_loopback; /* net.c: UDP 4791 on lo, dropped (sroce never sends there) */

/*
 * The test module (tests/kmod, sroce_selftest.ko, never installed) runs
 * in-kernel tests of the data-path services above: packets, batches,
 * timers and work, and the ICRC's CRC-32. It reaches them through these
 * exports in their own namespace, which nothing else imports:
 * sroce_env_pkt_{head,read,crc32,free} (pkt.c), sroce_batch_{init,flush}
 * and sroce_env_event (batch.c), sroce_env_{timer,work}_* (timer.c) and
 * sroce_env_crc32_le (crc.c), sroce_train_{len,build} (train.c).
 */
#define SROCE_EXPORT_FOR_TESTS(sym) EXPORT_SYMBOL_NS_GPL(sym, SROCE_SELFTEST)

#endif /* SROCE_GLUE_H */

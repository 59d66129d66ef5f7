/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * core.h - the C interface of the sroce core, called by the kernel glue
 * (kmod/linux) and by the host tests.
 *
 * Handles are opaque. Every function that can fail returns 0 or a negative
 * errno. Values use the IBTA/ib_verbs encodings (port states, MTU enums) so
 * the glue copies them without translation tables.
 */
#ifndef SROCE_CORE_H
#define SROCE_CORE_H

#ifdef __cplusplus
extern "C" {
#endif

struct sroce_core_dev;
struct sroce_core_pd;
struct sroce_core_ucontext;
struct sroce_alloc_ucontext_req;
struct sroce_alloc_ucontext_resp;
struct sroce_core_cq;
struct sroce_core_qp;
struct sroce_core_srq;
struct sroce_core_wq;
struct sroce_core_ind_table;
struct sroce_core_xrcd;
struct sroce_core_mr;
struct sroce_core_mw;
struct sroce_core_ah;
struct sroce_mw_layout_req;
struct sroce_mw_layout_entry;
struct sroce_mw_layout_dim;
struct sroce_mw_layout_resp;
struct sroce_wqe;
struct sroce_sge;
struct sroce_cqe;
struct sroce_env_batch;
struct sroce_env_pkt;
struct sroce_env_path;

/* enum ib_port_state / ib_port_phys_state / ib_mtu values. */
enum sroce_core_port_state { SROCE_PORT_DOWN = 1, SROCE_PORT_ACTIVE = 4 };
enum sroce_core_phys_state { SROCE_PHYS_DISABLED = 3, SROCE_PHYS_LINK_UP = 5 };
enum sroce_core_mtu {
	SROCE_MTU_NONE = 0, /* netdev MTU too small for any IB MTU */
	SROCE_MTU_256 = 1,
	SROCE_MTU_512 = 2,
	SROCE_MTU_1024 = 3,
	SROCE_MTU_2048 = 4,
	SROCE_MTU_4096 = 5,
};

/* What a netdev change means for the port: the async event to raise. */
enum sroce_core_port_event { SROCE_EVENT_NONE = 0, SROCE_EVENT_PORT_ACTIVE, SROCE_EVENT_PORT_ERR };

#include "core_sq_poll.h" /* the SQ pollers: sq_poll's modes, shared pollers */

struct sroce_core_dev_init {
	unsigned int netdev_mtu;
	int netdev_up; /* running with carrier */
	/* A shared poller to join (above); NULL: sq_poll and the fields after
	 * it decide whether the device starts a poller of its own. */
	struct sroce_core_sq_poller *sq_poller;
	/* The SQ poller (Documentation/sq-poller.md): enum sroce_core_sq_poll;
	 * without one every post rings the doorbell. For SROCE_SQ_POLL_AUTO:
	 * online_cpus, poll_cpus (online CPUs the module parameter
	 * sq_poll_cpus names; 0: none) and pollers (other devices' poller
	 * threads now); 0 in the other modes. sq_idle_us: polling without work before the thread
	 * sleeps; sq_yield_us: how long it naps while other tasks want its CPU
	 * before it dozes. poller_name: its thread's name (15 chars). */
	int sq_poll;
	unsigned int online_cpus;
	unsigned int poll_cpus;
	unsigned int pollers;
	unsigned int sq_idle_us;
	unsigned int sq_yield_us;
	char poller_name[16];
	/* Zero-copy send (transport.md): an RC or XRC request's payload of at
	 * least this many bytes from a zero-copy MR
	 * goes into the packet as page fragments instead of being copied. 0:
	 * always copy. */
	unsigned int zero_copy_min;
};

struct sroce_core_port_attr {
	unsigned int state;      /* enum sroce_core_port_state */
	unsigned int phys_state; /* enum sroce_core_phys_state */
	unsigned int max_mtu;    /* enum sroce_core_mtu */
	unsigned int active_mtu; /* enum sroce_core_mtu */
};

/* Pure helpers. */
unsigned int sroce_core_mtu_for_netdev(unsigned int netdev_mtu);
/* EUI-64 from a MAC (the universal/local bit flipped), big-endian. */
unsigned long long sroce_core_guid_from_mac(const unsigned char mac[6]);

/* Devices. */
int sroce_core_dev_create(const struct sroce_core_dev_init *init, struct sroce_core_dev **out);
/* Stops the device's threads, then drops the handle (process context). */
void sroce_core_dev_destroy(struct sroce_core_dev *dev);
void sroce_core_query_port(struct sroce_core_dev *dev, struct sroce_core_port_attr *attr);
/* The netdev changed state or MTU; returns the event to raise, if any. */
enum sroce_core_port_event sroce_core_netdev_changed(struct sroce_core_dev *dev, int netdev_up,
						     unsigned int netdev_mtu);

/* User contexts. req holds req_len bytes copied from udata (zero-filled up
 * to sizeof(*req) when the provider's struct is shorter). */
int sroce_core_ucontext_create(struct sroce_core_dev *dev, const struct sroce_alloc_ucontext_req *req,
			       unsigned long req_len, struct sroce_alloc_ucontext_resp *resp,
			       struct sroce_core_ucontext **out);
/* After this returns the core no longer writes the context page: the glue
 * may then release it. */
void sroce_core_ucontext_destroy(struct sroce_core_ucontext *uctx);
/* Fills the context page (struct sroce_context_page) the glue maps; once,
 * before it is mapped. The page must stay until sroce_core_ucontext_destroy:
 * the SQ poller writes its NEED_WAKEUP flag. */
void sroce_core_ucontext_fill_page(struct sroce_core_ucontext *uctx, void *page);

/* Protection domains. */
int sroce_core_pd_create(struct sroce_core_dev *dev, struct sroce_core_pd **out);
void sroce_core_pd_destroy(struct sroce_core_pd *pd);
unsigned int sroce_core_pd_number(const struct sroce_core_pd *pd);

/* ---------------------------------------------------------------------- */
/* Transport objects. Numeric values are ib_verbs encodings throughout:
 * enum ib_qp_type, ib_qp_state, ib_qp_attr_mask bits, ib_mtu, IB_ACCESS_*,
 * IB_CQ_* notify flags, ib_wc_status/ib_wc_opcode (in struct sroce_cqe),
 * ib_wr_opcode (in struct sroce_wqe). owner is the glue's object (ib_cq,
 * ib_qp, ib_srq), passed back in sroce_env_event.
 *
 * Rings (abi/sroce-abi.h: struct sroce_ring_header + entries) are allocated
 * by the glue, zeroed, sized by sroce_core_ring_size, for user and kernel
 * objects alike; the glue frees them after the core object is destroyed and
 * the last mapping is gone. */

/* Rounds `entries` up to a power of two (at least 1) and gives the ring's
 * log2 size and bytes (header + entries, page-rounded). -EINVAL when
 * entries is 0 or above max_entries. */
int sroce_core_ring_size(unsigned int entries, unsigned int max_entries, unsigned int entry_size,
			 unsigned int *log_size, unsigned long *bytes);

/* Addressing of a path (RoCEv2 over IPv4 or IPv6), resolved by the glue. */
struct sroce_core_path_info {
	unsigned char ipv6;          /* 0: IPv4 in the last 4 bytes of src/dst */
	unsigned char tclass;        /* IPv4 TOS / IPv6 traffic class */
	unsigned char hop_limit;     /* IPv4 TTL / IPv6 hop limit */
	unsigned char reserved;
	unsigned int flow_label;
	unsigned char src[16];       /* GID form: ::ffff:a.b.c.d for IPv4 */
	unsigned char dst[16];
};

/* Completion queues. */
struct sroce_core_cq_init {
	void *owner;
	void *ring;              /* sroce_core_ring_size(cqe, ..., sizeof(sroce_cqe)) */
	unsigned int log_size;
	int user;                /* consumer index is written by user space */
	int timestamp;           /* each CQE carries sroce_env_now_ns() when posted */
};
int sroce_core_cq_create(struct sroce_core_dev *dev, const struct sroce_core_cq_init *init,
			 struct sroce_core_cq **out);
void sroce_core_cq_destroy(struct sroce_core_cq *cq);
/* flags: IB_CQ_SOLICITED (1) or IB_CQ_NEXT_COMP (2), | IB_CQ_REPORT_MISSED_EVENTS (4).
 * Returns 1 when REPORT_MISSED_EVENTS is set and completions are pending. */
int sroce_core_cq_req_notify(struct sroce_core_cq *cq, int flags);
/* Kernel CQs: copies up to n CQEs out; returns how many. qp_owner[i]
 * gets the owner of the QP of out[i], NULL if that QP is gone. */
int sroce_core_cq_poll(struct sroce_core_cq *cq, struct sroce_cqe *out, void **qp_owner, int n);
/* CQ moderation: a completion event waits for count completions since the
 * CQ was armed, or period_us after the first of them, whichever comes first
 * (count 0 or 1: no moderation; period 0: no time bound). CQEs are never
 * delayed, only events. -EINVAL above SROCE_MAX_CQ_MODERATION_*; -ENOMEM.
 * Process context. */
int sroce_core_cq_modify(struct sroce_core_cq *cq, unsigned int count, unsigned int period_us);
/* Moves the pending CQEs into a new ring; -EINVAL if they do not fit. */
int sroce_core_cq_resize(struct sroce_core_cq *cq, void *ring, unsigned int log_size);

/* XRC domains (IBTA annex A14): what XRC SRQs and XRC target QPs share. */
int sroce_core_xrcd_create(struct sroce_core_dev *dev, struct sroce_core_xrcd **out);
void sroce_core_xrcd_destroy(struct sroce_core_xrcd *xrcd);
unsigned int sroce_core_xrcd_number(const struct sroce_core_xrcd *xrcd);

/* Shared receive queues. */
struct sroce_core_srq_init {
	void *owner;
	struct sroce_core_pd *pd;
	/* XRC SRQs: the domain and the CQ its targets' receive completions go
	 * to (both or neither; -EINVAL otherwise). */
	struct sroce_core_xrcd *xrcd;
	struct sroce_core_cq *cq;
	void *ring;
	unsigned int log_size;
	unsigned int stride;     /* bytes per WQE: sroce_core_wqe_stride */
	unsigned int max_sge;
	unsigned int srq_limit;
	int user;
	/* Multi-packet receive: sizes as sroce_core_mp_wr_round gives them,
	 * both 0 for an ordinary SRQ. */
	unsigned int mp_wr_buffer_sz;
	unsigned int mp_packet_align_sz;
};
/* Multi-packet receive: rounds a request's buffer size and packet
 * alignment to the ones a queue uses (Documentation/mp-wr.md): -EINVAL for
 * a zero buffer size or either above SROCE_MP_WR_MAX_*. */
int sroce_core_mp_wr_round(unsigned int *buf_sz, unsigned int *align);
/* WQE stride for max_sge SGEs or max_inline bytes: a power of two. */
unsigned int sroce_core_wqe_stride(unsigned int max_sge, unsigned int max_inline);
int sroce_core_srq_create(struct sroce_core_dev *dev, const struct sroce_core_srq_init *init,
			  struct sroce_core_srq **out);
void sroce_core_srq_destroy(struct sroce_core_srq *srq);
/* Arms the limit event (IB_SRQ_LIMIT); 0 disarms. */
int sroce_core_srq_set_limit(struct sroce_core_srq *srq, unsigned int limit);
void sroce_core_srq_query(struct sroce_core_srq *srq, unsigned int *max_wr, unsigned int *max_sge,
			  unsigned int *limit);
unsigned int sroce_core_srq_number(const struct sroce_core_srq *srq);

/* Receive work queues and RSS (Documentation/rss.md). A WQ is a receive
 * ring with its own PD and CQ; an indirection table lists 2^log_size WQs
 * (repeats allowed); an RSS QP (a UD QP created with a table) spreads the
 * messages it receives over the table by the hash of their headers. */
struct sroce_core_wq_init {
	void *owner;             /* ib_wq: passed back in events */
	struct sroce_core_pd *pd;
	struct sroce_core_cq *cq;
	void *ring;
	unsigned int log_size;
	unsigned int stride;     /* bytes per WQE: sroce_core_wqe_stride */
	unsigned int max_sge;
	int user;
	/* The context whose RSS QPs may name it as their default WQ. */
	struct sroce_core_ucontext *uctx;
	/* Multi-packet receive: as sroce_core_srq_init's (both 0: ordinary). */
	unsigned int mp_wr_buffer_sz;
	unsigned int mp_packet_align_sz;
};
int sroce_core_wq_create(struct sroce_core_dev *dev, const struct sroce_core_wq_init *init,
			 struct sroce_core_wq **out);
void sroce_core_wq_destroy(struct sroce_core_wq *wq);
unsigned int sroce_core_wq_number(const struct sroce_core_wq *wq);
/* To `state` (enum ib_wq_state); cur_state is the caller's statement of
 * the current state (IB_WQ_CUR_STATE) or -1. -EINVAL for a transition the
 * WQ refuses. Moving to ERR flushes; to RESET discards what is posted. */
int sroce_core_wq_modify(struct sroce_core_wq *wq, unsigned int state, int cur_state,
			 struct sroce_env_batch *b);
unsigned int sroce_core_wq_state(struct sroce_core_wq *wq);
int sroce_core_wq_post_recv(struct sroce_core_wq *wq, const struct sroce_wqe *wqe, const struct sroce_sge *sge);
/* busy: non-zero while a live RSS QP names the WQ as its default or a child
 * QP receives into it (ib_core counts only the tables that hold a WQ).
 * close, destroy's check: -EBUSY then; else no QP may name it any more. */
int sroce_core_wq_busy(struct sroce_core_wq *wq);
int sroce_core_wq_close(struct sroce_core_wq *wq);
/* wqs: 2^log_size WQs of the device (-EINVAL otherwise, or above
 * SROCE_MAX_RWQ_IND_TABLE_LOG). The table holds a reference on each. */
int sroce_core_ind_table_create(struct sroce_core_dev *dev, unsigned int log_size,
				struct sroce_core_wq *const *wqs, struct sroce_core_ind_table **out);
void sroce_core_ind_table_destroy(struct sroce_core_ind_table *t);

/* An RSS QP's hashing (rss.h): enum ibv_rx_hash_fields, the function, the
 * headers, the Toeplitz key; and an optional default WQ, by number, for
 * messages that match no field (0: none, they hash to 0): a WQ of the QP's
 * context (sroce_core_qp_init.uctx, NULL for the kernel's) and PD. */
enum sroce_core_rss_func { SROCE_CORE_RSS_TOEPLITZ = 0, SROCE_CORE_RSS_XOR = 1 };
enum sroce_core_rss_headers { SROCE_CORE_RSS_OUTER = 0, SROCE_CORE_RSS_PAYLOAD = 1 };
struct sroce_core_rss_init {
	struct sroce_core_ind_table *table;
	unsigned int default_wqn;
	unsigned long long fields;
	unsigned int func;       /* enum sroce_core_rss_func */
	unsigned int headers;    /* enum sroce_core_rss_headers */
	unsigned int key_len;    /* 40 for Toeplitz; ignored by XOR */
	unsigned char key[40];
};

/* A child UD QP of the seed's consecutive-QPN form (srocedv_create_rss_ud_qps,
 * Documentation/rss.md): numbered base + index in an aligned block of
 * 2^block_log2 QPNs of its context, receiving into the context's WQ wqn
 * (of the QP's PD, with the QP's receive CQ as its CQ, no other child's)
 * instead of an RQ. What an RSS QP places in that WQ then names the child. */
#define SROCE_CORE_RSS_BLOCK_NEW 0xffffffffu /* block_base: reserve a new block */
struct sroce_core_rss_child {
	unsigned int wqn;
	unsigned int block_base;
	unsigned int block_log2;
	unsigned int index;
};

/* Queue pairs. XRC (IBTA annex A14): an initiator (XRC_INI) is a send-only
 * RC QP: PD, send CQ and SQ, no receive side. A target (XRC_TGT) is a
 * receive-only one: its XRC domain and nothing else (no PD, CQs, SRQ or
 * rings); each request's XRCETH names the XRC SRQ of that domain whose
 * WQE, PD and CQ it uses. */
struct sroce_core_qp_init {
	void *owner;
	unsigned int qp_type;    /* enum ib_qp_type: GSI, RC, UC, UD, XRC_INI, XRC_TGT */
	unsigned int port;
	struct sroce_core_pd *pd;
	struct sroce_core_cq *send_cq;
	struct sroce_core_cq *recv_cq;
	struct sroce_core_srq *srq; /* NULL: the QP has its own RQ */
	struct sroce_core_xrcd *xrcd; /* XRC_TGT only */
	unsigned int max_send_sge;
	unsigned int max_recv_sge;
	unsigned int max_inline_data;
	int sq_sig_all;
	int user;
	/* User QPs: their context. A context that polls (not
	 * SROCE_UCTX_REQ_NO_SQ_POLL, sq_poll on) puts the QP on the device's
	 * SQ poller. NULL for kernel QPs. */
	struct sroce_core_ucontext *uctx;
	void *sq_ring;
	unsigned int sq_log_size;
	unsigned int sq_stride;
	void *rq_ring;           /* NULL with an SRQ */
	unsigned int rq_log_size;
	unsigned int rq_stride;
	/* Multi-packet receive on the QP's own RQ (not with an SRQ: give the
	 * SRQ the sizes): as sroce_core_mp_wr_round gives them, or both 0. */
	unsigned int mp_wr_buffer_sz;
	unsigned int mp_packet_align_sz;
	/* UD only: an RSS QP, which has no RQ of its own (rq_ring NULL, no
	 * SRQ) and receives into the table's WQs. NULL: an ordinary QP. */
	const struct sroce_core_rss_init *rss;
	/* UD only: a child of the consecutive-QPN form (no RQ, no SRQ). */
	const struct sroce_core_rss_child *rss_child;
};
int sroce_core_qp_create(struct sroce_core_dev *dev, const struct sroce_core_qp_init *init,
			 struct sroce_core_qp **out);
/* Moves the QP out of every table and stops its timers and work (may
 * sleep); in-flight packets that still hold it finish harmlessly. */
void sroce_core_qp_destroy(struct sroce_core_qp *qp);
unsigned int sroce_core_qp_number(const struct sroce_core_qp *qp);

/* The attributes of ib_qp_attr the core keeps. */
struct sroce_core_qp_attr {
	unsigned int qp_state;
	unsigned int cur_qp_state;
	unsigned int path_mtu;       /* enum ib_mtu */
	unsigned int qkey;
	unsigned int rq_psn;
	unsigned int sq_psn;
	unsigned int dest_qp_num;
	unsigned int qp_access_flags;
	unsigned int pkey_index;
	unsigned int en_sqd_async_notify;
	unsigned int sq_draining;
	unsigned int max_rd_atomic;
	unsigned int max_dest_rd_atomic;
	unsigned int min_rnr_timer;
	unsigned int timeout;
	unsigned int retry_cnt;
	unsigned int rnr_retry;
	unsigned int port_num;
	unsigned int max_send_wr;
	unsigned int max_recv_wr;
	unsigned int max_send_sge;
	unsigned int max_recv_sge;
	unsigned int max_inline_data;
	/* IB_QP_AV: the resolved path; the core takes over the reference. */
	struct sroce_env_path *path;
	struct sroce_core_path_info path_info;
	unsigned char sgid_index;
	unsigned char reserved[3];
};
/* mask: enum ib_qp_attr_mask. Validates the transition and attributes as
 * ib_modify_qp_is_ok does (-EINVAL). Moving to ERR flushes (completions
 * with IB_WC_WR_FLUSH_ERR). On error the path reference is still dropped. */
int sroce_core_qp_modify(struct sroce_core_qp *qp, const struct sroce_core_qp_attr *attr, int mask,
			 struct sroce_env_batch *b);
void sroce_core_qp_query(struct sroce_core_qp *qp, struct sroce_core_qp_attr *attr);

/* User QPs: the provider wrote WQEs into the mapped SQ; run the requester. */
void sroce_core_qp_doorbell(struct sroce_core_qp *qp, struct sroce_env_batch *b);
/* Receive steering of a user RC/UC QP (transport.md): the CPU its owner
 * was just seen on (modify; process context, may sleep: never inside a
 * batch) and the CPUs it may run on (a bitmap of len bytes, the env's to
 * test; NULL: steering off for the QP), and the owner's own choice
 * (srocedv_modify_qp_rx_cpu; -1: follow the owner). */
void sroce_core_qp_owner_seen(struct sroce_core_qp *qp, int cpu, const void *allowed, unsigned int len);
void sroce_core_qp_pin_rx_cpu(struct sroce_core_qp *qp, int cpu);
int sroce_core_qp_pinned_rx_cpu(const struct sroce_core_qp *qp); /* -1: none */
/* Kernel QPs: post one WQE (with wqe->num_sge SGEs, or inline bytes in
 * `data` of length inline_len when SROCE_WQE_INLINE). -ENOMEM when full,
 * -EINVAL for a malformed WQE or a QP state that refuses it. */
int sroce_core_qp_post_send(struct sroce_core_qp *qp, const struct sroce_wqe *wqe,
			    const struct sroce_sge *sge, const void *data, unsigned int inline_len);
int sroce_core_qp_post_recv(struct sroce_core_qp *qp, const struct sroce_wqe *wqe,
			    const struct sroce_sge *sge);
int sroce_core_srq_post_recv(struct sroce_core_srq *srq, const struct sroce_wqe *wqe,
			     const struct sroce_sge *sge, struct sroce_env_batch *b);

/* Address handles (UD and GSI); the core takes over the path reference. */
int sroce_core_ah_create(struct sroce_core_pd *pd, struct sroce_env_path *path,
			 const struct sroce_core_path_info *info, struct sroce_core_ah **out);
void sroce_core_ah_destroy(struct sroce_core_ah *ah);
/* The handle a UD WQE names (struct sroce_wqe.ud.ah_handle). */
unsigned int sroce_core_ah_handle(const struct sroce_core_ah *ah);

/* Memory regions. Pages are kernel virtual addresses of pinned pages of
 * (1 << page_shift) bytes; the MR covers [iova, iova + length) starting
 * at offset (iova & page mask) in pages[0], so npages must be exactly the
 * number of pages that range touches. A DMA MR (get_dma_mr) has no pages
 * (npages 0; iova, length and page_shift are ignored) and addresses kernel
 * virtual memory directly. access: IB_ACCESS_LOCAL_WRITE, REMOTE_WRITE,
 * REMOTE_READ, REMOTE_ATOMIC, MW_BIND (-EINVAL for other bits, and for
 * remote write or atomic without local write). lkey == rkey. */
struct sroce_core_mr_init {
	struct sroce_core_pd *pd;
	unsigned long long iova;
	unsigned long long length;
	unsigned int access;         /* IB_ACCESS_* */
	unsigned int page_shift;
	unsigned long npages;
	int dma;
	/* Registered for user space: its page table is charged to the calling
	 * process and it may not take the kernel's reserve of keys. */
	int user;
	/* Once the MR exists (create returned 0), the pages belong to it until
	 * release(owner, may_sleep) is called, exactly once, when the last
	 * reference is gone: inside sroce_core_mr_destroy (may_sleep = 1)
	 * unless the transport still holds the MR then; in that case later, in
	 * any context (may_sleep = 0: defer the unpinning). NULL: nothing to
	 * release. */
	void (*release)(void *owner, int may_sleep);
	void *owner;
	/* The pages are page memory the env may hold references on
	 * (sroce_env_pkt_add_frag): a user MR's pinned pages. Zero-copy send
	 * reads them in place (sroce_core_dev_init.zero_copy_min). */
	int zero_copy;
	/* A fast-registration MR (ib_alloc_mr, IB_MR_TYPE_MEM_REG; kernel users
	 * only): room for npages pages of (1 << page_shift) bytes, no mapping
	 * and access 0 until an IB_WR_REG_MR registers what
	 * sroce_core_mr_stage_* staged. iova, length, access, dma and user
	 * must be 0. It needs no set_page or enable: its key is invalid until
	 * the first REG_MR, and again after LOCAL_INV or SEND_WITH_INV. */
	int fast_reg;
};
/* Three phases: create allocates the page table (keys not valid yet; may
 * sleep), the glue fills it with sroce_core_mr_set_page, then enable makes
 * the keys valid (-EINVAL if a page is missing). destroy makes the keys
 * invalid at once and drops the handle; it may sleep and must be called
 * without core locks held. It fails with -EBUSY, and the MR stays, while
 * memory windows are bound to it (IBA 10.6.7.2.6, as rxe). */
int sroce_core_mr_create(struct sroce_core_dev *dev, const struct sroce_core_mr_init *init,
			 struct sroce_core_mr **out);
void sroce_core_mr_set_page(struct sroce_core_mr *mr, unsigned long index, void *kva);
int sroce_core_mr_enable(struct sroce_core_mr *mr);
int sroce_core_mr_destroy(struct sroce_core_mr *mr);
unsigned int sroce_core_mr_lkey(const struct sroce_core_mr *mr);
unsigned int sroce_core_mr_rkey(const struct sroce_core_mr *mr);
/* ib_map_mr_sg on a fast-registration MR: page i of the next mapping
 * (-ENOMEM beyond the MR's room: ib_sg_to_pages then stops), then the
 * mapping itself: npages pages of (1 << page_shift) bytes, iova at its
 * offset in the first page (-EINVAL when [iova, iova + length) does not fit
 * them or page_shift is not the MR's). The staged mapping takes effect
 * only at the next IB_WR_REG_MR, which copies it: the registered one in
 * use stays as it was until then. The caller serialises a MR's staging
 * against its own REG_MR posts, as ib_core's users do. */
int sroce_core_mr_stage_page(struct sroce_core_mr *mr, unsigned long index, void *kva);
int sroce_core_mr_stage_map(struct sroce_core_mr *mr, unsigned long npages, unsigned long long iova,
			    unsigned long long length, unsigned int page_shift);

/* Memory windows (mw.h): type 1 or 2 (IB_MW_TYPE_*), invalid until bound
 * by a BIND_MW work request. -EINVAL for another type or more than
 * SROCE_MW_LAYOUT_MAX_DESCRIPTORS layout pieces (0: the window takes no
 * layout). destroy ends the window's access and lets go of its MR or
 * layout; it may sleep; -EBUSY, and the window stays, while a bound layout
 * includes it. stage_layout compiles a layout for the window's next bind
 * (mw_layout.h; abi/sroce-abi.h): the request, num_entries entries and
 * num_dims dimensions, all copied in by the caller; resp out. May sleep. */
int sroce_core_mw_create(struct sroce_core_pd *pd, unsigned int type, int user, unsigned int max_descriptors,
			 struct sroce_core_mw **out);
int sroce_core_mw_destroy(struct sroce_core_mw *mw);
unsigned int sroce_core_mw_rkey(const struct sroce_core_mw *mw);
int sroce_core_mw_stage_layout(struct sroce_core_mw *mw, const struct sroce_mw_layout_req *req,
			       const struct sroce_mw_layout_entry *entries, const struct sroce_mw_layout_dim *dims,
			       unsigned int num_dims, struct sroce_mw_layout_resp *resp);

/* Receive: one packet starting at its IP header, after UDP demux to port
 * 4791. The core consumes pkt. */
void sroce_core_rx(struct sroce_core_dev *dev, struct sroce_env_pkt *pkt, struct sroce_env_batch *b);
/* A packet sroce_env_rx_steer or _rx_steer_qp took, on the CPU it was
 * steered to: received as by sroce_core_rx (its ICRC checked here), without
 * counting it on the device again (its first pass did) or steering it
 * again. token: _rx_steer_qp's, or NULL. Consumes pkt; dropping one that
 * cannot be queued: _rx_steer_drop. */
void sroce_core_rx_steered(struct sroce_core_dev *dev, struct sroce_env_pkt *pkt, void *token,
			   struct sroce_env_batch *b);
void sroce_core_rx_steer_drop(struct sroce_core_dev *dev, struct sroce_env_pkt *pkt, void *token);

/* Counters, object counts and the debug views: core_views.h. */

#ifdef __cplusplus
}
#endif

#include "core_views.h"

#endif /* SROCE_CORE_H */

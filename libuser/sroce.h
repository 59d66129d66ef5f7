/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Private header of the sroce provider. */
#ifndef SROCE_PROVIDER_H
#define SROCE_PROVIDER_H

#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sroce-abi.h"
#include "infiniband/srocedv.h"
#include "sroce/verbs_pabi34.h"

/* The ABI this provider speaks. Overridden only by the build of the
 * deliberately mismatched provider used in tests. */
#ifndef SROCE_PROVIDER_ABI_VERSION
#define SROCE_PROVIDER_ABI_VERSION SROCE_ABI_VERSION
#endif

#define sroce_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

struct sroce_device {
	struct verbs_device vdev;
};

struct sroce_context {
	struct verbs_context vctx;
	const volatile struct sroce_context_page *ctx_page; /* read-only mapping */
	size_t ctx_page_size;
	uint64_t caps;              /* enum sroce_ucontext_resp_caps */
	bool ring_every_post;       /* SROCE_RING_EVERY_POST: ignore SROCE_SQ_ACK_DUE */
};

struct sroce_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
};

/*
 * The lock of a ring's user side: test and test-and-set, inline. The
 * critical sections are a few dozen instructions, and pthread_spin_lock is a
 * call through the PLT that makes every fast path save its registers around
 * it (bench-intf: a locked single-completion poll spent a quarter of its
 * instructions on the two calls). Same contract as a pthread spinlock:
 * trylock returns 0 when it took the lock, EBUSY when not.
 */
struct sroce_spinlock {
	int held;
};

static inline void sroce_spin_init(struct sroce_spinlock *l)
{
	__atomic_store_n(&l->held, 0, __ATOMIC_RELAXED);
}

static inline int sroce_spin_trylock(struct sroce_spinlock *l)
{
	return __atomic_exchange_n(&l->held, 1, __ATOMIC_ACQUIRE) ? EBUSY : 0;
}

static inline void sroce_spin_lock(struct sroce_spinlock *l)
{
	/* Acquire pairs with the release in sroce_spin_unlock. */
	while (__atomic_exchange_n(&l->held, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->held, __ATOMIC_RELAXED)) /* spin on a shared line */
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#elif defined(__aarch64__)
			__asm__ __volatile__("yield" ::: "memory");
#else
			;
#endif
}

static inline void sroce_spin_unlock(struct sroce_spinlock *l)
{
	__atomic_store_n(&l->held, 0, __ATOMIC_RELEASE);
}

/*
 * A mapped ring (abi/sroce-abi.h). This side owns one index and keeps its
 * own copy of it in `idx`; the copy in shared memory is only published.
 * The other side's index is read with acquire and cached in `peer`.
 */
struct sroce_uring {
	void *map;                 /* the mapping, `bytes` long */
	size_t bytes;
	struct sroce_ring_header *hdr;
	uint8_t *entries;
	uint32_t mask;             /* entries - 1 */
	uint32_t stride;
	uint32_t idx;              /* the index this side writes */
	uint32_t peer;             /* last value read of the other side's */
	struct sroce_spinlock lock;
	/* A multi-packet receive queue's sizes in use (mp-wr.md): every WR is
	 * mp_size bytes; 0 for an ordinary queue. */
	uint32_t mp_size;
	uint32_t mp_align;
};

struct sroce_cq {
	struct verbs_cq vcq;       /* vcq.cq is the ibv_cq; vcq.cq_ex the readers */
	uint64_t wc_flags;         /* ibv_create_cq_ex's (IBV_WC_EX_WITH_*); 0 for ibv_create_cq */
	uint64_t format_mask;      /* srocedv_modify_cq's enum srocedv_wc_format, 0 if none */
	uint32_t intf_refs;        /* formatted tables held (intf.c): destroy is EBUSY */
	bool intf_dying;           /* destroy passed its check (intf.c): queries are EBUSY */
	struct sroce_uring ring;   /* user consumes, kernel produces */
	/* ibv_cq_ex polling (cq_ex.c), from start_poll to end_poll: ring.idx
	 * is the CQE the readers read, cur points at it. */
	const struct sroce_cqe *cur;
	bool single_threaded;      /* IBV_CREATE_CQ_ATTR_SINGLE_THREADED: no lock */
};

/*
 * The batch of the ibv_qp_ex builders (qp_ex.c), from ibv_wr_start to
 * ibv_wr_complete or ibv_wr_abort, under the SQ lock. Each builder claims
 * the next SQ slot; the setters fill the last one claimed. Nothing is
 * published before ibv_wr_complete, and an error anywhere in the batch
 * discards all of it.
 */
struct sroce_wr_batch {
	uint64_t ops;              /* IBV_QP_EX_WITH_* granted at creation */
	struct sroce_wqe *cur;     /* the WQE the setters fill; NULL before a builder */
	uint32_t start;            /* sq.idx at ibv_wr_start */
	int err;                   /* the batch's first error, 0 if none */
	bool open;                 /* between ibv_wr_start and complete/abort */
	bool cur_needs_addr;       /* UD: cur has no ibv_wr_set_ud_addr yet */
};

/* The QP's interface families (intf.c, intf_qp.c), indexed by
 * SROCE_INTF_RDMA / SROCE_INTF_MSG: the tables held, and the WQE flags
 * (fence, solicited) their mode puts in every WR; signalling and locking
 * are the tables' own. */
enum { SROCE_INTF_RDMA, SROCE_INTF_MSG, SROCE_INTF_QP_FAMILIES };
struct sroce_qp_intf {
	uint32_t refs[SROCE_INTF_QP_FAMILIES];
	uint16_t wqe_flags[SROCE_INTF_QP_FAMILIES];    /* SROCE_WQE_FENCE, _SOLICITED */
	bool dying;                /* destroy passed its check: queries are EBUSY */
	uint32_t rq_repost;        /* the RQ WQE recv_repost posts next (free-running) */
};

struct sroce_qp {
	struct verbs_qp vqp;       /* vqp.qp is the ibv_qp; vqp.qp_ex the builders */
	struct sroce_uring sq;     /* user produces, kernel consumes; unmapped for an XRC target */
	struct sroce_uring rq;     /* unmapped (map == NULL) with an SRQ, and for XRC */
	struct sroce_wq *rwq;      /* a child of the consecutive-QPN form (rss_qps.c): its WQ, in place of an RQ */
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;
	struct sroce_wr_batch batch;
	struct sroce_qp_intf intf;
};

struct sroce_srq {
	struct verbs_srq vsrq;     /* vsrq.srq is the ibv_srq; XRC: its type, domain, number */
	struct sroce_uring ring;
	uint32_t max_sge;
	uint32_t srqn;
	uint32_t intf_refs;        /* receive family tables held (intf.c): destroy is EBUSY */
	bool intf_dying;           /* destroy passed its check (intf.c): queries are EBUSY */
	uint32_t intf_repost;      /* the WQE recv_repost posts next (free-running) */
};

/* A receive work queue (wq.c): a receive ring an RSS QP's table feeds. */
struct sroce_wq {
	struct ibv_wq ibv_wq;
	struct sroce_uring ring;
	uint32_t max_sge;
	uint32_t intf_refs;        /* receive family tables held (intf.c): destroy is EBUSY */
	bool intf_dying;           /* destroy passed its check (intf.c): queries are EBUSY */
	uint32_t intf_repost;      /* the WQE recv_repost posts next (free-running) */
};

struct sroce_ah {
	struct ibv_ah ibv_ah;
	uint32_t handle;           /* the kernel's AH handle for UD WQEs */
};

static inline struct sroce_context *to_sctx(struct ibv_context *ibctx)
{
	return sroce_container_of(ibctx, struct sroce_context, vctx.context);
}

static inline struct sroce_wq *to_swq(struct ibv_wq *ibwq)
{
	return sroce_container_of(ibwq, struct sroce_wq, ibv_wq);
}

static inline struct sroce_cq *to_scq(struct ibv_cq *ibcq)
{
	return sroce_container_of(ibcq, struct sroce_cq, vcq.cq);
}

static inline struct sroce_qp *to_sqp(struct ibv_qp *ibqp)
{
	return sroce_container_of(ibqp, struct sroce_qp, vqp.qp);
}

static inline struct sroce_srq *to_ssrq(struct ibv_srq *ibsrq)
{
	return sroce_container_of(ibsrq, struct sroce_srq, vsrq.srq);
}

static inline struct sroce_ah *to_sah(struct ibv_ah *ibah)
{
	return sroce_container_of(ibah, struct sroce_ah, ibv_ah);
}

/* Shared-index accesses; every use names the kernel side it pairs with
 * (labels in Documentation/abi.md, "Ring barriers"). */
static inline uint32_t sroce_load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void sroce_store_release(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline void *sroce_ring_entry(const struct sroce_uring *r, uint32_t idx)
{
	return r->entries + (size_t)(idx & r->mask) * r->stride;
}

/* ring.c */
int sroce_ring_map(struct sroce_uring *r, int cmd_fd, const struct sroce_ring_info *info,
		   uint32_t min_stride);
void sroce_ring_unmap(struct sroce_uring *r);
/* Work queues: the WQE slot for the next post, NULL when the ring is full. */
void *sroce_wq_next(struct sroce_uring *r);
/* Work queues: publishes the WQEs written since the last publication. */
void sroce_wq_publish(struct sroce_uring *r);
/* Receive queues (QP RQ, SRQ): one receive WQE. */
int sroce_post_one_recv(struct sroce_uring *r, uint32_t max_sge, const struct ibv_recv_wr *wr);
/* ibv_post_recv and ibv_post_srq_recv on ring r: the WRs up to the first
 * bad one, which goes to *bad_wr. A multi-packet queue takes no part of a
 * list with a WR that is not r->mp_size bytes (EINVAL). */
int sroce_post_recv_list(struct sroce_uring *r, uint32_t max_sge, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);

/* True if ibctx was opened by this provider. */
int sroce_is_sroce_context(struct ibv_context *ibctx);
int sroce_is_sroce_device(struct ibv_device *ibdev);
/* A driver method (abi/sroce-abi.h) as a plain ioctl on ctx's command fd:
 * cmd is a struct ib_uverbs_ioctl_hdr with its attributes after it. 0 or
 * an errno value, EOPNOTSUPP for a method the kernel lacks. */
int sroce_method_ioctl(struct ibv_context *ctx, void *cmd);

/* sroce.c, verbs.c */
void sroce_free_context(struct ibv_context *ibctx);
extern const struct verbs_context_ops sroce_ctx_ops;

/* mr.c */
struct ibv_mr *sroce_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
			    int access);
int sroce_dereg_mr(struct verbs_mr *vmr);

/* cq.c */
struct ibv_cq *sroce_create_cq(struct ibv_context *ibctx, int cqe, struct ibv_comp_channel *channel,
			       int comp_vector);
int sroce_destroy_cq(struct ibv_cq *ibcq);
int sroce_resize_cq(struct ibv_cq *ibcq, int cqe);
int sroce_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc);
int sroce_modify_cq(struct ibv_cq *ibcq, struct ibv_modify_cq_attr *attr);
/* A receive CQ of a multi-packet queue must read its offsets and flags. */
static inline bool sroce_cq_reads_mp(struct ibv_cq *cq)
{
	return cq && (to_scq(cq)->wc_flags & SROCEDV_WC_EX_WITH_MP_WR);
}
/* The ibv_wc_flags of a CQE: a table, no branch (every poller's path). */
static inline unsigned int sroce_cqe_wc_flags(const struct sroce_cqe *cqe)
{
	static const uint8_t wc_flags[8] = {
		[SROCE_CQE_WITH_IMM] = IBV_WC_WITH_IMM,
		[SROCE_CQE_WITH_INV] = IBV_WC_WITH_INV,
		[SROCE_CQE_WITH_IMM | SROCE_CQE_WITH_INV] = IBV_WC_WITH_IMM | IBV_WC_WITH_INV,
		[SROCE_CQE_GRH] = IBV_WC_GRH,
		[SROCE_CQE_GRH | SROCE_CQE_WITH_IMM] = IBV_WC_GRH | IBV_WC_WITH_IMM,
		[SROCE_CQE_GRH | SROCE_CQE_WITH_INV] = IBV_WC_GRH | IBV_WC_WITH_INV,
		[SROCE_CQE_GRH | SROCE_CQE_WITH_IMM | SROCE_CQE_WITH_INV] =
			IBV_WC_GRH | IBV_WC_WITH_IMM | IBV_WC_WITH_INV,
	};
	_Static_assert(SROCE_CQE_WITH_IMM == 1 && SROCE_CQE_WITH_INV == 2 && SROCE_CQE_GRH == 4,
		       "the table's index is the CQE's low three flags");

	_Static_assert(SROCE_CQE_MP_MORE_IN_MSG == 8 && SROCE_CQE_MP_CONSUMED == 16 &&
			       SROCE_CQE_MP_INCOMPLETE == 64 && SROCEDV_WC_MP_WR_MORE_IN_MSG == 1 << 7 &&
			       SROCEDV_WC_MP_WR_CONSUMED == 1 << 8 && SROCEDV_WC_MP_WR_INCOMPLETE == 1 << 9,
		       "multi-packet flags: CQE bits 3, 4 and 6 are wc_flags bits 7, 8 and 9");

	return wc_flags[cqe->flags & 7] | (cqe->flags & 0x18u) << 4 | (cqe->flags & 0x40u) << 3;
}
/* The wc.sl of a CQE. A UD receive over RoCE reports its packet type there,
 * as mlx5 does (RoCE carries no SL): bit 3 set for RoCE v2 (UDP), bits 2:0
 * the L3 header, 1 for IPv6 and 2 for IPv4. UCX before 1.18 reads it to
 * find the destination GID in the GRH area and drops every UD packet whose
 * type it cannot tell (Debian 12 ships 1.13). The CQE's network_hdr_type
 * is the kernel's enum rdma_network_type: 2 IPv4, 3 IPv6. */
static inline uint8_t sroce_cqe_sl(const struct sroce_cqe *cqe)
{
	static const uint8_t roce_v2[4] = { [2] = 0x8 | 0x2, [3] = 0x8 | 0x1 };

	return cqe->flags & SROCE_CQE_GRH ? roce_v2[cqe->network_hdr_type & 3] : cqe->sl;
}
/* CQEs the kernel published and the provider has not consumed (0 for a
 * producer index no kernel writes), and their release: cq.c, cq_ex.c and
 * intf_cq.c poll with them. */
static inline uint32_t sroce_cq_available(struct sroce_uring *r)
{
	/* Pairs with the kernel's store_release of the producer index after
	 * it wrote the CQEs (CQ-P1): every CQE below it is complete. */
	uint32_t avail = sroce_load_acquire(&r->hdr->producer) - r->idx;

	/* Not a state the kernel produces: read nothing. */
	return avail > r->mask + 1 ? 0 : avail;
}

static inline void sroce_cq_release(struct sroce_uring *r)
{
	/* Pairs with the kernel's load_acquire of the consumer index before it
	 * reuses a slot (CQ-C1): we are done reading. */
	sroce_store_release(&r->hdr->consumer, r->idx);
}

/* After a CQ's create command (err its result): maps the ring, ready to
 * poll; or undoes the creation and frees cq. 0 or the errno. */
int sroce_cq_created(struct sroce_cq *cq, int cmd_fd, int err, const struct sroce_create_cq_resp *resp);

/* cq_ex.c */
struct ibv_cq_ex *sroce_create_cq_ex(struct ibv_context *ibctx, struct ibv_cq_init_attr_ex *attr);
/* The same with create-time attributes for the kernel (srocedv_create_cq). */
struct ibv_cq_ex *sroce_create_cq_ex_req(struct ibv_context *ibctx, struct ibv_cq_init_attr_ex *attr,
					 const struct sroce_create_cq_req *req);
/* Installs the polling functions and the readers wc_flags asks for. */
void sroce_cq_ex_init(struct sroce_cq *cq, uint64_t wc_flags, bool single_threaded);
int sroce_query_rt_values(struct ibv_context *ibctx, struct ibv_values_ex *values);

/* sq.c: the send WQE encoding ibv_post_send and the builders share. */
/* The next SQ slot, its header set from wr_id, the opcode and the send
 * flags (IBV_SEND_INLINE dropped: inline setters set it); NULL when full.
 * The caller advances sq.idx once the WQE is complete. */
struct sroce_wqe *sroce_sq_claim(struct sroce_qp *qp, uint64_t wr_id, uint8_t opcode,
				 unsigned int send_flags);
/* One gather entry, replacing a gather list or inline data set before
 * (ibv_wr_set_sge); EINVAL on a QP without send gather entries. */
static inline int sroce_wqe_set_sge(const struct sroce_qp *qp, struct sroce_wqe *wqe, uint64_t addr,
				    uint32_t length, uint32_t lkey)
{
	if (!qp->max_send_sge)
		return EINVAL;
	wqe->flags &= (uint16_t)~SROCE_WQE_INLINE;
	wqe->inline_len = 0;
	wqe->num_sge = 1;
	*(struct sroce_sge *)(wqe + 1) = (struct sroce_sge){ .addr = addr, .length = length, .lkey = lkey };
	return 0;
}
/* The WQE's gather list; EINVAL above the QP's max_send_sge. */
int sroce_wqe_set_sges(const struct sroce_qp *qp, struct sroce_wqe *wqe,
		       const struct ibv_sge *sg_list, size_t num_sge);
/* Appends inline bytes; EINVAL past the QP's max_inline. */
int sroce_wqe_add_inline(const struct sroce_qp *qp, struct sroce_wqe *wqe, const void *addr,
			 size_t length);
/* Rings the kernel if it asked for it (NEED_WAKEUP); call unlocked, after
 * sroce_wq_publish. */
int sroce_sq_doorbell(struct ibv_qp *ibqp);

/* qp_ex.c: the ibv_qp_ex builders. */
/* Checks the requested IBV_QP_EX_WITH_* against the QP type (EOPNOTSUPP). */
int sroce_qp_ex_check_ops(enum ibv_qp_type type, uint64_t send_ops_flags);
/* Installs the builders and marks the QP VERBS_QP_EX. */
void sroce_qp_ex_init(struct sroce_qp *qp, uint64_t send_ops_flags);
void sroce_wr_flush(struct ibv_qp_ex *ex, uint32_t rkey, uint64_t remote_addr, size_t len,
		    uint8_t type, uint8_t level);

/* qp.c */
struct ibv_qp *sroce_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *sroce_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr);
/* The same with create-time attributes for the kernel (srocedv_create_qp). */
struct ibv_qp *sroce_create_qp_ex_req(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr,
				      const struct sroce_create_qp_req *req);
int sroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask);
int sroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
		   struct ibv_qp_init_attr *init);
int sroce_destroy_qp(struct ibv_qp *ibqp);
/* ibv_open_qp: a handle on an XRC target another process made. */
struct ibv_qp *sroce_open_qp(struct ibv_context *ctx, struct ibv_qp_open_attr *attr);
int sroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int sroce_post_bind(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr, uint32_t layout);
void sroce_wqe_set_bind(struct sroce_wqe *wqe, uint32_t new_rkey, const struct ibv_mw_bind_info *info);
struct ibv_mw *sroce_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int sroce_dealloc_mw(struct ibv_mw *mw);
int sroce_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind);
int sroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

/* srq.c */
struct ibv_srq *sroce_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
/* The same with create-time attributes for the kernel (srocedv_create_srq). */
struct ibv_srq *sroce_create_srq_req(struct ibv_pd *pd, struct ibv_srq_init_attr *attr,
				     const struct sroce_create_srq_req *req);
/* ibv_create_srq_ex: basic and XRC SRQs. */
struct ibv_srq *sroce_create_srq_ex(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *attr);
/* srocedv_create_srq_ex: req, if any, goes to the kernel as driver data. */
struct ibv_srq *sroce_create_srq_ex_req(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *attr,
					const struct sroce_create_srq_req *req);
int sroce_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);
int sroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask);
int sroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int sroce_destroy_srq(struct ibv_srq *ibsrq);
/* wq.c */
struct ibv_wq *sroce_create_wq(struct ibv_context *ctx, struct ibv_wq_init_attr *attr);
/* srocedv_create_wq: req goes to the kernel as driver data. */
struct ibv_wq *sroce_create_wq_req(struct ibv_context *ctx, struct ibv_wq_init_attr *attr,
				   const struct sroce_create_wq_req *req);
int sroce_modify_wq(struct ibv_wq *ibwq, struct ibv_wq_attr *attr);
int sroce_destroy_wq(struct ibv_wq *ibwq);
int sroce_post_wq_recv(struct ibv_wq *ibwq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
struct ibv_rwq_ind_table *sroce_create_rwq_ind_table(struct ibv_context *ctx, struct ibv_rwq_ind_table_init_attr *attr);
int sroce_destroy_rwq_ind_table(struct ibv_rwq_ind_table *table);
/* An RSS QP's driver data from its rx_hash_conf (SROCE_CREATE_QP_REQ_RX_HASH
 * and its fields; req's other bits as the caller set them). 0 or an errno. */
int sroce_rss_req(const struct ibv_qp_init_attr_ex *attr, struct sroce_create_qp_req *req);
int sroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

/* intf.c: interface families (srocedv_query_intf). Destroy's first step:
 * EBUSY while a table of the object is held; else 0, and the object is
 * dying (queries refuse it) until the free, or until sroce_intf_revive on
 * its flag when the kernel refuses the destroy. */
int sroce_intf_qp_dying(struct sroce_qp *qp);
int sroce_intf_cq_dying(struct sroce_cq *cq);
int sroce_intf_srq_dying(struct sroce_srq *srq);
int sroce_intf_wq_dying(struct sroce_wq *wq);
void sroce_intf_revive(bool *dying);

/* intf_qp.c, intf_cq.c: the specialised tables. */
struct srocedv_qp_ops_rdma;
struct srocedv_qp_ops_msg;
struct srocedv_cq_formatted_ops;
const struct srocedv_qp_ops_rdma *sroce_intf_rdma_ops(bool single_threaded, bool signaled);
const struct srocedv_qp_ops_msg *sroce_intf_msg_ops(bool single_threaded, bool signaled);
const struct srocedv_srq_ops *sroce_intf_srq_ops(bool single_threaded);
const struct srocedv_wq_ops *sroce_intf_wq_ops(bool single_threaded);
/* NULL for a format without SROCEDV_WC_BASE or with unknown bits. */
const struct srocedv_cq_formatted_ops *sroce_intf_cq_ops(uint64_t format_mask, bool single_threaded);

/* ah.c */
struct ibv_ah *sroce_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int sroce_destroy_ah(struct ibv_ah *ibah);

#endif /* SROCE_PROVIDER_H */

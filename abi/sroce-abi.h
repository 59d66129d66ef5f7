/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * sroce-abi.h - everything the sroce kernel module and user space share.
 *
 * This is the single definition of the uverbs udata structs, the mmap layout
 * and the shared ring, WQE and CQE formats. It is included by the kernel glue
 * (C), by the kernel core (freestanding C++, with SROCE_FREESTANDING defined)
 * and by the provider (libuser/). See Documentation/abi.md.
 *
 * Rules:
 *  - Fixed-width types only; every struct is naturally aligned with explicit
 *    padding, so that layout is the same for all compilers and both sides.
 *  - Request structs (user -> kernel) carry comp_mask; the kernel rejects bits
 *    it does not know. Response structs grow only at the end; a shorter
 *    response from an older kernel is read up to the length it had.
 *  - Anything the kernel reads from a mapping is untrusted: it masks ring
 *    indices and validates every field before use.
 */
#ifndef SROCE_ABI_H
#define SROCE_ABI_H

#ifdef SROCE_FREESTANDING
/* The kernel core includes no kernel or libc headers. */
typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
#else
#include <linux/types.h>
#endif

/*
 * Versions.
 * SROCE_UVERBS_ABI_VERSION is ib_device_ops.uverbs_abi_ver, which libibverbs
 * matches against the provider's range before loading it at all; it changes
 * only if the uverbs command set itself changes incompatibly.
 * SROCE_ABI_VERSION covers the contents of this file and is checked by the
 * kernel at alloc_ucontext: a provider built against another version is
 * refused with EPROTO.
 */
#define SROCE_UVERBS_ABI_VERSION 1
#define SROCE_ABI_VERSION 2 /* 2: WQE flags take the IBV_SEND_/IB_SEND_ values */

/* Extensible limits shared by both sides. */
#define SROCE_CACHELINE 64
#define SROCE_PAGE_SIZE 4096

/* ---------------------------------------------------------------------- */
/* alloc_ucontext                                                          */

enum sroce_ucontext_req_flags {
	/* Ask the kernel not to poll this context's send queues; every post
	 * rings the doorbell (rxe behaviour). */
	SROCE_UCTX_REQ_NO_SQ_POLL = 1 << 0,
};

struct sroce_alloc_ucontext_req {
	__u32 abi_version;      /* SROCE_ABI_VERSION of the provider */
	__u32 comp_mask;        /* none defined: must be 0 */
	__u32 flags;            /* enum sroce_ucontext_req_flags */
	__u32 reserved;         /* must be 0 */
};

enum sroce_ucontext_resp_caps {
	/* The kernel polls send queues (see Documentation/architecture.md). */
	SROCE_UCTX_CAP_SQ_POLL = 1 << 0,
};

struct sroce_alloc_ucontext_resp {
	__u32 abi_version;      /* SROCE_ABI_VERSION of the kernel */
	__u32 comp_mask;
	__u64 caps;             /* enum sroce_ucontext_resp_caps */
	__u64 ctx_page_offset;  /* mmap offset of struct sroce_context_page */
	__u32 ctx_page_size;    /* bytes to map at ctx_page_offset */
	__u32 max_inline_data;
	__u32 max_sge;
	__u32 reserved;
};

/* ---------------------------------------------------------------------- */
/* The context page: one read-only page per ucontext, mapped at
 * ctx_page_offset. It carries state the kernel publishes to the provider
 * without a system call. */

#define SROCE_CTX_PAGE_MAGIC 0x73726f63u /* "sroc" */

enum sroce_ctx_page_flags {
	/* The SQ poller is asleep: a post must ring the doorbell. Written by
	 * the poller after a full barrier; the provider reads it after its own
	 * full barrier that follows the producer-index store. */
	SROCE_CTX_NEED_WAKEUP = 1 << 0,
};

struct sroce_context_page {
	__u32 magic;            /* SROCE_CTX_PAGE_MAGIC */
	__u32 abi_version;      /* SROCE_ABI_VERSION */
	__u32 flags;            /* enum sroce_ctx_page_flags, kernel-written */
	__u32 reserved0;
	__u64 device_generation; /* changes if the device is re-created */
	__u8 reserved[SROCE_PAGE_SIZE - 24];
};

/* ---------------------------------------------------------------------- */
/* Protection domains */

struct sroce_alloc_pd_resp {
	__u32 pdn;
	__u32 reserved;
};

/* ---------------------------------------------------------------------- */
/* Shared rings (SQ, RQ, SRQ, WQ, CQ).
 *
 * A ring is a header followed by 2^log_size fixed-size entries. Each index
 * is a free-running u32 with exactly one writer, masked by (size - 1) on use,
 * on its own cache line:
 *   work queues: producer = user space, consumer = kernel;
 *   CQs:         producer = kernel,     consumer = user space.
 * The kernel keeps a private shadow of the index it owns and never trusts
 * the copy in shared memory; it validates the other side's index by
 * checking (producer - consumer) <= size.
 */
enum sroce_sq_kflags {
	/* An RC SQ has requests out that an ACK or response will answer, and
	 * the kernel fetches what was posted meanwhile when that answer
	 * arrives (or its retry timer fires): a post may skip the doorbell.
	 * The kernel sets it after sending; it clears it when nothing is
	 * left, then issues a full barrier and reads the producer again
	 * ("SQ-A1"). The provider reads it after the full barrier that
	 * follows its producer store, where it reads NEED_WAKEUP: either the
	 * kernel sees the new WQE or the provider sees the flag clear. */
	SROCE_SQ_ACK_DUE = 1 << 0,
};

struct sroce_ring_header {
	__u32 producer;
	/* Work queues: the poster's CPU + 1 at its last post (0: never said),
	 * written by the provider before it publishes producer. Only a hint
	 * for receive steering (transport.md): the kernel checks it against
	 * the CPUs online, and a wrong one only moves the QP's own work. */
	__u32 poster_cpu;
	__u8 pad0[SROCE_CACHELINE - 8];
	__u32 consumer;
	__u32 kflags;           /* SQ: enum sroce_sq_kflags, kernel-written; 0 for other rings */
	__u8 pad1[SROCE_CACHELINE - 8];
	__u32 log_size;         /* kernel-written at creation, informational */
	__u32 entry_size;
	__u8 pad2[SROCE_CACHELINE - 8];
};

/* ---------------------------------------------------------------------- */
/* Work queue entries.
 *
 * One WQE is a 64-byte header followed by num_sge scatter/gather entries
 * (or inline data of the same footprint). The opcode values are the
 * kernel's enum ib_wr_opcode; receive WQEs use SROCE_WQE_RECV.
 */
struct sroce_sge {
	__u64 addr;
	__u32 length;
	__u32 lkey;
};

/* The values of IBV_SEND_* and IB_SEND_*, which agree, so that both posters
 * copy send_flags through a mask; each asserts the equality at compile time
 * (libuser/sq.c, kmod/linux/qp.c). */
enum sroce_wqe_flags {
	SROCE_WQE_FENCE = 1 << 0,
	SROCE_WQE_SIGNALED = 1 << 1,
	SROCE_WQE_SOLICITED = 1 << 2,
	SROCE_WQE_INLINE = 1 << 3,
	SROCE_WQE_IP_CSUM = 1 << 4,
	/* BIND_MW posted by the ibv_bind_mw verb (type 1 windows), not by an
	 * IBV_WR_BIND_MW work request (type 2). Only the provider sets it. */
	SROCE_WQE_BIND_TYPE1 = 1 << 8,
};
#define SROCE_WQE_FLAGS_MASK \
	(SROCE_WQE_FENCE | SROCE_WQE_SIGNALED | SROCE_WQE_SOLICITED | SROCE_WQE_INLINE | SROCE_WQE_IP_CSUM)

#define SROCE_WQE_RECV 0xff

/* IBA 1.5 ATOMIC WRITE: opcode IB_UVERBS_WR_ATOMIC_WRITE (= IBV_WR_ATOMIC_WRITE),
 * which Linux names from 6.2 on; its 8 bytes travel in rdma.compare_add as
 * given (no byte order), with no SGEs. The device reports it with bit 40 of
 * device_cap_flags_ex (IB_UVERBS_DEVICE_ATOMIC_WRITE from 6.2 on). */
#define SROCE_WQE_ATOMIC_WRITE 15
#define SROCE_DEVICE_CAP_ATOMIC_WRITE (1ull << 40)

/* IBA 1.5 FLUSH: opcode IB_UVERBS_WR_FLUSH (IBV_WR_FLUSH from rdma-core 45
 * on; srocedv_wr_flush before), named by Linux from 6.2 on. The WQE's
 * `flush` member, no SGEs; the request carries a FETH (type, level) and a
 * RETH (remote_addr, rkey, length). The device reports bit 38 of
 * device_cap_flags_ex (IB_UVERBS_DEVICE_FLUSH_GLOBAL); persistence (bit 39)
 * is never reported: sroce cannot make memory durable. The MR right is
 * SROCE_ACCESS_FLUSH_GLOBAL (IB_UVERBS_ACCESS_FLUSH_GLOBAL), which Linux 6.1's
 * ib_core refuses in reg_mr's access flags: the provider passes FLUSH rights
 * in struct sroce_reg_mr_cmd instead, on every kernel. */
#define SROCE_WQE_FLUSH 14
#define SROCE_DEVICE_CAP_FLUSH_GLOBAL (1ull << 38)
#define SROCE_DEVICE_CAP_FLUSH_PERSISTENT (1ull << 39)
#define SROCE_ACCESS_FLUSH_GLOBAL (1 << 8)
#define SROCE_ACCESS_FLUSH_PERSISTENT (1 << 9)
/* flush.type: IB_FLUSH_GLOBAL, IB_FLUSH_PERSISTENT (FETH bits 3..0) */
#define SROCE_FLUSH_GLOBAL (1 << 0)
#define SROCE_FLUSH_PERSISTENT (1 << 1)
/* flush.level: IB_FLUSH_RANGE, IB_FLUSH_MR (FETH bits 5..4) */
#define SROCE_FLUSH_RANGE 0
#define SROCE_FLUSH_MR 1

struct sroce_wqe {
	__u64 wr_id;
	__u8 opcode;            /* enum ib_wr_opcode or SROCE_WQE_RECV */
	__u8 num_sge;
	__u16 flags;            /* enum sroce_wqe_flags */
	__u32 imm_or_inv;       /* immediate data (big-endian) or rkey to invalidate */
	union {
		struct {        /* RDMA READ/WRITE, atomics */
			__u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
			__u64 compare_add;
			__u64 swap;
		} rdma;
		struct {        /* FLUSH: remote_addr and rkey where rdma has them */
			__u64 remote_addr;
			__u32 rkey;
			__u32 length;   /* the RETH's length (level RANGE) */
			__u8 type;      /* SROCE_FLUSH_GLOBAL and/or _PERSISTENT */
			__u8 level;     /* SROCE_FLUSH_RANGE or SROCE_FLUSH_MR */
			__u8 reserved[14];
		} flush;
		struct {        /* UD and GSI: address handle by kernel handle */
			__u32 ah_handle;
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved[5];
		} ud;
		struct {        /* MW bind and REG_MR (work-request registration) */
			__u64 addr;
			__u64 length;
			__u32 mr_lkey;  /* MR the window binds to / MR to register */
			__u32 new_key;
			__u32 access;
			__u32 layout;   /* non-contiguous window layout handle, 0 = none */
		} reg;
	};
	__u32 xrc_remote_srqn;  /* XRC_INI: target SRQ number */
	__u32 inline_len;       /* SROCE_WQE_INLINE: bytes of inline data */
	__u32 reserved[2];
	/* struct sroce_sge sge[num_sge] or inline data follows */
};

/* ---------------------------------------------------------------------- */
/* Completion queue entries: 64 bytes, the fields of ibv_wc plus the room the
 * seed features need (multi-packet receive, RSS hash). */

enum sroce_cqe_flags {
	SROCE_CQE_WITH_IMM = 1 << 0,
	SROCE_CQE_WITH_INV = 1 << 1,
	SROCE_CQE_GRH = 1 << 2,
	SROCE_CQE_MP_MORE_IN_MSG = 1 << 3, /* MP-WR: more packets of this message */
	SROCE_CQE_MP_CONSUMED = 1 << 4,    /* MP-WR: the buffer is released */
	SROCE_CQE_WITH_HASH = 1 << 5,      /* RSS: hash_value/hash_type valid */
	SROCE_CQE_MP_INCOMPLETE = 1 << 6,  /* MP-WR: the message ended unfinished */
};

/* RSS: what a message matched, in hash_type of a CQE flagged
 * SROCE_CQE_WITH_HASH (Documentation/rss.md; kmod/core/rss.h's Kind). */
enum sroce_cqe_hash_type {
	SROCE_HASH_NONE = 0, /* no field matched: hash_value 0 */
	SROCE_HASH_IPV4 = 1,
	SROCE_HASH_IPV6 = 2,
	SROCE_HASH_TCP_IPV4 = 3,
	SROCE_HASH_TCP_IPV6 = 4,
	SROCE_HASH_UDP_IPV4 = 5,
	SROCE_HASH_UDP_IPV6 = 6,
};

/* Multi-packet receive (seed 000; Documentation/mp-wr.md). A queue created
 * with a buffer size and a packet alignment takes receive WQEs of exactly
 * that many bytes; every packet goes to the next alignment boundary of the
 * current WQE's buffer and completes on its own, with mp_offset. A WQE is
 * released (SROCE_CQE_MP_CONSUMED) when full, or as a RECV_NOP when the
 * next packet does not fit in what is left. The buffer holds at least one
 * packet of the largest MTU with its GRH. */
#define SROCE_MP_WR_MIN_ALIGN 64u
#define SROCE_MP_WR_MAX_ALIGN 65536u
#define SROCE_MP_WR_MIN_BUFFER (4096u + 40u)
#define SROCE_MP_WR_MAX_BUFFER (1u << 30)
/* The CQE opcode of a released WQE that holds no new data: IBV_WC_DRIVER1
 * of libibverbs (srocedv's SROCEDV_WC_RECV_NOP). */
#define SROCE_CQE_OP_RECV_NOP 135

/* The CQE opcode of a completed IB_WR_REG_MR (kernel CQs only: user space
 * cannot post it). Not IB_WC_REG_MR itself, whose value moved in Linux 6.2
 * (8 before, 10 after IB_WC_FLUSH took 8): the glue translates it. */
#define SROCE_CQE_OP_REG_MR 0x20

struct sroce_cqe {
	__u64 wr_id;
	__u8 status;            /* enum ibv_wc_status */
	__u8 opcode;            /* enum ibv_wc_opcode, or a RECV_NOP for MP-WR */
	__u16 flags;            /* enum sroce_cqe_flags */
	__u32 byte_len;
	__u32 imm_or_inv;
	__u32 qp_num;
	__u32 src_qp;
	__u16 pkey_index;
	__u8 sl;
	__u8 vendor_err;
	__u32 mp_offset;        /* MP-WR: byte offset of this data in the buffer */
	__u32 hash_value;       /* RSS */
	__u8 hash_type;
	__u8 network_hdr_type;  /* UD/GSI receive: enum rdma_network_type */
	__u8 reserved0[2];
	__u32 reserved1;
	__u64 timestamp;
	__u64 reserved2;
};


/* ---------------------------------------------------------------------- */
/* Queue creation. Each ring is one mmap at the offset the response gives
 * (read-write for the provider: it writes its producer or consumer index
 * and WQEs; the kernel trusts nothing in it). ring_bytes covers the
 * header and 2^log_size entries of `stride` bytes each. */

/* Create-time attributes: the driver data of create_qp, create_cq and
 * create_srq requests (Documentation/abi.md, "Create-time attributes").
 * libibverbs' own create calls send none (inlen 0); srocedv_create_qp/cq/srq
 * send these. comp_mask names the attributes present: each feature adds a
 * bit to its SROCE_CREATE_*_REQ_MASK and its fields at the end. The kernel refuses a bit it does not know with EINVAL, and
 * non-zero bytes past the struct it knows with EOPNOTSUPP. The srocedv
 * comp_mask bits of the same object are these bits. */
struct sroce_create_qp_req {
	__u64 comp_mask;
	__u32 mp_wr_buffer_sz;   /* SROCE_CREATE_REQ_MP_WR: multi-packet receive */
	__u32 mp_packet_align_sz;
	/* SROCE_CREATE_QP_REQ_RX_HASH: an RSS QP's hashing, which uverbs'
	 * create_qp does not carry (it brings only the indirection table);
	 * Documentation/rss.md. Required with a table, refused without. */
	__u64 rx_hash_fields;    /* enum ibv_rx_hash_fields */
	__u8 rx_hash_function;   /* enum sroce_rx_hash_function */
	__u8 rx_hash_key_len;    /* 40 for Toeplitz */
	__u8 reserved0[2];
	__u32 rx_default_wqn;    /* SROCE_CREATE_QP_REQ_RSS_DEFAULT_WQ: the WQ for what matches no field */
	__u8 rx_hash_key[40];
	/* SROCE_CREATE_QP_REQ_RSS_CHILD: a child UD QP of the consecutive-QPN
	 * form (srocedv_create_rss_ud_qps; Documentation/rss.md): QPN
	 * rss_block_base + rss_child_index in an aligned block of
	 * 2^rss_block_log2 QPNs of the caller's context, receiving into the
	 * caller's WQ rss_child_wqn (its CQ is the QP's recv_cq) instead of
	 * an RQ. rss_block_base SROCE_RSS_BLOCK_NEW reserves a new block; the
	 * response's qpn then says where it is. */
	__u32 rss_child_wqn;
	__u32 rss_block_base;
	__u32 rss_block_log2;
	__u32 rss_child_index;
};
#define SROCE_RSS_BLOCK_NEW 0xffffffffu
/* The same bit in the QP's and the SRQ's request. */
#define SROCE_CREATE_REQ_MP_WR (1ull << 0)
#define SROCE_CREATE_QP_REQ_RX_HASH (1ull << 1)
/* With RX_HASH: hash the IP and TCP/UDP headers after a 4-byte header at
 * the UD payload's start, not the RoCE packet's own IP and UDP headers
 * (srocedv's SROCEDV_QP_INIT_ATTR_RSS_PAYLOAD). */
#define SROCE_CREATE_QP_REQ_RSS_PAYLOAD (1ull << 2)
/* With RX_HASH: rx_default_wqn names a WQ of the caller's context and the
 * QP's PD that takes the messages matching no hashed field (srocedv's
 * SROCEDV_QP_INIT_ATTR_RSS_DEFAULT_WQ); destroying it is EBUSY meanwhile. */
#define SROCE_CREATE_QP_REQ_RSS_DEFAULT_WQ (1ull << 3)
#define SROCE_CREATE_QP_REQ_RSS_CHILD (1ull << 4)
#define SROCE_CREATE_QP_REQ_MASK                                                                   \
	(SROCE_CREATE_REQ_MP_WR | SROCE_CREATE_QP_REQ_RX_HASH | SROCE_CREATE_QP_REQ_RSS_PAYLOAD |  \
	 SROCE_CREATE_QP_REQ_RSS_DEFAULT_WQ | SROCE_CREATE_QP_REQ_RSS_CHILD)
/* The values are kmod/core/core.h's sroce_core_rss_func. */
enum sroce_rx_hash_function {
	SROCE_RX_HASH_TOEPLITZ = 0,
	SROCE_RX_HASH_XOR = 1,
};

struct sroce_create_cq_req {
	__u64 comp_mask;
};
#define SROCE_CREATE_CQ_REQ_MASK 0ull

struct sroce_create_srq_req {
	__u64 comp_mask;
	__u32 mp_wr_buffer_sz;   /* SROCE_CREATE_REQ_MP_WR */
	__u32 mp_packet_align_sz;
};
#define SROCE_CREATE_SRQ_REQ_MASK SROCE_CREATE_REQ_MP_WR

/* reg_mr's driver data: the FLUSH rights (SROCE_ACCESS_FLUSH_*), which
 * Linux 6.1's ib_core refuses among the access flags. The kernel adds them
 * to the access flags; a bit outside them is EINVAL, persistence
 * EOPNOTSUPP. The provider sends this only with a FLUSH right. */
struct sroce_reg_mr_req {
	__u64 comp_mask;
	__u32 flush_access;
	__u32 reserved;
};
#define SROCE_REG_MR_REQ_FLUSH_ACCESS (1ull << 0) /* flush_access is set */
#define SROCE_REG_MR_REQ_MASK SROCE_REG_MR_REQ_FLUSH_ACCESS

struct sroce_ring_info {
	__u64 offset;           /* mmap offset */
	__u32 bytes;            /* mmap length */
	__u32 log_size;         /* 2^log_size entries */
	__u32 stride;           /* bytes per entry */
	__u32 reserved;
};

/* Entries start here, after struct sroce_ring_header. */
#define SROCE_RING_ENTRIES_OFFSET (3 * SROCE_CACHELINE)

struct sroce_create_cq_resp {
	struct sroce_ring_info ring; /* entries are struct sroce_cqe */
};

/* resize_cq: a new ring replaces the old one; the provider unmaps the old
 * ring after the call returns and continues from the new ring's consumer
 * index (the kernel copied the pending CQEs and set both indices). */
struct sroce_resize_cq_resp {
	struct sroce_ring_info ring;
};

struct sroce_create_qp_resp {
	struct sroce_ring_info sq;   /* entries are struct sroce_wqe + SGEs */
	struct sroce_ring_info rq;   /* bytes == 0 when the QP uses an SRQ */
	__u32 qpn;
	__u32 max_inline_data;
	__u32 mp_wr_buffer_sz;   /* in use (0: not a multi-packet queue) */
	__u32 mp_packet_align_sz;
};

struct sroce_create_srq_resp {
	struct sroce_ring_info ring;
	__u32 srqn;
	__u32 reserved;
	__u32 mp_wr_buffer_sz;   /* in use (0: not a multi-packet queue) */
	__u32 mp_packet_align_sz;
};

/* Receive work queues (ibv_create_wq, IBV_WQT_RQ; Documentation/rss.md):
 * user space's only. The ring is a receive queue's (WQ-P1 as RQ-P1). */
struct sroce_create_wq_req {
	__u64 comp_mask;
	__u32 mp_wr_buffer_sz;   /* SROCE_CREATE_REQ_MP_WR, as an SRQ's */
	__u32 mp_packet_align_sz;
};
#define SROCE_CREATE_WQ_REQ_MASK SROCE_CREATE_REQ_MP_WR

struct sroce_create_wq_resp {
	struct sroce_ring_info ring; /* entries are struct sroce_wqe + SGEs */
	__u32 wqn;
	__u32 reserved;
	__u32 mp_wr_buffer_sz;   /* in use (0: not a multi-packet queue) */
	__u32 mp_packet_align_sz;
};

struct sroce_create_ah_resp {
	__u32 ah_handle;        /* goes in sroce_wqe.ud.ah_handle */
	__u32 reserved;
};

/* The driver methods (ioctl) and their attributes: sroce-abi-methods.h. */
#include "sroce-abi-methods.h"

#endif /* SROCE_ABI_H */

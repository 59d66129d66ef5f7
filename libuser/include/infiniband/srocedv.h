/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * srocedv.h - sroce direct-verbs extensions (link with -lsroce).
 *
 * Features that upstream libibverbs has no API for are exposed here, in the
 * style of mlx5dv: query the capabilities first, and every struct carries a
 * comp_mask so that it can grow without breaking binaries. See
 * Documentation/srocedv.md.
 */
#ifndef INFINIBAND_SROCEDV_H
#define INFINIBAND_SROCEDV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bits of srocedv_device_attr.comp_mask: set by the caller for the fields
 * it wants, cleared by the library for those it could not fill. */
enum srocedv_device_attr_mask {
	SROCEDV_DEVICE_ATTR_MASK_MW_LAYOUT_CAPS = 1 << 0, /* mw_layout_caps */
	SROCEDV_DEVICE_ATTR_MASK_MP_WR_CAPS = 1 << 1,     /* mp_wr_caps */
};

/* Multi-packet receive work requests (seed 000's ibv_mp_wr_caps): both
 * above zero when supported. */
struct srocedv_mp_wr_caps {
	size_t max_wr_buffer_sz;       /* bytes of one receive WR's buffer */
	uint32_t max_packet_align_sz;  /* the largest packet alignment */
};

/* Non-contiguous memory windows (seed 003's ibv_ncm_caps). */
enum srocedv_mw_layout_general_caps {
	SROCEDV_MW_LAYOUT_SUPPORT_COMPOSITE = 1 << 0,
	SROCEDV_MW_LAYOUT_SUPPORT_INTERLEAVED = 1 << 1,
	SROCEDV_MW_LAYOUT_SUPPORT_INTERLEAVED_REPETITION = 1 << 2,
	SROCEDV_MW_LAYOUT_SUPPORT_INTERLEAVED_NONUNIFORM_REPETITION = 1 << 3,
	/* Entries of an interleaved layout running out in different rounds:
	 * not supported (EINVAL). */
	SROCEDV_MW_LAYOUT_SUPPORT_INTERLEAVED_NONUNIFORM_TOTAL_ITEMS = 1 << 4,
};

struct srocedv_mw_layout_caps {
	uint64_t general_caps;         /* enum srocedv_mw_layout_general_caps */
	uint32_t max_list_size;        /* entries of one layout */
	uint32_t max_recursion_depth;  /* layouts of layouts: levels */
	uint32_t max_stride_dimension; /* stride dimensions of one entry */
	uint32_t max_descriptors;      /* srocedv_mw_alloc_attr.max_descriptors */
};

struct srocedv_device_attr {
	uint64_t comp_mask;     /* in: wanted fields; out: filled fields */
	uint32_t abi_version;   /* kernel <-> provider ABI (always filled) */
	uint32_t flags;         /* enum srocedv_device_flags (always filled) */
	struct srocedv_mw_layout_caps mw_layout_caps; /* SROCEDV_DEVICE_ATTR_MASK_MW_LAYOUT_CAPS */
	struct srocedv_mp_wr_caps mp_wr_caps;         /* SROCEDV_DEVICE_ATTR_MASK_MP_WR_CAPS */
};

enum srocedv_device_flags {
	/* The kernel polls send queues: posts need no system call. */
	SROCEDV_DEVICE_FLAG_SQ_POLL = 1 << 0,
	/* UD QPs may take their receives from an SRQ (seed 002-D: libibverbs'
	 * SRQ capability says nothing about UD, and some devices have SRQs
	 * for RC only). Always set on sroce. */
	SROCEDV_DEVICE_FLAG_UD_SRQ = 1 << 1,
};

/*
 * srocedv_query_device - sroce-specific capabilities of an open context.
 * Returns 0, or an errno value: EOPNOTSUPP if context is not a sroce device,
 * EINVAL for a NULL attr.
 */
int srocedv_query_device(struct ibv_context *context, struct srocedv_device_attr *attr);

enum srocedv_context_attr_flags {
	/* No SQ polling for this context: every post rings the doorbell (a
	 * system call), as with rxe. The environment variable
	 * SROCE_NO_SQ_POLL=1 does the same for every context of a process. */
	SROCEDV_CONTEXT_FLAG_NO_SQ_POLL = 1 << 0,
};

struct srocedv_context_attr {
	uint64_t comp_mask;     /* none defined: must be 0 */
	uint32_t flags;         /* enum srocedv_context_attr_flags */
	uint32_t reserved;      /* must be 0 */
};

/*
 * srocedv_open_device - ibv_open_device with sroce options. Returns the
 * context, or NULL with errno set: EOPNOTSUPP if device is not a sroce
 * device or attr asks for something unknown (comp_mask, flags), EINVAL for
 * a NULL argument, or the error of opening the device.
 */
struct ibv_context *srocedv_open_device(struct ibv_device *device, struct srocedv_context_attr *attr);

/*
 * Create-time attributes: srocedv_create_qp, srocedv_create_cq and
 * srocedv_create_srq take the standard init attributes plus one of these.
 * comp_mask names the sroce fields that are set. The provider refuses a bit
 * it does not know with EOPNOTSUPP; the kernel, which gets the mask,
 * refuses one it does not know with EINVAL.
 */

/* Multi-packet receive (seed 000's ibv_mp_wr_attr; Documentation/mp-wr.md):
 * every receive WR posted to the queue is wr_buffer_sz bytes, and receives
 * many packets, each at the next packet_align_sz boundary. In: the sizes
 * wanted; out: the sizes in use, equal or greater (the alignment a power
 * of two of at least 64, the buffer a multiple of it that holds one packet
 * of the largest MTU with its GRH). */
struct srocedv_mp_wr_attr {
	size_t wr_buffer_sz;
	uint32_t packet_align_sz;
};

enum srocedv_qp_init_attr_mask {
	/* mp_wr: a multi-packet RQ (seed 000's IBV_QP_INIT_ATTR_MP_WR, whose
	 * value libibverbs 44 gives to IBV_QP_INIT_ATTR_SEND_OPS_FLAGS). Not
	 * with an SRQ: give the SRQ the attribute. */
	SROCEDV_QP_INIT_ATTR_MP_WR = 1 << 0,
	/* An RSS QP (IBV_QP_INIT_ATTR_IND_TABLE and _RX_HASH) hashes the IP
	 * and TCP/UDP headers at the start of each UD payload, after a 4-byte
	 * IPoIB-style header (seed 002-B), not the RoCE packet's own IP and
	 * UDP headers. Documentation/rss.md. No field of its own. */
	SROCEDV_QP_INIT_ATTR_RSS_PAYLOAD = 1 << 2,
	/* rss_default_wq: an RSS QP puts a message that matches no hashed
	 * field (not IP, another IP version, ports asked for and absent) into
	 * this WQ of the same context and PD, not into the table's slot 0
	 * (seed 002-B's default QP). ibv_destroy_wq is EBUSY while the QP
	 * lives. */
	SROCEDV_QP_INIT_ATTR_RSS_DEFAULT_WQ = 1 << 3,
};

/* RSS hash functions beyond libibverbs' IBV_RX_HASH_FUNC_TOEPLITZ (1 << 0),
 * in ibv_rx_hash_conf.rx_hash_function: the seed's XOR hash (the input's
 * big-endian 32-bit words XORed; no key: rx_hash_key_len 0). Every
 * sroce device whose ibv_query_device_ex rss_caps.supported_qpts is set
 * takes both; rss_caps.rx_hash_function is not filled in. */
#define SROCEDV_RX_HASH_FUNC_XOR (1 << 1)

/* What an RSS completion's hash covered (the seed's IBT_WC_DETAIL_RSS_*;
 * the UDP kinds are sroce's, for the RoCE packet's own headers). */
enum srocedv_rss_hash_type {
	SROCEDV_RSS_HASH_NONE = 0, /* matched no field: the value is 0 */
	SROCEDV_RSS_HASH_IPV4 = 1,
	SROCEDV_RSS_HASH_IPV6 = 2,
	SROCEDV_RSS_HASH_TCP_IPV4 = 3,
	SROCEDV_RSS_HASH_TCP_IPV6 = 4,
	SROCEDV_RSS_HASH_UDP_IPV4 = 5,
	SROCEDV_RSS_HASH_UDP_IPV6 = 6,
};

struct srocedv_qp_init_attr {
	uint64_t comp_mask;     /* enum srocedv_qp_init_attr_mask */
	struct srocedv_mp_wr_attr *mp_wr;
	struct ibv_wq *rss_default_wq;
};

struct srocedv_cq_init_attr {
	uint64_t comp_mask;     /* none defined: 0 */
};

enum srocedv_srq_init_attr_mask {
	SROCEDV_SRQ_INIT_ATTR_MP_WR = 1 << 0, /* mp_wr: a multi-packet SRQ */
};

struct srocedv_srq_init_attr {
	uint64_t comp_mask;     /* enum srocedv_srq_init_attr_mask */
	struct srocedv_mp_wr_attr *mp_wr;
};

enum srocedv_wq_init_attr_mask {
	SROCEDV_WQ_INIT_ATTR_MP_WR = 1 << 0, /* mp_wr: a multi-packet WQ */
};

struct srocedv_wq_init_attr {
	uint64_t comp_mask;     /* enum srocedv_wq_init_attr_mask */
	struct srocedv_mp_wr_attr *mp_wr;
};

/*
 * Completions of multi-packet queues: their CQ is created with
 * srocedv_create_cq and SROCEDV_WC_EX_WITH_MP_WR among its wc_flags (the
 * seed's IBV_WC_EX_WITH_MP_WR, whose 1 << 11 is libibverbs 44's
 * IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK; libibverbs' own
 * ibv_create_cq_ex refuses wc_flags it does not know, with EOPNOTSUPP). Every packet completes on
 * its own, with the WR's wr_id (repeated), its byte_len and its offset in
 * the WR's buffer (srocedv_wc_read_mp_wr_offset); the flags below come in
 * ibv_wc_read_wc_flags and ibv_wc.wc_flags.
 */
#define SROCEDV_WC_EX_WITH_MP_WR (1ULL << 48)

enum srocedv_wc_flags {
	/* A FIRST or MIDDLE packet: more of this message (of this qp_num) follow. */
	SROCEDV_WC_MP_WR_MORE_IN_MSG = 1 << 7,
	/* The WR's buffer is released: no more completions carry its wr_id. */
	SROCEDV_WC_MP_WR_CONSUMED = 1 << 8,
	/* A UC message ended unfinished (a lost packet, no buffer left): an
	 * SROCEDV_WC_RECV_NOP with the wr_id the message last used; drop what
	 * was gathered of it. Beyond the seed. */
	SROCEDV_WC_MP_WR_INCOMPLETE = 1 << 9,
};

/* The opcode of a completion without data: a released buffer (with
 * SROCEDV_WC_MP_WR_CONSUMED) or an unfinished message's end. */
#define SROCEDV_WC_RECV_NOP IBV_WC_DRIVER1

/* The byte offset of the current completion's data in its WR's buffer
 * (between ibv_start_poll and ibv_end_poll, on a CQ with
 * SROCEDV_WC_EX_WITH_MP_WR). */
size_t srocedv_wc_read_mp_wr_offset(struct ibv_cq_ex *cq);

/* The RSS hash of the current completion (between ibv_start_poll and
 * ibv_end_poll), and in *type (may be NULL) what it covered: a receive
 * into a WQ of an RSS QP's indirection table. Any other completion reads 0
 * and SROCEDV_RSS_HASH_NONE. */
uint32_t srocedv_wc_read_rss_hash(struct ibv_cq_ex *cq, enum srocedv_rss_hash_type *type);

/* Completion vectors (seed 002-C): a device has one per CPU
 * (ibv_device_attr.num_comp_vectors), and a CQ's completion events run on
 * its vector's CPU. Following the seed, these calls name a vector by a
 * handler id: vector v is SROCEDV_CQ_VECTOR(v), 0 means no change, and
 * SROCEDV_CQ_VECTOR_DEFAULT the vector the CQ was created with. */
#define SROCEDV_CQ_VECTOR_NO_CHANGE 0u
#define SROCEDV_CQ_VECTOR_DEFAULT 0xffffffffu
#define SROCEDV_CQ_VECTOR(v) ((uint32_t)(v) + 1)
#define SROCEDV_CQ_VECTOR_NUM(hid) ((hid) - 1) /* the comp_vector a handler id names */

/* Moves cq to the vector hid names, at once and with no completion or
 * event lost. Returns 0 or an errno value: EINVAL for a vector the device
 * lacks, EOPNOTSUPP for a CQ of another provider or a kernel without the
 * method. */
int srocedv_modify_cq_vector(struct ibv_cq *cq, uint32_t hid);
/* The handler id of cq's vector now, in *hid. Returns 0 or an errno value. */
int srocedv_query_cq_vector(struct ibv_cq *cq, uint32_t *hid);

/* Receive steering (Documentation/transport.md, "Receive steering"): the
 * packets of a user RC or UC QP are received on the CPU its owner last
 * posted from. srocedv_modify_qp_rx_cpu fixes that CPU instead, or with
 * SROCEDV_QP_RX_CPU_OWNER gives it back to the owner's moves. Returns 0 or
 * an errno value: EINVAL for a CPU not online or one the calling thread may
 * not run on, EOPNOTSUPP for another QP
 * type, a QP of another provider or a kernel without the method. */
#define SROCEDV_QP_RX_CPU_OWNER (-1)
int srocedv_modify_qp_rx_cpu(struct ibv_qp *qp, int cpu);
/* The fixed CPU, or SROCEDV_QP_RX_CPU_OWNER, in *cpu. */
int srocedv_query_qp_rx_cpu(struct ibv_qp *qp, int *cpu);

/*
 * The seed's consecutive-QPN form of RSS (002-B; Documentation/rss.md):
 * 2^log2 child UD QPs with consecutive QP numbers, the first a multiple of
 * 2^log2, and an RSS context QP that spreads what is sent to its own QPN
 * over them by the hash of rx_hash_conf (as an RSS QP of
 * ibv_create_qp_ex). Child i receives into a WQ of its own whose CQ is
 * recv_cqs[i] (ibv_post_recv on the child posts there, without a system
 * call); a message sent to the child's own QPN lands there too. Every
 * completion names the child (qp_num = base_qpn + i), with the hash when
 * it came through the context QP (srocedv_wc_read_rss_hash). Each child
 * sends as any UD QP; so does the context QP with cap.max_send_wr > 0.
 * All QPs start in RESET: move each through INIT, RTR and RTS with
 * ibv_modify_qp. The same machinery as the WQ form, not a second one.
 */
enum srocedv_rss_ud_qps_flags {
	SROCEDV_RSS_UD_QPS_PAYLOAD = 1 << 0, /* hash the payload's headers (SROCEDV_QP_INIT_ATTR_RSS_PAYLOAD) */
	SROCEDV_RSS_UD_QPS_DEFAULT = 1 << 1, /* default_index: the seed's default QP */
};

struct srocedv_rss_ud_qps_attr {
	uint64_t comp_mask;             /* none defined: 0 */
	uint32_t log2;                  /* 2^log2 children, log2 at most 8 */
	uint32_t flags;                 /* enum srocedv_rss_ud_qps_flags */
	uint32_t default_index;         /* SROCEDV_RSS_UD_QPS_DEFAULT: the child for what matches no field */
	struct ibv_cq *send_cq;         /* every QP's */
	struct ibv_cq **recv_cqs;       /* 2^log2 of them: child i's */
	struct ibv_qp_cap cap;          /* each child's; max_recv_* size its WQ */
	struct ibv_rx_hash_conf rx_hash_conf;
	void *qp_context;               /* every QP's */
};

struct srocedv_rss_ud_qps {
	struct ibv_qp *context_qp;      /* send to its QPN: spread over the children */
	struct ibv_qp **qps;            /* qps[i] has QP number base_qpn + i */
	uint32_t base_qpn;
	uint32_t log2;
	/* The provider's: the children's WQs and their table. */
	struct ibv_wq **wqs;
	struct ibv_rwq_ind_table *table;
};

/* The set, or NULL with errno set: EINVAL for a bad attribute, EOPNOTSUPP
 * when pd is not sroce's or comp_mask has an unknown bit, ENOSPC when no
 * aligned range of QP numbers is free, otherwise what the QP, WQ and table
 * creations give. */
struct srocedv_rss_ud_qps *srocedv_create_rss_ud_qps(struct ibv_pd *pd, const struct srocedv_rss_ud_qps_attr *attr);
/* Destroys the context QP, the children, the table and the WQs, in that
 * order, and frees the set: 0, or the errno of the first destroy that
 * failed; what was destroyed before it is NULL in the set, and a second
 * call goes on from there. */
int srocedv_destroy_rss_ud_qps(struct srocedv_rss_ud_qps *set);

/*
 * srocedv_create_qp - ibv_create_qp_ex with sroce attributes (sroce_attr may
 * be NULL: none). Returns the QP, or NULL with errno set: EOPNOTSUPP if the
 * context is not sroce or sroce_attr->comp_mask has an unknown bit, EINVAL
 * for a NULL context or qp_attr, otherwise what ibv_create_qp_ex gives.
 */
struct ibv_qp *srocedv_create_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *qp_attr,
				 struct srocedv_qp_init_attr *sroce_attr);

/* srocedv_create_cq - ibv_create_cq_ex with sroce attributes; errors as
 * srocedv_create_qp. */
struct ibv_cq_ex *srocedv_create_cq(struct ibv_context *context, struct ibv_cq_init_attr_ex *cq_attr,
				    struct srocedv_cq_init_attr *sroce_attr);

/* srocedv_create_srq - ibv_create_srq with sroce attributes; errors as
 * srocedv_create_qp (EINVAL for a NULL pd or srq_attr). */
struct ibv_srq *srocedv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_attr,
				   struct srocedv_srq_init_attr *sroce_attr);

/* srocedv_create_srq_ex - ibv_create_srq_ex with sroce attributes: a basic
 * or an XRC SRQ (a multi-packet XRC SRQ's CQ needs
 * SROCEDV_WC_EX_WITH_MP_WR); errors as srocedv_create_srq. */
struct ibv_srq *srocedv_create_srq_ex(struct ibv_context *context, struct ibv_srq_init_attr_ex *srq_attr,
				      struct srocedv_srq_init_attr *sroce_attr);

/* srocedv_create_wq - ibv_create_wq with sroce attributes: a multi-packet
 * WQ (IBV_WQT_RQ) behind an RSS QP, whose CQ needs SROCEDV_WC_EX_WITH_MP_WR;
 * errors as srocedv_create_qp. */
struct ibv_wq *srocedv_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *wq_attr,
				 struct srocedv_wq_init_attr *sroce_attr);

/*
 * srocedv_alloc_xrc_rcv_qp - the kernel-owned XRC receive QP of seed 001
 * (Documentation/xrc.md): an XRC target the kernel makes in domain xrcd, in
 * a PD of its own (pd only names the device), and takes RESET -> INIT ->
 * RTR with attr. Its number goes to *xrc_rcv_qpn, for the remote
 * initiator's dest_qp_num. There is no object, query or destroy: it lives
 * until the domain's last user (an open, an XRC SRQ, a target) is gone,
 * whichever process that is; its async events go to the kernel log, its
 * receive completions to the CQ of each message's XRC SRQ.
 *
 * attr_mask must hold IBV_QP_ACCESS_FLAGS, IBV_QP_PKEY_INDEX, IBV_QP_PORT,
 * IBV_QP_AV, IBV_QP_PATH_MTU, IBV_QP_DEST_QPN, IBV_QP_RQ_PSN and
 * IBV_QP_MIN_RNR_TIMER; IBV_QP_MAX_DEST_RD_ATOMIC is optional (0: SENDs
 * only). The fields the seed lists as not needed are ignored with their
 * bits (IBV_QP_STATE, IBV_QP_CUR_STATE, IBV_QP_QKEY, IBV_QP_SQ_PSN,
 * IBV_QP_PATH_MIG_STATE, IBV_QP_TIMEOUT, IBV_QP_RETRY_CNT, IBV_QP_RNR_RETRY,
 * IBV_QP_MAX_QP_RD_ATOMIC, IBV_QP_EN_SQD_ASYNC_NOTIFY, IBV_QP_CAP); the
 * caps are fixed (no queues). Alternate paths: EINVAL (sroce has no APM).
 *
 * Returns 0 or a negative errno, as the seed specifies (unlike the other
 * srocedv calls): -EINVAL for a missing bit, a bad attribute or an AV
 * without a GRH (nothing is left behind), -EOPNOTSUPP for a context that is
 * not sroce's or a kernel without the method, -ENOSPC past
 * SROCEDV_MAX_XRC_RCV_QPS in one domain.
 */
#define SROCEDV_MAX_XRC_RCV_QPS 64
int srocedv_alloc_xrc_rcv_qp(struct ibv_pd *pd, struct ibv_xrcd *xrcd, struct ibv_qp_attr *attr,
			     int attr_mask, uint32_t *xrc_rcv_qpn);

/*
 * RDMA FLUSH (IBA 1.5). rdma-core 45 adds ibv_wr_flush and its constants;
 * Debian 12's rdma-core 44 has neither, so sroce offers them here under
 * srocedv names with rdma-core 45's values (Documentation/srocedv.md):
 *  - create the QP (RC) with SROCEDV_QP_EX_WITH_FLUSH in send_ops_flags;
 *  - register the target MR with SROCEDV_ACCESS_FLUSH_GLOBAL in its access
 *    flags (the provider passes it to the kernel on 6.1 too, whose ib_core
 *    refuses the bit);
 *  - post srocedv_wr_flush between ibv_wr_start and ibv_wr_complete, with no
 *    data setter after it; it completes as SROCEDV_WC_FLUSH.
 * ibv_query_device_ex reports SROCEDV_DEVICE_FLUSH_GLOBAL in
 * device_cap_flags_ex. Persistence is never reported, and an MR cannot be
 * registered with SROCEDV_ACCESS_FLUSH_PERSISTENT (EOPNOTSUPP): sroce cannot
 * make memory durable.
 */
#define SROCEDV_QP_EX_WITH_FLUSH (1ull << 11)         /* IBV_QP_EX_WITH_FLUSH */
#define SROCEDV_ACCESS_FLUSH_GLOBAL (1 << 8)          /* IBV_ACCESS_FLUSH_GLOBAL */
#define SROCEDV_ACCESS_FLUSH_PERSISTENT (1 << 9)      /* IBV_ACCESS_FLUSH_PERSISTENT */
#define SROCEDV_WC_FLUSH 8                            /* IBV_WC_FLUSH */
#define SROCEDV_DEVICE_FLUSH_GLOBAL (1ull << 38)      /* IB_UVERBS_DEVICE_FLUSH_GLOBAL */
#define SROCEDV_DEVICE_FLUSH_PERSISTENT (1ull << 39)  /* IB_UVERBS_DEVICE_FLUSH_PERSISTENT */

enum srocedv_flush_type {                             /* enum ibv_placement_type */
	SROCEDV_FLUSH_GLOBAL = 1 << 0,
	SROCEDV_FLUSH_PERSISTENT = 1 << 1,
};

enum srocedv_flush_level {                            /* enum ibv_selectivity_level */
	SROCEDV_FLUSH_RANGE = 0,                      /* [remote_addr, remote_addr + len) */
	SROCEDV_FLUSH_MR = 1,                         /* the whole MR of rkey */
};

/*
 * srocedv_wr_flush - ibv_wr_flush of rdma-core 45: a FLUSH of type (one or
 * both srocedv_flush_type bits) at level. Errors reach the batch as for
 * every builder (ibv_wr_complete returns them): EOPNOTSUPP without
 * SROCEDV_QP_EX_WITH_FLUSH or on a QP of another provider (then errno too),
 * EINVAL for an unknown type or level or a range length above 4 GiB - 1.
 */
void srocedv_wr_flush(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, size_t len,
		      uint8_t type, uint8_t level);

/*
 * Non-contiguous memory windows (seed 003; Documentation/memory.md,
 * "Layouts"; srocedv_alloc_mw_ex(3), srocedv_bind_mw(3)).
 *
 * A window allocated with descriptors can be bound to a layout: a list of
 * entries, each a part of an MR or of another bound type 1 window, either one
 * after another (composite) or in rounds of equally spaced items
 * (interleaved, with up to max_stride_dimension strides per entry and a
 * per-entry repeat count for 2:1 and other non-uniform interleaving). Its
 * key then reaches exactly the bytes the layout lists, as offsets
 * 0..length-1 (a layout window is zero-based), for RDMA READ, WRITE and
 * atomics from the peer; bound with IBV_ACCESS_LOCAL_WRITE the same key is
 * also an lkey, for SGEs of sends and receives.
 *
 * The seed's names are ibv_*; libibverbs 44 has no such API, and the
 * seed's bind flag (bit 7) is IBV_ACCESS_HUGETLB there: the srocedv names
 * below keep its semantics, with SROCEDV_ACCESS_BIND_MW_NONCONTIG at bit 30.
 */
#define SROCEDV_ACCESS_BIND_MW_NONCONTIG (1 << 30)

struct srocedv_mw_alloc_attr {
	uint64_t comp_mask;        /* 0 */
	enum ibv_mw_type type;     /* IBV_MW_TYPE_1 or IBV_MW_TYPE_2 */
	uint32_t max_descriptors;  /* the pieces a layout compiles to (caps) */
};

/* ibv_alloc_mw with room for layouts: NULL and errno on failure (EINVAL
 * beyond the caps or a comp_mask, EOPNOTSUPP on another device). A layout
 * takes one descriptor per contiguous piece it reaches (a matrix column of
 * N rows: N; a composite of three ranges: 3), so a composite of two
 * windows needs the sum of theirs. Free with ibv_dealloc_mw, which fails
 * with EBUSY while a bound layout includes the window. */
struct ibv_mw *srocedv_alloc_mw_ex(struct ibv_pd *pd, const struct srocedv_mw_alloc_attr *attr);

struct srocedv_mw_attr {
	uint64_t comp_mask;        /* 0 */
	uint32_t max_descriptors;  /* as allocated (0: ibv_alloc_mw's) */
	uint32_t lkey;             /* the window's key (an lkey only when bound
				    * with IBV_ACCESS_LOCAL_WRITE) */
};
/* 0, or EINVAL (NULL) or EOPNOTSUPP (not a sroce window). */
int srocedv_query_mw(struct ibv_mw *mw, struct srocedv_mw_attr *attr);

enum srocedv_mw_entry_type {
	SROCEDV_MW_ENTRY_USE_MR = 0,
	SROCEDV_MW_ENTRY_USE_MW = 1,
};

struct srocedv_mw_stride {
	uint64_t stride;           /* bytes from one item to the next along it */
	uint64_t count;            /* items along it (>= 1) */
};

struct srocedv_mw_layout_entry {
	uint32_t comp_mask;        /* 0 */
	enum srocedv_mw_entry_type mem_obj_type;
	union {
		struct ibv_mr *mr;
		struct ibv_mw *mw; /* bound; its rkey then names it */
	};
	/* Composite: the entry's bytes [addr, addr + length). Interleaved: its
	 * items of `length` bytes at addr + sum(i_d * stride_d), dimension 0
	 * varying fastest. Addresses are the MR's, or the window's own (VA or
	 * offsets, as it was bound). */
	uint64_t addr;
	uint64_t length;
	struct {
		uint64_t repeat_count;     /* items per round (0 = 1) */
		uint32_t dimension_count;  /* 0..max_stride_dimension */
		struct srocedv_mw_stride *dimension;
	} interleaved;
};

enum srocedv_mw_layout_type {
	SROCEDV_MW_LAYOUT_TYPE_COMPOSITE = 0,
	SROCEDV_MW_LAYOUT_TYPE_INTERLEAVED = 1,
};

struct srocedv_mw_layout {
	uint32_t comp_mask;        /* 0 */
	enum srocedv_mw_layout_type type;
	uint32_t entry_count;      /* 1..max_list_size */
	struct srocedv_mw_layout_entry *entries;
};

struct srocedv_mw_bind_info {
	union {
		struct {           /* without SROCEDV_ACCESS_BIND_MW_NONCONTIG */
			struct ibv_mr *mr;
			uint64_t addr;
			uint64_t length;
		};
		const struct srocedv_mw_layout *layout; /* with it */
	};
	int mw_access_flags;       /* ibv_access_flags | SROCEDV_ACCESS_BIND_MW_NONCONTIG */
};

struct srocedv_mw_bind {
	uint64_t wr_id;
	unsigned int send_flags;   /* IBV_SEND_SIGNALED, IBV_SEND_FENCE */
	uint32_t rkey;             /* type 2: the new key (ibv_inc_rkey); type 1: ignored */
	struct srocedv_mw_bind_info bind_info;
};

/*
 * srocedv_bind_mw - binds a window of either type on qp, to a range of an
 * MR or (SROCEDV_ACCESS_BIND_MW_NONCONTIG) to a layout, in the order of
 * qp's send queue; the completion (IBV_WC_BIND_MW, or IBV_WC_MW_BIND_ERR)
 * comes as for ibv_bind_mw. The layout is checked and compiled before the
 * post, so a bad layout fails here with an errno and nothing posted:
 * EINVAL (malformed, a key that names no valid MR or bound window or names a
 * type 2 window, strides that overlap, entries running out in different
 * rounds, a window without descriptors), E2BIG (more entries, dimensions, items or pieces than the
 * caps and the window allow), ELOOP (the window itself among its entries,
 * or nesting deeper than max_recursion_depth), EOVERFLOW, ERANGE (an entry
 * outside its MR or window), EACCES (another PD, or rights an entry lacks:
 * a window passes on only its own; an MR needs IBV_ACCESS_MW_BIND, and
 * IBV_ACCESS_LOCAL_WRITE for remote write, atomics or the lkey). The
 * window's key changes with the post (mw->rkey).
 */
int srocedv_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct srocedv_mw_bind *bind);

/* Interface families (seed 004): srocedv_query_intf and the tables. */
#include <infiniband/srocedv_intf.h>

/* True if the device behind context is driven by sroce. */
static inline bool srocedv_is_supported(struct ibv_context *context)
{
	struct srocedv_device_attr attr = {0};

	return srocedv_query_device(context, &attr) == 0;
}

#ifdef __cplusplus
}
#endif

#endif /* INFINIBAND_SROCEDV_H */

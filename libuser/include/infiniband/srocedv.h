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
#include <stdint.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bits of srocedv_device_attr.comp_mask: set by the caller for the fields
 * it wants, cleared by the library for those it could not fill. None are
 * defined yet; the feature fields arrive with the features. */
enum srocedv_device_attr_mask {
	SROCEDV_DEVICE_ATTR_MASK_RESERVED = 0,
};

struct srocedv_device_attr {
	uint64_t comp_mask;     /* in: wanted fields; out: filled fields */
	uint32_t abi_version;   /* kernel <-> provider ABI (always filled) */
	uint32_t flags;         /* enum srocedv_device_flags (always filled) */
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
 * comp_mask names the sroce fields that are set; none are defined yet
 * (multi-packet receive, XRC's kernel-owned receive QP and RSS add theirs).
 * The provider refuses a bit it does not know with EOPNOTSUPP; the kernel,
 * which gets the mask, refuses one it does not know with EINVAL.
 */
struct srocedv_qp_init_attr {
	uint64_t comp_mask;     /* none defined: 0 */
};

struct srocedv_cq_init_attr {
	uint64_t comp_mask;     /* none defined: 0 */
};

struct srocedv_srq_init_attr {
	uint64_t comp_mask;     /* none defined: 0 */
};

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

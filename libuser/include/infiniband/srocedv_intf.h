/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * srocedv_intf.h - sroce's interface families (seed 004), part of
 * <infiniband/srocedv.h>, which includes it: include that one.
 */
#ifndef INFINIBAND_SROCEDV_INTF_H
#define INFINIBAND_SROCEDV_INTF_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Interface families (seed 004, "Accelerated Verbs"; Documentation/srocedv.md,
 * "Interface families"; srocedv_query_intf(3)).
 *
 * srocedv_query_intf returns a table of fast-path functions bound to one
 * object: every check (the family and its version, the object's type and
 * state, the flags) is made there, once, and the functions it returns make
 * none of them again. Each table is specialised at query time for the
 * object and the mode asked for (locking, signalling, fence, the CQ's
 * format), so the functions take no branch on those settings. The seed's
 * names are ibv_*; libibverbs 44 has none of them, so they are srocedv_*
 * here, with the seed's signatures.
 */
enum srocedv_intf_family {
	SROCEDV_INTF_QP_RDMA = 1,      /* struct srocedv_qp_ops_rdma; obj: struct ibv_qp * */
	SROCEDV_INTF_QP_MSG = 2,       /* struct srocedv_qp_ops_msg; obj: struct ibv_qp * */
	SROCEDV_INTF_CQ_FORMATTED = 3, /* struct srocedv_cq_formatted_ops; obj: struct ibv_cq * */
	SROCEDV_INTF_SRQ_RECV = 4,     /* struct srocedv_srq_ops; obj: struct ibv_srq * (basic or XRC) */
	SROCEDV_INTF_WQ_RECV = 5,      /* struct srocedv_wq_ops; obj: struct ibv_wq * (IBV_WQT_RQ) */
};
#define SROCEDV_INTF_VERSION 1       /* the only version of each family */

/* Generic flags (srocedv_query_intf_params.flags). */
enum srocedv_intf_flags {
	/* The caller never uses the object from two threads at once, through
	 * this table or any other verb: the functions take no lock. */
	SROCEDV_INTF_FLAG_SINGLE_THREADED = 1 << 0,
};

/* Family flags of SROCEDV_INTF_QP_RDMA and SROCEDV_INTF_QP_MSG. The
 * function groups say which entries the table fills (the others are NULL);
 * with none of them, the groups the QP type allows. Asking for a group the
 * QP cannot use is refused at query time. A QP with no gather entry
 * (max_send_sge 0) and inline room sends inline only: its send groups fill
 * the inline functions and flush, the entries taking an lkey are NULL, and
 * READ is refused. */
enum srocedv_qp_family_flags {
	SROCEDV_QP_OPS_UNSIGNALED = 1 << 0, /* no IBV_SEND_SIGNALED (the QP's sq_sig_all decides) */
	SROCEDV_QP_OPS_FENCE = 1 << 1,      /* every WR with IBV_SEND_FENCE */
	SROCEDV_QP_OPS_SOLICITED = 1 << 2,  /* every SEND with IBV_SEND_SOLICITED */
	SROCEDV_QP_OPS_READ = 1 << 8,       /* RDMA: read (RC) */
	SROCEDV_QP_OPS_WRITE = 1 << 9,      /* RDMA: write, write_imm, write_inline, write_pending, flush (RC, UC) */
	SROCEDV_QP_OPS_SEND = 1 << 10,      /* MSG: send, send_imm, send_inline, the pendings, flush (RC, UC) */
	SROCEDV_QP_OPS_SENDTO = 1 << 11,    /* MSG: sendto, sendto_imm, sendto_inline, flush (UD) */
	SROCEDV_QP_OPS_RECV = 1 << 12,      /* MSG: recv, recv_repost (a QP with its own RQ) */
};

struct srocedv_query_intf_params {
	uint32_t comp_mask;          /* none defined: 0 */
	uint32_t flags;              /* enum srocedv_intf_flags */
	enum srocedv_intf_family intf;
	int intf_version;            /* SROCEDV_INTF_VERSION */
	void *obj;                   /* the QP, CQ, SRQ or WQ, as the family says */
	void *family_params;         /* none defined: NULL */
	uint32_t family_flags;       /* enum srocedv_qp_family_flags; CQ, SRQ, WQ: 0 */
};

/*
 * srocedv_query_intf - the family's table for params->obj, or NULL with
 * errno: EOPNOTSUPP for a context that is not sroce's, an unknown family,
 * version, comp_mask or family_params; EINVAL for a NULL argument, unknown
 * flags, a group the QP's type or queues cannot take (READ on UC or UD or
 * without a gather entry, SENDTO on RC or UC, SEND on UD, RECV with an SRQ,
 * a send group on an XRC target or on a send queue with neither gather
 * entries nor inline room), an object in the wrong state (send groups
 * before RTS, RECV in RESET), a formatted CQ with no format set, an SRQ
 * with no scatter entry; EBUSY when the QP holds tables
 * of this family with other FENCE or SOLICITED flags (signalling and
 * locking are each table's own: signalled and unsignalled tables of one
 * QP may be held at once), or while the object is being destroyed (its
 * destroy found no table held and has not returned). Release it with
 * srocedv_release_intf; while any is held, ibv_destroy_qp, ibv_destroy_cq,
 * ibv_destroy_srq and ibv_destroy_wq fail with EBUSY.
 */
void *srocedv_query_intf(struct ibv_context *context, struct srocedv_query_intf_params *params);
/* 0, or EINVAL for a NULL or unknown table (released already, or not from
 * srocedv_query_intf). The library never touches a released table. */
int srocedv_release_intf(struct ibv_context *context, void *intf);

/*
 * The QP families. Each function posts one work request, completely, and
 * returns 0, or ENOMEM when the queue is full, EINVAL when inline data
 * exceeds the QP's max_inline_data or recv_repost has fewer taken buffers
 * than asked for. A *_pending function writes its work request without
 * publishing it; the family's flush publishes every pending one with one
 * producer update and at most one doorbell (beyond the seed's list).
 * Immediate data is big-endian, as ibv_send_wr's imm_data.
 */
struct srocedv_qp_ops_rdma {
	int (*read)(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint32_t lkey,
		    uint64_t remote_addr, uint32_t rkey, uint64_t wr_id);
	int (*write)(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint32_t lkey,
		     uint64_t remote_addr, uint32_t rkey, uint64_t wr_id);
	int (*write_imm)(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint32_t lkey,
			 uint32_t imm_data, uint64_t remote_addr, uint32_t rkey, uint64_t wr_id);
	int (*write_inline)(struct ibv_qp *qp, uint64_t addr, uint32_t length,
			    uint64_t remote_addr, uint32_t rkey, uint64_t wr_id);
	int (*write_pending)(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint32_t lkey,
			     uint64_t remote_addr, uint32_t rkey, uint64_t wr_id);
	int (*flush)(struct ibv_qp *qp);
};

struct srocedv_qp_ops_msg {
	int (*recv)(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint32_t lkey, uint64_t wr_id);
	/* Posts again the num oldest receive WRs the device has taken and
	 * that were not reposted yet (a QP's receives complete in order: the
	 * last num completed), same buffers and wr_ids. */
	int (*recv_repost)(struct ibv_qp *qp, int num);
	int (*send)(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint32_t lkey, uint64_t wr_id);
	int (*send_imm)(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint32_t lkey,
			uint32_t imm_data, uint64_t wr_id);
	int (*send_inline)(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint64_t wr_id);
	int (*sendto)(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint32_t lkey,
		      struct ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey, uint64_t wr_id);
	int (*sendto_imm)(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint32_t lkey,
			  uint32_t imm_data, struct ibv_ah *ah, uint32_t remote_qpn,
			  uint32_t remote_qkey, uint64_t wr_id);
	int (*sendto_inline)(struct ibv_qp *qp, uint64_t addr, uint32_t length, struct ibv_ah *ah,
			     uint32_t remote_qpn, uint32_t remote_qkey, uint64_t wr_id);
	int (*send_pending)(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint32_t lkey,
			    uint64_t wr_id);
	int (*send_inline_pending)(struct ibv_qp *qp, uint64_t addr, uint32_t length, uint64_t wr_id);
	int (*flush)(struct ibv_qp *qp);
};

/*
 * The SRQ receive family (beyond the seed's list, which names SRQs only as
 * objects): the message family's recv and recv_repost on a shared receive
 * queue. An SRQ is taken in post order, whichever of its QPs receives, so
 * recv_repost posts again the num oldest WRs taken and not reposted yet.
 * With several QPs receiving, completions can come out of post order (a
 * message of many packets, two QPs on two CPUs): the caller must be done
 * with all num in post order (srocedv_srq_ops(3)). Returns as the QP
 * families do: 0, ENOMEM when the SRQ is full, EINVAL when recv_repost has
 * fewer taken buffers than asked for.
 */
struct srocedv_srq_ops {
	int (*recv)(struct ibv_srq *srq, uint64_t addr, uint32_t length, uint32_t lkey, uint64_t wr_id);
	int (*recv_repost)(struct ibv_srq *srq, int num);
};

/*
 * The WQ receive family (the seed names WQs as objects of a query; RSS's
 * receive work queues, Documentation/rss.md): recv and recv_repost on a
 * WQ's ring, as ibv_post_wq_recv posts. A WQ is taken in post order, so
 * recv_repost posts again its num oldest WRs taken and not reposted yet;
 * its completions are in that order too. Returns as the SRQ family, and
 * EINVAL, posting nothing, while the WQ is not in IBV_WQS_RDY (the one check
 * ibv_post_wq_recv makes on each call, so the family makes it too).
 */
struct srocedv_wq_ops {
	int (*recv)(struct ibv_wq *wq, uint64_t addr, uint32_t length, uint32_t lkey, uint64_t wr_id);
	int (*recv_repost)(struct ibv_wq *wq, int num);
};

/*
 * The formatted CQ. srocedv_modify_cq sets the format (and moderation: the
 * seed's extended ibv_modify_cq, which libibverbs 44 lacks); poll_formatted
 * then writes each successful completion as the selected structs, in the
 * order below, laid out as one C struct of them (srocedv_wc_format_size).
 * SROCEDV_WC_BASE is required; SROCEDV_WC_TS needs a CQ created with
 * IBV_WC_EX_WITH_COMPLETION_TIMESTAMP.
 */
struct srocedv_wc_base {
	uint64_t wr_id;
	uint32_t byte_len;
	uint32_t wc_flags;       /* enum ibv_wc_flags */
};
struct srocedv_wc_imm {
	uint32_t imm_data;       /* big-endian (or the invalidated rkey) */
};
struct srocedv_wc_dest {
	uint32_t qp_num;
};
struct srocedv_wc_source {
	uint32_t src_qp;
	uint16_t slid;           /* 0 on RoCE */
};
struct srocedv_wc_path {
	uint8_t sl;
	uint8_t dlid_path_bits;  /* 0 on RoCE */
};
struct srocedv_wc_ts {
	uint64_t timestamp;      /* ns, as ibv_wc_read_completion_ts */
};
/* The multi-packet poll variant (issue 19, beyond the seed's parts): the
 * byte offset of the data in the receive WR's buffer, as
 * srocedv_wc_read_mp_wr_offset, and the opcode, which tells a
 * SROCEDV_WC_RECV_NOP from data. The MORE_IN_MSG, CONSUMED and INCOMPLETE
 * flags are in the base part's wc_flags. */
struct srocedv_wc_mp_wr {
	uint32_t offset;
	uint32_t opcode;         /* enum ibv_wc_opcode, or SROCEDV_WC_RECV_NOP */
};

enum srocedv_wc_format {
	SROCEDV_WC_BASE = 1 << 0,
	SROCEDV_WC_IMM = 1 << 1,
	SROCEDV_WC_DEST = 1 << 2,
	SROCEDV_WC_SOURCE = 1 << 3,
	SROCEDV_WC_PATH = 1 << 4,
	SROCEDV_WC_TS = 1 << 5,
	SROCEDV_WC_MP_WR = 1 << 6, /* beyond the seed: a CQ with SROCEDV_WC_EX_WITH_MP_WR */
};
#define SROCEDV_WC_FORMAT_ALL 0x3full /* the seed's parts: valid on a CQ with timestamps */
#define SROCEDV_WC_FORMAT_ALL_MP (SROCEDV_WC_FORMAT_ALL | SROCEDV_WC_MP_WR)

/* The offset of part `which` (one SROCEDV_WC_* bit) in a completion of
 * format `mask`, or with which == 0 the completion's size: the selected
 * structs in a C struct, in bit order. 0 for a mask without BASE. */
static inline size_t srocedv_wc_format_offset(uint64_t mask, uint64_t which)
{
	/* Straight-line, so that a constant mask folds to constants. */
	const size_t imm = 16;
	size_t dest, source, path, ts, mp, end;

	if (!(mask & SROCEDV_WC_BASE) || (mask & ~SROCEDV_WC_FORMAT_ALL_MP))
		return 0;
	dest = imm + ((mask & SROCEDV_WC_IMM) ? 4 : 0);
	source = dest + ((mask & SROCEDV_WC_DEST) ? 4 : 0);
	path = source + ((mask & SROCEDV_WC_SOURCE) ? 8 : 0);
	end = path + ((mask & SROCEDV_WC_PATH) ? 2 : 0);
	ts = (end + 7) & ~(size_t)7;
	if (mask & SROCEDV_WC_TS)
		end = ts + 8;
	mp = (end + 3) & ~(size_t)3;
	if (mask & SROCEDV_WC_MP_WR)
		end = mp + 8;
	switch (which) {
	case 0:
		return (end + 7) & ~(size_t)7; /* BASE's 8-byte alignment */
	case SROCEDV_WC_IMM:
		return imm;
	case SROCEDV_WC_DEST:
		return dest;
	case SROCEDV_WC_SOURCE:
		return source;
	case SROCEDV_WC_PATH:
		return path;
	case SROCEDV_WC_TS:
		return ts;
	case SROCEDV_WC_MP_WR:
		return mp;
	default: /* SROCEDV_WC_BASE */
		return 0;
	}
}

static inline size_t srocedv_wc_format_size(uint64_t mask)
{
	return srocedv_wc_format_offset(mask, 0);
}

struct srocedv_cq_attr {
	struct {
		uint16_t cq_count;
		uint16_t cq_period;  /* microseconds */
	} moderation;
	uint64_t format_mask;    /* enum srocedv_wc_format */
};

enum srocedv_cq_attr_mask {
	SROCEDV_CQ_MODERATION = 1 << 0,
	SROCEDV_CQ_FORMAT_MASK = 1 << 1,
};

/*
 * srocedv_modify_cq - moderation (as ibv_modify_cq) and the format of
 * poll_formatted. 0, or EINVAL (a NULL argument, a format without BASE or
 * with unknown bits, TS on a CQ without timestamps), EOPNOTSUPP (not a
 * sroce CQ, an unknown attr_mask bit), EBUSY (a new format while a
 * formatted table of the CQ is held), or moderation's errno.
 */
int srocedv_modify_cq(struct ibv_cq *cq, struct srocedv_cq_attr *attr, int attr_mask);

struct srocedv_cq_formatted_ops {
	/* Writes as many whole successful completions as len holds, and
	 * returns their count (0: none ready). At an error completion it
	 * stops: the count so far, or -EIO when it is the first (read it
	 * with ibv_poll_cq). -EINVAL when len holds no completion. */
	int (*poll_formatted)(struct ibv_cq *cq, void *buf, size_t len);
	/* Completions ready now, successful or not. */
	int (*poll_num)(struct ibv_cq *cq);
};

#ifdef __cplusplus
}
#endif

#endif /* INFINIBAND_SROCEDV_INTF_H */

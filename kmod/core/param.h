/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * param.h - every limit of the device in one place (rxe_param.h style).
 *
 * C and C++. The first part, the limits a consumer sees, are plain macros:
 * the glue (kmod/linux/verbs.c) fills ib_device_attr and ib_port_attr from
 * them directly, and the core's object tables enforce the same values (the
 * C++ names below), so what is reported is what is true and each limit is
 * written once. The C++ part adds the core's own transport tunables.
 */
#ifndef SROCE_PARAM_H
#define SROCE_PARAM_H

#define SROCE_VENDOR_ID 0xffffffu /* no OUI: a software device */
#define SROCE_VENDOR_PART_ID 0x5c0eu
#define SROCE_HW_VER 1u
#define SROCE_FW_VER 0x0001000000000000ull /* 1.0.0 */

#define SROCE_MAX_PD (1u << 16)
#define SROCE_MAX_UCONTEXT (1u << 12)
#define SROCE_MAX_QP (1u << 16)
#define SROCE_MAX_QP_WR (1u << 14)
#define SROCE_MAX_SGE 32u
#define SROCE_MAX_SGE_RD 32u
#define SROCE_MAX_INLINE_DATA 256u
#define SROCE_MAX_CQ (1u << 16)
#define SROCE_MAX_CQE ((1u << 16) - 1)
#define SROCE_MAX_MR (1u << 16)
#define SROCE_MAX_MW (1u << 16)
#define SROCE_MAX_SRQ (1u << 12)
#define SROCE_MAX_SRQ_WR (1u << 14)
#define SROCE_MAX_SRQ_SGE 27u
#define SROCE_MAX_AH (1u << 16)
#define SROCE_MAX_XRCD (1u << 12)
/* Receive work queues and RSS indirection tables (Documentation/rss.md). */
#define SROCE_MAX_WQ (1u << 12)
#define SROCE_MAX_WQ_WR (1u << 14)
#define SROCE_MAX_WQ_SGE 27u
#define SROCE_MAX_RWQ_IND_TABLE (1u << 12)
#define SROCE_MAX_RWQ_IND_TABLE_LOG 8u /* 256 entries */
#define SROCE_MAX_QP_RD_ATOM 128u
#define SROCE_MAX_RES_RD_ATOM (1u << 16)
#define SROCE_MAX_PKEYS 1u
#define SROCE_LOCAL_CA_ACK_DELAY 15u
#define SROCE_MAX_FAST_REG_PAGE_LIST_LEN 512u
/* The device clock of completion timestamps: sroce_env_now_ns(), so
 * 1,000,000 kHz; the provider reads the same clock (CLOCK_MONOTONIC). */
#define SROCE_HCA_CORE_CLOCK_KHZ 1000000ull
/* CQ moderation (ibv_modify_cq): completions per event and the longest
 * wait for one, in microseconds (ib_cq_caps holds u16s; mlx5's values). */
#define SROCE_MAX_CQ_MODERATION_COUNT 65535u
#define SROCE_MAX_CQ_MODERATION_PERIOD 4095u
/* Device page size for MRs (4 KiB). */
#define SROCE_PAGE_SHIFT 12
/* 256 GiB: the page table of the largest MR (2^26 pointers, 512 MiB) stays
 * below what kvmalloc accepts without a warning (INT_MAX). */
#define SROCE_MAX_MR_SIZE (1ull << 38)

/* The RoCE port. */
#define SROCE_GID_TABLE_LEN 1024u
#define SROCE_PKEY_TABLE_LEN 1u
#define SROCE_MAX_MSG_SZ (1u << 31)

/* Object kinds that do not exist yet: query_device reports 0 for their
 * limits (SROCE_LIMIT), so it never promises what create_* would refuse.
 * Each milestone flips its entry. */
#define SROCE_HAVE_FAST_REG 1 /* IB_WR_REG_MR page lists (alloc_mr) */
#define SROCE_HAVE_MW 1
#define SROCE_HAVE_WQ 1 /* WQs and RSS indirection tables (wq.c) */
#define SROCE_LIMIT(have, limit) ((have) ? (limit) : 0)

#ifdef __cplusplus
#include "ktl/types.h"

namespace sroce::param {

constexpr u32 vendor_id = SROCE_VENDOR_ID;
constexpr u32 vendor_part_id = SROCE_VENDOR_PART_ID;
constexpr u32 hw_ver = SROCE_HW_VER;
constexpr u64 fw_ver = SROCE_FW_VER;

constexpr u32 max_pd = SROCE_MAX_PD;
constexpr u32 max_ucontext = SROCE_MAX_UCONTEXT;
constexpr u32 max_qp = SROCE_MAX_QP;
constexpr u32 first_qpn = 16; // below: reserved (0 SMI, 1 GSI)
constexpr u32 gsi_qpn = 1;
constexpr u32 gsi_qkey = 0x80010000;
constexpr u32 max_qp_wr = SROCE_MAX_QP_WR;
constexpr u32 max_sge = SROCE_MAX_SGE;
constexpr u32 max_sge_rd = SROCE_MAX_SGE_RD;
constexpr u32 max_inline_data = SROCE_MAX_INLINE_DATA;
constexpr u32 max_cq = SROCE_MAX_CQ;
constexpr u32 max_cqe = SROCE_MAX_CQE;
constexpr u32 max_cq_moderation_count = SROCE_MAX_CQ_MODERATION_COUNT;
constexpr u32 max_cq_moderation_period = SROCE_MAX_CQ_MODERATION_PERIOD;
constexpr u32 max_mr = SROCE_MAX_MR;
constexpr u32 max_mw = SROCE_MAX_MW;
constexpr u32 max_srq = SROCE_MAX_SRQ;
constexpr u32 max_srq_wr = SROCE_MAX_SRQ_WR;
constexpr u32 max_srq_sge = SROCE_MAX_SRQ_SGE;
constexpr u32 max_ah = SROCE_MAX_AH;
constexpr u32 max_xrcd = SROCE_MAX_XRCD;
constexpr u32 max_wq = SROCE_MAX_WQ;
constexpr u32 max_wq_wr = SROCE_MAX_WQ_WR;
constexpr u32 max_wq_sge = SROCE_MAX_WQ_SGE;
constexpr u32 max_ind_table = SROCE_MAX_RWQ_IND_TABLE;
constexpr u32 max_ind_table_log = SROCE_MAX_RWQ_IND_TABLE_LOG;
// Consecutive-QPN blocks (qpn_block.h) per device: each holds up to
// 2^max_ind_table_log numbers whatever its live children, so their count
// bounds what unclaimed numbers can keep from everyone else.
constexpr u32 max_qpn_blocks = 64;
constexpr u32 max_qp_rd_atom = SROCE_MAX_QP_RD_ATOM;
constexpr u32 max_res_rd_atom = SROCE_MAX_RES_RD_ATOM;
constexpr u32 max_pkeys = SROCE_MAX_PKEYS;
constexpr u32 local_ca_ack_delay = SROCE_LOCAL_CA_ACK_DELAY;
constexpr u32 max_fast_reg_page_list_len = SROCE_MAX_FAST_REG_PAGE_LIST_LEN;

// RoCE port.
constexpr u32 gid_table_len = SROCE_GID_TABLE_LEN;
constexpr u32 pkey_table_len = SROCE_PKEY_TABLE_LEN;
constexpr u32 max_msg_sz = SROCE_MAX_MSG_SZ;
// Bytes a RoCEv2 packet adds to the IB MTU: Ethernet + IPv6 (the larger IP
// header) + UDP + BTH + the largest extension headers + ICRC. The active IB
// MTU is the largest one such that a full packet fits the netdev MTU.
constexpr u32 max_header_len = 80;
// Receive steering (rx_steer.cpp): a packet with fewer bytes after its
// headers (payload, pad and ICRC) stays on the CPU it arrived on, unless it
// is an answer that clocks sending or others of its QP wait elsewhere.
constexpr u32 rx_steer_min_bytes = 512;

// Kernel reserves. The caps above are device-wide and shared by every
// process and by the kernel's own consumers (ib_mad's QP1 and its CQ and
// DMA MR, the QPs rdma_cm makes for kernel ULPs). Objects created for user
// space may take at most cap - reserve, so a process at the cap never
// locks the kernel out (Documentation/security.md).
namespace reserve {
constexpr u32 qp = max_qp / 64;
constexpr u32 cq = max_cq / 64;
constexpr u32 srq = max_srq / 64;
constexpr u32 wq = max_wq / 64;
constexpr u32 mr = max_mr / 64;
} // namespace reserve

// Transport.
constexpr u32 max_unacked_pkts = 256; // requester window, packets
constexpr u32 timeout_window = 8;     // PSNs out after a retry timeout, doubled per progress (transport.md)
static_assert(timeout_window >= 1 && timeout_window <= max_unacked_pkts, "a window that lets something out");
constexpr u32 ack_req_every = 32;     // AckReq at least every N packets
constexpr u32 nak_window_floor = 64;  // a PSN NAK halves the window down to this (transport.md)
static_assert(nak_window_floor >= timeout_window && nak_window_floor <= max_unacked_pkts &&
		      nak_window_floor >= ack_req_every,
	      "a NAK never shrinks the window below a timeout's, nor below one AckReq interval");
constexpr u32 tx_budget = 64;         // packets per run before deferring to work
constexpr u32 read_resp_budget = 64;  // READ response packets per run
// A READ request asks for at most this many response packets: a longer
// READ is asked for in parts as the window opens, so a responder never has
// more in flight to us than the window (self-clocking, no flood of a queue).
constexpr u32 read_req_max_pkts = max_unacked_pkts / 2;
constexpr u64 rnr_wait_floor_ns = 10000;
// READ responses arriving this many PSNs beyond a gap mean the gap's
// response was lost, not reordered: ask again from the gap at once instead
// of waiting for the retry timer (TCP's three duplicate ACKs).
constexpr u32 read_gap_resend_after = 3;
// A spurious request raises the READ gap threshold past the reordering it
// met, up to reo_thresh_max (Linux TCP's adaptive dupthresh, tp->reordering);
// after reo_decay_requests requests in a row not spurious it starts over.
constexpr u32 reo_thresh_max = 128;
constexpr u32 reo_decay_requests = 16;
static_assert(read_gap_resend_after <= reo_thresh_max && reo_thresh_max <= max_unacked_pkts,
	      "a threshold a window can reach");
// The tail-loss probe (retry.cpp) waits a few measured round trips, but
// not less than probe_min_ns: the answer is softirq work on the peer, late
// by a scheduling delay or a timer tick. A probe is only armed when it
// comes before the retry timeout.
constexpr u64 probe_min_ns = 1000000;
constexpr u64 probe_initial_ns = 10000000; // before the first RTT sample
constexpr u32 max_probe_backoff = 16;      // probe k waits 2^k times as long, k up to this
static_assert(probe_min_ns <= probe_initial_ns, "a first probe no sooner than a measured one");

// Device page size for MRs, and the largest page an MR's page list may use.
constexpr u32 page_shift = SROCE_PAGE_SHIFT;
constexpr u32 max_page_shift = 30;
constexpr u64 max_mr_size = SROCE_MAX_MR_SIZE;

} // namespace sroce::param
#endif /* __cplusplus */
#endif /* SROCE_PARAM_H */

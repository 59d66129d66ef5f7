// All limits of the device in one place (rxe_param.h style). query_device
// reports these and the object tables enforce them, so what is reported is
// what is true.
#pragma once
#include "ktl/types.h"

namespace sroce::param {

constexpr u32 vendor_id = 0xffffff;      // no OUI: a software device
constexpr u32 vendor_part_id = 0x5c0e;
constexpr u32 hw_ver = 1;
constexpr u64 fw_ver = 0x0001000000000000ull; // 1.0.0

constexpr u32 max_pd = 1u << 16;
constexpr u32 max_ucontext = 1u << 12;
constexpr u32 max_qp = 1u << 16;
constexpr u32 first_qpn = 16; // below: reserved (0 SMI, 1 GSI)
constexpr u32 gsi_qpn = 1;
constexpr u32 gsi_qkey = 0x80010000;
constexpr u32 max_qp_wr = 1u << 14;
constexpr u32 max_sge = 32;
constexpr u32 max_sge_rd = 32;
constexpr u32 max_inline_data = 256;
constexpr u32 max_cq = 1u << 16;
constexpr u32 max_cqe = (1u << 16) - 1;
constexpr u32 max_mr = 1u << 16;
constexpr u32 max_mw = 1u << 16;
constexpr u32 max_srq = 1u << 12;
constexpr u32 max_srq_wr = 1u << 14;
constexpr u32 max_srq_sge = 27;
constexpr u32 max_ah = 1u << 16;
constexpr u32 max_qp_rd_atom = 128;
constexpr u32 max_res_rd_atom = 1u << 16;
constexpr u32 max_pkeys = 1;
constexpr u32 local_ca_ack_delay = 15;
constexpr u32 max_fast_reg_page_list_len = 512;

// RoCE port.
constexpr u32 gid_table_len = 1024;
constexpr u32 pkey_table_len = 1;
constexpr u32 max_msg_sz = 1u << 31;
// Bytes a RoCEv2 packet adds to the IB MTU: Ethernet + IPv6 (the larger IP
// header) + UDP + BTH + the largest extension headers + ICRC. The active IB
// MTU is the largest one such that a full packet fits the netdev MTU.
constexpr u32 max_header_len = 80;

// Kernel reserves. The caps above are device-wide and shared by every
// process and by the kernel's own consumers (ib_mad's QP1 and its CQ and
// DMA MR, the QPs rdma_cm makes for kernel ULPs). Objects created for user
// space may take at most cap - reserve, so a process at the cap never
// locks the kernel out (Documentation/security.md).
namespace reserve {
constexpr u32 qp = max_qp / 64;
constexpr u32 cq = max_cq / 64;
constexpr u32 srq = max_srq / 64;
constexpr u32 mr = max_mr / 64;
} // namespace reserve

// Transport.
constexpr u32 max_unacked_pkts = 256; // requester window, packets
constexpr u32 ack_req_every = 32;     // AckReq at least every N packets
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

// Device page size for MRs (4 KiB), and the largest page an MR's page list
// may use.
constexpr u32 page_shift = 12;
constexpr u32 max_page_shift = 30;
// 256 GiB: the page table of the largest MR (2^26 pointers, 512 MiB) stays
// below what kvmalloc accepts without a warning (INT_MAX).
constexpr u64 max_mr_size = 1ull << 38;

// Which object kinds exist yet. query_device reports 0 for the limits of a
// kind that does not, so it never promises what create_* would refuse. Each
// milestone flips its entry.
namespace available {
constexpr bool qp = true;
constexpr bool cq = true;
constexpr bool mr = true;
constexpr bool fast_reg = false; // IB_WR_REG_MR page lists (alloc_mr)
constexpr bool mw = false;
constexpr bool srq = true;
constexpr bool ah = true;
} // namespace available

} // namespace sroce::param

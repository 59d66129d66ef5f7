// ib_verbs numeric values the core uses. The core includes no kernel
// header, so the values of include/rdma/ib_verbs.h (which are the IBTA and
// uverbs UAPI values) are written out here once; core.h passes them through
// unchanged. tests/host/test_ib_enums.cpp asserts them against libibverbs'
// <infiniband/verbs.h>, whose values are the kernel's.
#pragma once
#include "ktl/types.h"
#include "abi.h" // SROCE_CQE_OP_REG_MR

namespace sroce::ib {

// enum ib_access_flags (IB_ACCESS_*), as in IB_UVERBS_ACCESS_*.
namespace access {
enum : u32 {
	local_write = 1u << 0,
	remote_write = 1u << 1,
	remote_read = 1u << 2,
	remote_atomic = 1u << 3,
	mw_bind = 1u << 4,
	zero_based = 1u << 5,
	on_demand = 1u << 6,
	hugetlb = 1u << 7,
	// IBA 1.5 FLUSH targets (IB_ACCESS_FLUSH_*, named from Linux 6.2 on).
	flush_global = 1u << 8,
	flush_persistent = 1u << 9,

	remote = remote_write | remote_read | remote_atomic,
	flush = flush_global | flush_persistent,
	// What an MR of this device can be registered with. Not persistence:
	// sroce cannot make memory durable, so no FLUSH can promise it.
	mr_supported = local_write | remote | mw_bind | flush_global,
};
} // namespace access

// enum ib_qp_type
enum QpType : u32 { qpt_smi = 0, qpt_gsi = 1, qpt_rc = 2, qpt_uc = 3, qpt_ud = 4, qpt_xrc_ini = 9, qpt_xrc_tgt = 10 };

// enum ib_qp_state
enum QpState : u32 { qps_reset = 0, qps_init, qps_rtr, qps_rts, qps_sqd, qps_sqe, qps_err };
constexpr u32 qps_count = 7;

// enum ib_wq_state
enum WqState : u32 { wqs_reset = 0, wqs_rdy, wqs_err };
constexpr u32 wqs_count = 3;

// enum ib_qp_attr_mask
enum QpAttrMask : u32 {
	attr_state = 1 << 0,
	attr_cur_state = 1 << 1,
	attr_en_sqd_async_notify = 1 << 2,
	attr_access_flags = 1 << 3,
	attr_pkey_index = 1 << 4,
	attr_port = 1 << 5,
	attr_qkey = 1 << 6,
	attr_av = 1 << 7,
	attr_path_mtu = 1 << 8,
	attr_timeout = 1 << 9,
	attr_retry_cnt = 1 << 10,
	attr_rnr_retry = 1 << 11,
	attr_rq_psn = 1 << 12,
	attr_max_qp_rd_atomic = 1 << 13,
	attr_alt_path = 1 << 14,
	attr_min_rnr_timer = 1 << 15,
	attr_sq_psn = 1 << 16,
	attr_max_dest_rd_atomic = 1 << 17,
	attr_path_mig_state = 1 << 18,
	attr_cap = 1 << 19,
	attr_dest_qpn = 1 << 20,
	attr_rate_limit = 1 << 25,
};

// enum ib_mtu
enum Mtu : u32 { mtu_256 = 1, mtu_512 = 2, mtu_1024 = 3, mtu_2048 = 4, mtu_4096 = 5 };
constexpr u32 mtu_bytes(u32 mtu) { return (mtu >= mtu_256 && mtu <= mtu_4096) ? 128u << mtu : 0; }

// enum ib_wr_opcode (the same values as ibv_wr_opcode for 0..10)
enum WrOpcode : u8 {
	wr_rdma_write = 0,
	wr_rdma_write_imm = 1,
	wr_send = 2,
	wr_send_imm = 3,
	wr_rdma_read = 4,
	wr_atomic_cmp_swp = 5,
	wr_atomic_fetch_add = 6,
	wr_local_inv = 7,
	wr_bind_mw = 8,
	wr_send_inv = 9,
	wr_flush = 14,	      // IBA 1.5: SROCE_WQE_FLUSH (requester.cpp)
	wr_atomic_write = 15, // IBA 1.5: SROCE_WQE_ATOMIC_WRITE (requester.cpp)
	wr_reg_mr = 0x20,     // IB_WR_REG_MR: kernel QPs only
};

// enum ib_wc_status (= ibv_wc_status)
enum WcStatus : u8 {
	wc_success = 0,
	wc_loc_len_err,
	wc_loc_qp_op_err,
	wc_loc_eec_op_err,
	wc_loc_prot_err,
	wc_wr_flush_err,
	wc_mw_bind_err,
	wc_bad_resp_err,
	wc_loc_access_err,
	wc_rem_inv_req_err,
	wc_rem_access_err,
	wc_rem_op_err,
	wc_retry_exc_err,
	wc_rnr_retry_exc_err,
	wc_loc_rdd_viol_err,
	wc_rem_inv_rd_req_err,
	wc_rem_abort_err,
	wc_inv_eecn_err,
	wc_inv_eec_state_err,
	wc_fatal_err,
	wc_resp_timeout_err,
	wc_general_err,
};

// enum ib_wc_opcode (= ibv_wc_opcode)
enum WcOpcode : u8 {
	wc_send = 0,
	wc_rdma_write = 1,
	wc_rdma_read = 2,
	wc_comp_swap = 3,
	wc_fetch_add = 4,
	wc_bind_mw = 5,
	wc_local_inv = 6,
	wc_flush = 8,	     // IB_UVERBS_WC_FLUSH
	wc_atomic_write = 9, // IBV_WC_ATOMIC_WRITE
	wc_reg_mr = SROCE_CQE_OP_REG_MR, // kernel CQs: the glue gives IB_WC_REG_MR
	wc_recv = 1 << 7,
	wc_recv_rdma_imm = wc_recv + 1,
};

// enum ib_event_type (the ones the core raises)
enum Event : int {
	ev_cq_err = 0,
	ev_qp_fatal = 1,
	ev_qp_req_err = 2,
	ev_qp_access_err = 3,
	ev_comm_est = 4,
	ev_sq_drained = 5,
	ev_srq_err = 14,
	ev_srq_limit_reached = 15,
	ev_qp_last_wqe_reached = 16,
	ev_wq_fatal = 19,
};

// IB_CQ_* notify flags
enum CqNotify : int { cq_solicited = 1, cq_next_comp = 2, cq_solicited_mask = 3, cq_report_missed = 4 };

// enum rdma_network_type
enum NetworkType : u8 { net_ib = 0, net_ipv4 = 2, net_ipv6 = 3 };

} // namespace sroce::ib

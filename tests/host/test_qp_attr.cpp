// The transition table against the rules of IBTA 11.2.4.2 that programs
// rely on (ibv_rc_pingpong, rdma_cm and ib_mad masks).
#include <catch2/catch.hpp>

#include "ib_enums.h"
#include "qp_attr.h"

using namespace sroce;
using namespace sroce::ib;

TEST_CASE("qp transitions: the masks real programs use are accepted", "[qp][attr]") {
	u32 rc_init = attr_state | attr_pkey_index | attr_port | attr_access_flags;
	u32 rc_rtr = attr_state | attr_av | attr_path_mtu | attr_dest_qpn | attr_rq_psn |
		     attr_max_dest_rd_atomic | attr_min_rnr_timer;
	u32 rc_rts = attr_state | attr_timeout | attr_retry_cnt | attr_rnr_retry | attr_sq_psn |
		     attr_max_qp_rd_atomic;
	CHECK(qp_transition_ok(qps_reset, qps_init, qpt_rc, rc_init));
	CHECK(qp_transition_ok(qps_init, qps_rtr, qpt_rc, rc_rtr));
	CHECK(qp_transition_ok(qps_rtr, qps_rts, qpt_rc, rc_rts));
	CHECK(qp_transition_ok(qps_reset, qps_init, qpt_ud, attr_state | attr_pkey_index | attr_port | attr_qkey));
	CHECK(qp_transition_ok(qps_init, qps_rtr, qpt_ud, attr_state));
	CHECK(qp_transition_ok(qps_rtr, qps_rts, qpt_ud, attr_state | attr_sq_psn));
	// ib_mad's QP1 sequence.
	CHECK(qp_transition_ok(qps_reset, qps_init, qpt_gsi, attr_state | attr_pkey_index | attr_qkey));
	CHECK(qp_transition_ok(qps_init, qps_rtr, qpt_gsi, attr_state));
	CHECK(qp_transition_ok(qps_rtr, qps_rts, qpt_gsi, attr_state | attr_sq_psn));
	// UC needs no RC-only attributes.
	CHECK(qp_transition_ok(qps_init, qps_rtr, qpt_uc, attr_state | attr_av | attr_path_mtu | attr_dest_qpn | attr_rq_psn));
	CHECK(qp_transition_ok(qps_rtr, qps_rts, qpt_uc, attr_state | attr_sq_psn));
	// Any state to RESET or ERR.
	for (u32 s = qps_reset; s <= qps_err; s++) {
		CHECK(qp_transition_ok(s, qps_reset, qpt_rc, attr_state));
		CHECK(qp_transition_ok(s, qps_err, qpt_ud, attr_state));
	}
	CHECK(qp_transition_ok(qps_rts, qps_sqd, qpt_rc, attr_state | attr_en_sqd_async_notify));
	CHECK(qp_transition_ok(qps_sqd, qps_rts, qpt_rc, attr_state));
	CHECK(qp_transition_ok(qps_sqe, qps_rts, qpt_ud, attr_state | attr_cur_state));
}

TEST_CASE("qp transitions: invalid ones are refused", "[qp][attr]") {
	// Skipping a state.
	CHECK_FALSE(qp_transition_ok(qps_reset, qps_rtr, qpt_rc, attr_state));
	CHECK_FALSE(qp_transition_ok(qps_init, qps_rts, qpt_rc, attr_state | attr_sq_psn));
	// Missing a required attribute (RC RTR without MIN_RNR_TIMER).
	CHECK_FALSE(qp_transition_ok(qps_init, qps_rtr, qpt_rc,
				     attr_state | attr_av | attr_path_mtu | attr_dest_qpn | attr_rq_psn |
					     attr_max_dest_rd_atomic));
	// An attribute the transition does not allow (QKEY on RC INIT).
	CHECK_FALSE(qp_transition_ok(qps_reset, qps_init, qpt_rc,
				     attr_state | attr_pkey_index | attr_port | attr_access_flags | attr_qkey));
	// RC-only attributes on UD.
	CHECK_FALSE(qp_transition_ok(qps_rtr, qps_rts, qpt_ud, attr_state | attr_sq_psn | attr_timeout));
	// CUR_STATE naming RESET or INIT.
	CHECK_FALSE(qp_transition_ok(qps_init, qps_init, qpt_rc, attr_state | attr_cur_state));
	// SQE -> RTS takes no RC attribute (as ib_modify_qp_is_ok).
	CHECK_FALSE(qp_transition_ok(qps_sqe, qps_rts, qpt_rc, attr_state | attr_access_flags));
	// Back from ERR only through RESET.
	CHECK_FALSE(qp_transition_ok(qps_err, qps_init, qpt_rc, attr_state | attr_pkey_index | attr_port | attr_access_flags));
	// Unsupported QP types and out-of-range states.
	CHECK_FALSE(qp_transition_ok(qps_reset, qps_init, qpt_xrc_tgt, attr_state));
	CHECK_FALSE(qp_transition_ok(qps_reset, 7, qpt_rc, attr_state));
	CHECK_FALSE(qp_transition_ok(9, qps_reset, qpt_rc, attr_state));
}

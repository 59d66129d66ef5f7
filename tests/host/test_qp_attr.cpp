// The transition table against the rules of IBTA 11.2.4.2 that programs
// rely on (ibv_rc_pingpong, rdma_cm and ib_mad masks), and the attribute
// ranges a modify is checked against.
#include <catch2/catch.hpp>

#include <cerrno>

#include "ib_enums.h"
#include "packet.h"
#include "param.h"
#include "qp_attr.h"
#include "transport_fixture.h"

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

// XRC as ib_core's table has it: the masks of pyverbs' XRCResources and
// ibv_xsrq_pingpong (both take the target to RTS, the seed's kernel-owned
// target stops at RTR), and what each half must not be given.
TEST_CASE("qp transitions: XRC initiator and target", "[qp][attr][xrc]") {
	u32 init = attr_state | attr_pkey_index | attr_port | attr_access_flags;
	u32 ini_rtr = attr_state | attr_av | attr_path_mtu | attr_dest_qpn | attr_rq_psn;
	u32 tgt_rtr = ini_rtr | attr_max_dest_rd_atomic | attr_min_rnr_timer;
	u32 ini_rts = attr_state | attr_timeout | attr_retry_cnt | attr_rnr_retry | attr_sq_psn | attr_max_qp_rd_atomic;
	u32 tgt_rts = attr_state | attr_timeout | attr_sq_psn;
	for (u32 t : {u32(qpt_xrc_ini), u32(qpt_xrc_tgt)}) {
		CAPTURE(t);
		CHECK(qp_transition_ok(qps_reset, qps_init, t, init));
		CHECK_FALSE(qp_transition_ok(qps_reset, qps_init, t, init & ~attr_access_flags));
		CHECK_FALSE(qp_transition_ok(qps_reset, qps_init, t, init | attr_qkey));
	}
	CHECK(qp_transition_ok(qps_init, qps_rtr, qpt_xrc_ini, ini_rtr));
	CHECK_FALSE(qp_transition_ok(qps_init, qps_rtr, qpt_xrc_ini, tgt_rtr));
	CHECK(qp_transition_ok(qps_init, qps_rtr, qpt_xrc_tgt, tgt_rtr));
	CHECK_FALSE(qp_transition_ok(qps_init, qps_rtr, qpt_xrc_tgt, tgt_rtr & ~attr_max_dest_rd_atomic));
	CHECK_FALSE(qp_transition_ok(qps_init, qps_rtr, qpt_xrc_tgt, ini_rtr));
	CHECK(qp_transition_ok(qps_rtr, qps_rts, qpt_xrc_ini, ini_rts));
	CHECK_FALSE(qp_transition_ok(qps_rtr, qps_rts, qpt_xrc_ini, tgt_rts));
	CHECK(qp_transition_ok(qps_rtr, qps_rts, qpt_xrc_tgt, tgt_rts));
	CHECK(qp_transition_ok(qps_rtr, qps_rts, qpt_xrc_tgt, tgt_rts | attr_min_rnr_timer));
	CHECK_FALSE(qp_transition_ok(qps_rtr, qps_rts, qpt_xrc_tgt, ini_rts));
	CHECK_FALSE(qp_transition_ok(qps_rtr, qps_rts, qpt_xrc_ini, ini_rts | attr_min_rnr_timer));
	CHECK(qp_transition_ok(qps_sqd, qps_sqd, qpt_xrc_tgt, attr_state | attr_max_dest_rd_atomic));
	CHECK_FALSE(qp_transition_ok(qps_sqd, qps_sqd, qpt_xrc_tgt, attr_state | attr_retry_cnt));
	CHECK(qp_transition_ok(qps_sqd, qps_sqd, qpt_xrc_ini, attr_state | attr_retry_cnt));
	CHECK_FALSE(qp_transition_ok(qps_sqd, qps_sqd, qpt_xrc_ini, attr_state | attr_max_dest_rd_atomic));
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
	CHECK_FALSE(qp_transition_ok(qps_reset, qps_init, qpt_smi, attr_state | attr_pkey_index | attr_qkey));
	CHECK_FALSE(qp_transition_ok(qps_reset, qps_init, 11, attr_state | attr_pkey_index | attr_port | attr_access_flags));
	CHECK_FALSE(qp_transition_ok(qps_reset, 7, qpt_rc, attr_state));
	CHECK_FALSE(qp_transition_ok(9, qps_reset, qpt_rc, attr_state));
}

// check_modify_locked's range table (qp_attr.cpp): each numeric attribute
// one past its range is refused with EINVAL and leaves the QP as it was;
// the edge of the range is taken. (A path MTU of 6 or more was accepted:
// the clamp to the port's MTU ran first and made it valid.)
TEST_CASE("qp modify: each numeric attribute is checked against its range", "[qp][attr]") {
	tfx::Fixture f(7);
	tfx::Node &a = f.node(0), &b = f.node(1);
	tfx::Qp &q = f.qp(a, qpt_rc), &peer = f.qp(b, qpt_rc);
	auto modify = [&](const sroce_core_qp_attr &at, u32 mask) {
		int rc = 1;
		f.sim().call([&](sroce_env_batch *bt) { rc = sroce_core_qp_modify(q.qp, &at, int(mask), bt); });
		return rc;
	};
	auto state = [&] {
		sroce_core_qp_attr at{};
		sroce_core_qp_query(q.qp, &at);
		return at.qp_state;
	};
	using Bad = void (*)(sroce_core_qp_attr &);

	sroce_core_qp_attr init{};
	init.qp_state = qps_init;
	init.port_num = 1;
	u32 init_mask = attr_state | attr_pkey_index | attr_port | attr_access_flags;
	for (Bad bad : {Bad([](sroce_core_qp_attr &at) { at.port_num = 0; }),
			Bad([](sroce_core_qp_attr &at) { at.port_num = 2; }),
			Bad([](sroce_core_qp_attr &at) { at.pkey_index = param::max_pkeys; })}) {
		sroce_core_qp_attr at = init;
		bad(at);
		CHECK(modify(at, init_mask) == -EINVAL);
	}
	CHECK(state() == qps_reset);
	REQUIRE(modify(init, init_mask) == 0);

	auto rtr = [&] {
		sroce_core_qp_attr at{};
		at.qp_state = qps_rtr;
		at.path_mtu = mtu_4096;
		at.dest_qp_num = peer.qpn;
		at.max_dest_rd_atomic = param::max_qp_rd_atom;
		at.min_rnr_timer = 31;
		sim::Path p = f.sim().path(a.id, b.id);
		at.path = p.path; // taken by the core, or put on a refusal
		at.path_info = p.info;
		return at;
	};
	u32 rtr_mask = attr_state | attr_av | attr_path_mtu | attr_dest_qpn | attr_rq_psn | attr_max_dest_rd_atomic |
		       attr_min_rnr_timer;
	for (Bad bad : {Bad([](sroce_core_qp_attr &at) { at.path_mtu = mtu_256 - 1; }),
			Bad([](sroce_core_qp_attr &at) { at.path_mtu = mtu_4096 + 1; }),
			Bad([](sroce_core_qp_attr &at) { at.dest_qp_num = qpn_mask + 1; }),
			Bad([](sroce_core_qp_attr &at) { at.max_dest_rd_atomic = param::max_qp_rd_atom + 1; }),
			Bad([](sroce_core_qp_attr &at) { at.min_rnr_timer = 32; })}) {
		sroce_core_qp_attr at = rtr();
		bad(at);
		CHECK(modify(at, rtr_mask) == -EINVAL);
	}
	CHECK(state() == qps_init);
	REQUIRE(modify(rtr(), rtr_mask) == 0);

	sroce_core_qp_attr rts{};
	rts.qp_state = qps_rts;
	rts.timeout = 31;
	rts.retry_cnt = 7;
	rts.rnr_retry = 7;
	rts.max_rd_atomic = param::max_qp_rd_atom;
	u32 rts_mask = attr_state | attr_sq_psn | attr_timeout | attr_retry_cnt | attr_rnr_retry | attr_max_qp_rd_atomic;
	for (Bad bad : {Bad([](sroce_core_qp_attr &at) { at.timeout = 32; }),
			Bad([](sroce_core_qp_attr &at) { at.retry_cnt = 8; }),
			Bad([](sroce_core_qp_attr &at) { at.rnr_retry = 8; }),
			Bad([](sroce_core_qp_attr &at) { at.max_rd_atomic = param::max_qp_rd_atom + 1; })}) {
		sroce_core_qp_attr at = rts;
		bad(at);
		CHECK(modify(at, rts_mask) == -EINVAL);
	}
	CHECK(state() == qps_rtr);
	REQUIRE(modify(rts, rts_mask) == 0);
	CHECK(state() == qps_rts);
}

// Which attributes each QP state transition requires and allows, per QP
// type (IBTA 11.2.4.2, and what ib_modify_qp_is_ok accepts), as data.
#include "qp_attr.h"

namespace sroce {

namespace {
using namespace ib;

enum TypeIndex { t_ud, t_uc, t_rc, t_gsi, t_count };

int type_index(u32 type) {
	switch (type) {
	case qpt_ud: return t_ud;
	case qpt_uc: return t_uc;
	case qpt_rc: return t_rc;
	case qpt_gsi: return t_gsi;
	default: return -1;
	}
}

struct Rule {
	bool valid;
	u32 req[t_count];
	u32 opt[t_count];
};

constexpr u32 ud_opt_rts = attr_cur_state | attr_qkey;
constexpr u32 uc_opt_rts = attr_cur_state | attr_alt_path | attr_access_flags | attr_path_mig_state;
constexpr u32 rc_opt_rts = uc_opt_rts | attr_min_rnr_timer;

// rules[cur][next]
constexpr Rule make_rules(u32 cur, u32 next) {
	Rule r{};
	if (next == qps_reset || next == qps_err) {
		r.valid = true;
		return r;
	}
	switch (cur) {
	case qps_reset:
		if (next == qps_init) {
			r.valid = true;
			r.req[t_ud] = attr_pkey_index | attr_port | attr_qkey;
			r.req[t_uc] = r.req[t_rc] = attr_pkey_index | attr_port | attr_access_flags;
			r.req[t_gsi] = attr_pkey_index | attr_qkey;
		}
		break;
	case qps_init:
		if (next == qps_init) {
			r.valid = true;
			r.opt[t_ud] = attr_pkey_index | attr_port | attr_qkey;
			r.opt[t_uc] = r.opt[t_rc] = attr_pkey_index | attr_port | attr_access_flags;
			r.opt[t_gsi] = attr_pkey_index | attr_qkey;
		} else if (next == qps_rtr) {
			r.valid = true;
			r.req[t_uc] = attr_av | attr_path_mtu | attr_dest_qpn | attr_rq_psn;
			r.req[t_rc] = r.req[t_uc] | attr_max_dest_rd_atomic | attr_min_rnr_timer;
			r.opt[t_ud] = r.opt[t_gsi] = attr_pkey_index | attr_qkey;
			r.opt[t_uc] = r.opt[t_rc] = attr_alt_path | attr_access_flags | attr_pkey_index;
		}
		break;
	case qps_rtr:
		if (next == qps_rts) {
			r.valid = true;
			r.req[t_ud] = r.req[t_gsi] = r.req[t_uc] = attr_sq_psn;
			r.req[t_rc] = attr_timeout | attr_retry_cnt | attr_rnr_retry | attr_sq_psn | attr_max_qp_rd_atomic;
			r.opt[t_ud] = r.opt[t_gsi] = ud_opt_rts;
			r.opt[t_uc] = uc_opt_rts;
			r.opt[t_rc] = rc_opt_rts;
		}
		break;
	case qps_rts:
		if (next == qps_rts) {
			r.valid = true;
			r.opt[t_ud] = r.opt[t_gsi] = ud_opt_rts;
			r.opt[t_uc] = uc_opt_rts;
			r.opt[t_rc] = rc_opt_rts;
		} else if (next == qps_sqd) {
			r.valid = true;
			for (u32 &o : r.opt)
				o = attr_en_sqd_async_notify;
		}
		break;
	case qps_sqd:
		if (next == qps_rts) {
			r.valid = true;
			r.opt[t_ud] = r.opt[t_gsi] = ud_opt_rts;
			r.opt[t_uc] = uc_opt_rts;
			r.opt[t_rc] = rc_opt_rts;
		} else if (next == qps_sqd) {
			r.valid = true;
			r.opt[t_ud] = r.opt[t_gsi] = attr_pkey_index | attr_qkey;
			r.opt[t_uc] = attr_av | attr_alt_path | attr_access_flags | attr_pkey_index | attr_path_mig_state;
			r.opt[t_rc] = attr_port | attr_av | attr_timeout | attr_retry_cnt | attr_rnr_retry |
				      attr_max_qp_rd_atomic | attr_max_dest_rd_atomic | attr_alt_path |
				      attr_access_flags | attr_pkey_index | attr_min_rnr_timer | attr_path_mig_state;
		}
		break;
	case qps_sqe:
		if (next == qps_rts) {
			r.valid = true;
			r.opt[t_ud] = r.opt[t_gsi] = attr_cur_state | attr_qkey;
			r.opt[t_uc] = attr_cur_state | attr_access_flags;
		}
		break;
	default:
		break;
	}
	return r;
}

struct Table {
	Rule r[qps_count][qps_count];
	constexpr Table() : r{} {
		for (u32 c = 0; c < qps_count; c++)
			for (u32 n = 0; n < qps_count; n++)
				r[c][n] = make_rules(c, n);
	}
};

// Built at compile time: no global constructor.
constexpr Table rules;
} // namespace

bool qp_transition_ok(u32 cur, u32 next, u32 type, u32 mask) {
	int t = type_index(type);
	if (t < 0 || cur >= qps_count || next >= qps_count)
		return false;
	// IB_QP_CUR_STATE may only name a state the QP can be "in" for it.
	if ((mask & attr_cur_state) && cur != qps_rtr && cur != qps_rts && cur != qps_sqd && cur != qps_sqe)
		return false;
	const Rule &r = rules.r[cur][next];
	if (!r.valid)
		return false;
	u32 req = r.req[t], opt = r.opt[t];
	if ((mask & req) != req)
		return false;
	return (mask & ~(req | opt | attr_state)) == 0;
}

} // namespace sroce

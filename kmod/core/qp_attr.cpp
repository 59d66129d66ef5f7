// QP attributes: which attributes each state transition requires and
// allows, per QP type (IBTA 11.2.4.2, and what ib_modify_qp_is_ok accepts),
// as data; and Qp::modify/query, which check and apply them.
#include "qp_attr.h"
#include "param.h"
#include "qp.h"

namespace sroce {

namespace {
using namespace ib;

// XRC: the initiator (INI) is RC's send half, the target (TGT) RC's
// receive half; ib_core's table gives each its own column (IBTA annex A14).
enum TypeIndex { t_ud, t_uc, t_rc, t_gsi, t_xrc_ini, t_xrc_tgt, t_count };

int type_index(u32 type) {
	switch (type) {
	case qpt_ud: return t_ud;
	case qpt_uc: return t_uc;
	case qpt_rc: return t_rc;
	case qpt_gsi: return t_gsi;
	case qpt_xrc_ini: return t_xrc_ini;
	case qpt_xrc_tgt: return t_xrc_tgt;
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
constexpr u32 conn_init = attr_pkey_index | attr_port | attr_access_flags;

// The optional attributes of RTS -> RTS and SQD -> RTS (IBTA table 91).
constexpr void rts_to_rts(Rule &r) {
	r.valid = true;
	r.opt[t_ud] = r.opt[t_gsi] = ud_opt_rts;
	r.opt[t_uc] = uc_opt_rts;
	r.opt[t_rc] = r.opt[t_xrc_tgt] = rc_opt_rts;
	r.opt[t_xrc_ini] = uc_opt_rts;
}

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
			r.req[t_uc] = r.req[t_rc] = r.req[t_xrc_ini] = r.req[t_xrc_tgt] = conn_init;
			r.req[t_gsi] = attr_pkey_index | attr_qkey;
		}
		break;
	case qps_init:
		if (next == qps_init) {
			r.valid = true;
			r.opt[t_ud] = attr_pkey_index | attr_port | attr_qkey;
			r.opt[t_uc] = r.opt[t_rc] = r.opt[t_xrc_ini] = r.opt[t_xrc_tgt] = conn_init;
			r.opt[t_gsi] = attr_pkey_index | attr_qkey;
		} else if (next == qps_rtr) {
			r.valid = true;
			r.req[t_uc] = r.req[t_xrc_ini] = attr_av | attr_path_mtu | attr_dest_qpn | attr_rq_psn;
			r.req[t_rc] = r.req[t_xrc_tgt] = r.req[t_uc] | attr_max_dest_rd_atomic | attr_min_rnr_timer;
			r.opt[t_ud] = r.opt[t_gsi] = attr_pkey_index | attr_qkey;
			r.opt[t_uc] = r.opt[t_rc] = r.opt[t_xrc_ini] = r.opt[t_xrc_tgt] =
				attr_alt_path | attr_access_flags | attr_pkey_index;
		}
		break;
	case qps_rtr:
		if (next == qps_rts) {
			r.valid = true;
			r.req[t_ud] = r.req[t_gsi] = r.req[t_uc] = attr_sq_psn;
			r.req[t_rc] = r.req[t_xrc_ini] =
				attr_timeout | attr_retry_cnt | attr_rnr_retry | attr_sq_psn | attr_max_qp_rd_atomic;
			// The target sends no requests: no retry counts, no rd_atomic.
			r.req[t_xrc_tgt] = attr_timeout | attr_sq_psn;
			r.opt[t_ud] = r.opt[t_gsi] = ud_opt_rts;
			r.opt[t_uc] = r.opt[t_xrc_ini] = uc_opt_rts;
			r.opt[t_rc] = r.opt[t_xrc_tgt] = rc_opt_rts;
		}
		break;
	case qps_rts:
		if (next == qps_rts) {
			rts_to_rts(r);
		} else if (next == qps_sqd) {
			r.valid = true;
			for (u32 &o : r.opt)
				o = attr_en_sqd_async_notify;
		}
		break;
	case qps_sqd:
		if (next == qps_rts) {
			rts_to_rts(r);
		} else if (next == qps_sqd) {
			r.valid = true;
			r.opt[t_ud] = r.opt[t_gsi] = attr_pkey_index | attr_qkey;
			r.opt[t_uc] = attr_av | attr_alt_path | attr_access_flags | attr_pkey_index | attr_path_mig_state;
			r.opt[t_rc] = attr_port | attr_av | attr_timeout | attr_retry_cnt | attr_rnr_retry |
				      attr_max_qp_rd_atomic | attr_max_dest_rd_atomic | attr_alt_path |
				      attr_access_flags | attr_pkey_index | attr_min_rnr_timer | attr_path_mig_state;
			r.opt[t_xrc_ini] = r.opt[t_rc] & ~(attr_max_dest_rd_atomic | attr_min_rnr_timer);
			r.opt[t_xrc_tgt] = r.opt[t_rc] & ~(attr_retry_cnt | attr_rnr_retry | attr_max_qp_rd_atomic);
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

// XRC splits RC in two: the initiator takes RC's send-side attributes,
// the target RC's receive-side ones.
constexpr u32 rd_send_side = attr_retry_cnt | attr_rnr_retry | attr_max_qp_rd_atomic;
constexpr u32 rd_recv_side = attr_max_dest_rd_atomic | attr_min_rnr_timer;
static_assert(rules.r[qps_init][qps_rtr].req[t_xrc_tgt] == rules.r[qps_init][qps_rtr].req[t_rc] &&
		      rules.r[qps_init][qps_rtr].req[t_xrc_ini] == (rules.r[qps_init][qps_rtr].req[t_rc] & ~rd_recv_side),
	      "INIT -> RTR: the target needs RC's responder attributes, the initiator none of them");
static_assert(rules.r[qps_rtr][qps_rts].req[t_xrc_ini] == rules.r[qps_rtr][qps_rts].req[t_rc] &&
		      rules.r[qps_rtr][qps_rts].req[t_xrc_tgt] == (rules.r[qps_rtr][qps_rts].req[t_rc] & ~rd_send_side),
	      "RTR -> RTS: the initiator needs RC's requester attributes, the target none of them");
static_assert(!(rules.r[qps_sqd][qps_sqd].opt[t_xrc_tgt] & rd_send_side) &&
		      !(rules.r[qps_sqd][qps_sqd].opt[t_xrc_ini] & rd_recv_side),
	      "SQD -> SQD: neither half takes the other's attributes");
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

using ktl::Error;
namespace err = ktl::err;

// ---- attributes ------------------------------------------------------------

namespace {
// The numeric attributes a modify may set, with their ranges (IBTA 11.2.5
// and the device's limits).
struct AttrRange {
	u32 mask;
	unsigned int sroce_core_qp_attr::*field;
	u32 min, max;
};
constexpr AttrRange attr_ranges[] = {
	{ib::attr_port, &sroce_core_qp_attr::port_num, 1, 1},
	{ib::attr_pkey_index, &sroce_core_qp_attr::pkey_index, 0, param::max_pkeys - 1},
	{ib::attr_path_mtu, &sroce_core_qp_attr::path_mtu, ib::mtu_256, ib::mtu_4096},
	{ib::attr_max_qp_rd_atomic, &sroce_core_qp_attr::max_rd_atomic, 0, param::max_qp_rd_atom},
	{ib::attr_max_dest_rd_atomic, &sroce_core_qp_attr::max_dest_rd_atomic, 0, param::max_qp_rd_atom},
	{ib::attr_timeout, &sroce_core_qp_attr::timeout, 0, 31},
	{ib::attr_retry_cnt, &sroce_core_qp_attr::retry_cnt, 0, 7},
	{ib::attr_rnr_retry, &sroce_core_qp_attr::rnr_retry, 0, 7},
	{ib::attr_min_rnr_timer, &sroce_core_qp_attr::min_rnr_timer, 0, 31},
	{ib::attr_dest_qpn, &sroce_core_qp_attr::dest_qp_num, 0, ib::qpn_mask},
};
constexpr bool ranges_ok() {
	u32 seen = 0;
	for (const AttrRange &r : attr_ranges) {
		if (!r.mask || (r.mask & (r.mask - 1)) || (seen & r.mask) || r.min > r.max)
			return false;
		seen |= r.mask;
	}
	return true;
}
static_assert(ranges_ok(), "one row per attribute bit, each a non-empty range");
} // namespace

ktl::Result<void> Qp::check_modify_locked(const sroce_core_qp_attr &a, u32 mask) const {
	u32 next = (mask & ib::attr_state) ? a.qp_state : state_;
	if ((mask & ib::attr_cur_state) && a.cur_qp_state != state_ &&
	    !(state_ == ib::qps_sqe && a.cur_qp_state == ib::qps_rts))
		return Error::from_errno(err::inval);
	if (!qp_transition_ok(state_, next, type_, mask))
		return Error::from_errno(err::inval);
	for (const AttrRange &r : attr_ranges)
		if ((mask & r.mask) && (a.*r.field < r.min || a.*r.field > r.max))
			return Error::from_errno(err::inval);
	if ((mask & ib::attr_access_flags) &&
	    (a.qp_access_flags & ~u32(ib::access::local_write | ib::access::remote_write | ib::access::remote_read |
				       ib::access::remote_atomic | ib::access::mw_bind | ib::access::flush)))
		return Error::from_errno(err::inval);
	if ((mask & ib::attr_av) && !a.path)
		return Error::from_errno(err::inval);
	return {};
}

void Qp::apply_modify_locked(const sroce_core_qp_attr &a, u32 mask, sroce_env_batch *b) {
	if (mask & ib::attr_access_flags)
		access_ = a.qp_access_flags;
	if (mask & ib::attr_pkey_index)
		pkey_index_ = a.pkey_index;
	if (mask & ib::attr_port)
		port_ = a.port_num;
	if (mask & ib::attr_qkey)
		qkey_ = a.qkey;
	if (mask & ib::attr_av) {
		if (path_)
			sroce_env_path_put(path_);
		path_ = a.path;
		path_info_ = a.path_info;
		sgid_index_ = a.sgid_index;
	}
	if (mask & ib::attr_path_mtu)
		path_mtu_ = ktl::min(a.path_mtu, ib::mtu_4096 + 0u);
	if (mask & ib::attr_timeout)
		timeout_ = a.timeout;
	if (mask & ib::attr_retry_cnt)
		retry_cnt_ = a.retry_cnt;
	if (mask & ib::attr_rnr_retry)
		rnr_retry_ = a.rnr_retry;
	if (mask & ib::attr_rq_psn) {
		resp_.epsn = a.rq_psn & ib::psn_mask;
	}
	if (mask & ib::attr_max_qp_rd_atomic)
		max_rd_atomic_ = a.max_rd_atomic;
	if (mask & ib::attr_min_rnr_timer)
		min_rnr_timer_ = a.min_rnr_timer;
	if (mask & ib::attr_sq_psn) {
		req_.psn = comp_.unacked_psn = req_.psn_high = a.sq_psn & ib::psn_mask;
	}
	if (mask & ib::attr_max_dest_rd_atomic)
		max_dest_rd_atomic_ = a.max_dest_rd_atomic;
	if (mask & ib::attr_dest_qpn)
		dest_qpn_ = a.dest_qp_num;
	if (mask & ib::attr_en_sqd_async_notify)
		sqd_notify_ = a.en_sqd_async_notify != 0;
	if (!(mask & ib::attr_state))
		return;
	u32 next = a.qp_state;
	u32 prev = state_;
	state_ = next;
	// RTS->SQD starts a drain (complete_done_locked ends it); SQD->SQD
	// keeps the one under way.
	comp_.sq_draining = next == ib::qps_sqd && (prev == ib::qps_rts || comp_.sq_draining);
	if (comp_.sq_draining)
		complete_done_locked(b); // nothing outstanding: drained at once
	if (next == ib::qps_reset) {
		// Everything the QP had is forgotten. IBTA 10.3.1: RESET empties
		// both queues with no completions (mlx5's indices restart), so
		// what was posted is discarded, sent or not: fetching a sent WQE
		// again at the next RTS would repeat it on the wire. The poster
		// finds every slot free. A corrupt producer stays for the next
		// fetch to find (the QP then goes to ERR).
		if (sq_.valid()) {
			auto p = sq_.producer(comp_.sq_done, req_.sq_fetched);
			comp_.sq_done = p.is_error() ? req_.sq_fetched : p.value();
			if (user_)
				sq_.publish_consumer(comp_.sq_done);
			else
				sq_.set_consumer(comp_.sq_done);
		}
		if (recvq_.rq.valid()) {
			recvq_.mp.drop(); // the buffer in use too
			recvq_.rq.flush([](u64) { return true; });
		}
		// The requester and completer start afresh but for the PSNs
		// (RTS sets them again): READ responses seen beyond a gap
		// (ooo_mask) would otherwise let a later READ count PSNs whose
		// data never came, and complete with holes.
		RequesterState r;
		r.psn = req_.psn;
		r.psn_high = req_.psn_high;
		r.sq_fetched = r.sq_next = comp_.sq_done;
		req_ = r;
		CompleterState c;
		c.sq_done = comp_.sq_done;
		c.unacked_psn = comp_.unacked_psn;
		comp_ = c;
		recvq_.xrc_srq = nullptr;
		resp_.in_message = recvq_.valid = resp_.nak_sent = resp_.drop_message = false;
		for (u32 i = 0; i < param::max_qp_rd_atom; i++)
			resp_.res[i] = ReadAtomicRes{};
		resp_.res_next = resp_.res_send = 0;
		resp_.answer_waits = false;
		keys_.drop_all();
		resp_.msn = 0;
	} else if (next == ib::qps_err && prev != ib::qps_err) {
		flush_locked(b);
	} else if (next == ib::qps_rts) {
		comp_.retries_left = retry_cnt_;
		comp_.rnr_left = rnr_retry_;
		kick_locked(); // WQEs posted before RTS wait for it
	}
	update_ack_due_locked(); // posts ring again outside RTS and SQD
}

ktl::Result<void> Qp::modify(const sroce_core_qp_attr &attr, u32 mask, sroce_env_batch *b) {
	// A path MTU above the port's active MTU would send packets the link
	// drops, and the QP would stall in retries: clamp it, as the port is
	// now (read before the QP lock: the port lock is not nested in it).
	// A value that is no MTU at all is refused below, not clamped.
	sroce_core_qp_attr a = attr;
	if ((mask & ib::attr_path_mtu) && a.path_mtu <= ib::mtu_4096)
		a.path_mtu = ktl::min(a.path_mtu, dev_->active_mtu());
	ktl::Guard g(lock_);
	auto r = check_modify_locked(a, mask);
	if (r.is_error()) {
		if ((mask & ib::attr_av) && a.path)
			sroce_env_path_put(a.path);
		return r;
	}
	apply_modify_locked(a, mask, b);
	return {};
}

void Qp::query(sroce_core_qp_attr *a) {
	ktl::Guard g(lock_);
	*a = sroce_core_qp_attr{};
	a->qp_state = a->cur_qp_state = state_;
	a->path_mtu = path_mtu_;
	a->qkey = qkey_;
	a->rq_psn = resp_.epsn;
	a->sq_psn = req_.psn;
	a->dest_qp_num = dest_qpn_;
	a->qp_access_flags = access_;
	a->pkey_index = pkey_index_;
	a->en_sqd_async_notify = sqd_notify_;
	a->sq_draining = state_ == ib::qps_sqd && comp_.sq_draining;
	a->max_rd_atomic = max_rd_atomic_;
	a->max_dest_rd_atomic = max_dest_rd_atomic_;
	a->min_rnr_timer = min_rnr_timer_;
	a->timeout = timeout_;
	a->retry_cnt = retry_cnt_;
	a->rnr_retry = rnr_retry_;
	a->port_num = port_;
	a->max_send_wr = sq_.valid() ? sq_.size() : 0;       // none: an XRC target
	a->max_recv_wr = recvq_.rq.valid() ? recvq_.rq.size() : 0; // none: an SRQ, or XRC
	a->max_send_sge = max_send_sge_;
	a->max_recv_sge = recvq_.max_sge;
	a->max_inline_data = max_inline_;
	a->path_info = path_info_;
	a->sgid_index = sgid_index_;
}

} // namespace sroce

// Requester: copies send WQEs out of the SQ, validates them once, and turns
// them into request packets (IBTA 9.4), within the PSN window, the
// max_rd_atomic limit and a per-run budget; the rest continues from work or
// when ACKs open the window.
#include "key_table.h"
#include "ktl/byteorder.h"
#include "param.h"
#include "qp.h"
#include "sge.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

static_assert(ib::wr_atomic_write == SROCE_WQE_ATOMIC_WRITE); // posted by user space with this value
static_assert(ib::wr_flush == SROCE_WQE_FLUSH);
static_assert(ib::flush::global == SROCE_FLUSH_GLOBAL && ib::flush::persistent == SROCE_FLUSH_PERSISTENT);
static_assert(ib::flush::level_range == SROCE_FLUSH_RANGE && ib::flush::level_region == SROCE_FLUSH_MR);


ktl::Result<void> Qp::validate_wqe(const sroce_wqe &w) const {
	// Only the bits posters may set (abi.md): one this kernel does not
	// know would be ignored, not honoured.
	if (w.flags & ~u32(SROCE_WQE_FLAGS_MASK | SROCE_WQE_BIND_TYPE1))
		return Error::from_errno(err::inval);
	switch (w.opcode) {
	case ib::wr_send:
	case ib::wr_send_imm:
		break;
	case ib::wr_send_inv: // IETH: RC and XRC only (IBTA 9.2, table 35)
		if (!reliable() || !connected())
			return Error::from_errno(err::inval);
		break;
	case ib::wr_local_inv:
		if (w.num_sge || (w.flags & SROCE_WQE_INLINE))
			return Error::from_errno(err::inval);
		return {};
	case ib::wr_bind_mw: // windows are bound to connected QPs (mw.h)
		if (!connected() || w.num_sge || (w.flags & SROCE_WQE_INLINE))
			return Error::from_errno(err::inval);
		return {};
	case ib::wr_reg_mr:
		// ib_core's kernel users only: a user's ring may hold anything.
		if (user_ || w.num_sge || (w.flags & SROCE_WQE_INLINE))
			return Error::from_errno(err::inval);
		return {};
	case ib::wr_rdma_write:
	case ib::wr_rdma_write_imm:
		if (!connected())
			return Error::from_errno(err::inval);
		break;
	case ib::wr_rdma_read:
	case ib::wr_atomic_cmp_swp:
	case ib::wr_atomic_fetch_add:
		if (!reliable() || (w.flags & SROCE_WQE_INLINE))
			return Error::from_errno(err::inval);
		break;
	case ib::wr_atomic_write:
		// Its 8 bytes travel in the WQE (rdma.compare_add), no SGEs.
		if (!reliable() || (w.flags & SROCE_WQE_INLINE) || w.num_sge)
			return Error::from_errno(err::inval);
		break;
	case ib::wr_flush: {
		// No payload; the FETH carries one or both placement types and a level.
		constexpr u8 types = ib::flush::global | ib::flush::persistent;
		if (!reliable() || (w.flags & SROCE_WQE_INLINE) || w.num_sge || !w.flush.type ||
		    (w.flush.type & ~types) || w.flush.level > ib::flush::level_region)
			return Error::from_errno(err::inval);
		break;
	}
	default:
		return Error::from_errno(err::inval);
	}
	if (w.flags & SROCE_WQE_INLINE) {
		if (w.inline_len > max_inline_)
			return Error::from_errno(err::inval);
	} else if (w.num_sge > max_send_sge_) {
		return Error::from_errno(err::inval);
	}
	return {};
}

// Copies the next WQE out of the ring into kernel memory. false when none.
bool Qp::fetch_wqe_locked(sroce_env_batch *b) {
	auto p = sq_.producer(comp_.sq_done, req_.sq_fetched);
	if (p.is_error()) { // a corrupted or rewound producer index: the QP is in error
		to_error_locked(b);
		return false;
	}
	if (p.value() == req_.sq_fetched)
		return false;
	SendWqe &w = swqe(req_.sq_fetched);
	const u8 *slot = sq_.entry(req_.sq_fetched);
	__builtin_memcpy(&w.wqe, slot, sizeof(w.wqe)); // one read of user memory
	steer_.saw_owner_on(sq_.poster_cpu()); // where the owner posted it (rx_steer.h)
	w.status = ib::wc_success;
	w.done = w.started = false;
	w.first_psn = w.last_psn = w.npkts = 0;
	w.length = 0;
	req_.sq_fetched++;
	if (validate_wqe(w.wqe).is_error()) {
		w.status = ib::wc_loc_qp_op_err;
		return true;
	}
	u32 tail = sq_.stride() - u32(sizeof(sroce_wqe));
	if (w.wqe.flags & SROCE_WQE_INLINE) {
		__builtin_memcpy(w.inline_data(), slot + sizeof(sroce_wqe), ktl::min(w.wqe.inline_len, tail));
		w.length = w.wqe.inline_len;
	} else {
		__builtin_memcpy(w.sges(), slot + sizeof(sroce_wqe), usize(w.wqe.num_sge) * sizeof(sroce_sge));
		auto t = sge_total(SgeList{w.sges(), w.wqe.num_sge, pd_->pdn()});
		if (t.is_error())
			w.status = ib::wc_loc_len_err;
		else
			w.length = t.value();
	}
	if (is_atomic_write(w.wqe.opcode))
		w.length = sizeof(w.wqe.rdma.compare_add);
	u32 mtu_b = mtu();
	if (w.status == ib::wc_success) {
		if (!connected() && w.length > mtu_b)
			w.status = ib::wc_loc_len_err;
		else if (is_atomic(w.wqe.opcode) && w.length < 8)
			w.status = ib::wc_loc_len_err;
	}
	if (is_single_request(w.wqe.opcode))
		w.npkts = 1;
	else
		w.npkts = w.length ? u32((w.length + mtu_b - 1) / mtu_b) : 1;
	return true;
}

u8 Qp::wire_opcode(const SendWqe &w, bool first, bool last) const {
	u8 base = transport_base();
	u8 op = w.wqe.opcode;
	using namespace ib::op;
	if (!connected())
		return u8(base | (has_imm(op) ? send_only_imm : send_only));
	switch (op) {
	case ib::wr_rdma_read: return u8(base | read_request);
	case ib::wr_atomic_cmp_swp: return u8(base | compare_swap);
	case ib::wr_atomic_fetch_add: return u8(base | fetch_add);
	case ib::wr_atomic_write: return u8(base | atomic_write);
	case ib::wr_flush: return u8(base | ib::op::flush);
	default: break;
	}
	bool write = is_write(op), imm = has_imm(op);
	if (op == ib::wr_send_inv && last)
		return u8(base | (first ? send_only_inv : send_last_inv));
	if (first && last)
		return u8(base | (write ? (imm ? write_only_imm : write_only) : (imm ? send_only_imm : send_only)));
	if (first)
		return u8(base | (write ? write_first : send_first));
	if (last)
		return u8(base | (write ? (imm ? write_last_imm : write_last) : (imm ? send_last_imm : send_last)));
	return u8(base | (write ? write_middle : send_middle));
}

// Where the next packet of a WQE goes: the QP's path, or for UD the WQE's
// AH (kept referenced in p until the packet is out). Fails the WQE when
// there is none.
bool Qp::route_packet_locked(SendWqe &w, RequestPacket &p, sroce_env_batch *b) {
	p.path = path_;
	p.pinfo = &path_info_;
	p.h.bth.dest_qpn = dest_qpn_;
	if (!connected()) {
		p.ah = dev_->ahs().lookup(w.wqe.ud.ah_handle);
		if (!p.ah || p.ah->pdn() != pd_->pdn()) {
			fail_send_locked(w, ib::wc_loc_qp_op_err, b);
			return false;
		}
		p.path = p.ah->path();
		p.pinfo = &p.ah->info();
		p.h.bth.dest_qpn = w.wqe.ud.remote_qpn & ib::qpn_mask;
		// A Q_Key with the high bit set means "use the QP's" (IBTA 10.2.5).
		p.h.deth.qkey = (w.wqe.ud.remote_qkey & 0x80000000u) ? qkey_ : w.wqe.ud.remote_qkey;
		p.h.deth.src_qp = qpn_;
	}
	if (!p.path) {
		fail_send_locked(w, ib::wc_loc_qp_op_err, b);
		return false;
	}
	return true;
}

// The packet at req_.cur_offset of w: its extended headers (FETH, RETH, AtomicETH,
// ImmDt), how much payload it carries, its opcode, PSN and SE bit.
void Qp::request_headers(const SendWqe &w, RequestPacket &p) const {
	u8 op = w.wqe.opcode;
	u32 mtu_b = mtu();
	ib::Headers &h = p.h;
	p.off = req_.cur_offset;
	p.first = p.off == 0;
	if (op == ib::wr_rdma_read) {
		u64 part = u64(param::read_req_max_pkts) * mtu_b;
		p.read_end = ktl::min((p.off / part + 1) * part, w.length);
		h.reth.va = w.wqe.rdma.remote_addr + p.off;
		h.reth.rkey = w.wqe.rdma.rkey;
		h.reth.length = u32(p.read_end - p.off);
	} else if (is_atomic(op)) {
		h.atomic_eth.va = w.wqe.rdma.remote_addr;
		h.atomic_eth.rkey = w.wqe.rdma.rkey;
		h.atomic_eth.swap_add = op == ib::wr_atomic_cmp_swp ? w.wqe.rdma.swap : w.wqe.rdma.compare_add;
		h.atomic_eth.compare = w.wqe.rdma.compare_add;
	} else if (is_flush(op)) { // no payload: FETH and RETH only
		h.feth.placement = w.wqe.flush.type;
		h.feth.selectivity = w.wqe.flush.level;
		h.reth.va = w.wqe.flush.remote_addr;
		h.reth.rkey = w.wqe.flush.rkey;
		h.reth.length = w.wqe.flush.length;
	} else {
		p.payload = u32(ktl::min(w.length - p.off, u64(mtu_b)));
		p.last = p.off + p.payload == w.length;
		if (p.first && (is_write(op) || is_atomic_write(op))) {
			h.reth.va = w.wqe.rdma.remote_addr;
			h.reth.rkey = w.wqe.rdma.rkey;
			h.reth.length = u32(w.length);
		}
		if (p.last && has_imm(op))
			h.immdt.imm = ktl::be32_to_cpu(w.wqe.imm_or_inv);
		if (p.last && op == ib::wr_send_inv)
			h.ieth.rkey = w.wqe.imm_or_inv; // a key: host order in the WQE
	}
	h.bth.opcode = wire_opcode(w, p.first, p.last);
	// XRC: every request packet names the target SRQ (the codec writes the
	// XRCETH only for XRC opcodes).
	h.xrceth.srqn = w.wqe.xrc_remote_srqn & ib::qpn_mask;
	h.bth.psn = req_.psn;
	h.bth.se = p.last && (w.wqe.flags & SROCE_WQE_SOLICITED) && !is_read_or_atomic(op) &&
		   (op != ib::wr_rdma_write);
}

// RC's AckReq policy: every READ/ATOMIC, every ack_req_every packets, the
// last packet the window lets out (or sending would stop with nothing to
// answer it), the last packet of a WQE when the SQ pauses behind it or
// half the PSN window is out, and a tail-loss probe (retry.cpp).
bool Qp::ack_req_locked(const SendWqe &w, bool last) {
	req_.pkts_since_ack_req++;
	if (!reliable())
		return false;
	s32 out = psn_diff(req_.psn, comp_.unacked_psn) + 1; // with this packet
	bool pausing = req_.sq_next + 1 == req_.sq_fetched && last;
	bool half = out >= s32(param::max_unacked_pkts / 2);
	bool ack_req = is_read_or_atomic(w.wqe.opcode) || req_.pkts_since_ack_req >= param::ack_req_every ||
		       out >= s32(req_.window) || (last && (pausing || half)) || req_.probe;
	if (ack_req)
		req_.pkts_since_ack_req = 0;
	return ack_req;
}

// After a packet went out: retransmission accounting, the next PSN and
// offset, and the next WQE once this one is all sent.
void Qp::advance_locked(SendWqe &w, u32 idx, const RequestPacket &p, sroce_env_batch *b) {
	u8 op = w.wqe.opcode;
	u32 mtu_b = mtu();
	if (reliable()) {
		// A PSN sent before is a retransmission (what a capture of this
		// flow shows as a PSN going backwards).
		if (psn_diff(req_.psn, req_.psn_high) < 0)
			count(SROCE_CNT_RETRANS_PKTS);
	}
	// READ and ATOMIC requests are one packet that accounts for all their
	// response PSNs.
	if (op == ib::wr_rdma_read) {
		req_.rd_atomic_out++; // every (re)sent request waits for its response
		u32 n = p.read_end > p.off ? u32((p.read_end - p.off + mtu_b - 1) / mtu_b) : 1;
		req_.psn = psn_add(req_.psn, n);
		req_.cur_offset = p.read_end;
	} else if (is_single_request(op)) {
		req_.rd_atomic_out++;
		req_.psn = psn_add(w.last_psn, 1);
		req_.cur_offset = w.length;
	} else {
		req_.psn = psn_add(req_.psn, 1);
		req_.cur_offset = p.off + p.payload;
	}
	// Sent up to here. A READ request covers the PSNs of the responses it
	// asks for, not the whole WQE's: the next part's request is new, not a
	// retransmission.
	if (psn_diff(req_.psn, req_.psn_high) > 0)
		req_.psn_high = req_.psn;
	if (req_.cur_offset >= w.length) {
		req_.sq_next = idx + 1;
		req_.cur_offset = 0;
		if (!reliable()) {
			// Unreliable: done once sent.
			w.done = true;
			complete_done_locked(b);
		}
	}
}

// Sends the next packet of WQE w (index idx). false when it could not (no
// memory: retried later; or the WQE failed and the QP went to error).
bool Qp::send_packet_locked(SendWqe &w, u32 idx, sroce_env_batch *b) {
	RequestPacket p;
	if (!route_packet_locked(w, p, b))
		return false;
	if (!w.started) {
		w.started = true;
		w.first_psn = req_.psn;
		w.last_psn = psn_add(req_.psn, w.npkts - 1);
	}
	request_headers(w, p);
	p.h.bth.ack_req = ack_req_locked(w, p.last);
	if (reliable())
		rtt_sent_locked(req_.psn, p.h.bth.ack_req);
	bool resend = reliable() && psn_diff(req_.psn, req_.psn_high) < 0;
	bool zero_copy = p.payload && !(w.wqe.flags & SROCE_WQE_INLINE) && !is_atomic_write(w.wqe.opcode) &&
			 zero_copy_wanted(p.payload);
	for (;;) {
		auto t = tx_begin(p.path, *p.pinfo, p.h, p.payload, sport_, resend, zero_copy);
		if (t.is_error()) {
			kick_locked(); // out of memory: work sends it later
			return false;
		}
		Tx tx = t.release_value();
		auto g = gather_payload_locked(w, p, tx);
		if (!g.is_error()) {
			tx_finish(tx, p.path, b);
			break;
		}
		tx_abort(tx);
		// Memory that cannot go in place (a window over several MRs,
		// more pieces than fragments), or an SGE the copy then fails
		// too: the copy decides.
		if (zero_copy) {
			zero_copy = false;
			continue;
		}
		fail_send_locked(w, len_or_prot_status(g.error()), b);
		return false;
	}
	advance_locked(w, idx, p, b);
	return true;
}

void Qp::requester_run_locked(sroce_env_batch *b) {
	if (dead_ || !sq_.valid()) // an XRC target has no SQ
		return;
	if (state_ == ib::qps_err) {
		flush_locked(b);
		return;
	}
	if (!sends_allowed() || comp_.rnr_wait)
		return;
	u32 budget = param::tx_budget;
	for (;;) {
		if (req_.sq_next == req_.sq_fetched && !fetch_wqe_locked(b))
			break;
		if (state_ == ib::qps_err)
			return;
		SendWqe &w = swqe(req_.sq_next);
		if (w.status != ib::wc_success) {
			fail_send_locked(w, w.status, b);
			return;
		}
		if (state_ == ib::qps_sqd && !w.started)
			break; // SQ drained: no new WQE starts
		if (reliable()) {
			if (psn_diff(req_.psn, comp_.unacked_psn) >= s32(req_.window))
				break;
			if (is_read_or_atomic(w.wqe.opcode) && req_.rd_atomic_out >= ktl::max(max_rd_atomic_, 1u))
				break;
			if (!w.started && (w.wqe.flags & SROCE_WQE_FENCE) && req_.rd_atomic_out)
				break;
		}
		if (budget-- == 0) {
			kick_locked();
			break;
		}
		if (is_local_op(w.wqe.opcode)) {
			if (!execute_local_op_locked(w, req_.sq_next, b))
				return;
			continue;
		}
		if (!send_packet_locked(w, req_.sq_next, b))
			break;
	}
	if (reliable() && req_.psn != comp_.unacked_psn)
		arm_retry_timer_locked();
	update_ack_due_locked();
}

// LOCAL_INV, REG_MR and BIND_MW execute when the requester reaches them, in SQ order
// and after a fence (IBTA 10.6.3.2 and 10.6.3.3); no packet goes out. The
// WQE counts as started at the PSN before the next, so that the
// acknowledgements of earlier WQEs pass it and complete it in order.
// Failure: LOC_QP_OP_ERR (a bind: MW_BIND_ERR) and the QP in error, as
// rxe. false then.
bool Qp::execute_local_op_locked(SendWqe &w, u32 idx, sroce_env_batch *b) {
	req_.sq_next = idx + 1;
	req_.cur_offset = 0;
	// A rewind (NAK, timeout) resends the WQEs before this one, never it:
	// executed twice, a REG_MR would revive a key invalidated since.
	if (w.started)
		return true;
	const sroce_wqe &q = w.wqe;
	MemoryKeyTable &keys = dev_->keys();
	ktl::Result<void> r;
	u8 fail = ib::wc_loc_qp_op_err;
	sroce_core_counter done = SROCE_CNT_FAST_REGS;
	switch (q.opcode) {
	case ib::wr_local_inv:
		r = keys.invalidate(q.imm_or_inv, pd_->pdn(), qpn_);
		done = SROCE_CNT_LOCAL_INVS;
		break;
	case ib::wr_reg_mr:
		r = keys.fast_register(q.reg.mr_lkey, pd_->pdn(), q.reg.new_key, q.reg.addr, q.reg.length,
				       q.reg.access);
		break;
	default: // bind_mw
		r = keys.bind_mw({q.reg.new_key, q.reg.mr_lkey, q.reg.addr, q.reg.length, q.reg.access, pd_->pdn(),
				  qpn_, &windows_, (q.flags & SROCE_WQE_BIND_TYPE1) != 0, q.reg.layout});
		fail = ib::wc_mw_bind_err;
		done = SROCE_CNT_MW_BINDS;
		break;
	}
	w.started = true;
	w.first_psn = w.last_psn = psn_add(req_.psn, ib::psn_mask); // req_.psn - 1
	if (r.is_error()) {
		fail_send_locked(w, fail, b);
		return false;
	}
	count(done);
	w.done = true;
	complete_done_locked(b);
	return true;
}

// Go back to PSN psn (a NAK, a timeout): the WQE holding it is sent again
// from that packet on, and every later one after it. PSNs of started WQEs
// never change, so a retransmission is the same packets again.
void Qp::rewind_locked(u32 psn) {
	for (u32 i = comp_.sq_done; i != req_.sq_fetched; i++) {
		SendWqe &w = swqe(i);
		if (!w.started || w.done || psn_diff(psn, w.first_psn) < 0 || psn_diff(psn, w.last_psn) > 0)
			continue;
		req_.sq_next = i;
		comp_.ooo_mask = 0;
		// The timed packet is sent again: its answer times nothing (Karn).
		if (psn_diff(comp_.rec.timed_psn, psn) >= 0)
			comp_.rec.timing = false;
		req_.cur_offset = is_single_request(w.wqe.opcode) ? 0 : u64(u32(psn_diff(psn, w.first_psn))) * mtu();
		req_.psn = psn;
		// Requests before this point still wait for their responses (only
		// the oldest WQE can be partly answered: responses come in
		// order); from here on they count again when sent again.
		req_.rd_atomic_out = 0;
		for (u32 j = comp_.sq_done; j != i + 1; j++) {
			SendWqe &x = swqe(j);
			if (x.done || !is_read_or_atomic(x.wqe.opcode))
				continue;
			s32 got = psn_diff(comp_.unacked_psn, x.first_psn);
			u32 answered = got > 0 ? u32(got) : 0;
			u32 sent = j != i ? wqe_requests(x)
					  : u32(psn_diff(psn, x.first_psn)) / param::read_req_max_pkts;
			u32 done = wqe_requests_answered(x, answered);
			req_.rd_atomic_out += sent > done ? sent - done : 0;
		}
		return;
	}
}

// Acknowledged past the resend point (the answer to duplicates from a
// responder that has more): sending resumes at the oldest PSN not
// acknowledged instead of resending what the peer already has.
void Qp::catch_up_locked() {
	if (psn_diff(comp_.unacked_psn, req_.psn) <= 0)
		return;
	rewind_locked(comp_.unacked_psn);
	if (req_.psn == comp_.unacked_psn)
		return;
	// No started WQE holds it: everything sent is acknowledged (READs and
	// ATOMICs answered too: comp_.unacked_psn does not pass them otherwise),
	// and the next WQE starts there.
	u32 i = comp_.sq_done;
	while (i != req_.sq_fetched && swqe(i).started)
		i++;
	req_.sq_next = i;
	req_.cur_offset = 0;
	comp_.ooo_mask = 0;
	req_.rd_atomic_out = 0;
	req_.psn = comp_.unacked_psn;
}

} // namespace sroce

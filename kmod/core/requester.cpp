// Requester: copies send WQEs out of the SQ, validates them once, and turns
// them into request packets (IBTA 9.4), within the PSN window, the
// max_rd_atomic limit and a per-run budget; the rest continues from work or
// when ACKs open the window.
#include "ktl/byteorder.h"
#include "param.h"
#include "qp.h"
#include "sge.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;


ktl::Result<void> Qp::validate_wqe(const sroce_wqe &w) const {
	switch (w.opcode) {
	case ib::wr_send:
	case ib::wr_send_imm:
		break;
	case ib::wr_rdma_write:
	case ib::wr_rdma_write_imm:
		if (!connected())
			return Error::from_errno(err::inval);
		break;
	case ib::wr_rdma_read:
	case ib::wr_atomic_cmp_swp:
	case ib::wr_atomic_fetch_add:
		if (type_ != ib::qpt_rc || (w.flags & SROCE_WQE_INLINE))
			return Error::from_errno(err::inval);
		break;
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
	u32 mtu_b = mtu();
	if (w.status == ib::wc_success) {
		if (!connected() && w.length > mtu_b)
			w.status = ib::wc_loc_len_err;
		else if (is_atomic(w.wqe.opcode) && w.length < 8)
			w.status = ib::wc_loc_len_err;
	}
	if (is_atomic(w.wqe.opcode))
		w.npkts = 1;
	else
		w.npkts = w.length ? u32((w.length + mtu_b - 1) / mtu_b) : 1;
	return true;
}

u8 Qp::wire_opcode(const SendWqe &w, bool first, bool last) const {
	u8 base = type_ == ib::qpt_rc ? ib::op::rc : type_ == ib::qpt_uc ? ib::op::uc : ib::op::ud;
	u8 op = w.wqe.opcode;
	using namespace ib::op;
	if (!connected())
		return u8(base | (has_imm(op) ? send_only_imm : send_only));
	switch (op) {
	case ib::wr_rdma_read: return u8(base | read_request);
	case ib::wr_atomic_cmp_swp: return u8(base | compare_swap);
	case ib::wr_atomic_fetch_add: return u8(base | fetch_add);
	default: break;
	}
	bool write = is_write(op), imm = has_imm(op);
	if (first && last)
		return u8(base | (write ? (imm ? write_only_imm : write_only) : (imm ? send_only_imm : send_only)));
	if (first)
		return u8(base | (write ? write_first : send_first));
	if (last)
		return u8(base | (write ? (imm ? write_last_imm : write_last) : (imm ? send_last_imm : send_last)));
	return u8(base | (write ? write_middle : send_middle));
}

// Sends the next packet of WQE w (index idx). false when it could not (no
// memory: retried later; or the WQE failed and the QP went to error).
bool Qp::send_packet_locked(SendWqe &w, u32 idx, sroce_env_batch *b) {
	u8 op = w.wqe.opcode;
	u32 mtu_b = mtu();
	sroce_env_path *path = path_;
	const sroce_core_path_info *pinfo = &path_info_;
	ktl::RefPtr<Ah> ah;
	ib::Headers h;
	h.bth.dest_qpn = dest_qpn_;
	if (!connected()) {
		ah = dev_->ahs().lookup(w.wqe.ud.ah_handle);
		if (!ah || ah->pdn() != pd_->pdn()) {
			fail_send_locked(w, ib::wc_loc_qp_op_err, b);
			return false;
		}
		path = ah->path();
		pinfo = &ah->info();
		h.bth.dest_qpn = w.wqe.ud.remote_qpn & ib::qpn_mask;
		// A Q_Key with the high bit set means "use the QP's" (IBTA 10.2.5).
		h.deth.qkey = (w.wqe.ud.remote_qkey & 0x80000000u) ? qkey_ : w.wqe.ud.remote_qkey;
		h.deth.src_qp = qpn_;
	}
	if (!path) {
		fail_send_locked(w, ib::wc_loc_qp_op_err, b);
		return false;
	}
	if (!w.started) {
		w.started = true;
		w.first_psn = req_.psn;
		w.last_psn = psn_add(req_.psn, w.npkts - 1);
	}
	u64 off = req_.cur_offset;
	u32 payload = 0;
	bool first = off == 0, last = true;
	u64 read_end = 0; // a READ request asks up to here
	if (op == ib::wr_rdma_read) {
		u64 part = u64(param::read_req_max_pkts) * mtu_b;
		read_end = ktl::min((off / part + 1) * part, w.length);
		h.reth.va = w.wqe.rdma.remote_addr + off;
		h.reth.rkey = w.wqe.rdma.rkey;
		h.reth.length = u32(read_end - off);
	} else if (is_atomic(op)) {
		h.atomic_eth.va = w.wqe.rdma.remote_addr;
		h.atomic_eth.rkey = w.wqe.rdma.rkey;
		h.atomic_eth.swap_add = op == ib::wr_atomic_cmp_swp ? w.wqe.rdma.swap : w.wqe.rdma.compare_add;
		h.atomic_eth.compare = w.wqe.rdma.compare_add;
	} else {
		payload = u32(ktl::min(w.length - off, u64(mtu_b)));
		last = off + payload == w.length;
		if (first && is_write(op)) {
			h.reth.va = w.wqe.rdma.remote_addr;
			h.reth.rkey = w.wqe.rdma.rkey;
			h.reth.length = u32(w.length);
		}
		if (last && has_imm(op))
			h.immdt.imm = ktl::be32_to_cpu(w.wqe.imm_or_inv);
	}
	h.bth.opcode = wire_opcode(w, first, last);
	h.bth.psn = req_.psn;
	h.bth.se = last && (w.wqe.flags & SROCE_WQE_SOLICITED) && !is_read_or_atomic(op) &&
		   (op != ib::wr_rdma_write);
	req_.pkts_since_ack_req++;
	if (type_ == ib::qpt_rc) {
		bool pausing = req_.sq_next + 1 == req_.sq_fetched && last;
		bool window = psn_diff(req_.psn, comp_.unacked_psn) + 1 >= s32(param::max_unacked_pkts / 2);
		h.bth.ack_req = is_read_or_atomic(op) || req_.pkts_since_ack_req >= param::ack_req_every ||
				(last && (pausing || window));
		if (h.bth.ack_req)
			req_.pkts_since_ack_req = 0;
	}
	auto t = tx_begin(path, *pinfo, h, payload, sport_);
	if (t.is_error()) {
		kick_locked(); // out of memory: work sends it later
		return false;
	}
	Tx tx = t.release_value();
	if (payload) {
		ktl::Result<void> r;
		if (w.wqe.flags & SROCE_WQE_INLINE)
			__builtin_memcpy(tx.data + tx.payload_off, w.inline_data() + off, payload);
		else
			r = sge_gather(*dev_, SgeList{w.sges(), w.wqe.num_sge, pd_->pdn()}, off, tx.data + tx.payload_off,
				       payload);
		if (r.is_error()) {
			sroce_env_pkt_free(tx.pkt);
			dev_->counts().pkts_in_flight.fetch_sub(1, ktl::MemoryOrder::relaxed);
			fail_send_locked(w, r.error().errno_value() == err::msgsize ? ib::wc_loc_len_err : ib::wc_loc_prot_err, b);
			return false;
		}
	}
	tx_finish(tx, path, b);
	if (type_ == ib::qpt_rc) {
		// A PSN sent before is a retransmission (what a capture of this
		// flow shows as a PSN going backwards).
		if (psn_diff(req_.psn, req_.psn_high) < 0)
			count(SROCE_CNT_RETRANS_PKTS);
	}
	// Advance: READ and ATOMIC requests are one packet that accounts for all
	// their response PSNs.
	if (op == ib::wr_rdma_read) {
		req_.rd_atomic_out++; // every (re)sent request waits for its response
		u32 n = read_end > off ? u32((read_end - off + mtu_b - 1) / mtu_b) : 1;
		req_.psn = psn_add(req_.psn, n);
		req_.cur_offset = read_end;
	} else if (is_atomic(op)) {
		req_.rd_atomic_out++;
		req_.psn = psn_add(w.last_psn, 1);
		req_.cur_offset = w.length;
	} else {
		req_.psn = psn_add(req_.psn, 1);
		req_.cur_offset = off + payload;
	}
	// Sent up to here. A READ request covers the PSNs of the responses it
	// asks for, not the whole WQE's: the next part's request is new, not a
	// retransmission.
	if (psn_diff(req_.psn, req_.psn_high) > 0)
		req_.psn_high = req_.psn;
	if (req_.cur_offset >= w.length) {
		req_.sq_next = idx + 1;
		req_.cur_offset = 0;
		if (type_ != ib::qpt_rc) {
			// Unreliable: done once sent.
			w.done = true;
			complete_done_locked(b);
		}
	}
	return true;
}

void Qp::requester_run_locked(sroce_env_batch *b) {
	if (dead_)
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
		if (type_ == ib::qpt_rc) {
			if (psn_diff(req_.psn, comp_.unacked_psn) >= s32(param::max_unacked_pkts))
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
		if (!send_packet_locked(w, req_.sq_next, b))
			break;
	}
	if (type_ == ib::qpt_rc && req_.psn != comp_.unacked_psn)
		arm_retry_timer_locked();
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
		req_.cur_offset = is_atomic(w.wqe.opcode) ? 0 : u64(u32(psn_diff(psn, w.first_psn))) * mtu();
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

void Qp::arm_retry_timer_locked() {
	if (comp_.timer_armed || dead_)
		return;
	// 4.096 us * 2^timeout (IBTA 9.7.6.1.3); 0 means wait forever.
	if (timeout_ == 0 && !comp_.rnr_wait)
		return;
	u64 ns = 4096ull << ktl::min(timeout_, 31u);
	comp_.timer_armed = true;
	sroce_env_timer_arm(timer_, ns);
}

} // namespace sroce

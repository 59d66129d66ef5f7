// Completer: the requester side of RC acknowledgements (IBTA 9.7.5.2).
// ACKs complete SEND/WRITE WQEs, READ responses and ATOMIC ACKs carry
// data into the local SGEs, NAKs rewind or fail, and the retry timer
// resends what was not acknowledged. Completions (in order, releasing SQ
// slots), CQE posting and flushing both queues are here too.
#include "ktl/byteorder.h"
#include "param.h"
#include "qp.h"
#include "sge.h"

namespace sroce {


void Qp::fail_send_locked(SendWqe &w, u8 status, sroce_env_batch *b) {
	w.status = status;
	w.done = true;
	// Everything older than w that was sent but not acknowledged can no
	// longer be: it is flushed with the rest.
	to_error_locked(b);
}

// Every WQE whose last PSN is at or before psn is acknowledged. A READ or
// ATOMIC covered by the ACK whose data never came lost its response: it
// is asked again from where its data stopped.
void Qp::on_ack_psn_locked(u32 psn, sroce_env_batch *b) {
	u32 before = comp_.unacked_psn;
	for (u32 i = comp_.sq_done; i != req_.sq_fetched; i++) {
		SendWqe &w = swqe(i);
		if (!w.started || psn_diff(w.first_psn, psn) > 0)
			break;
		if (w.done)
			continue;
		if (is_read_or_atomic(w.wqe.opcode)) {
			// Once per WQE until a timeout or a probe: every packet of a
			// later response burst says the same, and each resend
			// restarts the responder's stream. A probe's answer asks
			// again (the request or its data was lost again).
			u32 probes = comp_.rec.probes;
			if (psn_diff(w.last_psn, psn) <= 0 &&
			    (!comp_.resp_gap_retried || (probes && probes != comp_.resp_gap_probes))) {
				comp_.resp_gap_retried = true;
				comp_.resp_gap_probes = probes;
				rewind_locked(comp_.unacked_psn);
			}
			if (comp_.unacked_psn != before)
				progress_locked();
			complete_done_locked(b);
			return;
		}
		if (psn_diff(w.last_psn, psn) > 0)
			break; // an ACK for the middle of a multi-packet message
		w.done = true;
		comp_.unacked_psn = psn_add(w.last_psn, 1); // a READ behind resumes here
	}
	if (psn_diff(psn_add(psn, 1), comp_.unacked_psn) > 0)
		comp_.unacked_psn = psn_add(psn, 1);
	if (comp_.unacked_psn != before)
		progress_locked();
	complete_done_locked(b);
}

void Qp::on_nak_locked(const ib::PacketInfo &pi, sroce_env_batch *b) {
	const ib::Aeth &a = pi.hdr.aeth;
	u32 psn = pi.hdr.bth.psn;
	// Everything before the NAKed PSN was received (implicit ACK).
	on_ack_psn_locked(psn_add(psn, ib::psn_mask), b);
	if (state_ == ib::qps_err || comp_.sq_done == req_.sq_fetched)
		return;
	SendWqe &w = swqe(comp_.sq_done);
	// A READ or ATOMIC before the NAKed request still lacks its response:
	// the NAK implies it was lost (an implied NAK, as rxe). The NAK names
	// a later request, never this one: the READ is asked again (rewound
	// above), and the later request, resent behind it, draws the NAK
	// again if it still fails.
	if (w.started && !w.done && is_read_or_atomic(w.wqe.opcode) && psn_diff(w.last_psn, psn) < 0)
		return;
	if (a.is_rnr_nak()) {
		if (rnr_retry_ != 7) { // 7: retry forever
			if (comp_.rnr_left == 0) {
				count(SROCE_CNT_RNR_RETRY_EXCEEDED);
				fail_send_locked(w, ib::wc_rnr_retry_exc_err, b);
				return;
			}
			comp_.rnr_left--;
		}
		rewind_locked(psn);
		comp_.rnr_wait = true;
		u64 ns = u64(ib::rnr_timer_us(a.rnr_timer())) * 1000;
		comp_.timer_armed = true;
		sroce_env_timer_arm(timer_, ns < param::rnr_wait_floor_ns ? param::rnr_wait_floor_ns : ns);
		return;
	}
	switch (a.nak_code()) {
	case ib::NakCode::psn_seq_err:
		// The responder is alive and has everything before psn: resend
		// from there without spending a retry (only silence does), or a
		// reordering link would exhaust retry_cnt while making progress.
		// A gap is also a sign of a full queue on the way (a slow
		// receiver's backlog): half as much out from now on, or every
		// resend of the whole window overflows it again.
		req_.window_limit = ktl::max(req_.window / 2, param::nak_window_floor);
		req_.window = ktl::min(req_.window, req_.window_limit);
		rewind_locked(psn);
		requester_run_locked(b);
		return;
	case ib::NakCode::invalid_request:
		fail_send_locked(w, ib::wc_rem_inv_req_err, b);
		return;
	case ib::NakCode::remote_access:
		fail_send_locked(w, ib::wc_rem_access_err, b);
		return;
	default:
		fail_send_locked(w, ib::wc_rem_op_err, b);
		return;
	}
}

// Places one READ response's payload at its offset in the local SGEs.
bool Qp::place_read_response_locked(const RxPacket &rx, SendWqe &w, sroce_env_batch *b) {
	const ib::PacketInfo &pi = rx.pi;
	u64 off = u64(u32(psn_diff(pi.hdr.bth.psn, w.first_psn))) * mtu();
	bool last = pi.hdr.bth.psn == w.last_psn;
	if (off + pi.payload_len > w.length || (!last && pi.payload_len != mtu()) ||
	    (last && off + pi.payload_len != w.length)) {
		fail_send_locked(w, ib::wc_bad_resp_err, b);
		return false;
	}
	if (!pi.payload_len)
		return true;
	auto r = sge_scatter_pkt(*dev_, SgeList{w.sges(), w.wqe.num_sge, pd_->pdn(), &keys_.read_place}, off, rx.pkt, rx.payload_off,
				 pi.payload_len);
	if (r.is_error()) {
		fail_send_locked(w, ib::wc_loc_prot_err, b);
		return false;
	}
	return true;
}

void Qp::on_response_locked(const RxPacket &rx, sroce_env_batch *b) {
	const ib::PacketInfo &pi = rx.pi;
	if (!reliable())
		return;
	bool nak = (pi.flags & ib::op_aeth) && !pi.hdr.aeth.is_ack() && !(pi.flags & (ib::op_read | ib::op_atomic));
	if (nak) {
		sroce_core_counter c = nak_counter(pi.hdr.aeth, false);
		if (c != SROCE_CNT_MAX)
			count(c);
	}
	if (state_ != ib::qps_rts && state_ != ib::qps_sqd)
		return;
	u32 psn = pi.hdr.bth.psn;
	// Only PSNs between the oldest unacknowledged and the newest ever sent
	// mean anything; the rest are duplicates or garbage. The newest ever
	// sent, not the resend point: after a rewind the responder, which may
	// have everything, answers the resent duplicates with how far it is,
	// beyond the resend point. Those ACKs were dropped, and if the last one
	// came before the resend had passed it, nothing else ever came: every
	// timeout resent the same window until RETRY_EXC_ERR (82-netem on 6.12,
	// loss 1%: 8 timeouts in a row, thousands of duplicates).
	if (psn_diff(psn, comp_.unacked_psn) < -1 || psn_diff(psn, req_.psn_high) >= 0)
		return;
	// An answer at or beyond the timed packet (a NAK names the first PSN
	// the peer lacks) times the round trip.
	rtt_answered_locked(nak ? psn_add(psn, ib::psn_mask) : psn);
	if (nak) {
		// A NAK names the request that failed. One for a PSN already
		// acknowledged answers a duplicate of a finished request (the
		// responder re-executed a replayed READ, say): it is stale, and
		// failing the oldest WQE with it would blame an innocent one.
		if (psn_diff(psn, comp_.unacked_psn) < 0)
			return;
		on_nak_locked(pi, b);
	} else if (pi.flags & (ib::op_read | ib::op_atomic))
		on_data_response_locked(rx, b);
	else
		on_ack_psn_locked(psn, b);
	if (state_ == ib::qps_err || comp_.rnr_wait)
		return;
	catch_up_locked();
	// A rewind above is sent at once; the window may have opened.
	restart_retry_timer_locked();
	requester_run_locked(b);
}

// A READ response or ATOMIC ACK.
void Qp::on_data_response_locked(const RxPacket &rx, sroce_env_batch *b) {
	const ib::PacketInfo &pi = rx.pi;
	u32 psn = pi.hdr.bth.psn;
	// Earlier SEND/WRITEs are acknowledged by this response; then it must
	// be the very PSN we wait for (responses in order only).
	on_ack_psn_locked(psn_add(psn, ib::psn_mask), b);
	if (state_ == ib::qps_err || comp_.sq_done == req_.sq_fetched)
		return;
	SendWqe &w = swqe(comp_.sq_done);
	bool atomic_resp = pi.flags & ib::op_atomic;
	bool read_wqe = w.wqe.opcode == ib::wr_rdma_read;
	// An ATOMIC WRITE's or FLUSH's answer: a READ RESPONSE ONLY without payload.
	bool empty_wqe = is_empty_answer(w.wqe.opcode);
	bool empty_resp = !atomic_resp && (pi.flags & ib::op_only) && pi.payload_len == 0;
	s32 ahead = psn_diff(psn, comp_.unacked_psn);
	if (ahead < 0)
		return; // a duplicate
	if (!w.started || psn_diff(psn, w.first_psn) < 0 || psn_diff(psn, w.last_psn) > 0 ||
	    (atomic_resp ? !is_atomic(w.wqe.opcode) || psn != w.first_psn
			 : empty_wqe ? !empty_resp : !read_wqe)) {
		if (ahead == 0)
			fail_send_locked(w, ib::wc_bad_resp_err, b);
		return; // ahead of a gap: not ours to judge yet
	}
	if (ahead > 0) {
		// A reordered READ response beyond a gap: placed now, remembered,
		// counted when the gap fills.
		if (u32(ahead) <= 64 && !(comp_.ooo_mask >> (ahead - 1) & 1) && place_read_response_locked(rx, w, b))
			comp_.ooo_mask |= 1ull << (ahead - 1);
		if (state_ != ib::qps_err)
			resend_read_gap_locked(u32(ahead));
		return;
	}
	if (empty_wqe) {
		// Nothing to place: the response says the 8 bytes are stored or
		// the range is flushed.
	} else if (atomic_resp) {
		u64 orig = pi.hdr.atomic_ack_eth.orig;
		auto r = sge_scatter(*dev_, SgeList{w.sges(), w.wqe.num_sge, pd_->pdn()}, 0,
				     reinterpret_cast<const u8 *>(&orig), 8);
		if (r.is_error()) {
			fail_send_locked(w, ib::wc_loc_prot_err, b);
			return;
		}
	} else if (!place_read_response_locked(rx, w, b)) {
		return;
	}
	u32 answered_before = wqe_requests_answered(w, u32(psn_diff(psn, w.first_psn)));
	read_gap_filled_locked(psn);
	comp_.unacked_psn = psn_add(psn, 1);
	while (comp_.ooo_mask & 1) {
		comp_.ooo_mask >>= 1;
		comp_.unacked_psn = psn_add(comp_.unacked_psn, 1);
	}
	comp_.ooo_mask >>= 1;
	// Each READ request whose last response arrived frees a slot.
	u32 freed = wqe_requests_answered(w, u32(psn_diff(comp_.unacked_psn, w.first_psn))) - answered_before;
	req_.rd_atomic_out -= ktl::min(freed, req_.rd_atomic_out);
	if (psn_diff(comp_.unacked_psn, w.last_psn) > 0) {
		w.done = true;
		comp_.ooo_mask = 0;
		comp_.resp_gap_retried = false;
	}
	progress_locked();
	complete_done_locked(b);
}

// ---- completions and flush ----------------------------------------------------

bool Qp::post_cqe_locked(CompletionQueue &cq, const sroce_cqe &cqe, bool solicited, sroce_env_batch *b) {
	// No cache outlives what a CQE tells its owner (key_cache.h): an owner
	// that polls it and deregisters finds the MR released at once.
	keys_.drop_all();
	if (cq.post(cqe, owner_, solicited, b))
		return true;
	cq_overflowed_locked(b);
	return false;
}

// The CQ overflowed (CQ_ERR was raised): this QP cannot report any more.
void Qp::cq_overflowed_locked(sroce_env_batch *b) {
	if (state_ != ib::qps_err) {
		state_ = ib::qps_err;
		update_ack_due_locked();
		if (!dead_)
			sroce_env_event(b, owner_, ib::ev_qp_fatal);
	}
}

void Qp::complete_send_locked(SendWqe &w, sroce_env_batch *b) {
	bool signaled = sq_sig_all_ || (w.wqe.flags & SROCE_WQE_SIGNALED) || w.status != ib::wc_success;
	if (!signaled)
		return;
	sroce_cqe c{};
	c.wr_id = w.wqe.wr_id;
	c.status = w.status;
	c.qp_num = qpn_;
	switch (w.wqe.opcode) {
	case ib::wr_rdma_write:
	case ib::wr_rdma_write_imm: c.opcode = ib::wc_rdma_write; break;
	case ib::wr_rdma_read: c.opcode = ib::wc_rdma_read; break;
	case ib::wr_atomic_cmp_swp: c.opcode = ib::wc_comp_swap; break;
	case ib::wr_atomic_fetch_add: c.opcode = ib::wc_fetch_add; break;
	case ib::wr_atomic_write: c.opcode = ib::wc_atomic_write; break;
	case ib::wr_flush: c.opcode = ib::wc_flush; break;
	case ib::wr_local_inv: c.opcode = ib::wc_local_inv; break;
	case ib::wr_reg_mr: c.opcode = ib::wc_reg_mr; break;
	case ib::wr_bind_mw: c.opcode = ib::wc_bind_mw; break;
	default: c.opcode = ib::wc_send; break;
	}
	if (w.status == ib::wc_success && c.opcode == ib::wc_rdma_read)
		c.byte_len = u32(w.length);
	else if (w.status == ib::wc_success && (c.opcode == ib::wc_comp_swap || c.opcode == ib::wc_fetch_add))
		c.byte_len = 8;
	post_cqe_locked(*scq_, c, false, b);
}

// Completes every send WQE that is done, in order, releasing its SQ slot.
void Qp::complete_done_locked(sroce_env_batch *b) {
	u32 from = comp_.sq_done;
	while (comp_.sq_done != req_.sq_fetched && swqe(comp_.sq_done).done)
		comp_.sq_done++;
	if (comp_.sq_done != from) {
		// The slots are released before their CQEs appear: a poster
		// that polls a CQE and posts at once (ib_read_lat, a one-deep
		// SQ, the completion running on another CPU, e.g. in the SQ
		// poller's send) must find its slot free. The CQEs are built
		// from the kernel's copies (swqe), which only the requester
		// refills, under this lock.
		if (user_)
			sq_.publish_consumer(comp_.sq_done);
		else
			sq_.set_consumer(comp_.sq_done);
		for (u32 i = from; i != comp_.sq_done; i++)
			complete_send_locked(swqe(i), b);
	}
	// SQD starts no WQE: once those begun before it completed, the SQ
	// is drained, and the consumer hears it if it asked at RTS->SQD
	// (IBTA's SQ Drained affiliated event, as rxe).
	if (comp_.sq_draining && state_ == ib::qps_sqd &&
	    (comp_.sq_done == req_.sq_fetched || !swqe(comp_.sq_done).started)) {
		comp_.sq_draining = false;
		if (sqd_notify_ && !dead_)
			sroce_env_event(b, owner_, ib::ev_sq_drained);
	}
}

// Completes every WQE in both queues with WR_FLUSH_ERR (IBTA 10.3.1 error
// state). Send WQEs still in the ring are fetched first (unvalidated: only
// wr_id is used). After the first WQE in error every one is flushed: a
// local operation the requester executed ahead (done, not yet completed
// behind an unanswered WQE) too, executed or not, as rxe flushes its SQ.
void Qp::flush_locked(sroce_env_batch *b) {
	keys_.drop_all();
	// A pending retry timer finds nothing outstanding and does nothing.
	if (sq_.valid()) { // an XRC target has no SQ
		u32 prod = req_.sq_fetched;
		auto p = sq_.producer(comp_.sq_done, req_.sq_fetched); // never behind what was fetched
		if (!p.is_error())
			prod = p.value();
		bool failed = false;
		for (u32 i = comp_.sq_done; i != prod; i++) {
			SendWqe &w = swqe(i);
			if (s32(i - req_.sq_fetched) >= 0) { // still in the ring: only wr_id is used
				__builtin_memcpy(&w.wqe, sq_.entry(i), sizeof(w.wqe));
				w.status = ib::wc_success;
				w.done = false;
			}
			if (!w.done || (failed && w.status == ib::wc_success))
				w.status = ib::wc_wr_flush_err;
			failed |= w.status != ib::wc_success;
			w.done = true;
		}
		req_.sq_fetched = req_.sq_next = prod;
		complete_done_locked(b);
	}
	req_.rd_atomic_out = 0;
	for (u32 i = 0; i < param::max_qp_rd_atom; i++)
		resp_.res[i].pending = false;
	resp_.answer_waits = false;
	if (recvq_.valid) {
		// A message half received (or lost mid-way, UC): its WQE is
		// flushed too.
		post_recv_cqe_locked(recv_status_cqe(recvq_.wqe.wr_id, ib::wc_wr_flush_err), false, b);
	}
	recvq_.valid = resp_.in_message = false;
	recvq_.xrc_srq = nullptr;
	if (recvq_.srq) {
		// Once per entry into error: a flush runs at every doorbell or
		// poller pass of a QP in error, and each event is an allocation
		// in uverbs that only the owner's reads free (an unprivileged
		// owner rewriting its producer flooded the host's memory).
		if (!dead_ && !comp_.last_wqe_raised)
			sroce_env_event(b, owner_, ib::ev_qp_last_wqe_reached);
		comp_.last_wqe_raised = true;
		return;
	}
	if (!recvq_.rq.valid()) // XRC: no receive queue of its own
		return;
	mp_flush_locked(b);
	recvq_.rq.flush([&](u64 wr_id) {
		return post_cqe_locked(*rcq_, recv_status_cqe(wr_id, ib::wc_wr_flush_err), false, b);
	});
}

} // namespace sroce

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

// Forward progress: the retry counters start over (IBTA 9.7.6.1.3).
void Qp::progress_locked() {
	retries_left_ = retry_cnt_;
	rnr_left_ = rnr_retry_;
}

void Qp::restart_retry_timer_locked() {
	if (psn_ == unacked_psn_)
		return; // a pending timer finds nothing outstanding
	timer_armed_ = false;
	arm_retry_timer_locked();
}

// Every WQE whose last PSN is at or before psn is acknowledged. A READ or
// ATOMIC covered by the ACK whose data never came lost its response: it
// is asked again from where its data stopped.
void Qp::on_ack_psn_locked(u32 psn, sroce_env_batch *b) {
	u32 before = unacked_psn_;
	for (u32 i = sq_done_; i != sq_fetched_; i++) {
		SendWqe &w = swqe(i);
		if (!w.started || psn_diff(w.first_psn, psn) > 0)
			break;
		if (w.done)
			continue;
		if (is_read_or_atomic(w.wqe.opcode)) {
			// Once per WQE until a timeout: every packet of a later
			// response burst says the same, and each resend restarts
			// the responder's stream.
			if (psn_diff(w.last_psn, psn) <= 0 && !resp_gap_retried_) {
				resp_gap_retried_ = true;
				rewind_locked(unacked_psn_);
			}
			if (unacked_psn_ != before)
				progress_locked();
			complete_done_locked(b);
			return;
		}
		if (psn_diff(w.last_psn, psn) > 0)
			break; // an ACK for the middle of a multi-packet message
		w.done = true;
		unacked_psn_ = psn_add(w.last_psn, 1); // a READ behind resumes here
	}
	if (psn_diff(psn_add(psn, 1), unacked_psn_) > 0)
		unacked_psn_ = psn_add(psn, 1);
	if (unacked_psn_ != before)
		progress_locked();
	complete_done_locked(b);
}

void Qp::on_nak_locked(const ib::PacketInfo &pi, sroce_env_batch *b) {
	const ib::Aeth &a = pi.hdr.aeth;
	u32 psn = pi.hdr.bth.psn;
	// Everything before the NAKed PSN was received (implicit ACK).
	on_ack_psn_locked(psn_add(psn, ib::psn_mask), b);
	if (state_ == ib::qps_err || sq_done_ == sq_fetched_)
		return;
	SendWqe &w = swqe(sq_done_);
	if (a.is_rnr_nak()) {
		if (rnr_retry_ != 7) { // 7: retry forever
			if (rnr_left_ == 0) {
				count(SROCE_CNT_RNR_RETRY_EXCEEDED);
				fail_send_locked(w, ib::wc_rnr_retry_exc_err, b);
				return;
			}
			rnr_left_--;
		}
		rewind_locked(psn);
		rnr_wait_ = true;
		u64 ns = u64(ib::rnr_timer_us(a.rnr_timer())) * 1000;
		timer_armed_ = true;
		sroce_env_timer_arm(timer_, ns < param::rnr_wait_floor_ns ? param::rnr_wait_floor_ns : ns);
		return;
	}
	switch (a.nak_code()) {
	case ib::NakCode::psn_seq_err:
		// The responder is alive and has everything before psn: resend
		// from there without spending a retry (only silence does), or a
		// reordering link would exhaust retry_cnt while making progress.
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
	auto r = sge_scatter_pkt(*dev_, SgeList{w.sges(), w.wqe.num_sge, pd_->pdn()}, off, rx.pkt, rx.payload_off,
				 pi.payload_len);
	if (r.is_error()) {
		fail_send_locked(w, ib::wc_loc_prot_err, b);
		return false;
	}
	return true;
}

void Qp::on_response_locked(const RxPacket &rx, sroce_env_batch *b) {
	const ib::PacketInfo &pi = rx.pi;
	if (type_ != ib::qpt_rc)
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
	if (psn_diff(psn, unacked_psn_) < -1 || psn_diff(psn, psn_high_) >= 0)
		return;
	if (nak) {
		// A NAK names the request that failed. One for a PSN already
		// acknowledged answers a duplicate of a finished request (the
		// responder re-executed a replayed READ, say): it is stale, and
		// failing the oldest WQE with it would blame an innocent one.
		if (psn_diff(psn, unacked_psn_) < 0)
			return;
		on_nak_locked(pi, b);
	} else if (pi.flags & (ib::op_read | ib::op_atomic))
		on_data_response_locked(rx, b);
	else
		on_ack_psn_locked(psn, b);
	if (state_ == ib::qps_err || rnr_wait_)
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
	if (state_ == ib::qps_err || sq_done_ == sq_fetched_)
		return;
	SendWqe &w = swqe(sq_done_);
	bool atomic_resp = pi.flags & ib::op_atomic;
	bool read_wqe = w.wqe.opcode == ib::wr_rdma_read;
	s32 ahead = psn_diff(psn, unacked_psn_);
	if (ahead < 0)
		return; // a duplicate
	if (!w.started || psn_diff(psn, w.first_psn) < 0 || psn_diff(psn, w.last_psn) > 0 ||
	    (atomic_resp ? read_wqe || psn != w.first_psn : !read_wqe)) {
		if (ahead == 0)
			fail_send_locked(w, ib::wc_bad_resp_err, b);
		return; // ahead of a gap: not ours to judge yet
	}
	if (ahead > 0) {
		// A reordered READ response beyond a gap: placed now, remembered,
		// counted when the gap fills.
		if (u32(ahead) <= 64 && !(ooo_mask_ >> (ahead - 1) & 1) && place_read_response_locked(rx, w, b))
			ooo_mask_ |= 1ull << (ahead - 1);
		if (state_ != ib::qps_err)
			resend_read_gap_locked(u32(ahead));
		return;
	}
	if (atomic_resp) {
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
	unacked_psn_ = psn_add(psn, 1);
	while (ooo_mask_ & 1) {
		ooo_mask_ >>= 1;
		unacked_psn_ = psn_add(unacked_psn_, 1);
	}
	ooo_mask_ >>= 1;
	// Each READ request whose last response arrived frees a slot.
	u32 freed = wqe_requests_answered(w, u32(psn_diff(unacked_psn_, w.first_psn))) - answered_before;
	rd_atomic_out_ -= ktl::min(freed, rd_atomic_out_);
	if (psn_diff(unacked_psn_, w.last_psn) > 0) {
		w.done = true;
		ooo_mask_ = 0;
		resp_gap_retried_ = false;
	}
	progress_locked();
	complete_done_locked(b);
}

// The response at unacked_psn_ is missing and later ones of the same
// stream keep coming: it was lost (the responder streams in order). Ask for
// the READ again from there now, once per gap, rather than wait for the
// retry timer: with loss, every lost response cost a timeout (268 ms at
// sroce_integrity's timeout 16) and a READ of 128 packets at 10% loss a
// dozen of them. No retry is spent: the responder is alive.
void Qp::resend_read_gap_locked(u32 ahead) {
	if (ahead < param::read_gap_resend_after || (read_gap_resent_ && read_gap_psn_ == unacked_psn_))
		return;
	read_gap_resent_ = true;
	read_gap_psn_ = unacked_psn_;
	count(SROCE_CNT_READ_GAP_RESENDS);
	rewind_locked(unacked_psn_);
}

void Qp::on_timeout_locked(sroce_env_batch *b) {
	if (state_ != ib::qps_rts && state_ != ib::qps_sqd)
		return;
	if (rnr_wait_) {
		rnr_wait_ = false;
		requester_run_locked(b);
		return;
	}
	if (sq_done_ == sq_fetched_)
		return;
	if (psn_ == unacked_psn_) { // rewound but not yet sent: no retry spent
		requester_run_locked(b);
		return;
	}
	count(SROCE_CNT_RETRANS_TIMEOUTS);
	if (retries_left_ == 0) {
		count(SROCE_CNT_RETRY_EXCEEDED);
		fail_send_locked(swqe(sq_done_), ib::wc_retry_exc_err, b);
		return;
	}
	retries_left_--;
	resp_gap_retried_ = false;
	rewind_locked(unacked_psn_);
	requester_run_locked(b);
	arm_retry_timer_locked();
}

// ---- completions and flush ----------------------------------------------------

bool Qp::post_cqe_locked(CompletionQueue &cq, const sroce_cqe &cqe, bool solicited, sroce_env_batch *b) {
	if (cq.post(cqe, owner_, solicited, b))
		return true;
	// The CQ overflowed (CQ_ERR was raised): this QP cannot report any more.
	if (state_ != ib::qps_err) {
		state_ = ib::qps_err;
		if (!dead_)
			sroce_env_event(b, owner_, ib::ev_qp_fatal);
	}
	return false;
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
	u32 from = sq_done_;
	while (sq_done_ != sq_fetched_ && swqe(sq_done_).done)
		sq_done_++;
	if (sq_done_ == from)
		return;
	// The slots are released before their CQEs appear: a poster that
	// polls a CQE and posts at once (ib_read_lat, a one-deep SQ, the
	// completion running on another CPU, e.g. in the SQ poller's send)
	// must find its slot free. The CQEs are built from the kernel's
	// copies (swqe), which only the requester refills, under this lock.
	if (user_)
		sq_.publish_consumer(sq_done_);
	else
		sq_.set_consumer(sq_done_);
	for (u32 i = from; i != sq_done_; i++)
		complete_send_locked(swqe(i), b);
}

// Completes every WQE in both queues with WR_FLUSH_ERR (IBTA 10.3.1 error
// state). Send WQEs still in the ring are fetched first (unvalidated: only
// wr_id is used).
void Qp::flush_locked(sroce_env_batch *b) {
	// A pending retry timer finds nothing outstanding and does nothing.
	u32 prod = sq_fetched_;
	auto p = sq_.producer(sq_done_, sq_fetched_); // never behind what was fetched
	if (!p.is_error())
		prod = p.value();
	for (u32 i = sq_done_; i != prod; i++) {
		SendWqe &w = swqe(i);
		if (s32(i - sq_fetched_) >= 0) { // still in the ring: only wr_id is used
			__builtin_memcpy(&w.wqe, sq_.entry(i), sizeof(w.wqe));
			w.status = ib::wc_success;
			w.done = false;
		}
		if (!w.done)
			w.status = ib::wc_wr_flush_err;
		w.done = true;
	}
	sq_fetched_ = sq_next_ = prod;
	complete_done_locked(b);
	rd_atomic_out_ = 0;
	for (u32 i = 0; i < param::max_qp_rd_atom; i++)
		res_[i].pending = false;
	ack_deferred_ = false;
	if (recv_valid_ && in_message_) {
		// A message half received: its WQE is flushed too.
		sroce_cqe c{};
		c.wr_id = recv_.wr_id;
		c.status = ib::wc_wr_flush_err;
		c.opcode = ib::wc_recv;
		c.qp_num = qpn_;
		post_cqe_locked(*rcq_, c, false, b);
	}
	recv_valid_ = in_message_ = false;
	if (srq_) {
		if (!dead_)
			sroce_env_event(b, owner_, ib::ev_qp_last_wqe_reached);
		return;
	}
	rq_.flush([&](u64 wr_id) {
		sroce_cqe c{};
		c.wr_id = wr_id;
		c.status = ib::wc_wr_flush_err;
		c.opcode = ib::wc_recv;
		c.qp_num = qpn_;
		return post_cqe_locked(*rcq_, c, false, b);
	});
}

} // namespace sroce

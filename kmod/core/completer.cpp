// Completer: the requester side of RC acknowledgements (IBTA 9.7.5.2).
// ACKs complete SEND/WRITE WQEs, READ responses and ATOMIC ACKs carry
// data into the local SGEs, NAKs rewind or fail, and the retry timer
// resends what was not acknowledged.
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
	for (u32 i = sq_done_; i != sq_fetched_; i++) {
		SendWqe &w = swqe(i);
		if (!w.started || psn_diff(w.first_psn, psn) > 0)
			break;
		if (w.done)
			continue;
		if (is_read_or_atomic(w.wqe.opcode)) {
			if (psn_diff(w.last_psn, psn) <= 0)
				rewind_locked(unacked_psn_);
			complete_done_locked(b);
			return;
		}
		if (psn_diff(w.last_psn, psn) > 0)
			break; // an ACK for the middle of a multi-packet message
		w.done = true;
	}
	if (psn_diff(psn_add(psn, 1), unacked_psn_) > 0)
		unacked_psn_ = psn_add(psn, 1);
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
		if (retries_left_ == 0) {
			fail_send_locked(w, ib::wc_retry_exc_err, b);
			return;
		}
		retries_left_--;
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

void Qp::on_read_response_locked(const RxPacket &rx, SendWqe &w, sroce_env_batch *b) {
	const ib::PacketInfo &pi = rx.pi;
	u32 psn = pi.hdr.bth.psn;
	u64 off = u64(u32(psn_diff(psn, w.first_psn))) * mtu();
	bool last = pi.flags & ib::op_last;
	if (off + pi.payload_len > w.length || (!last && pi.payload_len != mtu()) ||
	    (last && off + pi.payload_len != w.length)) {
		fail_send_locked(w, ib::wc_bad_resp_err, b);
		return;
	}
	if (pi.payload_len) {
		auto r = sge_scatter_pkt(*dev_, SgeList{w.sges(), w.wqe.num_sge, pd_->pdn()}, off, rx.pkt,
					 rx.payload_off, pi.payload_len);
		if (r.is_error()) {
			fail_send_locked(w, ib::wc_loc_prot_err, b);
			return;
		}
	}
	unacked_psn_ = psn_add(psn, 1);
	if (last) {
		w.done = true;
		rd_atomic_out_--;
	}
}

void Qp::on_response_locked(const RxPacket &rx, sroce_env_batch *b) {
	const ib::PacketInfo &pi = rx.pi;
	if (type_ != ib::qpt_rc || (state_ != ib::qps_rts && state_ != ib::qps_sqd))
		return;
	u32 psn = pi.hdr.bth.psn;
	// Only PSNs between the oldest unacknowledged and the newest sent mean
	// anything; the rest are duplicates or garbage.
	if (psn_diff(psn, unacked_psn_) < -1 || psn_diff(psn, psn_) >= 0)
		return;
	if (pi.flags & ib::op_aeth && !pi.hdr.aeth.is_ack() && !(pi.flags & (ib::op_read | ib::op_atomic))) {
		progress_locked();
		on_nak_locked(pi, b);
		requester_run_locked(b);
		return;
	}
	if (pi.flags & (ib::op_read | ib::op_atomic)) {
		// Responses in order only: the PSN we wait for next.
		if (psn != unacked_psn_)
			return;
		// Earlier SEND/WRITEs are acknowledged by this response.
		on_ack_psn_locked(psn_add(psn, ib::psn_mask), b);
		if (state_ == ib::qps_err || sq_done_ == sq_fetched_)
			return;
		SendWqe &w = swqe(sq_done_);
		bool atomic_resp = pi.flags & ib::op_atomic;
		bool read_wqe = w.wqe.opcode == ib::wr_rdma_read;
		if (!w.started || (atomic_resp ? read_wqe || psn != w.first_psn : !read_wqe)) {
			fail_send_locked(w, ib::wc_bad_resp_err, b);
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
			unacked_psn_ = psn_add(psn, 1);
			w.done = true;
			rd_atomic_out_--;
		} else {
			on_read_response_locked(rx, w, b);
			if (state_ == ib::qps_err)
				return;
		}
		progress_locked();
		complete_done_locked(b);
	} else {
		u32 before = unacked_psn_;
		on_ack_psn_locked(psn, b);
		if (unacked_psn_ != before)
			progress_locked();
	}
	restart_retry_timer_locked();
	requester_run_locked(b);
}

void Qp::on_timeout_locked(sroce_env_batch *b) {
	if (state_ != ib::qps_rts && state_ != ib::qps_sqd)
		return;
	if (rnr_wait_) {
		rnr_wait_ = false;
		requester_run_locked(b);
		return;
	}
	if (psn_ == unacked_psn_ || sq_done_ == sq_fetched_)
		return;
	if (retries_left_ == 0) {
		fail_send_locked(swqe(sq_done_), ib::wc_retry_exc_err, b);
		return;
	}
	retries_left_--;
	rewind_locked(unacked_psn_);
	requester_run_locked(b);
	arm_retry_timer_locked();
}

} // namespace sroce

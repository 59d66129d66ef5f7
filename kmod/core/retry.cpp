// The RC requester's retry machinery (IBTA 9.7.6.1.3): the retry timer,
// what a timeout resends, and the recovery that needs no timeout: a READ
// response gap asked for again at once, and the tail-loss probe, which
// re-sends the newest packet with AckReq a few measured round trips after
// the answers stopped (transport.md, "Loss recovery").
#include "param.h"
#include "qp.h"

namespace sroce {

// Forward progress: the retry counters start over (IBTA 9.7.6.1.3), the
// next stall may be probed again, and the window grows: doubling up to its
// limit (slow start after a timeout), then one packet per progress
// (transport.md, "Congestion").
void Qp::progress_locked() {
	comp_.retries_left = retry_cnt_;
	comp_.rnr_left = rnr_retry_;
	comp_.rec.probes = 0;
	u32 w = req_.window < req_.window_limit ? ktl::min(req_.window * 2, req_.window_limit) : req_.window + 1;
	req_.window = ktl::min(w, param::max_unacked_pkts);
}

void Qp::restart_retry_timer_locked() {
	comp_.rec.quiet_ns = sroce_env_now_ns();
	comp_.timer_armed = false;
	// Nothing outstanding: a pending timer finds nothing to do, and the
	// next send arms it afresh (a deadline left from an earlier answer
	// would probe that send at once).
	if (req_.psn != comp_.unacked_psn)
		arm_retry_timer_locked();
}

// The timer runs from the newest answer (or the first packet after
// silence). It fires first for the probes due before the timeout proper,
// which stays the upper bound the IBTA sets, then for the timeout.
void Qp::arm_retry_timer_locked() {
	if (comp_.timer_armed || dead_)
		return;
	// 4.096 us * 2^timeout (IBTA 9.7.6.1.3); 0 means wait forever.
	if (timeout_ == 0)
		return;
	u64 now = sroce_env_now_ns();
	comp_.rec.timeout_at_ns = now + (4096ull << ktl::min(timeout_, 31u));
	arm_retry_or_probe_locked(now, now);
}

// The next probe comes a probe delay after `from`, twice as long after the
// one before (a lost probe, or its lost answer, is probed again), and none
// is armed past the timeout, nor after max_probe_backoff + 1 without
// progress. Every answer restarts the timeout (as rxe's), a probe's too:
// unbounded, probes answered with nothing moving (the data of a READ
// lost every time, its later WRITE ACKed) held the timeout off for ever
// once it was longer than the longest probe wait (timeout 24 and up).
void Qp::arm_retry_or_probe_locked(u64 from, u64 now) {
	LossRecovery &r = comp_.rec;
	u64 probe_at = from + (probe_delay_ns() << ktl::min(r.probes, param::max_probe_backoff));
	r.probe_armed = r.probes <= param::max_probe_backoff && probe_at < r.timeout_at_ns;
	comp_.timer_armed = true;
	sroce_env_timer_arm(timer_, (r.probe_armed ? probe_at : r.timeout_at_ns) - now);
}

// A few round trips: twice the smoothed RTT plus four deviations (TCP's
// retransmission bound, RFC 6298), not below param::probe_min_ns, which
// covers the peer's scheduling (the answer is softirq work behind other
// work). No sample yet: param::probe_initial_ns.
u64 Qp::probe_delay_ns() const {
	const LossRecovery &r = comp_.rec;
	if (!r.srtt_ns)
		return param::probe_initial_ns;
	return ktl::max(2 * r.srtt_ns + 4 * r.rttvar_ns, param::probe_min_ns);
}

// A request packet went out. One first transmission with AckReq at a time
// is timed; its answer is any response at or beyond its PSN (for a READ
// request, the PSN of its first response).
//
// Every first transmission, like every answer, starts the quiet a probe
// waits for: a probe of a packet still on its way would come before it on
// the wire.
void Qp::rtt_sent_locked(u32 psn, bool ack_req) {
	LossRecovery &r = comp_.rec;
	if (psn_diff(psn, req_.psn_high) < 0)
		return;
	r.quiet_ns = sroce_env_now_ns();
	if (!ack_req || r.timing)
		return;
	r.timing = true;
	r.timed_psn = psn;
	r.timed_sent_ns = r.quiet_ns;
}

void Qp::rtt_answered_locked(u32 psn) {
	LossRecovery &r = comp_.rec;
	if (!r.timing || psn_diff(psn, r.timed_psn) < 0)
		return;
	r.timing = false;
	u64 now = sroce_env_now_ns();
	u64 rtt = now > r.timed_sent_ns ? now - r.timed_sent_ns : 1;
	if (!r.srtt_ns) {
		r.srtt_ns = rtt;
		r.rttvar_ns = rtt / 2;
		return;
	}
	u64 dev = r.srtt_ns > rtt ? r.srtt_ns - rtt : rtt - r.srtt_ns;
	r.rttvar_ns = (3 * r.rttvar_ns + dev) / 4;
	r.srtt_ns = (7 * r.srtt_ns + rtt) / 8;
}

// The response at comp_.unacked_psn is missing and later ones of the same
// stream keep coming: it was lost (the responder streams in order). Ask for
// the READ again from there now, once per gap, rather than wait for the
// retry timer: with loss, every lost response cost a timeout (268 ms at
// sroce_integrity's timeout 16) and a READ of 128 packets at 10% loss a
// dozen of them. No retry is spent: the responder is alive.
//
// After a probe one response beyond the gap is enough, and a gap already
// asked for is asked for again: the stream had stopped, so the gap is no
// reordering, and the resend was lost too.
//
// Otherwise a gap is a loss only once reo_thresh responses came beyond it,
// and a round trip has passed since the last such request (responses sent
// before it still come, beyond any gap, for up to a round trip; a queue's
// delay is in the estimate). The threshold starts at
// param::read_gap_resend_after, grows past the distance each spurious
// request met (read_gap_filled_locked), and starts over after
// param::reo_decay_requests requests in a row that were not. Each request makes the responder
// stream the rest of the window again (later READs restart with it, IBTA
// go-back-N), so asking on mere reordering multiplied what it sent:
// responses leaving a veth peer from both CPUs, through two receive
// backlogs, came reordered by dozens, and ib_read_bw -a sent 3.5 times the
// data until its backlog overflowed (80-transport on the debug kernel;
// test_transport_read.cpp, "reordering backlogs").
void Qp::resend_read_gap_locked(u32 ahead) {
	u32 probes = comp_.rec.probes;
	u64 now = sroce_env_now_ns();
	if (comp_.gap_psn != comp_.unacked_psn) {
		comp_.gap_psn = comp_.unacked_psn;
		comp_.gap_ahead = 0;
	}
	comp_.gap_ahead = ktl::max(comp_.gap_ahead, ahead);
	u64 rtt = comp_.rec.srtt_ns ? comp_.rec.srtt_ns : param::probe_initial_ns;
	bool too_soon = comp_.read_gap_resent && now - comp_.read_gap_resent_ns < rtt;
	if (ahead < (probes ? 1 : comp_.reo_thresh) || (!probes && too_soon) ||
	    (comp_.read_gap_resent && comp_.read_gap_psn == comp_.unacked_psn && comp_.read_gap_probes == probes))
		return;
	comp_.read_gap_resent = true;
	comp_.read_gap_psn = comp_.unacked_psn;
	comp_.read_gap_probes = probes;
	comp_.read_gap_resent_ns = now;
	if (++comp_.reo_requests >= param::reo_decay_requests) {
		comp_.reo_requests = 0;
		comp_.reo_thresh = param::read_gap_resend_after;
	}
	count(SROCE_CNT_READ_GAP_RESENDS);
	rewind_locked(comp_.unacked_psn);
}

// The response at psn, the gap asked for, came. Sooner than half a round
// trip after the request it cannot be the answer: it was only late, the
// request spurious, and the threshold grows past how far it was overtaken.
void Qp::read_gap_filled_locked(u32 psn) {
	if (!comp_.read_gap_resent || psn != comp_.read_gap_psn || psn != comp_.gap_psn)
		return;
	u64 rtt = comp_.rec.srtt_ns ? comp_.rec.srtt_ns : param::probe_initial_ns;
	if (sroce_env_now_ns() - comp_.read_gap_resent_ns < rtt / 2) {
		comp_.reo_thresh = ktl::min(ktl::max(comp_.reo_thresh, comp_.gap_ahead + 1), param::reo_thresh_max);
		comp_.reo_requests = 0;
	}
}

// Nothing answered for a few round trips: the newest packet sent goes out
// again, asking for an ACK, and no retry is spent. Its answer says where
// the peer is: a duplicate is ACKed again (the ACK was lost), the last
// packet of a message completes it (it was lost), a READ part's last
// response or an ATOMIC's saved result comes again, an ACK beyond a READ
// whose data stopped asks for that READ again (completer.cpp), and a
// packet beyond a gap whose NAK was lost is NAKed again (responder.cpp).
// Where sending stood is kept, so a spurious probe costs one packet.
void Qp::send_probe_locked(sroce_env_batch *b) {
	RequesterState saved = req_;
	u64 ooo = comp_.ooo_mask;
	u32 psn = psn_add(req_.psn, ib::psn_mask); // req_.psn - 1
	rewind_locked(psn);
	if (req_.psn == psn && req_.sq_next != req_.sq_fetched) {
		count(SROCE_CNT_TAIL_PROBES);
		comp_.rec.probes++;
		req_.probe = true;
		send_packet_locked(swqe(req_.sq_next), req_.sq_next, b);
	}
	// A resend that failed (its MR deregistered) put the QP in error, and
	// the flush moved the SQ on: where sending stood is gone. Put back, the
	// fetch index fell behind the flushed one, and the next flush walked
	// 2^32 WQEs.
	if (state_ == ib::qps_err)
		return;
	req_ = saved;
	comp_.ooo_mask = ooo;
}

void Qp::on_timeout_locked(sroce_env_batch *b) {
	if (state_ != ib::qps_rts && state_ != ib::qps_sqd)
		return;
	if (comp_.rnr_wait) {
		comp_.rnr_wait = false;
		requester_run_locked(b);
		return;
	}
	if (comp_.sq_done == req_.sq_fetched)
		return;
	if (req_.psn == comp_.unacked_psn) { // rewound but not yet sent: no retry spent
		requester_run_locked(b);
		return;
	}
	if (comp_.rec.probe_armed) {
		u64 now = sroce_env_now_ns();
		comp_.rec.probe_armed = false;
		if (now < comp_.rec.timeout_at_ns) { // else a late timer: the timeout is due
			// Not sooner than a probe delay after the newest send or
			// answer (the kernel's timer may fire up to a tick early).
			u64 from = comp_.rec.quiet_ns;
			if (now - from >= probe_delay_ns()) {
				send_probe_locked(b);
				from = now;
			}
			if (state_ != ib::qps_err)
				arm_retry_or_probe_locked(from, now);
			return;
		}
	}
	count(SROCE_CNT_RETRANS_TIMEOUTS);
	if (comp_.retries_left == 0) {
		count(SROCE_CNT_RETRY_EXCEEDED);
		fail_send_locked(swqe(comp_.sq_done), ib::wc_retry_exc_err, b);
		return;
	}
	comp_.retries_left--;
	comp_.resp_gap_retried = false;
	// Slow start: a few packets, the last asking for an ACK, then twice as
	// many per progress up to half of what was out. Silence is loss or a
	// peer slower than the timeout; resending the whole window queued it
	// behind the last one at a slow peer, whose answer then came later
	// still (transport.md).
	u32 out = u32(psn_diff(req_.psn_high, comp_.unacked_psn));
	req_.window_limit = ktl::max(ktl::min(req_.window, out) / 2, param::timeout_window);
	req_.window = param::timeout_window;
	rewind_locked(comp_.unacked_psn);
	requester_run_locked(b);
	arm_retry_timer_locked();
}

} // namespace sroce

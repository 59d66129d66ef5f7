// Qp life cycle (create, destroy, the error state), kernel posts, the
// doorbell and SQ poller entry, the debug view, and the timer/work plumbing
// the requester, completer and responder share. Attributes are in
// qp_attr.cpp, completions and flushing in completer.cpp, the receive entry
// in rx.cpp.
#include "qp.h"
#include "ktl/byteorder.h"
#include "param.h"
#include "qp_attr.h"
#include "ucontext.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

namespace {
// Bytes of kernel state per SQ slot: the WQE copy plus the SGEs or inline
// data the ring stride leaves room for.
u32 sq_priv_stride(u32 ring_stride) {
	u32 extra = ring_stride - sizeof(sroce_wqe);
	return u32((sizeof(SendWqe) + extra + 7) & ~usize(7));
}

ktl::Result<void> check_send_side(const sroce_core_qp_init &in) {
	if (!in.send_cq || !in.sq_ring || in.max_send_sge > param::max_sge || in.max_inline_data > param::max_inline_data)
		return Error::from_errno(err::inval);
	if (in.sq_log_size > 31 || (1u << in.sq_log_size) > param::max_qp_wr)
		return Error::from_errno(err::inval);
	u32 need = u32(sizeof(sroce_wqe)) + ktl::max(in.max_send_sge * u32(sizeof(sroce_sge)), in.max_inline_data);
	if (in.sq_stride < need || in.sq_stride > (1u << 16))
		return Error::from_errno(err::inval);
	return {};
}

// An RSS QP (ind_table.h) is a UD QP that receives into its table's WQs:
// no RQ, SRQ or receive CQ of its own. Its send side is optional (mlx5's
// RSS QPs have none); when it has one, it sends as any UD QP.
ktl::Result<void> check_rss_init(const sroce_core_qp_init &in) {
	if (in.qp_type != ib::qpt_ud || in.xrcd || !in.pd || in.recv_cq || in.srq || in.rq_ring || in.max_recv_sge ||
	    in.mp_wr_buffer_sz || in.mp_packet_align_sz)
		return Error::from_errno(err::inval);
	if (!in.send_cq && !in.sq_ring && !in.max_send_sge && !in.max_inline_data)
		return {};
	return check_send_side(in);
}

ktl::Result<void> check_init(const sroce_core_qp_init &in) {
	if (in.qp_type != ib::qpt_rc && in.qp_type != ib::qpt_uc && in.qp_type != ib::qpt_ud &&
	    in.qp_type != ib::qpt_gsi && in.qp_type != ib::qpt_xrc_ini && in.qp_type != ib::qpt_xrc_tgt)
		return Error::from_errno(err::opnotsupp);
	if (in.rss)
		return check_rss_init(in);
	// A child of the consecutive-QPN form (qpn_block.cpp): a user UD QP
	// whose receive side is a WQ (checked at numbering), no RQ of its own.
	if (in.rss_child) {
		if (in.qp_type != ib::qpt_ud || !in.uctx || in.xrcd || !in.pd || !in.recv_cq || in.srq || in.rq_ring ||
		    in.max_recv_sge || in.mp_wr_buffer_sz || in.mp_packet_align_sz)
			return Error::from_errno(err::inval);
		return check_send_side(in);
	}
	// An XRC target is its domain alone; everyone else has no domain.
	if (in.qp_type == ib::qpt_xrc_tgt) {
		if (!in.xrcd || in.pd || in.send_cq || in.recv_cq || in.srq || in.sq_ring || in.rq_ring ||
		    in.mp_wr_buffer_sz || in.mp_packet_align_sz)
			return Error::from_errno(err::inval);
		return {};
	}
	if (in.xrcd)
		return Error::from_errno(err::inval);
	// An XRC initiator has no receive side.
	bool recv_side = in.qp_type != ib::qpt_xrc_ini;
	if (!recv_side && (in.recv_cq || in.srq || in.rq_ring || in.max_recv_sge))
		return Error::from_errno(err::inval);
	if (!in.pd || (recv_side && !in.recv_cq) || in.max_recv_sge > param::max_sge)
		return Error::from_errno(err::inval);
	TRY(check_send_side(in));
	// Multi-packet receive is the RQ's own: with an SRQ, the SRQ's.
	if ((in.mp_wr_buffer_sz || in.mp_packet_align_sz) &&
	    (!recv_side || in.srq || !MpRecv::valid_sizes(in.mp_wr_buffer_sz, in.mp_packet_align_sz)))
		return Error::from_errno(err::inval);
	if (recv_side && !in.srq) {
		if (!in.rq_ring || in.rq_log_size > 31 || (1u << in.rq_log_size) > param::max_qp_wr)
			return Error::from_errno(err::inval);
		if (in.rq_stride < sizeof(sroce_wqe) + in.max_recv_sge * sizeof(sroce_sge) || in.rq_stride > (1u << 16))
			return Error::from_errno(err::inval);
	}
	return {};
}
} // namespace

ktl::Result<ktl::RefPtr<Qp>> Qp::create(Device &dev, const sroce_core_qp_init &init) {
	TRY(check_init(init));
	auto ref = TRY(create_counted<Qp>(dev.counts().qps, BoundedCount::ceiling(param::max_qp, param::reserve::qp, init.user),
					  err::nomem, ktl::AllocCtx::may_sleep, dev));
	TRY(ref->init(init)); // the destructor undoes a partial init
	return ref;
}

ktl::Result<void> Qp::init(const sroce_core_qp_init &in) {
	TRY(lock_.init());
	type_ = in.qp_type;
	owner_ = in.owner;
	user_ = in.user != 0;
	sq_sig_all_ = in.sq_sig_all != 0;
	port_ = in.port ? in.port : 1;
	pd_ = ktl::RefPtr<Pd>(reinterpret_cast<Pd *>(in.pd));
	scq_ = ktl::RefPtr<CompletionQueue>(reinterpret_cast<CompletionQueue *>(in.send_cq));
	rcq_ = ktl::RefPtr<CompletionQueue>(reinterpret_cast<CompletionQueue *>(in.recv_cq));
	if (in.srq)
		recvq_.srq = ktl::RefPtr<Srq>(reinterpret_cast<Srq *>(in.srq));
	if (in.rss)
		TRY(rss_.init(*dev_, pd_->pdn(), in.uctx, *in.rss));
	xrcd_ = ktl::RefPtr<Xrcd>(reinterpret_cast<Xrcd *>(in.xrcd));
	max_send_sge_ = in.max_send_sge;
	recvq_.max_sge = in.max_recv_sge;
	max_inline_ = in.max_inline_data;
	// Every queue but an XRC target's SQ and its receive side (or an
	// initiator's receive side) has a ring.
	if (in.sq_ring) {
		sq_.init(in.sq_ring, in.sq_log_size, in.sq_stride);
		sq_mask_ = sq_.size() - 1;
		sq_priv_stride_ = sq_priv_stride(in.sq_stride);
		sq_priv_ = static_cast<u8 *>(ktl::zalloc_for(user_, usize(sq_priv_stride_) << in.sq_log_size));
		if (!sq_priv_)
			return Error::from_errno(err::nomem);
	}
	if (in.rq_ring)
		recvq_.rq.init(in.rq_ring, in.rq_log_size, in.rq_stride, in.max_recv_sge);
	recvq_.mp.configure(in.mp_wr_buffer_sz, in.mp_packet_align_sz);
	resp_.res = static_cast<ReadAtomicRes *>(ktl::zalloc_for(user_, sizeof(ReadAtomicRes) * param::max_qp_rd_atom));
	timer_ = sroce_env_timer_create(on_timer, this);
	work_ = sroce_env_work_create(on_work, this);
	if (!resp_.res || !timer_ || !work_)
		return Error::from_errno(err::nomem);
	if (type_ == ib::qpt_gsi) {
		TRY(dev_->qps().insert_at(param::gsi_qpn, this));
		qpn_ = param::gsi_qpn;
	} else if (in.rss_child) {
		TRY(init_rss_child(*in.rss_child, in));
	} else {
		qpn_ = TRY(dev_->qps().insert(this));
	}
	// Per-QP UDP source port entropy (RoCEv2 17.2.4), in the dynamic range.
	u32 h = qpn_ * 0x9e3779b1u;
	sport_ = u16(0xc000 | ((h >> 16) & 0x3fff));
	path_mtu_ = dev_->active_mtu();
	if (type_ == ib::qpt_gsi)
		qkey_ = param::gsi_qkey;
	// Last: nothing below can fail, so a QP on the poller is complete.
	if (user_ && in.uctx && sq_.valid() && reinterpret_cast<Ucontext *>(in.uctx)->sq_poll()) {
		polled_ = true;
		dev_->sq_poller().add(*this);
	}
	return {};
}

Qp::~Qp() {
	// Timers and work were stopped by destroy(); a failed init never
	// started them.
	sroce_env_timer_destroy(timer_);
	sroce_env_work_destroy(work_);
	sroce_env_free(sq_priv_);
	sroce_env_free(resp_.res);
	if (path_)
		sroce_env_path_put(path_);
	dev_->counts().qps.put();
}

void Qp::destroy() {
	// First: the glue frees the SQ ring once this returns, and the poller
	// reads it only while the QP is on its list.
	if (polled_)
		dev_->sq_poller().remove(*this);
	// Before the number is free: a new QP that gets it must not reach the
	// type 2 windows bound through this one (a bind after this fails).
	dev_->keys().close_qp_windows(windows_);
	if (block_)
		detach_rss_child();
	else if (qpn_)
		dev_->qps().remove(qpn_, this, qpn_ != param::gsi_qpn);
	{
		ktl::Guard g(lock_);
		dead_ = true;
		// Not at ~Qp: a packet in flight may hold the QP past this, and
		// the owner may deregister the MRs as soon as this returns.
		keys_.drop_all();
	}
	// Nothing re-arms them once dead_ is set.
	sroce_env_timer_cancel(timer_);
	sroce_env_work_cancel(work_);
	if (scq_)
		scq_->forget_qp(owner_);
	if (rcq_ && rcq_.get() != scq_.get())
		rcq_->forget_qp(owner_);
	rss_.forget_qp(owner_);
	rss_.release();
}

// ---- errors ------------------------------------------------------------------

void Qp::to_error_locked(sroce_env_batch *b, int event) {
	if (state_ == ib::qps_err)
		return;
	state_ = ib::qps_err;
	flush_locked(b);
	update_ack_due_locked(); // a post in error must ring, to be flushed
	if (!dead_)
		sroce_env_event(b, owner_, event);
}

sroce_cqe Qp::recv_status_cqe(u64 wr_id, u8 status) const {
	sroce_cqe c{};
	c.wr_id = wr_id;
	c.status = status;
	c.opcode = ib::wc_recv;
	c.qp_num = qpn_;
	return c;
}

// ---- kernel posts ----------------------------------------------------------

ktl::Result<void> Qp::post_send(const sroce_wqe &wqe, const sroce_sge *sge, const void *data, u32 inline_len) {
	ktl::Guard g(lock_);
	if (user_ || !sq_.valid())
		return Error::from_errno(err::inval);
	if (state_ == ib::qps_reset || state_ == ib::qps_init || state_ == ib::qps_rtr)
		return Error::from_errno(err::inval);
	auto p = sq_.producer(comp_.sq_done);
	if (p.is_error())
		return p.error();
	u32 prod = p.value();
	if (prod - comp_.sq_done >= sq_.size())
		return Error::from_errno(err::nomem);
	u8 *slot = sq_.entry(prod);
	sroce_wqe w = wqe;
	if (w.flags & SROCE_WQE_INLINE) {
		if (inline_len > max_inline_)
			return Error::from_errno(err::inval);
		w.inline_len = inline_len;
		w.num_sge = 0;
		__builtin_memcpy(slot + sizeof(w), data, inline_len);
	} else {
		if (w.num_sge > max_send_sge_)
			return Error::from_errno(err::inval);
		if (w.num_sge) // zero-length work requests may come without SGEs
			__builtin_memcpy(slot + sizeof(w), sge, usize(w.num_sge) * sizeof(sroce_sge));
	}
	__builtin_memcpy(slot, &w, sizeof(w));
	sq_.publish_producer(prod + 1);
	kick_locked(); // kernel callers may be in atomic context: send from work
	return {};
}

ktl::Result<void> Qp::post_recv(const sroce_wqe &wqe, const sroce_sge *sge) {
	ktl::Guard g(lock_);
	if (user_ || !recvq_.rq.valid())
		return Error::from_errno(err::inval);
	if (state_ == ib::qps_reset)
		return Error::from_errno(err::inval);
	TRY(recvq_.rq.post(wqe, sge));
	if (state_ == ib::qps_err)
		kick_locked(); // flushed from work, as ib_drain_rq expects
	return {};
}

void Qp::doorbell(sroce_env_batch *b) {
	count(SROCE_CNT_SQ_DOORBELLS);
	{
		ktl::Guard g(lock_);
		requester_run_locked(b);
	}
	// The poster saw NEED_WAKEUP: the poller sleeps, or this context has
	// not been polled yet. Wake it so that the next posts need no call.
	if (polled_)
		dev_->sq_poller().doorbell();
}

const SqPollOps Qp::poll_ops = {
	[](SqPollTarget &t) { return static_cast<Qp &>(t).sq_.producer_peek(); },
	[](SqPollTarget &t, sroce_env_batch *b) { static_cast<Qp &>(t).sq_poll_drain(b); },
	[](SqPollTarget &t) { static_cast<Qp &>(t).ref(); },
	[](SqPollTarget &t) { static_cast<Qp &>(t).unref(); },
};

// The poller saw the producer move: the doorbell's path, under the same
// lock, so one QP's SQ is never drained twice at once. requester_run_locked
// does nothing once destroy() has marked the QP dead (its ring may be gone).
void Qp::sq_poll_drain(sroce_env_batch *b) {
	ktl::Guard g(lock_);
	requester_run_locked(b);
}

void Qp::snapshot(sroce_core_qp_view *s) {
	ktl::Guard g(lock_);
	*s = {};
	s->state = state_;
	s->type = type_;
	s->dest_qpn = dest_qpn_;
	s->sq_psn = req_.psn;
	s->sq_unacked_psn = comp_.unacked_psn;
	s->rq_psn = resp_.epsn;
	s->msn = resp_.msn;
	s->sq_wqes = req_.sq_fetched - comp_.sq_done;
	s->rd_atomic_out = req_.rd_atomic_out;
	s->rd_atomic_max = max_rd_atomic_;
	s->responses_pending = resp_.res_next - resp_.res_send;
	s->window = req_.window;
	s->window_limit = req_.window_limit;
	s->retries_left = comp_.retries_left;
	s->rnr_retries_left = comp_.rnr_left;
	s->retry_cnt = retry_cnt_;
	s->rnr_retry = rnr_retry_;
	s->timeout = timeout_;
	s->rnr_wait = comp_.rnr_wait;
	s->timer_armed = comp_.timer_armed;
	s->srtt_us = u32(ktl::min(comp_.rec.srtt_ns / 1000, u64(~0u)));
	s->rttvar_us = u32(ktl::min(comp_.rec.rttvar_ns / 1000, u64(~0u)));
	s->retrans_pkts = counters_.get(SROCE_CNT_RETRANS_PKTS);
	s->retrans_timeouts = counters_.get(SROCE_CNT_RETRANS_TIMEOUTS);
	s->xrcd = xrcd_ ? xrcd_->xrcdn() : 0;
}

// ---- timer and work ----------------------------------------------------------

void Qp::kick_locked() {
	if (!dead_)
		sroce_env_work_queue(work_);
}

void Qp::on_work(void *arg, sroce_env_batch *b) {
	Qp *qp = static_cast<Qp *>(arg);
	ktl::Guard g(qp->lock_);
	if (qp->dead_)
		return;
	if (qp->state_ == ib::qps_err) {
		qp->flush_locked(b);
		return;
	}
	qp->requester_run_locked(b);
	qp->send_read_responses_locked(b);
}

// Doorbell skipping (SROCE_SQ_ACK_DUE): while an RC requester has requests
// unacknowledged, their answer (or the retry timer) runs the requester,
// which fetches whatever was posted meanwhile, so a user poster need not
// ring. Written only when it changes. Once cleared, the producer is read
// again (SQ-A1): a post that still saw the flag set skipped its doorbell,
// and its WQE is ours to fetch.
void Qp::update_ack_due_locked() {
	if (!user_ || !sq_.valid())
		return;
	// Timeout 0 (infinite) arms no retry timer and no probe: after a lost
	// ACK only a post would resend, so it must ring.
	bool due = reliable() && timeout_ != 0 && sends_allowed() && !dead_ && req_.psn_high != comp_.unacked_psn;
	// Receive steering: an answer runs the owner's sending while requests
	// are out and more waits to be sent (rx_steer.h, clocked).
	steer_.set_clocked(due && (req_.sq_next != req_.sq_fetched || sq_.producer_peek() != req_.sq_fetched));
	if (due == ack_due_)
		return;
	ack_due_ = due;
	sq_.set_kflags(due ? SROCE_SQ_ACK_DUE : 0);
	if (!due && sq_.producer_peek() != req_.sq_fetched)
		kick_locked();
}

void Qp::on_timer(void *arg, sroce_env_batch *b) {
	Qp *qp = static_cast<Qp *>(arg);
	ktl::Guard g(qp->lock_);
	qp->comp_.timer_armed = false;
	if (qp->dead_)
		return;
	qp->on_timeout_locked(b);
}

} // namespace sroce

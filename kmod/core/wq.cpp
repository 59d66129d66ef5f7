// Wq: creation, the state table, posting, placing an RSS QP's UD messages.
#include "wq.h"
#include "ib_enums.h"
#include "param.h"
#include "qp.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

namespace {

// The transitions ibv_modify_wq may ask for (mlx5's rules): RESET and RDY
// both ways, RDY to ERR, and back to RESET from anywhere. ERR is left only
// through RESET.
constexpr bool wq_moves[ib::wqs_count][ib::wqs_count] = {
	/* from RESET */ {true, true, false},
	/* from RDY   */ {true, true, true},
	/* from ERR   */ {true, false, true},
};
static_assert(wq_moves[ib::wqs_reset][ib::wqs_rdy] && wq_moves[ib::wqs_rdy][ib::wqs_reset]);
static_assert(wq_moves[ib::wqs_rdy][ib::wqs_err] && !wq_moves[ib::wqs_reset][ib::wqs_err]);
static_assert(!wq_moves[ib::wqs_err][ib::wqs_rdy] && wq_moves[ib::wqs_err][ib::wqs_reset]);

} // namespace

ktl::Result<ktl::RefPtr<Wq>> Wq::create(Device &dev, const sroce_core_wq_init &init) {
	Pd *pd = reinterpret_cast<Pd *>(init.pd);
	CompletionQueue *cq = reinterpret_cast<CompletionQueue *>(init.cq);
	if (!pd || !cq || &pd->device() != &dev || &cq->device() != &dev || !init.ring || init.log_size > 31 ||
	    (1u << init.log_size) > param::max_wq_wr || init.max_sge > param::max_wq_sge ||
	    sizeof(sroce_wqe) + usize(init.max_sge) * sizeof(sroce_sge) > init.stride ||
	    (init.mp_wr_buffer_sz && !MpRecv::valid_sizes(init.mp_wr_buffer_sz, init.mp_packet_align_sz)))
		return Error::from_errno(err::inval);
	auto ref = TRY(create_counted<Wq>(dev.counts().wqs,
					  BoundedCount::ceiling(param::max_wq, param::reserve::wq, init.user), err::nomem,
					  ktl::AllocCtx::may_sleep, dev));
	TRY(ref->init(init));
	return ref;
}

ktl::Result<void> Wq::init(const sroce_core_wq_init &init) {
	TRY(lock_.init());
	pd_ = ktl::RefPtr<Pd>(reinterpret_cast<Pd *>(init.pd));
	cq_ = ktl::RefPtr<CompletionQueue>(reinterpret_cast<CompletionQueue *>(init.cq));
	owner_ = init.owner;
	user_ = init.user != 0;
	uctx_ = init.uctx;
	rq_.init(init.ring, init.log_size, init.stride, init.max_sge);
	mp_.configure(init.mp_wr_buffer_sz, init.mp_packet_align_sz);
	// Last: once in the table an RSS QP may name it.
	wqn_ = TRY(dev_->wqs().insert(this));
	listed_ = true;
	return {};
}

Wq::~Wq() {
	KTL_WARN_ON(listed_); // kill() takes it out before the last reference
	dev_->counts().wqs.put();
}

ktl::Result<void> Wq::modify(u32 state, s32 cur, sroce_env_batch *b) {
	ktl::Guard g(lock_);
	if (state >= ib::wqs_count || (cur >= 0 && u32(cur) != state_) || !wq_moves[state_][state])
		return Error::from_errno(err::inval);
	// ERR again flushes what was posted since: a user ring takes posts
	// while the WQ is in an ERR the kernel set (WQ_FATAL), and no doorbell
	// brings them here.
	if (state == state_ && state != ib::wqs_err)
		return {};
	if (state == ib::wqs_err) {
		to_error_locked(b);
		return {};
	}
	if (state == ib::wqs_reset) {
		mp_.drop(); // the buffer in use too
		rq_.flush([](u64) { return true; }); // discarded, not completed
	}
	state_ = state;
	return {};
}

u32 Wq::state() {
	ktl::Guard g(lock_);
	return state_;
}

void Wq::snapshot(sroce_core_wq_view *s) {
	ktl::Guard g(lock_);
	*s = counts_;
}

ktl::Result<void> Wq::post(const sroce_wqe &wqe, const sroce_sge *sge) {
	ktl::Guard g(lock_);
	if (user_ || state_ != ib::wqs_rdy)
		return Error::from_errno(err::inval);
	return rq_.post(wqe, sge);
}

void Wq::to_error_locked(sroce_env_batch *b) {
	state_ = ib::wqs_err;
	flush_locked(b);
}

void Wq::flush_locked(sroce_env_batch *b) {
	if (dead_)
		return;
	auto flushed = [&](u64 wr_id, u16 flags) {
		sroce_cqe c{};
		c.wr_id = wr_id;
		c.status = ib::wc_wr_flush_err;
		c.opcode = ib::wc_recv;
		c.flags = flags;
		return cq_->post(c, owner_, false, b);
	};
	u64 held = 0; // set when a buffer is held (gcc with KASAN cannot tell)
	if (mp_.held(&held)) { // the buffer in use first, released
		mp_.drop();
		flushed(held, SROCE_CQE_MP_CONSUMED);
	}
	rq_.flush([&](u64 wr_id) { return flushed(wr_id, 0); });
}

void Wq::receive_ud(const RxPacket &rx, u32 qp_num, void *qp_owner, const rss::Hash &h, sroce_env_batch *b) {
	ktl::Guard g(lock_);
	if (dead_ || state_ != ib::wqs_rdy) {
		counts_.not_ready++;
		return;
	}
	if (child_qpn_) {
		qp_num = child_qpn_;
		qp_owner = child_owner_;
	}
	if (mp_.enabled()) {
		mp_receive_locked(rx, qp_num, qp_owner, h, b);
		return;
	}
	auto r = rq_.take(wqe_);
	int e = r.is_error() ? r.error().errno_value() : 0;
	if (e == err::again) {
		counts_.no_wqe++; // no receive posted: UD drops
		return;
	}
	if (e == err::proto) { // a corrupt producer index
		fatal_locked(b);
		return;
	}
	// -EINVAL: a malformed WQE, consumed: it completes in error, and the
	// WQ goes to ERR as a QP does (its owner broke the ring's contract).
	u8 st = e ? u8(ib::wc_loc_qp_op_err) : Qp::place_ud(*dev_, wqe_, pdn(), rx);
	(st == ib::wc_success ? counts_.received : counts_.errors)++;
	sroce_cqe c{};
	Qp::fill_ud_recv_cqe(c, wqe_.wr_id, st, rx, qp_num);
	c.hash_value = h.value;
	c.hash_type = u8(h.kind);
	c.flags |= SROCE_CQE_WITH_HASH;
	cq_->post(c, qp_owner, rx.pi.hdr.bth.se, b);
	if (e)
		fatal_locked(b);
}

namespace {

// One message's placement into a multi-packet WQ: MpRecv::place's sink.
struct WqMpSink {
	Wq &wq;
	const RxPacket &rx;
	u32 qp_num;
	void *qp_owner;
	const rss::Hash &h;
	sroce_env_batch *b;

	ktl::Result<void> write(const RecvWqe &w, u32 offset) {
		if (Qp::place_ud(wq.device(), w, wq.pdn(), rx, offset) != ib::wc_success)
			return Error::from_errno(err::fault); // completed as a protection error
		return {};
	}
	void complete(const MpCompletion &mc) {
		sroce_cqe c{};
		if (mc.nop) {
			c.wr_id = mc.wr_id;
			c.opcode = SROCE_CQE_OP_RECV_NOP;
			c.qp_num = qp_num;
		} else {
			Qp::fill_ud_recv_cqe(c, mc.wr_id, mc.status, rx, qp_num);
			c.hash_value = h.value;
			c.hash_type = u8(h.kind);
			c.flags |= SROCE_CQE_WITH_HASH;
		}
		c.mp_offset = mc.offset;
		if (mc.consumed)
			c.flags |= SROCE_CQE_MP_CONSUMED;
		wq.cq().post(c, qp_owner, !mc.nop && rx.pi.hdr.bth.se, b);
	}
};

} // namespace

void Wq::mp_receive_locked(const RxPacket &rx, u32 qp_num, void *qp_owner, const rss::Hash &h,
			   sroce_env_batch *b) {
	WqMpSink sink{*this, rx, qp_num, qp_owner, h, b};
	auto take = [&](RecvWqe &w) -> ktl::Result<void> {
		auto r = rq_.take(w); // a malformed WQE: place() completes it in error
		if (r.is_error())
			return r.error();
		return {};
	};
	u32 n = Qp::grh_len + rx.pi.payload_len;
	auto r = mp_.place(n, take, sink, n);
	int e = r.is_error() ? r.error().errno_value() : 0;
	if (e == err::again) {
		counts_.no_wqe++; // no buffer posted: UD drops
		return;
	}
	(e ? counts_.errors : counts_.received)++;
	// A corrupt ring, or a WQE of the wrong size (completed in error):
	// the owner broke the ring's contract, as a QP's would.
	if (e == err::proto || e == err::inval)
		fatal_locked(b);
}

ktl::Result<void> Wq::bind_child(u32 qpn, void *owner) {
	ktl::Guard g(lock_);
	if (child_qpn_ || dead_)
		return Error::from_errno(err::busy);
	child_qpn_ = qpn;
	child_owner_ = owner;
	return {};
}

void Wq::unbind_child(u32 qpn) {
	ktl::Guard g(lock_);
	if (child_qpn_ == qpn) {
		child_qpn_ = 0;
		child_owner_ = nullptr;
	}
}

bool Wq::busy() {
	ktl::Guard g(lock_);
	return default_users.load(ktl::MemoryOrder::relaxed) || child_qpn_ != 0;
}

// Checked and shut under lock_, where add_default_user and bind_child look:
// no QP can name the WQ between destroy's check and the destroy.
ktl::Result<void> Wq::close() {
	ktl::Guard g(lock_);
	if (default_users.load(ktl::MemoryOrder::relaxed) || child_qpn_)
		return Error::from_errno(err::busy);
	dead_ = true;
	return {};
}

bool Wq::add_default_user() {
	ktl::Guard g(lock_);
	if (dead_)
		return false;
	default_users.fetch_add(1, ktl::MemoryOrder::relaxed);
	return true;
}

void Wq::fatal_locked(sroce_env_batch *b) {
	if (!dead_)
		sroce_env_event(b, owner_, ib::ev_wq_fatal);
	to_error_locked(b);
}

void Wq::kill() {
	if (listed_) {
		dev_->wqs().remove(wqn_, this);
		listed_ = false;
	}
	ktl::Guard g(lock_);
	dead_ = true;
}

} // namespace sroce

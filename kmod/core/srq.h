// Srq: a shared receive queue: a RecvQueue under its own lock, which QPs
// take one receive WQE from at the first packet of each message. A corrupt
// ring puts it in error; the limit event fires once when the number of
// posted WQEs drops below the armed limit.
//
// An XRC SRQ (IBTA annex A14) belongs to an XRC domain and has its own CQ:
// XRC targets of that domain take its WQEs for the messages whose XRCETH
// names it, check memory keys against its PD, and complete into its CQ.
#pragma once
#include "cq.h"
#include "pd.h"
#include "mp_recv.h"
#include "recv_queue.h"
#include "xrcd.h"

namespace sroce {

class Srq : public ktl::RefCounted<Srq> {
public:
	static ktl::Result<ktl::RefPtr<Srq>> create(Device &dev, const sroce_core_srq_init &init);

	// Copies the next receive WQE out. -EAGAIN when empty, -EPROTO when the
	// ring is corrupt (the SRQ is then in error: SRQ_ERR raised once).
	ktl::Result<void> take(RecvWqe &out, sroce_env_batch *b);
	ktl::Result<void> post(const sroce_wqe &wqe, const sroce_sge *sge);
	ktl::Result<void> set_limit(u32 limit);
	void query(u32 *max_wr, u32 *max_sge, u32 *limit);
	u32 srqn() const { return srqn_; }
	u32 pdn() const { return pd_->pdn(); }
	// XRC: the domain (null for a basic SRQ), immutable.
	const Xrcd *xrcd() const { return xrcd_.get(); }
	// XRC: posts a receive completion of a target QP into this SRQ's CQ,
	// under the SRQ's lock, so that it orders against kill(): once the SRQ
	// is destroyed (and its CQ may be next) nothing reaches the CQ again.
	enum class Posted { ok, cq_full, srq_gone };
	Posted post_cqe(const sroce_cqe &cqe, void *qp_owner, bool solicited, sroce_env_batch *b);
	// Multi-packet receive (mp_recv.h): the buffer sizes (0: not one).
	u32 mp_buffer_size() const { return mp_.buffer_size(); }
	// Places one packet into the SRQ's buffer in use, under the SRQ's
	// lock, from reservation to completion (MpRecv::place); an XRC
	// target's sink posts with post_cqe_held. -EPROTO once in error.
	template <typename Sink>
	ktl::Result<void> mp_place(u32 len, Sink &sink, u32 byte_len, sroce_env_batch *b) {
		ktl::Guard g(lock_);
		if (error_)
			return ktl::Error::from_errno(ktl::err::proto);
		return mp_.place(len, [&](RecvWqe &w) { return take_locked(w, b); }, sink, byte_len);
	}
	// post_cqe inside mp_place's sink (the lock held).
	Posted post_cqe_held(const sroce_cqe &cqe, void *qp_owner, bool solicited, sroce_env_batch *b);
	// Out of the SRQN table, no more events or completions (destroy).
	void kill();

private:
	friend class ktl::RefCounted<Srq>;
	template <typename T, typename... A> friend T *ktl::create(ktl::AllocCtx, A &&...);
	template <typename T> friend void ktl::destroy(T *);
	Srq(Device &dev) : dev_(&dev) {}
	~Srq();
	ktl::Result<void> init(const sroce_core_srq_init &init);
	ktl::Result<void> take_locked(RecvWqe &out, sroce_env_batch *b);

	ktl::RefPtr<Device> dev_;
	ktl::RefPtr<Pd> pd_;
	ktl::RefPtr<Xrcd> xrcd_;           // XRC only
	ktl::RefPtr<CompletionQueue> cq_;  // XRC only
	void *owner_ = nullptr;
	u32 srqn_ = 0;
	bool listed_ = false; // in the device's SRQN table
	bool user_ = false;
	ktl::SpinLock lock_{SROCE_LOCK_SRQ};
	RecvQueue rq_;       // guarded by lock_
	MpRecv mp_;          // guarded by lock_ (its sizes are immutable)
	u32 limit_ = 0;      // guarded by lock_: 0 = disarmed
	bool error_ = false; // guarded by lock_
	bool dead_ = false;  // guarded by lock_
};

} // namespace sroce

// Srq: creation, taking and posting receive WQEs, the limit event.
#include "srq.h"
#include "ib_enums.h"
#include "param.h"
#include "qp.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

ktl::Result<ktl::RefPtr<Srq>> Srq::create(Device &dev, const sroce_core_srq_init &init) {
	// An XRC SRQ comes with its CQ, a basic one has none; all of one device.
	Xrcd *x = reinterpret_cast<Xrcd *>(init.xrcd);
	CompletionQueue *cq = reinterpret_cast<CompletionQueue *>(init.cq);
	Pd *pd = reinterpret_cast<Pd *>(init.pd);
	if (!x != !cq || (x && (&x->device() != &dev || &cq->device() != &dev)) || (pd && &pd->device() != &dev))
		return Error::from_errno(err::inval);
	if (init.mp_wr_buffer_sz && !MpRecv::valid_sizes(init.mp_wr_buffer_sz, init.mp_packet_align_sz))
		return Error::from_errno(err::inval);
	if (!init.pd || !init.ring || init.log_size > 31 || (1u << init.log_size) > param::max_srq_wr ||
	    init.max_sge > param::max_srq_sge ||
	    sizeof(sroce_wqe) + usize(init.max_sge) * sizeof(sroce_sge) > init.stride)
		return Error::from_errno(err::inval);
	auto ref = TRY(create_counted<Srq>(dev.counts().srqs,
					   BoundedCount::ceiling(param::max_srq, param::reserve::srq, init.user), err::nomem,
					   ktl::AllocCtx::may_sleep, dev));
	TRY(ref->init(init));
	return ref;
}

ktl::Result<void> Srq::init(const sroce_core_srq_init &init) {
	TRY(lock_.init());
	pd_ = ktl::RefPtr<Pd>(reinterpret_cast<Pd *>(init.pd));
	xrcd_ = ktl::RefPtr<Xrcd>(reinterpret_cast<Xrcd *>(init.xrcd));
	cq_ = ktl::RefPtr<CompletionQueue>(reinterpret_cast<CompletionQueue *>(init.cq));
	owner_ = init.owner;
	user_ = init.user != 0;
	limit_ = init.srq_limit;
	rq_.init(init.ring, init.log_size, init.stride, init.max_sge);
	mp_.configure(init.mp_wr_buffer_sz, init.mp_packet_align_sz);
	// Last: once in the table an XRC target may find it.
	srqn_ = TRY(dev_->srqs().insert(this));
	listed_ = true;
	return {};
}

Srq::~Srq() {
	KTL_WARN_ON(listed_); // kill() takes it out before the last reference
	dev_->counts().srqs.put();
}

ktl::Result<void> Srq::take(RecvWqe &out, sroce_env_batch *b) {
	ktl::Guard g(lock_);
	if (error_)
		return Error::from_errno(err::proto);
	return take_locked(out, b);
}

ktl::Result<void> Srq::take_locked(RecvWqe &out, sroce_env_batch *b) {
	auto r = rq_.take(out);
	if (r.is_error()) {
		if (r.error().errno_value() == err::proto) {
			error_ = true;
			if (!dead_)
				sroce_env_event(b, owner_, ib::ev_srq_err);
		}
		return r.error(); // -EINVAL: the WQE is consumed, the caller completes it in error
	}
	u32 posted = r.value();
	if (limit_ && posted - 1 < limit_) {
		limit_ = 0; // one event per arm (IBTA 10.2.9.3)
		if (!dead_)
			sroce_env_event(b, owner_, ib::ev_srq_limit_reached);
	}
	return {};
}

ktl::Result<void> Srq::post(const sroce_wqe &wqe, const sroce_sge *sge) {
	ktl::Guard g(lock_);
	if (user_)
		return Error::from_errno(err::inval);
	return rq_.post(wqe, sge);
}

ktl::Result<void> Srq::set_limit(u32 limit) {
	ktl::Guard g(lock_);
	if (limit > rq_.size())
		return Error::from_errno(err::inval);
	limit_ = limit;
	return {};
}

void Srq::query(u32 *max_wr, u32 *max_sge, u32 *limit) {
	ktl::Guard g(lock_);
	*max_wr = rq_.size();
	*max_sge = rq_.max_sge();
	*limit = limit_;
}

Srq::Posted Srq::post_cqe(const sroce_cqe &cqe, void *qp_owner, bool solicited, sroce_env_batch *b) {
	ktl::Guard g(lock_);
	return post_cqe_held(cqe, qp_owner, solicited, b);
}

Srq::Posted Srq::post_cqe_held(const sroce_cqe &cqe, void *qp_owner, bool solicited, sroce_env_batch *b) {
	if (dead_ || !cq_)
		return Posted::srq_gone;
	return cq_->post(cqe, qp_owner, solicited, b) ? Posted::ok : Posted::cq_full;
}

void Srq::kill() {
	if (listed_) {
		dev_->srqs().remove(srqn_, this);
		listed_ = false;
	}
	ktl::Guard g(lock_);
	dead_ = true;
}

} // namespace sroce

// The completion queue: posting CQEs, arming, overflow into CQ_ERR, resize (cq.h).
#include "cq.h"
#include "ib_enums.h"
#include "param.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

ktl::Result<ktl::RefPtr<CompletionQueue>> CompletionQueue::create(Device &dev, const sroce_core_cq_init &init) {
	if (!init.ring || init.log_size > 31 || (1u << init.log_size) > param::max_cqe + 1)
		return Error::from_errno(err::inval);
	auto ref = TRY(create_counted<CompletionQueue>(dev.counts().cqs,
						       BoundedCount::ceiling(param::max_cq, param::reserve::cq, init.user),
						       err::nomem, ktl::AllocCtx::may_sleep, dev));
	TRY(ref->init(init)); // the destructor gives the count back
	return ref;
}

ktl::Result<void> CompletionQueue::init(const sroce_core_cq_init &init) {
	TRY(lock_.init());
	owner_ = init.owner;
	user_ = init.user != 0;
	timestamp_ = init.timestamp != 0;
	ring_.init(init.ring, init.log_size, sizeof(sroce_cqe));
	if (!user_) {
		owners_ = static_cast<void **>(sroce_env_zalloc(sizeof(void *) << init.log_size, 0));
		if (!owners_)
			return Error::from_errno(err::nomem);
	}
	return {};
}

CompletionQueue::~CompletionQueue() {
	if (mod_timer_) // kill() never ran: a CQ that was never handed out
		sroce_env_timer_destroy(mod_timer_);
	// An XRC target may drop an SRQ's last reference, and so its CQ's,
	// under its lock.
	sroce_env_free_deferred(owners_);
	dev_->counts().cqs.put();
}

void CompletionQueue::raise_error_locked(sroce_env_batch *b) {
	if (error_)
		return;
	error_ = true;
	if (!dead_)
		sroce_env_event(b, owner_, ib::ev_cq_err);
}

bool CompletionQueue::post(const sroce_cqe &cqe, void *qp_owner, bool solicited, sroce_env_batch *b) {
	ktl::Guard g(lock_);
	if (error_)
		return false;
	u32 cons = kcons_;
	if (user_) {
		auto c = ring_.consumer(prod_);
		if (c.is_error()) { // the poller corrupted its index
			raise_error_locked(b);
			return false;
		}
		cons = c.value();
	}
	if (prod_ - cons >= ring_.size()) {
		raise_error_locked(b);
		return false;
	}
	const sroce_cqe *src = &cqe;
	sroce_cqe stamped;
	if (timestamp_) { // the moment of completion, in the device clock (ns)
		stamped = cqe;
		stamped.timestamp = sroce_env_now_ns();
		src = &stamped;
	}
	__builtin_memcpy(ring_.entry(prod_), src, sizeof(*src));
	if (owners_)
		owners_[prod_ & (ring_.size() - 1)] = qp_owner;
	ring_.publish_producer(++prod_);
	// An error completion satisfies a solicited-only arm too (IBTA 11.4.2.2).
	if (armed_ == ib::cq_solicited && (solicited || cqe.status != ib::wc_success)) {
		notify_locked(b);
	} else if (armed_ == ib::cq_next_comp) {
		// Moderation holds the event back until mod_count_ completions,
		// or until the timer the first of them started.
		if (mod_count_ > 1 && ++mod_pending_ < mod_count_) {
			if (mod_pending_ == 1 && mod_period_us_ && mod_timer_ && !dead_)
				sroce_env_timer_arm(mod_timer_, u64(mod_period_us_) * 1000);
		} else {
			notify_locked(b);
		}
	}
	return true;
}

// The completion event of the current arm; the arm is used up.
void CompletionQueue::notify_locked(sroce_env_batch *b) {
	armed_ = 0;
	mod_pending_ = 0;
	if (!dead_)
		sroce_env_event(b, owner_, SROCE_ENV_EVENT_COMP);
}

// cq_period ran out before cq_count completions: the ones there are
// reported. A timer that finds none (the count was reached first) does
// nothing.
void CompletionQueue::on_moderation_timer(void *arg, sroce_env_batch *b) {
	auto *cq = static_cast<CompletionQueue *>(arg);
	ktl::Guard g(cq->lock_);
	if (cq->mod_pending_ && cq->armed_ == ib::cq_next_comp)
		cq->notify_locked(b);
}

ktl::Result<void> CompletionQueue::moderate(u32 count, u32 period_us) {
	if (count > param::max_cq_moderation_count || period_us > param::max_cq_moderation_period)
		return Error::from_errno(err::inval);
	// The timer is made here, where allocating may sleep, and only once.
	sroce_env_timer *fresh = nullptr;
	if (!mod_timer_ && count > 1 && period_us) {
		fresh = sroce_env_timer_create(on_moderation_timer, this);
		if (!fresh)
			return Error::from_errno(err::nomem);
	}
	bool dead;
	{
		ktl::Guard g(lock_);
		dead = dead_;
		if (!dead) {
			if (fresh && !mod_timer_) {
				mod_timer_ = fresh;
				fresh = nullptr;
			}
			mod_count_ = count;
			mod_period_us_ = period_us;
			mod_pending_ = 0;
		}
	}
	if (fresh) // not needed: another moderate() installed one, or the CQ died
		sroce_env_timer_destroy(fresh);
	if (dead)
		return Error::from_errno(err::inval);
	return {};
}

int CompletionQueue::req_notify(int flags) {
	ktl::Guard g(lock_);
	int kind = flags & ib::cq_solicited_mask;
	// NEXT_COMP is the wider arm: a solicited request never narrows it.
	if (kind == ib::cq_next_comp || armed_ == 0)
		armed_ = kind;
	mod_pending_ = 0; // moderation counts the completions of this arm
	if (!(flags & ib::cq_report_missed))
		return 0;
	u32 cons = kcons_;
	if (user_) {
		auto c = ring_.consumer(prod_);
		cons = c.is_error() ? prod_ : c.value();
	}
	return prod_ != cons ? 1 : 0;
}

int CompletionQueue::poll(sroce_cqe *out, void **qp_owner, int n) {
	ktl::Guard g(lock_);
	if (user_)
		return -err::inval;
	int got = 0;
	while (got < n && kcons_ != prod_) {
		__builtin_memcpy(&out[got], ring_.entry(kcons_), sizeof(sroce_cqe));
		qp_owner[got] = owners_[kcons_ & (ring_.size() - 1)];
		kcons_++;
		got++;
	}
	ring_.set_consumer(kcons_);
	return got;
}

void CompletionQueue::forget_qp(void *qp_owner) {
	ktl::Guard g(lock_);
	if (!owners_)
		return;
	for (u32 i = kcons_; i != prod_; i++)
		if (owners_[i & (ring_.size() - 1)] == qp_owner)
			owners_[i & (ring_.size() - 1)] = nullptr;
}

ktl::Result<void> CompletionQueue::resize(void *mem, u32 log_size) {
	if (!mem || log_size > 31 || (1u << log_size) > param::max_cqe + 1)
		return Error::from_errno(err::inval);
	void **owners = nullptr;
	if (!user_) {
		owners = static_cast<void **>(sroce_env_zalloc(sizeof(void *) << log_size, 0));
		if (!owners)
			return Error::from_errno(err::nomem);
	}
	int rc = 0;
	{
		ktl::Guard g(lock_);
		rc = move_to_locked(mem, log_size, owners);
	}
	// Whichever array lost is freed outside the lock (vfree may sleep).
	sroce_env_free(owners);
	return ktl::from_rc(rc);
}

// Moves the pending CQEs to the start of the new ring; both indices restart
// there (the provider reads them from the new header). On success `owners`
// is swapped with the old array, which the caller frees.
int CompletionQueue::move_to_locked(void *mem, u32 log_size, void **&owners) {
	u32 cons = kcons_;
	if (user_) {
		auto c = ring_.consumer(prod_);
		if (c.is_error())
			return -err::inval;
		cons = c.value();
	}
	u32 pending = prod_ - cons;
	if (pending > (1u << log_size))
		return -err::inval;
	Ring next;
	next.init(mem, log_size, sizeof(sroce_cqe));
	for (u32 i = 0; i < pending; i++) {
		__builtin_memcpy(next.entry(i), ring_.entry(cons + i), sizeof(sroce_cqe));
		if (owners)
			owners[i] = owners_[(cons + i) & (ring_.size() - 1)];
	}
	next.set_consumer(0);
	next.publish_producer(pending);
	ring_ = next;
	prod_ = pending;
	kcons_ = 0;
	ktl::swap(owners, owners_);
	return 0;
}

void CompletionQueue::kill() {
	sroce_env_timer *t;
	{
		ktl::Guard g(lock_);
		dead_ = true;
		armed_ = 0;
		t = mod_timer_;
		mod_timer_ = nullptr;
	}
	// No post arms it once dead_ is set; this waits for a running callback.
	if (t)
		sroce_env_timer_destroy(t);
}

void CompletionQueue::snapshot(sroce_core_cq_view *s) {
	ktl::Guard g(lock_);
	*s = {};
	s->entries = ring_.size();
	u32 cons = kcons_;
	if (user_) {
		auto c = ring_.consumer(prod_);
		cons = c.is_error() ? prod_ - ring_.size() : c.value(); // a corrupt index: show it full
	}
	s->fill = prod_ - cons;
	s->armed = u32(armed_);
	s->error = error_;
	s->user = user_;
}

} // namespace sroce

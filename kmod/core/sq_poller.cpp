// SqPoller: the per-device thread that polls user SQs, and the doorbell
// that wakes it. The thread's loop is the state machine of
// sq_poll_state.h; Documentation/sq-poller.md describes it.
#include "sq_poller.h"
#include "abi.h"
#include "ktl/alloc.h"

namespace sroce {

SqPoller::~SqPoller() { stop(); }

ktl::Result<void> SqPoller::start(u64 idle_ns, const char *name, u64 grace_ns, int cpu) {
	if (!lock_ready_) {
		TRY(lock_.init());
		lock_ready_ = true;
	}
	idle_ns_ = idle_ns;
	// Past idle_ns the poller sleeps anyway: a doze needs a shorter grace.
	grace_ns_ = grace_ns < idle_ns / 2 ? grace_ns : idle_ns / 2;
	// A few naps per grace: each is two context switches.
	nap_ns_ = grace_ns_ / 4 < max_nap_ns ? grace_ns_ / 4 : max_nap_ns;
	thread_ = sroce_env_thread_create(thread_main, this, name, cpu);
	if (!thread_)
		return ktl::Error::from_errno(ktl::err::nomem);
	return {};
}

void SqPoller::stop() {
	if (!thread_)
		return;
	sroce_env_thread_stop(thread_);
	thread_ = nullptr;
	ktl::Guard g(lock_);
	// Contexts and QPs leave before their device goes.
	KTL_WARN_ON(!targets_.empty() || !ctxs_.empty());
}

void SqPoller::add_ctx(SqPollCtx &c) {
	ktl::Guard g(lock_);
	ctxs_.push_back(c);
}

void SqPoller::remove_ctx(SqPollCtx &c) {
	ktl::Guard g(lock_);
	if (c.poll_node.linked())
		ctxs_.remove(c);
}

void SqPoller::add(SqPollTarget &t) {
	ktl::Guard g(lock_);
	t.poll_seen = t.poll_ops_->producer(t);
	targets_.push_back(t);
	ntargets_++;
}

void SqPoller::remove(SqPollTarget &t) {
	ktl::Guard g(lock_);
	if (t.poll_node.linked()) {
		targets_.remove(t);
		ntargets_--;
	}
}

// The next target, moved to the back: walks take targets from the front,
// so successive walks go round the list.
SqPollTarget &SqPoller::rotate_locked() {
	SqPollTarget &t = *targets_.pop_front();
	targets_.push_back(t);
	return t;
}

void SqPoller::note_walk_locked(usize n) {
	if (n > max_walk_.load(ktl::MemoryOrder::relaxed))
		max_walk_.store(n, ktl::MemoryOrder::relaxed);
}

void SqPoller::doorbell() {
	// SQ-W2: the request is visible before the wake reads the thread's
	// state; pairs with the barrier of sroce_env_thread_prepare_sleep
	// (set_current_state) before the thread checks wake_req_.
	if (!thread_)
		return;
	// A doze holds for idle_ns, a nap for its length: the poster ran its
	// WRs inline already, and a thread woken now would most likely find
	// nothing and doze again, two context switches per post on the
	// contended CPU.
	u64 until = doze_until_.load(ktl::MemoryOrder::acquire);
	if (until && sroce_env_now_ns() < until) {
		held_.fetch_add(1, ktl::MemoryOrder::relaxed);
		return;
	}
	wake_req_.store(1, ktl::MemoryOrder::seq_cst);
	if (asleep())
		wakeups_.fetch_add(1, ktl::MemoryOrder::relaxed);
	sroce_env_thread_wake(thread_);
}

SqPoller::Stats SqPoller::stats() const {
	auto r = ktl::MemoryOrder::relaxed;
	return {sleeps_.load(r), wakeups_.load(r), drains_.load(r), rechecks_.load(r), dozes_.load(r),
		held_.load(r), naps_.load(r), max_walk_.load(r)};
}

void SqPoller::set_need_wakeup_locked(bool on) {
	ctxs_.for_each([on](SqPollCtx &c) {
		// Only the poller writes the flag word once the context joined.
		u32 f = ktl::load_relaxed(c.flags);
		f = on ? (f | SROCE_CTX_NEED_WAKEUP) : (f & ~u32(SROCE_CTX_NEED_WAKEUP));
		ktl::store_relaxed(c.flags, f);
	});
}

void SqPoller::set_need_wakeup(bool on) {
	ktl::Guard g(lock_);
	set_need_wakeup_locked(on);
}

// The sleep path's look at every target (after SQ-W1), walk_max at a time
// with the lock dropped in between: a user with thousands of polled QPs
// must not hold interrupts off for a walk of them all. A target added
// meanwhile needs no look (its context's NEED_WAKEUP is already up, so
// its posts ring); one removed is not polled any more. One that moved
// stays at the front, where the next scan starts: rotated to the back, a
// scan of walk_max might not reach it before the poller is idle again.
bool SqPoller::any_moved() {
	usize left;
	{
		ktl::Guard g(lock_);
		left = ntargets_;
	}
	while (left) {
		ktl::Guard g(lock_);
		usize k = ktl::min(ktl::min(left, walk_max), ntargets_);
		if (!k)
			break;
		note_walk_locked(k);
		for (usize i = 0; i < k; i++) {
			SqPollTarget &t = *targets_.front();
			if (t.poll_ops_->producer(t) != t.poll_seen)
				return true;
			rotate_locked();
		}
		left -= k;
	}
	return false;
}

namespace {
void drain_one(void *arg, sroce_env_batch *b) {
	auto *t = static_cast<SqPollTarget *>(arg);
	t->poll_ops_->drain(*t, b);
}
} // namespace

bool SqPoller::poll_once() {
	SqPollTarget *got[batch_max];
	usize n = 0;
	{
		ktl::Guard g(lock_);
		// At most walk_max targets a scan, from the front, each moved to
		// the back: with many QPs a scan holds the lock (interrupts off)
		// for a bounded walk, and successive scans go round them all.
		usize k = ktl::min(walk_max, ntargets_);
		note_walk_locked(k);
		for (usize i = 0; i < k && n < batch_max; i++) {
			SqPollTarget &t = rotate_locked();
			u32 p = t.poll_ops_->producer(t);
			if (p == t.poll_seen)
				continue;
			t.poll_seen = p;
			t.poll_ops_->get(t);
			got[n++] = &t;
		}
		if (n)
			pass_.fetch_add(1, ktl::MemoryOrder::relaxed); // odd: the lock publishes it
	}
	if (!n)
		return false;
	// A batch per target: a batch holds SROCE_ENV_BATCH_EVENTS events,
	// which one QP's send path never exceeds but batch_max erroring QPs
	// on one armed CQ did (each its own QP event, plus the CQ's).
	for (usize i = 0; i < n; i++) {
		sroce_env_run_batched(drain_one, got[i]);
		// After the flush: a last reference may free a QP, which may sleep.
		got[i]->poll_ops_->put(*got[i]);
	}
	pass_.fetch_add(1, ktl::MemoryOrder::release); // even: pairs with sync's acquire
	drains_.fetch_add(n, ktl::MemoryOrder::relaxed);
	return true;
}

void SqPoller::sync() {
	u32 v;
	{
		// After the caller's remove(): a pass that collected its target
		// made pass_ odd under this lock, before.
		ktl::Guard g(lock_);
		v = pass_.load(ktl::MemoryOrder::relaxed);
	}
	if (!(v & 1))
		return;
	while (pass_.load(ktl::MemoryOrder::acquire) == v)
		sroce_env_thread_nap(nullptr, 20 * 1000);
}

void SqPoller::thread_main(void *arg, sroce_env_thread *self) { static_cast<SqPoller *>(arg)->run(self); }

// The thread's own variables; only it touches them.
struct SqPoller::Loop {
	sroce_env_thread *self;
	SqPollState state;
	u64 last_work;       // the last work found, doorbell or wake-up
	u64 contended_since; // 0: the CPU was free at the last look
	u64 now;             // when the last scan found nothing
};

bool SqPoller::check_transition(SqPollState from, SqPollState to) {
	return !KTL_WARN_ON(!sq_poll_transition_ok(from, to));
}

void SqPoller::move_to(Loop &l, SqPollState next) {
	check_transition(l.state, next);
	u32 bit = sq_poll_transition_bit(l.state, next);
	u32 taken = taken_.load(ktl::MemoryOrder::relaxed);
	// Only this thread writes: no read-modify-write, a store per new pair.
	if (!(taken & bit))
		taken_.store(taken | bit, ktl::MemoryOrder::relaxed);
	l.state = next;
}

void SqPoller::run(sroce_env_thread *self) {
	Loop l{self, SqPollState::poll, sroce_env_now_ns(), 0, 0};
	while (l.state != SqPollState::stop) {
		SqPollState next = SqPollState::stop;
		switch (l.state) {
		case SqPollState::poll:
		case SqPollState::nap: {
			Seen seen = scan(l); // a doorbell moves NAP to POLL
			next = l.state == SqPollState::poll ? poll_state(l, seen) : nap_state(l, seen);
			break;
		}
		case SqPollState::doze:
			next = doze_state(l);
			break;
		case SqPollState::sleep:
			next = sleep_state(l);
			break;
		case SqPollState::stop:
			break;
		}
		move_to(l, next);
	}
	// Stopped: posters ring, and their doorbells drain inline.
	set_need_wakeup(true);
}

// POLL and NAP: should_stop, a doorbell, then one scan of the targets.
SqPoller::Seen SqPoller::scan(Loop &l) {
	if (sroce_env_thread_should_stop(l.self))
		return Seen::stop;
	if (wake_req_.exchange(0, ktl::MemoryOrder::acq_rel)) {
		// A poster rang because it saw NEED_WAKEUP (a new context, or
		// one that joined while we slept): polling resumes for all.
		set_need_wakeup(false);
		move_to(l, SqPollState::poll);
		l.last_work = sroce_env_now_ns();
	}
	if (poll_once()) {
		l.last_work = sroce_env_now_ns();
		return Seen::work;
	}
	l.now = sroce_env_now_ns();
	if (l.now - l.last_work >= idle_ns_)
		return Seen::idle;
	if (!sroce_env_thread_contended(l.self)) {
		l.contended_since = 0;
		return Seen::cpu_free;
	}
	// Others want this CPU. Brief contention (often the ksoftirqd our own
	// sends woke) gets the CPU at once and polling goes on afterwards;
	// meanwhile posts ring and run inline, as in a doze, instead of
	// waiting for us. If it lasts, doze: spinning would take whole time
	// slices from them.
	if (!l.contended_since)
		l.contended_since = l.now;
	return l.now - l.contended_since < grace_ns_ ? Seen::cpu_wanted : Seen::cpu_kept;
}

// POLL: awake, spinning while the CPU is free. NEED_WAKEUP is down once a
// doorbell brought it here (after a sleep it stays up until one does).
SqPollState SqPoller::poll_state(Loop &l, Seen seen) {
	switch (seen) {
	case Seen::work:
	case Seen::cpu_free:
		sroce_env_thread_relax(l.self);
		return SqPollState::poll;
	case Seen::cpu_wanted:
		set_need_wakeup(true);
		nap(l);
		return SqPollState::nap;
	default:
		return awake_exit(seen);
	}
}

// NAP: NEED_WAKEUP up while others have the CPU, scanning after each nap.
SqPollState SqPoller::nap_state(Loop &l, Seen seen) {
	switch (seen) {
	case Seen::work:
		// The flag stays up until a scan finds the CPU free.
		sroce_env_thread_relax(l.self);
		return SqPollState::nap;
	case Seen::cpu_free:
		// Polling goes on, so no barrier: a post that still saw the
		// flag rang and ran inline.
		set_need_wakeup(false);
		sroce_env_thread_relax(l.self);
		return SqPollState::poll;
	case Seen::cpu_wanted:
		nap(l);
		return SqPollState::nap;
	default:
		return awake_exit(seen);
	}
}

// Where POLL and NAP go alike: STOP, DOZE or SLEEP.
SqPollState SqPoller::awake_exit(Seen seen) {
	if (seen == Seen::stop)
		return SqPollState::stop;
	// With a nap's flag up or not: the sleep path sets and clears the
	// flags itself.
	return seen == Seen::cpu_kept ? SqPollState::doze : SqPollState::sleep;
}

void SqPoller::nap(Loop &l) {
	naps_.fetch_add(1, ktl::MemoryOrder::relaxed);
	// Held like a doze: waking us would only cut the nap short, and we
	// poll after it anyway.
	doze_until_.store(l.now + nap_ns_, ktl::MemoryOrder::release);
	sroce_env_thread_nap(l.self, nap_ns_);
	doze_until_.store(0, ktl::MemoryOrder::release);
}

// DOZE: the CPU stayed contended past the grace. Asleep as in SLEEP, but
// for idle_ns doorbells do not wake the thread (doorbell()).
SqPollState SqPoller::doze_state(Loop &l) {
	if (sleep_cancelled(l))
		return SqPollState::poll;
	dozes_.fetch_add(1, ktl::MemoryOrder::relaxed);
	doze_until_.store(sroce_env_now_ns() + idle_ns_, ktl::MemoryOrder::release);
	sleep_until_woken(l);
	return SqPollState::poll;
}

// SLEEP: nothing for idle_ns; asleep until a doorbell or stop.
SqPollState SqPoller::sleep_state(Loop &l) {
	if (!sleep_cancelled(l))
		sleep_until_woken(l);
	return SqPollState::poll;
}

// The way into DOZE and SLEEP. True if the last look found something: the
// sleep is cancelled, NEED_WAKEUP down again, and polling resumes.
bool SqPoller::sleep_cancelled(Loop &l) {
	l.contended_since = 0;
	// Idle for idle_ns (or contended): announce it, then look once more
	// before sleeping. From prepare_sleep on, a doorbell's wake is not
	// lost.
	sroce_env_thread_prepare_sleep(l.self);
	bool moved;
	{
		ktl::Guard g(lock_);
		set_need_wakeup_locked(true);
	}
	// SQ-W1: the NEED_WAKEUP stores before the producer loads. Pairs with
	// the provider's full barrier in sroce_sq_doorbell (SQ-W1) between
	// its producer store and its NEED_WAKEUP load: either we see its
	// WQEs here, or it sees the flag and rings the doorbell.
	ktl::full_barrier();
	moved = any_moved();
	// SQ-W2 pair: a doorbell's wake_req_ store is seen here, or its
	// wake comes after prepare_sleep and sleep returns at once.
	if (!moved && !wake_req_.load(ktl::MemoryOrder::acquire) && !sroce_env_thread_should_stop(l.self))
		return false;
	sroce_env_thread_cancel_sleep(l.self);
	set_need_wakeup(false);
	rechecks_.fetch_add(1, ktl::MemoryOrder::relaxed);
	l.last_work = sroce_env_now_ns();
	return true;
}

void SqPoller::sleep_until_woken(Loop &l) {
	asleep_.store(1, ktl::MemoryOrder::release);
	sleeps_.fetch_add(1, ktl::MemoryOrder::relaxed);
	sroce_env_thread_sleep(l.self);
	asleep_.store(0, ktl::MemoryOrder::release);
	doze_until_.store(0, ktl::MemoryOrder::release);
	// Woken by a doorbell (POLL's scan handles it first) or by stop.
	l.last_work = sroce_env_now_ns();
}

} // namespace sroce

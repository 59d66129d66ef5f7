// A fake send queue and a started poller for the SQ poller tests against
// it (test_sq_poller.cpp, test_sq_poller_contended.cpp). post() plays the
// provider exactly as libuser/qp.c does: publish the producer, full
// barrier, read NEED_WAKEUP, ring only if set.
#pragma once
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "env.h"
#include "env_host.h"
#include "sq_poller.h"

extern "C" {
#include "sroce-abi.h"
}

namespace sqfx {

using sroce::SqPollCtx;
using sroce::SqPoller;
using sroce::SqPollTarget;

inline uint64_t now_ns() { return sroce_env_now_ns(); }

inline void spin_for_ns(uint64_t ns) {
	uint64_t end = now_ns() + ns;
	while (now_ns() < end)
		;
}

// A send queue as the poller sees it: a shared producer index and a
// drain that consumes up to it under the queue's own lock (the QP lock).
struct FakeSq : SqPollTarget {
	static const sroce::SqPollOps ops;
	FakeSq() : SqPollTarget(ops) {}
	sroce_ring_header hdr{};
	std::mutex lock;             // the QP lock: doorbell and poller drains
	std::atomic<uint32_t> consumed{0};
	std::atomic<int> in_drain{0};
	std::atomic<int> overlaps{0};     // two drainers at once (must stay 0)
	std::atomic<int> after_remove{0}; // ring read after remove() (must stay 0)
	std::atomic<bool> removed{false};
	std::atomic<uint64_t> poller_drains{0};
	std::atomic<int> refs{0};         // the poller's references (Qp: ref/unref)

	uint32_t producer() {
		if (removed.load())
			after_remove++;
		return __atomic_load_n(&hdr.producer, __ATOMIC_ACQUIRE);
	}
	void drain_locked() {
		if (in_drain.fetch_add(1) != 0)
			overlaps++;
		uint32_t p = __atomic_load_n(&hdr.producer, __ATOMIC_ACQUIRE);
		consumed.store(p, std::memory_order_release);
		in_drain.fetch_sub(1);
	}
	void drain() {
		std::lock_guard<std::mutex> g(lock);
		poller_drains++;
		drain_locked();
	}
};

inline const sroce::SqPollOps FakeSq::ops = {
	[](SqPollTarget &t) { return static_cast<FakeSq &>(t).producer(); },
	[](SqPollTarget &t, sroce_env_batch *) { static_cast<FakeSq &>(t).drain(); },
	[](SqPollTarget &t) { static_cast<FakeSq &>(t).refs++; },
	[](SqPollTarget &t) { static_cast<FakeSq &>(t).refs--; },
};

// The provider's post + sroce_doorbell, step for step. Returns true if it
// rang.
inline bool post(FakeSq &sq, SqPoller &poller, const sroce_context_page &page, uint32_t n) {
	uint32_t prod = sq.hdr.producer + n;
	__atomic_store_n(&sq.hdr.producer, prod, __ATOMIC_RELEASE); // WQ-P1
	// SQ-W1 (provider side): producer store before the NEED_WAKEUP load.
	std::atomic_thread_fence(std::memory_order_seq_cst);
	if (!(__atomic_load_n(&page.flags, __ATOMIC_RELAXED) & SROCE_CTX_NEED_WAKEUP))
		return false;
	// The doorbell system call: Qp::doorbell drains inline, then wakes.
	{
		std::lock_guard<std::mutex> g(sq.lock);
		sq.drain_locked();
	}
	poller.doorbell();
	return true;
}

// Waits until everything posted is consumed; false after timeout_ns.
inline bool wait_consumed(FakeSq &sq, uint64_t timeout_ns) {
	uint64_t end = now_ns() + timeout_ns;
	while (sq.consumed.load(std::memory_order_acquire) != sq.hdr.producer) {
		if (now_ns() > end)
			return false;
		std::this_thread::yield();
	}
	return true;
}

inline uint64_t env_u64(const char *name, uint64_t fallback) {
	const char *v = std::getenv(name);
	return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

struct Page {
	sroce_context_page page{};
	Page() { page.flags = SROCE_CTX_NEED_WAKEUP; } // as Ucontext::fill_page
};

// Polls pred every millisecond for up to 3 s; its last answer.
template <class Pred> bool wait_for(Pred pred) {
	for (int i = 0; i < 3000 && !pred(); i++)
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	return pred();
}

// A started poller with one polled context and no queue yet; stop() takes
// the context away and stops it.
struct PolledCtx {
	SqPoller poller;
	Page p;
	SqPollCtx ctx;
	explicit PolledCtx(uint64_t idle_ns) {
		env_host::clear();
		REQUIRE(!poller.start(idle_ns, "test_sqp").is_error());
		ctx.flags = &p.page.flags;
		poller.add_ctx(ctx);
	}
	void stop() {
		poller.remove_ctx(ctx);
		poller.stop();
	}
};

// A started poller with one polled context and one send queue; the
// destructor takes them away and stops it, as Qp::destroy and close() do.
struct OnePolledSq {
	SqPoller poller;
	Page p;
	SqPollCtx ctx;
	FakeSq sq;
	explicit OnePolledSq(uint64_t idle_ns, uint64_t grace_ns = SqPoller::default_contend_grace_ns) {
		env_host::clear();
		REQUIRE(!poller.start(idle_ns, "test_sqp", grace_ns).is_error());
		ctx.flags = &p.page.flags;
		poller.add_ctx(ctx);
		poller.add(sq);
	}
	~OnePolledSq() { stop(); }
	void stop() {
		if (!poller.running())
			return;
		poller.remove(sq);
		poller.remove_ctx(ctx);
		poller.stop();
	}
};

// Sets what sroce_env_thread_contended answers; back to "not contended" at
// the end of the test, whatever happens.
struct Contended {
	explicit Contended(bool on) { env_host::set_thread_contended(on); }
	~Contended() { env_host::set_thread_contended(false); }
	void set(bool on) { env_host::set_thread_contended(on); }
};

} // namespace sqfx

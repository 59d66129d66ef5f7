// The SQ poller (kmod/core/sq_poller.cpp) with real threads: its poller
// thread runs on the host env's std::thread with kernel task-state
// semantics, and a producer thread plays the provider exactly as
// libuser/qp.c does (publish the producer, full barrier, read NEED_WAKEUP,
// ring only if set). Bursts alternate with idle gaps around sq_idle_us, so
// posts keep landing while the poller decides to sleep: a lost wake-up
// shows as a WR that is never drained.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "env_host.h"
#include "ib_enums.h"
#include "sq_poller.h"

extern "C" {
#include "core.h"
#include "sroce-abi.h"
}

namespace {

using sroce::SqPollCtx;
using sroce::SqPoller;
using sroce::SqPollTarget;

uint64_t now_ns() { return sroce_env_now_ns(); }

void spin_for_ns(uint64_t ns) {
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

const sroce::SqPollOps FakeSq::ops = {
	[](SqPollTarget &t) { return static_cast<FakeSq &>(t).producer(); },
	[](SqPollTarget &t, sroce_env_batch *) { static_cast<FakeSq &>(t).drain(); },
	[](SqPollTarget &t) { static_cast<FakeSq &>(t).refs++; },
	[](SqPollTarget &t) { static_cast<FakeSq &>(t).refs--; },
};

// The provider's post + sroce_doorbell, step for step. Returns true if it
// rang.
bool post(FakeSq &sq, SqPoller &poller, const sroce_context_page &page, uint32_t n) {
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
bool wait_consumed(FakeSq &sq, uint64_t timeout_ns) {
	uint64_t end = now_ns() + timeout_ns;
	while (sq.consumed.load(std::memory_order_acquire) != sq.hdr.producer) {
		if (now_ns() > end)
			return false;
		std::this_thread::yield();
	}
	return true;
}

uint64_t env_u64(const char *name, uint64_t fallback) {
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

} // namespace

TEST_CASE("SQ poller: bursts and idle gaps around sq_idle_us lose and delay no WR", "[sq_poller][threads]") {
	const uint64_t idle_us = 20;
	const uint64_t cycles = env_u64("SROCE_SQPOLL_CYCLES", 100000);
	// A WR the poller missed would wait forever (nobody rings again): 1 s
	// is orders of magnitude above a wake-up on a loaded 2-core machine.
	const uint64_t timeout_ns = 1000000000ull;

	OnePolledSq f(idle_us * 1000);
	SqPoller &poller = f.poller;
	FakeSq &sq = f.sq;
	Page &ctx_page = f.p;

	std::mt19937_64 rng(env_u64("SROCE_SIM_SEED", 6));
	uint64_t doorbells = 0, max_ns = 0, lost = 0, c = 0;
	// At least `cycles`, and on until the poller slept 500 times (how
	// promptly a loaded machine runs it decides how often it sleeps).
	const uint64_t min_sleeps = std::min<uint64_t>(cycles / 200, 500);
	for (; (c < cycles || poller.stats().sleeps < min_sleeps) && c < 10 * cycles && !lost; c++) {
		uint32_t burst = 1 + rng() % 8;
		uint64_t t0 = now_ns();
		for (uint32_t i = 0; i < burst; i++)
			doorbells += post(sq, poller, ctx_page.page, 1);
		if (!wait_consumed(sq, timeout_ns)) {
			lost++;
			break;
		}
		max_ns = std::max(max_ns, now_ns() - t0);
		// Gaps from 0 to 3x the idle time: the poller keeps polling,
		// is mid-decision, or sleeps when the next burst comes.
		// Every 16th gap is 4x the idle time: the poller surely sleeps.
		spin_for_ns(c % 16 == 15 ? 4 * idle_us * 1000 : rng() % (3 * idle_us * 1000));
	}
	auto st = poller.stats();
	std::printf("sq_poller stress: %llu cycles, %u WRs, %llu doorbells, %llu poller drains, %llu sleeps, "
		    "%llu re-checks, max burst->done %llu us\n",
		    (unsigned long long)c, sq.hdr.producer, (unsigned long long)doorbells,
		    (unsigned long long)sq.poller_drains.load(), (unsigned long long)st.sleeps,
		    (unsigned long long)st.rechecks, (unsigned long long)(max_ns / 1000));
	CHECK(lost == 0);
	CHECK(sq.consumed.load() == sq.hdr.producer);
	CHECK(sq.overlaps.load() == 0);
	// Both halves of the protocol ran many times: posts drained by the
	// poller without a system call, and sleeps ended by doorbells.
	CHECK(sq.poller_drains.load() > cycles / 20);
	CHECK(st.sleeps >= min_sleeps);
	CHECK(doorbells >= min_sleeps);
	CHECK(doorbells < sq.hdr.producer);
	f.stop();
	CHECK(!poller.running());
	CHECK(env_host::warnings() == 0);
}

TEST_CASE("SQ poller: sleeps when idle with NEED_WAKEUP set, a doorbell resumes polling", "[sq_poller][threads]") {
	env_host::clear();
	SqPoller poller;
	// Long enough for the checks below to see it awake.
	REQUIRE(!poller.start(300 * 1000 * 1000, "test_sqp").is_error());
	Page a, b;
	SqPollCtx ca, cb;
	ca.flags = &a.page.flags;
	cb.flags = &b.page.flags;
	poller.add_ctx(ca);
	poller.add_ctx(cb);
	FakeSq sq;
	poller.add(sq);

	// Nothing to do: asleep, and every polled context says so.
	REQUIRE(wait_for([&] { return poller.asleep(); }));
	CHECK((a.page.flags & SROCE_CTX_NEED_WAKEUP));
	CHECK((b.page.flags & SROCE_CTX_NEED_WAKEUP));
	auto s0 = poller.stats();
	std::this_thread::sleep_for(std::chrono::milliseconds(20));
	CHECK(poller.stats().sleeps == s0.sleeps); // really asleep, not cycling

	// The first post rings; the poller wakes and clears the flag for all.
	CHECK(post(sq, poller, a.page, 1));
	REQUIRE(wait_for([&] { return !(b.page.flags & SROCE_CTX_NEED_WAKEUP); }));
	CHECK(!(a.page.flags & SROCE_CTX_NEED_WAKEUP));
	// While it polls, posts need no doorbell and still drain.
	uint64_t rang = 0;
	for (int i = 0; i < 100; i++) {
		rang += post(sq, poller, b.page, 1);
		REQUIRE(wait_consumed(sq, 1000000000ull));
	}
	CHECK(rang < 100);
	CHECK(sq.poller_drains.load() > 0);
	// Its CPU is not contended (env_host's default): it never dozed.
	CHECK(poller.stats().dozes == 0);
	// And it goes back to sleep.
	REQUIRE(wait_for([&] { return poller.asleep(); }));
	CHECK((a.page.flags & SROCE_CTX_NEED_WAKEUP));

	poller.remove(sq);
	poller.remove_ctx(ca);
	poller.remove_ctx(cb);
	poller.stop();
	CHECK(env_host::warnings() == 0);
}

namespace {
// Sets what sroce_env_thread_contended answers; back to "not contended" at
// the end of the test, whatever happens.
struct Contended {
	explicit Contended(bool on) { env_host::set_thread_contended(on); }
	~Contended() { env_host::set_thread_contended(false); }
	void set(bool on) { env_host::set_thread_contended(on); }
};
} // namespace

TEST_CASE("SQ poller: dozes when its CPU stays contended past the grace; the doze holds for sq_idle_us",
	  "[sq_poller][threads]") {
	// Far longer than the test: only contention can make it sleep, and
	// its doze then holds until the end.
	OnePolledSq f(300ull * 1000 * 1000 * 1000);
	SqPoller &poller = f.poller;
	FakeSq &sq = f.sq;
	Page &p = f.p;

	Contended busy(true);
	// A doorbell wakes it; it finds nothing, naps for the grace and,
	// the CPU still being wanted, goes back to sleep with NEED_WAKEUP set
	// instead of spinning.
	CHECK(post(sq, poller, p.page, 1));
	REQUIRE(wait_for([&] { return poller.asleep(); }));
	CHECK((p.page.flags & SROCE_CTX_NEED_WAKEUP));
	auto s0 = poller.stats();
	CHECK(s0.dozes == 1);
	CHECK(s0.naps > 0);
	// While the doze holds, every post rings and runs inline; the
	// doorbells leave the thread asleep.
	for (int i = 0; i < 100; i++) {
		CHECK(post(sq, poller, p.page, 1));
		CHECK(sq.consumed.load() == sq.hdr.producer);
	}
	auto s1 = poller.stats();
	CHECK(s1.held == s0.held + 100);
	CHECK(s1.sleeps == s0.sleeps);
	CHECK(s1.wakeups == s0.wakeups);
	CHECK(poller.asleep());
	CHECK(env_host::warnings() == 0);
}

TEST_CASE("SQ poller: within the grace it naps with NEED_WAKEUP set, and polls again when the CPU is free",
	  "[sq_poller][threads]") {
	// A grace of a second: the contention below never outlasts it,
	// however the host schedules us.
	OnePolledSq f(300ull * 1000 * 1000 * 1000, 1000ull * 1000 * 1000);
	SqPoller &poller = f.poller;
	FakeSq &sq = f.sq;
	Page &p = f.p;
	auto flag_set = [&] { return (p.page.flags & SROCE_CTX_NEED_WAKEUP) != 0; };

	// The first post rings (a context starts with NEED_WAKEUP); polling
	// then resumes and the poller clears the flag.
	CHECK(post(sq, poller, p.page, 1));
	REQUIRE(wait_for([&] { return !flag_set(); }));

	// Contended: it naps, the flag up, so posts ring and run inline
	// instead of waiting for it; it does not sleep, and the doorbells
	// during a nap leave it napping (held, as in a doze).
	Contended busy(true);
	REQUIRE(wait_for(flag_set));
	// Posts until one lands in a nap (the poller is almost always in one).
	auto s0 = poller.stats();
	for (int i = 0; i < 100000 && poller.stats().held == s0.held; i++) {
		// Between naps a doorbell wakes it, which clears the flag until
		// the next nap: a post then leaves its WR to the poller.
		if (post(sq, poller, p.page, 1))
			REQUIRE(sq.consumed.load() == sq.hdr.producer);
		else
			REQUIRE(wait_consumed(sq, 1000000000ull));
	}
	CHECK(poller.stats().held > s0.held);
	CHECK(poller.stats().wakeups == s0.wakeups);
	CHECK(!poller.asleep());
	// The CPU free again: the flag clears, posts need no system call.
	busy.set(false);
	REQUIRE(wait_for([&] { return !flag_set(); }));
	uint64_t rang = 0;
	for (int i = 0; i < 100; i++) {
		rang += post(sq, poller, p.page, 1);
		REQUIRE(wait_consumed(sq, 1000000000ull));
	}
	CHECK(rang == 0);

	// Contention coming and going every 20 us (CI's 78-sq-poll: the
	// ksoftirqd our sends woke and kworkers made the poller doze for
	// sq_idle_us each time, 353 write() for 2000 posts): naps only.
	std::atomic<bool> stop{false};
	std::thread toggler([&] {
		for (bool on = true; !stop.load(); on = !on) {
			busy.set(on);
			spin_for_ns(20000);
		}
	});
	// Posts go on until the poller has met the contention 200 times
	// (the toggler needs the CPU too: on a loaded host that takes a while).
	uint64_t end = now_ns() + 60ull * 1000 * 1000 * 1000;
	while (poller.stats().naps < 200 && now_ns() < end) {
		post(sq, poller, p.page, 1);
		REQUIRE(wait_consumed(sq, 1000000000ull));
	}
	stop.store(true);
	toggler.join();
	busy.set(false);
	auto st = poller.stats();
	REQUIRE(st.naps >= 200);
	CHECK(st.dozes == 0);
	CHECK(st.sleeps == 0);
	REQUIRE(wait_for([&] { return !flag_set(); }));
	CHECK(!post(sq, poller, p.page, 1));
	CHECK(wait_consumed(sq, 1000000000ull));
	CHECK(env_host::warnings() == 0);
}

TEST_CASE("SQ poller: contention coming and going loses no WR", "[sq_poller][threads]") {
	const uint64_t idle_us = 20;
	// A 2 us grace: contention that outlasts it within the 20 us of
	// polling is common, so dozes happen often.
	OnePolledSq f(idle_us * 1000, 2000);
	SqPoller &poller = f.poller;
	FakeSq &sq = f.sq;
	Page &p = f.p;

	// A thread toggles contention every 0-40 us while bursts are posted
	// with gaps of 0-60 us: the poller polls, naps, dozes, holds and
	// sleeps in every order. Every WR is drained, never by two drainers at once.
	Contended busy(false);
	std::atomic<bool> stop{false};
	std::thread toggler([&] {
		std::mt19937 r(7);
		while (!stop.load()) {
			busy.set(r() % 2);
			spin_for_ns(r() % 40000);
		}
	});
	std::mt19937_64 rng(env_u64("SROCE_SIM_SEED", 6));
	uint64_t lost = 0, rang = 0, posted = 0;
	const uint64_t cycles = env_u64("SROCE_SQPOLL_CYCLES", 100000) / 5;
	for (uint64_t c = 0; c < cycles && !lost; c++) {
		uint32_t burst = 1 + rng() % 8;
		for (uint32_t i = 0; i < burst; i++)
			rang += post(sq, poller, p.page, 1);
		posted += burst;
		if (!wait_consumed(sq, 1000000000ull))
			lost++;
		spin_for_ns(rng() % (3 * idle_us * 1000));
	}
	stop.store(true);
	toggler.join();
	auto st = poller.stats();
	std::printf("sq_poller contended: %llu WRs, %llu doorbells, %llu poller drains, %llu sleeps, %llu dozes, "
		    "%llu held, %llu re-checks\n",
		    (unsigned long long)posted, (unsigned long long)rang,
		    (unsigned long long)sq.poller_drains.load(), (unsigned long long)st.sleeps,
		    (unsigned long long)st.dozes, (unsigned long long)st.held, (unsigned long long)st.rechecks);
	CHECK(lost == 0);
	CHECK(sq.consumed.load() == sq.hdr.producer);
	CHECK(sq.overlaps.load() == 0);
	// Both modes ran: posts drained by the poller, and dozes.
	CHECK(sq.poller_drains.load() > 0);
	CHECK(st.dozes > 0);
	CHECK(rang < posted);
	CHECK(env_host::warnings() == 0);
}

TEST_CASE("SQ poller: targets added and removed while it polls are never read after remove", "[sq_poller][threads]") {
	env_host::clear();
	SqPoller poller;
	REQUIRE(!poller.start(5 * 1000, "test_sqp").is_error());
	Page p;
	SqPollCtx ctx;
	ctx.flags = &p.page.flags;
	poller.add_ctx(ctx);
	std::atomic<bool> stop{false};
	// A busy queue keeps the poller scanning.
	FakeSq busy;
	poller.add(busy);
	std::thread feeder([&] {
		while (!stop.load()) {
			post(busy, poller, p.page, 1);
			std::this_thread::yield();
		}
	});
	int violations = 0;
	for (int round = 0; round < 2000; round++) {
		auto *sq = new FakeSq;
		poller.add(*sq);
		post(*sq, poller, p.page, 1 + round % 3);
		if (round % 2)
			wait_consumed(*sq, 1000000000ull);
		poller.remove(*sq);
		sq->removed.store(true);
		// A drain collected before remove may still run (the QP checks
		// its own state) and holds a reference until it is done.
		while (sq->refs.load())
			std::this_thread::yield();
		violations += sq->after_remove.load();
		delete sq;
	}
	stop.store(true);
	feeder.join();
	CHECK(violations == 0);
	CHECK(wait_consumed(busy, 1000000000ull));
	poller.remove(busy);
	poller.remove_ctx(ctx);
	poller.stop();
	CHECK(env_host::warnings() == 0);
}

namespace {
void *zring(unsigned int entries, unsigned int entry_size, unsigned int *log_size) {
	unsigned long bytes = 0;
	REQUIRE(sroce_core_ring_size(entries, 1u << 16, entry_size, log_size, &bytes) == 0);
	void *mem = std::aligned_alloc(4096, bytes);
	std::memset(mem, 0, bytes);
	return mem;
}
} // namespace

TEST_CASE("SQ poller on a device: polled contexts' QPs are scanned, NO_SQ_POLL contexts ring", "[sq_poller][threads]") {
	env_host::clear();
	long base = env_host::live_allocations();
	sroce_core_dev_init init{};
	const unsigned char mac[6] = {0x02, 0, 0, 0, 0, 0x66};
	std::memcpy(init.mac, mac, 6);
	init.netdev_mtu = 9000;
	init.netdev_up = 1;
	init.sq_poll = 1;
	init.sq_idle_us = 300000; // awake long enough for the checks
	std::strcpy(init.poller_name, "test_sqp");
	sroce_core_dev *dev = nullptr;
	REQUIRE(sroce_core_dev_create(&init, &dev) == 0);
	sroce_core_sq_poll_stats st{};
	sroce_core_dev_sq_poll(dev, &st);
	CHECK(st.running == 1);

	// Two contexts: one polled, one in doorbell mode.
	sroce_alloc_ucontext_req req{};
	req.abi_version = SROCE_ABI_VERSION;
	sroce_alloc_ucontext_resp resp{};
	sroce_core_ucontext *polled = nullptr, *bell = nullptr;
	REQUIRE(sroce_core_ucontext_create(dev, &req, sizeof(req), &resp, &polled) == 0);
	CHECK((resp.caps & SROCE_UCTX_CAP_SQ_POLL));
	req.flags = SROCE_UCTX_REQ_NO_SQ_POLL;
	REQUIRE(sroce_core_ucontext_create(dev, &req, sizeof(req), &resp, &bell) == 0);
	CHECK(!(resp.caps & SROCE_UCTX_CAP_SQ_POLL));
	std::vector<unsigned char> page_p(SROCE_PAGE_SIZE), page_b(SROCE_PAGE_SIZE);
	sroce_core_ucontext_fill_page(polled, page_p.data());
	sroce_core_ucontext_fill_page(bell, page_b.data());
	auto *pp = reinterpret_cast<sroce_context_page *>(page_p.data());
	auto *pb = reinterpret_cast<sroce_context_page *>(page_b.data());
	// Both start by ringing.
	CHECK((pp->flags & SROCE_CTX_NEED_WAKEUP));
	CHECK((pb->flags & SROCE_CTX_NEED_WAKEUP));

	sroce_core_pd *pd = nullptr;
	REQUIRE(sroce_core_pd_create(dev, &pd) == 0);
	sroce_core_cq_init ci{};
	int cq_owner = 0;
	ci.owner = &cq_owner;
	ci.ring = zring(64, sizeof(sroce_cqe), &ci.log_size);
	ci.user = 1;
	sroce_core_cq *cq = nullptr;
	REQUIRE(sroce_core_cq_create(dev, &ci, &cq) == 0);

	struct UserQp {
		sroce_core_qp *qp = nullptr;
		void *sq = nullptr, *rq = nullptr;
		int owner = 0;
	} qa, qb;
	auto make_qp = [&](UserQp &q, sroce_core_ucontext *uc) {
		sroce_core_qp_init qi{};
		qi.owner = &q.owner;
		qi.qp_type = sroce::ib::qpt_rc;
		qi.port = 1;
		qi.pd = pd;
		qi.send_cq = cq;
		qi.recv_cq = cq;
		qi.max_send_sge = 1;
		qi.max_recv_sge = 1;
		qi.user = 1;
		qi.uctx = uc;
		qi.sq_stride = sroce_core_wqe_stride(1, 0);
		qi.rq_stride = qi.sq_stride;
		q.sq = qi.sq_ring = zring(16, qi.sq_stride, &qi.sq_log_size);
		q.rq = qi.rq_ring = zring(16, qi.rq_stride, &qi.rq_log_size);
		REQUIRE(sroce_core_qp_create(dev, &qi, &q.qp) == 0);
	};
	make_qp(qa, polled);
	make_qp(qb, bell);

	auto drains = [&] {
		sroce_core_dev_sq_poll(dev, &st);
		return st.drains;
	};
	// The poller wakes on the first doorbell of the polled context...
	sroce_env_run_batched([](void *q, sroce_env_batch *b) { sroce_core_qp_doorbell((sroce_core_qp *)q, b); },
			      qa.qp);
	for (int i = 0; i < 2000 && (pp->flags & SROCE_CTX_NEED_WAKEUP); i++)
		std::this_thread::sleep_for(std::chrono::microseconds(50));
	// ...and then sees the producer move with no doorbell at all. (The QP
	// is in RESET: the send path runs and finds nothing it may send.)
	uint64_t d0 = drains();
	__atomic_store_n(&static_cast<sroce_ring_header *>(qa.sq)->producer, 1u, __ATOMIC_RELEASE);
	for (int i = 0; i < 2000 && drains() == d0; i++)
		std::this_thread::sleep_for(std::chrono::microseconds(50));
	CHECK(drains() == d0 + 1);
	// The doorbell-only context's QP is not polled and its flag stays.
	__atomic_store_n(&static_cast<sroce_ring_header *>(qb.sq)->producer, 1u, __ATOMIC_RELEASE);
	std::this_thread::sleep_for(std::chrono::milliseconds(5));
	CHECK(drains() == d0 + 1);
	CHECK((pb->flags & SROCE_CTX_NEED_WAKEUP));
	// Idle again: asleep, NEED_WAKEUP set in the polled page.
	for (int i = 0; i < 3000 && !st.asleep; i++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
		sroce_core_dev_sq_poll(dev, &st);
	}
	CHECK(st.asleep == 1);
	CHECK((pp->flags & SROCE_CTX_NEED_WAKEUP));

	// Teardown in the glue's order; the poller thread stops with the device.
	sroce_core_qp_destroy(qa.qp);
	sroce_core_qp_destroy(qb.qp);
	sroce_core_ucontext_destroy(polled);
	sroce_core_ucontext_destroy(bell);
	sroce_core_cq_destroy(cq);
	sroce_core_pd_destroy(pd);
	sroce_core_dev_destroy(dev);
	for (void *m : {qa.sq, qa.rq, qb.sq, qb.rq, ci.ring})
		std::free(m);
	CHECK(env_host::live_allocations() == base);
	CHECK(env_host::warnings() == 0);
}

// One poller pass that errors many QPs at once onto one armed CQ: each QP
// raises its own QP_FATAL, the CQ one completion event. The glue's batch
// holds SROCE_ENV_BATCH_EVENTS distinct events (so does the host's, which
// warns and drops beyond it): one batch for the whole pass overflowed with
// 33 (a WARN a user could trigger at will, and lost events).
TEST_CASE("SQ poller: a pass erroring 40 QPs onto one armed CQ loses no event", "[sq_poller][threads]") {
	env_host::clear();
	env_host::clear_unsimulated_events();
	long base = env_host::live_allocations();
	sroce_core_dev_init init{};
	const unsigned char mac[6] = {0x02, 0, 0, 0, 0, 0x67};
	std::memcpy(init.mac, mac, 6);
	init.netdev_mtu = 9000;
	init.netdev_up = 1;
	init.sq_poll = 1;
	init.sq_idle_us = 1000;
	std::strcpy(init.poller_name, "test_sqp_ovf");
	sroce_core_dev *dev = nullptr;
	REQUIRE(sroce_core_dev_create(&init, &dev) == 0);

	sroce_alloc_ucontext_req req{};
	req.abi_version = SROCE_ABI_VERSION;
	sroce_alloc_ucontext_resp resp{};
	sroce_core_ucontext *uc = nullptr;
	REQUIRE(sroce_core_ucontext_create(dev, &req, sizeof(req), &resp, &uc) == 0);
	std::vector<unsigned char> page(SROCE_PAGE_SIZE);
	sroce_core_ucontext_fill_page(uc, page.data());
	auto *pg = reinterpret_cast<sroce_context_page *>(page.data());
	sroce_core_pd *pd = nullptr;
	REQUIRE(sroce_core_pd_create(dev, &pd) == 0);
	sroce_core_cq_init ci{};
	int cq_owner = 0;
	ci.owner = &cq_owner;
	ci.ring = zring(64, sizeof(sroce_cqe), &ci.log_size);
	ci.user = 1;
	sroce_core_cq *cq = nullptr;
	REQUIRE(sroce_core_cq_create(dev, &ci, &cq) == 0);
	REQUIRE(sroce_core_cq_req_notify(cq, sroce::ib::cq_next_comp) == 0);

	constexpr int nqps = 41; // 40 that fail and one whose doorbell wakes the poller
	struct UserQp {
		sroce_core_qp *qp = nullptr;
		void *sq = nullptr, *rq = nullptr;
		unsigned int stride = 0;
		int owner = 0;
	};
	std::vector<UserQp> qps(nqps);
	auto batched = [](auto fn) {
		sroce_env_run_batched([](void *f, sroce_env_batch *b) { (*static_cast<decltype(fn) *>(f))(b); }, &fn);
	};
	for (UserQp &q : qps) {
		sroce_core_qp_init qi{};
		qi.owner = &q.owner;
		qi.qp_type = sroce::ib::qpt_ud;
		qi.port = 1;
		qi.pd = pd;
		qi.send_cq = cq;
		qi.recv_cq = cq;
		qi.max_send_sge = 1;
		qi.max_recv_sge = 1;
		qi.user = 1;
		qi.uctx = uc;
		q.stride = qi.sq_stride = sroce_core_wqe_stride(1, 0);
		qi.rq_stride = qi.sq_stride;
		q.sq = qi.sq_ring = zring(16, qi.sq_stride, &qi.sq_log_size);
		q.rq = qi.rq_ring = zring(16, qi.rq_stride, &qi.rq_log_size);
		REQUIRE(sroce_core_qp_create(dev, &qi, &q.qp) == 0);
		int rc = -1;
		sroce_core_qp_attr at{};
		at.qp_state = sroce::ib::qps_init;
		at.port_num = 1;
		at.qkey = 0x11111111;
		batched([&](sroce_env_batch *b) {
			rc = sroce_core_qp_modify(q.qp, &at,
						  sroce::ib::attr_state | sroce::ib::attr_pkey_index | sroce::ib::attr_port |
							  sroce::ib::attr_qkey,
						  b);
		});
		REQUIRE(rc == 0);
		for (unsigned int st : {sroce::ib::qps_rtr, sroce::ib::qps_rts}) {
			at = {};
			at.qp_state = st;
			int mask = sroce::ib::attr_state | (st == sroce::ib::qps_rts ? sroce::ib::attr_sq_psn : 0);
			batched([&](sroce_env_batch *b) { rc = sroce_core_qp_modify(q.qp, &at, mask, b); });
			REQUIRE(rc == 0);
		}
	}
	// Asleep (NEED_WAKEUP up): the posts below all wait for one pass.
	sroce_core_sq_poll_stats st{};
	for (int i = 0; i < 3000 && !st.asleep; i++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
		sroce_core_dev_sq_poll(dev, &st);
	}
	REQUIRE(st.asleep == 1);
	REQUIRE((pg->flags & SROCE_CTX_NEED_WAKEUP));
	// A UD SEND naming an AH that does not exist: LOC_QP_OP_ERR, the QP
	// goes to the error state (QP_FATAL).
	for (int i = 0; i + 1 < nqps; i++) {
		auto *hdr = static_cast<sroce_ring_header *>(qps[i].sq);
		auto *w = reinterpret_cast<sroce_wqe *>(static_cast<unsigned char *>(qps[i].sq) +
							SROCE_RING_ENTRIES_OFFSET);
		*w = {};
		w->wr_id = 1000 + i;
		w->opcode = sroce::ib::wr_send;
		w->flags = SROCE_WQE_SIGNALED; // no SGE: a zero-length SEND
		w->ud.ah_handle = 0xdead0000u + i;
		w->ud.remote_qpn = 1;
		w->ud.remote_qkey = 0x11111111;
		__atomic_store_n(&hdr->producer, 1u, __ATOMIC_RELEASE);
	}
	// The last QP's empty doorbell wakes the poller, which finds 40 SQs moved.
	batched([&](sroce_env_batch *b) { sroce_core_qp_doorbell(qps[nqps - 1].qp, b); });
	auto fatal_events = [&] {
		int n = 0;
		for (auto [owner, kind] : env_host::unsimulated_events())
			for (int i = 0; i + 1 < nqps; i++)
				if (owner == &qps[i].owner && kind == sroce::ib::ev_qp_fatal)
					n++;
		return n;
	};
	for (int i = 0; i < 5000 && fatal_events() < nqps - 1; i++)
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	CHECK(fatal_events() == nqps - 1);
	int comp = 0;
	for (auto [owner, kind] : env_host::unsimulated_events())
		if (owner == &cq_owner && kind == SROCE_ENV_EVENT_COMP)
			comp++;
	CHECK(comp == 1);
	auto *cqh = static_cast<sroce_ring_header *>(ci.ring);
	CHECK(__atomic_load_n(&cqh->producer, __ATOMIC_ACQUIRE) == unsigned(nqps - 1));
	CHECK(env_host::warnings() == 0);

	for (UserQp &q : qps)
		sroce_core_qp_destroy(q.qp);
	sroce_core_ucontext_destroy(uc);
	sroce_core_cq_destroy(cq);
	sroce_core_pd_destroy(pd);
	sroce_core_dev_destroy(dev);
	for (UserQp &q : qps) {
		std::free(q.sq);
		std::free(q.rq);
	}
	std::free(ci.ring);
	CHECK(env_host::live_allocations() == base);
	env_host::clear_unsimulated_events();
}

// The SQ poller when its CPU is wanted elsewhere: within the grace it naps
// with NEED_WAKEUP set, past it it dozes for sq_idle_us, and contention
// coming and going loses no WR. The wake-up protocol itself is in
// test_sq_poller.cpp.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdio>
#include <random>
#include <thread>

#include "env_host.h"
#include "sq_poller_fake.h"

using namespace sqfx;

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
	// Past the cycles, posting goes on until the poller has dozed at least
	// once: on a loaded host the toggler may not have had the CPU to make
	// contention outlast the grace (seen: 0 dozes in 20000 cycles at load 4).
	uint64_t end = now_ns() + 120ull * 1000 * 1000 * 1000;
	for (uint64_t c = 0; !lost && (c < cycles || (poller.stats().dozes == 0 && now_ns() < end)); c++) {
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

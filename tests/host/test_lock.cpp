#include <catch2/catch.hpp>

#include <csignal>
#include <thread>
#include <utility>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "env_host.h"
#include "ktl/lock.h"

TEST_CASE("Guard serialises updates under a SpinLock", "[ktl][lock]") {
	ktl::SpinLock lock(SROCE_LOCK_TEST);
	REQUIRE_FALSE(lock.init().is_error());
	{
		ktl::Guard g(lock);
		CHECK(env_host::locks_held() == 1);
	}
	CHECK(env_host::locks_held() == 0);
	// A non-atomic read-modify-write: only mutual exclusion keeps it exact.
	u64 counter = 0;
	std::vector<std::thread> ts;
	for (int t = 0; t < 4; t++)
		ts.emplace_back([&] {
			for (int i = 0; i < 50000; i++) {
				ktl::Guard g(lock);
				u64 v = counter;
				counter = v + 1;
			}
		});
	for (auto &t : ts)
		t.join();
	CHECK(counter == 200000);
}

// That Protected<T>'s data cannot be reached any other way, and that a
// Guard cannot be discarded or copied, are compile-time properties: the
// build checks hold them (tests/build/lock_misuse.cpp).
TEST_CASE("Protected<T>::with() runs fn under its lock and returns its result", "[ktl][lock]") {
	struct Stats {
		u32 adds = 0;
	};
	ktl::Protected<Stats> stats(SROCE_LOCK_TEST);
	REQUIRE_FALSE(stats.init().is_error());
	int held = -1;
	u32 adds = stats.with([&](Stats &s) {
		held = env_host::locks_held();
		return ++s.adds;
	});
	CHECK(held == 1);
	CHECK(env_host::locks_held() == 0);
	CHECK(adds == 1);
	CHECK(stats.with([](Stats &s) { return s.adds; }) == 1);
}

TEST_CASE("SpinLock::init reports ENOMEM when the env cannot allocate", "[ktl][lock]") {
	env_host::clear();
	ktl::SpinLock lock(SROCE_LOCK_TEST);
	env_host::fail_nth_allocation(0);
	auto r = lock.init();
	REQUIRE(r.is_error());
	CHECK(r.error().code() == -ktl::err::nomem);
}

namespace {
std::vector<std::pair<int, int>> g_inversions;
void record_inversion(int held, int taken) { g_inversions.emplace_back(held, taken); }
} // namespace

TEST_CASE("the host env checks env.h's lock order on every acquisition", "[ktl][lock][order]") {
	ktl::SpinLock qp(SROCE_LOCK_QP), cq(SROCE_LOCK_CQ), cq2(SROCE_LOCK_CQ), keys(SROCE_LOCK_KEY_TABLE);
	for (auto *l : {&qp, &cq, &cq2, &keys})
		REQUIRE_FALSE(l->init().is_error());
	g_inversions.clear();
	auto prev = env_host::set_lock_order_handler(record_inversion);
	{
		// The documented order, released out of order.
		auto f1 = qp.lock();
		auto f2 = cq.lock();
		auto f3 = keys.lock();
		CHECK(env_host::locks_held() == 3);
		cq.unlock(f2);
		keys.unlock(f3);
		qp.unlock(f1);
	}
	CHECK(g_inversions.empty());
	CHECK(env_host::locks_held() == 0);
	{
		ktl::Guard a(cq);
		ktl::Guard b(qp); // QP after CQ: an inversion
	}
	REQUIRE(g_inversions.size() == 1);
	CHECK(g_inversions[0] == std::make_pair(int(SROCE_LOCK_CQ), int(SROCE_LOCK_QP)));
	{
		ktl::Guard a(cq);
		ktl::Guard b(cq2); // two of one kind: lockdep's recursive locking
	}
	REQUIRE(g_inversions.size() == 2);
	CHECK(g_inversions[1] == std::make_pair(int(SROCE_LOCK_CQ), int(SROCE_LOCK_CQ)));
	env_host::set_lock_order_handler(prev);
	CHECK(env_host::locks_held() == 0);

	// Without a handler of its own, a test that inverts the order dies.
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		signal(SIGABRT, SIG_DFL); // die, not Catch's report from the child
		auto f1 = keys.lock();
		auto f2 = qp.lock();
		qp.unlock(f2);
		keys.unlock(f1);
		_exit(0);
	}
	int status = 0;
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status));
	CHECK(WTERMSIG(status) == SIGABRT);
}

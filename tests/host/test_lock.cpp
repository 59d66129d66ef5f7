#include <catch2/catch.hpp>

#include <thread>
#include <vector>

#include "env_host.h"
#include "ktl/lock.h"

TEST_CASE("Guard serialises updates under a SpinLock", "[ktl][lock]") {
	ktl::SpinLock lock;
	REQUIRE_FALSE(lock.init().is_error());
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

TEST_CASE("Protected<T> reaches its data only through with()", "[ktl][lock]") {
	struct Stats {
		u32 adds = 0;
		u32 sum = 0;
	};
	ktl::Protected<Stats> stats;
	REQUIRE_FALSE(stats.init().is_error());
	std::vector<std::thread> ts;
	for (int t = 0; t < 4; t++)
		ts.emplace_back([&, t] {
			for (int i = 0; i < 10000; i++)
				stats.with([&](Stats &s) {
					s.adds++;
					s.sum += u32(t);
				});
		});
	for (auto &t : ts)
		t.join();
	// with() returns what the function returns.
	u32 adds = stats.with([](Stats &s) { return s.adds; });
	u32 sum = stats.with([](Stats &s) { return s.sum; });
	CHECK(adds == 40000);
	CHECK(sum == 10000 * (0 + 1 + 2 + 3));
}

TEST_CASE("SpinLock::init reports ENOMEM when the env cannot allocate", "[ktl][lock]") {
	env_host::clear();
	ktl::SpinLock lock;
	env_host::fail_nth_allocation(0);
	auto r = lock.init();
	REQUIRE(r.is_error());
	CHECK(r.error().code() == -ktl::err::nomem);
}

// The memory key table: lookups by lkey and rkey (state, PD, rights,
// bounds), stale keys, a full table, the random key byte, the kernel's
// reserve, and lookups racing destroy (an MR's without the lock). The MRs themselves are in
// test_mr.cpp.
#include <catch2/catch.hpp>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "env_host.h"
#include "mr_fixture.h"
#include "param.h"

using namespace mrfx;

TEST_CASE("key lookups check state, PD, rights and bounds", "[core][mr][keys]") {
	Fixture f;
	const u64 iova = 0x100000;
	Pages pg(2);
	auto *ro = reg(f.dev, f.pd, iova, PAGE, 0, pg);
	auto *rw = reg(f.dev, f.pd, iova, 2 * PAGE, acc::local_write | acc::remote_write | acc::remote_read, pg);
	auto *at = reg(f.dev, f.pd, iova, PAGE, acc::local_write | acc::remote_atomic, pg);
	u32 kro = sroce_core_mr_lkey(ro), krw = sroce_core_mr_lkey(rw), kat = sroce_core_mr_lkey(at);
	CHECK(sroce_core_mr_rkey(rw) == krw);
	CHECK(std::set<u32>{kro, krw, kat}.size() == 3);
	auto &keys = f.keys();

	SECTION("local") {
		auto r = keys.lookup_lkey(kro, f.pdn, iova, PAGE, 0);
		REQUIRE_FALSE(r.is_error());
		CHECK(r.value().mr.get() == &mr_of(ro));
		CHECK(err(keys.lookup_lkey(kro, f.pdn, iova, 1, acc::local_write)) == -EACCES);
		CHECK(err(keys.lookup_lkey(krw, f.pdn, iova, 2 * PAGE, acc::local_write)) == 0);
		CHECK(err(keys.lookup_lkey(krw, f.pdn, iova + 1, 2 * PAGE, 0)) == -ERANGE);
		CHECK(err(keys.lookup_lkey(kro, f.pdn, iova, 1, acc::mw_bind)) == -EACCES);
	}
	SECTION("remote") {
		CHECK(err(keys.lookup_rkey(krw, f.pdn, 0, iova, 8, acc::remote_read)) == 0);
		CHECK(err(keys.lookup_rkey(krw, f.pdn, 0, iova, 8, acc::remote_write)) == 0);
		CHECK(err(keys.lookup_rkey(krw, f.pdn, 0, iova, 8, acc::remote_atomic)) == -EACCES);
		CHECK(err(keys.lookup_rkey(kat, f.pdn, 0, iova, 8, acc::remote_atomic)) == 0);
		CHECK(err(keys.lookup_rkey(kat, f.pdn, 0, iova, 8, acc::remote_read)) == -EACCES);
		// An MR without remote rights has an rkey that no remote access passes.
		CHECK(err(keys.lookup_rkey(kro, f.pdn, 0, iova, 8, acc::remote_read)) == -EACCES);
		CHECK(err(keys.lookup_rkey(krw, f.pdn, 0, iova + 2 * PAGE - 7, 8, acc::remote_read)) == -ERANGE);
	}
	SECTION("another PD") {
		sroce_core_pd *pd2;
		REQUIRE(sroce_core_pd_create(f.dev, &pd2) == 0);
		u32 pdn2 = sroce_core_pd_number(pd2);
		CHECK(err(keys.lookup_lkey(kro, pdn2, iova, 1, 0)) == -EACCES);
		CHECK(err(keys.lookup_rkey(krw, pdn2, 0, iova, 1, acc::remote_read)) == -EACCES);
		sroce_core_pd_destroy(pd2);
	}
	SECTION("bad keys") {
		CHECK(err(keys.lookup_lkey(0, f.pdn, iova, 1, 0)) == -EINVAL);
		CHECK(err(keys.lookup_lkey(kro ^ 1, f.pdn, iova, 1, 0)) == -EINVAL);     // other variant
		CHECK(err(keys.lookup_lkey(kat + 0x100, f.pdn, iova, 1, 0)) == -EINVAL); // unused index
		CHECK(err(keys.lookup_lkey(~0u, f.pdn, iova, 1, 0)) == -EINVAL);         // beyond the table
		CHECK(err(keys.lookup_lkey(65537u << 8 | 1, f.pdn, iova, 1, 0)) == -EINVAL);
	}
	SECTION("zero-length accesses need a valid key, PD and rights but no bounds") {
		CHECK(err(keys.lookup_rkey(krw, f.pdn, 0, 0, 0, acc::remote_write)) == 0);
		CHECK(err(keys.lookup_lkey(kro, f.pdn, ~0ull, 0, 0)) == 0);
		CHECK(err(keys.lookup_rkey(krw, f.pdn, 0, 0, 0, acc::remote_atomic)) == -EACCES);
		CHECK(err(keys.lookup_lkey(kro ^ 1, f.pdn, iova, 0, 0)) == -EINVAL);
	}
	SECTION("only fast-registration keys may be invalidated (test_fast_reg.cpp)") {
		CHECK(err(keys.invalidate(krw ^ 1, f.pdn, 0)) == -EINVAL);
		CHECK(err(keys.invalidate(krw, f.pdn + 1, 0)) == -EINVAL);
		CHECK(err(keys.invalidate(krw, f.pdn, 0)) == -EINVAL);
		CHECK(err(keys.lookup_rkey(krw, f.pdn, 0, iova, 8, acc::remote_read)) == 0);
	}
	SECTION("a caller that asks for the wrong kind of right is a core bug") {
		CHECK(err(keys.lookup_rkey(krw, f.pdn, 0, iova, 8, 0)) == -EINVAL);
		CHECK(err(keys.lookup_lkey(krw, f.pdn, iova, 8, acc::remote_read)) == -EINVAL);
		CHECK(env_host::warnings() == 2);
		env_host::clear();
	}
	sroce_core_mr_destroy(ro);
	sroce_core_mr_destroy(rw);
	sroce_core_mr_destroy(at);
	CHECK(err(keys.lookup_lkey(kro, f.pdn, iova, 1, 0)) == -EINVAL);
	CHECK(keys.in_use() == 0);
}

TEST_CASE("keys are invalid until enable, which needs every page", "[core][mr][keys]") {
	Fixture f;
	Pages pg(2);
	auto init = page_init(f.pd, 0x2000, 2 * PAGE, 0);
	sroce_core_mr *h;
	REQUIRE(sroce_core_mr_create(f.dev, &init, &h) == 0);
	u32 key = sroce_core_mr_lkey(h);
	CHECK(err(f.keys().lookup_lkey(key, f.pdn, 0x2000, 1, 0)) == -EINVAL);
	sroce_core_mr_set_page(h, 0, pg.kva[0]);
	CHECK(sroce_core_mr_enable(h) == -EINVAL); // page 1 missing: a glue bug
	CHECK(env_host::warnings() == 1);
	sroce_core_mr_set_page(h, 2, pg.kva[1]); // out of range: ignored, warned
	CHECK(env_host::warnings() == 2);
	env_host::clear();
	CHECK(err(f.keys().lookup_lkey(key, f.pdn, 0x2000, 1, 0)) == -EINVAL);
	sroce_core_mr_set_page(h, 1, pg.kva[1]);
	CHECK(sroce_core_mr_enable(h) == 0);
	CHECK(err(f.keys().lookup_lkey(key, f.pdn, 0x2000, 1, 0)) == 0);
	sroce_core_mr_destroy(h);
}

TEST_CASE("a stale key misses after its index is reused", "[core][mr][keys]") {
	Fixture f;
	Pages pg(1);
	auto *h = reg(f.dev, f.pd, 0x1000, PAGE, 0, pg);
	u32 old = sroce_core_mr_lkey(h);
	sroce_core_mr_destroy(h);
	CHECK(err(f.keys().lookup_lkey(old, f.pdn, 0x1000, 1, 0)) == -EINVAL);
	// Indices are handed out next-fit: the same index comes back only after
	// all others have been used once.
	u32 key = 0;
	int regs = 0;
	do {
		h = reg(f.dev, f.pd, 0x1000, PAGE, 0, pg);
		key = sroce_core_mr_lkey(h);
		regs++;
		if (key >> 8 != old >> 8)
			sroce_core_mr_destroy(h);
	} while (key >> 8 != old >> 8 && regs <= 70000);
	CHECK(regs == 65536);
	REQUIRE(key >> 8 == old >> 8);
	CHECK(key != old);
	CHECK(err(f.keys().lookup_lkey(old, f.pdn, 0x1000, 1, 0)) == -EINVAL);
	CHECK(err(f.keys().lookup_lkey(key, f.pdn, 0x1000, 1, 0)) == 0);
	sroce_core_mr_destroy(h);
}

// The lock-free look-up (MemoryKeyTable::find_mr_rcu) loads an entry's MR
// pointer before it takes a reference: a reader may hold the pointer of an
// MR whose last reference goes meanwhile. Its memory must then outlive the
// reader's RCU section (the host's grace period is rcu_barrier).
TEST_CASE("an MR's memory outlives its last reference by a grace period", "[core][mr][keys][rcu]") {
	Fixture f;
	Pages pg(1);
	auto *h = reg(f.dev, f.pd, 0x1000, PAGE, acc::remote_read, pg);
	u32 key = sroce_core_mr_lkey(h);
	const sroce::Mr *seen = nullptr;
	{
		auto r = f.keys().lookup_rkey(key, f.pdn, 0, 0x1000, 8, acc::remote_read);
		REQUIRE_FALSE(r.is_error());
		seen = r.value().mr.get();
	} // the reader's reference goes; it keeps the pointer
	CHECK(seen == &mr_of(h));
	CHECK(seen->ref_count() == 1);
	env_host::rcu_barrier();
	size_t pending = env_host::rcu_pending();
	sroce_core_mr_destroy(h); // the last reference
	CHECK(err(f.keys().lookup_rkey(key, f.pdn, 0, 0x1000, 8, acc::remote_read)) == -EINVAL);
	CHECK(env_host::rcu_pending() == pending + 1);
	// Still readable (under ASan, freed memory is not): the count is 0.
	CHECK(seen->ref_count() == 0);
	CHECK_FALSE(seen->try_ref());
	env_host::rcu_barrier();
	CHECK(env_host::rcu_pending() == 0);
}

TEST_CASE("the key table holds max_mr MRs and no more", "[core][mr][keys]") {
	Fixture f;
	Pages pg(1);
	std::vector<sroce_core_mr *> mrs;
	auto init = page_init(f.pd, 0, PAGE, 0);
	sroce_core_mr *h;
	while (sroce_core_mr_create(f.dev, &init, &h) == 0)
		mrs.push_back(h);
	CHECK(mrs.size() == 65536);
	CHECK(sroce_core_mr_create(f.dev, &init, &h) == -ENOSPC);
	sroce_core_counts c;
	sroce_core_dev_counts(f.dev, &c);
	CHECK(c.mrs == 65536);
	CHECK(c.pinned_pages == 65536);
	sroce_core_mr_destroy(mrs.back());
	mrs.pop_back();
	REQUIRE(sroce_core_mr_create(f.dev, &init, &h) == 0);
	mrs.push_back(h);
	for (auto *m : mrs)
		sroce_core_mr_destroy(m);
	sroce_core_dev_counts(f.dev, &c);
	CHECK(c.mrs == 0);
	CHECK(c.pinned_pages == 0);
}

TEST_CASE("the key byte is random, differs between devices and still changes on reuse",
	  "[core][mr][keys]") {
	Pages pg(1);
	// The first registration on each of 8 fresh devices: the same index,
	// and (but for a chance of 255^-7) not the same key byte.
	std::set<u32> bytes;
	for (int i = 0; i < 8; i++) {
		Fixture f;
		auto *h = reg(f.dev, f.pd, 0x1000, PAGE, 0, pg);
		u32 key = sroce_core_mr_lkey(h);
		CHECK(key >> 8 == 1);
		bytes.insert(key & 0xff);
		sroce_core_mr_destroy(h);
	}
	CHECK(bytes.size() > 1);
	// Freed and reused at once (a one-entry table): never the same key
	// twice in a row, and not a fixed step from the last one.
	Fixture f;
	sroce::MemoryKeyTable one;
	REQUIRE_FALSE(one.init(1).is_error());
	auto *h = reg(f.dev, f.pd, 0x1000, PAGE, 0, pg);
	Mr &mr = mr_of(h);
	// Borrow the MR for the second table, then put it back.
	REQUIRE_FALSE(f.keys().remove(mr).is_error());
	std::set<u32> steps;
	u32 prev = 0;
	bool repeated = false;
	for (int i = 0; i < 2000; i++) {
		auto k = one.insert(mr, false);
		REQUIRE_FALSE(k.is_error());
		CHECK(k.value() >> 8 == 1);
		repeated |= k.value() == prev;
		if (i)
			steps.insert((k.value() - prev) & 0xff);
		prev = k.value();
		REQUIRE_FALSE(one.remove(mr).is_error());
	}
	CHECK_FALSE(repeated);
	CHECK(steps.size() > 100);
	REQUIRE_FALSE(f.keys().insert(mr, false).is_error());
	f.keys().enable(mr);
	sroce_core_mr_destroy(h);
}

TEST_CASE("host keys replay with the simulator's seed", "[core][mr][keys]") {
	Pages pg(1);
	u32 keys[2];
	for (u32 &k : keys) {
		env_host::seed_random(1234);
		Fixture f;
		auto *h = reg(f.dev, f.pd, 0x1000, PAGE, 0, pg);
		k = sroce_core_mr_lkey(h);
		sroce_core_mr_destroy(h);
	}
	CHECK(keys[0] == keys[1]);
}

TEST_CASE("user MRs leave the kernel's reserve of keys; their page table is charged",
	  "[core][mr][keys][limits]") {
	Fixture f;
	Pages pg(1);
	auto init = page_init(f.pd, 0x1000, PAGE, 0);
	init.user = 1;
	std::vector<sroce_core_mr *> mrs;
	long charged = env_host::user_bytes();
	sroce_core_mr *h = nullptr;
	int rc;
	while ((rc = sroce_core_mr_create(f.dev, &init, &h)) == 0) {
		mrs.push_back(h);
		REQUIRE(mrs.size() <= sroce::param::max_mr);
	}
	CHECK(rc == -ENOSPC);
	CHECK(mrs.size() == sroce::param::max_mr - sroce::param::reserve::mr);
	CHECK(env_host::user_bytes() - charged >= long(mrs.size() * sizeof(void *)));
	// A kernel consumer (ib_alloc_pd's DMA MR) still gets a key.
	sroce_core_mr_init dma{};
	dma.pd = f.pd;
	dma.dma = 1;
	sroce_core_mr *kernel_mr = nullptr;
	CHECK(sroce_core_mr_create(f.dev, &dma, &kernel_mr) == 0);
	if (kernel_mr)
		sroce_core_mr_destroy(kernel_mr);
	for (auto *m : mrs)
		sroce_core_mr_destroy(m);
}

TEST_CASE("lookups and data access race with registration and destroy", "[core][mr][keys][threads]") {
	Fixture f;
	constexpr int slots = 8;
	std::atomic<u32> key[slots];
	for (auto &k : key)
		k = 0;
	std::atomic<bool> stop{false};
	std::atomic<long> hits{0}, misses{0}, bad{0};
	const u64 iova = 0x40000;

	// The release callback frees the memory: any access after it is a
	// heap-use-after-free that ASan reports.
	struct Mem {
		u8 *block;
	};
	// The pages go with may_sleep only in the closing thread (close()'s own
	// last reference): a reader whose try_ref slipped in after remove()
	// must not release them as if it could sleep (it may be in softirq).
	static std::thread::id closer;
	static std::atomic<int> wrong_context;
	closer = std::this_thread::get_id();
	wrong_context = 0;
	auto release = [](void *owner, int may_sleep) {
		if (may_sleep && std::this_thread::get_id() != closer)
			wrong_context++;
		auto *m = static_cast<Mem *>(owner);
		std::free(m->block);
		delete m;
	};

	std::vector<std::thread> readers;
	for (int t = 0; t < 3; t++)
		readers.emplace_back([&, t] {
			std::mt19937 rng(t);
			u8 buf[2 * PAGE];
			while (!stop.load()) {
				u32 k = key[rng() % slots].load();
				auto r = f.keys().lookup_rkey(k, f.pdn, 0, iova, sizeof(buf), acc::remote_write);
				if (r.is_error()) {
					if (r.error().code() != -EINVAL)
						bad++;
					misses++;
					continue;
				}
				auto mr = r.release_value().mr;
				// The lock-free look-up found the MR this key names, not
				// another that took its index meanwhile.
				if (mr->lkey() != k)
					bad++;
				memset(buf, t, sizeof(buf));
				if (mr->copy_to(iova, buf, sizeof(buf)).is_error() ||
				    mr->copy_from(iova + 1, buf, sizeof(buf) - 1).is_error())
					bad++;
				if (u64 *p = mr->atomic_ptr(iova + 8))
					__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
				else
					bad++;
				hits++;
			}
		});

	sroce_core_mr *live[slots] = {};
	for (int i = 0; i < 4000; i++) {
		int s = i % slots;
		if (live[s])
			sroce_core_mr_destroy(live[s]);
		auto *m = new Mem{static_cast<u8 *>(std::aligned_alloc(PAGE, 3 * PAGE))};
		auto init = page_init(f.pd, iova, 2 * PAGE + 16, acc::local_write | acc::remote_write);
		init.release = release;
		init.owner = m;
		REQUIRE(sroce_core_mr_create(f.dev, &init, &live[s]) == 0);
		for (u64 p = 0; p < 3; p++)
			sroce_core_mr_set_page(live[s], p, m->block + p * PAGE);
		REQUIRE(sroce_core_mr_enable(live[s]) == 0);
		key[s] = sroce_core_mr_lkey(live[s]);
	}
	stop = true;
	for (auto &t : readers)
		t.join();
	for (auto *h : live)
		sroce_core_mr_destroy(h);
	CHECK(bad == 0);
	CHECK(wrong_context == 0);
	CHECK(hits > 0);
	INFO("hits " << hits << " misses " << misses);
	sroce_core_counts c;
	sroce_core_dev_counts(f.dev, &c);
	CHECK(c.mrs == 0);
}

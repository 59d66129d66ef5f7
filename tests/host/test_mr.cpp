// Memory regions: registration through the C API the glue calls, data
// access through the C++ API the transport calls, and the release of an
// MR's pages. The key table has its own file (test_mr_keys.cpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "env_host.h"
#include "ktl/lock.h"
#include "mr_fixture.h"

using namespace mrfx;

TEST_CASE("MR registration validates its arguments", "[core][mr]") {
	Fixture f;
	Pages pg(4);
	sroce_core_mr *mr = nullptr;
	auto create = [&](const sroce_core_mr_init &init) { return sroce_core_mr_create(f.dev, &init, &mr); };
	const u64 iova = 0x7f0000001000;

	auto init = page_init(f.pd, iova, 3 * PAGE, acc::local_write);
	SECTION("unknown access bits") {
		init.access = acc::zero_based | acc::local_write;
		CHECK(create(init) == -EINVAL);
		init.access = acc::on_demand;
		CHECK(create(init) == -EINVAL);
		init.access = 1u << 20;
		CHECK(create(init) == -EINVAL);
		// FLUSH to persistence: sroce cannot make memory durable.
		init.access = acc::flush_persistent | acc::local_write;
		CHECK(create(init) == -EINVAL);
		init.access = acc::flush_global | acc::remote_read; // FLUSH to global visibility is fine
		REQUIRE(create(init) == 0);
		sroce_core_mr_destroy(mr);
	}
	SECTION("remote write or atomic without local write") {
		init.access = acc::remote_write;
		CHECK(create(init) == -EINVAL);
		init.access = acc::remote_atomic | acc::remote_read;
		CHECK(create(init) == -EINVAL);
		init.access = acc::remote_read | acc::mw_bind; // read-only remote is fine
		REQUIRE(create(init) == 0);
		sroce_core_mr_destroy(mr);
	}
	SECTION("length 0, too long, or wrapping past 2^64") {
		init.length = 0;
		init.npages = 0;
		CHECK(create(init) == -EINVAL);
		init = page_init(f.pd, 0, (1ull << 38) + 1, 0);
		CHECK(create(init) == -EINVAL);
		init = page_init(f.pd, ~0ull - PAGE + 1, PAGE + 1, 0);
		init.npages = 2;
		CHECK(create(init) == -EINVAL);
	}
	SECTION("npages must be the pages the range touches") {
		init.npages = 2;
		CHECK(create(init) == -EINVAL);
		init.npages = 4;
		CHECK(create(init) == -EINVAL);
		init = page_init(f.pd, iova + 1, 3 * PAGE, 0); // unaligned: one page more
		CHECK(init.npages == 4);
		REQUIRE(create(init) == 0);
		sroce_core_mr_destroy(mr);
	}
	SECTION("page size between 4 KiB and 1 GiB") {
		init.page_shift = 11;
		init.npages = 6;
		CHECK(create(init) == -EINVAL);
		init.page_shift = 31;
		init.npages = 1;
		CHECK(create(init) == -EINVAL);
		init.page_shift = 16; // 3 pages of 4 KiB in one 64 KiB page
		REQUIRE(create(init) == 0);
		sroce_core_mr_destroy(mr);
	}
	SECTION("a DMA MR has no pages") {
		sroce_core_mr_init dma{};
		dma.pd = f.pd;
		dma.dma = 1;
		dma.npages = 1;
		CHECK(create(dma) == -EINVAL);
	}
	SECTION("the PD must be of the same device") {
		auto *other = make_dev();
		CHECK(sroce_core_mr_create(other, &init, &mr) == -EINVAL);
		sroce_core_dev_destroy(other);
	}
	CHECK(device(f.dev).keys().in_use() == 0);
}

TEST_CASE("MR data lands in the right page across page boundaries", "[core][mr]") {
	Fixture f;
	// An unaligned iova: the MR starts 100 bytes into its first page and
	// ends 100 + 3 * 4096 bytes later, in a fourth page.
	const u64 iova = 0x10000 + 100, len = 3 * PAGE;
	Pages pg(4, 7);
	auto *h = reg(f.dev, f.pd, iova, len, acc::local_write, pg);
	Mr &mr = mr_of(h);
	CHECK(mr.npages() == 4);

	std::vector<u8> src(len);
	for (u64 i = 0; i < len; i++)
		src[i] = u8(i * 7 + 3);
	REQUIRE_FALSE(mr.copy_to(iova, src.data(), u32(len)).is_error());
	bool placed = true;
	for (u64 i = 0; i < len; i++)
		placed &= pg.at(100 + i) == src[i];
	CHECK(placed);
	// The bytes before iova in the first page are not the MR's.
	CHECK(std::all_of(pg.kva[0], pg.kva[0] + 100, [](u8 b) { return b == 0; }));

	// A read straddling the boundary between the second and third page.
	std::vector<u8> out(300);
	u64 addr = iova + 2 * PAGE - 100 - 150;
	REQUIRE_FALSE(mr.copy_from(addr, out.data(), 300).is_error());
	CHECK(memcmp(out.data(), src.data() + (addr - iova), 300) == 0);

	// Chunks are cut at page boundaries and point into the right pages.
	std::vector<std::pair<u8 *, u32>> chunks;
	REQUIRE_FALSE(mr.for_each_chunk(iova, len, [&](u8 *kva, u32 n) { chunks.emplace_back(kva, n); })
			      .is_error());
	REQUIRE(chunks.size() == 4);
	CHECK(chunks[0] == std::make_pair(pg.kva[0] + 100, u32(PAGE - 100)));
	CHECK(chunks[1] == std::make_pair(pg.kva[1], u32(PAGE)));
	CHECK(chunks[2] == std::make_pair(pg.kva[2], u32(PAGE)));
	CHECK(chunks[3] == std::make_pair(pg.kva[3], u32(100)));

	// A callback returning Result<void> stops the walk at its first error.
	int calls = 0;
	auto r = mr.for_each_chunk(iova, len, [&](u8 *, u32) -> ktl::Result<void> {
		if (++calls == 2)
			return ktl::Error::from_errno(ktl::err::fault);
		return {};
	});
	CHECK(err(r) == -EFAULT);
	CHECK(calls == 2);
	sroce_core_mr_destroy(h);
}

TEST_CASE("MR bounds at every edge", "[core][mr]") {
	Fixture f;
	const u64 iova = 0x5000 + 8, len = 2 * PAGE;
	Pages pg(3);
	auto *h = reg(f.dev, f.pd, iova, len, acc::local_write, pg);
	Mr &mr = mr_of(h);
	u8 buf[16] = {};
	auto copy = [&](u64 addr, u32 n) { return err(mr.copy_to(addr, buf, n)); };

	// len 0 is inside anywhere and touches nothing.
	CHECK(mr.contains(0, 0));
	CHECK(mr.contains(~0ull, 0));
	CHECK(copy(~0ull, 0) == 0);
	// The whole MR, and one byte at each end.
	CHECK(mr.contains(iova, len));
	CHECK(copy(iova, 1) == 0);
	CHECK(copy(iova + len - 1, 1) == 0);
	CHECK(copy(iova + len - 16, 16) == 0); // ends exactly at the end
	// One past either end.
	CHECK_FALSE(mr.contains(iova, len + 1));
	CHECK(copy(iova - 1, 1) == -ERANGE);
	CHECK(copy(iova + len, 1) == -ERANGE);
	CHECK(copy(iova + len - 15, 16) == -ERANGE);
	// Lengths and addresses that wrap around 2^64.
	CHECK_FALSE(mr.contains(iova + 1, ~0ull));
	CHECK_FALSE(mr.contains(~0ull, 2));
	CHECK(err(mr.for_each_chunk(iova + 8, ~0ull - 7, [](u8 *, u32) {})) == -ERANGE);
	CHECK(err(mr.for_each_chunk(~0ull, 2, [](u8 *, u32) {})) == -ERANGE);

	// Atomics: aligned and inside, or nothing.
	CHECK(mr.atomic_ptr(iova) == reinterpret_cast<u64 *>(pg.kva[0] + 8));
	CHECK(mr.atomic_ptr(iova + PAGE - 8) == reinterpret_cast<u64 *>(pg.kva[1]));
	CHECK(mr.atomic_ptr(iova + len - 8) == reinterpret_cast<u64 *>(pg.kva[2]));
	CHECK(mr.atomic_ptr(iova + len) == nullptr);
	CHECK(mr.atomic_ptr(iova + 4) == nullptr);
	CHECK(mr.atomic_ptr(iova - 8) == nullptr);
	CHECK(mr.atomic_ptr(~0ull - 7) == nullptr);
	sroce_core_mr_destroy(h);

	// An MR that ends at the very top of the address space.
	Pages top(1);
	h = reg(f.dev, f.pd, ~0ull - PAGE + 1, PAGE, 0, top);
	CHECK(mr_of(h).contains(~0ull, 1));
	CHECK(mr_of(h).contains(~0ull - PAGE + 1, PAGE));
	CHECK_FALSE(mr_of(h).contains(~0ull, 2));
	CHECK(err(mr_of(h).copy_from(~0ull - 7, buf, 8)) == 0);
	sroce_core_mr_destroy(h);
}

TEST_CASE("MR creation fails cleanly whichever allocation fails", "[core][mr]") {
	env_host::clear();
	long base = env_host::live_allocations();
	Pages pg(3);
	int failures = 0;
	for (int n = 0;; n++) {
		// A fresh device each time, so the key table's first chunk is
		// allocated by this registration too.
		auto *dev = make_dev();
		sroce_core_pd *pd;
		REQUIRE(sroce_core_pd_create(dev, &pd) == 0);
		Released rel;
		auto init = page_init(pd, 0x3000 + 5, 2 * PAGE, acc::local_write);
		init.release = count_release;
		init.owner = &rel;
		sroce_core_mr *h = nullptr;
		env_host::fail_nth_allocation(n);
		int rc = sroce_core_mr_create(dev, &init, &h);
		env_host::fail_nth_allocation(-1);
		if (rc == 0) {
			sroce_core_mr_destroy(h);
			CHECK(rel.calls == 1);
		} else {
			CHECK(rc == -ENOMEM);
			CHECK(rel.calls == 0); // the glue still owns its pages
			sroce_core_counts c;
			sroce_core_dev_counts(dev, &c);
			CHECK(c.mrs == 0);
			CHECK(device(dev).keys().in_use() == 0);
		}
		sroce_core_pd_destroy(pd);
		sroce_core_dev_destroy(dev);
		CHECK(env_host::live_allocations() == base);
		if (rc == 0)
			break;
		failures++;
	}
	CHECK(failures == 3); // the MR, its page table, the key table chunk
	CHECK(env_host::warnings() == 0);
}

TEST_CASE("pages are released once, by the last reference", "[core][mr]") {
	Fixture f;
	Pages pg(1);
	Released rel;
	SECTION("no user: released inside destroy, which may sleep") {
		auto *h = reg(f.dev, f.pd, 0x1000, PAGE, 0, pg, &rel);
		CHECK(rel.calls == 0);
		sroce_core_mr_destroy(h);
		CHECK(rel.calls == 1);
		CHECK(rel.may_sleep == 1);
	}
	SECTION("an in-flight user keeps the pages until it lets go") {
		auto *h = reg(f.dev, f.pd, 0x1000, PAGE, acc::local_write, pg, &rel);
		u32 key = sroce_core_mr_lkey(h);
		auto r = f.keys().lookup_lkey(key, f.pdn, 0x1000, 8, acc::local_write);
		REQUIRE_FALSE(r.is_error());
		ktl::RefPtr<Mr> held = r.release_value().mr;
		sroce_core_mr_destroy(h);
		CHECK(rel.calls == 0);
		// The key is gone at once, but the holder's access still works.
		CHECK(err(f.keys().lookup_lkey(key, f.pdn, 0x1000, 8, 0)) == -EINVAL);
		u64 v = 42;
		CHECK(err(held->copy_to(0x1000, &v, 8)) == 0);
		sroce_core_counts c;
		sroce_core_dev_counts(f.dev, &c);
		CHECK(c.mrs == 1);
		held.reset();
		CHECK(rel.calls == 1);
		CHECK(rel.may_sleep == 0); // possibly in softirq: the glue defers
		sroce_core_dev_counts(f.dev, &c);
		CHECK(c.mrs == 0);
		CHECK(c.pinned_pages == 0);
	}
}

TEST_CASE("the last reference may drop under a spinlock: nothing that sleeps is freed there",
	  "[core][mr][context]") {
	// A packet's reference, dropped by the responder under its QP lock
	// (interrupts off), after dereg. 1024 pages make an 8 KiB page table:
	// in the kernel, kvzalloc may have vmalloc'ed it, and vfree may sleep.
	Fixture f;
	Pages pg(1024);
	Released rel;
	auto *h = reg(f.dev, f.pd, 0x100000, 1024 * PAGE, acc::local_write, pg, &rel);
	auto r = f.keys().lookup_lkey(sroce_core_mr_lkey(h), f.pdn, 0x100000, 8, acc::local_write);
	REQUIRE_FALSE(r.is_error());
	ktl::RefPtr<Mr> held = r.release_value().mr;
	sroce_core_mr_destroy(h);
	ktl::SpinLock qp_lock(SROCE_LOCK_QP);
	REQUIRE_FALSE(qp_lock.init().is_error());
	{
		ktl::Guard g(qp_lock);
		held.reset();
	}
	CHECK(rel.calls == 1);
	CHECK(rel.may_sleep == 0); // the glue defers unpinning too
	CHECK(env_host::warnings() == 0);
}

TEST_CASE("DMA MRs address kernel memory directly, cut at page boundaries", "[core][mr]") {
	Fixture f;
	sroce_core_mr_init init{};
	init.pd = f.pd;
	init.dma = 1;
	init.access = acc::local_write;
	sroce_core_mr *h;
	REQUIRE(sroce_core_mr_create(f.dev, &init, &h) == 0);
	REQUIRE(sroce_core_mr_enable(h) == 0);
	Mr &mr = mr_of(h);
	CHECK(mr.is_dma());

	auto *buf = static_cast<u8 *>(std::aligned_alloc(PAGE, 3 * PAGE));
	u64 addr = reinterpret_cast<u64>(buf) + PAGE - 10;
	std::vector<u8> src(PAGE + 20, 0xab);
	REQUIRE(err(mr.copy_to(addr, src.data(), u32(src.size()))) == 0);
	CHECK(buf[PAGE - 10] == 0xab);
	CHECK(buf[2 * PAGE + 9] == 0xab);
	std::vector<u32> lens;
	CHECK(err(mr.for_each_chunk(addr, src.size(), [&](u8 *, u32 n) { lens.push_back(n); })) == 0);
	CHECK(lens == std::vector<u32>{10, u32(PAGE), 10});
	CHECK(mr.atomic_ptr(reinterpret_cast<u64>(buf)) == reinterpret_cast<u64 *>(buf));
	CHECK(mr.atomic_ptr(reinterpret_cast<u64>(buf) + 4) == nullptr);
	std::free(buf);

	// Bounds: the whole address space, without wrapping (nothing copied).
	CHECK(mr.contains(~0ull - 3, 4));
	CHECK_FALSE(mr.contains(~0ull - 3, 5));
	CHECK(err(f.keys().lookup_lkey(mr.lkey(), f.pdn, 0, ~0ull, acc::local_write)) == 0);
	CHECK(err(f.keys().lookup_lkey(mr.lkey(), f.pdn, 2, ~0ull, 0)) == -ERANGE);
	CHECK(err(f.keys().lookup_rkey(mr.rkey(), f.pdn, 0, 0, 8, acc::remote_read)) == -EACCES);
	sroce_core_counts c;
	sroce_core_dev_counts(f.dev, &c);
	CHECK(c.mrs == 1);
	CHECK(c.pinned_pages == 0);
	sroce_core_mr_destroy(h);
}

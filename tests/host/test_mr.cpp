// Memory regions and the memory key table: registration through the C API
// the glue calls, data access and key lookups through the C++ API the
// transport calls.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "env_host.h"
#include "key_table.h"
#include "ktl/lock.h"
#include "mr.h"
#include "param.h"

extern "C" {
#include "core.h"
}

using sroce::Mr;
namespace acc = sroce::ib::access;

namespace {
constexpr u64 PAGE = 4096;

sroce_core_dev *make_dev() {
	sroce_core_dev_init init{};
	init.netdev_mtu = 9000;
	init.netdev_up = 1;
	sroce_core_dev *dev = nullptr;
	REQUIRE(sroce_core_dev_create(&init, &dev) == 0);
	return dev;
}

sroce::Device &device(sroce_core_dev *h) { return *reinterpret_cast<sroce::Device *>(h); }
Mr &mr_of(sroce_core_mr *h) { return *reinterpret_cast<Mr *>(h); }
int err(const ktl::Result<void> &r) { return ktl::to_rc(r); }
template <typename T> int err(const ktl::Result<T> &r) { return r.is_error() ? r.error().code() : 0; }

// n distinct pages handed to the MR in a shuffled order, so that pages
// adjacent in the MR are not adjacent in memory.
struct Pages {
	explicit Pages(u64 n, unsigned seed = 1) : kva(n) {
		block = static_cast<u8 *>(std::aligned_alloc(PAGE, n * PAGE));
		memset(block, 0, n * PAGE);
		std::vector<u64> perm(n);
		std::iota(perm.begin(), perm.end(), 0);
		std::shuffle(perm.begin(), perm.end(), std::mt19937(seed));
		for (u64 i = 0; i < n; i++)
			kva[i] = block + perm[i] * PAGE;
	}
	~Pages() { std::free(block); }
	// The byte at offset off from the start of the MR's first page.
	u8 &at(u64 off) { return kva[off / PAGE][off % PAGE]; }
	u8 *block;
	std::vector<u8 *> kva;
};

u64 pages_for(u64 iova, u64 len) { return ((iova % PAGE) + len + PAGE - 1) / PAGE; }

struct Released {
	int calls = 0;
	int may_sleep = -1;
};
void count_release(void *owner, int may_sleep) {
	auto *r = static_cast<Released *>(owner);
	r->calls++;
	r->may_sleep = may_sleep;
}

sroce_core_mr_init page_init(sroce_core_pd *pd, u64 iova, u64 len, u32 access) {
	sroce_core_mr_init init{};
	init.pd = pd;
	init.iova = iova;
	init.length = len;
	init.access = access;
	init.page_shift = 12;
	init.npages = pages_for(iova, len);
	return init;
}

// Registers [iova, iova + len) over pg (create, set_page, enable).
sroce_core_mr *reg(sroce_core_dev *dev, sroce_core_pd *pd, u64 iova, u64 len, u32 access, Pages &pg,
		   Released *rel = nullptr) {
	auto init = page_init(pd, iova, len, access);
	REQUIRE(init.npages <= pg.kva.size());
	if (rel) {
		init.release = count_release;
		init.owner = rel;
	}
	sroce_core_mr *mr = nullptr;
	REQUIRE(sroce_core_mr_create(dev, &init, &mr) == 0);
	for (u64 i = 0; i < init.npages; i++)
		sroce_core_mr_set_page(mr, i, pg.kva[i]);
	REQUIRE(sroce_core_mr_enable(mr) == 0);
	return mr;
}

struct Fixture {
	Fixture() {
		env_host::clear();
		base = env_host::live_allocations();
		dev = make_dev();
		REQUIRE(sroce_core_pd_create(dev, &pd) == 0);
		pdn = sroce_core_pd_number(pd);
	}
	~Fixture() {
		sroce_core_pd_destroy(pd);
		sroce_core_dev_destroy(dev);
		CHECK(env_host::live_allocations() == base);
		CHECK(env_host::warnings() == 0);
	}
	sroce::MemoryKeyTable &keys() { return device(dev).keys(); }
	long base;
	sroce_core_dev *dev = nullptr;
	sroce_core_pd *pd = nullptr;
	u32 pdn = 0;
};
} // namespace

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
		CHECK(r.value().get() == &mr_of(ro));
		CHECK(err(keys.lookup_lkey(kro, f.pdn, iova, 1, acc::local_write)) == -EACCES);
		CHECK(err(keys.lookup_lkey(krw, f.pdn, iova, 2 * PAGE, acc::local_write)) == 0);
		CHECK(err(keys.lookup_lkey(krw, f.pdn, iova + 1, 2 * PAGE, 0)) == -ERANGE);
		CHECK(err(keys.lookup_lkey(kro, f.pdn, iova, 1, acc::mw_bind)) == -EACCES);
	}
	SECTION("remote") {
		CHECK(err(keys.lookup_rkey(krw, f.pdn, iova, 8, acc::remote_read)) == 0);
		CHECK(err(keys.lookup_rkey(krw, f.pdn, iova, 8, acc::remote_write)) == 0);
		CHECK(err(keys.lookup_rkey(krw, f.pdn, iova, 8, acc::remote_atomic)) == -EACCES);
		CHECK(err(keys.lookup_rkey(kat, f.pdn, iova, 8, acc::remote_atomic)) == 0);
		CHECK(err(keys.lookup_rkey(kat, f.pdn, iova, 8, acc::remote_read)) == -EACCES);
		// An MR without remote rights has an rkey that no remote access passes.
		CHECK(err(keys.lookup_rkey(kro, f.pdn, iova, 8, acc::remote_read)) == -EACCES);
		CHECK(err(keys.lookup_rkey(krw, f.pdn, iova + 2 * PAGE - 7, 8, acc::remote_read)) == -ERANGE);
	}
	SECTION("another PD") {
		sroce_core_pd *pd2;
		REQUIRE(sroce_core_pd_create(f.dev, &pd2) == 0);
		u32 pdn2 = sroce_core_pd_number(pd2);
		CHECK(err(keys.lookup_lkey(kro, pdn2, iova, 1, 0)) == -EACCES);
		CHECK(err(keys.lookup_rkey(krw, pdn2, iova, 1, acc::remote_read)) == -EACCES);
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
		CHECK(err(keys.lookup_rkey(krw, f.pdn, 0, 0, acc::remote_write)) == 0);
		CHECK(err(keys.lookup_lkey(kro, f.pdn, ~0ull, 0, 0)) == 0);
		CHECK(err(keys.lookup_rkey(krw, f.pdn, 0, 0, acc::remote_atomic)) == -EACCES);
		CHECK(err(keys.lookup_lkey(kro ^ 1, f.pdn, iova, 0, 0)) == -EINVAL);
	}
	SECTION("invalidate makes a key miss until it is enabled again") {
		CHECK(err(keys.invalidate(krw ^ 1, f.pdn)) == -EINVAL);
		CHECK(err(keys.invalidate(krw, f.pdn + 1)) == -EACCES);
		CHECK(err(keys.invalidate(krw, f.pdn)) == 0);
		CHECK(err(keys.lookup_rkey(krw, f.pdn, iova, 8, acc::remote_read)) == -EINVAL);
		CHECK(err(keys.lookup_lkey(krw, f.pdn, iova, 8, 0)) == -EINVAL);
		keys.enable(mr_of(rw));
		CHECK(err(keys.lookup_lkey(krw, f.pdn, iova, 8, 0)) == 0);
	}
	SECTION("a caller that asks for the wrong kind of right is a core bug") {
		CHECK(err(keys.lookup_rkey(krw, f.pdn, iova, 8, 0)) == -EINVAL);
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
		ktl::RefPtr<Mr> held = r.release_value();
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
	ktl::RefPtr<Mr> held = r.release_value();
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
	f.keys().remove(mr);
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
		one.remove(mr);
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
	CHECK(err(f.keys().lookup_rkey(mr.rkey(), f.pdn, 0, 8, acc::remote_read)) == -EACCES);
	sroce_core_counts c;
	sroce_core_dev_counts(f.dev, &c);
	CHECK(c.mrs == 1);
	CHECK(c.pinned_pages == 0);
	sroce_core_mr_destroy(h);
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
	auto release = [](void *owner, int) {
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
				auto r = f.keys().lookup_rkey(k, f.pdn, iova, sizeof(buf), acc::remote_write);
				if (r.is_error()) {
					if (r.error().code() != -EINVAL)
						bad++;
					misses++;
					continue;
				}
				auto mr = r.release_value();
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
	CHECK(hits > 0);
	INFO("hits " << hits << " misses " << misses);
	sroce_core_counts c;
	sroce_core_dev_counts(f.dev, &c);
	CHECK(c.mrs == 0);
}

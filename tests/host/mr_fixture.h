// Helpers for the memory region tests (test_mr.cpp, test_mr_keys.cpp): a
// device with one PD, shuffled pages, and registration through the C API
// the glue calls.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "env_host.h"
#include "key_table.h"
#include "mr.h"
#include "mw_layout.h"

extern "C" {
#include "core.h"
}

namespace mrfx {

using sroce::Mr;
namespace acc = sroce::ib::access;

inline constexpr u64 PAGE = 4096;

inline sroce_core_dev *make_dev() {
	sroce_core_dev_init init{};
	init.netdev_mtu = 9000;
	init.netdev_up = 1;
	sroce_core_dev *dev = nullptr;
	REQUIRE(sroce_core_dev_create(&init, &dev) == 0);
	return dev;
}

inline sroce::Device &device(sroce_core_dev *h) { return *reinterpret_cast<sroce::Device *>(h); }
inline Mr &mr_of(sroce_core_mr *h) { return *reinterpret_cast<Mr *>(h); }
inline int err(const ktl::Result<void> &r) { return ktl::to_rc(r); }
template <typename T> inline int err(const ktl::Result<T> &r) { return r.is_error() ? r.error().code() : 0; }

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

inline u64 pages_for(u64 iova, u64 len) { return ((iova % PAGE) + len + PAGE - 1) / PAGE; }

struct Released {
	int calls = 0;
	int may_sleep = -1;
};
inline void count_release(void *owner, int may_sleep) {
	auto *r = static_cast<Released *>(owner);
	r->calls++;
	r->may_sleep = may_sleep;
}

inline sroce_core_mr_init page_init(sroce_core_pd *pd, u64 iova, u64 len, u32 access) {
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
inline sroce_core_mr *reg(sroce_core_dev *dev, sroce_core_pd *pd, u64 iova, u64 len, u32 access, Pages &pg,
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

} // namespace mrfx

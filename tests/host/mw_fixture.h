// Memory-window helpers shared by test_mw.cpp and test_mw_layout.cpp: bind
// and invalidate WQEs, and a window that deallocates itself.
#pragma once
#include <catch2/catch.hpp>

#include "ib_enums.h"
#include "transport_fixture.h"

namespace mwfx {
namespace ib = sroce::ib;

constexpr unsigned int page = 4096;
constexpr unsigned int bindable = ib::access::local_write | ib::access::mw_bind;
constexpr unsigned int rw = ib::access::local_write | ib::access::remote_write | ib::access::remote_read;

// The key with the next key byte (ibv_inc_rkey).
inline unsigned int next_key(unsigned int key) { return (key & ~0xffu) | ((key + 1) & 0xffu); }

// A BIND_MW WQE: the verb's (type 1) or a work request's (type 2).
inline sroce_wqe bind(uint64_t wr_id, unsigned int new_key, unsigned int mr_lkey, uint64_t addr, uint64_t len,
		      unsigned int access, bool type1) {
	sroce_wqe w = tfx::wqe(wr_id, ib::wr_bind_mw, 0, SROCE_WQE_SIGNALED | (type1 ? SROCE_WQE_BIND_TYPE1 : 0));
	w.reg.new_key = new_key;
	w.reg.mr_lkey = mr_lkey;
	w.reg.addr = addr;
	w.reg.length = len;
	w.reg.access = access;
	return w;
}

// A WQE carrying a key to invalidate (LOCAL_INV, SEND_WITH_INV).
inline sroce_wqe keyed(uint64_t wr_id, unsigned char op, unsigned int key, unsigned int nsge) {
	sroce_wqe w = tfx::wqe(wr_id, op, nsge);
	w.imm_or_inv = key;
	return w;
}

struct Window {
	sroce_core_mw *mw = nullptr;
	Window(tfx::Node &n, unsigned int type, unsigned int max_descriptors = 0) {
		REQUIRE(sroce_core_mw_create(n.pd, type, 0, max_descriptors, &mw) == 0);
	}
	~Window() { release(); }
	unsigned int key() const { return sroce_core_mw_rkey(mw); }
	void release() {
		if (mw)
			CHECK(sroce_core_mw_destroy(mw) == 0); // no REQUIRE: destructors must not throw
		mw = nullptr;
	}
};
} // namespace mwfx

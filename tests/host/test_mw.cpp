// Memory windows (mw.h): type 1 bound by the verb and unbound by a
// zero-length bind, type 2 bound by a work request once until LOCAL_INV or
// a SEND with invalidate, zero-based and VA-based windows, the window's own
// rights and bounds, the type 2 window's QP, deallocation while bound, and
// an MR that cannot be deregistered while windows are bound to it.
#include <catch2/catch.hpp>

#include "mw_fixture.h"

using namespace tfx;
using namespace mwfx;
namespace ib = sroce::ib;

namespace {
// Node b's MR (LOCAL_WRITE | MW_BIND, no remote right of its own) and its
// windows; node a writes and reads through them.
struct Pair {
	Fixture f{91};
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	Buffer &la = f.buffer(a, 4 * page, rw);
	Buffer &mr = f.buffer(b, 4 * page, bindable);
	uint64_t base = iova_of(b, mr);
	Pair() { f.connect(qa, qb, ib::mtu_1024); }
	// Binds a window of this pair's MR with qb; the bind must succeed.
	void bound(uint64_t wr_id, unsigned int key, uint64_t addr, uint64_t len, unsigned int access, bool type1) {
		REQUIRE(complete_one(f, qb, bind(wr_id, key, f.lkey(mr), addr, len, access, type1)).status == ib::wc_success);
	}
	int write(uint64_t wr_id, uint64_t va, unsigned int rkey, unsigned int len) {
		return complete_one(f, qa, rdma_wqe(wr_id, ib::wr_rdma_write, va, rkey), {sge_of(f, a, la, 0, len)}).status;
	}
};
} // namespace

TEST_CASE("mw: type 2, bound by a work request, reaches its window only", "[mw]") {
	Pair p;
	Window w(p.b, 2);
	unsigned int k = next_key(w.key());
	sroce_cqe c = complete_one(p.f, p.qb, bind(1, k, p.f.lkey(p.mr), p.base + page, 2 * page,
					  ib::access::remote_write | ib::access::local_write, false));
	CHECK(c.status == ib::wc_success);
	CHECK(c.opcode == ib::wc_bind_mw);
	CHECK(device_counter(p.b, SROCE_CNT_MW_BINDS) == 1);
	// The window's rights, not the MR's: remote write works, and lands.
	CHECK(p.write(2, p.base + page + 100, k, 1000) == ib::wc_success);
	CHECK(std::memcmp(p.mr.data + page + 100, p.la.data, 1000) == 0);
	// Its last byte, but not one beyond either end.
	CHECK(p.write(3, p.base + 3 * page - 8, k, 8) == ib::wc_success);
	CHECK(p.mr.guards_intact());
}

TEST_CASE("mw: a write one byte outside the window is refused", "[mw]") {
	for (int below = 0; below < 2; below++) {
		DYNAMIC_SECTION((below ? "below" : "above")) {
			Pair p;
			Window w(p.b, 2);
			unsigned int k = next_key(w.key());
			p.bound(1, k, p.base + page, page, ib::access::remote_write, false);
			std::vector<unsigned char> before(p.mr.data, p.mr.data + 4 * page);
			uint64_t va = below ? p.base + page - 1 : p.base + 2 * page - 7;
			CHECK(p.write(2, va, k, 8) == ib::wc_rem_access_err);
			CHECK(std::memcmp(before.data(), p.mr.data, 4 * page) == 0);
		}
	}
}

TEST_CASE("mw: the window's rights are enforced (a LOCAL_WRITE-only window)", "[mw]") {
	// rdma-core's test_qp_ex_rc_bind_mw: a window with no remote right.
	Pair p;
	Window w(p.b, 2);
	unsigned int k = next_key(w.key());
	p.bound(1, k, p.base, page, ib::access::local_write, false);
	CHECK(p.write(2, p.base, k, 8) == ib::wc_rem_access_err);
}

TEST_CASE("mw: a zero-based window addresses from 0", "[mw]") {
	Pair p;
	Window w(p.b, 2);
	unsigned int k = next_key(w.key());
	REQUIRE(complete_one(p.f, p.qb, bind(1, k, p.f.lkey(p.mr), p.base + 2 * page, page,
				    ib::access::remote_write | ib::access::remote_read | ib::access::zero_based, false))
			.status == ib::wc_success);
	CHECK(p.write(2, 16, k, 100) == ib::wc_success);
	CHECK(std::memcmp(p.mr.data + 2 * page + 16, p.la.data, 100) == 0);
	sroce_cqe c = complete_one(p.f, p.qa, rdma_wqe(3, ib::wr_rdma_read, 16, k), {sge_of(p.f, p.a, p.la, 2 * page, 100)});
	CHECK(c.status == ib::wc_success);
	CHECK(std::memcmp(p.la.data + 2 * page, p.la.data, 100) == 0);
	CHECK(p.write(4, page - 4, k, 8) == ib::wc_rem_access_err);
}

TEST_CASE("mw: type 2 ends with LOCAL_INV and with a SEND with invalidate, and binds again", "[mw]") {
	for (int remote = 0; remote < 2; remote++) {
		DYNAMIC_SECTION((remote ? "SEND with invalidate" : "LOCAL_INV")) {
			Pair p;
			Window w(p.b, 2);
			unsigned int k = next_key(w.key());
			p.bound(1, k, p.base, page, ib::access::remote_write, false);
			if (remote) {
				REQUIRE(p.f.post_recv(p.qb, 7, {sge_of(p.f, p.b, p.mr, 3 * page, 64)}) == 0);
				CHECK(complete_one(p.f, p.qa, keyed(2, ib::wr_send_inv, k, 1), {sge_of(p.f, p.a, p.la, 0, 64)}).status ==
				      ib::wc_success);
				std::vector<sroce_cqe> cb;
				REQUIRE(p.f.wait_cqes(p.b, 1, cb));
				CHECK(cb[0].status == ib::wc_success);
				CHECK((cb[0].flags & SROCE_CQE_WITH_INV));
				CHECK(cb[0].imm_or_inv == k);
			} else {
				sroce_cqe c = complete_one(p.f, p.qb, keyed(2, ib::wr_local_inv, k, 0));
				CHECK(c.status == ib::wc_success);
				CHECK(c.opcode == ib::wc_local_inv);
			}
			std::vector<unsigned char> before(p.mr.data, p.mr.data + page);
			CHECK(p.write(3, p.base, k, 8) == ib::wc_rem_access_err);
			CHECK(std::memcmp(before.data(), p.mr.data, page) == 0);
		}
	}
}

TEST_CASE("mw: type 2 binds again after LOCAL_INV with a new key; the old key misses", "[mw]") {
	Pair p;
	Window w(p.b, 2);
	unsigned int k1 = next_key(w.key()), k2 = next_key(k1);
	p.bound(1, k1, p.base, page, ib::access::remote_write, false);
	REQUIRE(complete_one(p.f, p.qb, keyed(2, ib::wr_local_inv, k1, 0)).status == ib::wc_success);
	p.bound(3, k2, p.base + page, page, ib::access::remote_write, false);
	CHECK(p.write(4, p.base + page, k2, 8) == ib::wc_success);
	CHECK(p.write(5, p.base + page, k1, 8) == ib::wc_rem_access_err);
}

TEST_CASE("mw: type 1, bound by the verb, bound again with a new key, unbound by length 0", "[mw]") {
	Pair p;
	Window w(p.b, 1);
	unsigned int k1 = next_key(w.key()), k2 = next_key(k1), k3 = next_key(k2);
	p.bound(1, k1, p.base, page, ib::access::remote_write, true);
	CHECK(p.write(2, p.base, k1, 8) == ib::wc_success);
	// Bound again while bound (type 1 may), elsewhere: the old key misses.
	p.bound(3, k2, p.base + page, page, ib::access::remote_write, true);
	CHECK(p.write(4, p.base + page, k2, 8) == ib::wc_success);
	// A zero-length bind unbinds.
	REQUIRE(complete_one(p.f, p.qb, bind(5, k3, 0, 0, 0, 0, true)).status == ib::wc_success);
	CHECK(p.write(6, p.base + page, k2, 8) == ib::wc_rem_access_err);
}

TEST_CASE("mw: a window's key is no lkey", "[mw]") {
	// Windows have rkeys only: an SGE naming one is a local protection error.
	Pair p;
	Window w(p.b, 1);
	unsigned int k = next_key(w.key());
	p.bound(1, k, p.base, page, ib::access::remote_write, true);
	CHECK(complete_one(p.f, p.qb, wqe(2, ib::wr_send, 1), {sroce_sge{p.base, 8, k}}).status == ib::wc_loc_prot_err);
}

TEST_CASE("mw: bound with LOCAL_WRITE, a plain window's key is an lkey in its PD (seed 003)", "[mw]") {
	Pair p;
	Window w(p.b, 1);
	unsigned int k = next_key(w.key());
	p.bound(1, k, p.base + page, page, ib::access::remote_write | ib::access::local_write, true);
	// Out of the window: a SEND gathers through the key, within its range only.
	REQUIRE(p.f.post_recv(p.qa, 7, {sge_of(p.f, p.a, p.la, 0, 64)}) == 0);
	CHECK(complete_one(p.f, p.qb, wqe(2, ib::wr_send, 1), {sroce_sge{p.base + page + 8, 64, k}}).status ==
	      ib::wc_success);
	std::vector<sroce_cqe> ca;
	REQUIRE(p.f.wait_cqes(p.a, 1, ca));
	CHECK(ca[0].status == ib::wc_success);
	CHECK(std::memcmp(p.la.data, p.mr.data + page + 8, 64) == 0);
	CHECK(complete_one(p.f, p.qb, wqe(3, ib::wr_send, 1), {sroce_sge{p.base + 2 * page - 8, 64, k}}).status ==
	      ib::wc_loc_prot_err);
}

TEST_CASE("mw: deallocation ends a bound window, and the MR waits for its windows", "[mw]") {
	Pair p;
	Window w(p.b, 2);
	unsigned int k = next_key(w.key());
	p.bound(1, k, p.base, page, ib::access::remote_write, false);
	sroce_core_mr_view v{};
	sroce_core_mr_snapshot(p.mr.mr, &v);
	CHECK(v.windows == 1); // what rdma res show mr -dd shows
	CHECK(sroce_core_mr_destroy(p.mr.mr) == -EBUSY); // IBA 10.6.7.2.6, as rxe
	CHECK(p.write(2, p.base, k, 8) == ib::wc_success); // still bound and usable
	w.release();
	CHECK(p.write(3, p.base, k, 8) == ib::wc_rem_access_err);
}

TEST_CASE("mw: the MR can go once its windows are unbound", "[mw]") {
	Pair p;
	Window w(p.b, 2);
	unsigned int k = next_key(w.key());
	p.bound(1, k, p.base, page, ib::access::remote_write, false);
	REQUIRE(complete_one(p.f, p.qb, keyed(2, ib::wr_local_inv, k, 0)).status == ib::wc_success);
	sroce_core_mr_view v{};
	sroce_core_mr_snapshot(p.mr.mr, &v);
	CHECK(v.windows == 0);
	CHECK(sroce_core_mr_destroy(p.mr.mr) == 0);
	p.mr.mr = nullptr;
}

TEST_CASE("mw: refused binds fail with MW_BIND_ERR and bind nothing", "[mw][hostile]") {
	struct Case {
		const char *name;
		int kind;
	};
	for (Case k : {Case{"a type 2 window through the verb", 0}, Case{"a type 1 window by work request", 1},
		       Case{"beyond the MR", 2}, Case{"an MR without MW_BIND", 3},
		       Case{"remote write on an MR without local write", 4}, Case{"a type 2 window still bound", 5},
		       Case{"a type 2 window with length 0", 6}, Case{"a stale MR key", 7}, Case{"no window there", 8},
		       Case{"unknown access bits", 9}, Case{"a zero-based type 1 window (IBTA o10-36.2.2, as rxe)", 10}}) {
		DYNAMIC_SECTION(k.name) {
			Pair p;
			Window w2(p.b, 2), w1(p.b, 1);
			Buffer &nobind = p.f.buffer(p.b, page, ib::access::local_write);
			Buffer &ro = p.f.buffer(p.b, page, ib::access::mw_bind);
			unsigned int key = next_key(w2.key());
			sroce_wqe b = bind(1, key, p.f.lkey(p.mr), p.base, page, ib::access::remote_write, false);
			switch (k.kind) {
			case 0: b.flags |= SROCE_WQE_BIND_TYPE1; break;
			case 1: b.reg.new_key = next_key(w1.key()); break;
			case 2: b.reg.length = 4 * page + 1; break;
			case 3: b.reg.mr_lkey = p.f.lkey(nobind); b.reg.addr = iova_of(p.b, nobind); break;
			case 4: b.reg.mr_lkey = p.f.lkey(ro); b.reg.addr = iova_of(p.b, ro); break;
			case 5:
				p.bound(9, key, p.base, page, ib::access::remote_write, false);
				b.reg.new_key = next_key(key);
				break;
			case 6: b.reg.length = 0; break;
			case 7: b.reg.mr_lkey = next_key(p.f.lkey(p.mr)); break;
			case 8: b.reg.new_key = (p.f.lkey(p.mr) & ~0xffu) | 0x42; break; // an MR's index
			case 10:
				b = bind(1, next_key(w1.key()), p.f.lkey(p.mr), p.base, page,
					 ib::access::remote_write | ib::access::zero_based, true);
				break;
			default: b.reg.access |= 1u << 12; break;
			}
			sroce_cqe c = complete_one(p.f, p.qb, b);
			CHECK(c.status == ib::wc_mw_bind_err);
			CHECK(c.wr_id == 1);
			CHECK(device_counter(p.b, SROCE_CNT_MW_BINDS) == (k.kind == 5 ? 1u : 0u));
		}
	}
}

TEST_CASE("mw: LOCAL_INV of a type 1 window fails", "[mw][hostile]") {
	Pair p;
	Window w(p.b, 1);
	unsigned int k = next_key(w.key());
	p.bound(1, k, p.base, page, ib::access::remote_write, true);
	CHECK(complete_one(p.f, p.qb, keyed(2, ib::wr_local_inv, k, 0)).status == ib::wc_loc_qp_op_err);
}

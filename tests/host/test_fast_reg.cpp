// Fast registration (FRWR) as kernel storage protocols use it: ib_alloc_mr,
// ib_map_mr_sg staging a page list, IB_WR_REG_MR with a new key byte, the
// peer's RDMA through that key, SEND with invalidate and LOCAL_INV ending
// it, and every refusal (IBTA 10.6.3; rxe's statuses).
#include <catch2/catch.hpp>

#include "ib_enums.h"
#include "mw_fixture.h"
#include "transport_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {
constexpr unsigned int rw = ib::access::local_write | ib::access::remote_write | ib::access::remote_read;
constexpr unsigned int page = 4096;

// A fast-registration MR with room for `room` pages, over memory of its own
// (guard page | pages | guard page) whose pages are staged in the order
// given, as a scatterlist of separate pages would map them.
struct FastMr {
	unsigned char *mem = nullptr;
	unsigned int npages = 0;
	sroce_core_mr *mr = nullptr;
	FastMr(Node &n, unsigned int room, unsigned int npages) : npages(npages) {
		mem = static_cast<unsigned char *>(std::aligned_alloc(page, (npages + 2) * page));
		std::memset(mem, 0xee, (npages + 2) * page);
		sroce_core_mr_init mi{};
		mi.pd = n.pd;
		mi.page_shift = 12;
		mi.npages = room;
		mi.fast_reg = 1;
		REQUIRE(sroce_core_mr_create(n.dev, &mi, &mr) == 0);
	}
	~FastMr() {
		sroce_core_mr_destroy(mr);
		std::free(mem);
	}
	unsigned char *pg(unsigned int i) { return mem + (i + 1) * page; }
	// Stages pages order[0..] at iova (its offset in the first page).
	int stage(const std::vector<unsigned int> &order, uint64_t iova, uint64_t len) {
		for (unsigned int i = 0; i < order.size(); i++)
			if (int rc = sroce_core_mr_stage_page(mr, i, pg(order[i])))
				return rc;
		return sroce_core_mr_stage_map(mr, order.size(), iova, len, 12);
	}
	unsigned int key() const { return sroce_core_mr_lkey(mr); }
	bool guards_intact() const {
		for (unsigned int i = 0; i < page; i++)
			if (mem[i] != 0xee || mem[(npages + 1) * page + i] != 0xee)
				return false;
		return true;
	}
};

sroce_wqe reg_mr(uint64_t wr_id, const FastMr &m, unsigned int new_key, uint64_t iova, uint64_t len,
		 unsigned int access) {
	sroce_wqe w = wqe(wr_id, ib::wr_reg_mr, 0);
	w.reg.mr_lkey = m.key();
	w.reg.new_key = new_key;
	w.reg.addr = iova;
	w.reg.length = len;
	w.reg.access = access;
	return w;
}

sroce_wqe local_inv(uint64_t wr_id, unsigned int key) {
	sroce_wqe w = wqe(wr_id, ib::wr_local_inv, 0);
	w.imm_or_inv = key;
	return w;
}


unsigned int next_key(unsigned int key) { return (key & ~0xffu) | ((key + 1) & 0xffu); }


struct Pair {
	Fixture f{71};
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	Pair() { f.connect(qa, qb, ib::mtu_1024); }
};
} // namespace

TEST_CASE("fast reg: a key is invalid until its REG_MR", "[fastreg]") {
	Pair p;
	Buffer &la = p.f.buffer(p.a, 3 * page, rw);
	FastMr m(p.b, 8, 3);
	unsigned int key0 = m.key();
	REQUIRE(m.stage({2, 0, 1}, 0xffff888000001000ull + 100, 2 * page + 3000) == 0);
	// Staged, not registered: the key is invalid.
	CHECK(complete_one(p.f, p.qa, rdma_wqe(1, ib::wr_rdma_write, 0x5000, key0), {sge_of(p.f, p.a, la, 0, 8)}).status ==
	      ib::wc_rem_access_err);
	CHECK(m.guards_intact());
}

TEST_CASE("fast reg: a registration serves RDMA until a SEND with invalidate ends it", "[fastreg]") {
	Pair p;
	Buffer &la = p.f.buffer(p.a, 4 * page, rw);
	Buffer &lb = p.f.buffer(p.b, page, rw);
	FastMr m(p.b, 8, 3);
	// The pages out of order, as separate scatterlist entries may be;
	// the mapping starts 100 bytes into the first.
	REQUIRE(m.stage({2, 0, 1}, 0xffff888000001000ull + 100, 2 * page + 3000) == 0);
	// Zero-based, as NFS registers: the consumer's iova, not the mapped one.
	const uint64_t va = 0;
	unsigned int key = next_key(m.key());
	sroce_cqe c = complete_one(p.f, p.qb, reg_mr(1, m, key, va, 2 * page + 3000, rw));
	CHECK(c.status == ib::wc_success);
	CHECK(c.opcode == ib::wc_reg_mr);
	CHECK(c.wr_id == 1);
	CHECK(m.key() == key);

	// 5000 bytes from offset 10: page 2 from byte 110, then page 0.
	CHECK(complete_one(p.f, p.qa, rdma_wqe(2, ib::wr_rdma_write, va + 10, key), {sge_of(p.f, p.a, la, 0, 5000)}).status ==
	      ib::wc_success);
	CHECK(std::memcmp(m.pg(2) + 110, la.data, page - 110) == 0);
	CHECK(std::memcmp(m.pg(0), la.data + page - 110, 5000 - (page - 110)) == 0);
	CHECK(m.pg(2)[109] == 0xee);
	CHECK(m.pg(0)[5000 - (page - 110)] == 0xee);
	// READ it back into another place of la.
	c = complete_one(p.f, p.qa, rdma_wqe(3, ib::wr_rdma_read, va + 10, key), {sge_of(p.f, p.a, la, 2 * page, 5000)});
	CHECK(c.status == ib::wc_success);
	CHECK(std::memcmp(la.data + 2 * page, la.data, 5000) == 0);

	// SEND with invalidate: the receive completes WITH_INV and the key.
	REQUIRE(p.f.post_recv(p.qb, 7, {sge_of(p.f, p.b, lb, 0, 64)}) == 0);
	sroce_wqe s = wqe(4, ib::wr_send_inv, 1);
	s.imm_or_inv = key;
	CHECK(complete_one(p.f, p.qa, s, {sge_of(p.f, p.a, la, 0, 64)}).status == ib::wc_success);
	std::vector<sroce_cqe> cb;
	REQUIRE(p.f.wait_cqes(p.b, 1, cb));
	CHECK(cb[0].wr_id == 7);
	CHECK(cb[0].status == ib::wc_success);
	CHECK(cb[0].opcode == ib::wc_recv);
	CHECK((cb[0].flags & SROCE_CQE_WITH_INV));
	CHECK(cb[0].imm_or_inv == key);
	CHECK(cb[0].byte_len == 64);
	CHECK(device_counter(p.b, SROCE_CNT_FAST_REGS) == 1);
	CHECK(device_counter(p.b, SROCE_CNT_REMOTE_INVS) == 1);
	CHECK(device_counter(p.b, SROCE_CNT_LOCAL_INVS) == 0);

	// The key is gone: a WRITE through it is refused and changes nothing.
	std::vector<unsigned char> before(m.pg(0), m.pg(0) + page);
	CHECK(complete_one(p.f, p.qa, rdma_wqe(5, ib::wr_rdma_write, va, key), {sge_of(p.f, p.a, la, page, 8)}).status ==
	      ib::wc_rem_access_err);
	CHECK(std::memcmp(before.data(), m.pg(0), page) == 0);
	CHECK(m.guards_intact());
}

TEST_CASE("fast reg: LOCAL_INV, a new key byte, and the bounds of a registration", "[fastreg]") {
	Pair p;
	Buffer &la = p.f.buffer(p.a, 2 * page, rw);
	FastMr m(p.b, 4, 2);
	REQUIRE(m.stage({0, 1}, 0x7000, 2 * page) == 0);
	unsigned int k1 = next_key(m.key());
	CHECK(complete_one(p.f, p.qb, reg_mr(1, m, k1, 0x7000, 2 * page, rw)).status == ib::wc_success);
	// The last byte is inside; one past it is not (the QP then errs:
	// a fresh pair below).
	CHECK(complete_one(p.f, p.qa, rdma_wqe(2, ib::wr_rdma_write, 0x7000 + 2 * page - 1, k1), {sge_of(p.f, p.a, la, 0, 1)})
		      .status == ib::wc_success);
	CHECK(m.pg(1)[page - 1] == la.data[0]);

	sroce_cqe c = complete_one(p.f, p.qb, local_inv(3, k1));
	CHECK(c.status == ib::wc_success);
	CHECK(c.opcode == ib::wc_local_inv);
	// Invalidating it again is allowed (rxe does); registering it again
	// needs a new key byte and gets a new range.
	CHECK(complete_one(p.f, p.qb, local_inv(4, k1)).status == ib::wc_success);
	CHECK(device_counter(p.b, SROCE_CNT_LOCAL_INVS) == 2);
	REQUIRE(m.stage({1}, 0x9000, page) == 0);
	unsigned int k2 = next_key(k1);
	CHECK(complete_one(p.f, p.qb, reg_mr(5, m, k2, 0x9000, page, rw)).status == ib::wc_success);
	CHECK(complete_one(p.f, p.qa, rdma_wqe(6, ib::wr_rdma_write, 0x9000, k2), {sge_of(p.f, p.a, la, 0, 16)}).status ==
	      ib::wc_success);
	CHECK(std::memcmp(m.pg(1), la.data, 16) == 0);
	// The old key misses now, and nothing moves.
	std::vector<unsigned char> before(m.pg(0), m.pg(0) + page);
	CHECK(complete_one(p.f, p.qa, rdma_wqe(7, ib::wr_rdma_write, 0x7000, k1), {sge_of(p.f, p.a, la, 0, 16)}).status ==
	      ib::wc_rem_access_err);
	CHECK(std::memcmp(before.data(), m.pg(0), page) == 0);
	CHECK(m.guards_intact());
}

TEST_CASE("fast reg: one byte past a registration is refused", "[fastreg]") {
	Pair q;
	Buffer &qa = q.f.buffer(q.a, page, rw);
	FastMr n(q.b, 4, 2);
	REQUIRE(n.stage({0, 1}, 0x7000, 2 * page) == 0);
	unsigned int k = next_key(n.key());
	CHECK(complete_one(q.f, q.qb, reg_mr(1, n, k, 0x7000, 2 * page, rw)).status == ib::wc_success);
	CHECK(complete_one(q.f, q.qa, rdma_wqe(2, ib::wr_rdma_write, 0x7000 + 2 * page - 1, k), {sge_of(q.f, q.a, qa, 0, 2)})
		      .status == ib::wc_rem_access_err);
	CHECK(n.guards_intact());
}

TEST_CASE("fast reg: staging refuses what does not fit", "[fastreg][hostile]") {
	Pair p;
	FastMr m(p.b, 2, 3);
	CHECK(sroce_core_mr_stage_page(m.mr, 2, m.pg(2)) == -ENOMEM); // beyond the room
	CHECK(sroce_core_mr_stage_page(m.mr, 0, nullptr) == -EINVAL);
	REQUIRE(sroce_core_mr_stage_page(m.mr, 0, m.pg(0)) == 0);
	REQUIRE(sroce_core_mr_stage_page(m.mr, 1, m.pg(1)) == 0);
	CHECK(sroce_core_mr_stage_map(m.mr, 3, 0, page, 12) == -EINVAL);          // more pages than room
	CHECK(sroce_core_mr_stage_map(m.mr, 2, 0, page, 21) == -EINVAL);          // another page size
	CHECK(sroce_core_mr_stage_map(m.mr, 2, 100, 2 * page, 12) == -EINVAL);    // past the last page
	CHECK(sroce_core_mr_stage_map(m.mr, 2, 0, 0, 12) == -EINVAL);             // empty
	CHECK(sroce_core_mr_stage_map(m.mr, 2, ~0ull - 10, 100, 12) == -EINVAL);  // wraps
	CHECK(sroce_core_mr_stage_map(m.mr, 2, 100, 2 * page - 100, 12) == 0);

	// A page-list MR is no fast-registration MR, and alloc's arguments
	// are checked.
	Buffer &plain = p.f.buffer(p.b, page, rw);
	CHECK(sroce_core_mr_stage_page(plain.mr, 0, m.pg(0)) == -EINVAL);
	sroce_core_mr_init mi{};
	mi.pd = p.b.pd;
	mi.page_shift = 12;
	mi.fast_reg = 1;
	sroce_core_mr *bad = nullptr;
	mi.npages = 0;
	CHECK(sroce_core_mr_create(p.b.dev, &mi, &bad) == -EINVAL);
	mi.npages = 513;
	CHECK(sroce_core_mr_create(p.b.dev, &mi, &bad) == -EINVAL);
	mi.npages = 4;
	mi.access = ib::access::remote_read;
	CHECK(sroce_core_mr_create(p.b.dev, &mi, &bad) == -EINVAL);
	mi.access = 0;
	mi.user = 1;
	CHECK(sroce_core_mr_create(p.b.dev, &mi, &bad) == -EINVAL);
	CHECK(bad == nullptr);
}

TEST_CASE("fast reg: refused REG_MR and LOCAL_INV fail with LOC_QP_OP_ERR", "[fastreg][hostile]") {
	struct Case {
		const char *name;
		int kind;
	};
	for (Case k : {Case{"a key byte of another index", 0}, Case{"longer than the staged pages", 1},
		       Case{"while registered", 2}, Case{"remote write without local write", 3},
		       Case{"a page-list MR", 4}, Case{"LOCAL_INV of a page-list MR", 5},
		       Case{"LOCAL_INV of a stale key", 6}, Case{"nothing staged", 7},
		       Case{"an index that holds a window", 8}}) {
		DYNAMIC_SECTION(k.name) {
			Pair p;
			Buffer &plain = p.f.buffer(p.b, page, rw);
			FastMr m(p.b, 4, 2);
			mwfx::Window win(p.b, 2); // allocated, not bound: no MR at its index
			if (k.kind != 7)
				REQUIRE(m.stage({0, 1}, 0, 2 * page) == 0);
			unsigned int key = next_key(m.key());
			sroce_wqe w = reg_mr(1, m, key, 0, 2 * page, rw);
			switch (k.kind) {
			case 0: w.reg.new_key = key + 0x100; break;
			case 1: w.reg.length = 2 * page + 1; break;
			case 2:
				REQUIRE(complete_one(p.f, p.qb, reg_mr(9, m, key, 0, page, rw)).status == ib::wc_success);
				w.reg.new_key = next_key(key);
				break;
			case 3: w.reg.access = ib::access::remote_write; break;
			case 4: w.reg.mr_lkey = p.f.lkey(plain); w.reg.new_key = next_key(p.f.lkey(plain)); break;
			case 5: w = local_inv(1, p.f.lkey(plain)); break;
			case 6: w = local_inv(1, next_key(key)); break;
			case 8:
				w.reg.mr_lkey = win.key();
				w.reg.new_key = next_key(win.key());
				break;
			default: break;
			}
			sroce_cqe c = complete_one(p.f, p.qb, w);
			CHECK(c.status == ib::wc_loc_qp_op_err);
			CHECK(c.wr_id == 1);
			// The QP is in error: a later WQE is flushed.
			CHECK(complete_one(p.f, p.qb, local_inv(2, key)).status == ib::wc_wr_flush_err);
			CHECK(m.guards_intact());
		}
	}
}

TEST_CASE("fast reg: SEND with invalidate of a key the QP may not invalidate", "[fastreg][hostile]") {
	for (int kind = 0; kind < 3; kind++) {
		DYNAMIC_SECTION("kind " << kind) {
			Pair p;
			Buffer &la = p.f.buffer(p.a, page, rw);
			Buffer &lb = p.f.buffer(p.b, page, rw);
			FastMr m(p.b, 4, 1);
			REQUIRE(m.stage({0}, 0, page) == 0);
			unsigned int key = next_key(m.key());
			REQUIRE(complete_one(p.f, p.qb, reg_mr(1, m, key, 0, page, rw)).status == ib::wc_success);
			unsigned int inv = kind == 0 ? p.f.lkey(lb) /* a page-list MR */
					 : kind == 1 ? next_key(key) /* a stale key byte */
						     : 0x00ffff00u; /* no such index */
			REQUIRE(p.f.post_recv(p.qb, 7, {sge_of(p.f, p.b, lb, 0, 64)}) == 0);
			sroce_wqe s = wqe(4, ib::wr_send_inv, 1);
			s.imm_or_inv = inv;
			CHECK(complete_one(p.f, p.qa, s, {sge_of(p.f, p.a, la, 0, 64)}).status == ib::wc_rem_inv_req_err);
			std::vector<sroce_cqe> cb;
			REQUIRE(p.f.wait_cqes(p.b, 1, cb));
			CHECK(cb[0].wr_id == 7);
			CHECK(cb[0].status == ib::wc_rem_inv_req_err);
			CHECK(device_counter(p.b, SROCE_CNT_REMOTE_INVS) == 0);
			CHECK(device_counter(p.b, SROCE_CNT_NAK_SENT_INV_REQ) == 1);
			// The registration is untouched.
			CHECK(m.key() == key);
		}
	}
}

TEST_CASE("fast reg: SEND with invalidate is RC's and XRC's, not UC's", "[fastreg]") {
	Fixture f(72);
	Node &a = f.node(0), &b = f.node(1);
	Qp &ua = f.qp(a, ib::qpt_uc), &ub = f.qp(b, ib::qpt_uc);
	f.connect(ua, ub, ib::mtu_1024);
	Buffer &la = f.buffer(a, page, rw);
	sroce_wqe s = wqe(1, ib::wr_send_inv, 1);
	s.imm_or_inv = 0x101;
	CHECK(complete_one(f, ua, s, {sge_of(f, a, la, 0, 8)}).status == ib::wc_loc_qp_op_err);
}

TEST_CASE("fast reg: a resend of the WQEs before a REG_MR does not execute it again", "[fastreg]") {
	// The SEND ahead of the REG_MR loses its first packet: the peer's
	// sequence NAK rewinds the requester to it after the REG_MR ran. A
	// second execution would find the key valid and fail the QP, or, after
	// an invalidation, make a dead key valid again.
	Pair p;
	Buffer &la = p.f.buffer(p.a, 4 * page, rw);
	Buffer &lb = p.f.buffer(p.b, 4 * page, rw);
	FastMr m(p.b, 4, 1);
	REQUIRE(m.stage({0}, 0, page) == 0);
	unsigned int key = next_key(m.key());
	int firsts = 0;
	p.f.sim().set_filter([&](const sim::WirePacket &w) {
		return !(w.from == p.b.id && w.len > 28 && w.data[28] == ib::op::send_first && ++firsts == 1);
	});
	REQUIRE(p.f.post_recv(p.qa, 9, {sge_of(p.f, p.a, la, 0, 3 * 1024)}) == 0);
	REQUIRE(p.f.post_send(p.qb, wqe(1, ib::wr_send, 1), {sge_of(p.f, p.b, lb, 0, 3 * 1024)}) == 0);
	REQUIRE(p.f.post_send(p.qb, reg_mr(2, m, key, 0, page, rw), {}) == 0);
	REQUIRE(p.f.post_send(p.qb, local_inv(3, key), {}) == 0);
	REQUIRE(p.f.post_send(p.qb, reg_mr(4, m, next_key(key), 0, page, rw), {}) == 0);
	std::vector<sroce_cqe> cb;
	REQUIRE(p.f.wait_cqes(p.b, 4, cb, 20000000000ull));
	for (int i = 0; i < 4; i++) {
		CHECK(cb[i].wr_id == uint64_t(i + 1));
		CHECK(cb[i].status == ib::wc_success);
	}
	CHECK(firsts >= 2); // the SEND went again
	CHECK(device_counter(p.b, SROCE_CNT_FAST_REGS) == 2);
	CHECK(device_counter(p.b, SROCE_CNT_LOCAL_INVS) == 1);
	CHECK(m.key() == next_key(key));
	std::vector<sroce_cqe> ca;
	REQUIRE(p.f.wait_cqes(p.a, 1, ca));
	CHECK(ca[0].status == ib::wc_success);
	// The registration in force is the last one: the old key misses.
	CHECK(complete_one(p.f, p.qa, rdma_wqe(5, ib::wr_rdma_write, 0, next_key(key)), {sge_of(p.f, p.a, la, 0, 8)}).status ==
	      ib::wc_success);
	CHECK(complete_one(p.f, p.qa, rdma_wqe(6, ib::wr_rdma_write, 0, key), {sge_of(p.f, p.a, la, 0, 8)}).status ==
	      ib::wc_rem_access_err);
}

// Non-contiguous memory windows (seed 003; mw_layout.h): the seed's layouts
// (a matrix column, a cube face, a composite of three MRs, a layout of
// layouts, 2:1 interleaving) written, read and sent through one key, with
// every other byte checked unchanged; the window's lkey; invalidation; what
// a bound layout pins; and bad layouts and hostile bind WQEs, each refused
// with nothing bound.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <vector>

#include "mw_fixture.h"

using namespace tfx;
using namespace mwfx;
namespace acc = sroce::ib::access;

namespace {
constexpr unsigned int cell = 8;
constexpr unsigned int remote = acc::remote_write | acc::remote_read;

struct Entry {
	unsigned int kind;
	unsigned int key;
	uint64_t addr, length;
	unsigned int repeat = 0;
	std::vector<sroce_mw_layout_dim> dims = {};
};

struct Staged {
	int rc;
	sroce_mw_layout_resp resp;
};

Staged stage(Window &w, unsigned int type, const std::vector<Entry> &entries, unsigned int access) {
	std::vector<sroce_mw_layout_entry> es;
	std::vector<sroce_mw_layout_dim> dims;
	for (const Entry &e : entries) {
		es.push_back({e.addr, e.length, e.kind, e.key, e.repeat, unsigned(e.dims.size())});
		dims.insert(dims.end(), e.dims.begin(), e.dims.end());
	}
	sroce_mw_layout_req req{0, type, unsigned(es.size()), access, 0};
	Staged s{};
	s.rc = sroce_core_mw_stage_layout(w.mw, &req, es.data(), dims.data(), unsigned(dims.size()), &s.resp);
	return s;
}

sroce_wqe bind_layout(uint64_t wr_id, unsigned int key, const sroce_mw_layout_resp &r, unsigned int access, bool type1) {
	sroce_wqe w = bind(wr_id, key, 0, 0, r.length, access, type1);
	w.reg.layout = r.handle;
	return w;
}

// Node a writes, reads and sends; node b owns the memory and the windows.
struct Pair {
	Fixture f{93};
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	Buffer &la = f.buffer(a, 64 * page, rw);
	Pair() { f.connect(qa, qb, ib::mtu_1024); }

	Buffer &memory(size_t len, unsigned int access = bindable) { return f.buffer(b, len, access); }
	uint64_t iova(const Buffer &m) const { return iova_of(b, m); }
	// Stages and binds; both must succeed. Returns the layout's length.
	uint64_t bound(Window &w, unsigned int key, unsigned int type, const std::vector<Entry> &es, unsigned int access,
		       bool type1 = true) {
		Staged s = stage(w, type, es, access);
		REQUIRE(s.rc == 0);
		REQUIRE(complete_one(f, qb, bind_layout(1, key, s.resp, access, type1)).status == ib::wc_success);
		return s.resp.length;
	}
	// A bind expected to fail puts its QP in error: post it on a QP of its own.
	sroce_cqe bind_apart(const sroce_wqe &w) {
		Qp &qa2 = f.qp(a, ib::qpt_rc), &qb2 = f.qp(b, ib::qpt_rc);
		f.connect(qa2, qb2, ib::mtu_1024);
		return complete_one(f, qb2, w);
	}
	int write(uint64_t va, unsigned int rkey, unsigned int len, size_t from = 0) {
		return complete_one(f, qa, rdma_wqe(2, ib::wr_rdma_write, va, rkey), {sge_of(f, a, la, from, len)}).status;
	}
	int read(uint64_t va, unsigned int rkey, unsigned int len, size_t to) {
		return complete_one(f, qa, rdma_wqe(3, ib::wr_rdma_read, va, rkey), {sge_of(f, a, la, to, len)}).status;
	}
};

// The bytes of m that a layout reaches (in layout order) must equal src; all
// others must equal their copy in before.
void check_landed(const Buffer &m, const std::vector<unsigned char> &before, const std::vector<size_t> &offsets,
		  size_t item, const unsigned char *src) {
	std::vector<unsigned char> expect = before;
	for (size_t i = 0; i < offsets.size(); i++)
		std::memcpy(expect.data() + offsets[i], src + i * item, item);
	CHECK(std::memcmp(expect.data(), m.data, m.len) == 0);
	CHECK(m.guards_intact());
}

std::vector<unsigned char> snapshot(const Buffer &m) { return {m.data, m.data + m.len}; }
} // namespace

TEST_CASE("mw layout: a column of a 1024x1024 matrix of 8-byte cells, written and read through one key",
	  "[mw][layout]") {
	Pair p;
	constexpr unsigned int n = 1024, col = 37;
	Buffer &m = p.memory(size_t(n) * n * cell);
	Window w(p.b, 1, n); // a piece per row
	unsigned int k = next_key(w.key());
	uint64_t len = p.bound(w, k, SROCE_MW_LAYOUT_INTERLEAVED,
			       {{SROCE_MW_ENTRY_MR, p.f.lkey(m), p.iova(m) + col * cell, cell, 0, {{n * cell, n}}}}, remote);
	CHECK(len == n * cell);
	std::vector<unsigned char> before = snapshot(m);
	REQUIRE(p.write(0, k, n * cell) == ib::wc_success);
	std::vector<size_t> offs;
	for (size_t r = 0; r < n; r++)
		offs.push_back(r * n * cell + col * cell);
	check_landed(m, before, offs, cell, p.la.data);
	// Read back from row 100 on, into another part of node a's buffer.
	REQUIRE(p.read(100 * cell, k, 200 * cell, 32 * page) == ib::wc_success);
	CHECK(std::memcmp(p.la.data + 32 * page, p.la.data + 100 * cell, 200 * cell) == 0);
	// One byte beyond the column's end.
	CHECK(p.write(n * cell - 4, k, 8) == ib::wc_rem_access_err);
}

TEST_CASE("mw layout: a face of a 3-D cube through two stride dimensions", "[mw][layout]") {
	Pair p;
	constexpr unsigned int x = 12, y = 10, z = 9, x0 = 5; // the face x = x0
	Buffer &m = p.memory(size_t(x) * y * z * cell);
	Window w(p.b, 1, y * z);
	unsigned int k = next_key(w.key());
	uint64_t len = p.bound(w, k, SROCE_MW_LAYOUT_INTERLEAVED,
			       {{SROCE_MW_ENTRY_MR, p.f.lkey(m), p.iova(m) + x0 * cell, cell, 0,
				 {{x * cell, y}, {uint64_t(x) * y * cell, z}}}},
			       remote);
	CHECK(len == uint64_t(y) * z * cell);
	std::vector<unsigned char> before = snapshot(m);
	REQUIRE(p.write(0, k, unsigned(len)) == ib::wc_success);
	std::vector<size_t> offs;
	for (size_t k3 = 0; k3 < z; k3++)
		for (size_t j = 0; j < y; j++)
			offs.push_back(((k3 * y + j) * x + x0) * cell);
	check_landed(m, before, offs, cell, p.la.data);
}

TEST_CASE("mw layout: a composite of three MRs", "[mw][layout]") {
	Pair p;
	Buffer &m1 = p.memory(2 * page), &m2 = p.memory(page), &m3 = p.memory(3 * page);
	Window w(p.b, 1, 16);
	unsigned int k = next_key(w.key());
	uint64_t len = p.bound(w, k, SROCE_MW_LAYOUT_COMPOSITE,
			       {{SROCE_MW_ENTRY_MR, p.f.lkey(m1), p.iova(m1) + 100, 1000},
				{SROCE_MW_ENTRY_MR, p.f.lkey(m2), p.iova(m2), page},
				{SROCE_MW_ENTRY_MR, p.f.lkey(m3), p.iova(m3) + 2 * page + 7, 500}},
			       remote);
	CHECK(len == 1000 + page + 500);
	auto b1 = snapshot(m1), b2 = snapshot(m2), b3 = snapshot(m3);
	REQUIRE(p.write(0, k, unsigned(len)) == ib::wc_success);
	check_landed(m1, b1, {100}, 1000, p.la.data);
	check_landed(m2, b2, {0}, page, p.la.data + 1000);
	check_landed(m3, b3, {2 * page + 7}, 500, p.la.data + 1000 + page);
	// A write across the seam of the first two pieces only.
	REQUIRE(p.write(990, k, 20, 8 * page) == ib::wc_success);
	CHECK(std::memcmp(m1.data + 1090, p.la.data + 8 * page, 10) == 0);
	CHECK(std::memcmp(m2.data, p.la.data + 8 * page + 10, 10) == 0);
}

TEST_CASE("mw layout: a layout of layouts (nesting depth 2)", "[mw][layout]") {
	Pair p;
	constexpr unsigned int rows = 64, cols = 16;
	Buffer &m = p.memory(rows * cols * cell), &tail = p.memory(page);
	Window col(p.b, 1, rows), plain(p.b, 1), outer(p.b, 1, 17);
	unsigned int kc = next_key(col.key()), kp = next_key(plain.key()), ko = next_key(outer.key());
	p.bound(col, kc, SROCE_MW_LAYOUT_INTERLEAVED,
		{{SROCE_MW_ENTRY_MR, p.f.lkey(m), p.iova(m) + 3 * cell, cell, 0, {{cols * cell, rows}}}}, remote);
	REQUIRE(complete_one(p.f, p.qb, bind(1, kp, p.f.lkey(tail), p.iova(tail) + 64, 256, remote, true)).status ==
		ib::wc_success);
	// Rows 8..23 of the column, then the plain window's bytes 16..47 (VA-based).
	uint64_t len = p.bound(outer, ko, SROCE_MW_LAYOUT_COMPOSITE,
			       {{SROCE_MW_ENTRY_MW, kc, 8 * cell, 16 * cell}, {SROCE_MW_ENTRY_MW, kp, p.iova(tail) + 80, 32}},
			       remote);
	CHECK(len == 16 * cell + 32);
	auto bm = snapshot(m), bt = snapshot(tail);
	REQUIRE(p.write(0, ko, unsigned(len)) == ib::wc_success);
	std::vector<size_t> offs;
	for (size_t r = 8; r < 24; r++)
		offs.push_back(r * cols * cell + 3 * cell);
	check_landed(m, bm, offs, cell, p.la.data);
	check_landed(tail, bt, {80}, 32, p.la.data + 16 * cell);
	// The inner windows are pinned while the outer layout is bound.
	CHECK(sroce_core_mw_destroy(col.mw) == -EBUSY);
	CHECK(p.bind_apart(bind(2, next_key(kp), 0, 0, 0, 0, true)).status == ib::wc_mw_bind_err);
	CHECK(sroce_core_mr_destroy(m.mr) == -EBUSY);
	CHECK(p.write(0, ko, unsigned(len)) == ib::wc_success); // all of it still there
	// Unbound, they are free again.
	REQUIRE(complete_one(p.f, p.qb, bind(3, next_key(ko), 0, 0, 0, 0, true)).status == ib::wc_success);
	CHECK(complete_one(p.f, p.qb, bind(4, next_key(kp), 0, 0, 0, 0, true)).status == ib::wc_success);
	col.release();
	CHECK(p.write(0, ko, 8) == ib::wc_rem_access_err);
}

TEST_CASE("mw layout: 2:1 non-uniform interleaving", "[mw][layout]") {
	Pair p;
	Buffer &ma = p.memory(page), &mb = p.memory(page);
	Window w(p.b, 1, 64);
	unsigned int k = next_key(w.key());
	// A: 8 items of 16 bytes, 32 apart, two per round; B: 4 items of 24
	// bytes, 40 apart, one per round.
	uint64_t len = p.bound(w, k, SROCE_MW_LAYOUT_INTERLEAVED,
			       {{SROCE_MW_ENTRY_MR, p.f.lkey(ma), p.iova(ma), 16, 2, {{32, 8}}},
				{SROCE_MW_ENTRY_MR, p.f.lkey(mb), p.iova(mb) + 8, 24, 1, {{40, 4}}}},
			       remote);
	CHECK(len == 8 * 16 + 4 * 24);
	auto ba = snapshot(ma), bb = snapshot(mb);
	REQUIRE(p.write(0, k, unsigned(len)) == ib::wc_success);
	// Round r: A[2r], A[2r+1], B[r].
	std::vector<unsigned char> wantA = ba, wantB = bb;
	size_t at = 0;
	for (size_t r = 0; r < 4; r++) {
		for (size_t i = 2 * r; i < 2 * r + 2; i++, at += 16)
			std::memcpy(wantA.data() + i * 32, p.la.data + at, 16);
		std::memcpy(wantB.data() + 8 + r * 40, p.la.data + at, 24);
		at += 24;
	}
	CHECK(std::memcmp(wantA.data(), ma.data, page) == 0);
	CHECK(std::memcmp(wantB.data(), mb.data, page) == 0);
}

TEST_CASE("mw layout: SEND out of a layout and into one, through the window's lkey", "[mw][layout]") {
	Pair p;
	constexpr unsigned int rows = 128, cols = 32;
	Buffer &m = p.memory(rows * cols * cell);
	Window w(p.b, 1, rows);
	unsigned int k = next_key(w.key());
	unsigned int len = unsigned(p.bound(w, k, SROCE_MW_LAYOUT_INTERLEAVED,
					    {{SROCE_MW_ENTRY_MR, p.f.lkey(m), p.iova(m), cell, 0, {{cols * cell, rows}}}},
					    remote | acc::local_write));
	// Out: the column travels as one contiguous message.
	REQUIRE(p.f.post_recv(p.qa, 9, {sge_of(p.f, p.a, p.la, 16 * page, len)}) == 0);
	REQUIRE(complete_one(p.f, p.qb, wqe(4, ib::wr_send, 1), {sroce_sge{0, len, k}}).status == ib::wc_success);
	std::vector<sroce_cqe> ca;
	REQUIRE(p.f.wait_cqes(p.a, 1, ca));
	CHECK(ca[0].status == ib::wc_success);
	CHECK(ca[0].byte_len == len);
	for (size_t r = 0; r < rows; r++)
		CHECK(std::memcmp(p.la.data + 16 * page + r * cell, m.data + r * cols * cell, cell) == 0);
	// In: a receive through the lkey scatters the message into the column.
	auto before = snapshot(m);
	REQUIRE(p.f.post_recv(p.qb, 10, {sroce_sge{0, len, k}}) == 0);
	REQUIRE(complete_one(p.f, p.qa, wqe(5, ib::wr_send, 1), {sge_of(p.f, p.a, p.la, 0, len)}).status ==
		ib::wc_success);
	std::vector<sroce_cqe> cb;
	REQUIRE(p.f.wait_cqes(p.b, 1, cb));
	CHECK(cb[0].status == ib::wc_success);
	std::vector<size_t> offs;
	for (size_t r = 0; r < rows; r++)
		offs.push_back(r * cols * cell);
	check_landed(m, before, offs, cell, p.la.data);
}

TEST_CASE("mw layout: without LOCAL_WRITE the window's key is no lkey", "[mw][layout]") {
	Pair p;
	Buffer &m = p.memory(page);
	Window w(p.b, 1, 16);
	unsigned int k = next_key(w.key());
	p.bound(w, k, SROCE_MW_LAYOUT_COMPOSITE, {{SROCE_MW_ENTRY_MR, p.f.lkey(m), p.iova(m), 64}}, remote);
	CHECK(complete_one(p.f, p.qb, wqe(4, ib::wr_send, 1), {sroce_sge{0, 64, k}}).status == ib::wc_loc_prot_err);
}

// A plain window may be bound with LOCAL_WRITE on an MR without it (a bind
// names remote rights; as a plain lkey it is refused by its MR). Inside a
// layout with LOCAL_WRITE its MR would be written through the layout's
// lkey: staging refuses it (found by review, 2026-12-01).
TEST_CASE("mw layout: a plain window of an MR without LOCAL_WRITE brings no LOCAL_WRITE into a layout",
	  "[mw][layout]") {
	Pair p;
	Buffer &m = p.memory(page, acc::mw_bind | acc::remote_read);
	Window plain(p.b, 1), w(p.b, 1, 16);
	unsigned int kp = next_key(plain.key());
	REQUIRE(complete_one(p.f, p.qb, bind(1, kp, p.f.lkey(m), p.iova(m), 256, acc::local_write | acc::remote_read, true))
			.status == ib::wc_success);
	CHECK(stage(w, SROCE_MW_LAYOUT_COMPOSITE, {{SROCE_MW_ENTRY_MW, kp, p.iova(m), 64}}, acc::local_write | acc::remote_read)
		      .rc == -EACCES);
	// Without LOCAL_WRITE the layout is staged.
	CHECK(stage(w, SROCE_MW_LAYOUT_COMPOSITE, {{SROCE_MW_ENTRY_MW, kp, p.iova(m), 64}}, acc::remote_read).rc == 0);
}

TEST_CASE("mw layout: type 2 ends with LOCAL_INV; the old key gets a NAK and no byte changes; it binds again",
	  "[mw][layout]") {
	Pair p;
	Buffer &m = p.memory(4 * page);
	Window w(p.b, 2, 64);
	unsigned int k1 = next_key(w.key()), k2 = next_key(k1);
	std::vector<Entry> col = {{SROCE_MW_ENTRY_MR, p.f.lkey(m), p.iova(m), cell, 0, {{64, 64}}}};
	p.bound(w, k1, SROCE_MW_LAYOUT_INTERLEAVED, col, remote, false);
	CHECK(p.write(0, k1, 64) == ib::wc_success);
	REQUIRE(complete_one(p.f, p.qb, keyed(2, ib::wr_local_inv, k1, 0)).status == ib::wc_success);
	p.bound(w, k2, SROCE_MW_LAYOUT_INTERLEAVED, col, remote, false);
	CHECK(p.write(0, k2, 64, page) == ib::wc_success);
	auto before = snapshot(m);
	CHECK(p.write(0, k1, 64) == ib::wc_rem_access_err); // the NAK ends both QPs
	CHECK(std::memcmp(before.data(), m.data, m.len) == 0);
}

TEST_CASE("mw layout: bad layouts are refused with their errno, and nothing is staged", "[mw][layout]") {
	Pair p;
	Buffer &m = p.memory(4 * page);
	Buffer &nobind = p.memory(page, acc::local_write);
	Buffer &ro = p.memory(page, acc::mw_bind);
	unsigned int lk = p.f.lkey(m);
	uint64_t base = p.iova(m);
	Window w(p.b, 1, 16), none(p.b, 1);
	auto rc = [&](unsigned int type, const std::vector<Entry> &es, unsigned int access = remote) {
		return stage(w, type, es, access).rc;
	};
	const unsigned int IL = SROCE_MW_LAYOUT_INTERLEAVED, CO = SROCE_MW_LAYOUT_COMPOSITE, MR = SROCE_MW_ENTRY_MR;
	CHECK(rc(CO, {}) == -EINVAL);
	CHECK(rc(CO, std::vector<Entry>(17, Entry{MR, lk, base, 8})) == -E2BIG);
	CHECK(rc(IL, {{MR, lk, base, 8, 0, std::vector<sroce_mw_layout_dim>(5, {8, 2})}}) == -E2BIG);
	CHECK(rc(IL, {{MR, lk, base, 16, 0, {{8, 4}}}}) == -EINVAL);             // items overlap
	CHECK(rc(IL, {{MR, lk, base, 8, 0, {{8, 4}, {16, 2}}}}) == -EINVAL);     // rows overlap
	CHECK(rc(IL, {{MR, lk, base, 8, 0, {{8, 0}}}}) == -EINVAL);              // no items
	CHECK(rc(IL, {{MR, lk, base, 8, 0, {{1ull << 62, 8}}}}) == -EOVERFLOW);
	CHECK(rc(IL, {{MR, lk, base, 8, 0, {{8, 1ull << 23}}}}) == -E2BIG);     // more items than the limit
	CHECK(rc(IL, {{MR, lk, base, 8, 0, {{256, 65}}}}) == -ERANGE);           // 64 * 256 + 8 > 4 pages
	CHECK(rc(CO, {{MR, lk, base + 4 * page - 8, 9}}) == -ERANGE);
	CHECK(rc(CO, {{MR, lk, base - 1, 8}}) == -ERANGE);
	CHECK(rc(IL, {{MR, lk, base, 8, 2, {{8, 3}}}}) == -EINVAL);              // 3 items, 2 per round
	CHECK(rc(IL, {{MR, lk, base, 8, 1, {{8, 4}}}, {MR, lk, base + page, 8, 1, {{8, 3}}}}) == -EINVAL);
	CHECK(rc(CO, {{MR, lk, base, 8, 1}}) == -EINVAL);                        // repeat in a composite
	CHECK(rc(CO, {{MR, lk, base, 0}}) == -EINVAL);
	CHECK(rc(CO, {{MR, lk ^ 0x80, base, 8}}) == -EINVAL);                    // a stale key byte
	CHECK(rc(CO, {{SROCE_MW_ENTRY_MW, lk, base, 8}}) == -EINVAL);            // an MR's key as a window's
	CHECK(rc(CO, {{7, lk, base, 8}}) == -EINVAL);
	CHECK(rc(CO, {{MR, p.f.lkey(nobind), p.iova(nobind), 8}}) == -EACCES);   // no MW_BIND
	CHECK(rc(CO, {{MR, p.f.lkey(ro), p.iova(ro), 8}}) == -EACCES);           // remote write, no local write
	CHECK(rc(CO, {{MR, p.f.lkey(ro), p.iova(ro), 8}}, acc::remote_read) == 0);
	CHECK(rc(CO, {{MR, lk, base, 8}}, 1u << 20) == -EINVAL);
	// More pieces than the window has room for (16), and none at all.
	CHECK(rc(IL, {{MR, lk, base, 8, 0, {{16, 17}}}}) == -E2BIG);
	CHECK(stage(none, CO, {{MR, lk, base, 8}}, remote).rc == -EINVAL);
	// A failed staging leaves the one staged before it in place.
	Staged good = stage(w, IL, {{MR, lk, base, 8, 0, {{16, 16}}}}, remote);
	REQUIRE(good.rc == 0);
	CHECK(good.resp.descriptors == 16);
	CHECK(rc(CO, {{MR, lk, base - 1, 8}}) == -ERANGE);
	unsigned int k = next_key(w.key());
	REQUIRE(complete_one(p.f, p.qb, bind_layout(1, k, good.resp, remote, true)).status == ib::wc_success);
	CHECK(p.write(0, k, 16 * 8) == ib::wc_success);
}

TEST_CASE("mw layout: a window inside itself, and nesting past the limit", "[mw][layout]") {
	Pair p;
	Buffer &m = p.memory(page);
	const unsigned int CO = SROCE_MW_LAYOUT_COMPOSITE;
	Window w0(p.b, 1, 16), w1(p.b, 1, 16), w2(p.b, 1, 16), w3(p.b, 1, 16);
	unsigned int k0 = next_key(w0.key());
	p.bound(w0, k0, CO, {{SROCE_MW_ENTRY_MR, p.f.lkey(m), p.iova(m), 64}}, remote);
	CHECK(stage(w0, CO, {{SROCE_MW_ENTRY_MW, k0, 0, 64}}, remote).rc == -ELOOP);
	unsigned int k1 = next_key(w1.key()), k2 = next_key(w2.key());
	p.bound(w1, k1, CO, {{SROCE_MW_ENTRY_MW, k0, 0, 64}}, remote);
	p.bound(w2, k2, CO, {{SROCE_MW_ENTRY_MW, k1, 0, 64}}, remote);
	CHECK(stage(w3, CO, {{SROCE_MW_ENTRY_MW, k2, 0, 64}}, remote).rc == -ELOOP); // depth 4
	CHECK(stage(w3, CO, {{SROCE_MW_ENTRY_MW, k1, 0, 64}}, remote).rc == 0);      // depth 3
	// A window passes on no right it lacks.
	CHECK(stage(w3, CO, {{SROCE_MW_ENTRY_MW, k1, 0, 64}}, remote | acc::remote_atomic).rc == -EACCES);
	CHECK(stage(w3, CO, {{SROCE_MW_ENTRY_MW, k1, 0, 65}}, remote).rc == -ERANGE);
}

TEST_CASE("mw layout: a rewritten bind WQE, or a layout whose memory changed since staging, binds nothing",
	  "[mw][layout]") {
	const unsigned int CO = SROCE_MW_LAYOUT_COMPOSITE;
	const char *cases[] = {"another handle", "another length", "wider rights", "MR deregistered since",
			       "inner window bound again since"};
	for (int c = 0; c < 5; c++) {
		DYNAMIC_SECTION(cases[c]) {
			Pair p;
			Buffer &m = p.memory(page);
			Window inner(p.b, 1), w(p.b, 1, 16);
			unsigned int k = next_key(w.key()), ik = next_key(inner.key());
			REQUIRE(complete_one(p.f, p.qb, bind(1, ik, p.f.lkey(m), p.iova(m), 64, remote, true)).status ==
				ib::wc_success);
			Entry e = c == 4 ? Entry{SROCE_MW_ENTRY_MW, ik, p.iova(m), 64} : Entry{SROCE_MW_ENTRY_MR, p.f.lkey(m), p.iova(m), 64};
			Staged s = stage(w, CO, {e}, c == 2 ? unsigned(acc::remote_read) : remote);
			REQUIRE(s.rc == 0);
			CHECK(s.resp.handle != 0);
			CHECK(s.resp.descriptors == 1);
			sroce_mw_layout_resp r = s.resp;
			if (c == 0)
				r.handle++;
			if (c == 1)
				r.length = 1 << 20;
			if (c == 3) {
				// The plain window holds the MR; let it go first.
				REQUIRE(complete_one(p.f, p.qb, bind(2, next_key(ik), 0, 0, 0, 0, true)).status == ib::wc_success);
				p.f.dereg(m);
			}
			if (c == 4) // same key byte, another range: still not what was compiled
				REQUIRE(complete_one(p.f, p.qb, bind(2, ik, p.f.lkey(m), p.iova(m) + 64, 64, remote, true))
						.status == ib::wc_success);
			CHECK(complete_one(p.f, p.qb, bind_layout(3, k, r, remote, true)).status == ib::wc_mw_bind_err);
			// The failed bind left qb in error; new QPs of the same PDs
			// find the key unbound.
			Qp &qa2 = p.f.qp(p.a, ib::qpt_rc), &qb2 = p.f.qp(p.b, ib::qpt_rc);
			p.f.connect(qa2, qb2, ib::mtu_1024);
			CHECK(complete_one(p.f, qa2, rdma_wqe(4, ib::wr_rdma_write, 0, k), {sge_of(p.f, p.a, p.la, 0, 8)}).status ==
			      ib::wc_rem_access_err);
		}
	}
}

TEST_CASE("mw layout: windows are counted until their last reference", "[mw][layout]") {
	Pair p;
	Buffer &m = p.memory(page);
	auto windows = [&] {
		sroce_core_counts c{};
		sroce_core_dev_counts(p.b.dev, &c);
		return c.mws;
	};
	const unsigned int CO = SROCE_MW_LAYOUT_COMPOSITE;
	Window outer(p.b, 1, 4);
	{
		Window inner(p.b, 1, 4);
		CHECK(windows() == 2);
		unsigned int ki = next_key(inner.key());
		p.bound(inner, ki, CO, {{SROCE_MW_ENTRY_MR, p.f.lkey(m), p.iova(m), 64}}, remote);
		// Staged, not bound: it holds the inner window's object, not the window.
		REQUIRE(stage(outer, CO, {{SROCE_MW_ENTRY_MW, ki, 0, 64}}, remote).rc == 0);
	}
	CHECK(windows() == 2); // deallocated, still referenced by the staged layout
	// Four more stagings push that one out (a window keeps its last four).
	for (int i = 0; i < 4; i++)
		REQUIRE(stage(outer, CO, {{SROCE_MW_ENTRY_MR, p.f.lkey(m), p.iova(m), 64}}, remote).rc == 0);
	CHECK(windows() == 1);
	outer.release();
	CHECK(windows() == 0);
}

TEST_CASE("mw layout: binds posted back to back each take their own staged layout", "[mw][layout]") {
	Pair p;
	Buffer &m = p.memory(page);
	const unsigned int CO = SROCE_MW_LAYOUT_COMPOSITE;
	Window w(p.b, 1, 4);
	std::vector<Staged> s;
	for (unsigned int i = 0; i < 5; i++) {
		s.push_back(stage(w, CO, {{SROCE_MW_ENTRY_MR, p.f.lkey(m), p.iova(m) + 64 * i, 64}}, remote));
		REQUIRE(s.back().rc == 0);
	}
	// The first staging was dropped by the fifth; the other four bind, in
	// order, each to its own range.
	unsigned int k = w.key();
	for (unsigned int i = 1; i < 5; i++) {
		k = next_key(k);
		REQUIRE(p.f.post_send(p.qb, bind_layout(10 + i, k, s[i].resp, remote, true), {}) == 0);
	}
	std::vector<sroce_cqe> c;
	REQUIRE(p.f.wait_cqes(p.b, 4, c));
	for (const sroce_cqe &e : c)
		CHECK(e.status == ib::wc_success);
	CHECK(p.write(0, k, 64) == ib::wc_success);
	CHECK(std::memcmp(m.data + 4 * 64, p.la.data, 64) == 0);
	CHECK(p.bind_apart(bind_layout(20, next_key(k), s[0].resp, remote, true)).status == ib::wc_mw_bind_err);
}

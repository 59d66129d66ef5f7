// Multi-packet receive on a WQ behind an RSS QP (issues 18 and 19,
// Documentation/mp-wr.md, kmod/core/wq.cpp): datagrams at aligned offsets
// of the buffer in use with the hash in each completion, release as
// CONSUMED or as a RECV_NOP, the ERR flush and the RESET drop of the
// buffer in use, and a WQE of the wrong size.
#include <catch2/catch.hpp>

#include "rss_fixture.h"

using namespace rssfx;

namespace {

constexpr unsigned int buf_sz = 8192, align = 256, grh = 40;

// One multi-packet WQ (RDY, nbuf buffers of buf_sz posted from dst, wr_id
// i + 1; wr_id n always names slot n - 1 of dst) as the table of an RSS UD QP on node b; a UD sender on node a.
struct MpWq {
	Fixture f;
	Node &a, &b;
	TestWq w;
	sroce_core_ind_table *table = nullptr;
	tfx::Qp rq;
	tfx::Qp &q;
	sroce_core_ah *ah;
	Buffer &src, &dst;

	MpWq(uint64_t seed, unsigned int nbuf)
		: f(seed), a(f.node(0)), b(f.node(1)), w(b.dev, b.pd, nullptr, buf_sz, align), q(f.qp(a, ib::qpt_ud)),
		  ah(f.ah(a, b)), src(f.buffer(a, 8192, all_access)), dst(f.buffer(b, size_t(buf_sz) * 8, all_access)) {
		REQUIRE(sroce_core_ind_table_create(b.dev, 0, &w.wq, &table) == 0);
		sroce_core_rss_init ri = toeplitz(rss::field::ipv4);
		ri.table = table;
		REQUIRE(RssSetup::create_rss_qp(f, b, ri, &rq.qp) == 0);
		rq.node = &b;
		rq.type = ib::qpt_ud;
		rq.qpn = sroce_core_qp_number(rq.qp);
		f.to_ud_rts(rq, qkey);
		f.to_ud_rts(q, qkey);
		for (unsigned int i = 0; i < src.len; i++)
			src.data[i] = uint8_t(i * 7 + 1);
		REQUIRE(w.modify(f, ib::wqs_rdy) == 0);
		for (unsigned int i = 0; i < nbuf; i++)
			REQUIRE(post(i + 1) == 0);
	}
	~MpWq() {
		sroce_core_qp_destroy(rq.qp);
		sroce_core_ind_table_destroy(table);
	}
	int post(uint64_t wr_id, unsigned int len = buf_sz) {
		return w.post(wr_id, sge_of(f, b, dst, size_t(wr_id - 1) * buf_sz, len));
	}
	void send(unsigned int len, uint64_t id = 1) { REQUIRE(send_ud(f, q, ah, rq.qpn, src, 0, len, id) == 0); }
	std::vector<sroce_cqe> wait(size_t n) {
		std::vector<sroce_cqe> got;
		wait_on(f, w.cq, n, got);
		f.sim().run_for(1000000); // and nothing more
		for (auto &c : w.cq.poll())
			got.push_back(c);
		return got;
	}
	// The payload of a data completion, where it was placed (slot = wr_id - 1).
	bool placed(const sroce_cqe &c) const {
		return std::memcmp(dst.data + (c.wr_id - 1) * buf_sz + c.mp_offset + grh, src.data, c.byte_len - grh) == 0;
	}
};

bool has(const sroce_cqe &c, unsigned int flag) { return c.flags & flag; }

} // namespace

TEST_CASE("rss+mp-wr: a multi-packet WQ behind an RSS QP takes datagrams at aligned offsets, hashed",
	  "[rss][mp_wr]") {
	MpWq m(101, 4);
	// 100-byte datagrams take 140 bytes (GRH area first), 256 apart: 32
	// fill buffer 1, the 32nd releases it.
	for (int i = 0; i < 40; i++)
		m.send(100, i);
	auto c = m.wait(40);
	REQUIRE(c.size() == 40);
	for (unsigned int i = 0; i < 40; i++) {
		INFO("datagram " << i);
		CHECK(c[i].status == ib::wc_success);
		CHECK(c[i].opcode == ib::wc_recv);
		CHECK(c[i].wr_id == 1 + i / 32);
		CHECK(c[i].mp_offset == (i % 32) * align);
		CHECK(c[i].byte_len == grh + 100);
		CHECK(c[i].qp_num == m.rq.qpn);
		CHECK(has(c[i], SROCE_CQE_WITH_HASH));
		CHECK(c[i].hash_value == c[0].hash_value); // one flow
		CHECK(has(c[i], SROCE_CQE_MP_CONSUMED) == (i == 31));
		CHECK(m.placed(c[i]));
	}
	// 3000-byte datagrams (3040 bytes, 3072 aligned) from offset 2048 of
	// buffer 2: two fill it to 8160, which releases it; buffer 3 takes two,
	// and the fifth does not fit in the 2048 bytes left: buffer 3 goes as
	// a RECV_NOP and buffer 4 takes it.
	for (int i = 0; i < 5; i++)
		m.send(3000, 100 + i);
	c = m.wait(6);
	REQUIRE(c.size() == 6);
	const struct {
		uint64_t wr_id;
		uint32_t offset;
		bool consumed, nop;
	} want[6] = {{2, 2048, false, false}, {2, 5120, true, false}, {3, 0, false, false},
		     {3, 3072, false, false}, {3, 6144, true, true},  {4, 0, false, false}};
	for (unsigned int i = 0; i < 6; i++) {
		INFO("completion " << i);
		CHECK(c[i].status == ib::wc_success);
		CHECK(c[i].wr_id == want[i].wr_id);
		CHECK(c[i].mp_offset == want[i].offset);
		CHECK(has(c[i], SROCE_CQE_MP_CONSUMED) == want[i].consumed);
		CHECK((c[i].opcode == SROCE_CQE_OP_RECV_NOP) == want[i].nop);
		CHECK(has(c[i], SROCE_CQE_WITH_HASH) == !want[i].nop);
		if (!want[i].nop) {
			CHECK(c[i].byte_len == grh + 3000);
			CHECK(m.placed(c[i]));
		}
	}
	sroce_core_wq_view v{};
	sroce_core_wq_snapshot(m.w.wq, &v);
	CHECK((v.received == 45 && v.errors == 0 && v.no_wqe == 0));
}

// No IB MTU is above 4096 (kmod/core/packet.cpp): a longer datagram, as
// IP fragments or a jumbo frame could bring, would overrun what a buffer is
// sized for (SROCE_MP_WR_MIN_BUFFER) and end buffers early. It is dropped
// on arrival, before it takes a buffer; one of 4096 is placed.
TEST_CASE("rss+mp-wr: a datagram longer than any IB MTU is dropped before it takes a buffer", "[rss][mp_wr]") {
	MpWq m(103, 2);
	ib::Headers h;
	h.bth.opcode = ib::op::ud + ib::op::send_only;
	h.deth.qkey = qkey;
	h.deth.src_qp = m.q.qpn;
	for (unsigned int len : {5000u, 4097u, 4096u}) {
		auto p = tfx::make_packet(m.f, m.rq.qpn, h, len);
		m.f.sim().inject(m.a.id, m.b.id, p.data(), (unsigned)p.size());
	}
	auto c = m.wait(1);
	REQUIRE(c.size() == 1);
	CHECK((c[0].status == ib::wc_success && c[0].wr_id == 1 && c[0].mp_offset == 0));
	CHECK(c[0].byte_len == grh + 4096);
	CHECK(tfx::device_counter(m.b, SROCE_CNT_RX_BAD_HEADER) == 2);
	m.send(100);
	c = m.wait(1);
	REQUIRE(c.size() == 1);
	CHECK((c[0].wr_id == 1 && c[0].mp_offset == 4352)); // 4136 bytes rounded up to 256
}

TEST_CASE("rss+mp-wr: ERR flushes the buffer in use first, RESET drops it, a WQE of the wrong size or malformed is fatal",
	  "[rss][mp_wr][wq]") {
	MpWq m(102, 2);
	m.send(100);
	REQUIRE(m.wait(1).size() == 1); // buffer 1 in use
	REQUIRE(m.w.modify(m.f, ib::wqs_err) == 0);
	auto c = m.wait(2);
	REQUIRE(c.size() == 2);
	CHECK((c[0].wr_id == 1 && c[0].status == ib::wc_wr_flush_err && has(c[0], SROCE_CQE_MP_CONSUMED)));
	CHECK((c[1].wr_id == 2 && c[1].status == ib::wc_wr_flush_err && !has(c[1], SROCE_CQE_MP_CONSUMED)));
	// RESET, RDY: a new buffer starts at 0; RESET again drops the one in
	// use without a completion, and the next starts at 0 too.
	REQUIRE(m.w.modify(m.f, ib::wqs_reset) == 0);
	REQUIRE(m.w.modify(m.f, ib::wqs_rdy) == 0);
	REQUIRE(m.post(5) == 0);
	m.send(100);
	c = m.wait(1);
	REQUIRE(c.size() == 1);
	CHECK((c[0].wr_id == 5 && c[0].mp_offset == 0));
	REQUIRE(m.w.modify(m.f, ib::wqs_reset) == 0);
	CHECK(m.wait(0).empty());
	REQUIRE(m.w.modify(m.f, ib::wqs_rdy) == 0);
	REQUIRE(m.post(6) == 0);
	m.send(100);
	c = m.wait(1);
	REQUIRE(c.size() == 1);
	CHECK((c[0].wr_id == 6 && c[0].mp_offset == 0 && m.placed(c[0])));
	// A WQE of half the size: completed in error and released, and the WQ
	// goes to ERR with one WQ_FATAL; nothing lands in its buffer.
	REQUIRE(m.w.modify(m.f, ib::wqs_reset) == 0);
	REQUIRE(m.w.modify(m.f, ib::wqs_rdy) == 0);
	std::memset(m.dst.data, 0, m.dst.len);
	REQUIRE(m.post(7, buf_sz / 2) == 0);
	m.f.sim().clear_events();
	m.send(100);
	c = m.wait(1);
	REQUIRE(c.size() == 1);
	CHECK((c[0].wr_id == 7 && c[0].status == ib::wc_loc_len_err && has(c[0], SROCE_CQE_MP_CONSUMED)));
	CHECK(sroce_core_wq_state(m.w.wq) == ib::wqs_err);
	size_t fatal = 0;
	for (const auto &e : m.f.sim().events())
		fatal += e.owner == &m.w.owner && e.kind == ib::ev_wq_fatal;
	CHECK(fatal == 1);
	bool untouched = true;
	for (size_t i = 0; i < m.dst.len; i++)
		untouched &= m.dst.data[i] == 0;
	CHECK(untouched);
	// A malformed WQE (num_sge rewritten in the ring, as a hostile owner
	// could): consumed, it completes in error too, nothing is lost.
	REQUIRE(m.w.modify(m.f, ib::wqs_reset) == 0);
	REQUIRE(m.w.modify(m.f, ib::wqs_rdy) == 0);
	auto *hdr = static_cast<sroce_ring_header *>(m.w.ring.mem);
	REQUIRE(m.post(8) == 0);
	reinterpret_cast<sroce_wqe *>(static_cast<unsigned char *>(m.w.ring.mem) + SROCE_RING_ENTRIES_OFFSET +
				      size_t((hdr->producer - 1) & ((1u << m.w.ring.log_size) - 1)) *
					      sroce_core_wqe_stride(4, 0))
		->num_sge = 200;
	m.send(100);
	c = m.wait(1);
	REQUIRE(c.size() == 1);
	CHECK((c[0].wr_id == 8 && c[0].status == ib::wc_loc_qp_op_err && has(c[0], SROCE_CQE_MP_CONSUMED)));
	CHECK(sroce_core_wq_state(m.w.wq) == ib::wqs_err);
}

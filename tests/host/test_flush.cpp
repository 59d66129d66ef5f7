// FLUSH (IBA 1.5 9.4.6) between two simulated nodes: the wire rdma_rxe
// speaks (FETH before RETH, no payload, answered by a zero-length READ
// RESPONSE ONLY), in order after the writes it follows, a lost answer asked
// for again without executing twice, and the rights of the QP and the MR
// (global visibility only: no MR can promise persistence here).
#include <catch2/catch.hpp>

#include "ib_enums.h"
#include "ktl/byteorder.h"
#include "transport_fixture.h"

#include <string>

using namespace tfx;
namespace ib = sroce::ib;

namespace {
constexpr unsigned int rw = ib::access::local_write | ib::access::remote_write | ib::access::remote_read;
constexpr unsigned int qp_flush = ib::access::remote_write | ib::access::remote_read | ib::access::flush_global;

sroce_wqe flush(uint64_t wr_id, uint64_t va, unsigned int rkey, unsigned int len, unsigned char type,
		unsigned char level) {
	sroce_wqe w = wqe(wr_id, ib::wr_flush, 0);
	w.flush.remote_addr = va;
	w.flush.rkey = rkey;
	w.flush.length = len;
	w.flush.type = type;
	w.flush.level = level;
	return w;
}

// What one node's FLUSH requests carried: headers and the raw FETH word.
struct SeenFlush {
	ib::Headers h;
	uint32_t feth_word;
	uint32_t ib_len;
};

void tap_flushes(Fixture &f, std::vector<SeenFlush> &out, std::vector<std::string> &names) {
	f.sim().set_tap([&out, &names](const sim::WirePacket &p) {
		if (p.dropped)
			return;
		auto ip = ib::parse_ip_udp(ktl::Span<const u8>(p.data, p.len));
		auto pi = ib::parse_ib(ktl::Span<const u8>(p.data + ip.value().bth_offset, ip.value().ib_len));
		const ib::PacketInfo &v = pi.value();
		std::string s = ib::opcode_name(v.hdr.bth.opcode);
		if (v.flags & ib::op_aeth)
			s += std::string(" ") + ib::aeth_kind_name(v.hdr.aeth);
		names.push_back(s);
		if (v.flags & ib::op_flush)
			out.push_back({v.hdr, ktl::get_be32(p.data + ip.value().bth_offset + 12), ip.value().ib_len});
	});
}

unsigned int post_one(Fixture &f, Qp &qa, const sroce_wqe &w, unsigned int *opcode = nullptr) {
	REQUIRE(f.post_send(qa, w, {}) == 0);
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(*qa.node, 1, ca, 20000000000ull));
	if (opcode)
		*opcode = ca[0].opcode;
	return ca[0].status;
}
} // namespace

TEST_CASE("flush: a range and a whole MR, on rxe's wire, after the writes before it", "[flush]") {
	Fixture f(51);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	REQUIRE(f.modify_access(qb, qp_flush) == 0);
	Buffer &la = f.buffer(a, 8192, rw);
	Buffer &rb = f.buffer(b, 8192, rw | ib::access::flush_global);
	std::vector<SeenFlush> seen;
	std::vector<std::string> names;
	tap_flushes(f, seen, names);
	uint64_t rva = iova_of(b, rb);

	// A WRITE, then a FLUSH of its range; then the whole MR, its RETH
	// address and length meaning nothing.
	auto w = wqe(1, ib::wr_rdma_write, 1);
	w.rdma.remote_addr = rva + 100;
	w.rdma.rkey = f.lkey(rb);
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 3000)}) == 0);
	REQUIRE(f.post_send(qa, flush(2, rva + 100, f.lkey(rb), 3000, ib::flush::global, ib::flush::level_range), {}) == 0);
	REQUIRE(f.post_send(qa, flush(3, 0xdead0000, f.lkey(rb), 0, ib::flush::global, ib::flush::level_region), {}) == 0);
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(a, 3, ca));
	for (int i = 0; i < 3; i++) {
		CHECK(ca[i].wr_id == uint64_t(1 + i));
		CHECK(ca[i].status == ib::wc_success);
		CHECK(ca[i].opcode == (i ? ib::wc_flush : ib::wc_rdma_write));
	}
	CHECK(std::memcmp(rb.data + 100, la.data, 3000) == 0);
	CHECK(f.poll(b).empty()); // no receive consumed

	REQUIRE(seen.size() == 2);
	// BTH, FETH (placement bits 3..0, level bits 5..4), RETH; no payload.
	CHECK(seen[0].ib_len == 12 + 4 + 16 + 4);
	CHECK(seen[0].feth_word == 0x01);
	CHECK(seen[0].h.reth.va == rva + 100);
	CHECK(seen[0].h.reth.length == 3000);
	CHECK(seen[0].h.bth.ack_req);
	CHECK(seen[1].feth_word == 0x11);
	CHECK(seen[1].h.feth.selectivity == ib::flush::level_region);
	CHECK(names.end() != std::find(names.begin(), names.end(), "RC_RDMA_READ_RESPONSE_ONLY ACK"));
	std::vector<std::string> flushes;
	for (const auto &n : names)
		if (n == "RC_FLUSH")
			flushes.push_back(n);
	CHECK(flushes.size() == 2);
}

TEST_CASE("flush: a lost answer is asked for again and answered from the slot", "[flush]") {
	Fixture f(52);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024, 0, 0, /*timeout*/ 10);
	REQUIRE(f.modify_access(qb, qp_flush) == 0);
	Buffer &rb = f.buffer(b, 4096, rw | ib::access::flush_global);
	int answers = 0, requests = 0;
	bool lose = true;
	f.sim().set_filter([&](const sim::WirePacket &p) {
		if (p.from == a.id) {
			requests++;
			return true;
		}
		answers++;
		bool pass = !lose;
		lose = false;
		return pass;
	});
	unsigned int op = 0;
	CHECK(post_one(f, qa, flush(1, iova_of(b, rb), f.lkey(rb), 64, ib::flush::global, ib::flush::level_range), &op) ==
	      ib::wc_success);
	CHECK(op == ib::wc_flush);
	CHECK(requests == 2);
	CHECK(answers == 2);
	CHECK(device_counter(b, SROCE_CNT_DUPLICATE_REQ) == 1);
}

TEST_CASE("flush: the rights of the QP and the MR, the range, and the responder's resources",
	  "[flush][errors]") {
	Fixture f(53);
	Node &a = f.node(0), &b = f.node(1);
	Buffer &rb = f.buffer(b, 4096, rw | ib::access::flush_global);
	Buffer &plain = f.buffer(b, 4096, rw);
	uint64_t rva = iova_of(b, rb);
	struct Case {
		const char *what;
		sroce_wqe w;
		unsigned int qp_access;
		unsigned int rd_atomic;
		unsigned int status;
	};
	const unsigned char g = ib::flush::global, range = ib::flush::level_range, whole = ib::flush::level_region;
	const Case cases[] = {
		{"a range inside", flush(1, rva + 4000, f.lkey(rb), 96, g, range), qp_flush, 16, ib::wc_success},
		{"length 0 inside", flush(1, rva + 4095, f.lkey(rb), 0, g, range), qp_flush, 16, ib::wc_success},
		{"past the MR", flush(1, rva + 4000, f.lkey(rb), 97, g, range), qp_flush, 16, ib::wc_rem_access_err},
		{"length 0 past the MR", flush(1, rva + 4096, f.lkey(rb), 0, g, range), qp_flush, 16,
		 ib::wc_rem_access_err},
		{"the whole MR, any address", flush(1, 1, f.lkey(rb), 1u << 31, g, whole), qp_flush, 16, ib::wc_success},
		{"wrong rkey", flush(1, rva, f.lkey(rb) ^ 0x100, 8, g, whole), qp_flush, 16, ib::wc_rem_access_err},
		{"MR without the FLUSH right", flush(1, iova_of(b, plain), f.lkey(plain), 8, g, range), qp_flush, 16,
		 ib::wc_rem_access_err},
		{"persistence (no MR has the right)", flush(1, rva, f.lkey(rb), 8, ib::flush::persistent, range),
		 qp_flush | ib::access::flush_persistent, 16, ib::wc_rem_access_err},
		{"QP without the FLUSH right", flush(1, rva, f.lkey(rb), 8, g, range), rw & ~ib::access::local_write, 16,
		 ib::wc_rem_access_err},
		{"no responder resources (max_dest_rd_atomic 0)", flush(1, rva, f.lkey(rb), 8, g, range), qp_flush, 0,
		 ib::wc_rem_inv_req_err},
	};
	for (const Case &c : cases) {
		INFO(c.what);
		Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
		f.connect(qa, qb, ib::mtu_1024, 0, 0, 10, 7, 7, c.rd_atomic);
		REQUIRE(f.modify_access(qb, c.qp_access) == 0);
		CHECK(post_one(f, qa, c.w) == c.status);
		f.poll(b);
		f.destroy_qp(qa);
		f.destroy_qp(qb);
	}
}

TEST_CASE("flush: the responder checks the FETH of a crafted request", "[flush][hostile]") {
	Fixture f(54);
	Node &b = f.node(1);
	Qp &qb = f.qp(b, ib::qpt_rc), &qa = f.qp(f.node(0), ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	REQUIRE(f.modify_access(qb, qp_flush | ib::access::flush_persistent) == 0);
	Buffer &rb = f.buffer(b, 4096, rw | ib::access::flush_global);
	ib::Headers h;
	h.bth.opcode = ib::op::rc + ib::op::flush;
	h.bth.ack_req = true;
	h.reth.va = iova_of(b, rb);
	h.reth.rkey = f.lkey(rb);
	h.reth.length = 8;
	SECTION("no placement type") {
		h.feth.placement = 0;
	}
	SECTION("a reserved placement type bit") {
		h.feth.placement = ib::flush::global | 4;
	}
	SECTION("a reserved selectivity level") {
		h.feth.placement = ib::flush::global;
		h.feth.selectivity = 2;
	}
	std::vector<std::string> seen = answers_to(f, qb, h, 0);
	REQUIRE(seen.size() == 1);
	CHECK(seen[0] == "RC_ACKNOWLEDGE NAK_INVALID_REQUEST");
}

TEST_CASE("flush: a FLUSH with a payload is no packet at all", "[flush][hostile]") {
	Fixture f(55);
	Node &b = f.node(1);
	Qp &qb = f.qp(b, ib::qpt_rc), &qa = f.qp(f.node(0), ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	ib::Headers h;
	h.bth.opcode = ib::op::rc + ib::op::flush;
	h.bth.ack_req = true;
	h.feth.placement = ib::flush::global;
	unsigned long long before = device_counter(b, SROCE_CNT_RX_BAD_HEADER);
	CHECK(answers_to(f, qb, h, 8).empty());
	CHECK(device_counter(b, SROCE_CNT_RX_BAD_HEADER) == before + 1);
}

TEST_CASE("flush: RC only, no SGEs, a known type and level", "[flush][errors]") {
	Fixture f(56);
	Node &a = f.node(0), &b = f.node(1);
	Buffer &rb = f.buffer(b, 4096, rw | ib::access::flush_global);
	Buffer &la = f.buffer(a, 4096, rw);
	std::vector<std::string> seen;
	tap_names(f, 0, seen);
	sroce_wqe w = flush(1, iova_of(b, rb), f.lkey(rb), 8, ib::flush::global, ib::flush::level_range);
	std::vector<sroce_sge> sges;
	unsigned int type = ib::qpt_rc;
	SECTION("on UC") {
		type = ib::qpt_uc;
	}
	SECTION("with an SGE") {
		w.num_sge = 1;
		sges.push_back(sge_of(f, a, la, 0, 8));
	}
	SECTION("no type") {
		w.flush.type = 0;
	}
	SECTION("a type bit beyond persistence") {
		w.flush.type = 4 | ib::flush::global;
	}
	SECTION("level 2") {
		w.flush.level = 2;
	}
	Qp &qa = f.qp(a, type), &qb = f.qp(b, type);
	f.connect(qa, qb, ib::mtu_1024);
	REQUIRE(f.post_send(qa, w, sges) == 0);
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(ca[0].status == ib::wc_loc_qp_op_err);
	CHECK(seen.empty()); // nothing on the wire
}

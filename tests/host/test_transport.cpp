// The transport on two simulated nodes: every operation type, data checked
// byte for byte, completions on both sides, and guard regions untouched.
#include <catch2/catch.hpp>

#include "ib_enums.h"
#include "env_host.h"
#include "transport_fixture.h"

#include <string>

#include "icrc.h"
#include "device.h"
#include "packet.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {

sroce_sge sge(Fixture &f, Buffer &b, size_t off, unsigned int len) {
	return sroce_sge{0x10000000ull + 0x100000ull * 0 + off, len, f.lkey(b)};
}


} // namespace

TEST_CASE("transport: RC SEND of many sizes arrives intact", "[transport][rc]") {
	Fixture f(1);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	Buffer &src = f.buffer(a, 1 << 16, all_access);
	Buffer &dst = f.buffer(b, 1 << 16, all_access);
	for (unsigned int len : {0u, 1u, 3u, 1023u, 1024u, 1025u, 4096u, 10000u, 65536u}) {
		CAPTURE(len);
		std::memset(dst.data, 0, dst.len);
		REQUIRE(f.post_recv(qb, 100 + len, {sge_of(f, b, dst, 0, (unsigned)dst.len)}) == 0);
		auto w = wqe(len, ib::wr_send, 1);
		REQUIRE(f.post_send(qa, w, {sge_of(f, a, src, 0, len)}) == 0);
		std::vector<sroce_cqe> ca, cb;
		REQUIRE(f.wait_cqes(b, 1, cb));
		REQUIRE(f.wait_cqes(a, 1, ca));
		CHECK(cb[0].status == ib::wc_success);
		CHECK(cb[0].opcode == ib::wc_recv);
		CHECK(cb[0].byte_len == len);
		CHECK(cb[0].wr_id == 100 + len);
		CHECK(cb[0].src_qp == qa.qpn);
		CHECK(ca[0].status == ib::wc_success);
		CHECK(ca[0].opcode == ib::wc_send);
		CHECK(ca[0].wr_id == len);
		CHECK(std::memcmp(src.data, dst.data, len) == 0);
		CHECK(dst.guards_intact());
	}
}

TEST_CASE("transport: RC WRITE, WRITE_WITH_IMM, READ and atomics", "[transport][rc]") {
	Fixture f(2);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_2048);
	Buffer &la = f.buffer(a, 20000, all_access);
	Buffer &rb = f.buffer(b, 20000, all_access);
	uint64_t rva = iova_of(b, rb);
	unsigned int rkey = f.lkey(rb);

	// WRITE 9000 bytes at offset 100.
	auto w = wqe(1, ib::wr_rdma_write, 1);
	w.rdma.remote_addr = rva + 100;
	w.rdma.rkey = rkey;
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 9000)}) == 0);
	std::vector<sroce_cqe> ca, cb;
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(ca[0].status == ib::wc_success);
	CHECK(ca[0].opcode == ib::wc_rdma_write);
	CHECK(std::memcmp(rb.data + 100, la.data, 9000) == 0);
	CHECK(rb.data[99] == (unsigned char)(99 * 7 + 3)); // untouched
	CHECK(rb.data[9100] == (unsigned char)(9100 * 7 + 3));

	// WRITE_WITH_IMM consumes a receive and reports the immediate.
	REQUIRE(f.post_recv(qb, 77, {sge_of(f, b, rb, 0, 16)}) == 0);
	w = wqe(2, ib::wr_rdma_write_imm, 1);
	w.rdma.remote_addr = rva;
	w.rdma.rkey = rkey;
	w.imm_or_inv = 0x11223344;
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 5000, 3000)}) == 0);
	ca.clear();
	REQUIRE(f.wait_cqes(b, 1, cb));
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(cb[0].opcode == ib::wc_recv_rdma_imm);
	CHECK(cb[0].wr_id == 77);
	CHECK(cb[0].byte_len == 3000);
	CHECK((cb[0].flags & SROCE_CQE_WITH_IMM));
	CHECK(cb[0].imm_or_inv == 0x11223344);
	CHECK(std::memcmp(rb.data, la.data + 5000, 3000) == 0);

	// READ 15000 bytes (8 response packets) into a fresh local area.
	std::memset(la.data, 0, la.len);
	w = wqe(3, ib::wr_rdma_read, 1);
	w.rdma.remote_addr = rva + 1000;
	w.rdma.rkey = rkey;
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 15000)}) == 0);
	ca.clear();
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(ca[0].status == ib::wc_success);
	CHECK(ca[0].opcode == ib::wc_rdma_read);
	CHECK(ca[0].byte_len == 15000);
	CHECK(std::memcmp(la.data, rb.data + 1000, 15000) == 0);
	CHECK(la.guards_intact());

	// FETCH_ADD then CMP_SWAP on an aligned remote word.
	uint64_t init = 0x100;
	std::memcpy(rb.data + 64, &init, 8);
	w = wqe(4, ib::wr_atomic_fetch_add, 1);
	w.rdma.remote_addr = rva + 64;
	w.rdma.rkey = rkey;
	w.rdma.compare_add = 5;
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 8)}) == 0);
	w = wqe(5, ib::wr_atomic_cmp_swp, 1);
	w.rdma.remote_addr = rva + 64;
	w.rdma.rkey = rkey;
	w.rdma.compare_add = 0x105;
	w.rdma.swap = 0xabcdef;
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 8, 8)}) == 0);
	ca.clear();
	REQUIRE(f.wait_cqes(a, 2, ca));
	CHECK(ca[0].opcode == ib::wc_fetch_add);
	CHECK(ca[1].opcode == ib::wc_comp_swap);
	uint64_t orig1, orig2, now;
	std::memcpy(&orig1, la.data, 8);
	std::memcpy(&orig2, la.data + 8, 8);
	std::memcpy(&now, rb.data + 64, 8);
	CHECK(orig1 == 0x100);
	CHECK(orig2 == 0x105);
	CHECK(now == 0xabcdef);
	CHECK(rb.guards_intact());
}

TEST_CASE("transport: UD SEND delivers the GRH and the source QP", "[transport][ud]") {
	Fixture f(3);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_ud), &qb = f.qp(b, ib::qpt_ud);
	f.to_ud_rts(qa, 0x1234);
	f.to_ud_rts(qb, 0x1234);
	sroce_core_ah *ah = f.ah(a, b);
	Buffer &src = f.buffer(a, 4096, all_access);
	Buffer &dst = f.buffer(b, 4096, all_access);
	REQUIRE(f.post_recv(qb, 9, {sge_of(f, b, dst, 0, 40 + 1000)}) == 0);
	auto w = wqe(1, ib::wr_send_imm, 1);
	address_ud(w, ah, qb.qpn, 0x1234);
	w.imm_or_inv = 0x01020304;
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, src, 0, 1000)}) == 0);
	std::vector<sroce_cqe> cb;
	REQUIRE(f.wait_cqes(b, 1, cb));
	CHECK(cb[0].status == ib::wc_success);
	CHECK(cb[0].byte_len == 1040);
	CHECK(cb[0].src_qp == qa.qpn);
	CHECK((cb[0].flags & SROCE_CQE_GRH));
	CHECK((cb[0].flags & SROCE_CQE_WITH_IMM));
	CHECK(cb[0].network_hdr_type == ib::net_ipv4);
	// IPv4 header at offset 20 of the GRH: version 4, source 10.0.0.1.
	CHECK(dst.data[20] >> 4 == 4);
	CHECK(dst.data[20 + 12] == 10);
	CHECK(dst.data[20 + 15] == 1);
	CHECK(std::memcmp(dst.data + 40, src.data, 1000) == 0);

	// A wrong Q_Key is dropped silently.
	REQUIRE(f.post_recv(qb, 10, {sge_of(f, b, dst, 0, 2000)}) == 0);
	w.ud.remote_qkey = 0x9999;
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, src, 0, 10)}) == 0);
	f.sim().run_for(10000000);
	CHECK(f.poll(b).empty());
}

TEST_CASE("transport: errors complete with the right status", "[transport][errors]") {
	Fixture f(4);
	Node &a = f.node(0), &b = f.node(1);
	Buffer &la = f.buffer(a, 8192, all_access);
	Buffer &rb = f.buffer(b, 8192, ib::access::local_write | ib::access::remote_write);
	std::vector<sroce_cqe> ca, cb;

	SECTION("wrong rkey: REM_ACCESS_ERR, nothing written") {
		Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
		f.connect(qa, qb, ib::mtu_1024);
		auto w = wqe(1, ib::wr_rdma_write, 1);
		w.rdma.remote_addr = iova_of(b, rb);
		w.rdma.rkey = f.lkey(rb) ^ 0x100;
		std::vector<unsigned char> before(rb.data, rb.data + rb.len);
		REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 100)}) == 0);
		REQUIRE(f.wait_cqes(a, 1, ca));
		CHECK(ca[0].status == ib::wc_rem_access_err);
		CHECK(std::memcmp(before.data(), rb.data, rb.len) == 0);
		// The responder's QP reports why it failed: an access error, once.
		CHECK(f.sim().events_for(&qb.owner) == std::vector<int>{ib::ev_qp_access_err});
		CHECK(f.sim().events_for(&qa.owner) == std::vector<int>{ib::ev_qp_fatal});
	}
	SECTION("out of bounds WRITE: REM_ACCESS_ERR, guards intact") {
		Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
		f.connect(qa, qb, ib::mtu_1024);
		auto w = wqe(1, ib::wr_rdma_write, 1);
		w.rdma.remote_addr = iova_of(b, rb) + 8192 - 50;
		w.rdma.rkey = f.lkey(rb);
		REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 100)}) == 0);
		REQUIRE(f.wait_cqes(a, 1, ca));
		CHECK(ca[0].status == ib::wc_rem_access_err);
		CHECK(rb.guards_intact());
	}
	SECTION("READ without remote read access: REM_ACCESS_ERR") {
		Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
		f.connect(qa, qb, ib::mtu_1024);
		auto w = wqe(1, ib::wr_rdma_read, 1);
		w.rdma.remote_addr = iova_of(b, rb);
		w.rdma.rkey = f.lkey(rb);
		REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 100)}) == 0);
		REQUIRE(f.wait_cqes(a, 1, ca));
		CHECK(ca[0].status == ib::wc_rem_access_err);
	}
	SECTION("deregistered MR: REM_ACCESS_ERR") {
		Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
		f.connect(qa, qb, ib::mtu_1024);
		uint64_t va = iova_of(b, rb);
		unsigned int rkey = f.lkey(rb);
		f.dereg(rb);
		auto w = wqe(1, ib::wr_rdma_write, 1);
		w.rdma.remote_addr = va;
		w.rdma.rkey = rkey;
		REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 100)}) == 0);
		REQUIRE(f.wait_cqes(a, 1, ca));
		CHECK(ca[0].status == ib::wc_rem_access_err);
	}
	SECTION("bad local lkey: LOC_PROT_ERR, then later WRs flush") {
		Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
		f.connect(qa, qb, ib::mtu_1024);
		auto w = wqe(1, ib::wr_send, 1);
		sroce_sge s = sge_of(f, a, la, 0, 100);
		s.lkey ^= 0x300;
		REQUIRE(f.post_send(qa, w, {s}) == 0);
		REQUIRE(f.wait_cqes(a, 1, ca));
		CHECK(ca[0].status == ib::wc_loc_prot_err);
		// Posting to a QP in ERR is allowed and completes with a flush
		// (ib_drain_sq relies on it).
		auto w2 = wqe(2, ib::wr_send, 1, 0);
		REQUIRE(f.post_send(qa, w2, {sge_of(f, a, la, 0, 10)}) == 0);
		REQUIRE(f.wait_cqes(a, 2, ca));
		CHECK(ca[1].wr_id == 2);
		CHECK(ca[1].status == ib::wc_wr_flush_err);
		CHECK(f.poll(b).empty());
	}
	SECTION("no receive posted: RNR retries until one is posted") {
		Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
		f.connect(qa, qb, ib::mtu_1024);
		auto w = wqe(1, ib::wr_send, 1);
		REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 3000)}) == 0);
		f.sim().run_for(5000000); // a few RNR NAK rounds
		CHECK(f.poll(a).empty());
		REQUIRE(f.post_recv(qb, 5, {sge_of(f, b, rb, 0, 4096)}) == 0);
		REQUIRE(f.wait_cqes(a, 1, ca));
		REQUIRE(f.wait_cqes(b, 1, cb));
		CHECK(ca[0].status == ib::wc_success);
		CHECK(cb[0].byte_len == 3000);
	}
	SECTION("RNR retry exhausted: RNR_RETRY_EXC_ERR") {
		Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
		f.connect(qa, qb, ib::mtu_1024, 0, 0, 10, 7, 2);
		auto w = wqe(1, ib::wr_send, 1);
		REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 100)}) == 0);
		REQUIRE(f.wait_cqes(a, 1, ca, 10000000000ull));
		CHECK(ca[0].status == ib::wc_rnr_retry_exc_err);
	}
	SECTION("destroyed remote QP: RETRY_EXC_ERR") {
		Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
		f.connect(qa, qb, ib::mtu_1024, 0, 0, 8, 3);
		f.destroy_qp(qb);
		auto w = wqe(1, ib::wr_send, 1);
		REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 100)}) == 0);
		REQUIRE(f.wait_cqes(a, 1, ca, 10000000000ull));
		CHECK(ca[0].status == ib::wc_retry_exc_err);
	}
	SECTION("receive buffer too small: LOC_LEN_ERR and REM_INV_REQ_ERR") {
		Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
		f.connect(qa, qb, ib::mtu_1024);
		REQUIRE(f.post_recv(qb, 5, {sge_of(f, b, rb, 0, 100)}) == 0);
		auto w = wqe(1, ib::wr_send, 1);
		REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 2000)}) == 0);
		REQUIRE(f.wait_cqes(a, 1, ca));
		REQUIRE(f.wait_cqes(b, 1, cb));
		CHECK(ca[0].status == ib::wc_rem_inv_req_err);
		CHECK(cb[0].status == ib::wc_loc_len_err);
		CHECK(rb.guards_intact());
	}
}


TEST_CASE("transport: hostile packets are dropped or NAKed and counted", "[transport][hostile]") {
	Fixture f(9);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	Buffer &rb = f.buffer(b, 8192, all_access);
	std::vector<unsigned char> before(rb.data, rb.data + rb.len);
	std::vector<std::string> seen;
	tap_names(f, 1, seen);
	auto counters = [&] {
		sroce_core_counts c{};
		sroce_core_dev_counts(b.dev, &c);
		return c;
	};
	ib::Headers w;
	w.bth.opcode = ib::op::rc + ib::op::write_only;
	w.bth.ack_req = true;
	w.reth.va = iova_of(b, rb);
	w.reth.rkey = f.lkey(rb);
	w.reth.length = 16;

	// A good WRITE first: proves the packet builder, and moves epsn to 1.
	auto good = make_packet(f, qb.qpn, w, 16);
	f.sim().inject(0, 1, good.data(), (unsigned)good.size());
	f.sim().run_for(100000);
	REQUIRE(seen.size() == 1);
	CHECK(seen[0] == "RC_ACKNOWLEDGE ACK");
	std::memcpy(before.data(), rb.data, rb.len);

	SECTION("truncated, bad opcode, unknown QPN, bad ICRC: dropped silently") {
		auto t = good;
		t.resize(28 + 6); // half a BTH (the UDP length now disagrees too)
		f.sim().inject(0, 1, t.data(), (unsigned)t.size());
		auto bad_op = good;
		bad_op[28] = 0x1f; // reserved RC opcode
		REQUIRE(!ib::icrc_fill(ktl::Span<u8>(bad_op.data(), bad_op.size())).is_error());
		f.sim().inject(0, 1, bad_op.data(), (unsigned)bad_op.size());
		ib::Headers h = w;
		h.bth.psn = 1;
		auto noqp = make_packet(f, 0x7777, h, 16);
		f.sim().inject(0, 1, noqp.data(), (unsigned)noqp.size());
		auto badcrc = make_packet(f, qb.qpn, h, 16);
		badcrc[badcrc.size() - 1] ^= 1;
		f.sim().inject(0, 1, badcrc.data(), (unsigned)badcrc.size());
		f.sim().run_for(1000000);
		CHECK(seen.size() == 1); // nothing answered
		// Each drop counted by reason (the device's receive counters).
		auto &rc = reinterpret_cast<sroce::Device *>(b.dev)->counters();
		CHECK(rc.get(SROCE_CNT_RX_BAD_HEADER) == 2);
		CHECK(rc.get(SROCE_CNT_RX_BAD_QPN) == 1);
		CHECK(rc.get(SROCE_CNT_ICRC_ERRORS) == 1);
		// The same counts through the C API that debugfs prints.
		sroce_core_rx_counts rx{};
		sroce_core_dev_rx_counts(b.dev, &rx);
		CHECK(rx.packets == 5); // the good WRITE and the four above
		CHECK(rx.bad_header == 2);
		CHECK(rx.bad_qpn == 1);
		CHECK(rx.icrc_errors == 1);
		CHECK(std::memcmp(before.data(), rb.data, rb.len) == 0);
	}
	SECTION("a PSN far out of the window: one sequence NAK, nothing written") {
		ib::Headers h = w;
		h.bth.psn = 0x400000;
		auto far = make_packet(f, qb.qpn, h, 16);
		f.sim().inject(0, 1, far.data(), (unsigned)far.size());
		f.sim().inject(0, 1, far.data(), (unsigned)far.size());
		f.sim().run_for(1000000);
		REQUIRE(seen.size() == 2);
		CHECK(seen[1] == "RC_ACKNOWLEDGE NAK_PSN_SEQ_ERR"); // once, not per packet
		CHECK(std::memcmp(before.data(), rb.data, rb.len) == 0);
	}
	SECTION("payload lengths against the path MTU: invalid request NAK, nothing written") {
		// 1024-byte path MTU: an ONLY of 2000 bytes, a FIRST of 512.
		ib::Headers h = w;
		h.bth.psn = 1;
		bool first = GENERATE(false, true);
		unsigned int len = first ? 512 : 2000;
		h.bth.opcode = ib::op::rc + (first ? ib::op::write_first : ib::op::write_only);
		h.reth.length = first ? 4096 : len;
		auto big = make_packet(f, qb.qpn, h, len);
		f.sim().inject(0, 1, big.data(), (unsigned)big.size());
		f.sim().run_for(1000000);
		REQUIRE(seen.size() == 2);
		CHECK(seen[1] == "RC_ACKNOWLEDGE NAK_INVALID_REQUEST");
		CHECK(std::memcmp(before.data(), rb.data, rb.len) == 0);
		sroce_core_qp_attr at{};
		sroce_core_qp_query(qb.qp, &at);
		CHECK(at.qp_state == ib::qps_err);
	}
	SECTION("a READ request for 2 GiB: remote access NAK, the QP errors") {
		ib::Headers h;
		h.bth.opcode = ib::op::rc + ib::op::read_request;
		h.bth.psn = 1;
		h.bth.ack_req = true;
		h.reth.va = iova_of(b, rb);
		h.reth.rkey = f.lkey(rb);
		h.reth.length = 0x80000000u;
		auto rd = make_packet(f, qb.qpn, h, 0);
		f.sim().inject(0, 1, rd.data(), (unsigned)rd.size());
		f.sim().run_for(1000000);
		REQUIRE(seen.size() == 2);
		CHECK(seen[1] == "RC_ACKNOWLEDGE NAK_REMOTE_ACCESS");
		sroce_core_qp_attr at{};
		sroce_core_qp_query(qb.qp, &at);
		CHECK(at.qp_state == ib::qps_err);
	}
	CHECK(counters().pkts_in_flight == 0);
	CHECK(rb.guards_intact());
}

TEST_CASE("transport: a UC SEND longer than the path MTU is dropped, the next one lands",
	  "[transport][hostile][uc]") {
	Fixture f(10);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_uc), &qb = f.qp(b, ib::qpt_uc);
	f.connect(qa, qb, ib::mtu_1024);
	Buffer &rb = f.buffer(b, 4096, all_access);
	REQUIRE(f.post_recv(qb, 7, {sge(f, rb, 0, 4096)}) == 0);
	ib::Headers h;
	h.bth.opcode = ib::op::uc + ib::op::send_only;
	auto big = make_packet(f, qb.qpn, h, 2000); // ONLY with two MTUs of payload
	f.sim().inject(0, 1, big.data(), (unsigned)big.size());
	f.sim().run_for(1000000);
	CHECK(f.poll(b).empty());
	h.bth.psn = 1;
	auto good = make_packet(f, qb.qpn, h, 16);
	f.sim().inject(0, 1, good.data(), (unsigned)good.size());
	std::vector<sroce_cqe> got;
	REQUIRE(f.wait_cqes(b, 1, got));
	CHECK(got[0].wr_id == 7);
	CHECK(got[0].status == ib::wc_success);
	CHECK(got[0].byte_len == 16);
	CHECK(rb.guards_intact());
}

// Issue 17 item 6: with one SGE a side, each packet of a WRITE or SEND
// costs a key look-up at the sender and one at the receiver; a READ one
// more for its request. An MR's key is found without the key table's lock
// (MemoryKeyTable::find_mr_rcu); a key it cannot decide (a miss, as here;
// a window or a fast-registration MR) takes the lock once.
TEST_CASE("transport: an MR's key is found without the key table's lock", "[transport][rc][keys][rcu]") {
	Fixture f(3);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	constexpr unsigned int len = 16 * 1024, packets = len / 1024;
	Buffer &la = f.buffer(a, len, all_access);
	Buffer &rb = f.buffer(b, len, all_access);
	std::vector<sroce_cqe> ca, cb;
	auto taken = [] { return env_host::locks_taken(SROCE_LOCK_KEY_TABLE); };

	unsigned long before = taken();
	auto w = wqe(1, ib::wr_rdma_write, 1);
	w.rdma.remote_addr = iova_of(b, rb);
	w.rdma.rkey = f.lkey(rb);
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, len)}) == 0);
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(ca[0].status == ib::wc_success);
	// Each packet looked its lkey and rkey up (64 acquisitions before
	// 2026-12-02, 32 with one per look-up): none took the lock.
	CHECK(taken() == before);

	before = taken();
	ca.clear();
	REQUIRE(f.post_recv(qb, 2, {sge_of(f, b, rb, 0, len)}) == 0);
	REQUIRE(f.post_send(qa, wqe(3, ib::wr_send, 1), {sge_of(f, a, la, 0, len)}) == 0);
	REQUIRE(f.wait_cqes(b, 1, cb));
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(cb[0].status == ib::wc_success);
	CHECK(taken() == before);

	std::memset(rb.data, 0x5a, len); // what the READ must bring back
	before = taken();
	ca.clear();
	w = wqe(4, ib::wr_rdma_read, 1);
	w.rdma.remote_addr = iova_of(b, rb);
	w.rdma.rkey = f.lkey(rb);
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, len)}) == 0);
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(ca[0].status == ib::wc_success);
	CHECK(std::memcmp(la.data, rb.data, len) == 0);
	CHECK(taken() == before);

	// A stale rkey: the responder falls back to the lock, and refuses.
	before = taken();
	ca.clear();
	w = wqe(5, ib::wr_rdma_write, 1);
	w.rdma.remote_addr = iova_of(b, rb);
	w.rdma.rkey = f.lkey(rb) ^ 1;
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 1024)}) == 0);
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(ca[0].status == ib::wc_rem_access_err);
	CHECK(taken() - before == 1);
}

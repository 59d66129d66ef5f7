// Transport bugs found in review (issue 12, items 3 and 7): each case
// failed on the code before its fix.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "ib_enums.h"
#include "transport_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

TEST_CASE("responder: an RNR on a single-packet WRITE with immediate is retried, not fatal",
	  "[transport][review][rnr]") {
	Fixture f(31);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	Buffer &la = f.buffer(a, 4096, all_access);
	Buffer &rb = f.buffer(b, 4096, all_access);
	std::vector<std::string> seen;
	tap_names(f, b.id, seen);
	auto w = wqe(1, ib::wr_rdma_write_imm, 1);
	w.rdma.remote_addr = iova_of(b, rb);
	w.rdma.rkey = f.lkey(rb);
	w.imm_or_inv = 0x12345678;
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 200)}) == 0);
	f.sim().run_for(100000); // no receive posted: RNR NAK
	REQUIRE(!seen.empty());
	CHECK(seen[0] == "RC_ACKNOWLEDGE RNR_NAK");
	REQUIRE(f.post_recv(qb, 9, {}) == 0);
	std::vector<sroce_cqe> ca, cb;
	REQUIRE(f.wait_cqes(a, 1, ca, 5000000000ull));
	CHECK(ca[0].status == ib::wc_success);
	REQUIRE(f.wait_cqes(b, 1, cb, 5000000000ull));
	CHECK(cb[0].status == ib::wc_success);
	CHECK(cb[0].opcode == ib::wc_recv_rdma_imm);
	CHECK(cb[0].wr_id == 9);
	CHECK(std::memcmp(rb.data, la.data, 200) == 0);
	CHECK(Fixture::query(qb).qp_state == ib::qps_rts);
	CHECK(f.sim().events_for(&qb.owner).empty());
}

TEST_CASE("responder: a UC WRITE with immediate that fails its rkey check completes its receive WQE with an error",
	  "[transport][review][uc]") {
	Fixture f(32);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_uc), &qb = f.qp(b, ib::qpt_uc);
	f.connect(qa, qb, ib::mtu_1024);
	Buffer &la = f.buffer(a, 4096, all_access);
	Buffer &rb = f.buffer(b, 4096, all_access);
	REQUIRE(f.post_recv(qb, 1, {}) == 0);
	REQUIRE(f.post_recv(qb, 2, {}) == 0);
	auto bad = wqe(10, ib::wr_rdma_write_imm, 1);
	bad.rdma.remote_addr = iova_of(b, rb);
	bad.rdma.rkey = f.lkey(rb) ^ 0x100;
	REQUIRE(f.post_send(qa, bad, {sge_of(f, a, la, 0, 64)}) == 0);
	auto good = bad;
	good.wr_id = 11;
	good.rdma.rkey = f.lkey(rb);
	REQUIRE(f.post_send(qa, good, {sge_of(f, a, la, 0, 64)}) == 0);
	std::vector<sroce_cqe> cb;
	REQUIRE(f.wait_cqes(b, 2, cb));
	// The first receive WQE is not lost, nor silently reused.
	CHECK(cb[0].wr_id == 1);
	CHECK(cb[0].status == ib::wc_loc_prot_err);
	CHECK(cb[1].wr_id == 2);
	CHECK(cb[1].status == ib::wc_success);
	CHECK(cb[1].opcode == ib::wc_recv_rdma_imm);
	CHECK(std::memcmp(rb.data, la.data, 64) == 0);
}

TEST_CASE("responder: a WRITE whose RETH length is above 2^31 is an invalid request", "[transport][review][write]") {
	Fixture f(33);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	Buffer &rb = f.buffer(b, 8192, all_access);
	std::vector<unsigned char> before(rb.data, rb.data + rb.len);
	std::vector<std::string> seen;
	tap_names(f, b.id, seen);
	ib::Headers h;
	h.bth.opcode = ib::op::rc + ib::op::write_first;
	h.bth.ack_req = true;
	h.reth.va = iova_of(b, rb);
	h.reth.rkey = f.lkey(rb);
	h.reth.length = 0x80000001u;
	auto pkt = make_packet(f, qb.qpn, h, 1024);
	f.sim().inject(a.id, b.id, pkt.data(), (unsigned)pkt.size());
	f.sim().run_for(1000000);
	REQUIRE(seen.size() == 1);
	CHECK(seen[0] == "RC_ACKNOWLEDGE NAK_INVALID_REQUEST");
	CHECK(std::memcmp(before.data(), rb.data, rb.len) == 0);
	(void)qa;
}

TEST_CASE("responder: a zero-length READ checks no rkey (IBTA C9-88)", "[transport][review][read]") {
	Fixture f(34);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	auto w = wqe(1, ib::wr_rdma_read, 0);
	w.rdma.remote_addr = 0xdead0000;
	w.rdma.rkey = 0xbadbad;
	REQUIRE(f.post_send(qa, w, {}) == 0);
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(ca[0].status == ib::wc_success);
	CHECK(Fixture::query(qb).qp_state == ib::qps_rts);
}

TEST_CASE("responder: max_dest_rd_atomic 0 grants no READ or ATOMIC", "[transport][review][read]") {
	Fixture f(35);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024, 0, 0, 10, 7, 7, 0);
	Buffer &la = f.buffer(a, 4096, all_access);
	Buffer &rb = f.buffer(b, 4096, all_access);
	auto w = wqe(1, ib::wr_rdma_read, 1);
	w.rdma.remote_addr = iova_of(b, rb);
	w.rdma.rkey = f.lkey(rb);
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 64)}) == 0);
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(ca[0].status == ib::wc_rem_inv_req_err);
	CHECK(Fixture::query(qb).qp_state == ib::qps_err);
}

TEST_CASE("responder: a duplicate READ is answered only as the original, and not after remote read was revoked",
	  "[transport][review][read]") {
	Fixture f(36);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	Buffer &la = f.buffer(a, 8192, all_access);
	Buffer &rb = f.buffer(b, 8192, all_access);
	auto w = wqe(1, ib::wr_rdma_read, 1);
	w.rdma.remote_addr = iova_of(b, rb);
	w.rdma.rkey = f.lkey(rb);
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 2048)}) == 0);
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(a, 1, ca));
	REQUIRE(ca[0].status == ib::wc_success);
	std::vector<std::string> seen;
	tap_names(f, b.id, seen);
	// The READ consumed PSNs 0 and 1 at b. Duplicates of it from a's
	// address: from PSN 1 with the right va, then with another va, then
	// the whole of it with another rkey.
	ib::Headers h;
	h.bth.opcode = ib::op::rc + ib::op::read_request;
	h.bth.psn = 1;
	h.reth.va = iova_of(b, rb) + 1024;
	h.reth.rkey = f.lkey(rb);
	h.reth.length = 1024;
	auto resume = make_packet(f, qb.qpn, h, 0);
	h.reth.va = iova_of(b, rb) + 4096;
	auto other_va = make_packet(f, qb.qpn, h, 0);
	h.bth.psn = 0;
	h.reth.va = iova_of(b, rb);
	h.reth.length = 2048;
	h.reth.rkey = f.lkey(rb) ^ 0x100;
	auto other_key = make_packet(f, qb.qpn, h, 0);
	f.sim().inject(a.id, b.id, resume.data(), (unsigned)resume.size());
	f.sim().run_for(1000000);
	REQUIRE(seen.size() == 1);
	CHECK(seen[0] == "RC_RDMA_READ_RESPONSE_ONLY ACK"); // PSN 1's part, answered again
	f.sim().inject(a.id, b.id, other_va.data(), (unsigned)other_va.size());
	f.sim().inject(a.id, b.id, other_key.data(), (unsigned)other_key.size());
	f.sim().run_for(1000000);
	CHECK(seen.size() == 1); // neither is a duplicate of the READ
	// Remote read revoked (RTS -> RTS): the duplicate is a refused READ.
	sroce_core_qp_attr at{};
	at.qp_access_flags = ib::access::remote_write;
	int rc = -1;
	f.sim().call([&](sroce_env_batch *bt) { rc = sroce_core_qp_modify(qb.qp, &at, ib::attr_access_flags, bt); });
	REQUIRE(rc == 0);
	f.sim().inject(a.id, b.id, resume.data(), (unsigned)resume.size());
	f.sim().run_for(1000000);
	REQUIRE(seen.size() == 2);
	CHECK(seen[1] == "RC_ACKNOWLEDGE NAK_REMOTE_ACCESS");
}

TEST_CASE("qp: the path MTU is clamped to the port's active MTU", "[transport][review][mtu]") {
	Fixture f(37, 1500); // active MTU 1024
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_4096);
	CHECK(Fixture::query(qa).path_mtu == ib::mtu_1024);
	CHECK(Fixture::query(qb).path_mtu == ib::mtu_1024);
	unsigned int biggest = 0;
	f.sim().set_tap([&](const sim::WirePacket &p) { biggest = std::max(biggest, p.len); });
	Buffer &la = f.buffer(a, 8192, all_access);
	Buffer &rb = f.buffer(b, 8192, all_access);
	REQUIRE(f.post_recv(qb, 1, {sge_of(f, b, rb, 0, 8192)}) == 0);
	REQUIRE(f.post_send(qa, wqe(2, ib::wr_send, 1), {sge_of(f, a, la, 0, 5000)}) == 0);
	std::vector<sroce_cqe> cb;
	REQUIRE(f.wait_cqes(b, 1, cb));
	CHECK(cb[0].status == ib::wc_success);
	CHECK(std::memcmp(rb.data, la.data, 5000) == 0);
	CHECK(biggest <= 1500);
}

TEST_CASE("requester: a rewound SQ producer index is a corrupt ring", "[transport][review][ring]") {
	Fixture f(38);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	Buffer &la = f.buffer(a, 4096, all_access);
	Buffer &rb = f.buffer(b, 4096, all_access);
	bool block = true; // a's WQEs stay fetched but unacknowledged
	f.sim().set_filter([&](const sim::WirePacket &p) { return !(block && p.from == a.id); });
	auto w = wqe(1, ib::wr_rdma_write, 1);
	w.rdma.remote_addr = iova_of(b, rb);
	w.rdma.rkey = f.lkey(rb);
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 64)}) == 0);
	w.wr_id = 2;
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 64)}) == 0);
	f.sim().run_for(100000);
	// The poster (a hostile process, for a user QP) moves the producer
	// back and leaves a valid WQE beyond it.
	auto *hdr = static_cast<sroce_ring_header *>(qa.sq.mem);
	REQUIRE(hdr->producer == 2);
	unsigned char *entries = static_cast<unsigned char *>(qa.sq.mem) + SROCE_RING_ENTRIES_OFFSET;
	std::memcpy(entries + 2 * qa.sq_stride, entries + 1 * qa.sq_stride, qa.sq_stride);
	hdr->producer = 1;
	f.sim().call([&](sroce_env_batch *bt) { sroce_core_qp_doorbell(qa.qp, bt); });
	// At once: the WQE beyond the producer is never fetched or sent.
	CHECK(Fixture::query(qa).qp_state == ib::qps_err);
	block = false;
	f.sim().run_for(100000000);
	CHECK(Fixture::query(qa).qp_state == ib::qps_err);
	CHECK(f.sim().events_for(&qa.owner) == std::vector<int>{ib::ev_qp_fatal});
	// Both posted WQEs complete (flushed), and nothing beyond them.
	auto ca = f.poll(a);
	REQUIRE(ca.size() == 2);
	CHECK(ca[0].wr_id == 1);
	CHECK(ca[1].wr_id == 2);
	(void)qb;
}

// The FETCH_ADD that completed with REM_ACCESS_ERR on a clean link (issue
// 12, item 7): a remote access NAK for a PSN already acknowledged (the
// answer to a duplicate of a finished request) failed the oldest
// outstanding WQE, whatever it was.
TEST_CASE("completer: a NAK for an acknowledged PSN is stale and fails no WQE", "[transport][review][nak]") {
	Fixture f(39);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	Buffer &la = f.buffer(a, 4096, all_access);
	Buffer &rb = f.buffer(b, 4096, all_access);
	auto w = wqe(1, ib::wr_rdma_write, 1);
	w.rdma.remote_addr = iova_of(b, rb);
	w.rdma.rkey = f.lkey(rb);
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 64)}) == 0); // PSN 0
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(a, 1, ca));
	REQUIRE(ca[0].status == ib::wc_success);
	bool block = true;
	f.sim().set_filter([&](const sim::WirePacket &p) { return !(block && p.from == a.id); });
	std::memset(rb.data + 64, 0, 8);
	auto fa = wqe(2, ib::wr_atomic_fetch_add, 1);
	fa.rdma.remote_addr = iova_of(b, rb) + 64;
	fa.rdma.rkey = f.lkey(rb);
	fa.rdma.compare_add = 5;
	REQUIRE(f.post_send(qa, fa, {sge_of(f, a, la, 128, 8)}) == 0); // PSN 1
	f.sim().run_for(100000);
	ib::Headers nak;
	nak.bth.opcode = ib::op::rc + ib::op::acknowledge;
	nak.bth.psn = 0;
	nak.aeth.syndrome = ib::Aeth::nak_syndrome(ib::NakCode::remote_access);
	nak.aeth.msn = 1;
	ib::IpUdp from_b;
	from_b.ip_version = 4;
	sim::Path p = f.sim().path(b.id, a.id);
	std::memcpy(from_b.src, p.info.src, 16);
	std::memcpy(from_b.dst, p.info.dst, 16);
	sroce_env_path_put(p.path);
	auto pkt = make_packet(f, qa.qpn, nak, 0, true, &from_b);
	f.sim().inject(b.id, a.id, pkt.data(), (unsigned)pkt.size());
	f.sim().run_for(100000);
	CHECK(f.poll(a).empty());
	block = false;
	ca.clear();
	REQUIRE(f.wait_cqes(a, 1, ca, 20000000000ull));
	CHECK(ca[0].wr_id == 2);
	CHECK(ca[0].status == ib::wc_success);
	uint64_t v;
	std::memcpy(&v, rb.data + 64, 8);
	CHECK(v == 5);
	(void)qb;
}

// The retry counter counts only timeouts without forward progress: an ACK
// that acknowledges something gives retry_cnt back (IBTA 9.7.6.1.3). Each
// WRITE here needs two timeouts, with retry_cnt 2: a counter that did not
// start over would fail the second WRITE with RETRY_EXC_ERR.
TEST_CASE("completer: progress gives the retry counter back", "[transport][review][retry]") {
	Fixture f(40);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024, 0, 0, 4, 2, 7);
	Buffer &la = f.buffer(a, 4096, all_access);
	Buffer &rb = f.buffer(b, 4096, all_access);
	unsigned long from_a = 0;
	// Two of every three request packets are lost.
	f.sim().set_filter([&](const sim::WirePacket &p) { return p.from != a.id || from_a++ % 3 == 2; });
	for (int i = 0; i < 6; i++) {
		auto w = wqe(i, ib::wr_rdma_write, 1);
		w.rdma.remote_addr = iova_of(b, rb) + 64 * i;
		w.rdma.rkey = f.lkey(rb);
		REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 64 * i, 64)}) == 0);
		std::vector<sroce_cqe> ca;
		REQUIRE(f.wait_cqes(a, 1, ca, 20000000000ull));
		CHECK(ca[0].status == ib::wc_success);
	}
	CHECK(from_a == 18);
	CHECK(std::memcmp(rb.data, la.data, 6 * 64) == 0);
	(void)qb;
}

// A receive WQE its owner rewrote in the ring (num_sge beyond the QP's
// max) is consumed by RecvQueue::take; it used to vanish without a
// completion (and a UD QP stayed in RTS). It completes with Local QP
// Operation Error, the QP goes to ERR with QP_FATAL, and the receives after
// it are flushed: as an RSS work queue does.
TEST_CASE("responder: a malformed receive WQE completes in error and the QP goes to ERR",
	  "[transport][review][recv]") {
	for (unsigned int type : {ib::qpt_ud, ib::qpt_rc}) {
		CAPTURE(type);
		Fixture f(41);
		Node &a = f.node(0), &b = f.node(1);
		Qp &qa = f.qp(a, type), &qb = f.qp(b, type);
		sroce_core_ah *ah = f.join(qa, qb);
		Buffer &src = f.buffer(a, 4096, all_access), &dst = f.buffer(b, 3 * 4096, all_access);
		for (unsigned int i = 0; i < 3; i++)
			REQUIRE(f.post_recv(qb, 10 + i, {sge_of(f, b, dst, i * 4096, 4096)}) == 0);
		auto *slot = reinterpret_cast<sroce_wqe *>(static_cast<unsigned char *>(qb.rq.mem) +
							   SROCE_RING_ENTRIES_OFFSET);
		slot->num_sge = 200;
		send_one_and_run(f, qa, ah, qb.qpn, sge_of(f, a, src, 0, 100));
		std::vector<sroce_cqe> mine;
		for (auto &c : f.poll(b))
			if (c.qp_num == qb.qpn)
				mine.push_back(c);
		REQUIRE(mine.size() == 3);
		CHECK((mine[0].wr_id == 10 && mine[0].status == ib::wc_loc_qp_op_err && mine[0].opcode == ib::wc_recv));
		CHECK((mine[1].wr_id == 11 && mine[1].status == ib::wc_wr_flush_err));
		CHECK((mine[2].wr_id == 12 && mine[2].status == ib::wc_wr_flush_err));
		CHECK(Fixture::query(qb).qp_state == ib::qps_err);
		size_t fatal = 0;
		for (const auto &e : f.sim().events())
			fatal += e.owner == &qb.owner && e.kind == ib::ev_qp_fatal;
		CHECK(fatal == 1);
	}
}

TEST_CASE("requester: a send WQE with a flag the kernel does not know completes with LOC_QP_OP_ERR",
	  "[transport][review][wqe]") {
	Fixture f(34);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	Buffer &src = f.buffer(a, 4096, all_access);
	REQUIRE(f.post_recv(qb, 9, {}) == 0);
	std::vector<std::string> seen;
	tap_names(f, a.id, seen);
	auto w = wqe(1, ib::wr_send, 1, SROCE_WQE_SIGNALED | 0x80);
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, src, 0, 64)}) == 0);
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(ca[0].wr_id == 1);
	CHECK(ca[0].status == ib::wc_loc_qp_op_err);
	CHECK(seen.empty()); // never sent
	CHECK(Fixture::query(qa).qp_state == ib::qps_err);
}

// Review of 2026-12-03: a UC message lost mid-way (here its LAST) left its
// receive WQE taken, and the next message took another: the first never
// completed, not even flushed.
TEST_CASE("responder: a UC message lost mid-way leaves its receive WQE to the next message",
	  "[transport][review][uc]") {
	Fixture f(71);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_uc), &qb = f.qp(b, ib::qpt_uc);
	f.connect(qa, qb, ib::mtu_1024);
	Buffer &la = f.buffer(a, 4096, all_access);
	Buffer &rb = f.buffer(b, 8192, all_access);
	REQUIRE(f.post_recv(qb, 7, {sge_of(f, b, rb, 0, 4096)}) == 0);
	REQUIRE(f.post_recv(qb, 8, {sge_of(f, b, rb, 4096, 4096)}) == 0);
	const unsigned int bth_at = 28;
	bool dropped = false;
	f.sim().set_filter([&](const sim::WirePacket &p) {
		if (dropped || p.from != a.id || p.len <= bth_at || p.data[bth_at] != (ib::op::uc | ib::op::send_last))
			return true;
		dropped = true;
		return false;
	});
	REQUIRE(f.post_send(qa, wqe(1, ib::wr_send, 1), {sge_of(f, a, la, 0, 2000)}) == 0);
	for (int i = 0; i < 100000 && !dropped; i++)
		f.sim().run_for(1000);
	REQUIRE(dropped);
	REQUIRE(f.post_send(qa, wqe(2, ib::wr_send, 1), {sge_of(f, a, la, 100, 16)}) == 0);
	std::vector<sroce_cqe> cb;
	REQUIRE(f.wait_cqes(b, 1, cb));
	CHECK(cb[0].wr_id == 7);
	CHECK(cb[0].status == ib::wc_success);
	CHECK(cb[0].byte_len == 16);
	CHECK(std::memcmp(rb.data, la.data + 100, 16) == 0);
	// The other WQE is still posted: the error state flushes it.
	REQUIRE(f.modify_state(qb, ib::qps_err) == 0);
	cb.clear();
	REQUIRE(f.wait_cqes(b, 1, cb));
	CHECK(cb[0].wr_id == 8);
	CHECK(cb[0].status == ib::wc_wr_flush_err);
	f.sim().run_for(1000000);
	CHECK(f.poll(b).empty());
}

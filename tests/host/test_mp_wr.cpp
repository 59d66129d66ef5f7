// Multi-packet receive (seed 000, kmod/core/mp_recv.h, mp_responder.cpp):
// the seed's Example A, buffer release, RNR and UC ends within a message,
// UD, WRITE with immediate, and the bad inputs the core refuses.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "ib_enums.h"
#include "transport_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {

// Receive completions only (the node's CQ has the sends too).
std::vector<sroce_cqe> recvs(const std::vector<sroce_cqe> &all) {
	std::vector<sroce_cqe> r;
	for (auto &c : all)
		if (c.opcode >= ib::wc_recv)
			r.push_back(c);
	return r;
}

// Runs until `n` receive completions reached node b (the sends' on a are polled away).
std::vector<sroce_cqe> wait_recvs(Fixture &f, Node &a, Node &b, size_t n) {
	std::vector<sroce_cqe> got;
	f.sim().run_until(
		[&] {
			f.poll(a);
			for (auto &c : recvs(f.poll(b)))
				got.push_back(c);
			return got.size() >= n;
		},
		5000000000ull);
	f.sim().run_for(1000000); // and nothing more arrives
	for (auto &c : recvs(f.poll(b)))
		got.push_back(c);
	return got;
}

void send(Fixture &f, Qp &q, Buffer &from, size_t off, unsigned int len, uint64_t wr_id = 100) {
	REQUIRE(f.post_send(q, wqe(wr_id, ib::wr_send, 1), {sge_of(f, *q.node, from, off, len)}) == 0);
}

bool has(const sroce_cqe &c, unsigned int flag) { return c.flags & flag; }

// The usual setup: QP qa of `type` on node a sends to qb on node b, whose RQ
// is multi-packet (wr_sz, align); src on a, dst on b. Connecting is the
// test's, since the timers differ.
struct MpPair {
	Fixture f;
	Node &a, &b;
	Qp &qa, &qb;
	Buffer &src, &dst;
	MpPair(uint64_t seed, unsigned int type, unsigned int wr_sz, unsigned int align, size_t src_len,
	       size_t dst_len)
		: f(seed), a(f.node(0)), b(f.node(1)), qa(f.qp(a, type)), qb(f.qp_mp(b, type, wr_sz, align)),
		  src(f.buffer(a, src_len, all_access)), dst(f.buffer(b, dst_len, all_access)) {}
};
} // namespace

TEST_CASE("mp-wr: sizes are rounded up, and refused above the caps", "[mp_wr]") {
	unsigned int b = 65536, a = 512;
	REQUIRE(sroce_core_mp_wr_round(&b, &a) == 0);
	CHECK((b == 65536 && a == 512));
	b = 100, a = 0; // the smallest alignment, and room for one packet of MTU 4096 with a GRH
	REQUIRE(sroce_core_mp_wr_round(&b, &a) == 0);
	CHECK((a == SROCE_MP_WR_MIN_ALIGN && b == 4160));
	b = 10000, a = 3000; // a power of two, the buffer a multiple of it
	REQUIRE(sroce_core_mp_wr_round(&b, &a) == 0);
	CHECK((a == 4096 && b == 12288));
	b = 0, a = 64;
	CHECK(sroce_core_mp_wr_round(&b, &a) == -EINVAL);
	b = SROCE_MP_WR_MAX_BUFFER + 1, a = 64;
	CHECK(sroce_core_mp_wr_round(&b, &a) == -EINVAL);
	b = 65536, a = SROCE_MP_WR_MAX_ALIGN + 1;
	CHECK(sroce_core_mp_wr_round(&b, &a) == -EINVAL);
	b = SROCE_MP_WR_MAX_BUFFER - 1, a = SROCE_MP_WR_MAX_ALIGN; // rounds above the cap
	CHECK(sroce_core_mp_wr_round(&b, &a) == 0);
	CHECK(b == SROCE_MP_WR_MAX_BUFFER);
}

TEST_CASE("mp-wr: the core refuses sizes not rounded, an SRQ's QP and an XRC target", "[mp_wr][bad]") {
	Fixture f(70);
	Node &n = f.node(0);
	sroce_core_qp_init qi{};
	void *sq = nullptr, *rq = nullptr;
	unsigned int lg = 0;
	unsigned int st = sroce_core_wqe_stride(4, 0);
	sq = alloc_ring(16, 16384, st, &lg);
	rq = alloc_ring(16, 16384, st, &lg);
	qi.qp_type = ib::qpt_rc;
	qi.pd = n.pd;
	qi.send_cq = qi.recv_cq = n.cq;
	qi.max_send_sge = qi.max_recv_sge = 4;
	qi.sq_ring = sq;
	qi.rq_ring = rq;
	qi.sq_log_size = qi.rq_log_size = lg;
	qi.sq_stride = qi.rq_stride = st;
	sroce_core_qp *q = nullptr;
	qi.mp_wr_buffer_sz = 65536 + 1; // not a multiple of the alignment
	qi.mp_packet_align_sz = 512;
	CHECK(sroce_core_qp_create(n.dev, &qi, &q) == -EINVAL);
	qi.mp_wr_buffer_sz = 65536;
	qi.mp_packet_align_sz = 500; // not a power of two
	CHECK(sroce_core_qp_create(n.dev, &qi, &q) == -EINVAL);
	qi.mp_wr_buffer_sz = 0; // an alignment alone
	qi.mp_packet_align_sz = 512;
	CHECK(sroce_core_qp_create(n.dev, &qi, &q) == -EINVAL);
	qi.mp_wr_buffer_sz = 65536;
	REQUIRE(sroce_core_qp_create(n.dev, &qi, &q) == 0);
	sroce_core_qp_destroy(q);
	std::free(sq);
	std::free(rq);
}

TEST_CASE("mp-wr: the seed's Example A (64 KiB buffers, 512 B alignment, MTU 4096)", "[mp_wr][rc]") {
	MpPair p(71, ib::qpt_rc, 65536, 512, 65536, 2 * 65536);
	auto &[f, a, b, qa, qb, src, dst] = p;
	f.connect(qa, qb, ib::mtu_4096);
	REQUIRE(f.post_recv(qb, 1, {sge_of(f, b, dst, 0, 65536)}) == 0);
	REQUIRE(f.post_recv(qb, 2, {sge_of(f, b, dst, 65536, 65536)}) == 0);

	// 128 messages of 512 B fill the first WR, which then completes CONSUMED.
	for (unsigned int i = 0; i < 128; i++)
		send(f, qa, src, i * 512, 512, i);
	auto c = wait_recvs(f, a, b, 128);
	REQUIRE(c.size() == 128);
	for (unsigned int i = 0; i < 128; i++) {
		INFO("message " << i);
		CHECK(c[i].status == ib::wc_success);
		CHECK(c[i].wr_id == 1);
		CHECK(c[i].opcode == ib::wc_recv);
		CHECK(c[i].byte_len == 512);
		CHECK(c[i].mp_offset == i * 512);
		CHECK(!has(c[i], SROCE_CQE_MP_MORE_IN_MSG));
		CHECK(has(c[i], SROCE_CQE_MP_CONSUMED) == (i == 127));
		CHECK(c[i].qp_num == qb.qpn);
	}
	CHECK(std::memcmp(dst.data, src.data, 65536) == 0);

	// A 12,000-byte message: 4096, 4096 and 3808 bytes, MORE_IN_MSG on the
	// first two; 12,288 bytes of the second WR taken, 52 KiB left.
	send(f, qa, src, 0, 12000, 500);
	c = wait_recvs(f, a, b, 3);
	REQUIRE(c.size() == 3);
	const unsigned int len[3] = {4096, 4096, 3808};
	for (unsigned int i = 0; i < 3; i++) {
		INFO("packet " << i);
		CHECK(c[i].wr_id == 2);
		CHECK(c[i].byte_len == len[i]);
		CHECK(c[i].mp_offset == i * 4096);
		CHECK(has(c[i], SROCE_CQE_MP_MORE_IN_MSG) == (i < 2));
		CHECK(!has(c[i], SROCE_CQE_MP_CONSUMED));
	}
	CHECK(std::memcmp(dst.data + 65536, src.data, 12000) == 0);
	// The 52 KiB left take exactly a 53,248-byte message (13 packets), the
	// last of which releases the WR.
	send(f, qa, src, 0, 53248, 501);
	c = wait_recvs(f, a, b, 13);
	REQUIRE(c.size() == 13);
	for (unsigned int i = 0; i < 13; i++) {
		CHECK(c[i].wr_id == 2);
		CHECK(c[i].mp_offset == 12288 + i * 4096);
		CHECK(has(c[i], SROCE_CQE_MP_CONSUMED) == (i == 12));
	}
	CHECK(std::memcmp(dst.data + 65536 + 12288, src.data, 53248) == 0);
	CHECK(Fixture::query(qb).qp_state == ib::qps_rts);
}

TEST_CASE("mp-wr: a buffer without room for the next packet is released as a RECV_NOP", "[mp_wr][rc]") {
	MpPair p(72, ib::qpt_rc, 4608, 512, 8192, 2 * 4608);
	auto &[f, a, b, qa, qb, src, dst] = p;
	f.connect(qa, qb, ib::mtu_4096);
	REQUIRE(f.post_recv(qb, 1, {sge_of(f, b, dst, 0, 4608)}) == 0);
	REQUIRE(f.post_recv(qb, 2, {sge_of(f, b, dst, 4608, 4000), sge_of(f, b, dst, 4608 + 4000, 608)}) == 0);
	send(f, qa, src, 0, 1000);
	send(f, qa, src, 1000, 4096);
	auto c = wait_recvs(f, a, b, 3);
	REQUIRE(c.size() == 3);
	CHECK((c[0].wr_id == 1 && c[0].mp_offset == 0 && c[0].byte_len == 1000 && !has(c[0], SROCE_CQE_MP_CONSUMED)));
	// 3584 bytes left of 4608: the 4096-byte packet does not fit.
	CHECK(c[1].wr_id == 1);
	CHECK(c[1].opcode == SROCE_CQE_OP_RECV_NOP);
	CHECK(c[1].byte_len == 0);
	CHECK(c[1].mp_offset == 1024);
	CHECK(has(c[1], SROCE_CQE_MP_CONSUMED));
	CHECK((c[2].wr_id == 2 && c[2].mp_offset == 0 && c[2].byte_len == 4096));
	// Across the WR's two SGEs.
	CHECK(std::memcmp(dst.data + 4608, src.data + 1000, 4096) == 0);
}

TEST_CASE("mp-wr: RC out of buffers within a message answers RNR and resumes there", "[mp_wr][rc][rnr]") {
	MpPair p(73, ib::qpt_rc, 8192, 4096, 16384, 2 * 8192);
	auto &[f, a, b, qa, qb, src, dst] = p;
	f.connect(qa, qb, ib::mtu_4096);
	std::vector<std::string> seen;
	tap_names(f, b.id, seen);
	REQUIRE(f.post_recv(qb, 1, {sge_of(f, b, dst, 0, 8192)}) == 0);
	send(f, qa, src, 0, 12000);
	auto c = wait_recvs(f, a, b, 2);
	REQUIRE(c.size() == 2);
	CHECK((c[0].mp_offset == 0 && has(c[0], SROCE_CQE_MP_MORE_IN_MSG)));
	CHECK((c[1].mp_offset == 4096 && has(c[1], SROCE_CQE_MP_MORE_IN_MSG) && has(c[1], SROCE_CQE_MP_CONSUMED)));
	bool rnr = false;
	for (auto &s : seen)
		rnr |= s == "RC_ACKNOWLEDGE RNR_NAK";
	CHECK(rnr);
	REQUIRE(f.post_recv(qb, 2, {sge_of(f, b, dst, 8192, 8192)}) == 0);
	c = wait_recvs(f, a, b, 1);
	REQUIRE(c.size() == 1);
	CHECK(c[0].wr_id == 2);
	CHECK(c[0].mp_offset == 0);
	CHECK(c[0].byte_len == 12000 - 8192);
	CHECK(!has(c[0], SROCE_CQE_MP_MORE_IN_MSG));
	CHECK(std::memcmp(dst.data, src.data, 8192) == 0);
	CHECK(std::memcmp(dst.data + 8192, src.data + 8192, 12000 - 8192) == 0);
	CHECK(Fixture::query(qb).qp_state == ib::qps_rts);
	CHECK(Fixture::query(qa).qp_state == ib::qps_rts);
}

TEST_CASE("mp-wr: an RC message that outruns every buffer ends in RNR_RETRY_EXC_ERR, nothing placed outside",
	  "[mp_wr][rc][rnr]") {
	MpPair p(79, ib::qpt_rc, 8192, 4096, 16384, 8192);
	auto &[f, a, b, qa, qb, src, dst] = p;
	f.connect(qa, qb, ib::mtu_4096, 0, 0, 10, 7, 2); // rnr_retry 2
	REQUIRE(f.post_recv(qb, 1, {sge_of(f, b, dst, 0, 8192)}) == 0);
	send(f, qa, src, 0, 12000, 7);
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(a, 1, ca, 30000000000ull));
	CHECK(ca[0].wr_id == 7);
	CHECK(ca[0].status == ib::wc_rnr_retry_exc_err);
	auto c = recvs(f.poll(b));
	REQUIRE(c.size() == 2); // the two packets that fit, nothing more
	CHECK((has(c[1], SROCE_CQE_MP_CONSUMED) && has(c[1], SROCE_CQE_MP_MORE_IN_MSG)));
	CHECK(std::memcmp(dst.data, src.data, 8192) == 0);
	CHECK(dst.guards_intact());
}

TEST_CASE("mp-wr: UC out of buffers within a message ends it with MP_INCOMPLETE", "[mp_wr][uc]") {
	MpPair p(74, ib::qpt_uc, 8192, 4096, 16384, 2 * 8192);
	auto &[f, a, b, qa, qb, src, dst] = p;
	f.connect(qa, qb, ib::mtu_4096);
	REQUIRE(f.post_recv(qb, 1, {sge_of(f, b, dst, 0, 8192)}) == 0);
	send(f, qa, src, 0, 12000);
	auto c = wait_recvs(f, a, b, 3);
	REQUIRE(c.size() == 3);
	CHECK(has(c[1], SROCE_CQE_MP_CONSUMED));
	CHECK(c[2].wr_id == 1); // the buffer the message last used
	CHECK(c[2].opcode == SROCE_CQE_OP_RECV_NOP);
	CHECK(c[2].flags == SROCE_CQE_MP_INCOMPLETE);
	// The next message is whole.
	REQUIRE(f.post_recv(qb, 2, {sge_of(f, b, dst, 8192, 8192)}) == 0);
	send(f, qa, src, 100, 300);
	c = wait_recvs(f, a, b, 1);
	REQUIRE(c.size() == 1);
	CHECK((c[0].wr_id == 2 && c[0].mp_offset == 0 && c[0].byte_len == 300 && c[0].flags == 0));
	CHECK(std::memcmp(dst.data + 8192, src.data + 100, 300) == 0);
}

TEST_CASE("mp-wr: UD datagrams each take their GRH and payload at the next boundary", "[mp_wr][ud]") {
	MpPair p(75, ib::qpt_ud, 8192, 256, 4096, 8192);
	auto &[f, a, b, qa, qb, src, dst] = p;
	f.to_ud_rts(qa, 0x11);
	f.to_ud_rts(qb, 0x11);
	REQUIRE(f.post_recv(qb, 7, {sge_of(f, b, dst, 0, 8192)}) == 0);
	sroce_core_ah *ah = f.ah(a, b);
	for (unsigned int i = 0; i < 2; i++) {
		auto w = wqe(i, ib::wr_send, 1);
		address_ud(w, ah, qb.qpn, 0x11);
		REQUIRE(f.post_send(qa, w, {sge_of(f, a, src, 0, 300)}) == 0);
	}
	auto c = wait_recvs(f, a, b, 2);
	REQUIRE(c.size() == 2);
	CHECK((c[0].mp_offset == 0 && c[0].byte_len == 340 && has(c[0], SROCE_CQE_GRH)));
	CHECK((c[1].mp_offset == 512 && c[1].byte_len == 340));
	CHECK(c[1].src_qp == qa.qpn);
	CHECK(std::memcmp(dst.data + 512 + 40, src.data, 300) == 0);
}

TEST_CASE("mp-wr: a WRITE with immediate completes on the buffer in use without taking its bytes",
	  "[mp_wr][rc][write]") {
	MpPair p(76, ib::qpt_rc, 8192, 512, 8192, 8192);
	auto &[f, a, b, qa, qb, src, dst] = p;
	f.connect(qa, qb, ib::mtu_4096);
	Buffer &mr = f.buffer(b, 8192, all_access);
	REQUIRE(f.post_recv(qb, 1, {sge_of(f, b, dst, 0, 8192)}) == 0);
	send(f, qa, src, 0, 100);
	auto w = wqe(2, ib::wr_rdma_write_imm, 1);
	w.rdma.remote_addr = iova_of(b, mr);
	w.rdma.rkey = f.lkey(mr);
	w.imm_or_inv = 0x01020304;
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, src, 0, 6000)}) == 0);
	send(f, qa, src, 200, 100);
	auto c = wait_recvs(f, a, b, 3);
	REQUIRE(c.size() == 3);
	CHECK(c[1].opcode == ib::wc_recv_rdma_imm);
	CHECK(c[1].byte_len == 6000);
	CHECK(c[1].mp_offset == 512);
	CHECK(has(c[1], SROCE_CQE_WITH_IMM));
	CHECK(c[2].mp_offset == 512); // the immediate took no bytes
	CHECK(std::memcmp(mr.data, src.data, 6000) == 0);
	CHECK(std::memcmp(dst.data + 512, src.data + 200, 100) == 0);
}

TEST_CASE("mp-wr: a WQE whose SGEs are not the buffer size completes in error, nothing placed", "[mp_wr][bad]") {
	MpPair p(77, ib::qpt_rc, 8192, 512, 8192, 16384);
	auto &[f, a, b, qa, qb, src, dst] = p;
	f.connect(qa, qb, ib::mtu_4096, 0, 0, 10, 7, 0);
	std::vector<unsigned char> before(dst.data, dst.data + dst.len);
	// A hostile poster's WQE: 8 KiB + 4 KiB.
	REQUIRE(f.post_recv(qb, 1, {sge_of(f, b, dst, 0, 8192), sge_of(f, b, dst, 8192, 4096)}) == 0);
	send(f, qa, src, 0, 100);
	auto c = wait_recvs(f, a, b, 1);
	REQUIRE(!c.empty());
	CHECK(c[0].wr_id == 1);
	CHECK(c[0].status == ib::wc_loc_len_err);
	CHECK(has(c[0], SROCE_CQE_MP_CONSUMED));
	CHECK(std::memcmp(dst.data, before.data(), dst.len) == 0);
	CHECK(dst.guards_intact());
	CHECK(Fixture::query(qb).qp_state == ib::qps_err);
}

// A refused WQE on a multi-packet QP (found by review, 2026-12-01): a
// malformed one (num_sge rewritten in the ring) used to vanish without a
// completion, and on UD a WQE of the wrong size left the QP in RTS. Both
// complete in error, CONSUMED, and the QP goes to ERR, as the ordinary
// receive path and a multi-packet WQ do; the WQE after is flushed.
TEST_CASE("mp-wr: a malformed WQE, or one of the wrong size, completes in error and the QP goes to ERR (UD, RC)",
	  "[mp_wr][bad]") {
	for (unsigned int type : {ib::qpt_ud, ib::qpt_rc}) {
		for (bool malformed : {true, false}) {
			CAPTURE(type, malformed);
			MpPair p(79, type, 8192, 512, 8192, 3 * 8192);
			auto &[f, a, b, qa, qb, src, dst] = p;
			sroce_core_ah *ah = nullptr;
			if (type == ib::qpt_ud) {
				f.to_ud_rts(qa, 0x11);
				f.to_ud_rts(qb, 0x11);
				ah = f.ah(a, b);
			} else {
				f.connect(qa, qb, ib::mtu_4096, 0, 0, 10, 7, 0);
			}
			std::vector<unsigned char> before(dst.data, dst.data + dst.len);
			if (malformed) {
				REQUIRE(f.post_recv(qb, 1, {sge_of(f, b, dst, 0, 8192)}) == 0);
				reinterpret_cast<sroce_wqe *>(static_cast<unsigned char *>(qb.rq.mem) + SROCE_RING_ENTRIES_OFFSET)
					->num_sge = 200;
			} else { // 8 KiB + 4 KiB
				REQUIRE(f.post_recv(qb, 1, {sge_of(f, b, dst, 0, 8192), sge_of(f, b, dst, 8192, 4096)}) == 0);
			}
			REQUIRE(f.post_recv(qb, 2, {sge_of(f, b, dst, 2 * 8192, 8192)}) == 0);
			auto w = wqe(100, ib::wr_send, 1);
			if (ah)
				address_ud(w, ah, qb.qpn, 0x11);
			REQUIRE(f.post_send(qa, w, {sge_of(f, a, src, 0, 100)}) == 0);
			auto c = wait_recvs(f, a, b, 2);
			REQUIRE(c.size() == 2);
			CHECK(c[0].wr_id == 1);
			CHECK(c[0].status == (malformed ? ib::wc_loc_qp_op_err : ib::wc_loc_len_err));
			CHECK(has(c[0], SROCE_CQE_MP_CONSUMED));
			CHECK((c[1].wr_id == 2 && c[1].status == ib::wc_wr_flush_err));
			CHECK(std::memcmp(dst.data, before.data(), dst.len) == 0);
			CHECK(Fixture::query(qb).qp_state == ib::qps_err);
		}
	}
}

TEST_CASE("mp-wr: the error state flushes the buffer in use, then the posted ones", "[mp_wr][flush]") {
	MpPair p(78, ib::qpt_rc, 8192, 512, 8192, 16384);
	auto &[f, a, b, qa, qb, src, dst] = p;
	f.connect(qa, qb, ib::mtu_4096);
	REQUIRE(f.post_recv(qb, 1, {sge_of(f, b, dst, 0, 8192)}) == 0);
	REQUIRE(f.post_recv(qb, 2, {sge_of(f, b, dst, 8192, 8192)}) == 0);
	send(f, qa, src, 0, 100);
	auto c = wait_recvs(f, a, b, 1);
	REQUIRE(c.size() == 1);
	REQUIRE(f.modify_state(qb, ib::qps_err) == 0);
	f.sim().run_for(1000000);
	c = recvs(f.poll(b));
	REQUIRE(c.size() == 2);
	CHECK((c[0].wr_id == 1 && c[0].status == ib::wc_wr_flush_err && has(c[0], SROCE_CQE_MP_CONSUMED)));
	CHECK((c[1].wr_id == 2 && c[1].status == ib::wc_wr_flush_err));
}

TEST_CASE("mp-wr: RC messages of 1 B to 1 MiB under loss, duplication and reordering are rebuilt whole",
	  "[mp_wr][rc][faults]") {
	uint64_t seed = sim::seed_from_env(79);
	Fixture f(seed);
	Node &a = f.node(0), &b = f.node(1);
	constexpr unsigned int wr_sz = 65536, nwr = 200;
	Qp &qa = f.qp(a, ib::qpt_rc, 1024), &qb = f.qp_mp(b, ib::qpt_rc, wr_sz, 512, 256);
	f.connect(qa, qb, ib::mtu_4096, 0, 0, 10, 7, 7);
	sim::LinkConfig lc;
	lc.loss = 0.02;
	lc.duplicate = 0.01;
	lc.reorder = 0.05;
	f.sim().set_all_links(lc);
	Buffer &src = f.buffer(a, 2 << 20, all_access);
	Buffer &dst = f.buffer(b, size_t(wr_sz) * nwr, all_access);
	for (unsigned int i = 0; i < nwr; i++)
		REQUIRE(f.post_recv(qb, i + 1, {sge_of(f, b, dst, size_t(i) * wr_sz, wr_sz)}) == 0);
	const unsigned int sizes[] = {1, 777, 4096, 4097, 12000, 65536, 200000, 1u << 20};
	struct Msg {
		size_t off;
		unsigned int len;
	};
	std::vector<Msg> sent;
	for (unsigned int i = 0; i < 32; i++) {
		Msg m{(size_t(i) * 4099) % (1u << 20), sizes[i % 8]};
		sent.push_back(m);
		send(f, qa, src, m.off, m.len, i);
	}
	std::vector<unsigned char> cur;
	size_t done = 0, wrong = 0;
	unsigned int consumed = 0;
	bool ok = f.sim().run_until(
		[&] {
			f.poll(a);
			for (auto &c : recvs(f.poll(b))) {
				REQUIRE(c.status == ib::wc_success);
				if (c.opcode == SROCE_CQE_OP_RECV_NOP) {
					consumed++;
					continue;
				}
				const unsigned char *p = dst.data + (c.wr_id - 1) * wr_sz + c.mp_offset;
				cur.insert(cur.end(), p, p + c.byte_len);
				consumed += has(c, SROCE_CQE_MP_CONSUMED);
				if (has(c, SROCE_CQE_MP_MORE_IN_MSG))
					continue;
				const Msg &m = sent[done++];
				wrong += cur.size() != m.len || std::memcmp(cur.data(), src.data + m.off, m.len) != 0;
				cur.clear();
			}
			return done == sent.size();
		},
		120000000000ull);
	INFO("seed " << seed);
	CHECK(ok);
	CHECK(done == sent.size());
	CHECK(wrong == 0);
	CHECK(consumed > 0);
	CHECK(f.sim().counters().dropped > 0); // the link did lose packets
	CHECK(Fixture::query(qb).qp_state == ib::qps_rts);
	CHECK(dst.guards_intact());
}

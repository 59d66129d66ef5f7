// Loss recovery without the retry timer. A timeout costs 4.096 us * 2^timeout
// (268 ms at sroce_integrity's 16, 67 ms at perftest's 14) and a retry of
// retry_cnt; at 10% loss 82-netem spent most of its time in them and
// sometimes all its retries (RETRY_EXC_ERR). Two losses the peers can see
// without a timer:
// - a READ response lost in the middle of its stream: the responses behind
//   it show the gap, and the requester asks again from there at once;
// - a packet NAKed as missing and lost again when resent: the responder sees
//   the resend (PSNs going back, AckReq) without the packet it waits for,
//   and NAKs once more.
#include <catch2/catch.hpp>

#include <cstring>

#include "ib_enums.h"
#include "param.h"
#include "transport_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {
constexpr unsigned char rc_read_response_middle = 0x0e;
constexpr unsigned char rc_write_middle = 0x07;

struct Pair {
	Fixture f;
	Node &a, &b;
	Qp &qa, &qb;
	Buffer &la, &rb;
	static constexpr unsigned int msg = 64 * 1024;
	explicit Pair(uint64_t seed)
		: f(seed, 1500), a(f.node(0)), b(f.node(1)), qa(f.qp(a, ib::qpt_rc, 16)), qb(f.qp(b, ib::qpt_rc, 16)),
		  la(f.buffer(a, msg, all_access)), rb(f.buffer(b, msg, all_access)) {
		f.trace_from_env();
		// timeout 20: 4.3 s, far beyond anything these exchanges need.
		f.connect(qa, qb, ib::mtu_1024, 0x100, 0x100, 20, 7, 7);
	}
	// One 64 KiB operation; returns its completion status. The timeout
	// is far beyond the exchange: a timer-driven recovery fails here.
	int run(unsigned char opcode) {
		for (unsigned int i = 0; i < msg; i++) {
			la.data[i] = (unsigned char)(i * 13 + 5);
			rb.data[i] = (unsigned char)(i * 7 + 1);
		}
		sroce_wqe w = wqe(1, opcode, 1);
		w.rdma.remote_addr = iova_of(b, rb);
		w.rdma.rkey = f.lkey(rb);
		REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, msg)}) == 0);
		std::vector<sroce_cqe> ca;
		REQUIRE(f.wait_cqes(a, 1, ca, 60000000000ull));
		CHECK(std::memcmp(rb.data, la.data, msg) == 0);
		CHECK(la.guards_intact());
		CHECK(rb.guards_intact());
		CHECK(device_counter(a, SROCE_CNT_RETRANS_TIMEOUTS) == 0);
		return int(ca[0].status);
	}
};

// One READ (rb into la) or WRITE (la into rb) of len bytes in one WQE, its
// source filled with a pattern; checks the bytes, returns the status.
int rdma_whole(Fixture &f, Node &a, Node &b, Qp &qa, unsigned char opcode, Buffer &la, Buffer &rb,
	       unsigned int len) {
	Buffer &src = opcode == ib::wr_rdma_read ? rb : la;
	for (unsigned int i = 0; i < len; i++)
		src.data[i] = (unsigned char)(i * 7 + 1);
	sroce_wqe w = wqe(1, opcode, 1);
	w.rdma.remote_addr = iova_of(b, rb);
	w.rdma.rkey = f.lkey(rb);
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, len)}) == 0);
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(std::memcmp(rb.data, la.data, len) == 0);
	return int(ca[0].status);
}
} // namespace

TEST_CASE("fast recovery: a READ response lost mid-stream is asked for again at once", "[transport][fast-recovery]") {
	Pair p(81);
	unsigned int middles = 0, lost = 0;
	p.f.sim().set_filter([&](const sim::WirePacket &w) {
		if (w.len > 28 && w.data[28] == rc_read_response_middle && ++middles == 10) {
			lost++;
			return false;
		}
		return true;
	});
	CHECK(p.run(ib::wr_rdma_read) == ib::wc_success);
	CHECK(lost == 1);
	CHECK(device_counter(p.a, SROCE_CNT_READ_GAP_RESENDS) == 1);
}

TEST_CASE("fast recovery: reordered READ responses are not asked for again", "[transport][fast-recovery]") {
	Pair p(82);
	// 1 Gbit/s: a 1 KiB response every 8.5 us. A third of them are held
	// back up to 14 us, so neighbours swap, but none falls 3 PSNs behind.
	sim::LinkConfig lc;
	lc.bits_per_sec = 1000000000ull;
	lc.reorder = 0.3;
	lc.reorder_max_ns = 14000;
	p.f.sim().set_link(1, 0, lc);
	CHECK(p.run(ib::wr_rdma_read) == ib::wc_success);
	CHECK(p.f.sim().counters().reordered > 0);
	CHECK(device_counter(p.a, SROCE_CNT_READ_GAP_RESENDS) == 0);
}

TEST_CASE("fast recovery: a packet NAKed as missing and lost again is NAKed again", "[transport][fast-recovery]") {
	Pair p(83);
	// The 10th WRITE packet is lost, and so is its first resend.
	unsigned int sent10 = 0, middles = 0;
	uint32_t psn10 = 0;
	p.f.sim().set_filter([&](const sim::WirePacket &w) {
		if (w.len <= 40 || w.from != p.a.id || w.data[28] != rc_write_middle)
			return true;
		uint32_t psn = uint32_t(w.data[37]) << 16 | uint32_t(w.data[38]) << 8 | w.data[39];
		if (++middles == 10)
			psn10 = psn;
		if (psn10 && psn == psn10 && sent10++ < 2)
			return false;
		return true;
	});
	CHECK(p.run(ib::wr_rdma_write) == ib::wc_success);
	CHECK(sent10 == 3);
	CHECK(device_counter(p.b, SROCE_CNT_NAK_SENT_PSN_SEQ) == 2);
}

TEST_CASE("fast recovery: a READ longer than one request is no retransmission", "[transport][fast-recovery]") {
	// 64 packets per request would be asked for in one; 300 KiB takes three
	// requests, each new. The counter once took the later parts for resends.
	Fixture f(84, 1500);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc, 16), &qb = f.qp(b, ib::qpt_rc, 16);
	f.connect(qa, qb, ib::mtu_1024, 0x100, 0x100, 20, 7, 7);
	constexpr unsigned int len = 300 * 1024;
	Buffer &la = f.buffer(a, len, all_access);
	Buffer &rb = f.buffer(b, len, all_access);
	CHECK(rdma_whole(f, a, b, qa, ib::wr_rdma_read, la, rb, len) == ib::wc_success);
	CHECK(f.sim().counters().sent == 3 + len / 1024);
	CHECK(device_counter(a, SROCE_CNT_RETRANS_PKTS) == 0);
	(void)qb;
}

// After a rewind the responder, which may have everything, answers the
// resent duplicates with how far it is: beyond the resend point. That ACK
// counts (IBTA 9.7.5.2: any PSN up to the newest sent), and sending skips
// to where it points. It used to be dropped as "ahead of anything sent";
// in a guest, where that ACK can come back before the resend passes it,
// every timeout then resent the same window until RETRY_EXC_ERR (82-netem
// on 6.12 at loss 1%). Here: every ACK of the first pass is lost, the
// timeout resends, and the requester's deferred sends (past its 64-packet
// budget) run late, so the duplicates' ACK arrives with most of the resend
// still to go.
TEST_CASE("fast recovery: after a rewind, an ACK beyond the resend point counts", "[transport][fast-recovery]") {
	Fixture f(85, 1500);
	f.trace_from_env();
	f.sim().set_work_delay(300000);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc, 16), &qb = f.qp(b, ib::qpt_rc, 16);
	// timeout 8: 1 ms.
	f.connect(qa, qb, ib::mtu_1024, 0x100, 0x100, 8, 7, 7);
	constexpr unsigned int len = 128 * 1024;
	Buffer &la = f.buffer(a, len, all_access);
	Buffer &rb = f.buffer(b, len, all_access);
	uint64_t t0 = 0;
	unsigned int acks_lost = 0;
	f.sim().set_filter([&](const sim::WirePacket &p) {
		if (!t0)
			t0 = p.time_ns;
		if (p.from == b.id && p.time_ns < t0 + 900000) {
			acks_lost++;
			return false;
		}
		return true;
	});
	CHECK(rdma_whole(f, a, b, qa, ib::wr_rdma_write, la, rb, len) == ib::wc_success);
	CHECK(acks_lost > 0);
	CHECK(device_counter(a, SROCE_CNT_RETRANS_TIMEOUTS) == 1);
	// The timeout's slow-start burst resent (param::timeout_window), not
	// the whole message again: its ACK says how far the responder is.
	CHECK(device_counter(a, SROCE_CNT_RETRANS_PKTS) == sroce::param::timeout_window);
	(void)qb;
}

// A READ response lost near the end of a request: the requester asks again
// from the gap, and the first resent response completes the request (the
// ones behind the gap came already and were placed). It frees that replay
// slot and asks for its next part, which takes the same slot while the
// responder is still streaming the replay nobody waits for (past its budget,
// deferred to work). That slot was "busy": NAK invalid request, the QP in
// error (82-netem, loss 1%, a 1 MiB READ in four slots: REM_INV_REQ_ERR).
// A replay a new request overtakes is given up instead.
TEST_CASE("fast recovery: a new READ part may take the slot of a replay it no longer needs",
	  "[transport][fast-recovery]") {
	Fixture f(85, 1500);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc, 16), &qb = f.qp(b, ib::qpt_rc, 16);
	f.trace_from_env();
	// One READ/ATOMIC slot each way: the second part must reuse the first's.
	f.connect(qa, qb, ib::mtu_1024, 0x100, 0x100, 20, 7, 7, 1);
	constexpr unsigned int len = 192 * 1024; // two requests: 128 and 64 packets
	Buffer &la = f.buffer(a, len, all_access);
	Buffer &rb = f.buffer(b, len, all_access);
	// The response at PSN 0x100 + 63, once: the replay from there is 65
	// packets, one more than the responder sends per run.
	unsigned int lost = 0;
	f.sim().set_filter([&](const sim::WirePacket &w) {
		if (w.len <= 40 || w.from != b.id || w.data[28] != rc_read_response_middle)
			return true;
		uint32_t psn = uint32_t(w.data[37]) << 16 | uint32_t(w.data[38]) << 8 | w.data[39];
		if (psn == 0x100 + 63 && !lost) {
			lost++;
			return false;
		}
		return true;
	});
	f.sim().set_work_delay(2000000); // the responder's deferred rest: 2 ms later
	CHECK(rdma_whole(f, a, b, qa, ib::wr_rdma_read, la, rb, len) == ib::wc_success);
	CHECK(lost == 1);
	CHECK(device_counter(a, SROCE_CNT_READ_GAP_RESENDS) == 1);
	CHECK(device_counter(b, SROCE_CNT_NAK_SENT_INV_REQ) == 0);
	CHECK(device_counter(a, SROCE_CNT_RETRANS_TIMEOUTS) == 0);
	(void)qb;
}

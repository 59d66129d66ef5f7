// Device counters and resource views on the simulator: each counter moves
// by exactly what the wire (the simulator's tap, which sees every packet
// before the loss) shows.
#include <catch2/catch.hpp>

#include "counters.h"
#include "env_host.h"
#include "ib_enums.h"
#include "transport_fixture.h"

#include <map>
#include <set>
#include <string>
#include <thread>

#include "packet.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {

// One 100-byte WRITE from a to b; returns a's completions once one came.
std::vector<sroce_cqe> write_100(Fixture &f, Qp &qa, Node &a, Node &b) {
	Buffer &src = f.buffer(a, 4096, all_access);
	Buffer &dst = f.buffer(b, 4096, all_access);
	auto wr = wqe(1, ib::wr_rdma_write, 1);
	wr.rdma.remote_addr = iova_of(b, dst);
	wr.rdma.rkey = f.lkey(dst);
	REQUIRE(f.post_send(qa, wr, {sge_of(f, a, src, 0, 100)}) == 0);
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(a, 1, ca));
	return ca;
}



int32_t psn_diff(uint32_t a, uint32_t b) { return int32_t((a - b) << 8) >> 8; }

struct Counters {
	unsigned long long v[SROCE_CNT_MAX] = {};
	unsigned long long operator[](sroce_core_counter c) const { return v[c]; }
};

Counters read(Node &n) {
	Counters c;
	REQUIRE(sroce_core_dev_read_counters(n.dev, c.v, SROCE_CNT_MAX) == SROCE_CNT_MAX);
	return c;
}

// What a capture shows, per sending node: packets, bytes, and request PSNs
// going backwards (sroce-dump --flows' "retransmitted": a PSN below the
// highest one seen + 1), counted before the link drops anything.
struct Wire {
	uint64_t pkts[2] = {}, bytes[2] = {}, retrans[2] = {};
	bool have_next[2] = {};
	uint32_t next[2] = {};
	void see(const sim::WirePacket &p) {
		int s = p.from;
		pkts[s]++;
		bytes[s] += p.len;
		auto ip = ib::parse_ip_udp(ktl::Span<const u8>(p.data, p.len));
		REQUIRE(!ip.is_error());
		auto pi = ib::parse_ib(ktl::Span<const u8>(p.data + ip.value().bth_offset, ip.value().ib_len));
		REQUIRE(!pi.is_error());
		if (pi.value().flags & ib::op_response)
			return;
		uint32_t psn = pi.value().hdr.bth.psn;
		if (have_next[s] && psn_diff(psn, next[s]) < 0)
			retrans[s]++;
		else
			next[s] = (psn + 1) & 0xffffff;
		have_next[s] = true;
	}
};
} // namespace

TEST_CASE("counters: every counter has a distinct name", "[counters]") {
	std::set<std::string> names;
	for (unsigned int i = 0; i < SROCE_CNT_MAX; i++) {
		REQUIRE(sroce_core_counter_name(i) != nullptr);
		names.insert(sroce_core_counter_name(i));
	}
	CHECK(names.size() == SROCE_CNT_MAX);
	CHECK(sroce_core_counter_name(SROCE_CNT_MAX) == nullptr);
	CHECK(std::string(sroce_core_counter_name(SROCE_CNT_ICRC_ERRORS)) == "icrc_errors");
}

TEST_CASE("counters: packets and bytes match the wire in both directions", "[counters]") {
	Fixture f(21);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	Wire w;
	f.sim().set_tap([&](const sim::WirePacket &p) { w.see(p); });
	Buffer &src = f.buffer(a, 1 << 16, all_access);
	Buffer &dst = f.buffer(b, 1 << 16, all_access);
	for (int i = 0; i < 5; i++)
		REQUIRE(f.post_recv(qb, i, {sge_of(f, b, dst, 0, 20000)}) == 0);
	for (int i = 0; i < 5; i++)
		REQUIRE(f.post_send(qa, wqe(i, ib::wr_send, 1), {sge_of(f, a, src, 0, 10000)}) == 0);
	std::vector<sroce_cqe> ca, cb;
	REQUIRE(f.wait_cqes(b, 5, cb));
	REQUIRE(f.wait_cqes(a, 5, ca));
	f.sim().run_for(1000000);
	Counters A = read(a), B = read(b);
	CHECK(w.pkts[0] >= 50); // 10 packets per 10000-byte SEND
	CHECK(A[SROCE_CNT_TX_PKTS] == w.pkts[0]);
	CHECK(A[SROCE_CNT_TX_BYTES] == w.bytes[0]);
	CHECK(B[SROCE_CNT_RX_PKTS] == w.pkts[0]);
	CHECK(B[SROCE_CNT_RX_BYTES] == w.bytes[0]);
	CHECK(B[SROCE_CNT_TX_PKTS] == w.pkts[1]);
	CHECK(A[SROCE_CNT_RX_PKTS] == w.pkts[1]);
	CHECK(A[SROCE_CNT_RX_BYTES] == w.bytes[1]);
	CHECK(A[SROCE_CNT_RETRANS_PKTS] == 0);
	CHECK(B[SROCE_CNT_OUT_OF_SEQ_REQ] == 0);
	CHECK(B[SROCE_CNT_NAK_SENT_PSN_SEQ] == 0);
}

TEST_CASE("counters: a lost packet is a NAK each way and retransmissions the wire shows", "[counters]") {
	Fixture f(22);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024, 100, 200);
	Wire w;
	f.sim().set_tap([&](const sim::WirePacket &p) { w.see(p); });
	int n = 0;
	uint64_t dropped = 0;
	// The 3rd request packet of a is lost, once.
	f.sim().set_filter([&](const sim::WirePacket &p) {
		if (p.from == 0 && ++n == 3) {
			dropped++;
			return false;
		}
		return true;
	});
	Buffer &src = f.buffer(a, 1 << 16, all_access);
	Buffer &dst = f.buffer(b, 1 << 16, all_access);
	auto wr = wqe(1, ib::wr_rdma_write, 1);
	wr.rdma.remote_addr = iova_of(b, dst);
	wr.rdma.rkey = f.lkey(dst);
	REQUIRE(f.post_send(qa, wr, {sge_of(f, a, src, 0, 10 * 1024)}) == 0);
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(ca[0].status == ib::wc_success);
	CHECK(std::memcmp(src.data, dst.data, 10 * 1024) == 0);
	Counters A = read(a), B = read(b);
	REQUIRE(dropped == 1);
	// psn 102 lost: 103..109 arrive out of sequence, one NAK, 102..109 again.
	CHECK(B[SROCE_CNT_OUT_OF_SEQ_REQ] == 7);
	CHECK(B[SROCE_CNT_NAK_SENT_PSN_SEQ] == 1);
	CHECK(A[SROCE_CNT_NAK_RCVD_PSN_SEQ] == 1);
	CHECK(A[SROCE_CNT_RETRANS_PKTS] == 8);
	CHECK(A[SROCE_CNT_RETRANS_PKTS] == w.retrans[0]);
	CHECK(A[SROCE_CNT_RETRANS_TIMEOUTS] == 0);
	CHECK(A[SROCE_CNT_TX_PKTS] == w.pkts[0]);
	CHECK(B[SROCE_CNT_RX_PKTS] == w.pkts[0] - dropped);

	sroce_core_qp_view v;
	sroce_core_qp_snapshot(qa.qp, &v);
	CHECK(v.state == ib::qps_rts);
	CHECK(v.sq_psn == 110);
	CHECK(v.sq_unacked_psn == 110);
	CHECK(v.retrans_pkts == 8);
	CHECK(v.sq_wqes == 0);
	CHECK(v.window_limit == 128); // the NAK halved it
	sroce_core_qp_snapshot(qb.qp, &v);
	CHECK(v.rq_psn == 110);
	CHECK(v.sq_psn == 200);
	CHECK(v.msn == 1);
}

TEST_CASE("counters: a lost tail packet costs a timeout", "[counters]") {
	Fixture f(23);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024, 0, 0, /*timeout*/ 10, /*retry*/ 3);
	Wire w;
	f.sim().set_tap([&](const sim::WirePacket &p) { w.see(p); });
	int n = 0;
	f.sim().set_filter([&](const sim::WirePacket &p) { return !(p.from == 0 && ++n == 1); });
	std::vector<sroce_cqe> ca = write_100(f, qa, a, b);
	CHECK(ca[0].status == ib::wc_success);
	Counters A = read(a), B = read(b);
	CHECK(A[SROCE_CNT_RETRANS_TIMEOUTS] == 1);
	CHECK(A[SROCE_CNT_RETRANS_PKTS] == 1);
	CHECK(w.retrans[0] == 1);
	CHECK(B[SROCE_CNT_NAK_SENT_PSN_SEQ] == 0);
	sroce_core_qp_view v;
	sroce_core_qp_snapshot(qa.qp, &v);
	CHECK(v.retrans_timeouts == 1);
	CHECK(v.retry_cnt == 3);
	CHECK(v.retries_left == 3); // progress restored them
	// The timeout found one packet out: the limit is its floor, 8, and
	// the one progress after it added one.
	CHECK(v.window_limit == 8);
	CHECK(v.window == 9);
}

TEST_CASE("counters: every retry times out: retry_exceeded", "[counters]") {
	Fixture f(24);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024, 0, 0, 10, 2);
	f.sim().set_filter([&](const sim::WirePacket &p) { return p.from != 0; });
	std::vector<sroce_cqe> ca = write_100(f, qa, a, b);
	CHECK(ca[0].status == ib::wc_retry_exc_err);
	Counters A = read(a);
	CHECK(A[SROCE_CNT_RETRANS_TIMEOUTS] == 3); // two retries, then the third expiry fails it
	CHECK(A[SROCE_CNT_RETRANS_PKTS] == 2);
	CHECK(A[SROCE_CNT_RETRY_EXCEEDED] == 1);
}

TEST_CASE("counters: duplicated requests and RNR NAKs", "[counters]") {
	Fixture f(25);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	Buffer &src = f.buffer(a, 4096, all_access);
	Buffer &dst = f.buffer(b, 4096, all_access);
	std::vector<sroce_cqe> ca, cb;
	SECTION("every request delivered twice: each second copy is a duplicate") {
		sim::LinkConfig c;
		c.duplicate = 1.0;
		f.sim().set_link(0, 1, c);
		for (int i = 0; i < 4; i++) {
			auto wr = wqe(i, ib::wr_rdma_write, 1);
			wr.rdma.remote_addr = iova_of(b, dst);
			wr.rdma.rkey = f.lkey(dst);
			REQUIRE(f.post_send(qa, wr, {sge_of(f, a, src, 0, 64)}) == 0);
		}
		REQUIRE(f.wait_cqes(a, 4, ca));
		f.sim().run_for(1000000);
		Counters A = read(a), B = read(b);
		CHECK(A[SROCE_CNT_TX_PKTS] == 4);
		CHECK(B[SROCE_CNT_RX_PKTS] == 8);
		CHECK(B[SROCE_CNT_DUPLICATE_REQ] == 4);
		CHECK(A[SROCE_CNT_RETRANS_PKTS] == 0);
	}
	SECTION("a SEND before its receive: RNR NAKs, as many received as sent") {
		REQUIRE(f.post_send(qa, wqe(1, ib::wr_send, 1), {sge_of(f, a, src, 0, 64)}) == 0);
		f.sim().run_for(3000000); // a few RNR rounds (floor of the RNR wait)
		REQUIRE(f.post_recv(qb, 1, {sge_of(f, b, dst, 0, 64)}) == 0);
		REQUIRE(f.wait_cqes(b, 1, cb));
		REQUIRE(f.wait_cqes(a, 1, ca));
		Counters A = read(a), B = read(b);
		CHECK(B[SROCE_CNT_NAK_SENT_RNR] >= 1);
		CHECK(A[SROCE_CNT_NAK_RCVD_RNR] == B[SROCE_CNT_NAK_SENT_RNR]);
		CHECK(A[SROCE_CNT_RETRANS_PKTS] == B[SROCE_CNT_NAK_SENT_RNR]); // each RNR costs one resend
	}
}

TEST_CASE("counters: remote access NAK, doorbells, CQ and MR views", "[counters]") {
	Fixture f(26);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	Buffer &src = f.buffer(a, 4096, all_access);
	Buffer &ro = f.buffer(b, 4096, ib::access::local_write); // no remote rights
	sroce_core_mr_view mv;
	sroce_core_mr_snapshot(ro.mr, &mv);
	CHECK(mv.lkey == f.lkey(ro));
	CHECK(mv.rkey == f.lkey(ro));
	CHECK(mv.length == 4096);
	CHECK(mv.iova == iova_of(b, ro));
	CHECK(mv.access == ib::access::local_write);
	CHECK(mv.npages == 1);

	f.sim().call([&](sroce_env_batch *bt) {
		sroce_core_qp_doorbell(qa.qp, bt);
		sroce_core_qp_doorbell(qa.qp, bt);
	});
	auto wr = wqe(1, ib::wr_rdma_write, 1);
	wr.rdma.remote_addr = iova_of(b, ro);
	wr.rdma.rkey = f.lkey(ro);
	REQUIRE(f.post_send(qa, wr, {sge_of(f, a, src, 0, 64)}) == 0);
	f.sim().run_for(5000000);
	Counters A = read(a), B = read(b);
	CHECK(A[SROCE_CNT_SQ_DOORBELLS] == 2);
	CHECK(A[SROCE_CNT_SQ_POLLER_WAKEUPS] == 0);
	CHECK(B[SROCE_CNT_NAK_SENT_REM_ACCESS] == 1);
	CHECK(A[SROCE_CNT_NAK_RCVD_REM_ACCESS] == 1);

	sroce_core_cq_view cv;
	sroce_core_cq_snapshot(a.cq, &cv);
	CHECK(cv.entries >= 1);
	CHECK(cv.fill == 1); // the failed WRITE, not yet polled
	sroce_core_qp_view v;
	sroce_core_qp_snapshot(qa.qp, &v);
	CHECK(v.state == ib::qps_err);
	auto c = f.poll(a);
	REQUIRE(c.size() == 1);
	CHECK(c[0].status == ib::wc_rem_access_err);
	sroce_core_cq_snapshot(a.cq, &cv);
	CHECK(cv.fill == 0);
}

TEST_CASE("counters: each QP counts its own share of the device's", "[counters][qp]") {
	Fixture f(27);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa1 = f.qp(a, ib::qpt_rc), &qb1 = f.qp(b, ib::qpt_rc);
	Qp &qa2 = f.qp(a, ib::qpt_rc), &qb2 = f.qp(b, ib::qpt_rc);
	f.connect(qa1, qb1, ib::mtu_1024, 100, 200);
	f.connect(qa2, qb2, ib::mtu_1024, 300, 400);
	// Per sending node and destination QP (both nodes number their QPs
	// alike): packets and bytes on the wire; the 3rd packet to qb2 is lost
	// once, so only qa2 retransmits.
	std::map<uint32_t, uint64_t> pkts, bytes;
	auto to_b = [](const Qp &q) { return q.qpn; };
	auto to_a = [](const Qp &q) { return (1u << 24) | q.qpn; };
	f.sim().set_tap([&](const sim::WirePacket &p) {
		auto ip = ib::parse_ip_udp(ktl::Span<const u8>(p.data, p.len));
		auto pi = ib::parse_ib(ktl::Span<const u8>(p.data + ip.value().bth_offset, ip.value().ib_len));
		uint32_t q = (p.from == 1 ? 1u << 24 : 0) | pi.value().hdr.bth.dest_qpn;
		pkts[q]++;
		bytes[q] += p.len;
	});
	int n = 0;
	f.sim().set_filter([&](const sim::WirePacket &p) {
		auto ip = ib::parse_ip_udp(ktl::Span<const u8>(p.data, p.len));
		auto pi = ib::parse_ib(ktl::Span<const u8>(p.data + ip.value().bth_offset, ip.value().ib_len));
		return !(p.from == 0 && pi.value().hdr.bth.dest_qpn == qb2.qpn && ++n == 3);
	});
	Buffer &src = f.buffer(a, 1 << 16, all_access);
	Buffer &dst = f.buffer(b, 1 << 16, all_access);
	for (Qp *q : {&qb1, &qb2})
		for (int i = 0; i < 3; i++)
			REQUIRE(f.post_recv(*q, i, {sge_of(f, b, dst, 0, 20000)}) == 0);
	for (Qp *q : {&qa1, &qa2})
		for (int i = 0; i < 3; i++)
			REQUIRE(f.post_send(*q, wqe(i, ib::wr_send, 1), {sge_of(f, a, src, 0, 5000)}) == 0);
	std::vector<sroce_cqe> ca, cb;
	REQUIRE(f.wait_cqes(b, 6, cb));
	REQUIRE(f.wait_cqes(a, 6, ca));
	f.sim().run_for(1000000);
	auto qp_read = [](Qp &q) {
		Counters c;
		REQUIRE(sroce_core_qp_read_counters(q.qp, c.v, SROCE_CNT_MAX) == SROCE_CNT_MAX);
		return c;
	};
	Counters A = read(a), B = read(b);
	Counters A1 = qp_read(qa1), A2 = qp_read(qa2), B1 = qp_read(qb1), B2 = qp_read(qb2);
	// Sent by each requester: what the wire carried to its peer QP.
	CHECK(A1[SROCE_CNT_TX_PKTS] == pkts[to_b(qb1)]);
	CHECK(A2[SROCE_CNT_TX_PKTS] == pkts[to_b(qb2)]);
	CHECK(A1[SROCE_CNT_TX_BYTES] == bytes[to_b(qb1)]);
	CHECK(B1[SROCE_CNT_TX_PKTS] == pkts[to_a(qa1)]);
	CHECK(B2[SROCE_CNT_TX_PKTS] == pkts[to_a(qa2)]);
	// Received: the lost packet never reached qb2.
	CHECK(B1[SROCE_CNT_RX_PKTS] == pkts[to_b(qb1)]);
	CHECK(B2[SROCE_CNT_RX_PKTS] == pkts[to_b(qb2)] - 1);
	CHECK(A1[SROCE_CNT_RX_PKTS] == pkts[to_a(qa1)]);
	// The loss is qa2's and qb2's alone.
	CHECK(A1[SROCE_CNT_RETRANS_PKTS] == 0);
	CHECK(A2[SROCE_CNT_RETRANS_PKTS] > 0);
	CHECK(B1[SROCE_CNT_NAK_SENT_PSN_SEQ] == 0);
	CHECK(B2[SROCE_CNT_NAK_SENT_PSN_SEQ] == 1);
	CHECK(A2[SROCE_CNT_NAK_RCVD_PSN_SEQ] == 1);
	// The QPs of a device add up to the device (nothing else was sent).
	for (auto c : {SROCE_CNT_TX_PKTS, SROCE_CNT_TX_BYTES, SROCE_CNT_RX_PKTS, SROCE_CNT_RX_BYTES,
		       SROCE_CNT_RETRANS_PKTS, SROCE_CNT_NAK_RCVD_PSN_SEQ}) {
		CHECK(A1[c] + A2[c] == A[c]);
		CHECK(B1[c] + B2[c] == B[c]);
	}
	// The resource view's retransmissions are the QP counter's.
	sroce_core_qp_view v{};
	sroce_core_qp_snapshot(qa2.qp, &v);
	CHECK(v.retrans_pkts == A2[SROCE_CNT_RETRANS_PKTS]);
}

// Issue 17 item 6: the device's block has a shard per CPU, each on lines of
// its own, and reads sum them exactly, whichever CPU counted.
TEST_CASE("counters: the device's block is per CPU and sums exactly", "[counters][percpu]") {
	struct RestoreCpus {
		~RestoreCpus() { env_host::set_nr_cpus(4); }
	} restore;
	for (int cpus : {1, 2, 3, 8}) {
		CAPTURE(cpus);
		env_host::set_nr_cpus(cpus);
		sroce::ShardedCounterBlock c;
		REQUIRE(!c.init().is_error());
		constexpr size_t line = sroce::ShardedCounterBlock::line;
		for (int i = 0; i < cpus; i++) {
			auto at = reinterpret_cast<uintptr_t>(c.shard_of(i));
			CHECK(at % line == 0);
			for (int j = 0; j < i; j++) {
				auto other = reinterpret_cast<uintptr_t>(c.shard_of(j));
				// both aligned: no line holds counters of two shards
				CHECK((at > other ? at - other : other - at) >= (sizeof(sroce::CounterBlock) + line - 1) / line * line);
			}
		}
		constexpr int rounds = 20000;
		std::vector<std::thread> threads;
		for (int t = 0; t < 4; t++)
			threads.emplace_back([&c, t] {
				env_host::set_cpu(t);
				for (int i = 0; i < rounds; i++) {
					c.inc(SROCE_CNT_RX_PKTS);
					c.inc(SROCE_CNT_RX_BYTES, 3);
				}
			});
		for (auto &th : threads)
			th.join();
		CHECK(c.get(SROCE_CNT_RX_PKTS) == 4u * rounds);
		CHECK(c.get(SROCE_CNT_RX_BYTES) == 12u * rounds);
		u64 v[SROCE_CNT_MAX] = {};
		REQUIRE(c.read(v, SROCE_CNT_MAX) == SROCE_CNT_MAX);
		CHECK(v[SROCE_CNT_RX_PKTS] == 4u * rounds);
		CHECK(v[SROCE_CNT_RX_BYTES] == 12u * rounds);
		CHECK(v[SROCE_CNT_TX_PKTS] == 0);
	}
}

// Packets in flight (issue 17 item 6): per CPU as the counters are; a packet
// may begin on one CPU and end on another, and the sum stays exact.
TEST_CASE("counters: packets in flight are counted per CPU and sum exactly", "[counters][percpu]") {
	struct RestoreCpu {
		~RestoreCpu() { env_host::set_cpu(0); }
	} restore;
	sroce::ShardedCounterBlock c;
	REQUIRE(!c.init().is_error());
	constexpr int rounds = 20000;
	std::vector<std::thread> threads;
	for (int t = 0; t < 4; t++)
		threads.emplace_back([&c, t] {
			for (int i = 0; i < rounds; i++) {
				env_host::set_cpu(t);
				c.in_flight_add(1);
				env_host::set_cpu(t + 1 + i % 3); // freed on another CPU
				c.in_flight_sub(1);
			}
			env_host::set_cpu(t);
			c.in_flight_add(2); // two left in flight per thread
		});
	for (auto &th : threads)
		th.join();
	CHECK(c.in_flight() == 8);
	env_host::set_cpu(3);
	c.in_flight_sub(8);
	CHECK(c.in_flight() == 0);
}

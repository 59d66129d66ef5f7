// Slow start after a retry timeout (Qp::on_timeout_locked): the requester
// goes back to the oldest unacknowledged PSN with param::timeout_window (8)
// packets out, the last asking for an ACK, and each progress doubles that
// up to the whole window. Silence is
// loss or a peer slower than the timeout; resending the whole window at
// every expiry queued it behind the last one at a slow peer, whose ACKs then
// came later still, until retry_cnt expiries in a row found no progress
// (the debug kernel's 85: a 100 KB rc_pingpong to rxe, RETRY_EXC_ERR).
#include <catch2/catch.hpp>

#include <vector>

#include "ib_enums.h"
#include "param.h"
#include "transport_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {
// IBTA 9.7.6.1.3: 4.096 us * 2^timeout.
constexpr uint64_t timeout_ns(unsigned int t) { return 4096ull << t; }

struct Sent {
	uint64_t t;
	bool ack_req;
};

struct Link {
	Fixture f;
	Node &a, &b;
	Qp &qa, &qb;
	Buffer &src, &dst;
	std::vector<Sent> sent; // a's request packets, dropped or not
	Link(uint64_t seed, unsigned int timeout, unsigned int retry)
		: f(seed), a(f.node(0)), b(f.node(1)), qa(f.qp(a, ib::qpt_rc)), qb(f.qp(b, ib::qpt_rc)),
		  src(f.buffer(a, 256 * 1024, all_access)), dst(f.buffer(b, 256 * 1024, all_access)) {
		f.connect(qa, qb, ib::mtu_1024, 0, 0, timeout, retry);
		f.sim().set_tap([this](const sim::WirePacket &p) {
			if (p.from == 0) // IPv4 (20) + UDP (8), then the BTH: AckReq is byte 8's top bit
				sent.push_back({p.time_ns, (p.data[28 + 8] & 0x80) != 0});
		});
	}
	void post_write(uint64_t id, unsigned int len) {
		auto w = wqe(id, ib::wr_rdma_write, 1);
		w.rdma.remote_addr = iova_of(b, dst);
		w.rdma.rkey = f.lkey(dst);
		REQUIRE(f.post_send(qa, w, {sge_of(f, a, src, 0, len)}) == 0);
	}
	unsigned long long counter(sroce_core_counter c) const { return device_counter(a, c); }
	// A 63-packet WRITE whose whole first pass is lost (one timeout, the
	// limit then 31); of what is resent after it, packet `drop_resent`
	// (1-based; 0: none) is lost too. Returns the WRITE's completion.
	sroce_cqe write_after_lost_first_pass(int drop_resent = 0) {
		bool first_pass = true;
		int resent = 0;
		f.sim().set_filter([&](const sim::WirePacket &p) {
			if (p.from != 0)
				return true;
			return !first_pass && ++resent != drop_resent;
		});
		post_write(1, 63 * 1024);
		f.sim().run_for(1000);
		REQUIRE(sent.size() == 63);
		first_pass = false;
		std::vector<sroce_cqe> ca;
		REQUIRE(f.wait_cqes(a, 1, ca));
		f.sim().set_filter(nullptr);
		return ca[0];
	}
	// The packets sent from index `from` on, grouped by send time: the
	// sizes of the bursts.
	std::vector<size_t> bursts(size_t from) const {
		std::vector<size_t> r;
		for (size_t i = from; i < sent.size(); i++) {
			if (i == from || sent[i].t != sent[i - 1].t)
				r.push_back(0);
			r.back()++;
		}
		return r;
	}
};
} // namespace

TEST_CASE("slow start: each expiry resends 8 packets, the last asking for an ACK, not the window",
	  "[transport][slow-start]") {
	static_assert(sroce::param::timeout_window == 8, "the counts below assume it");
	Link l(301, 10, 7);
	const uint64_t T = timeout_ns(10);
	l.f.sim().set_filter([](const sim::WirePacket &p) { return p.from != 0; }); // a dead peer
	const uint64_t t0 = l.f.sim().now();
	l.post_write(1, 32 * 1024); // 32 packets
	std::vector<sroce_cqe> ca;
	REQUIRE(l.f.wait_cqes(l.a, 1, ca));
	CHECK(ca[0].status == ib::wc_retry_exc_err);
	// The message, then 8 packets per expiry but the last (7 x 32 before).
	REQUIRE(l.sent.size() == 32 + 7 * 8);
	CHECK(l.bursts(32) == std::vector<size_t>(7, 8));
	for (size_t i = 32; i < l.sent.size(); i++)
		CHECK(l.sent[i].ack_req == ((i - 32) % 8 == 7));
	// retry_cnt + 1 expiries without progress, as before.
	CHECK(l.f.sim().now() >= t0 + 8 * T);
	CHECK(l.f.sim().now() < t0 + 8 * T + 100000);
	CHECK(l.counter(SROCE_CNT_RETRANS_TIMEOUTS) == 8);
	CHECK(l.counter(SROCE_CNT_RETRANS_PKTS) == 7 * 8);
	CHECK(l.counter(SROCE_CNT_RETRY_EXCEEDED) == 1);
}

TEST_CASE("slow start: each progress doubles what is out up to half of what the timeout found out, then adds one",
	  "[transport][slow-start]") {
	Link l(302, 10, 7);
	CHECK(l.write_after_lost_first_pass().status == ib::wc_success);
	// 8 + 16, then the limit, 63 / 2 = 31, then one more: 32 (the whole
	// message at once before slow start; 8, 16, 32, 7 without a limit).
	REQUIRE(l.bursts(63) == std::vector<size_t>{8, 16, 31, 8});
	for (size_t end : {63 + 8, 63 + 24, 63 + 55, 63 + 63})
		CHECK(l.sent[end - 1].ack_req);
	CHECK(l.counter(SROCE_CNT_RETRANS_TIMEOUTS) == 1);
	CHECK(l.counter(SROCE_CNT_RETRANS_PKTS) == 63);
	// Above the limit the window grows by one per progress: the next
	// WRITE goes out 33 packets at first, not 63 at once.
	size_t before = l.sent.size();
	l.post_write(2, 63 * 1024);
	std::vector<sroce_cqe> cb;
	REQUIRE(l.f.wait_cqes(l.a, 1, cb));
	CHECK(cb[0].status == ib::wc_success);
	auto b2 = l.bursts(before);
	REQUIRE(b2.size() >= 2);
	CHECK(b2[0] == 33);
}

TEST_CASE("slow start: a link slower than the timeout for a window still completes",
	  "[transport][slow-start]") {
	// 100 KB WRITEs over a link where the 32 packets between two AckReqs
	// take about 1.4 timeouts: every expiry used to queue a window of
	// duplicates ahead of the ACK that would show progress, until
	// RETRY_EXC_ERR (1670 packets resent for 4 WRITEs of 98).
	Link l(303, 14, 7);
	sim::LinkConfig slow;
	slow.bits_per_sec = 3000000; // ~2.9 ms a packet, 67 ms timeout
	l.f.sim().set_link(0, 1, slow);
	for (uint64_t id = 1; id <= 4; id++) {
		l.post_write(id, 100000);
		std::vector<sroce_cqe> ca;
		REQUIRE(l.f.wait_cqes(l.a, 1, ca, 60000000000ull));
		CHECK(ca[0].status == ib::wc_success);
	}
	INFO("resent " << l.counter(SROCE_CNT_RETRANS_PKTS) << " timeouts " << l.counter(SROCE_CNT_RETRANS_TIMEOUTS));
	CHECK(l.counter(SROCE_CNT_RETRY_EXCEEDED) == 0);
	// Fewer resent than sent (170 of 392 when written).
	CHECK(l.counter(SROCE_CNT_RETRANS_PKTS) < 4 * 98);
}

TEST_CASE("congestion: a PSN NAK after a timeout raises the limit to its floor", "[transport][slow-start]") {
	Link l(305, 10, 7);
	// The first pass of a 63-packet WRITE is lost (a timeout: limit 31),
	// then the second packet of the 16-packet burst (a NAK: the responder
	// answers, so slow start may go on to nak_window_floor; keeping 31
	// made loss 10% four times as long, transport.md).
	CHECK(l.write_after_lost_first_pass(10).status == ib::wc_success);
	CHECK(device_counter(l.a, SROCE_CNT_NAK_RCVD_PSN_SEQ) == 1);
	sroce_core_qp_view v;
	sroce_core_qp_snapshot(l.qa.qp, &v);
	CHECK(v.window_limit == sroce::param::nak_window_floor);
}

TEST_CASE("slow start: RESET gives the QP its whole window back", "[transport][slow-start]") {
	Link l(304, 10, 7);
	REQUIRE(l.write_after_lost_first_pass().status == ib::wc_success);
	REQUIRE(l.f.modify_state(l.qa, ib::qps_reset) == 0);
	REQUIRE(l.f.modify_state(l.qb, ib::qps_reset) == 0);
	l.f.connect(l.qa, l.qb, ib::mtu_1024, 0, 0, 10, 7);
	size_t before = l.sent.size();
	l.post_write(2, 63 * 1024);
	std::vector<sroce_cqe> cb;
	REQUIRE(l.f.wait_cqes(l.a, 1, cb));
	CHECK(cb[0].status == ib::wc_success);
	CHECK(l.bursts(before) == std::vector<size_t>{63}); // 33, then more, without the reset
}

namespace {
// A receiver that takes every packet through a queue of `queue` packets
// drained at `bits_per_sec` (a slow CPU's receive backlog): four 2 MiB
// WRITEs at rc_pingpong's timeout (14, 67 ms) and retry count.
struct Backlog {
	Fixture f;
	Node &a, &b;
	Qp &qa, &qb;
	Buffer &src, &dst;
	int completed = 0;
	Backlog(uint64_t seed, uint64_t bits_per_sec, unsigned int queue)
		: f(seed), a(f.node(0)), b(f.node(1)), qa(f.qp(a, ib::qpt_rc)), qb(f.qp(b, ib::qpt_rc)),
		  src(f.buffer(a, 2 << 20, all_access)), dst(f.buffer(b, 2 << 20, all_access)) {
		f.connect(qa, qb, ib::mtu_1024, 0, 0, 14, 7);
		sim::LinkConfig slow;
		slow.bits_per_sec = bits_per_sec;
		slow.queue_packets = queue;
		f.sim().set_link(0, 1, slow);
		for (uint64_t id = 1; id <= 4; id++) {
			auto w = wqe(id, ib::wr_rdma_write, 1);
			w.rdma.remote_addr = iova_of(b, dst);
			w.rdma.rkey = f.lkey(dst);
			REQUIRE(f.post_send(qa, w, {sge_of(f, a, src, 0, 2 << 20)}) == 0);
			std::vector<sroce_cqe> ca;
			REQUIRE(f.wait_cqes(a, 1, ca, 600000000000ull));
			if (ca[0].status != ib::wc_success)
				break;
			completed++;
		}
		INFO("resent " << resent() << " timeouts " << device_counter(a, SROCE_CNT_RETRANS_TIMEOUTS) << " probes "
			       << device_counter(a, SROCE_CNT_TAIL_PROBES) << " NAKs "
			       << device_counter(a, SROCE_CNT_NAK_RCVD_PSN_SEQ) << " dropped "
			       << f.sim().link_counters(0, 1).dropped);
		CHECK(completed == 4);
		CHECK(device_counter(a, SROCE_CNT_RETRY_EXCEEDED) == 0);
		std::printf("backlog %llu bit/s, queue %u: %s\n", (unsigned long long)bits_per_sec, queue,
			    Catch::Detail::stringify(resent()).c_str());
		summary = "resent " + std::to_string(resent()) + ", timeouts " +
			  std::to_string(device_counter(a, SROCE_CNT_RETRANS_TIMEOUTS)) + ", probes " +
			  std::to_string(device_counter(a, SROCE_CNT_TAIL_PROBES)) + ", NAKs " +
			  std::to_string(device_counter(a, SROCE_CNT_NAK_RCVD_PSN_SEQ));
	}
	std::string summary;
	unsigned long long resent() const { return device_counter(a, SROCE_CNT_RETRANS_PKTS); }
};
} // namespace

TEST_CASE("congestion: a PSN NAK from a full backlog halves the window", "[transport][slow-start]") {
	// 256 packets into a queue of 100: each resend of the whole window
	// overflowed it again (20592 packets resent for 8192).
	Backlog l(401, 16000000, 100);
	INFO(l.summary);
	CHECK(l.resent() < 4 * 2048 / 2); // 2121 when written
}

TEST_CASE("congestion: a receiver slower than the timeout for a window completes", "[transport][slow-start]") {
	// 4.4 ms a packet: a window takes 1.1 s, 17 timeouts. Every timeout
	// went back to the whole window by doubling: RETRY_EXC_ERR in the
	// first WRITE (80's 2 MiB rc_pingpong on the debug kernel). Now each
	// timeout halves what may be out, until the window fits.
	Backlog l(402, 2000000, 1000);
}

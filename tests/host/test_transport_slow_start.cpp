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
constexpr unsigned int all_access = ib::access::local_write | ib::access::remote_write | ib::access::remote_read |
				    ib::access::remote_atomic;
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

TEST_CASE("slow start: each progress doubles what is out, the last packet of each burst asks for an ACK",
	  "[transport][slow-start]") {
	Link l(302, 10, 7);
	// The whole first pass of a 63-packet WRITE is lost; then the link
	// is clean.
	bool first_pass = true;
	l.f.sim().set_filter([&](const sim::WirePacket &p) { return p.from != 0 || !first_pass; });
	l.post_write(1, 63 * 1024);
	l.f.sim().run_for(1000);
	REQUIRE(l.sent.size() == 63);
	first_pass = false;
	std::vector<sroce_cqe> ca;
	REQUIRE(l.f.wait_cqes(l.a, 1, ca));
	CHECK(ca[0].status == ib::wc_success);
	// 8 + 16 + 32 and the last 7 (the whole message at once before).
	REQUIRE(l.bursts(63) == std::vector<size_t>{8, 16, 32, 7});
	for (size_t end : {63 + 8, 63 + 24, 63 + 56, 63 + 63})
		CHECK(l.sent[end - 1].ack_req);
	CHECK(l.counter(SROCE_CNT_RETRANS_TIMEOUTS) == 1);
	CHECK(l.counter(SROCE_CNT_RETRANS_PKTS) == 63);
	// Back to the whole window: the next WRITE goes out in one burst.
	size_t before = l.sent.size();
	l.post_write(2, 63 * 1024);
	std::vector<sroce_cqe> cb;
	REQUIRE(l.f.wait_cqes(l.a, 1, cb));
	CHECK(cb[0].status == ib::wc_success);
	CHECK(l.bursts(before) == std::vector<size_t>{63});
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

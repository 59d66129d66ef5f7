// The tail-loss probe (kmod/core/retry.cpp). When answers stop, the last
// packets of a burst have nothing behind them to show their loss, and only
// the retry timer was left: 4.096 us * 2^timeout, 268 ms at
// sroce_integrity's 16. A few measured round trips after the last answer
// the requester now sends its newest packet again with AckReq, spending no
// retry. Each case loses one thing that used to cost a timeout; the QPs'
// timeout (20: 4.3 s) is far beyond the exchange, so a recovery by the
// timer shows as time.
#include <catch2/catch.hpp>

#include <cstring>

#include "ib_enums.h"
#include "param.h"
#include "transport_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {
// BTH opcodes (RC) and the AETH syndrome of a PSN sequence NAK.
constexpr unsigned char write_middle = 0x07, write_last = 0x08, read_request = 0x0c, read_response_last = 0x0f,
			read_response_only = 0x10, acknowledge = 0x11, atomic_acknowledge = 0x12;
constexpr unsigned char nak_psn_seq = 0x60;
constexpr unsigned int timeout = 20;
constexpr uint64_t timeout_ns = 4096ull << timeout;
constexpr unsigned int msg = 64 * 1024; // 64 packets of 1024

unsigned char opcode_of(const sim::WirePacket &w) { return w.len > 40 ? w.data[28] : 0; }
uint32_t psn_of(const sim::WirePacket &w) {
	return uint32_t(w.data[37]) << 16 | uint32_t(w.data[38]) << 8 | w.data[39];
}

struct Pair {
	Fixture f;
	Node &a, &b;
	Qp &qa, &qb;
	Buffer &la, &rb;
	explicit Pair(uint64_t seed, uint64_t latency_ns = 20000, unsigned int qp_timeout = timeout)
		: f(seed, 1500), a(f.node(0)), b(f.node(1)), qa(f.qp(a, ib::qpt_rc, 16)), qb(f.qp(b, ib::qpt_rc, 16)),
		  la(f.buffer(a, msg, all_access)), rb(f.buffer(b, msg + 8, all_access)) {
		f.trace_from_env();
		sim::LinkConfig l;
		l.latency_ns = latency_ns;
		f.sim().set_all_links(l);
		f.connect(qa, qb, ib::mtu_1024, 0x100, 0x100, qp_timeout, 7, 7);
	}
	// Loses the first `count` packets from `from` that `match` accepts.
	template <class Match> void lose(const Node &from, unsigned int count, Match match) {
		f.sim().set_filter([this, &from, count, match, lost = 0u](const sim::WirePacket &w) mutable {
			if (w.from != from.id || lost == count || !match(w))
				return true;
			lost++;
			return false;
		});
	}
	// One operation (64 KiB, or 8 bytes for FETCH_ADD); returns its status
	// and checks the bytes, that no timeout was needed, and whether a
	// probe was.
	int run(unsigned char opcode, bool probed = true) {
		for (unsigned int i = 0; i < msg; i++) {
			la.data[i] = (unsigned char)(i * 13 + 5);
			rb.data[i] = (unsigned char)(i * 7 + 1);
		}
		bool atomic = opcode == ib::wr_atomic_fetch_add;
		std::memset(rb.data + msg, 0, 8);
		sroce_wqe w = wqe(1, opcode, 1);
		w.rdma.remote_addr = iova_of(b, rb) + (atomic ? msg : 0);
		w.rdma.rkey = f.lkey(rb);
		w.rdma.compare_add = 5;
		uint64_t t0 = f.sim().now();
		REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, atomic ? 8 : msg)}) == 0);
		std::vector<sroce_cqe> ca;
		REQUIRE(f.wait_cqes(a, 1, ca, 60000000000ull));
		elapsed_ns = f.sim().now() - t0;
		if (atomic) {
			uint64_t orig, now;
			std::memcpy(&orig, la.data, 8);
			std::memcpy(&now, rb.data + msg, 8);
			CHECK(orig == 0);
			CHECK(now == 5); // executed once, its saved result sent again
		} else {
			CHECK(std::memcmp(rb.data, la.data, msg) == 0);
		}
		CHECK(la.guards_intact());
		CHECK(rb.guards_intact());
		CHECK(device_counter(a, SROCE_CNT_RETRANS_TIMEOUTS) == 0);
		CHECK((device_counter(a, SROCE_CNT_TAIL_PROBES) > 0) == probed);
		CHECK(elapsed_ns < timeout_ns / 100);
		return int(ca[0].status);
	}
	uint64_t elapsed_ns = 0;
};
} // namespace

TEST_CASE("tail probe: a lost last packet of a WRITE", "[transport][probe]") {
	Pair p(91);
	p.lose(p.a, 1, [](const sim::WirePacket &w) { return opcode_of(w) == write_last; });
	CHECK(p.run(ib::wr_rdma_write) == ib::wc_success);
}

TEST_CASE("tail probe: a lost final ACK", "[transport][probe]") {
	Pair p(92);
	p.lose(p.b, 1, [](const sim::WirePacket &w) { return opcode_of(w) == acknowledge && psn_of(w) == 0x100 + 63; });
	CHECK(p.run(ib::wr_rdma_write) == ib::wc_success);
	CHECK(device_counter(p.b, SROCE_CNT_DUPLICATE_REQ) >= 1); // the probe, ACKed again
}

TEST_CASE("tail probe: a lost ATOMIC ACK brings the saved result, not a second execution", "[transport][probe]") {
	Pair p(93);
	p.lose(p.b, 1, [](const sim::WirePacket &w) { return opcode_of(w) == atomic_acknowledge; });
	CHECK(p.run(ib::wr_atomic_fetch_add) == ib::wc_success);
}

TEST_CASE("tail probe: a lost READ request", "[transport][probe]") {
	Pair p(94);
	p.lose(p.a, 1, [](const sim::WirePacket &w) { return opcode_of(w) == read_request; });
	CHECK(p.run(ib::wr_rdma_read) == ib::wc_success);
}

TEST_CASE("tail probe: a lost last READ response", "[transport][probe]") {
	Pair p(95);
	p.lose(p.b, 1, [](const sim::WirePacket &w) { return opcode_of(w) == read_response_last; });
	CHECK(p.run(ib::wr_rdma_read) == ib::wc_success);
}

TEST_CASE("tail probe: a READ response gap, lost again when asked for, is asked for after the probe",
	  "[transport][probe]") {
	Pair p(96);
	// The 5th response twice: the gap's resend is lost too, and nothing
	// behind it shows that.
	p.lose(p.b, 2, [](const sim::WirePacket &w) { return opcode_of(w) != acknowledge && psn_of(w) == 0x100 + 4; });
	CHECK(p.run(ib::wr_rdma_read) == ib::wc_success);
	CHECK(device_counter(p.a, SROCE_CNT_READ_GAP_RESENDS) == 2);
}

TEST_CASE("tail probe: a lost PSN sequence NAK: the probe is NAKed again", "[transport][probe]") {
	Pair p(97);
	unsigned int middles = 0, naks = 0;
	p.f.sim().set_filter([&](const sim::WirePacket &w) {
		if (w.from == p.a.id && opcode_of(w) == write_middle && ++middles == 10)
			return false;
		if (w.from == p.b.id && opcode_of(w) == acknowledge && w.data[40] == nak_psn_seq && naks++ == 0)
			return false;
		return true;
	});
	CHECK(p.run(ib::wr_rdma_write) == ib::wc_success);
	CHECK(device_counter(p.b, SROCE_CNT_NAK_SENT_PSN_SEQ) == 2);
}

TEST_CASE("tail probe: a copy the network duplicated is no probe: one NAK per gap", "[transport][probe]") {
	Pair p(98);
	// The 10th packet lost, each of the others delivered twice at once: the
	// repeats beyond the gap come within the same microsecond.
	unsigned int middles = 0;
	p.f.sim().set_filter([&](const sim::WirePacket &w) {
		return !(w.from == p.a.id && opcode_of(w) == write_middle && ++middles == 10);
	});
	sim::LinkConfig l;
	l.latency_ns = 20000;
	l.duplicate = 1.0;
	p.f.sim().set_all_links(l);
	REQUIRE(p.run(ib::wr_rdma_write, false) == ib::wc_success);
	CHECK(device_counter(p.b, SROCE_CNT_NAK_SENT_PSN_SEQ) == 1);
}

TEST_CASE("tail probe: the round trip is measured, and a dead peer still ends in RETRY_EXC_ERR on time",
	  "[transport][probe]") {
	Pair p(99, 50000);
	CHECK(p.run(ib::wr_rdma_write, false) == ib::wc_success); // no loss, no probe
	sroce_core_qp_view v{};
	sroce_core_qp_snapshot(p.qa.qp, &v);
	CHECK(v.srtt_us >= 100); // two 50 us hops
	CHECK(v.srtt_us < 200);

	// The peer goes silent: probes back off, the IBTA timeout stays the
	// bound, and retry_cnt (7) timeouts after the first end it.
	p.f.sim().set_filter([&](const sim::WirePacket &w) { return w.from != p.b.id; });
	sroce_wqe w = wqe(2, ib::wr_rdma_write, 1);
	w.rdma.remote_addr = iova_of(p.b, p.rb);
	w.rdma.rkey = p.f.lkey(p.rb);
	uint64_t t0 = p.f.sim().now();
	REQUIRE(p.f.post_send(p.qa, w, {sge_of(p.f, p.a, p.la, 0, 4096)}) == 0);
	std::vector<sroce_cqe> ca;
	REQUIRE(p.f.wait_cqes(p.a, 1, ca, 20 * timeout_ns));
	CHECK(int(ca[0].status) == ib::wc_retry_exc_err);
	uint64_t took = p.f.sim().now() - t0;
	CHECK(took >= 8 * timeout_ns);
	CHECK(took < 8 * timeout_ns + timeout_ns / 10);
	CHECK(device_counter(p.a, SROCE_CNT_RETRANS_TIMEOUTS) == 8);
	unsigned long long probes = device_counter(p.a, SROCE_CNT_TAIL_PROBES);
	CHECK(probes >= 8);
	CHECK(probes <= 8 * (sroce::param::max_probe_backoff + 1));
}

namespace {
// Watches one node's request packets (SEND and WRITE opcodes) and counts
// each that is more than one PSN beyond the highest sent before it: a gap a
// capture would show on the sender's side of a loss.
struct GapWatch {
	uint32_t high = 0;
	bool first = true;
	unsigned int jumps = 0;
	void see(const sim::WirePacket &w, int from) {
		if (w.from != from || w.len <= 40 || opcode_of(w) > write_last)
			return;
		uint32_t d = (psn_of(w) - high) & 0xffffff;
		if (!first && d > 1 && d < 0x800000)
			jumps++;
		if (first || d < 0x800000)
			high = psn_of(w);
		first = false;
	}
};
} // namespace

TEST_CASE("tail probe: what a requester sends never skips a PSN", "[transport][probe]") {
	// 76-counters: ibv_rc_pingpong, 4 KiB SENDs at MTU 1024 both ways, 5%
	// of one direction's requests lost (its ACKs spared).
	for (uint64_t seed = 100; seed < 120; seed++) {
		INFO("seed " << seed);
		Pair p(seed);
		sim::LinkConfig l;
		l.latency_ns = 50000;
		p.f.sim().set_all_links(l);
		GapWatch ga, gb;
		uint64_t r = seed;
		p.f.sim().set_filter([&](const sim::WirePacket &w) {
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			return !(w.from == p.a.id && opcode_of(w) != acknowledge && (r >> 33) % 100 < 5);
		});
		p.f.sim().set_tap([&](const sim::WirePacket &w) {
			ga.see(w, p.a.id);
			gb.see(w, p.b.id);
		});
		for (int i = 0; i < 50; i++) {
			REQUIRE(p.f.post_recv(p.qb, 1000 + i, {sge_of(p.f, p.b, p.rb, 0, 4096)}) == 0);
			REQUIRE(p.f.post_recv(p.qa, 2000 + i, {sge_of(p.f, p.a, p.la, 4096, 4096)}) == 0);
			REQUIRE(p.f.post_send(p.qa, wqe(10 + i, ib::wr_send, 1), {sge_of(p.f, p.a, p.la, 0, 4096)}) == 0);
			std::vector<sroce_cqe> cb;
			REQUIRE(p.f.wait_cqes(p.b, 1, cb, 60000000000ull));
			REQUIRE(p.f.post_send(p.qb, wqe(30 + i, ib::wr_send, 1), {sge_of(p.f, p.b, p.rb, 4096, 4096)}) == 0);
			std::vector<sroce_cqe> ca;
			REQUIRE(p.f.wait_cqes(p.a, 2, ca, 60000000000ull));
			for (auto &c : ca)
				REQUIRE(int(c.status) == ib::wc_success);
			cb.clear();
			REQUIRE(p.f.wait_cqes(p.b, 1, cb, 60000000000ull));
		}
		CHECK(ga.jumps == 0);
		CHECK(gb.jumps == 0);
	}
}

TEST_CASE("tail probe: a send after an answered one is not probed on the old deadline", "[transport][probe]") {
	// The first WRITE arms the timer; its ACK leaves nothing outstanding.
	// A second WRITE just before the first one's probe deadline must get
	// its own: a probe then would resend a packet still on its way (and,
	// from another CPU, put it on the wire first: 76-counters saw gaps).
	Pair p(101);
	auto write = [&](uint64_t id) {
		sroce_wqe w = wqe(id, ib::wr_rdma_write, 1);
		w.rdma.remote_addr = iova_of(p.b, p.rb);
		w.rdma.rkey = p.f.lkey(p.rb);
		REQUIRE(p.f.post_send(p.qa, w, {sge_of(p.f, p.a, p.la, 0, 1024)}) == 0);
	};
	uint64_t t0 = p.f.sim().now();
	write(1);
	std::vector<sroce_cqe> ca;
	REQUIRE(p.f.wait_cqes(p.a, 1, ca));
	// Up to 10 us before the first send's probe deadline (10 ms: no RTT
	// sample yet at its send), then the second WRITE, and no loss at all.
	p.f.sim().run_for(t0 + sroce::param::probe_initial_ns - 10000 - p.f.sim().now());
	write(2);
	ca.clear();
	REQUIRE(p.f.wait_cqes(p.a, 1, ca));
	p.f.sim().run_for(50000000);
	CHECK(device_counter(p.a, SROCE_CNT_TAIL_PROBES) == 0);
	CHECK(device_counter(p.a, SROCE_CNT_RETRANS_PKTS) == 0);
}

TEST_CASE("tail probe: a timer that fires early probes nothing on a clean link", "[transport][probe]") {
	// The kernel's timer_list fires anywhere in the last tick (4 ms at
	// HZ=250): a probe armed 1 ms after the last answer could fire at once.
	// 76-counters saw 4-12 needless probes on a clean veth. The probe waits
	// out its delay from the newest send or answer however early it wakes.
	// Each 64 KiB WRITE goes out at once and its ACKs (one per 32 packets)
	// come as a 100 Mbit/s link delivers it: long after the send, a little
	// apart from each other.
	Pair p(102, 100000);
	sim::LinkConfig slow;
	slow.latency_ns = 100000;
	slow.bits_per_sec = 100000000;
	p.f.sim().set_link(0, 1, slow);
	p.f.sim().set_timer_tick(4000000);
	for (int i = 0; i < 30; i++) {
		sroce_wqe w = wqe(i, ib::wr_rdma_write, 1);
		w.rdma.remote_addr = iova_of(p.b, p.rb);
		w.rdma.rkey = p.f.lkey(p.rb);
		REQUIRE(p.f.post_send(p.qa, w, {sge_of(p.f, p.a, p.la, 0, msg)}) == 0);
		std::vector<sroce_cqe> ca;
		REQUIRE(p.f.wait_cqes(p.a, 1, ca));
		REQUIRE(int(ca[0].status) == ib::wc_success);
	}
	CHECK(device_counter(p.a, SROCE_CNT_TAIL_PROBES) == 0);
	CHECK(device_counter(p.a, SROCE_CNT_RETRANS_PKTS) == 0);
}

TEST_CASE("tail probe: a resend that fails flushes the SQ once, and the next post completes at once",
	  "[transport][probe]") {
	// A probe keeps where sending stood and puts it back after. A resend
	// whose gather fails (its MR deregistered while the WQE was out) moves
	// the QP to error, and the flush moves the SQ on to its producer. Put
	// back over that, the fetch index fell behind the flushed one and the
	// next flush walked 2^32 WQEs under the QP lock. The peer is silent; a
	// READ keeps a fenced WRITE waiting, so a fourth WQE is not fetched.
	Pair p(103);
	Buffer &dst = p.f.buffer(p.a, 4096, all_access);
	p.f.sim().set_filter([&](const sim::WirePacket &w) { return w.from != p.b.id; });
	auto post = [&](uint64_t id, unsigned char opcode, Buffer &from, unsigned short flags) {
		sroce_wqe w = wqe(id, opcode, 1, SROCE_WQE_SIGNALED | flags);
		w.rdma.remote_addr = iova_of(p.b, p.rb);
		w.rdma.rkey = p.f.lkey(p.rb);
		REQUIRE(p.f.post_send(p.qa, w, {sge_of(p.f, p.a, from, 0, 1024)}) == 0);
	};
	post(1, ib::wr_rdma_read, dst, 0);
	post(2, ib::wr_rdma_write, p.la, 0);
	post(3, ib::wr_rdma_write, dst, SROCE_WQE_FENCE);
	post(4, ib::wr_rdma_write, dst, 0);
	p.f.sim().run_for(100000); // the READ and WRITE 2 on the wire
	p.f.dereg(p.la);
	std::vector<sroce_cqe> ca;
	REQUIRE(p.f.wait_cqes(p.a, 4, ca, timeout_ns / 2)); // the probe's, long before the timeout
	CHECK(device_counter(p.a, SROCE_CNT_TAIL_PROBES) == 1);
	CHECK(device_counter(p.a, SROCE_CNT_RETRANS_TIMEOUTS) == 0);
	for (auto &c : ca) {
		INFO("wr_id " << c.wr_id);
		if (c.wr_id == 2)
			CHECK(int(c.status) == ib::wc_loc_prot_err);
		else
			CHECK(int(c.status) == ib::wc_wr_flush_err);
	}
	sroce_core_qp_view v{};
	sroce_core_qp_snapshot(p.qa.qp, &v);
	REQUIRE(v.sq_wqes == 0);
	post(5, ib::wr_rdma_write, dst, 0);
	ca.clear();
	REQUIRE(p.f.wait_cqes(p.a, 1, ca, 1000000));
	CHECK(ca.size() == 1);
	CHECK(ca[0].wr_id == 5);
	CHECK(int(ca[0].status) == ib::wc_wr_flush_err);
	sroce_core_qp_snapshot(p.qa.qp, &v);
	CHECK(v.sq_wqes == 0);
}

TEST_CASE("tail probe: a READ asked for again and lost again is asked for after the probe", "[transport][probe]") {
	// The READ's response is lost and the WRITE behind it ACKed: the READ
	// is asked for again, once per burst of answers. Its response is lost
	// again; the probe's answer, an ACK beyond the READ again, must ask
	// once more, or only the timeout would.
	Pair p(104);
	p.lose(p.b, 2, [](const sim::WirePacket &w) { return opcode_of(w) == read_response_only; });
	auto post = [&](uint64_t id, unsigned char opcode, size_t off) {
		sroce_wqe w = wqe(id, opcode, 1);
		w.rdma.remote_addr = iova_of(p.b, p.rb) + off;
		w.rdma.rkey = p.f.lkey(p.rb);
		REQUIRE(p.f.post_send(p.qa, w, {sge_of(p.f, p.a, p.la, off, 1024)}) == 0);
	};
	post(1, ib::wr_rdma_read, 0);
	post(2, ib::wr_rdma_write, 4096);
	std::vector<sroce_cqe> ca;
	REQUIRE(p.f.wait_cqes(p.a, 2, ca, timeout_ns * 2));
	CHECK(int(ca[0].status) == ib::wc_success);
	CHECK(int(ca[1].status) == ib::wc_success);
	CHECK(std::memcmp(p.la.data, p.rb.data, 1024) == 0);
	CHECK(device_counter(p.a, SROCE_CNT_TAIL_PROBES) >= 1);
	CHECK(device_counter(p.a, SROCE_CNT_RETRANS_TIMEOUTS) == 0);
}

TEST_CASE("tail probe: probes answered with nothing moving do not hold off RETRY_EXC_ERR", "[transport][probe]") {
	// Every READ response is lost; the WRITE behind the READ is ACKed each
	// time it or a probe comes. Each answer restarts the timeout (as rxe),
	// and at timeout 24 (69 s) the longest probe wait (65 s) came first:
	// the probes went on for ever and the READ never failed.
	constexpr unsigned int t24 = 24;
	constexpr uint64_t t24_ns = 4096ull << t24;
	Pair p(106, 20000, t24);
	p.f.sim().set_filter([&](const sim::WirePacket &w) { return opcode_of(w) != read_response_only; });
	for (uint64_t id = 1; id <= 2; id++) {
		sroce_wqe w = wqe(id, id == 1 ? ib::wr_rdma_read : ib::wr_rdma_write, 1);
		w.rdma.remote_addr = iova_of(p.b, p.rb);
		w.rdma.rkey = p.f.lkey(p.rb);
		REQUIRE(p.f.post_send(p.qa, w, {sge_of(p.f, p.a, p.la, id * 4096, 1024)}) == 0);
	}
	std::vector<sroce_cqe> ca;
	REQUIRE(p.f.wait_cqes(p.a, 2, ca, 20 * t24_ns));
	CHECK(int(ca[0].status) == ib::wc_retry_exc_err);
	CHECK(device_counter(p.a, SROCE_CNT_RETRANS_TIMEOUTS) == 8);
	CHECK(device_counter(p.a, SROCE_CNT_TAIL_PROBES) <= sroce::param::max_probe_backoff + 1);
}

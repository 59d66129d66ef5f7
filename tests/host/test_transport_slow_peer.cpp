// A peer slower than the ACK timeout: responses arrive after the requester
// has timed out and gone back to resend older packets. An ACK for a PSN
// sent before that rewind still acknowledges it (IBTA 9.7.5.2: any PSN
// between the oldest unacknowledged and the newest sent), and is forward
// progress that gives the retry counter back. The requester used to judge
// responses against its resend point, dropped those ACKs as "ahead of
// anything sent", and on a slow host (make test-debug's kernel, a loaded
// TCG guest) spent its retries until RETRY_EXC_ERR: 85-rxe-interop's
// 100 KB rc_pingpong to rxe, 82-netem's loss runs.
#include <catch2/catch.hpp>

#include <cstring>

#include "device.h"
#include "ib_enums.h"
#include "transport_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {
constexpr unsigned int all_access = ib::access::local_write | ib::access::remote_write | ib::access::remote_read |
				    ib::access::remote_atomic;
}

TEST_CASE("completer: ACKs that arrive after a timeout's rewind still count", "[transport][slow-peer]") {
	Fixture f(77);
	sim::LinkConfig slow;
	// 100 Mbit/s: a 128-packet message takes about 11 ms to cross, ten
	// times the ACK timeout below.
	slow.bits_per_sec = 100000000;
	f.sim().set_all_links(slow);
	f.trace_from_env();
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc, 16), &qb = f.qp(b, ib::qpt_rc, 16);
	constexpr unsigned int msg = 128 * 1024;
	// timeout 8: 1 ms; retry_cnt 3.
	f.connect(qa, qb, ib::mtu_1024, 0x100, 0x100, 8, 3, 7);
	Buffer &la = f.buffer(a, 4 * msg, all_access);
	Buffer &rb = f.buffer(b, 4 * msg, all_access);
	for (unsigned int i = 0; i < 4 * msg; i++)
		la.data[i] = (unsigned char)(i * 13 + 5);
	// Four 128 KiB operations at once, every completion a success, every
	// byte where it belongs.
	auto run = [&](unsigned char opcode) {
		for (int i = 0; i < 4; i++) {
			sroce_wqe w = wqe(i, opcode, 1);
			w.rdma.remote_addr = iova_of(b, rb) + u64(i) * msg;
			w.rdma.rkey = f.lkey(rb);
			REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, i * msg, msg)}) == 0);
		}
		std::vector<sroce_cqe> ca;
		REQUIRE(f.wait_cqes(a, 4, ca, 60000000000ull));
		for (auto &c : ca)
			CHECK(int(c.status) == ib::wc_success);
		CHECK(std::memcmp(rb.data, la.data, 4 * msg) == 0);
	};
	SECTION("WRITEs") { run(ib::wr_rdma_write); }
	SECTION("READs") {
		for (unsigned int i = 0; i < 4 * msg; i++)
			rb.data[i] = (unsigned char)(i * 7 + 1);
		std::memset(la.data, 0, 4 * msg);
		run(ib::wr_rdma_read);
	}
	CHECK(la.guards_intact());
	CHECK(rb.guards_intact());
	(void)qb;
}

// The other cause of silence: loss. A lost packet makes the responder drop
// everything after it (and its NAK may be lost too). After the timeout the
// requester must send the whole gap again, not one packet per timeout:
// resuming where the timeout stopped, past packets the responder had
// dropped, left a gap that only further timeouts filled, one packet each.
TEST_CASE("completer: after a timeout, what the responder dropped is sent again", "[transport][slow-peer]") {
	Fixture f(78);
	f.trace_from_env();
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc, 16), &qb = f.qp(b, ib::qpt_rc, 16);
	constexpr unsigned int msg = 64 * 1024;
	// timeout 8: 1 ms; retry_cnt 7.
	f.connect(qa, qb, ib::mtu_1024, 0x100, 0x100, 8, 7, 7);
	Buffer &la = f.buffer(a, msg, all_access);
	Buffer &rb = f.buffer(b, msg, all_access);
	for (unsigned int i = 0; i < msg; i++)
		la.data[i] = (unsigned char)(i * 13 + 5);
	// The sixth request packet is lost once, and so is everything the
	// responder says until the first timeout has passed (its NAK too).
	bool lost_one = false;
	uint64_t t0 = 0;
	unsigned int from_a = 0;
	f.sim().set_filter([&](const sim::WirePacket &p) {
		if (!t0)
			t0 = p.time_ns;
		if (p.from == a.id)
			return !(from_a++ == 5 && !lost_one && (lost_one = true));
		return p.time_ns > t0 + 1500000;
	});
	sroce_wqe w = wqe(1, ib::wr_rdma_write, 1);
	w.rdma.remote_addr = iova_of(b, rb);
	w.rdma.rkey = f.lkey(rb);
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, msg)}) == 0);
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(a, 1, ca, 60000000000ull));
	CHECK(int(ca[0].status) == ib::wc_success);
	CHECK(std::memcmp(rb.data, la.data, msg) == 0);
	// One timeout (maybe two: the probe goes out before the ACKs flow
	// again), not one per dropped packet.
	auto timeouts = reinterpret_cast<sroce::Device *>(a.dev)->counters().get(SROCE_CNT_RETRANS_TIMEOUTS);
	INFO("timeouts " << timeouts);
	CHECK(timeouts <= 2);
	(void)qb;
}

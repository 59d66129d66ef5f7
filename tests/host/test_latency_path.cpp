// The latency path in virtual time: a signaled RC WRITE or SEND completes
// one round trip after it is posted. The request asks for an ACK, the
// responder sends it the instant the request arrives and the completer
// writes the CQE the instant the ACK arrives: nothing waits for the retry
// timer, an RNR wait or ACK coalescing. (Virtual time of the simulator,
// not wall-clock speed: a deferral to any timer shows as microseconds or
// milliseconds more, whatever the machine.)
#include <catch2/catch.hpp>

#include "ib_enums.h"
#include "transport_fixture.h"

#include "packet.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {
constexpr unsigned int rw_access = ib::access::local_write | ib::access::remote_write | ib::access::remote_read;
constexpr uint64_t link_ns = 1000; // LinkConfig's default latency

uint64_t iova_of(Node &n, Buffer &b) {
	for (size_t i = 0; i < n.bufs.size(); i++)
		if (n.bufs[i].get() == &b)
			return 0x10000000ull + 0x100000ull * i;
	return 0;
}

struct Seen {
	uint64_t time_ns;
	int from;
	unsigned char opcode;
	bool ack_req;
};
} // namespace

TEST_CASE("latency path: RC WRITE and SEND ping-pong, one round trip per operation", "[transport][latency]") {
	Fixture f(11);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_4096); // retry timeout 10: 4.2 ms
	Buffer &ba = f.buffer(a, 4096, rw_access);
	Buffer &bb = f.buffer(b, 4096, rw_access);
	std::vector<Seen> seen;
	f.sim().set_tap([&](const sim::WirePacket &p) {
		auto ip = ib::parse_ip_udp(ktl::Span<const unsigned char>(p.data, p.len));
		REQUIRE(!ip.is_error());
		auto pi = ib::parse_ib(ktl::Span<const unsigned char>(p.data + ip.value().bth_offset, ip.value().ib_len));
		REQUIRE(!pi.is_error());
		seen.push_back({p.time_ns, p.from, pi.value().hdr.bth.opcode, pi.value().hdr.bth.ack_req});
	});

	// One signaled 8-byte operation from -> to; returns the virtual time
	// from the post to the sender's CQE.
	auto op = [&](Qp &from, Node &fn, Buffer &src, Qp &to, Node &tn, Buffer &dst, unsigned char opcode, int i) {
		if (opcode == ib::wr_send)
			REQUIRE(f.post_recv(to, 100 + i, {sroce_sge{iova_of(tn, dst), 8, f.lkey(dst)}}) == 0);
		sroce_wqe w = wqe(i, opcode, 1);
		w.rdma.remote_addr = iova_of(tn, dst);
		w.rdma.rkey = f.lkey(dst);
		seen.clear();
		uint64_t t0 = f.sim().now();
		REQUIRE(f.post_send(from, w, {sroce_sge{iova_of(fn, src), 8, f.lkey(src)}}) == 0);
		std::vector<sroce_cqe> c;
		REQUIRE(f.wait_cqes(fn, 1, c, 100000000ull));
		uint64_t dt = f.sim().now() - t0;
		CHECK(c[0].status == ib::wc_success);
		CHECK(c[0].wr_id == uint64_t(i));
		// Exactly the request (asking for the ACK) and the ACK, the ACK
		// sent when the request arrived.
		REQUIRE(seen.size() == 2);
		CHECK(seen[0].ack_req);
		CHECK(seen[1].opcode == (ib::op::rc | ib::op::acknowledge));
		CHECK(seen[1].time_ns == seen[0].time_ns + link_ns);
		if (opcode == ib::wr_send) {
			std::vector<sroce_cqe> r;
			REQUIRE(f.wait_cqes(tn, 1, r, 1000000ull));
			CHECK(r[0].wr_id == uint64_t(100 + i));
		}
		return dt;
	};

	for (unsigned char opcode : {ib::wr_rdma_write, ib::wr_send}) {
		for (int i = 0; i < 20; i++) {
			INFO("opcode " << int(opcode) << " exchange " << i);
			// A round trip is two link latencies; allow one more for the
			// simulator's scheduling, far below any timer (10 us RNR
			// floor, 4.2 ms retry).
			CHECK(op(qa, a, ba, qb, b, bb, opcode, 2 * i) <= 3 * link_ns);
			CHECK(op(qb, b, bb, qa, a, ba, opcode, 2 * i + 1) <= 3 * link_ns);
		}
	}
}

// The IPv4 ID of every packet is its PSN's low 16 bits (tx.cpp): what UDP
// GSO gives the segments of one skb (an ID one more than the last), so a
// train of consecutive packets segments into the packets the core built,
// ICRC included.
#include <catch2/catch.hpp>

#include "ib_enums.h"
#include "ktl/byteorder.h"
#include "transport_fixture.h"

#include <vector>

using namespace tfx;
namespace ib = sroce::ib;

TEST_CASE("tx: the IPv4 ID is the PSN's low 16 bits, requests and responses alike", "[tx]") {
	Fixture f(61);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	// Start near the 16-bit wrap: IDs wrap with the PSN's low bits.
	f.connect(qa, qb, ib::mtu_1024, 0xfffc, 0x2fffe);
	constexpr unsigned int rw = ib::access::local_write | ib::access::remote_write | ib::access::remote_read;
	Buffer &la = f.buffer(a, 16384, rw);
	Buffer &rb = f.buffer(b, 16384, rw);
	struct Seen {
		unsigned int psn, id;
		bool response;
	};
	std::vector<Seen> seen;
	f.sim().set_tap([&seen](const sim::WirePacket &p) {
		if (p.dropped)
			return;
		auto ip = ib::parse_ip_udp(ktl::Span<const u8>(p.data, p.len));
		REQUIRE(!ip.is_error());
		REQUIRE(p.data[0] >> 4 == 4);
		auto pi = ib::parse_ib(ktl::Span<const u8>(p.data + ip.value().bth_offset, ip.value().ib_len));
		REQUIRE(!pi.is_error());
		seen.push_back({pi.value().hdr.bth.psn, ktl::get_be16(p.data + 4),
				(pi.value().flags & ib::op_response) != 0});
	});
	// A 12 KiB WRITE (12 packets across the wrap), then a 12 KiB READ.
	auto w = wqe(1, ib::wr_rdma_write, 1);
	w.rdma.remote_addr = iova_of(b, rb);
	w.rdma.rkey = f.lkey(rb);
	complete_one(f, qa, w, {sge_of(f, a, la, 0, 12288)});
	auto r = wqe(2, ib::wr_rdma_read, 1);
	r.rdma.remote_addr = iova_of(b, rb);
	r.rdma.rkey = f.lkey(rb);
	complete_one(f, qa, r, {sge_of(f, a, la, 0, 12288)});
	unsigned int requests = 0, responses = 0;
	for (const auto &s : seen) {
		CAPTURE(s.psn, s.response);
		CHECK(s.id == (s.psn & 0xffff));
		(s.response ? responses : requests)++;
	}
	CHECK(requests >= 13);  // 12 WRITE packets, the READ request
	CHECK(responses >= 12); // the READ's 12 responses, and ACKs
}

// The IPv4 ID of every packet is its PSN's low 16 bits (tx.cpp): what UDP
// GSO gives the segments of one skb (an ID one more than the last), so a
// train of consecutive packets segments into the packets the core built,
// ICRC included.
#include <catch2/catch.hpp>

#include "ib_enums.h"
#include "ktl/byteorder.h"
#include "transport_fixture.h"

#include <algorithm>
#include <cstring>
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

// A resent PSN's ID has its low bit flipped: no two resent packets are
// consecutive, so resends never travel in trains, and a path that mangles
// trains still carries them (transport.md, "Packet trains").
TEST_CASE("tx: a resent request's IPv4 ID breaks the sequence, so resends never form trains", "[tx]") {
	Fixture f(62);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024, 0x100, 0x500);
	constexpr unsigned int rw = ib::access::local_write | ib::access::remote_write | ib::access::remote_read;
	Buffer &la = f.buffer(a, 16384, rw);
	Buffer &rb = f.buffer(b, 16384, rw);
	std::vector<std::pair<unsigned int, unsigned int>> sent; // (PSN, ID) of a's requests
	bool dropped = false;
	f.sim().set_filter([&](const sim::WirePacket &p) {
		if (p.from != a.id)
			return true;
		auto ip = ib::parse_ip_udp(ktl::Span<const u8>(p.data, p.len));
		REQUIRE(!ip.is_error());
		auto pi = ib::parse_ib(ktl::Span<const u8>(p.data + ip.value().bth_offset, ip.value().ib_len));
		REQUIRE(!pi.is_error());
		unsigned int psn = pi.value().hdr.bth.psn;
		sent.push_back({psn, ktl::get_be16(p.data + 4)});
		if (psn == 0x103 && !dropped) { // the 4th packet, once: go-back-N resends from it
			dropped = true;
			return false;
		}
		return true;
	});
	auto w = wqe(1, ib::wr_rdma_write, 1);
	w.rdma.remote_addr = iova_of(b, rb);
	w.rdma.rkey = f.lkey(rb);
	sroce_cqe c = complete_one(f, qa, w, {sge_of(f, a, la, 0, 12288)});
	CHECK(int(c.status) == ib::wc_success);
	CHECK(std::memcmp(rb.data, la.data, 12288) == 0);
	std::vector<unsigned int> psns_seen;
	std::vector<bool> was_resend;
	unsigned int resends = 0, resent_runs = 0;
	for (size_t i = 0; i < sent.size(); i++) {
		auto [psn, id] = sent[i];
		bool resend = std::find(psns_seen.begin(), psns_seen.end(), psn) != psns_seen.end();
		CAPTURE(i, psn, resend);
		CHECK(id == ((psn ^ (resend ? 1u : 0u)) & 0xffff));
		// Two resent packets in a row never carry consecutive IDs.
		if (resend && i && was_resend[i - 1] && psn == sent[i - 1].first + 1) {
			resent_runs++;
			CHECK(id != ((sent[i - 1].second + 1) & 0xffff));
		}
		resends += resend;
		psns_seen.push_back(psn);
		was_resend.push_back(resend);
	}
	CHECK(resent_runs >= 1); // go-back-N resent consecutive PSNs
	CHECK(dropped);
	CHECK(resends >= 1);
}

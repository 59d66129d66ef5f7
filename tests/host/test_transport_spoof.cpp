// Off-path injection: a third host that knows a connected QP's number and
// PSNs (both shown by `rdma res`) and computes valid ICRCs forges requests,
// ACKs and NAKs. Every forgery is dropped and counted, nothing completes
// falsely, no byte changes, and the QP goes on working (issue 12, item 1).
#include <catch2/catch.hpp>

#include <cstring>

#include "ib_enums.h"
#include "transport_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {

// The IPv4-mapped address of simulated node n (10.0.0.n+1).
ib::IpUdp addr(int from, int to) {
	ib::IpUdp ip;
	ip.ip_version = 4;
	const unsigned char prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	std::memcpy(ip.src, prefix, 12);
	std::memcpy(ip.dst, prefix, 12);
	const unsigned char s[4] = {10, 0, 0, (unsigned char)(from + 1)}, d[4] = {10, 0, 0, (unsigned char)(to + 1)};
	std::memcpy(ip.src + 12, s, 4);
	std::memcpy(ip.dst + 12, d, 4);
	ip.sport = 0xc0de;
	return ip;
}

// An RC WRITE_ONLY of 64 bytes at the start of b, asking for an ACK.
ib::Headers write64(Fixture &f, Node &b, Buffer &rb, unsigned short pkey = ib::default_pkey) {
	ib::Headers wr;
	wr.bth.opcode = ib::op::rc + ib::op::write_only;
	wr.bth.pkey = pkey;
	wr.bth.ack_req = true;
	wr.reth.va = iova_of(b, rb);
	wr.reth.rkey = f.lkey(rb);
	wr.reth.length = 64;
	return wr;
}

} // namespace

TEST_CASE("transport: off-path forgeries are dropped and counted", "[transport][hostile][spoof]") {
	Fixture f(12);
	Node &a = f.node(0), &b = f.node(1);
	Node &evil = f.add_node(9000); // 10.0.0.3, on the same wire
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	Buffer &la = f.buffer(a, 8192, all_access);
	Buffer &rb = f.buffer(b, 8192, all_access);
	std::vector<unsigned char> before(rb.data, rb.data + rb.len);
	std::vector<sroce_cqe> ca, cb;
	bool block_a = false; // drop a's packets: its WQEs stay unacknowledged
	int from_b = 0;       // packets b sent
	f.sim().set_filter([&](const sim::WirePacket &p) { return !(block_a && p.from == a.id); });
	f.sim().set_tap([&](const sim::WirePacket &p) { from_b += p.from == b.id; });
	const ib::IpUdp spoof = addr(evil.id, b.id), spoof_a = addr(evil.id, a.id);

	SECTION("a forged SEND delivers nothing; the real one does") {
		REQUIRE(f.post_recv(qb, 7, {sge_of(f, b, rb, 0, 4096)}) == 0);
		ib::Headers h;
		h.bth.opcode = ib::op::rc + ib::op::send_only;
		h.bth.ack_req = true;
		auto pkt = make_packet(f, qb.qpn, h, 64, true, &spoof);
		f.sim().inject(evil.id, b.id, pkt.data(), (unsigned)pkt.size());
		f.sim().run_for(1000000);
		CHECK(f.poll(b).empty());
		CHECK(from_b == 0); // not even an ACK
		CHECK(device_counter(b, SROCE_CNT_RX_BAD_ADDR) == 1);
		CHECK(std::memcmp(before.data(), rb.data, rb.len) == 0);
		// The PSN was not consumed: a's SEND with PSN 0 is the message.
		auto w = wqe(1, ib::wr_send, 1);
		REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 100)}) == 0);
		REQUIRE(f.wait_cqes(b, 1, cb));
		CHECK(cb[0].status == ib::wc_success);
		CHECK(cb[0].byte_len == 100);
		CHECK(std::memcmp(rb.data, la.data, 100) == 0);
	}
	SECTION("a forged ACK completes nothing; a forged NAK kills nothing") {
		block_a = true;
		auto w = wqe(1, ib::wr_rdma_write, 1);
		w.rdma.remote_addr = iova_of(b, rb);
		w.rdma.rkey = f.lkey(rb);
		REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 2000)}) == 0);
		f.sim().run_for(100000);
		// PSNs 0 and 1 are unacknowledged. An ACK of both, with the MSN
		// the responder would send, and a remote access NAK.
		ib::Headers ack;
		ack.bth.opcode = ib::op::rc + ib::op::acknowledge;
		ack.bth.psn = 1;
		ack.aeth.syndrome = ib::Aeth::ack_syndrome(ib::aeth_credits_invalid);
		ack.aeth.msn = 1;
		auto fake_ack = make_packet(f, qa.qpn, ack, 0, true, &spoof_a);
		ib::Headers nak = ack;
		nak.bth.psn = 0;
		nak.aeth.syndrome = ib::Aeth::nak_syndrome(ib::NakCode::remote_access);
		auto fake_nak = make_packet(f, qa.qpn, nak, 0, true, &spoof_a);
		f.sim().inject(evil.id, a.id, fake_ack.data(), (unsigned)fake_ack.size());
		f.sim().inject(evil.id, a.id, fake_nak.data(), (unsigned)fake_nak.size());
		f.sim().run_for(1000000);
		CHECK(f.poll(a).empty());
		CHECK(device_counter(a, SROCE_CNT_RX_BAD_ADDR) == 2);
		CHECK(f.sim().events_for(&qa.owner).empty());
		// The link heals: the retransmission lands and completes.
		block_a = false;
		REQUIRE(f.wait_cqes(a, 1, ca, 20000000000ull));
		CHECK(ca[0].status == ib::wc_success);
		CHECK(std::memcmp(rb.data, la.data, 2000) == 0);
	}
	SECTION("a forged READ is not answered, a forged WRITE changes no byte") {
		ib::Headers rd;
		rd.bth.opcode = ib::op::rc + ib::op::read_request;
		rd.reth.va = iova_of(b, rb);
		rd.reth.rkey = f.lkey(rb);
		rd.reth.length = 4096;
		auto read = make_packet(f, qb.qpn, rd, 0, true, &spoof);
		ib::Headers wr;
		wr.bth.opcode = ib::op::rc + ib::op::write_only;
		wr.bth.ack_req = true;
		wr.reth = rd.reth;
		wr.reth.length = 64;
		auto write = make_packet(f, qb.qpn, wr, 64, true, &spoof);
		f.sim().inject(evil.id, b.id, read.data(), (unsigned)read.size());
		f.sim().inject(evil.id, b.id, write.data(), (unsigned)write.size());
		f.sim().run_for(1000000);
		CHECK(from_b == 0);
		CHECK(device_counter(b, SROCE_CNT_RX_BAD_ADDR) == 2);
		CHECK(std::memcmp(before.data(), rb.data, rb.len) == 0);
		// The same WRITE from the peer's own address is executed.
		auto good = make_packet(f, qb.qpn, wr, 64);
		f.sim().inject(a.id, b.id, good.data(), (unsigned)good.size());
		f.sim().run_for(1000000);
		CHECK(from_b == 1); // its ACK
		CHECK(std::memcmp(before.data(), rb.data, rb.len) != 0);
	}
	SECTION("the peer's address to another destination address is dropped") {
		ib::IpUdp wrong_dst = addr(a.id, b.id);
		wrong_dst.dst[15] = 9; // 10.0.0.9: not b's source GID
		auto pkt = make_packet(f, qb.qpn, write64(f, b, rb), 64, true, &wrong_dst);
		f.sim().inject(a.id, b.id, pkt.data(), (unsigned)pkt.size());
		f.sim().run_for(1000000);
		CHECK(from_b == 0);
		CHECK(device_counter(b, SROCE_CNT_RX_BAD_ADDR) == 1);
		CHECK(std::memcmp(before.data(), rb.data, rb.len) == 0);
	}
	SECTION("the right addresses and a foreign P_Key: dropped and counted") {
		for (unsigned pkey : {0x1234u, 0x0000u, 0x8000u, 0xfffeu}) {
			auto pkt = make_packet(f, qb.qpn, write64(f, b, rb, (unsigned short)pkey), 64);
			f.sim().inject(a.id, b.id, pkt.data(), (unsigned)pkt.size());
		}
		f.sim().run_for(1000000);
		CHECK(from_b == 0);
		CHECK(device_counter(b, SROCE_CNT_RX_BAD_PKEY) == 4);
		CHECK(std::memcmp(before.data(), rb.data, rb.len) == 0);
		// The limited-member default key is the same partition.
		auto ok = make_packet(f, qb.qpn, write64(f, b, rb, 0x7fff), 64);
		f.sim().inject(a.id, b.id, ok.data(), (unsigned)ok.size());
		f.sim().run_for(1000000);
		CHECK(from_b == 1);
		CHECK(device_counter(b, SROCE_CNT_RX_BAD_PKEY) == 4);
	}
	SECTION("a BTH transport version other than 0: dropped and counted") {
		// IBTA 9.2.1: only TVer 0 is defined; rxe drops the rest. Found by
		// the live fuzzer (tests/vm/90-wire-fuzz.sh): sroce executed them.
		for (unsigned char tver = 1; tver < 16; tver++) {
			ib::Headers h = write64(f, b, rb);
			h.bth.tver = tver;
			auto pkt = make_packet(f, qb.qpn, h, 64);
			f.sim().inject(a.id, b.id, pkt.data(), (unsigned)pkt.size());
		}
		f.sim().run_for(1000000);
		CHECK(from_b == 0);
		CHECK(device_counter(b, SROCE_CNT_RX_BAD_HEADER) == 15);
		CHECK(std::memcmp(before.data(), rb.data, rb.len) == 0);
		auto ok = make_packet(f, qb.qpn, write64(f, b, rb), 64);
		f.sim().inject(a.id, b.id, ok.data(), (unsigned)ok.size());
		f.sim().run_for(1000000);
		CHECK(from_b == 1);
	}
	CHECK(la.guards_intact());
	CHECK(rb.guards_intact());
}

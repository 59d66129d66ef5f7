#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "icrc.h"
#include "opcode.h"
#include "packet.h"

using namespace sroce::ib;
namespace err = ktl::err;

namespace {

// Random values in every field, 24-bit ones in range, so a round trip
// compares all of them.
Headers random_headers(u8 opcode, std::mt19937_64 &rng) {
	Headers h;
	h.bth.opcode = opcode;
	h.bth.se = rng() & 1;
	h.bth.mig = rng() & 1;
	h.bth.pad = 0;
	h.bth.tver = u8(rng() & 0xf);
	h.bth.pkey = u16(rng());
	h.bth.fecn = rng() & 1;
	h.bth.becn = rng() & 1;
	h.bth.dest_qpn = u32(rng()) & qpn_mask;
	h.bth.ack_req = rng() & 1;
	h.bth.psn = u32(rng()) & psn_mask;
	h.rdeth.eecn = u32(rng()) & 0xffffff;
	h.deth = {u32(rng()), u32(rng()) & qpn_mask};
	h.xrceth.srqn = u32(rng()) & 0xffffff;
	h.reth = {rng(), u32(rng()), u32(rng())};
	h.atomic_eth = {rng(), u32(rng()), rng(), rng()};
	h.aeth = {u8(rng()), u32(rng()) & 0xffffff};
	h.atomic_ack_eth.orig = rng();
	h.immdt.imm = u32(rng());
	h.ieth.rkey = u32(rng());
	return h;
}

// A whole packet from the IP header: headers, payload of `payload` bytes,
// pad, ICRC.
std::vector<u8> build(const IpUdp &a, Headers h, u32 payload, u8 fill = 0x5c) {
	h.bth.pad = pad_for(payload);
	u32 ib = ib_length(h.bth.opcode, payload);
	u32 hl = ip_udp_len(a.ip_version);
	std::vector<u8> p(hl + ib, fill);
	REQUIRE(write_ip_udp(a, ib, {p.data(), p.size()}).value() == hl);
	u32 n = write_ib_headers(h, {p.data() + hl, ib}).value();
	for (u32 i = 0; i < h.bth.pad; i++)
		p[hl + n + payload + i] = 0;
	REQUIRE_FALSE(icrc_fill({p.data(), p.size()}).is_error());
	return p;
}

IpUdp v4_path() {
	IpUdp a;
	const u8 s[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
	const u8 d[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2};
	memcpy(a.src, s, 16);
	memcpy(a.dst, d, 16);
	a.sport = 0xd00d;
	a.tclass = 0x2e;
	a.ttl = 33;
	a.ip_id = 0x1234;
	return a;
}

// Parses from an exact-size heap copy so that ASan sees any read past it.
template <typename F> auto exact(const u8 *p, size_t n, F f) {
	std::unique_ptr<u8[]> copy(new u8[n ? n : 1]);
	memcpy(copy.get(), p, n);
	return f(ktl::Span<const u8>(copy.get(), n));
}

void check_same(const Headers &a, const Headers &b, u32 flags) {
	CHECK(a.bth.opcode == b.bth.opcode);
	CHECK(a.bth.se == b.bth.se);
	CHECK(a.bth.mig == b.bth.mig);
	CHECK(a.bth.pad == b.bth.pad);
	CHECK(a.bth.tver == b.bth.tver);
	CHECK(a.bth.pkey == b.bth.pkey);
	CHECK(a.bth.fecn == b.bth.fecn);
	CHECK(a.bth.becn == b.bth.becn);
	CHECK(a.bth.dest_qpn == b.bth.dest_qpn);
	CHECK(a.bth.ack_req == b.bth.ack_req);
	CHECK(a.bth.psn == b.bth.psn);
	if (flags & op_rdeth)
		CHECK(a.rdeth.eecn == b.rdeth.eecn);
	if (flags & op_deth)
		CHECK((a.deth.qkey == b.deth.qkey && a.deth.src_qp == b.deth.src_qp));
	if (flags & op_xrceth)
		CHECK(a.xrceth.srqn == b.xrceth.srqn);
	if (flags & op_reth)
		CHECK((a.reth.va == b.reth.va && a.reth.rkey == b.reth.rkey &&
		       a.reth.length == b.reth.length));
	if (flags & op_atomic_eth)
		CHECK((a.atomic_eth.va == b.atomic_eth.va && a.atomic_eth.rkey == b.atomic_eth.rkey &&
		       a.atomic_eth.swap_add == b.atomic_eth.swap_add &&
		       a.atomic_eth.compare == b.atomic_eth.compare));
	if (flags & op_aeth)
		CHECK((a.aeth.syndrome == b.aeth.syndrome && a.aeth.msn == b.aeth.msn));
	if (flags & op_atomic_ack_eth)
		CHECK(a.atomic_ack_eth.orig == b.atomic_ack_eth.orig);
	if (flags & op_immdt)
		CHECK(a.immdt.imm == b.immdt.imm);
	if (flags & op_ieth)
		CHECK(a.ieth.rkey == b.ieth.rkey);
}

} // namespace

TEST_CASE("opcode table: names, transports and lengths", "[packet][opcode]") {
	struct Known {
		u8 op;
		const char *name;
		Transport t;
		u8 len;
	};
	// Lengths as rdma_rxe's table and the IBTA header sizes give them.
	const Known known[] = {
		{0x00, "RC_SEND_FIRST", Transport::rc, 12},
		{0x05, "RC_SEND_ONLY_WITH_IMMEDIATE", Transport::rc, 16},
		{0x0a, "RC_RDMA_WRITE_ONLY", Transport::rc, 28},
		{0x0b, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", Transport::rc, 32},
		{0x0c, "RC_RDMA_READ_REQUEST", Transport::rc, 28},
		{0x0e, "RC_RDMA_READ_RESPONSE_MIDDLE", Transport::rc, 12},
		{0x0f, "RC_RDMA_READ_RESPONSE_LAST", Transport::rc, 16},
		{0x11, "RC_ACKNOWLEDGE", Transport::rc, 16},
		{0x12, "RC_ATOMIC_ACKNOWLEDGE", Transport::rc, 24},
		{0x13, "RC_COMPARE_SWAP", Transport::rc, 40},
		{0x14, "RC_FETCH_ADD", Transport::rc, 40},
		{0x16, "RC_SEND_LAST_WITH_INVALIDATE", Transport::rc, 16},
		{0x17, "RC_SEND_ONLY_WITH_INVALIDATE", Transport::rc, 16},
		{0x20, "UC_SEND_FIRST", Transport::uc, 12},
		{0x2b, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", Transport::uc, 32},
		{0x40, "RD_SEND_FIRST", Transport::rd, 24},
		{0x51, "RD_ACKNOWLEDGE", Transport::rd, 20},
		{0x55, "RD_RESYNC", Transport::rd, 24},
		{0x64, "UD_SEND_ONLY", Transport::ud, 20},
		{0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", Transport::ud, 24},
		{0x81, "CNP", Transport::cnp, 28},
		{0xa0, "XRC_SEND_FIRST", Transport::xrc, 16},
		{0xac, "XRC_RDMA_READ_REQUEST", Transport::xrc, 32},
		{0xb1, "XRC_ACKNOWLEDGE", Transport::xrc, 16},
		{0xb3, "XRC_COMPARE_SWAP", Transport::xrc, 44},
		{0xb7, "XRC_SEND_ONLY_WITH_INVALIDATE", Transport::xrc, 20},
	};
	for (const Known &k : known) {
		INFO(k.name);
		const OpcodeInfo &oi = opcode_info(k.op);
		REQUIRE(oi.flags & op_valid);
		CHECK(std::string(oi.name) == k.name);
		CHECK(oi.transport == k.t);
		CHECK(oi.length == k.len);
		CHECK(opcode_by_name(k.name) == k.op);
	}
	int valid = 0;
	for (int i = 0; i < 256; i++) {
		const OpcodeInfo &oi = opcode_info(u8(i));
		if (!(oi.flags & op_valid)) {
			CHECK(std::string(opcode_name(u8(i))) == "RESERVED");
			continue;
		}
		valid++;
		CHECK(opcode_by_name(oi.name) == i);
		CHECK(oi.length <= len::max_headers);
		CHECK(bool(oi.flags & op_request) + bool(oi.flags & op_response) + bool(oi.flags & op_cnp) == 1);
	}
	// RC 25, UC 12, RD 22, UD 2, CNP 1, XRC 25 (RC and XRC: FLUSH and ATOMIC WRITE).
	CHECK(valid == 87);
	CHECK(opcode_by_name("RC_ATOMIC_WRITE") == 0x1d);
	CHECK(opcode_by_name("XRC_ATOMIC_WRITE") == 0xbd);
	CHECK(opcode_by_name("RC_FLUSH") == 0x1c);
	CHECK(opcode_by_name("XRC_FLUSH") == 0xbc);
	CHECK(ext_offset(op::rc + op::flush, op_feth) == 12);
	CHECK(ext_offset(op::rc + op::flush, op_reth) == 16);
	CHECK(ext_offset(op::xrc + op::flush, op_feth) == 16);
	CHECK(ext_offset(op::xrc + op::flush, op_reth) == 20);
	for (int r : {0x15, 0x18, 0x1e, 0x1f, 0x3c, 0x3d, 0x5d, 0x2c, 0x3f, 0x56, 0x60, 0x63, 0x66, 0x80, 0x82, 0x9f, 0xb5, 0xb8,
		      0xc0, 0xff})
		CHECK_FALSE(opcode_valid(u8(r)));
	CHECK(opcode_by_name("RC_BOGUS") == -1);
	CHECK(opcode_by_name(nullptr) == -1);

	u8 rd_cs = op::rd + op::compare_swap;
	CHECK(ext_offset(rd_cs, op_rdeth) == 12);
	CHECK(ext_offset(rd_cs, op_deth) == 16);
	CHECK(ext_offset(rd_cs, op_atomic_eth) == 24);
	CHECK(ext_offset(rd_cs, op_reth) == 0);
	u8 wimm = op::xrc + op::write_only_imm;
	CHECK(ext_offset(wimm, op_xrceth) == 12);
	CHECK(ext_offset(wimm, op_reth) == 16);
	CHECK(ext_offset(wimm, op_immdt) == 32);
	CHECK(opcode_info(op::rc + op::send_only).flags & op_first);
	CHECK(opcode_info(op::rc + op::send_only).flags & op_last);
	CHECK_FALSE(opcode_info(op::rc + op::send_middle).flags & (op_first | op_last));
}

TEST_CASE("every opcode round-trips through write and parse", "[packet]") {
	std::mt19937_64 rng(42);
	IpUdp a = v4_path();
	for (int i = 0; i < 256; i++) {
		u8 opc = u8(i);
		const OpcodeInfo &oi = opcode_info(opc);
		if (!(oi.flags & op_valid))
			continue;
		for (u32 payload : {0u, 1u, 2u, 3u, 4u, 257u}) {
			if (!(oi.flags & op_payload) && payload)
				continue;
			INFO(oi.name << " payload " << payload);
			Headers h = random_headers(opc, rng);
			auto pkt = build(a, h, payload);
			h.bth.pad = pad_for(payload);

			auto ip = exact(pkt.data(), pkt.size(), [](auto s) { return parse_ip_udp(s); });
			REQUIRE_FALSE(ip.is_error());
			CHECK(ip.value().bth_offset == 28);
			CHECK(ip.value().ib_len == pkt.size() - 28);
			auto pi = exact(pkt.data() + 28, pkt.size() - 28, [](auto s) { return parse_ib(s); });
			REQUIRE_FALSE(pi.is_error());
			const PacketInfo &p = pi.value();
			check_same(h, p.hdr, oi.flags);
			CHECK(p.flags == oi.flags);
			CHECK(p.header_len == oi.length);
			CHECK(p.payload_offset == oi.length);
			CHECK(p.payload_len == payload);
			CHECK(p.pad == pad_for(payload));
			CHECK(p.icrc_offset == pkt.size() - 28 - 4);
			CHECK_FALSE(icrc_check({pkt.data(), pkt.size()}).is_error());
		}
	}
}

TEST_CASE("every truncation of every opcode is rejected without reading past", "[packet]") {
	std::mt19937_64 rng(1);
	for (int i = 0; i < 256; i++) {
		u8 opc = u8(i);
		const OpcodeInfo &oi = opcode_info(opc);
		if (!(oi.flags & op_valid))
			continue;
		u32 payload = oi.flags & op_payload ? 5 : 0;
		Headers h = random_headers(opc, rng);
		auto pkt = build(v4_path(), h, payload);
		const u8 *ib = pkt.data() + 28;
		u32 full = u32(pkt.size() - 28);
		u32 fixed = oi.length + pad_for(payload) + len::icrc;
		for (u32 n = 0; n < full; n++) {
			INFO(oi.name << " cut at " << n);
			auto r = exact(ib, n, [](auto s) { return parse_ib(s); });
			// Cut inside the payload, a shorter packet is all the bytes can
			// say; the UDP length is what catches that (parse_ip_udp).
			if (n >= fixed) {
				REQUIRE_FALSE(r.is_error());
				CHECK(r.value().payload_len == n - fixed);
				continue;
			}
			REQUIRE(r.is_error());
			int want = n < len::bth ? ib_err::truncated_bth
				   : n < oi.length ? ib_err::truncated_ext
						   : ib_err::bad_length;
			CHECK(r.error().code() == -want);
			// The same cut with the true length: a capture cut short or a
			// non-linear packet. Headers inside the span still parse.
			auto hr = exact(ib, n, [&](auto s) { return parse_ib(s, full); });
			if (n < oi.length) {
				REQUIRE(hr.is_error());
				CHECK(hr.error().code() == -(n < len::bth ? ib_err::truncated_bth : ib_err::truncated_ext));
			} else {
				REQUIRE_FALSE(hr.is_error());
				CHECK(hr.value().payload_len == payload);
			}
		}
		// And the IP/UDP headers cut anywhere.
		for (u32 n = 0; n < 28; n++) {
			auto r = exact(pkt.data(), n, [](auto s) { return parse_ip_udp(s); });
			REQUIRE(r.is_error());
		}
	}
}

TEST_CASE("parse_ib: reserved opcodes, pad and length errors", "[packet]") {
	u8 buf[64] = {};
	for (int r : {0x18, 0x56, 0x66, 0x80, 0xc0, 0xff}) {
		buf[0] = u8(r);
		auto e = parse_ib({buf, 40});
		REQUIRE(e.is_error());
		CHECK(e.error().code() == -ib_err::invalid_opcode);
	}
	Headers h;
	h.bth.opcode = op::rc + op::acknowledge;
	REQUIRE(write_ib_headers(h, {buf, sizeof(buf)}).value() == 16);
	CHECK_FALSE(parse_ib({buf, 20}).is_error());
	// An ACK with payload, or with a pad count.
	CHECK(parse_ib({buf, 24}).error().code() == -ib_err::bad_length);
	buf[1] |= 0x10;
	CHECK(parse_ib({buf, 20}).error().code() == -ib_err::bad_length);
	// SEND_ONLY: pad 3 needs 3 payload bytes in front of the ICRC.
	h.bth.opcode = op::rc + op::send_only;
	h.bth.pad = 3;
	REQUIRE(write_ib_headers(h, {buf, sizeof(buf)}).value() == 12);
	CHECK(parse_ib({buf, 18}).error().code() == -ib_err::bad_length);
	auto ok = parse_ib({buf, 20});
	REQUIRE_FALSE(ok.is_error());
	CHECK(ok.value().payload_len == 1);
	CHECK(std::string(ib_error_name(-ib_err::truncated_ext)) == "truncated extension header");
	// No IB MTU is above 4096: a longer payload (IP fragments, a jumbo
	// frame) is malformed for every QP type, UD's one-packet messages too.
	for (u8 opc : {u8(op::ud + op::send_only), u8(op::rc + op::send_only), u8(op::rc + op::read_response_only)}) {
		INFO("opcode " << int(opc));
		h = Headers{};
		h.bth.opcode = opc;
		u8 big[12 + 16 + 4100 + 4] = {};
		u32 hl = write_ib_headers(h, {big, sizeof(big)}).value();
		auto at_mtu = parse_ib({big, hl + 4096 + 4});
		REQUIRE_FALSE(at_mtu.is_error());
		CHECK(at_mtu.value().payload_len == 4096);
		CHECK(parse_ib({big, hl + 4100 + 4}).error().code() == -ib_err::bad_length);
	}
}

TEST_CASE("writers mask 24-bit fields and reserved bits", "[packet]") {
	Headers h;
	h.bth.opcode = op::ud + op::send_only;
	h.bth.dest_qpn = 0xffabcdef;
	h.bth.psn = 0xff123456;
	h.bth.pad = 0xff;
	h.bth.tver = 0xff;
	h.deth.src_qp = 0xee654321;
	h.deth.qkey = 0x80010000;
	u8 buf[20];
	memset(buf, 0xcc, sizeof(buf));
	REQUIRE(write_ib_headers(h, {buf, sizeof(buf)}).value() == 20);
	CHECK(buf[1] == 0x3f);                                   // pad 3, tver 15
	CHECK((buf[4] == 0 && buf[5] == 0xab && buf[6] == 0xcd && buf[7] == 0xef));
	CHECK((buf[8] == 0 && buf[9] == 0x12 && buf[10] == 0x34 && buf[11] == 0x56));
	CHECK((buf[16] == 0 && buf[17] == 0x65 && buf[18] == 0x43 && buf[19] == 0x21));
	auto p = parse_ib({buf, 20}, 28); // payload 1 + pad 3 + ICRC beyond the span
	REQUIRE_FALSE(p.is_error());
	CHECK(p.value().hdr.bth.dest_qpn == 0xabcdef);
	CHECK(p.value().hdr.bth.psn == 0x123456);
	CHECK(p.value().hdr.deth.src_qp == 0x654321);

	h.bth.ack_req = true;
	h.bth.fecn = true;
	REQUIRE(write_ib_headers(h, {buf, sizeof(buf)}).value() == 20);
	CHECK(buf[8] == 0x80);
	CHECK(buf[4] == 0x80);

	CHECK(write_ib_headers(h, {buf, 19}).error().code() == -err::nospc);
	h.bth.opcode = 0x18;
	CHECK(write_ib_headers(h, {buf, 20}).error().code() == -err::inval);

	// A CNP's reserved bytes are zeroed.
	u8 cnp[28];
	memset(cnp, 0xcc, sizeof(cnp));
	h.bth.opcode = op::cnp;
	REQUIRE(write_ib_headers(h, {cnp, sizeof(cnp)}).value() == 28);
	for (int i = 12; i < 28; i++)
		CHECK(cnp[i] == 0);
}

TEST_CASE("IPv4 + UDP: checksum, DF, lengths, round trip", "[packet][ip]") {
	IpUdp a = v4_path();
	u8 buf[28];
	REQUIRE(write_ip_udp(a, 100, {buf, sizeof(buf)}).value() == 28);
	CHECK(buf[0] == 0x45);
	CHECK(buf[1] == 0x2e);
	CHECK((buf[2] << 8 | buf[3]) == 128);
	CHECK((buf[6] & 0x40) == 0x40);
	CHECK(buf[9] == 17);
	CHECK(ipv4_checksum(buf, 20) == 0); // a valid header sums to 0xffff
	// The checksum of a known header (RFC 1071 example style, computed by hand).
	const u8 known[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
			      0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
	CHECK(ipv4_checksum(known, 20) == 0xb861);
	CHECK((buf[24] << 8 | buf[25]) == 108);
	CHECK((buf[26] | buf[27]) == 0);

	std::vector<u8> pkt(buf, buf + 28);
	pkt.resize(128, 0);
	auto r = parse_ip_udp({pkt.data(), pkt.size()});
	REQUIRE_FALSE(r.is_error());
	const IpUdpInfo &i = r.value();
	CHECK(i.addr.ip_version == 4);
	CHECK(memcmp(i.addr.src, a.src, 16) == 0);
	CHECK(memcmp(i.addr.dst, a.dst, 16) == 0);
	CHECK(i.addr.tclass == a.tclass);
	CHECK(i.addr.ttl == a.ttl);
	CHECK(i.addr.ip_id == a.ip_id);
	CHECK(i.addr.sport == a.sport);
	CHECK(i.addr.dport == 4791);
	CHECK(i.df);
	CHECK(i.ip_len == 128);
	CHECK(i.udp_len == 108);
	CHECK(i.bth_offset == 28);
	CHECK(i.ib_len == 100);

	// Link-layer padding after the IP packet is fine.
	pkt.resize(140, 0);
	CHECK_FALSE(parse_ip_udp({pkt.data(), pkt.size()}).is_error());
	pkt.resize(128);

	SECTION("errors") {
		auto code = [&](std::vector<u8> p, u32 wire = 0) {
			auto x = exact(p.data(), p.size(), [&](auto s) {
				return wire ? parse_ip_udp(s, wire) : parse_ip_udp(s);
			});
			return x.is_error() ? x.error().code() : 0;
		};
		auto p = pkt;
		p[25] = 109; // UDP length beyond the IP payload
		CHECK(code(p) == -ip_err::bad_length);
		p = pkt;
		p[25] = 107; // UDP shorter than the IP payload
		CHECK(code(p) == -ip_err::bad_length);
		p = pkt;
		p[3] = 129; // IP total length beyond the frame
		CHECK(code(p) == -ip_err::bad_length);
		p = pkt;
		p[6] |= 0x20; // more fragments
		CHECK(code(p) == -ip_err::not_roce);
		p = pkt;
		p[9] = 6; // TCP
		CHECK(code(p) == -ip_err::not_roce);
		p = pkt;
		p[0] = 0x44; // IHL 4
		CHECK(code(p) == -ip_err::not_roce);
		p = pkt;
		p[0] = 0x55;
		CHECK(code(p) == -ip_err::not_roce);
		// A capture cut after the UDP header: lengths are checked against the
		// wire length, not the bytes captured.
		p = pkt;
		p.resize(40);
		CHECK(code(p, 128) == 0);
		CHECK(code(p) == -ip_err::bad_length);
		p.resize(27);
		CHECK(code(p, 128) == -ip_err::truncated);
	}
	SECTION("writer errors") {
		CHECK(write_ip_udp(a, 100, {buf, 27}).error().code() == -err::nospc);
		CHECK(write_ip_udp(a, 0xffff - 27, {buf, 28}).error().code() == -err::msgsize);
		CHECK_FALSE(write_ip_udp(a, 0xffff - 28, {buf, 28}).is_error());
		IpUdp b = a;
		b.src[0] = 0x20; // not IPv4-mapped
		CHECK(write_ip_udp(b, 100, {buf, 28}).error().code() == -err::inval);
		b = a;
		b.ip_version = 5;
		CHECK(write_ip_udp(b, 100, {buf, 28}).error().code() == -err::inval);
	}
}

TEST_CASE("IPv6 + UDP path round trip", "[packet][ip]") {
	IpUdp a;
	a.ip_version = 6;
	for (int i = 0; i < 16; i++) {
		a.src[i] = u8(0xfe - i);
		a.dst[i] = u8(i * 3);
	}
	a.tclass = 0xb8;
	a.flow_label = 0xfffff5 ; // 20 bits kept
	a.ttl = 9;
	a.sport = 50000;
	Headers h;
	h.bth.opcode = op::rc + op::send_only_imm;
	h.immdt.imm = 0xdeadbeef;
	auto pkt = build(a, h, 33);
	CHECK(pkt[0] == 0x6b);
	CHECK(pkt[1] == 0x8f);
	CHECK((pkt[2] == 0xff && pkt[3] == 0xf5));
	CHECK(pkt[6] == 17);
	CHECK(pkt[7] == 9);
	auto r = parse_ip_udp({pkt.data(), pkt.size()});
	REQUIRE_FALSE(r.is_error());
	CHECK(r.value().addr.ip_version == 6);
	CHECK(r.value().addr.tclass == 0xb8);
	CHECK(r.value().addr.flow_label == 0xffff5);
	CHECK(r.value().addr.ttl == 9);
	CHECK(memcmp(r.value().addr.src, a.src, 16) == 0);
	CHECK(memcmp(r.value().addr.dst, a.dst, 16) == 0);
	CHECK(r.value().bth_offset == 48);
	auto pi = parse_ib({pkt.data() + 48, r.value().ib_len});
	REQUIRE_FALSE(pi.is_error());
	CHECK(pi.value().hdr.immdt.imm == 0xdeadbeef);
	CHECK(pi.value().payload_len == 33);
	CHECK(pi.value().pad == 3);
	CHECK_FALSE(icrc_check({pkt.data(), pkt.size()}).is_error());
	// IPv6 extension headers are not RoCEv2.
	pkt[6] = 0;
	CHECK(parse_ip_udp({pkt.data(), pkt.size()}).error().code() == -ip_err::not_roce);
}

TEST_CASE("AETH syndrome classification, credits and RNR timer", "[packet][aeth]") {
	Aeth a;
	a.syndrome = Aeth::ack_syndrome(31);
	CHECK(a.is_ack());
	CHECK(aeth_credits(a.credit_code()) == -1);
	CHECK(std::string(aeth_kind_name(a)) == "ACK");
	CHECK(aeth_credits(0) == 0);
	CHECK(aeth_credits(5) == 6);
	CHECK(aeth_credits(30) == 32768);
	a.syndrome = Aeth::rnr_syndrome(14);
	CHECK(a.is_rnr_nak());
	CHECK(a.rnr_timer() == 14);
	CHECK(rnr_timer_us(a.rnr_timer()) == 1280);
	CHECK(rnr_timer_us(0) == 655360);
	CHECK(rnr_timer_us(31) == 491520);
	CHECK(std::string(aeth_kind_name(a)) == "RNR_NAK");
	const char *names[] = {"NAK_PSN_SEQ_ERR", "NAK_INVALID_REQUEST", "NAK_REMOTE_ACCESS",
			       "NAK_REMOTE_OP", "NAK_INVALID_RD_REQUEST"};
	for (u8 c = 0; c < 5; c++) {
		a.syndrome = Aeth::nak_syndrome(NakCode(c));
		CHECK(a.syndrome == 0x60 + c);
		CHECK(a.is_nak());
		CHECK(a.nak_code() == NakCode(c));
		CHECK(std::string(aeth_kind_name(a)) == names[c]);
	}
	a.syndrome = 0x65;
	CHECK(std::string(aeth_kind_name(a)) == "NAK_RESERVED");
	a.syndrome = 0x40;
	CHECK(a.kind() == AckKind::reserved);
}

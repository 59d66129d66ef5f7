#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "crc32_sw.h"
#include "icrc.h"
#include "packet.h"

using namespace sroce::ib;
namespace err = ktl::err;

namespace {

std::vector<u8> from_hex(const char *s) {
	std::vector<u8> v;
	auto nib = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
	while (*s) {
		if (*s == ' ' || *s == '\n') {
			s++;
			continue;
		}
		v.push_back(u8(nib(s[0]) << 4 | nib(s[1])));
		s += 2;
	}
	return v;
}

ktl::Span<const u8> span(const std::vector<u8> &v) { return {v.data(), v.size()}; }
ktl::Span<u8> span(std::vector<u8> &v) { return {v.data(), v.size()}; }

// A CNP captured on a ConnectX-4 Lx, from the IP header on (published with
// scapy's RoCE tests): ICRC 0x82fd002a computed by hardware.
const char *cx4_cnp = "45c2003c718c400040119161 0a001101 0a001201"
		      "000012b700280000"
		      "8100ffff400001180000000000000000"
		      "000000000000000000000000"
		      "82fd002a";

// A UC SEND_ONLY (pad 2) from scapy's RoCE tests: IPv4 header checksum
// 0xb4d5, UDP checksum 0xaca2, ICRC 0x78f353f3.
const char *scapy_uc = "450100400478400040110000 c0a80007c0a80007"
		       "c00012b7002c0000"
		       "2460ffff000000d300cf1710"
		       "4630818be28935d90e9a95505401be885e500000"
		       "00000000";

std::vector<u8> scapy_uc_packet() {
	std::string s;
	for (const char *p = scapy_uc; *p; p++)
		if (*p != ' ')
			s += *p;
	auto v = from_hex(s.c_str());
	// Fill in the checksums the way the capture had them.
	v[10] = 0xb4;
	v[11] = 0xd5;
	v[26] = 0xac;
	v[27] = 0xa2;
	return v;
}

} // namespace

TEST_CASE("crc32_le matches the bitwise reference and the CRC-32 check value", "[icrc]") {
	const char *check = "123456789";
	CHECK(~sroce_env_crc32_le(~0u, check, 9) == 0xCBF43926u);
	std::mt19937 rng(7);
	std::vector<u8> buf(300);
	for (auto &b : buf)
		b = u8(rng());
	for (size_t off = 0; off < 9; off++)
		for (size_t n = 0; n + off <= buf.size(); n += 13)
			REQUIRE(sroce_env_crc32_le(0x12345678u, buf.data() + off, n) ==
				crc32_sw::crc32_le_bitwise(0x12345678u, buf.data() + off, n));
	// Chaining: no inversion inside, so pieces compose.
	u32 whole = sroce_env_crc32_le(~0u, buf.data(), 300);
	u32 parts = sroce_env_crc32_le(sroce_env_crc32_le(~0u, buf.data(), 101), buf.data() + 101, 199);
	CHECK(whole == parts);
}

TEST_CASE("ICRC seed is the CRC of the 8-byte LRH stand-in", "[icrc]") {
	const u8 ones[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	CHECK(sroce_env_crc32_le(~0u, ones, 8) == icrc_seed);
}

TEST_CASE("IBTA sample packet gives ICRC 0x9625B75A, stored 96 25 B7 5A", "[icrc]") {
	// The spec's sample (IBA vol 1, ICRC example): LRH + BTH + payload with
	// the variant fields already set to ones.
	auto data = from_hex("F012375C000E17D20A202487FF87B1B3000DEC2A01710A1C015D40023"
			     "8F27A050000000EBB884D85FD5CFBA4728BC0690ED40000");
	REQUIRE(data.size() == 52);
	u32 icrc = icrc_finish(icrc_update(~0u, data.data(), data.size()));
	CHECK(icrc == 0x9625B75Au);
	u8 wire[4];
	icrc_store(wire, icrc);
	CHECK((wire[0] == 0x96 && wire[1] == 0x25 && wire[2] == 0xB7 && wire[3] == 0x5A));
	CHECK(icrc_load(wire) == icrc);
}

TEST_CASE("ICRC of a hardware-captured RoCEv2 CNP (ConnectX-4 Lx)", "[icrc]") {
	auto pkt = from_hex(cx4_cnp);
	REQUIRE(pkt.size() == 60);
	auto r = icrc_compute(span(pkt));
	REQUIRE_FALSE(r.is_error());
	CHECK(r.value() == 0x82fd002au);
	CHECK_FALSE(icrc_check(span(pkt)).is_error());

	SECTION("variant fields do not change it") {
		pkt[1] ^= 0x5a;  // TOS
		pkt[8] = 3;      // TTL
		pkt[10] ^= 0xff; // IP checksum
		pkt[26] = 0x12;  // UDP checksum
		pkt[27] = 0x34;
		pkt[28 + 4] = 0x80; // FECN, BECN cleared, resv6a
		CHECK_FALSE(icrc_check(span(pkt)).is_error());
	}
	SECTION("every invariant bit is covered") {
		for (size_t byte = 0; byte < pkt.size() - 4; byte++) {
			bool variant = byte == 1 || byte == 8 || byte == 10 || byte == 11 || byte == 26 ||
				       byte == 27 || byte == 32;
			// Lengths and protocol change how the packet parses; skip them.
			bool structural = byte == 0 || byte == 2 || byte == 3 || byte == 6 || byte == 7 || byte == 9 ||
					  byte == 24 || byte == 25;
			if (variant || structural)
				continue;
			for (int bit = 0; bit < 8; bit++) {
				pkt[byte] ^= u8(1 << bit);
				auto c = icrc_check(span(pkt));
				pkt[byte] ^= u8(1 << bit);
				INFO("byte " << byte << " bit " << bit);
				REQUIRE(c.is_error());
				CHECK(c.error().code() == -err::badmsg);
			}
		}
	}
}

TEST_CASE("ICRC and IPv4 checksum of scapy's UC SEND_ONLY example", "[icrc]") {
	auto pkt = scapy_uc_packet();
	REQUIRE(pkt.size() == 64);
	CHECK(ipv4_checksum(pkt.data(), 20) == 0);
	auto r = icrc_compute(span(pkt));
	REQUIRE_FALSE(r.is_error());
	CHECK(r.value() == 0x78f353f3u);
}

TEST_CASE("split ICRC equals the one-shot form for every split point", "[icrc]") {
	auto pkt = scapy_uc_packet();
	u32 want = icrc_compute(span(pkt)).value();
	auto crc = icrc_begin(span(pkt));
	REQUIRE_FALSE(crc.is_error());
	size_t rest = 28 + 12, end = pkt.size() - 4;
	for (size_t cut = rest; cut <= end; cut++) {
		u32 c = icrc_update(crc.value(), pkt.data() + rest, cut - rest);
		c = icrc_update(c, pkt.data() + cut, end - cut);
		REQUIRE(icrc_finish(c) == want);
	}
	// icrc_begin needs only the headers to be linear.
	auto hdr_only = icrc_begin(ktl::Span<const u8>(pkt.data(), 40));
	REQUIRE_FALSE(hdr_only.is_error());
	CHECK(hdr_only.value() == crc.value());
	CHECK(icrc_begin(ktl::Span<const u8>(pkt.data(), 39)).error().code() == -err::nodata);
}

TEST_CASE("IPv6 ICRC masks traffic class, flow label and hop limit only", "[icrc]") {
	IpUdp a;
	a.ip_version = 6;
	for (int i = 0; i < 16; i++) {
		a.src[i] = u8(0x20 + i);
		a.dst[i] = u8(0x40 + i);
	}
	a.tclass = 0x68;
	a.flow_label = 0xabcde;
	a.ttl = 17;
	a.sport = 0xc123;
	Headers h;
	h.bth.opcode = op::rc + op::write_only;
	h.bth.dest_qpn = 0x123456;
	h.bth.psn = 77;
	h.reth = {0x1000, 0x55, 8};
	u32 ib = ib_length(h.bth.opcode, 8);
	std::vector<u8> pkt(48 + ib, 0xa5);
	REQUIRE(write_ip_udp(a, ib, span(pkt)).value() == 48);
	REQUIRE(write_ib_headers(h, ktl::Span<u8>(pkt.data() + 48, ib)).value() == 28);
	REQUIRE_FALSE(icrc_fill(span(pkt)).is_error());
	u32 base = icrc_compute(span(pkt)).value();

	auto changed = [&](auto mutate) {
		auto p = pkt;
		mutate(p);
		return icrc_compute(span(p)).value() != base;
	};
	CHECK_FALSE(changed([](auto &p) { p[0] ^= 0x0f; }));          // tclass high nibble
	CHECK_FALSE(changed([](auto &p) { p[1] ^= 0xff; }));          // tclass low, flow label
	CHECK_FALSE(changed([](auto &p) { p[3] ^= 0x01; }));          // flow label
	CHECK_FALSE(changed([](auto &p) { p[7] = 1; }));              // hop limit
	CHECK_FALSE(changed([](auto &p) { p[46] ^= 0x77; }));         // UDP checksum
	CHECK(changed([](auto &p) { p[8] ^= 1; }));                   // source address
	CHECK(changed([](auto &p) { p[41] ^= 1; }));                  // UDP source port
	CHECK(changed([](auto &p) { p[48 + 1] ^= 0x80; }));           // BTH SE
	CHECK(changed([](auto &p) { p[48 + 8] ^= 0x80; }));           // BTH AckReq
	CHECK(changed([](auto &p) { p[48 + 28] ^= 0x01; }));          // payload
}

TEST_CASE("icrc_compute rejects what is not a complete RoCEv2 packet", "[icrc]") {
	auto pkt = from_hex(cx4_cnp);
	// Every cut of the linear packet is an error, never a read past it.
	for (size_t n = 0; n < pkt.size(); n++) {
		std::vector<u8> cut(pkt.begin(), pkt.begin() + n);
		INFO("length " << n);
		CHECK(icrc_compute(span(cut)).is_error());
		CHECK(icrc_check(span(cut)).is_error());
	}
	auto bad = pkt;
	bad[0] = 0x55;
	CHECK(icrc_compute(span(bad)).error().code() == -err::proto);
	// A UDP payload too short for BTH + ICRC.
	auto tiny = from_hex("4500002b00004000401100000a0000010a000002000012b70017000000000000"
			     "0000000000000000000000");
	CHECK(icrc_compute(span(tiny)).error().code() == -err::msgsize);
}

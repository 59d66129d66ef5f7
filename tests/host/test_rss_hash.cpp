// RSS hashing (kmod/core/rss.h): Toeplitz against the verification suite
// published with Microsoft's RSS specification (the standard 40-byte key,
// IPv4, TCP/IPv4, IPv6 and TCP/IPv6), the XOR hash, the field rules, and
// which headers a message offers in outer and payload mode.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <cstring>
#include <vector>

#include "rss.h"

using namespace sroce;
using namespace sroce::rss;

namespace {

constexpr u8 ms_key[key_len] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

struct Vector {
	const char *dst;
	u16 dport;
	const char *src;
	u16 sport;
	u32 ip_hash, tcp_hash;
};

// The specification's table: destination, then source, as it lists them.
const Vector ipv4_vectors[] = {
	{"161.142.100.80", 1766, "66.9.149.187", 2794, 0x323e8fc2, 0x51ccc178},
	{"65.69.140.83", 4739, "199.92.111.2", 14230, 0xd718262a, 0xc626b0ea},
	{"12.22.207.184", 38024, "24.19.198.95", 12898, 0xd2d0a5de, 0x5c2b394a},
	{"209.142.163.6", 2217, "38.27.205.30", 48228, 0x82989176, 0xafc7327f},
	{"202.188.127.2", 1303, "153.39.163.191", 44251, 0x5d1809c5, 0x10e828a2},
};
const Vector ipv6_vectors[] = {
	{"3ffe:2501:200:3::1", 1766, "3ffe:2501:200:1fff::7", 2794, 0x2cc18cd5, 0x40207d3d},
	{"ff02::1", 4739, "3ffe:501:8::260:97ff:fe40:efab", 14230, 0x0f0c461c, 0xdde51bbf},
	{"fe80::200:f8ff:fe21:67cf", 38024, "3ffe:1900:4545:3:200:f8ff:fe21:67cf", 44251, 0x4b61e985,
	 0x02d1feef},
};

Tuple tuple(int version, const Vector &v, u8 l4) {
	Tuple t;
	t.ip_version = u8(version);
	int af = version == 6 ? AF_INET6 : AF_INET;
	REQUIRE(inet_pton(af, v.src, t.src) == 1);
	REQUIRE(inet_pton(af, v.dst, t.dst) == 1);
	t.l4 = l4;
	t.sport = v.sport;
	t.dport = v.dport;
	return t;
}

Config toeplitz_config(u64 fields, Mode m = Mode::payload) {
	Config c;
	c.fields = fields;
	c.mode = m;
	std::memcpy(c.key, ms_key, key_len);
	return c;
}

// An IPoIB-style payload: 4-byte encapsulation header, then IP, then L4.
std::vector<u8> payload(int version, const Vector &v, u8 proto, u16 frag = 0, u8 next = 0) {
	std::vector<u8> p(4);
	p[0] = version == 6 ? 0x86 : 0x08;
	p[1] = version == 6 ? 0xdd : 0x00;
	Tuple t = tuple(version, v, proto);
	if (version == 4) {
		u8 ip[20] = {0x45};
		ip[6] = u8(frag >> 8);
		ip[7] = u8(frag);
		ip[9] = proto;
		std::memcpy(ip + 12, t.src, 4);
		std::memcpy(ip + 16, t.dst, 4);
		p.insert(p.end(), ip, ip + 20);
	} else {
		u8 ip[40] = {0x60};
		ip[6] = next ? next : proto;
		std::memcpy(ip + 8, t.src, 16);
		std::memcpy(ip + 24, t.dst, 16);
		p.insert(p.end(), ip, ip + 40);
	}
	u8 l4[20] = {u8(v.sport >> 8), u8(v.sport), u8(v.dport >> 8), u8(v.dport)};
	p.insert(p.end(), l4, l4 + 20);
	return p;
}

} // namespace

// Each vector's IP-only and TCP hashes, and their kinds.
template <size_t N>
void check_vectors(int version, const Vector (&vs)[N], u64 ip_fields, Kind ip_kind, Kind tcp_kind) {
	for (const auto &v : vs) {
		Tuple t = tuple(version, v, ip_proto_tcp);
		Hash ip = compute(toeplitz_config(ip_fields), t);
		CHECK(ip.kind == ip_kind);
		CHECK(ip.value == v.ip_hash);
		Hash tcp = compute(toeplitz_config(ip_fields | field::tcp), t);
		CHECK(tcp.kind == tcp_kind);
		CHECK(tcp.value == v.tcp_hash);
	}
}

TEST_CASE("rss: Toeplitz matches the published IPv4 and TCP/IPv4 vectors", "[rss]") {
	check_vectors(4, ipv4_vectors, field::ipv4, Kind::ipv4, Kind::tcp_ipv4);
}

TEST_CASE("rss: Toeplitz matches the published IPv6 and TCP/IPv6 vectors", "[rss]") {
	check_vectors(6, ipv6_vectors, field::ipv6, Kind::ipv6, Kind::tcp_ipv6);
}

TEST_CASE("rss: payload mode parses the IPoIB-style header to the same vectors", "[rss]") {
	for (const auto &v : ipv4_vectors) {
		auto p = payload(4, v, ip_proto_tcp);
		Tuple t = payload_tuple(p.data(), u32(p.size()));
		Hash h = compute(toeplitz_config(field::ipv4 | field::tcp), t);
		CHECK(h.kind == Kind::tcp_ipv4);
		CHECK(h.value == v.tcp_hash);
	}
	for (const auto &v : ipv6_vectors) {
		auto p = payload(6, v, ip_proto_tcp);
		Hash h = compute(toeplitz_config(field::ipv6 | field::tcp), payload_tuple(p.data(), u32(p.size())));
		CHECK(h.kind == Kind::tcp_ipv6);
		CHECK(h.value == v.tcp_hash);
	}
}

TEST_CASE("rss: without the asked-for ports, a packet hashes its addresses (NDIS)", "[rss]") {
	const Vector &v = ipv4_vectors[0];
	Config c = toeplitz_config(field::ipv4 | field::tcp);
	SECTION("UDP where TCP was asked for") {
		auto p = payload(4, v, ip_proto_udp);
		Hash h = compute(c, payload_tuple(p.data(), u32(p.size())));
		CHECK(h.kind == Kind::ipv4);
		CHECK(h.value == v.ip_hash);
	}
	SECTION("an IPv4 fragment (MF set, or an offset)") {
		for (u16 frag : {u16(0x2000), u16(0x0001), u16(0x00b9)}) {
			auto p = payload(4, v, ip_proto_tcp, frag);
			Hash h = compute(c, payload_tuple(p.data(), u32(p.size())));
			CHECK(h.kind == Kind::ipv4);
			CHECK(h.value == v.ip_hash);
		}
		auto df = payload(4, v, ip_proto_tcp, 0x4000); // DF alone is no fragment
		CHECK(compute(c, payload_tuple(df.data(), u32(df.size()))).kind == Kind::tcp_ipv4);
	}
	SECTION("an IPv6 extension header before TCP") {
		const Vector &w = ipv6_vectors[0];
		auto p = payload(6, w, ip_proto_tcp, 0, 0 /* hop-by-hop */);
		p[4 + 6] = 0; // next header: hop-by-hop options
		Hash h = compute(toeplitz_config(field::ipv6 | field::tcp), payload_tuple(p.data(), u32(p.size())));
		CHECK(h.kind == Kind::ipv6);
		CHECK(h.value == w.ip_hash);
	}
	SECTION("ports cut off") {
		auto p = payload(4, v, ip_proto_tcp);
		Hash h = compute(c, payload_tuple(p.data(), 4 + 20 + 3));
		CHECK(h.kind == Kind::ipv4);
		CHECK(h.value == v.ip_hash);
	}
}

TEST_CASE("rss: what matches nothing hashes to 0 with Kind::none", "[rss]") {
	const Vector &v = ipv4_vectors[1];
	auto p4 = payload(4, v, ip_proto_tcp);
	auto p6 = payload(6, ipv6_vectors[1], ip_proto_tcp);
	SECTION("the other IP version") {
		Hash h = compute(toeplitz_config(field::ipv6 | field::tcp), payload_tuple(p4.data(), u32(p4.size())));
		CHECK(h.kind == Kind::none);
		CHECK(h.value == 0);
		h = compute(toeplitz_config(field::ipv4), payload_tuple(p6.data(), u32(p6.size())));
		CHECK(h.kind == Kind::none);
	}
	SECTION("not IP: an unknown EtherType, a bad version nibble, a short header") {
		auto arp = p4;
		arp[0] = 0x08, arp[1] = 0x06;
		CHECK(payload_tuple(arp.data(), u32(arp.size())).ip_version == 0);
		auto bad = p4;
		bad[4] = 0x65;
		CHECK(payload_tuple(bad.data(), u32(bad.size())).ip_version == 0);
		auto ihl = p4;
		ihl[4] = 0x44; // IHL 4: shorter than a header
		CHECK(payload_tuple(ihl.data(), u32(ihl.size())).ip_version == 0);
		for (u32 n : {0u, 3u, 4u, 23u})
			CHECK(payload_tuple(p4.data(), n).ip_version == 0);
		CHECK(compute(toeplitz_config(field::ipv4), payload_tuple(arp.data(), u32(arp.size()))).kind ==
		      Kind::none);
	}
	SECTION("ports alone asked for, and none there") {
		auto frag = payload(4, v, ip_proto_tcp, 0x2000);
		Hash h = compute(toeplitz_config(field::tcp), payload_tuple(frag.data(), u32(frag.size())));
		CHECK(h.kind == Kind::none);
		h = compute(toeplitz_config(field::tcp), payload_tuple(p4.data(), u32(p4.size())));
		CHECK(h.kind == Kind::tcp_ipv4);
	}
}

TEST_CASE("rss: outer mode hashes the RoCE packet's IP and UDP headers", "[rss]") {
	ib::IpUdp a;
	a.ip_version = 4;
	a.src[10] = a.src[11] = a.dst[10] = a.dst[11] = 0xff; // ::ffff:a.b.c.d
	const Vector &v = ipv4_vectors[2];
	Tuple ref = tuple(4, v, ip_proto_udp);
	std::memcpy(a.src + 12, ref.src, 4);
	std::memcpy(a.dst + 12, ref.dst, 4);
	a.sport = v.sport;
	a.dport = v.dport;
	Tuple t = outer_tuple(a);
	CHECK(std::memcmp(t.src, ref.src, 4) == 0);
	CHECK(std::memcmp(t.dst, ref.dst, 4) == 0);
	Hash h = compute(toeplitz_config(field::ipv4 | field::udp, Mode::outer), t);
	CHECK(h.kind == Kind::udp_ipv4);
	CHECK(h.value == v.tcp_hash); // the same 12 input bytes as the TCP vector
	h = compute(toeplitz_config(field::src_port_udp, Mode::outer), t);
	CHECK(h.kind == Kind::udp_ipv4);
	u8 sp[2] = {u8(v.sport >> 8), u8(v.sport)};
	CHECK(h.value == toeplitz(ms_key, sp, 2));

	ib::IpUdp a6;
	a6.ip_version = 6;
	const Vector &w = ipv6_vectors[2];
	REQUIRE(inet_pton(AF_INET6, w.src, a6.src) == 1);
	REQUIRE(inet_pton(AF_INET6, w.dst, a6.dst) == 1);
	a6.sport = w.sport;
	a6.dport = w.dport;
	h = compute(toeplitz_config(field::ipv6 | field::udp, Mode::outer), outer_tuple(a6));
	CHECK(h.kind == Kind::udp_ipv6);
	CHECK(h.value == w.tcp_hash);
}

TEST_CASE("rss: a subset of the fields hashes only those, in the specification's order", "[rss]") {
	const Vector &v = ipv4_vectors[3];
	Tuple t = tuple(4, v, ip_proto_tcp);
	u8 in[max_input];
	u32 len;
	CHECK(classify(field::dst_ipv4 | field::dst_port_tcp, t, in, &len) == Kind::tcp_ipv4);
	REQUIRE(len == 6);
	CHECK(std::memcmp(in, t.dst, 4) == 0);
	CHECK((in[4] << 8 | in[5]) == v.dport);
	CHECK(classify(field::src_ipv4, t, in, &len) == Kind::ipv4);
	REQUIRE(len == 4);
	CHECK(std::memcmp(in, t.src, 4) == 0);
}

TEST_CASE("rss: the XOR hash folds the input's big-endian words", "[rss]") {
	const Vector &v = ipv4_vectors[0]; // 66.9.149.187 -> 161.142.100.80, 2794 -> 1766
	Config c = toeplitz_config(field::ipv4 | field::tcp);
	c.algo = Algo::xor32;
	Tuple t = tuple(4, v, ip_proto_tcp);
	Hash h = compute(c, t);
	CHECK(h.kind == Kind::tcp_ipv4);
	CHECK(h.value == (0x420995bbu ^ 0xa18e6450u ^ (2794u << 16 | 1766u)));
	c.fields = field::src_ipv4 | field::src_port_tcp; // 6 bytes: the last word zero-padded
	CHECK(compute(c, t).value == (0x420995bbu ^ (2794u << 16)));
	// The key plays no part, and swapping ends gives the same hash.
	std::memset(c.key, 0, key_len);
	c.fields = field::ipv4;
	Tuple r = t;
	std::memcpy(r.src, t.dst, 4);
	std::memcpy(r.dst, t.src, 4);
	CHECK(compute(c, r).value == compute(c, t).value);
}

TEST_CASE("rss: the field rules", "[rss]") {
	CHECK(fields_error(field::ipv4 | field::udp, Mode::outer) == 0);
	CHECK(fields_error(field::src_ipv4 | field::src_ipv6, Mode::payload) == -ktl::err::inval);
	CHECK(fields_error(field::src_port_tcp | field::dst_port_udp, Mode::payload) == -ktl::err::inval);
	CHECK(fields_error(field::ipv6 | field::tcp, Mode::outer) == -ktl::err::opnotsupp);
	CHECK(fields_error(0, Mode::payload) == -ktl::err::inval);
}

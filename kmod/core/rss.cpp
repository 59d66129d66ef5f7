// RSS hashing (rss.h): the field rules, the tuples, Toeplitz and XOR.
#include "rss.h"
#include "abi.h"
#include "ktl/byteorder.h"

namespace sroce::rss {
namespace {

using namespace field;

// The field rules, case by case (fields_error).
struct FieldCase {
	u64 fields;
	Mode mode;
	int error;
};
constexpr FieldCase field_cases[] = {
	{ipv4, Mode::outer, 0},
	{ipv6 | udp, Mode::outer, 0},
	{src_ipv4 | dst_port_udp, Mode::outer, 0},
	{udp, Mode::outer, 0},                           // ports alone: either IP version
	{ipv4 | tcp, Mode::payload, 0},
	{ipv6 | udp, Mode::payload, 0},
	{0, Mode::outer, -ktl::err::inval},              // nothing to hash
	{src_ipv4 | dst_ipv6, Mode::payload, -ktl::err::inval},
	{ipv4 | src_port_tcp | dst_port_udp, Mode::payload, -ktl::err::inval},
	{ipv4 | (1ull << 8), Mode::outer, -ktl::err::inval}, // IPSEC_SPI
	{ipv4 | (1ull << 31), Mode::outer, -ktl::err::inval}, // INNER
	{ipv4 | tcp, Mode::outer, -ktl::err::opnotsupp}, // RoCE is UDP
};
constexpr bool field_rules_hold() {
	for (const auto &c : field_cases)
		if (fields_error(c.fields, c.mode) != c.error)
			return false;
	return true;
}
static_assert(field_rules_hold());
// The kinds are the ABI's CQE hash types.
static_assert(u8(Kind::none) == SROCE_HASH_NONE && u8(Kind::ipv4) == SROCE_HASH_IPV4 &&
	      u8(Kind::ipv6) == SROCE_HASH_IPV6 && u8(Kind::tcp_ipv4) == SROCE_HASH_TCP_IPV4 &&
	      u8(Kind::tcp_ipv6) == SROCE_HASH_TCP_IPV6 && u8(Kind::udp_ipv4) == SROCE_HASH_UDP_IPV4 &&
	      u8(Kind::udp_ipv6) == SROCE_HASH_UDP_IPV6);
static_assert(key_len >= max_input + 4, "Toeplitz slides a 32-bit window over the input");

constexpr u16 ethertype_ipv4 = 0x0800;
constexpr u16 ethertype_ipv6 = 0x86dd;

u32 load_be32(const u8 *p) { return ktl::get_be32(p); }

void put(u8 *in, u32 *len, const u8 *p, u32 n) {
	__builtin_memcpy(in + *len, p, n);
	*len += n;
}

void put16(u8 *in, u32 *len, u16 v) {
	in[(*len)++] = u8(v >> 8);
	in[(*len)++] = u8(v);
}

} // namespace

Tuple outer_tuple(const ib::IpUdp &a) {
	Tuple t;
	t.ip_version = a.ip_version;
	u32 off = a.ip_version == 6 ? 0 : 12; // past ::ffff:
	u32 n = a.ip_version == 6 ? 16 : 4;
	__builtin_memcpy(t.src, a.src + off, n);
	__builtin_memcpy(t.dst, a.dst + off, n);
	t.l4 = ip_proto_udp;
	t.sport = a.sport;
	t.dport = a.dport;
	return t;
}

Tuple payload_tuple(const u8 *p, u32 len) {
	Tuple t;
	if (len < payload_encap_len)
		return t;
	u16 type = u16(p[0] << 8 | p[1]);
	p += payload_encap_len;
	len -= payload_encap_len;
	u32 l4_off;
	u8 proto;
	if (type == ethertype_ipv4) {
		if (len < ib::ipv4_header_len || (p[0] >> 4) != 4)
			return t;
		u32 ihl = (p[0] & 0xf) * 4u;
		if (ihl < ib::ipv4_header_len)
			return t;
		t.ip_version = 4;
		__builtin_memcpy(t.src, p + 12, 4);
		__builtin_memcpy(t.dst, p + 16, 4);
		// A fragment's ports are in its first piece only: hash addresses.
		bool fragment = (p[6] & 0x3f) || p[7]; // MF or an offset
		if (fragment)
			return t;
		l4_off = ihl;
		proto = p[9];
	} else if (type == ethertype_ipv6) {
		if (len < ib::ipv6_header_len || (p[0] >> 4) != 6)
			return t;
		t.ip_version = 6;
		__builtin_memcpy(t.src, p + 8, 16);
		__builtin_memcpy(t.dst, p + 24, 16);
		l4_off = ib::ipv6_header_len;
		proto = p[6]; // an extension header is no port protocol
	} else {
		return t;
	}
	if ((proto == ip_proto_tcp || proto == ip_proto_udp) && len >= l4_off + 4) {
		t.l4 = proto;
		t.sport = u16(p[l4_off] << 8 | p[l4_off + 1]);
		t.dport = u16(p[l4_off + 2] << 8 | p[l4_off + 3]);
	}
	return t;
}

u32 toeplitz(const u8 key[key_len], const u8 *in, u32 len) {
	if (len > max_input)
		len = max_input;
	u32 hash = 0;
	u32 window = load_be32(key); // key bits [i, i + 32) for input bit i
	for (u32 i = 0; i < len; i++) {
		u8 next = key[i + 4];
		for (int b = 7; b >= 0; b--) {
			if (in[i] & (1u << b))
				hash ^= window;
			window = (window << 1) | ((next >> b) & 1);
		}
	}
	return hash;
}

u32 xor32(const u8 *in, u32 len) {
	u32 hash = 0;
	for (u32 i = 0; i < len; i += 4) {
		u8 w[4] = {};
		__builtin_memcpy(w, in + i, len - i < 4 ? len - i : 4);
		hash ^= load_be32(w);
	}
	return hash;
}

Kind classify(u64 f, const Tuple &t, u8 *in, u32 *len) {
	*len = 0;
	u8 want_ip = (f & ipv4) ? 4 : (f & ipv6) ? 6 : 0;
	u8 want_l4 = (f & tcp) ? ip_proto_tcp : (f & udp) ? ip_proto_udp : 0;
	if (t.ip_version == 0 || (want_ip && t.ip_version != want_ip))
		return Kind::none;
	bool ports = want_l4 && t.l4 == want_l4;
	if (!ports && !want_ip)
		return Kind::none; // ports alone were asked for, and there are none
	u32 n = t.ip_version == 6 ? 16 : 4;
	if (f & (src_ipv4 | src_ipv6))
		put(in, len, t.src, n);
	if (f & (dst_ipv4 | dst_ipv6))
		put(in, len, t.dst, n);
	bool v6 = t.ip_version == 6;
	if (!ports)
		return v6 ? Kind::ipv6 : Kind::ipv4;
	if (f & (src_port_tcp | src_port_udp))
		put16(in, len, t.sport);
	if (f & (dst_port_tcp | dst_port_udp))
		put16(in, len, t.dport);
	if (want_l4 == ip_proto_tcp)
		return v6 ? Kind::tcp_ipv6 : Kind::tcp_ipv4;
	return v6 ? Kind::udp_ipv6 : Kind::udp_ipv4;
}

Hash compute(const Config &c, const Tuple &t) {
	u8 in[max_input];
	u32 len;
	Hash h;
	h.kind = classify(c.fields, t, in, &len);
	if (h.kind == Kind::none)
		return h;
	h.value = c.algo == Algo::toeplitz ? toeplitz(c.key, in, len) : xor32(in, len);
	return h;
}

} // namespace sroce::rss

// Receive-side scaling (seed 002-B, Documentation/rss.md): the hash of a
// received UD message's headers, and the indirection-table slot it picks.
//
// The fields are libibverbs' ibv_rx_hash_fields (rx_hash below). The hash
// input is the selected fields in the order of Microsoft's RSS
// specification: source address, destination address, source port,
// destination port, each in network byte order. A field set names one IP
// version and at most one port protocol (fields_error).
//
// Which headers (Mode): the RoCE packet's own IP and UDP headers (outer,
// the default: a sender's UDP source port carries its flow entropy), or
// the IP and TCP/UDP headers at the start of the UD payload, after a 4-byte
// IPoIB-style encapsulation header (payload, the seed's IPoIB case).
//
// What matches (classify): a packet of another IP version than the fields
// name matches nothing (Kind::none). One of the right version whose port
// protocol differs (or an IPv4 fragment, or an IPv6 header followed by an
// extension header) hashes its addresses alone, as NDIS RSS does. A
// message that matches nothing goes to the default WQ when there is one,
// else hashes to 0 (slot 0), as an empty Toeplitz input does.
#pragma once
#include "ktl/result.h"
#include "ktl/types.h"
#include "packet.h"

namespace sroce::rss {

// enum ibv_rx_hash_fields (tests/host/test_ib_enums.cpp checks the values).
namespace field {
enum : u64 {
	src_ipv4 = 1u << 0,
	dst_ipv4 = 1u << 1,
	src_ipv6 = 1u << 2,
	dst_ipv6 = 1u << 3,
	src_port_tcp = 1u << 4,
	dst_port_tcp = 1u << 5,
	src_port_udp = 1u << 6,
	dst_port_udp = 1u << 7,

	ipv4 = src_ipv4 | dst_ipv4,
	ipv6 = src_ipv6 | dst_ipv6,
	tcp = src_port_tcp | dst_port_tcp,
	udp = src_port_udp | dst_port_udp,
	supported = ipv4 | ipv6 | tcp | udp,
};
} // namespace field

enum class Algo : u8 { toeplitz, xor32 };
enum class Mode : u8 { outer, payload };
// What a message matched, reported with its hash in the completion (the
// seed's IBT_WC_DETAIL_RSS_*; UDP kinds are sroce's, for outer mode).
enum class Kind : u8 { none, ipv4, ipv6, tcp_ipv4, tcp_ipv6, udp_ipv4, udp_ipv6 };

constexpr u32 key_len = 40;    // Toeplitz: 36 bytes of input at most, plus 4
constexpr u32 max_input = 36;  // IPv6 addresses and two ports
constexpr u32 payload_encap_len = 4; // the IPoIB-style header in payload mode

// 0 when the field set can be hashed in this mode, else -EINVAL (empty,
// unknown bits, IPv4 with IPv6, TCP with UDP) or -EOPNOTSUPP (TCP ports
// of the RoCE packet itself, which are UDP). A constexpr table of cases
// is asserted in rss.cpp.
constexpr int fields_error(u64 f, Mode m) {
	if (f == 0 || (f & ~u64(field::supported)))
		return -ktl::err::inval;
	if ((f & field::ipv4) && (f & field::ipv6))
		return -ktl::err::inval;
	if ((f & field::tcp) && (f & field::udp))
		return -ktl::err::inval;
	if (m == Mode::outer && (f & field::tcp))
		return -ktl::err::opnotsupp;
	return 0;
}

// The headers a message offers to the hash.
struct Tuple {
	u8 ip_version = 0; // 4, 6, or 0: not IP
	u8 l4 = 0;         // ip_proto_tcp, ip_proto_udp, or 0: no usable ports
	u8 src[16] = {};   // IPv4: the first 4 bytes
	u8 dst[16] = {};
	u16 sport = 0, dport = 0;
};
constexpr u8 ip_proto_tcp = 6;
constexpr u8 ip_proto_udp = 17;

// The RoCE packet's own headers (IPv4 addresses are IPv4-mapped there).
Tuple outer_tuple(const ib::IpUdp &a);
// The headers at the start of a UD payload (payload mode): the 4-byte
// encapsulation header's EtherType (0x0800, 0x86dd) then IP, then TCP or
// UDP. Whatever is cut short or unknown leaves the tuple less complete
// (not IP, or no ports), never an error.
Tuple payload_tuple(const u8 *p, u32 len);

u32 toeplitz(const u8 key[key_len], const u8 *in, u32 len);
// sroce's XOR hash: the input as big-endian 32-bit words (the last one
// zero-padded), XORed together.
u32 xor32(const u8 *in, u32 len);

struct Config {
	u64 fields = 0;
	Algo algo = Algo::toeplitz;
	Mode mode = Mode::outer;
	u8 key[key_len] = {};
};

struct Hash {
	u32 value = 0;
	Kind kind = Kind::none;
};

// What t matches under c.fields, and the bytes to hash (into in, at most
// max_input; *len set). Kind::none: nothing to hash.
Kind classify(u64 fields, const Tuple &t, u8 *in, u32 *len);
Hash compute(const Config &c, const Tuple &t);

} // namespace sroce::rss

// RoCEv2 packet codec: IBTA headers in host byte order, a parser that cannot
// read past its buffer, and writers for the IB headers and the IPv4/IPv6 +
// UDP headers in front of them. The ICRC is in icrc.h.
//
// Errors are negative errnos with one meaning each (see ib_err / ip_err), so
// a receiver can count them and sroce-dump can name them.
#pragma once
#include "ktl/errno.h"
#include "ktl/result.h"
#include "ktl/span.h"
#include "ktl/types.h"
#include "opcode.h"

namespace sroce::ib {

constexpr u16 roce_udp_port = 4791;
constexpr u16 default_pkey = 0xffff;
constexpr u32 qpn_mask = 0x00ffffff;
constexpr u32 psn_mask = 0x00ffffff;

// ---- headers (host byte order; 24-bit fields are masked on write) ----------

struct Bth {
	u8 opcode = 0;
	bool se = false;
	bool mig = false;
	u8 pad = 0;  // 2 bits
	u8 tver = 0; // 4 bits
	u16 pkey = default_pkey;
	bool fecn = false;
	bool becn = false;
	u32 dest_qpn = 0; // 24 bits
	bool ack_req = false;
	u32 psn = 0; // 24 bits
};

struct Rdeth {
	u32 eecn = 0; // 24 bits
};

struct Deth {
	u32 qkey = 0;
	u32 src_qp = 0; // 24 bits
};

struct XrcEth {
	u32 srqn = 0; // 24 bits
};

// FLUSH (IBA 1.5): which placement the requester wants (bits 3..0: 1 global
// visibility, 2 persistence) and of what (bits 5..4: 0 the RETH's range, 1
// the whole memory region). The other bits are reserved.
namespace flush {
constexpr u8 global = 1 << 0;
constexpr u8 persistent = 1 << 1;
constexpr u8 level_range = 0;
constexpr u8 level_region = 1;
} // namespace flush
struct Feth {
	u8 placement = 0; // 4 bits
	u8 selectivity = 0; // 2 bits
};

struct Reth {
	u64 va = 0;
	u32 rkey = 0;
	u32 length = 0;
};

struct AtomicEth {
	u64 va = 0;
	u32 rkey = 0;
	u64 swap_add = 0;
	u64 compare = 0;
};

// AETH syndrome (IBTA 9.7.5.1): bits 6..5 select ACK / RNR NAK / NAK, bits
// 4..0 are the credit count, the RNR timer or the NAK code.
enum class AckKind : u8 { ack = 0, rnr_nak = 1, reserved = 2, nak = 3 };
enum class NakCode : u8 {
	psn_seq_err = 0,
	invalid_request = 1,
	remote_access = 2,
	remote_op = 3,
	invalid_rd_request = 4,
};
constexpr u8 aeth_credits_invalid = 31; // ACK credit code: no credit information

struct Aeth {
	u8 syndrome = 0;
	u32 msn = 0; // 24 bits

	AckKind kind() const { return AckKind((syndrome >> 5) & 3); }
	u8 value() const { return syndrome & 0x1f; }
	bool is_ack() const { return kind() == AckKind::ack; }
	bool is_rnr_nak() const { return kind() == AckKind::rnr_nak; }
	bool is_nak() const { return kind() == AckKind::nak; }
	u8 credit_code() const { return value(); }
	u8 rnr_timer() const { return value(); }
	NakCode nak_code() const { return NakCode(value()); }

	static constexpr u8 ack_syndrome(u8 credit_code) { return u8(credit_code & 0x1f); }
	static constexpr u8 rnr_syndrome(u8 timer) { return u8(0x20 | (timer & 0x1f)); }
	static constexpr u8 nak_syndrome(NakCode c) { return u8(0x60 | (u8(c) & 0x1f)); }
};

// Credits an ACK credit code grants (IBTA table 44); -1 for code 31 (none).
int aeth_credits(u8 credit_code);
// RNR NAK timer code to microseconds (IBTA table 45): 0 is 655.36 ms.
u32 rnr_timer_us(u8 timer);
// "ACK", "RNR_NAK", "NAK_PSN_SEQ_ERR", "NAK_INVALID_REQUEST",
// "NAK_REMOTE_ACCESS", "NAK_REMOTE_OP", "NAK_INVALID_RD_REQUEST",
// "NAK_RESERVED", "RESERVED".
const char *aeth_kind_name(const Aeth &a);

struct AtomicAckEth {
	u64 orig = 0;
};

struct ImmDt {
	u32 imm = 0; // the 4 wire bytes read big-endian
};

struct Ieth {
	u32 rkey = 0;
};

// The IB headers of one packet. Which extension headers are meaningful is
// given by opcode_info(bth.opcode).flags.
struct Headers {
	Bth bth;
	Rdeth rdeth;
	Deth deth;
	XrcEth xrceth;
	Feth feth;
	Reth reth;
	AtomicEth atomic_eth;
	Aeth aeth;
	AtomicAckEth atomic_ack_eth;
	ImmDt immdt;
	Ieth ieth;
};

// ---- IB part: BTH .. ICRC (the UDP payload) ----------------------------------

// Errors of parse_ib, one errno each.
namespace ib_err {
constexpr int truncated_bth = ktl::err::nodata;     // ENODATA: fewer than 12 bytes
constexpr int invalid_opcode = ktl::err::proto;     // EPROTO: reserved opcode
constexpr int truncated_ext = ktl::err::badmsg;     // EBADMSG: extension header cut
constexpr int bad_length = ktl::err::msgsize;       // EMSGSIZE: pad/ICRC do not fit,
						     // or payload on a no-payload opcode
} // namespace ib_err
// "truncated BTH", "invalid opcode", ... for a negative or positive errno.
const char *ib_error_name(int code);

struct PacketInfo {
	Headers hdr;
	u32 flags = 0;          // opcode_info(hdr.bth.opcode).flags
	u32 header_len = 0;     // BTH + extension headers
	u32 payload_offset = 0; // from BTH (== header_len)
	u32 payload_len = 0;    // without pad
	u8 pad = 0;
	u32 icrc_offset = 0; // from BTH
	u32 total_len = 0;   // BTH .. ICRC inclusive
};

// Parses the IB part. `ib` must hold at least the headers; `total_len` is
// the length of BTH..ICRC on the wire (the UDP payload length), which may
// exceed ib.size() when only the headers are linear or a capture was cut.
// Nothing beyond min(ib.size(), total_len) is read.
ktl::Result<PacketInfo> parse_ib(ktl::Span<const u8> ib, u32 total_len);
inline ktl::Result<PacketInfo> parse_ib(ktl::Span<const u8> ib) {
	return parse_ib(ib, ib.size() > 0xffffffffu ? 0xffffffffu : u32(ib.size()));
}

// Writes BTH and the extension headers of h.bth.opcode (length
// opcode_info().length; a CNP's 16 reserved bytes are zeroed). Returns the
// bytes written; -EINVAL for a reserved opcode, -ENOSPC when out is short.
ktl::Result<u32> write_ib_headers(const Headers &h, ktl::Span<u8> out);

// IB length (BTH..ICRC) of a packet of this opcode carrying `payload` bytes,
// and the pad count that aligns the payload to 4 bytes.
constexpr u8 pad_for(u32 payload) { return u8((4 - (payload & 3)) & 3); }
u32 ib_length(u8 opcode, u32 payload);

// ---- IPv4/IPv6 + UDP in front of BTH ------------------------------------------

// The addressing of a packet. Addresses are 16 bytes; IPv4 ones are
// IPv4-mapped (::ffff:a.b.c.d), as RoCEv2 GIDs are.
struct IpUdp {
	u8 ip_version = 4; // 4 or 6
	u8 src[16] = {};
	u8 dst[16] = {};
	u8 tclass = 0;      // IPv4 TOS / IPv6 traffic class
	u8 ttl = 64;        // IPv4 TTL / IPv6 hop limit
	u32 flow_label = 0; // IPv6 only, 20 bits
	u16 ip_id = 0;      // IPv4 only
	u16 sport = 0;
	u16 dport = roce_udp_port;
};

constexpr u32 ipv4_header_len = 20;
constexpr u32 ipv6_header_len = 40;
constexpr u32 udp_header_len = 8;
constexpr u32 ip_udp_len(u8 ip_version) {
	return (ip_version == 6 ? ipv6_header_len : ipv4_header_len) + udp_header_len;
}

// Errors of parse_ip_udp, one errno each.
namespace ip_err {
constexpr int truncated = ktl::err::nodata;   // ENODATA: IP or UDP header cut
constexpr int not_roce = ktl::err::proto;     // EPROTO: not IPv4/IPv6 + UDP, or a fragment
constexpr int bad_length = ktl::err::msgsize; // EMSGSIZE: IP/UDP lengths disagree
					       // with each other or the frame
} // namespace ip_err
const char *ip_error_name(int code);

struct IpUdpInfo {
	IpUdp addr;
	bool df = false;     // IPv4 don't-fragment
	u32 ip_header_len = 0; // with IPv4 options
	u32 ip_len = 0;      // IPv4 total length / IPv6 40 + payload length
	u16 udp_len = 0;
	u16 udp_csum = 0;
	u32 bth_offset = 0; // from the IP header
	u32 ib_len = 0;     // udp_len - 8: BTH..ICRC
};

// Parses the IP and UDP headers at the start of `pkt`. `wire_len` is the
// packet's length from the IP header on the wire (>= pkt.size() when a
// capture was cut; trailing link-layer padding beyond the IP length is
// allowed). The lengths in the headers are checked against it and against
// each other.
ktl::Result<IpUdpInfo> parse_ip_udp(ktl::Span<const u8> pkt, u32 wire_len);
inline ktl::Result<IpUdpInfo> parse_ip_udp(ktl::Span<const u8> pkt) {
	return parse_ip_udp(pkt, pkt.size() > 0xffffffffu ? 0xffffffffu : u32(pkt.size()));
}

// Writes IPv4 (DF set, header checksum filled) or IPv6, then UDP (checksum 0)
// for an IB part of ib_len bytes. Returns ip_udp_len(p.ip_version); -EINVAL
// for a bad version or a non-mapped IPv4 address, -EMSGSIZE when the lengths
// do not fit 16 bits, -ENOSPC when out is short.
ktl::Result<u32> write_ip_udp(const IpUdp &p, u32 ib_len, ktl::Span<u8> out);

// The IPv4 header checksum (RFC 1071) over len bytes, field included as is.
u16 ipv4_checksum(const u8 *hdr, u32 len);

} // namespace sroce::ib

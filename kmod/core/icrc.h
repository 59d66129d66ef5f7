// RoCEv2 invariant CRC (IBTA annex A17.3.3): CRC-32 (reflected IEEE, the
// kernel's crc32_le) over 8 bytes of 0xff standing in for the LRH, the IP
// and UDP headers with their variant fields set to ones (IPv4 TOS, TTL and
// header checksum; IPv6 traffic class, flow label and hop limit; the UDP
// checksum), BTH with its 8 reserved/FECN/BECN bits set to ones, then the
// rest of the IB part up to the ICRC field.
//
// Values are the IBTA's numeric form: the spec's sample packet has ICRC
// 0x9625B75A, stored big-endian on the wire (icrc_store/icrc_load).
//
// Linear packets: icrc_compute / icrc_check / icrc_fill. Non-linear ones:
//   u32 crc = TRY(icrc_begin(headers));        // masked IP/UDP/BTH, linear
//   crc = icrc_update(crc, rest, n);             // BTH+12 .. ICRC, any pieces
//   u32 icrc = icrc_finish(crc);
#pragma once
#include "env.h"
#include "ktl/byteorder.h"
#include "ktl/result.h"
#include "ktl/span.h"
#include "ktl/types.h"

namespace sroce::ib {

// crc32_le(~0, 8 x 0xff): the CRC state after the LRH stand-in.
constexpr u32 icrc_seed = 0xdebb20e3;

// Running CRC over the masked headers. `hdrs` starts at the IP header and
// holds at least IP + UDP + BTH. The caller continues at the byte after BTH
// (bth_offset + 12). Errors: -EPROTO when not IPv4/IPv6, -ENODATA when short.
ktl::Result<u32> icrc_begin(ktl::Span<const u8> hdrs);

inline u32 icrc_update(u32 crc, const void *p, usize n) {
	return sroce_env_crc32_le(crc, p, (unsigned long)n);
}

constexpr u32 icrc_finish(u32 crc) { return ktl::bswap32(~crc); }

inline u32 icrc_load(const u8 *p) { return ktl::get_be32(p); }
inline void icrc_store(u8 *p, u32 icrc) { ktl::put_be32(p, icrc); }

// Over a linear, complete packet starting at the IP header: lengths come
// from parse_ip_udp (its errors), and the IB part must hold BTH and ICRC.
ktl::Result<u32> icrc_compute(ktl::Span<const u8> pkt);
// -EBADMSG when the stored ICRC differs.
ktl::Result<void> icrc_check(ktl::Span<const u8> pkt);
// Computes and stores the ICRC in the last 4 bytes of the IB part.
ktl::Result<void> icrc_fill(ktl::Span<u8> pkt);

} // namespace sroce::ib

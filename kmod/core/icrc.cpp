// The RoCEv2 invariant CRC over a packet's masked headers and payload (icrc.h).
#include "icrc.h"

#include "ktl/errno.h"
#include "opcode.h"
#include "packet.h"

namespace sroce::ib {

using ktl::Error;
namespace err = ktl::err;

ktl::Result<u32> icrc_begin(ktl::Span<const u8> hdrs) {
	const u8 *p = hdrs.data();
	if (hdrs.size() < 1)
		return Error::from_errno(err::nodata);
	u32 ip_len;
	if ((p[0] >> 4) == 4)
		ip_len = u32(p[0] & 0x0f) * 4;
	else if ((p[0] >> 4) == 6)
		ip_len = ipv6_header_len;
	else
		return Error::from_errno(err::proto);
	if (ip_len < ipv4_header_len)
		return Error::from_errno(err::proto);
	u32 n = ip_len + udp_header_len + len::bth;
	if (hdrs.size() < n)
		return Error::from_errno(err::nodata);

	// Masked copy of the fixed IP header, then the IPv4 options as they are,
	// then UDP + BTH masked. The largest piece is 40 bytes.
	u8 buf[ipv6_header_len];
	u32 crc = icrc_seed;
	u32 fixed = (p[0] >> 4) == 4 ? ipv4_header_len : ipv6_header_len;
	for (u32 i = 0; i < fixed; i++)
		buf[i] = p[i];
	if (fixed == ipv4_header_len) {
		buf[1] = 0xff;  // TOS
		buf[8] = 0xff;  // TTL
		buf[10] = 0xff; // header checksum
		buf[11] = 0xff;
	} else {
		buf[0] |= 0x0f; // traffic class, flow label
		buf[1] = 0xff;
		buf[2] = 0xff;
		buf[3] = 0xff;
		buf[7] = 0xff; // hop limit
	}
	crc = icrc_update(crc, buf, fixed);
	if (ip_len > fixed)
		crc = icrc_update(crc, p + fixed, ip_len - fixed);
	for (u32 i = 0; i < udp_header_len + len::bth; i++)
		buf[i] = p[ip_len + i];
	buf[6] = 0xff; // UDP checksum
	buf[7] = 0xff;
	buf[udp_header_len + 4] = 0xff; // BTH FECN, BECN, resv6a
	return icrc_update(crc, buf, udp_header_len + len::bth);
}

namespace {

// The IB part's extent in a linear packet, validated.
ktl::Result<IpUdpInfo> locate(ktl::Span<const u8> pkt) {
	IpUdpInfo ip = TRY(parse_ip_udp(pkt));
	if (ip.ib_len < len::bth + len::icrc)
		return Error::from_errno(err::msgsize);
	return ip;
}

u32 compute(ktl::Span<const u8> pkt, const IpUdpInfo &ip, u32 crc) {
	u32 rest = ip.bth_offset + len::bth;
	u32 icrc_at = ip.bth_offset + ip.ib_len - len::icrc;
	return icrc_finish(icrc_update(crc, pkt.data() + rest, icrc_at - rest));
}

} // namespace

ktl::Result<u32> icrc_compute(ktl::Span<const u8> pkt) {
	IpUdpInfo ip = TRY(locate(pkt));
	u32 crc = TRY(icrc_begin(pkt));
	return compute(pkt, ip, crc);
}

ktl::Result<void> icrc_check(ktl::Span<const u8> pkt) {
	IpUdpInfo ip = TRY(locate(pkt));
	u32 crc = TRY(icrc_begin(pkt));
	u32 want = compute(pkt, ip, crc);
	if (icrc_load(pkt.data() + ip.bth_offset + ip.ib_len - len::icrc) != want)
		return Error::from_errno(err::badmsg);
	return {};
}

ktl::Result<void> icrc_fill(ktl::Span<u8> pkt) {
	ktl::Span<const u8> c(pkt.data(), pkt.size());
	IpUdpInfo ip = TRY(locate(c));
	u32 crc = TRY(icrc_begin(c));
	icrc_store(pkt.data() + ip.bth_offset + ip.ib_len - len::icrc, compute(c, ip, crc));
	return {};
}

} // namespace sroce::ib

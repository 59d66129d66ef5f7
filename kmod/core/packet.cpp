// The packet codec: parsing IB headers bounded by the buffer, writing IP/UDP/IB headers (packet.h).
#include "packet.h"

#include "ktl/byteorder.h"

namespace sroce::ib {

using ktl::Error;
using ktl::get_be16;
using ktl::get_be24;
using ktl::get_be32;
using ktl::get_be64;
using ktl::put_be16;
using ktl::put_be24;
using ktl::put_be32;
using ktl::put_be64;
namespace err = ktl::err;

namespace {

Error fail(int e) { return Error::from_errno(e); }

int positive(int code) { return code < 0 ? -code : code; }

// Offsets inside BTH.
constexpr u32 bth_flags = 1;
constexpr u32 bth_pkey = 2;
constexpr u32 bth_fb = 4; // FECN, BECN, 6 reserved bits
constexpr u32 bth_qpn = 5;
constexpr u32 bth_ack = 8; // AckReq, 7 reserved bits
constexpr u32 bth_psn = 9;

void read_bth(const u8 *p, Bth *b) {
	b->opcode = p[0];
	b->se = p[bth_flags] & 0x80;
	b->mig = p[bth_flags] & 0x40;
	b->pad = (p[bth_flags] >> 4) & 3;
	b->tver = p[bth_flags] & 0x0f;
	b->pkey = get_be16(p + bth_pkey);
	b->fecn = p[bth_fb] & 0x80;
	b->becn = p[bth_fb] & 0x40;
	b->dest_qpn = get_be24(p + bth_qpn);
	b->ack_req = p[bth_ack] & 0x80;
	b->psn = get_be24(p + bth_psn);
}

void write_bth(u8 *p, const Bth &b) {
	p[0] = b.opcode;
	p[bth_flags] = u8((b.se ? 0x80 : 0) | (b.mig ? 0x40 : 0) | (b.pad & 3) << 4 | (b.tver & 0x0f));
	put_be16(p + bth_pkey, b.pkey);
	p[bth_fb] = u8((b.fecn ? 0x80 : 0) | (b.becn ? 0x40 : 0));
	put_be24(p + bth_qpn, b.dest_qpn & qpn_mask);
	p[bth_ack] = b.ack_req ? 0x80 : 0;
	put_be24(p + bth_psn, b.psn & psn_mask);
}

// Reads the extension headers present in `flags`; p points at BTH and the
// caller has checked that opcode_info().length bytes are there.
void read_ext(const u8 *bth, u8 opcode, u32 flags, Headers *h) {
	if (flags & op_rdeth)
		h->rdeth.eecn = get_be24(bth + ext_offset(opcode, op_rdeth) + 1);
	if (flags & op_deth) {
		const u8 *p = bth + ext_offset(opcode, op_deth);
		h->deth.qkey = get_be32(p);
		h->deth.src_qp = get_be24(p + 5);
	}
	if (flags & op_xrceth)
		h->xrceth.srqn = get_be24(bth + ext_offset(opcode, op_xrceth) + 1);
	if (flags & op_feth) {
		u32 v = get_be32(bth + ext_offset(opcode, op_feth));
		h->feth.placement = u8(v & 0xf);
		h->feth.selectivity = u8((v >> 4) & 3);
	}
	if (flags & op_reth) {
		const u8 *p = bth + ext_offset(opcode, op_reth);
		h->reth.va = get_be64(p);
		h->reth.rkey = get_be32(p + 8);
		h->reth.length = get_be32(p + 12);
	}
	if (flags & op_atomic_eth) {
		const u8 *p = bth + ext_offset(opcode, op_atomic_eth);
		h->atomic_eth.va = get_be64(p);
		h->atomic_eth.rkey = get_be32(p + 8);
		h->atomic_eth.swap_add = get_be64(p + 12);
		h->atomic_eth.compare = get_be64(p + 20);
	}
	if (flags & op_aeth) {
		const u8 *p = bth + ext_offset(opcode, op_aeth);
		h->aeth.syndrome = p[0];
		h->aeth.msn = get_be24(p + 1);
	}
	if (flags & op_atomic_ack_eth)
		h->atomic_ack_eth.orig = get_be64(bth + ext_offset(opcode, op_atomic_ack_eth));
	if (flags & op_immdt)
		h->immdt.imm = get_be32(bth + ext_offset(opcode, op_immdt));
	if (flags & op_ieth)
		h->ieth.rkey = get_be32(bth + ext_offset(opcode, op_ieth));
}

void write_ext(u8 *bth, u8 opcode, u32 flags, const Headers &h) {
	if (flags & op_rdeth) {
		u8 *p = bth + ext_offset(opcode, op_rdeth);
		p[0] = 0;
		put_be24(p + 1, h.rdeth.eecn & 0xffffff);
	}
	if (flags & op_deth) {
		u8 *p = bth + ext_offset(opcode, op_deth);
		put_be32(p, h.deth.qkey);
		p[4] = 0;
		put_be24(p + 5, h.deth.src_qp & qpn_mask);
	}
	if (flags & op_xrceth) {
		u8 *p = bth + ext_offset(opcode, op_xrceth);
		p[0] = 0;
		put_be24(p + 1, h.xrceth.srqn & 0xffffff);
	}
	if (flags & op_feth)
		put_be32(bth + ext_offset(opcode, op_feth), u32(h.feth.placement & 0xf) | u32(h.feth.selectivity & 3) << 4);
	if (flags & op_reth) {
		u8 *p = bth + ext_offset(opcode, op_reth);
		put_be64(p, h.reth.va);
		put_be32(p + 8, h.reth.rkey);
		put_be32(p + 12, h.reth.length);
	}
	if (flags & op_atomic_eth) {
		u8 *p = bth + ext_offset(opcode, op_atomic_eth);
		put_be64(p, h.atomic_eth.va);
		put_be32(p + 8, h.atomic_eth.rkey);
		put_be64(p + 12, h.atomic_eth.swap_add);
		put_be64(p + 20, h.atomic_eth.compare);
	}
	if (flags & op_aeth) {
		u8 *p = bth + ext_offset(opcode, op_aeth);
		p[0] = h.aeth.syndrome;
		put_be24(p + 1, h.aeth.msn & 0xffffff);
	}
	if (flags & op_atomic_ack_eth)
		put_be64(bth + ext_offset(opcode, op_atomic_ack_eth), h.atomic_ack_eth.orig);
	if (flags & op_immdt)
		put_be32(bth + ext_offset(opcode, op_immdt), h.immdt.imm);
	if (flags & op_ieth)
		put_be32(bth + ext_offset(opcode, op_ieth), h.ieth.rkey);
}

void zero(u8 *p, u32 n) {
	for (u32 i = 0; i < n; i++)
		p[i] = 0;
}

} // namespace

// ---- AETH -------------------------------------------------------------------

int aeth_credits(u8 code) {
	// 0..4 are exact; above that the values alternate 2^k and 3*2^(k-1).
	static constexpr u16 credits[31] = {0,    1,    2,    3,     4,     6,     8,    12,
					     16,   24,   32,   48,    64,    96,    128,  192,
					     256,  384,  512,  768,   1024,  1536,  2048, 3072,
					     4096, 6144, 8192, 12288, 16384, 24576, 32768};
	return code < 31 ? credits[code] : -1;
}

u32 rnr_timer_us(u8 timer) {
	static constexpr u32 us[32] = {655360, 10,    20,    30,    40,     60,     80,     120,
				       160,    240,   320,   480,   640,    960,    1280,   1920,
				       2560,   3840,  5120,  7680,  10240,  15360,  20480,  30720,
				       40960,  61440, 81920, 122880, 163840, 245760, 327680, 491520};
	return us[timer & 31];
}

const char *aeth_kind_name(const Aeth &a) {
	switch (a.kind()) {
	case AckKind::ack:
		return "ACK";
	case AckKind::rnr_nak:
		return "RNR_NAK";
	case AckKind::nak:
		switch (a.value()) {
		case u8(NakCode::psn_seq_err):
			return "NAK_PSN_SEQ_ERR";
		case u8(NakCode::invalid_request):
			return "NAK_INVALID_REQUEST";
		case u8(NakCode::remote_access):
			return "NAK_REMOTE_ACCESS";
		case u8(NakCode::remote_op):
			return "NAK_REMOTE_OP";
		case u8(NakCode::invalid_rd_request):
			return "NAK_INVALID_RD_REQUEST";
		default:
			return "NAK_RESERVED";
		}
	default:
		return "RESERVED";
	}
}

// ---- IB part ------------------------------------------------------------------

const char *ib_error_name(int code) {
	switch (positive(code)) {
	case ib_err::truncated_bth:
		return "truncated BTH";
	case ib_err::invalid_opcode:
		return "invalid opcode";
	case ib_err::truncated_ext:
		return "truncated extension header";
	case ib_err::bad_length:
		return "bad length";
	default:
		return "error";
	}
}

ktl::Result<PacketInfo> parse_ib(ktl::Span<const u8> ib, u32 total_len) {
	// What may be read: the bytes present, never beyond the packet.
	usize avail = ib.size() < total_len ? ib.size() : total_len;
	if (avail < len::bth)
		return fail(ib_err::truncated_bth);
	PacketInfo pi;
	read_bth(ib.data(), &pi.hdr.bth);
	const OpcodeInfo &oi = opcode_info(pi.hdr.bth.opcode);
	if (!(oi.flags & op_valid))
		return fail(ib_err::invalid_opcode);
	if (avail < oi.length)
		return fail(ib_err::truncated_ext);
	read_ext(ib.data(), pi.hdr.bth.opcode, oi.flags, &pi.hdr);

	pi.flags = oi.flags;
	pi.header_len = oi.length;
	pi.payload_offset = oi.length;
	pi.pad = pi.hdr.bth.pad;
	pi.total_len = total_len;
	// total_len >= header + pad + ICRC, all small: no overflow in u32.
	u32 fixed = oi.length + pi.pad + len::icrc;
	if (total_len < fixed)
		return fail(ib_err::bad_length);
	pi.payload_len = total_len - fixed;
	if (!(oi.flags & op_payload) && (pi.payload_len || pi.pad))
		return fail(ib_err::bad_length);
	// No MTU is larger: such a packet is malformed for every QP type. The
	// QP checks its own path MTU (RC, UC); this bound is what UD and the
	// multi-packet WQEs rely on (SROCE_MP_WR_MIN_BUFFER holds any packet).
	if (pi.payload_len > len::max_payload)
		return fail(ib_err::bad_length);
	pi.icrc_offset = total_len - len::icrc;
	return pi;
}

u32 ib_length(u8 opcode, u32 payload) {
	return opcode_info(opcode).length + payload + pad_for(payload) + len::icrc;
}

ktl::Result<u32> write_ib_headers(const Headers &h, ktl::Span<u8> out) {
	const OpcodeInfo &oi = opcode_info(h.bth.opcode);
	if (!(oi.flags & op_valid))
		return fail(err::inval);
	if (out.size() < oi.length)
		return fail(err::nospc);
	u8 *p = out.data();
	write_bth(p, h.bth);
	if (oi.flags & op_cnp)
		zero(p + len::bth, oi.length - len::bth);
	write_ext(p, h.bth.opcode, oi.flags, h);
	return u32(oi.length);
}

// ---- IPv4/IPv6 + UDP -----------------------------------------------------------

namespace {

constexpr u8 ipproto_udp = 17;
constexpr u8 v4_mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

void copy(u8 *d, const u8 *s, u32 n) {
	for (u32 i = 0; i < n; i++)
		d[i] = s[i];
}

bool is_v4_mapped(const u8 a[16]) {
	for (u32 i = 0; i < 12; i++)
		if (a[i] != v4_mapped_prefix[i])
			return false;
	return true;
}

} // namespace

const char *ip_error_name(int code) {
	switch (positive(code)) {
	case ip_err::truncated:
		return "truncated IP/UDP header";
	case ip_err::not_roce:
		return "not IP/UDP";
	case ip_err::bad_length:
		return "IP/UDP length mismatch";
	default:
		return "error";
	}
}

u16 ipv4_checksum(const u8 *hdr, u32 n) {
	u32 sum = 0;
	for (u32 i = 0; i + 1 < n; i += 2)
		sum += get_be16(hdr + i);
	if (n & 1)
		sum += u32(hdr[n - 1]) << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return u16(~sum);
}

ktl::Result<IpUdpInfo> parse_ip_udp(ktl::Span<const u8> pkt, u32 wire_len) {
	usize avail = pkt.size() < wire_len ? pkt.size() : wire_len;
	const u8 *p = pkt.data();
	if (avail < 1)
		return fail(ip_err::truncated);
	IpUdpInfo r;
	u32 ip_payload;
	if ((p[0] >> 4) == 4) {
		if (avail < ipv4_header_len)
			return fail(ip_err::truncated);
		u32 ihl = u32(p[0] & 0x0f) * 4;
		if (ihl < ipv4_header_len)
			return fail(ip_err::not_roce);
		if (p[9] != ipproto_udp)
			return fail(ip_err::not_roce);
		u16 frag = get_be16(p + 6);
		if (frag & 0x3fff) // MF or an offset: a fragment
			return fail(ip_err::not_roce);
		u32 total = get_be16(p + 2);
		if (total < ihl + udp_header_len || total > wire_len)
			return fail(ip_err::bad_length);
		if (avail < ihl + udp_header_len)
			return fail(ip_err::truncated);
		r.addr.ip_version = 4;
		copy(r.addr.src, v4_mapped_prefix, 12);
		copy(r.addr.src + 12, p + 12, 4);
		copy(r.addr.dst, v4_mapped_prefix, 12);
		copy(r.addr.dst + 12, p + 16, 4);
		r.addr.tclass = p[1];
		r.addr.ttl = p[8];
		r.addr.ip_id = get_be16(p + 4);
		r.df = frag & 0x4000;
		r.ip_header_len = ihl;
		r.ip_len = total;
		ip_payload = total - ihl;
	} else if ((p[0] >> 4) == 6) {
		if (avail < ipv6_header_len)
			return fail(ip_err::truncated);
		// Extension headers are not RoCEv2: UDP must follow directly.
		if (p[6] != ipproto_udp)
			return fail(ip_err::not_roce);
		u32 plen = get_be16(p + 4);
		if (plen < udp_header_len || ipv6_header_len + plen > wire_len)
			return fail(ip_err::bad_length);
		if (avail < ipv6_header_len + udp_header_len)
			return fail(ip_err::truncated);
		r.addr.ip_version = 6;
		r.addr.tclass = u8((p[0] & 0x0f) << 4 | p[1] >> 4);
		r.addr.flow_label = u32(p[1] & 0x0f) << 16 | get_be16(p + 2);
		r.addr.ttl = p[7];
		copy(r.addr.src, p + 8, 16);
		copy(r.addr.dst, p + 24, 16);
		r.ip_header_len = ipv6_header_len;
		r.ip_len = ipv6_header_len + plen;
		ip_payload = plen;
	} else {
		return fail(ip_err::not_roce);
	}
	const u8 *u = p + r.ip_header_len;
	r.addr.sport = get_be16(u);
	r.addr.dport = get_be16(u + 2);
	r.udp_len = get_be16(u + 4);
	r.udp_csum = get_be16(u + 6);
	// UDP must fill the IP payload exactly: anything else is two length
	// fields that disagree.
	if (r.udp_len != ip_payload)
		return fail(ip_err::bad_length);
	r.bth_offset = r.ip_header_len + udp_header_len;
	r.ib_len = r.udp_len - udp_header_len;
	return r;
}

ktl::Result<u32> write_ip_udp(const IpUdp &a, u32 ib_len, ktl::Span<u8> out) {
	if (a.ip_version != 4 && a.ip_version != 6)
		return fail(err::inval);
	u32 hlen = ip_udp_len(a.ip_version);
	if (ib_len > 0xffff - hlen)
		return fail(err::msgsize);
	if (out.size() < hlen)
		return fail(err::nospc);
	u8 *p = out.data();
	u32 udp_len = udp_header_len + ib_len;
	if (a.ip_version == 4) {
		if (!is_v4_mapped(a.src) || !is_v4_mapped(a.dst))
			return fail(err::inval);
		p[0] = 0x45;
		p[1] = a.tclass;
		put_be16(p + 2, u16(ipv4_header_len + udp_len));
		put_be16(p + 4, a.ip_id);
		put_be16(p + 6, 0x4000); // DF: RoCE packets are never fragmented
		p[8] = a.ttl;
		p[9] = ipproto_udp;
		put_be16(p + 10, 0);
		copy(p + 12, a.src + 12, 4);
		copy(p + 16, a.dst + 12, 4);
		put_be16(p + 10, ipv4_checksum(p, ipv4_header_len));
	} else {
		u32 fl = a.flow_label & 0xfffff;
		p[0] = u8(0x60 | a.tclass >> 4);
		p[1] = u8((a.tclass & 0x0f) << 4 | fl >> 16);
		put_be16(p + 2, u16(fl));
		put_be16(p + 4, u16(udp_len));
		p[6] = ipproto_udp;
		p[7] = a.ttl;
		copy(p + 8, a.src, 16);
		copy(p + 24, a.dst, 16);
	}
	u8 *u = p + hlen - udp_header_len;
	put_be16(u, a.sport);
	put_be16(u + 2, a.dport);
	put_be16(u + 4, u16(udp_len));
	put_be16(u + 6, 0);
	return hlen;
}

} // namespace sroce::ib

#include "decode.h"

#include <arpa/inet.h>

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <ctime>

namespace sroce_dump {

using namespace sroce::ib;

namespace {

constexpr int dlt_en10mb = 1;
constexpr int dlt_raw = 12; // DLT_RAW on Linux
constexpr int linktype_raw = 101;
constexpr int dlt_linux_sll = 113;
constexpr int dlt_ipv4 = 228;
constexpr int dlt_ipv6 = 229;
constexpr int dlt_linux_sll2 = 276;

uint16_t be16(const uint8_t *p) { return uint16_t(p[0] << 8 | p[1]); }

// Up to two VLAN tags (TPIDs as libpcap's "vlan" knows them) before the
// protocol field et, which ends at off: moves both past them. False when
// the capture ends inside a tag.
bool skip_vlan_tags(const uint8_t *d, uint32_t caplen, uint16_t *et, uint32_t *off) {
	for (int tags = 0; (*et == 0x8100 || *et == 0x88a8 || *et == 0x9100) && tags < 2; tags++) {
		if (caplen < *off + 4)
			return false;
		*et = be16(d + *off + 2);
		*off += 4;
	}
	return true;
}

// Offset of the IP header, or -1 when the frame does not carry IP.
long ip_offset(int linktype, const uint8_t *d, uint32_t caplen) {
	uint32_t off;
	uint16_t et;
	switch (linktype) {
	case dlt_en10mb:
		if (caplen < 14)
			return -1;
		et = be16(d + 12);
		off = 14;
		if (!skip_vlan_tags(d, caplen, &et, &off))
			return -1;
		break;
	case dlt_linux_sll:
		if (caplen < 16)
			return -1;
		et = be16(d + 14);
		off = 16;
		// A live capture re-inserts the tag the kernel stripped at the
		// protocol field: TPID, TCI, then the protocol (libpcap's
		// set_vlan_offset).
		if (!skip_vlan_tags(d, caplen, &et, &off))
			return -1;
		break;
	case dlt_linux_sll2:
		if (caplen < 20)
			return -1;
		et = be16(d);
		off = 20;
		break;
	case dlt_raw:
	case linktype_raw:
	case dlt_ipv4:
	case dlt_ipv6:
		if (caplen < 1)
			return -1;
		et = (d[0] >> 4) == 6 ? 0x86dd : 0x0800;
		off = 0;
		break;
	default:
		return -1;
	}
	if (et != 0x0800 && et != 0x86dd)
		return -1;
	return off;
}

std::string addr_str(const IpUdp &a, bool src) {
	const uint8_t *x = src ? a.src : a.dst;
	char buf[INET6_ADDRSTRLEN];
	if (a.ip_version == 4)
		inet_ntop(AF_INET, x + 12, buf, sizeof(buf));
	else
		inet_ntop(AF_INET6, x, buf, sizeof(buf));
	return buf;
}

std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char *f, ...) {
	char buf[256];
	va_list ap;
	va_start(ap, f);
	vsnprintf(buf, sizeof(buf), f, ap);
	va_end(ap);
	return buf;
}

} // namespace

const char *icrc_verdict_name(IcrcVerdict v) {
	switch (v) {
	case IcrcVerdict::ok:
		return "ok";
	case IcrcVerdict::bad:
		return "BAD";
	case IcrcVerdict::unverifiable:
		return "unverifiable";
	default:
		return "-";
	}
}

Decoded decode_frame(int linktype, const uint8_t *data, uint32_t caplen, uint32_t wirelen) {
	Decoded d;
	d.caplen = caplen;
	d.wirelen = wirelen < caplen ? caplen : wirelen;
	long off = ip_offset(linktype, data, caplen);
	if (off < 0)
		return d;
	d.ip = true;
	d.ip_offset = uint32_t(off);
	uint32_t ip_cap = caplen - uint32_t(off);
	uint32_t ip_wire = d.wirelen - uint32_t(off);
	const uint8_t *ip = data + off;
	bool cut = caplen < d.wirelen;

	auto net = parse_ip_udp(ktl::Span<const u8>(ip, ip_cap), ip_wire);
	if (net.is_error()) {
		d.error = ip_error_name(net.error().code());
		if (net.error().code() == -ip_err::truncated && cut)
			d.error += " (cut by snaplen)";
		return d;
	}
	d.ip_ok = true;
	d.net = net.value();
	const IpUdpInfo &n = d.net;
	uint32_t ib_cap = ip_cap > n.bth_offset ? ip_cap - n.bth_offset : 0;
	if (ib_cap > n.ib_len)
		ib_cap = n.ib_len;
	const uint8_t *ib = ip + n.bth_offset;
	if (ib_cap >= len::bth) {
		d.have_bth = true;
		d.opcode = ib[0];
	}

	auto pi = parse_ib(ktl::Span<const u8>(ib, ib_cap), n.ib_len);
	if (pi.is_error()) {
		int e = pi.error().code();
		d.error = ib_error_name(e);
		if (e == -ib_err::invalid_opcode)
			d.error += fmt(" 0x%02x", d.opcode);
		else if ((e == -ib_err::truncated_bth || e == -ib_err::truncated_ext) && ib_cap < n.ib_len)
			d.error += " (cut by snaplen)";
	} else {
		d.ib_ok = true;
		d.pkt = pi.value();
	}

	// The ICRC does not depend on the opcode, so even a malformed IB part
	// gets a verdict when its bytes are all there.
	if (n.ib_len < len::bth + len::icrc)
		d.icrc = IcrcVerdict::none;
	else if (ip_cap < n.ip_len)
		d.icrc = IcrcVerdict::unverifiable;
	else {
		ktl::Span<const u8> whole(ip, n.ip_len);
		auto c = icrc_compute(whole);
		if (c.is_error()) {
			d.icrc = IcrcVerdict::none;
		} else {
			d.icrc_calc = c.value();
			d.icrc_wire = icrc_load(ip + n.bth_offset + n.ib_len - len::icrc);
			d.icrc = d.icrc_calc == d.icrc_wire ? IcrcVerdict::ok : IcrcVerdict::bad;
		}
	}
	return d;
}

// ---- packet trains ---------------------------------------------------------------

namespace {

using ktl::get_be16;
using ktl::get_be32;
using ktl::put_be16;

// Segment k of a train: the frame's link-layer and IP/UDP headers made the
// segment's, then the IB bytes [at, at + len) of the datagram.
std::vector<uint8_t> train_segment(const uint8_t *data, uint32_t ip_off, const IpUdpInfo &n, uint32_t k,
				   uint32_t at, uint32_t len) {
	const uint8_t *ip = data + ip_off;
	std::vector<uint8_t> f(data, ip + n.bth_offset);
	uint8_t *h = f.data() + ip_off;
	uint32_t udp_len = udp_header_len + len;
	if (n.addr.ip_version == 4) {
		put_be16(h + 2, u16(n.ip_header_len + udp_len));
		put_be16(h + 4, u16(get_be16(ip + 4) + k));
		put_be16(h + 10, 0);
		put_be16(h + 10, ipv4_checksum(h, n.ip_header_len));
	} else {
		put_be16(h + 4, u16(udp_len));
	}
	uint8_t *u = h + n.bth_offset - udp_header_len;
	put_be16(u + 4, u16(udp_len));
	put_be16(u + 6, 0);
	f.insert(f.end(), ip + n.bth_offset + at, ip + n.bth_offset + at + len);
	return f;
}

bool icrc_checks(const std::vector<uint8_t> &f, uint32_t ip_off) {
	ktl::Span<const u8> pkt(f.data() + ip_off, uint32_t(f.size()) - ip_off);
	auto c = icrc_compute(pkt);
	return !c.is_error() && c.value() == icrc_load(f.data() + f.size() - len::icrc);
}

} // namespace

std::vector<std::vector<uint8_t>> split_train(int linktype, const uint8_t *data, uint32_t caplen,
					      uint32_t wirelen) {
	std::vector<std::vector<uint8_t>> out;
	long off = ip_offset(linktype, data, caplen);
	if (off < 0 || caplen < wirelen)
		return out;
	uint32_t ip_off = uint32_t(off), ip_cap = caplen - ip_off;
	auto net = parse_ip_udp(ktl::Span<const u8>(data + ip_off, ip_cap), ip_cap);
	if (net.is_error())
		return out;
	const IpUdpInfo &n = net.value();
	const uint8_t *ib = data + ip_off + n.bth_offset;
	constexpr uint32_t min_pkt = len::bth + len::icrc;
	if (ip_cap < n.ip_len || n.ib_len < 2 * min_pkt)
		return out;
	auto whole = icrc_compute(ktl::Span<const u8>(data + ip_off, n.ip_len));
	if (!whole.is_error() && whole.value() == icrc_load(ib + n.ib_len - len::icrc))
		return out; // one packet, and a good one
	u32 psn1 = (get_be32(ib + 8) + 1) & 0xffffff;
	// A crafted frame may look like a BTH every 4 bytes: a bounded number
	// of ICRCs, each over at most the frame, keeps a capture fed.
	int tries = 8;
	for (uint32_t p = min_pkt; p + min_pkt <= n.ib_len && tries > 0; p += 4) {
		const uint8_t *b = ib + p;
		// The next BTH: same P_Key and QP, the next PSN (what the
		// sender's train check required of every packet).
		if (get_be16(b + 2) != get_be16(ib + 2) || (get_be32(b + 4) & 0xffffff) != (get_be32(ib + 4) & 0xffffff) ||
		    (get_be32(b + 8) & 0xffffff) != psn1)
			continue;
		tries--;
		auto first = train_segment(data, ip_off, n, 0, 0, p);
		if (!icrc_checks(first, ip_off))
			continue;
		out.push_back(std::move(first));
		for (uint32_t at = p, k = 1; at < n.ib_len; at += p, k++)
			out.push_back(train_segment(data, ip_off, n, k, at, n.ib_len - at < p ? n.ib_len - at : p));
		return out;
	}
	return out;
}

// ---- text -----------------------------------------------------------------------

namespace {

std::string time_str(const timeval &ts, bool epoch) {
	if (epoch)
		return fmt("%lld.%06ld", (long long)ts.tv_sec, (long)ts.tv_usec);
	struct tm tm;
	time_t t = ts.tv_sec;
	localtime_r(&t, &tm);
	return fmt("%02d:%02d:%02d.%06ld", tm.tm_hour, tm.tm_min, tm.tm_sec, (long)ts.tv_usec);
}

std::string aeth_text(const Aeth &a) {
	std::string s = fmt("aeth %s", aeth_kind_name(a));
	if (a.is_ack()) {
		int c = aeth_credits(a.credit_code());
		s += c < 0 ? std::string(" credits none") : fmt(" credits %d", c);
	} else if (a.is_rnr_nak()) {
		s += fmt(" timer %u (%u us)", a.rnr_timer(), rnr_timer_us(a.rnr_timer()));
	}
	return s + fmt(" msn %u", a.msn);
}

} // namespace

std::string format_text(const Decoded &d, const timeval &ts, const FormatOptions &o) {
	std::string s = time_str(ts, o.epoch_time);
	if (!d.ip)
		return s + " non-IP frame";
	if (!d.ip_ok)
		return s + " IP malformed: " + d.error + fmt(", length %u", d.wirelen);
	const IpUdpInfo &n = d.net;
	s += n.addr.ip_version == 4 ? " IP " : " IP6 ";
	s += addr_str(n.addr, true) + fmt(".%u > ", n.addr.sport) + addr_str(n.addr, false) +
	     fmt(".%u: ", n.addr.dport);
	if (d.ib_ok) {
		const Headers &h = d.pkt.hdr;
		const Bth &b = h.bth;
		u32 f = d.pkt.flags;
		s += fmt("%s qp 0x%06x psn %u", opcode_name(b.opcode), b.dest_qpn, b.psn);
		if (b.ack_req)
			s += " ackreq";
		if (b.se)
			s += " se";
		if (b.mig)
			s += " mig";
		if (b.fecn)
			s += " fecn";
		if (b.becn)
			s += " becn";
		if (b.pkey != default_pkey)
			s += fmt(" pkey 0x%04x", b.pkey);
		if (b.tver)
			s += fmt(" tver %u", b.tver);
		if (f & op_rdeth)
			s += fmt(", rdeth eecn 0x%06x", h.rdeth.eecn);
		if (f & op_deth)
			s += fmt(", deth qkey 0x%08x src_qp 0x%06x", h.deth.qkey, h.deth.src_qp);
		if (f & op_xrceth)
			s += fmt(", xrceth srqn 0x%06x", h.xrceth.srqn);
		if (f & op_feth)
			s += fmt(", feth placement 0x%x level %u", h.feth.placement, h.feth.selectivity);
		if (f & op_reth)
			s += fmt(", reth va 0x%" PRIx64 " rkey 0x%08x len %u", uint64_t(h.reth.va),
				 h.reth.rkey, h.reth.length);
		if (f & op_atomic_eth)
			s += fmt(", atomiceth va 0x%" PRIx64 " rkey 0x%08x swap_add 0x%" PRIx64
				 " compare 0x%" PRIx64,
				 uint64_t(h.atomic_eth.va), h.atomic_eth.rkey,
				 uint64_t(h.atomic_eth.swap_add), uint64_t(h.atomic_eth.compare));
		if (f & op_aeth)
			s += ", " + aeth_text(h.aeth);
		if (f & op_atomic_ack_eth)
			s += fmt(", atomicacketh orig 0x%" PRIx64, uint64_t(h.atomic_ack_eth.orig));
		if (f & op_immdt)
			s += fmt(", imm 0x%08x", h.immdt.imm);
		if (f & op_ieth)
			s += fmt(", ieth rkey 0x%08x", h.ieth.rkey);
		s += fmt(", payload %u", d.pkt.payload_len);
		if (d.pkt.pad)
			s += fmt(" pad %u", d.pkt.pad);
	} else {
		if (d.have_bth)
			s += fmt("%s ", opcode_name(d.opcode));
		s += "malformed: " + d.error;
	}
	s += fmt(", length %u", d.wirelen);
	if (d.caplen < d.wirelen)
		s += fmt(" (captured %u)", d.caplen);
	s += std::string(", icrc ") + icrc_verdict_name(d.icrc);
	if (d.icrc == IcrcVerdict::bad)
		s += fmt(" (0x%08x, expected 0x%08x)", d.icrc_wire, d.icrc_calc);
	if (d.train_len)
		s += fmt(", train %u/%u", d.train_seg, d.train_len);
	return s;
}

// ---- JSON ------------------------------------------------------------------------

namespace {

struct Json {
	std::string s = "{";
	bool first = true;
	void key(const char *k) {
		if (!first)
			s += ',';
		first = false;
		s += '"';
		s += k;
		s += "\":";
	}
	void num(const char *k, uint64_t v) {
		key(k);
		s += fmt("%" PRIu64, v);
	}
	void boolean(const char *k, bool v) {
		key(k);
		s += v ? "true" : "false";
	}
	// Only fixed ASCII strings from the codec and addresses: no escaping
	// beyond quotes and backslashes is ever needed.
	void str(const char *k, const std::string &v) {
		key(k);
		s += '"';
		for (char c : v) {
			if (c == '"' || c == '\\')
				s += '\\';
			s += c;
		}
		s += '"';
	}
	void hex64(const char *k, uint64_t v) { str(k, fmt("0x%016" PRIx64, v)); }
	void open(const char *k) {
		key(k);
		s += '{';
		first = true;
	}
	void close() {
		s += '}';
		first = false;
	}
	std::string done() { return s + '}'; }
};

} // namespace

std::string format_json(const Decoded &d, const timeval &ts) {
	Json j;
	j.str("time", fmt("%lld.%06ld", (long long)ts.tv_sec, (long)ts.tv_usec));
	j.num("length", d.wirelen);
	j.num("caplen", d.caplen);
	if (!d.ip) {
		j.boolean("ip", false);
		return j.done();
	}
	if (d.ip_ok) {
		const IpUdp &a = d.net.addr;
		j.num("ip_version", a.ip_version);
		j.str("src", addr_str(a, true));
		j.str("dst", addr_str(a, false));
		j.num("sport", a.sport);
		j.num("dport", a.dport);
		j.num("tclass", a.tclass);
		j.num("ttl", a.ttl);
		if (a.ip_version == 6)
			j.num("flow_label", a.flow_label);
		j.num("udp_length", d.net.udp_len);
	}
	if (d.have_bth) {
		j.num("opcode", d.opcode);
		j.str("opcode_name", opcode_name(d.opcode));
	}
	if (d.ib_ok) {
		const Headers &h = d.pkt.hdr;
		const Bth &b = h.bth;
		u32 f = d.pkt.flags;
		j.str("transport", transport_name(opcode_info(b.opcode).transport));
		j.num("dest_qpn", b.dest_qpn);
		j.num("psn", b.psn);
		j.boolean("ack_req", b.ack_req);
		j.boolean("se", b.se);
		j.boolean("mig", b.mig);
		j.boolean("fecn", b.fecn);
		j.boolean("becn", b.becn);
		j.num("pad", b.pad);
		j.num("tver", b.tver);
		j.num("pkey", b.pkey);
		if (f & op_rdeth) {
			j.open("rdeth");
			j.num("eecn", h.rdeth.eecn);
			j.close();
		}
		if (f & op_deth) {
			j.open("deth");
			j.num("qkey", h.deth.qkey);
			j.num("src_qp", h.deth.src_qp);
			j.close();
		}
		if (f & op_xrceth) {
			j.open("xrceth");
			j.num("srqn", h.xrceth.srqn);
			j.close();
		}
		if (f & op_feth) {
			j.open("feth");
			j.num("placement", h.feth.placement);
			j.num("selectivity", h.feth.selectivity);
			j.close();
		}
		if (f & op_reth) {
			j.open("reth");
			j.hex64("va", h.reth.va);
			j.num("rkey", h.reth.rkey);
			j.num("length", h.reth.length);
			j.close();
		}
		if (f & op_atomic_eth) {
			j.open("atomic_eth");
			j.hex64("va", h.atomic_eth.va);
			j.num("rkey", h.atomic_eth.rkey);
			j.hex64("swap_add", h.atomic_eth.swap_add);
			j.hex64("compare", h.atomic_eth.compare);
			j.close();
		}
		if (f & op_aeth) {
			const Aeth &a = h.aeth;
			j.open("aeth");
			j.num("syndrome", a.syndrome);
			j.str("kind", aeth_kind_name(a));
			if (a.is_ack())
				j.num("credit_code", a.credit_code());
			if (a.is_rnr_nak()) {
				j.num("rnr_timer", a.rnr_timer());
				j.num("rnr_timer_us", rnr_timer_us(a.rnr_timer()));
			}
			j.num("msn", a.msn);
			j.close();
		}
		if (f & op_atomic_ack_eth) {
			j.open("atomic_ack_eth");
			j.hex64("orig", h.atomic_ack_eth.orig);
			j.close();
		}
		if (f & op_immdt)
			j.num("imm", h.immdt.imm);
		if (f & op_ieth) {
			j.open("ieth");
			j.num("rkey", h.ieth.rkey);
			j.close();
		}
		j.num("payload_length", d.pkt.payload_len);
	}
	j.boolean("malformed", d.malformed());
	if (d.malformed())
		j.str("error", d.error);
	j.str("icrc", icrc_verdict_name(d.icrc));
	if (d.icrc == IcrcVerdict::ok || d.icrc == IcrcVerdict::bad) {
		j.str("icrc_wire", fmt("0x%08x", d.icrc_wire));
		j.str("icrc_calc", fmt("0x%08x", d.icrc_calc));
	}
	if (d.train_len) {
		j.num("train_segment", d.train_seg);
		j.num("train_segments", d.train_len);
	}
	return j.done();
}

} // namespace sroce_dump

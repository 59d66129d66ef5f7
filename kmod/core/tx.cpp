// Building one outgoing packet: IP/UDP + IB headers written by the codec,
// payload filled by the caller straight into the packet buffer (the one
// copy of the send path), ICRC last.
#include "icrc.h"
#include "qp.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

ktl::Result<Qp::Tx> Qp::tx_begin(sroce_env_path *path, const sroce_core_path_info &pinfo, const ib::Headers &h,
				 u32 payload, u16 sport, bool resend) {
	ib::IpUdp ip;
	ip.ip_version = pinfo.ipv6 ? 6 : 4;
	__builtin_memcpy(ip.src, pinfo.src, 16);
	__builtin_memcpy(ip.dst, pinfo.dst, 16);
	ip.tclass = pinfo.tclass;
	ip.ttl = pinfo.hop_limit ? pinfo.hop_limit : 64;
	ip.flow_label = pinfo.flow_label;
	ip.sport = sport;
	// IPv4 ID: the PSN's low bits, so consecutive packets of a QP carry
	// consecutive IDs, as UDP GSO gives the segments of one skb (the glue's
	// packet trains, pkt.c): a train then segments into these very packets,
	// ICRC included (it covers the ID). Any ID is valid with DF (RFC 6864).
	// A resent PSN's ID has its low bit flipped, so that no two resent
	// packets are consecutive and none travels in a train: were trains
	// mangled past the first hop (a NIC whose UDP segmentation numbers
	// IDs otherwise, transport.md "Packet trains"), resending as singles
	// still gets through, and the QP slows down instead of stalling.
	ip.ip_id = u16(h.bth.psn ^ (resend ? 1u : 0u));
	u32 ib_len = ib::ib_length(h.bth.opcode, payload);
	u32 l3 = ib::ip_udp_len(ip.ip_version);
	Tx t;
	t.len = l3 + ib_len;
	t.pkt = sroce_env_pkt_alloc(path, t.len, &t.data);
	if (!t.pkt)
		return Error::from_errno(err::nomem);
	dev_->counts().pkts_in_flight.fetch_add(1, ktl::MemoryOrder::relaxed);
	ktl::Span<u8> out(t.data, t.len);
	auto r = ib::write_ip_udp(ip, ib_len, out);
	ib::Headers hh = h;
	hh.bth.pad = ib::pad_for(payload);
	ktl::Span<u8> ibspan;
	auto w = r.is_error() || !out.subspan(l3, ib_len, &ibspan) ? ktl::Result<u32>(Error::from_errno(err::inval))
								  : ib::write_ib_headers(hh, ibspan);
	if (w.is_error()) {
		tx_abort(t);
		return w.error();
	}
	t.ib_off = l3;
	t.payload_off = l3 + w.value();
	// Pad bytes are zero (IBTA 9.2: their value is not checked, but
	// deterministic packets make captures comparable).
	for (u32 i = t.payload_off + payload; i < t.len - ib::len::icrc; i++)
		t.data[i] = 0;
	return t;
}

void Qp::tx_finish(Tx &t, sroce_env_path *path, sroce_env_batch *b) {
	auto r = ib::icrc_fill(ktl::Span<u8>(t.data, t.len));
	dev_->counts().pkts_in_flight.fetch_sub(1, ktl::MemoryOrder::relaxed);
	if (KTL_WARN_ON(r.is_error())) { // we wrote these headers ourselves
		sroce_env_pkt_free(t.pkt);
		return;
	}
	count(SROCE_CNT_TX_PKTS);
	count(SROCE_CNT_TX_BYTES, t.len);
	sroce_env_pkt_send(b, path, t.pkt);
	t.pkt = nullptr;
}

void Qp::tx_abort(Tx &t) {
	sroce_env_pkt_free(t.pkt);
	t.pkt = nullptr;
	dev_->counts().pkts_in_flight.fetch_sub(1, ktl::MemoryOrder::relaxed);
}

} // namespace sroce

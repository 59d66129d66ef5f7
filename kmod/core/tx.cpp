// Building one outgoing packet: IP/UDP + IB headers written by the codec,
// payload filled by the caller straight into the packet buffer (the one
// copy of the send path), ICRC last. Or zero-copy (transport.md, "Zero-copy
// send"): the headers alone in the buffer, the payload attached in place as
// page fragments, the ICRC computed along the way and sent in a tail.
#include "icrc.h"
#include "mw_layout.h"
#include "qp.h"
#include "sge.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

ktl::Result<Tx> Qp::tx_begin(sroce_env_path *path, const sroce_core_path_info &pinfo, const ib::Headers &h,
				 u32 payload, u16 sport, bool resend, bool zero_copy) {
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
	// Without the payload, pad and ICRC: the part a zero-copy packet
	// keeps linear.
	u32 ib_hdr = ib_len - payload - ib::pad_for(payload) - ib::len::icrc;
	Tx t;
	t.len = l3 + ib_len;
	t.zero_copy = zero_copy && payload;
	t.payload = payload;
	t.pkt = sroce_env_pkt_alloc(path, t.zero_copy ? l3 + ib_hdr : t.len, &t.data);
	if (!t.pkt)
		return Error::from_errno(err::nomem);
	dev_->counters().in_flight_add(1);
	ktl::Span<u8> out(t.data, t.zero_copy ? l3 + ib_hdr : t.len);
	auto r = ib::write_ip_udp(ip, ib_len, out);
	ib::Headers hh = h;
	hh.bth.pad = ib::pad_for(payload);
	ktl::Span<u8> ibspan;
	auto w = r.is_error() || !out.subspan(l3, out.size() - l3, &ibspan)
			 ? ktl::Result<u32>(Error::from_errno(err::inval))
			 : ib::write_ib_headers(hh, ibspan);
	if (w.is_error() || KTL_WARN_ON(w.value() != ib_hdr)) {
		tx_abort(t);
		return w.is_error() ? w.error() : Error::from_errno(err::inval);
	}
	t.ib_off = l3;
	t.payload_off = l3 + w.value();
	if (t.zero_copy) {
		// The masked headers now, the extension headers after BTH as
		// they are; the payload follows in tx_attach.
		auto c = ib::icrc_begin(ktl::Span<const u8>(t.data, t.payload_off));
		if (c.is_error()) {
			tx_abort(t);
			return c.error();
		}
		u32 rest = l3 + ib::len::bth;
		t.crc = ib::icrc_update(c.value(), t.data + rest, t.payload_off - rest);
		return t;
	}
	// Pad bytes are zero (IBTA 9.2: their value is not checked, but
	// deterministic packets make captures comparable).
	for (u32 i = t.payload_off + payload; i < t.len - ib::len::icrc; i++)
		t.data[i] = 0;
	return t;
}

bool Qp::zero_copy_wanted(u32 len) const {
	// A request's buffer is its owner's until the WR completes, which for
	// RC and XRC is after the answer: sending it in place is safe. UD and
	// UC complete when sent, so their payload is copied, and so is a READ
	// response: its memory may be written while it is read (one-sided
	// designs read changing memory and check versions), and in place a
	// torn read would fail the ICRC and be resent, maybe for ever.
	// Kernel users' MRs are never zero-copy MRs.
	u32 min = dev_->zero_copy_min();
	return min && len >= min && user_ && reliable();
}

ktl::Result<void> Qp::tx_attach(Tx &t, const KeyRef &ref, u32 len) {
	if (!ref.zero_copy())
		return Error::from_errno(err::opnotsupp);
	if (KTL_WARN_ON(!t.zero_copy || len > t.payload - t.attached))
		return Error::from_errno(err::inval);
	return ref.for_each_chunk(len, [&t](u8 *kva, u32 n) -> ktl::Result<void> {
		TRY(ktl::from_rc(sroce_env_pkt_add_frag(t.pkt, kva, n)));
		// The CRC reads the bytes now and the wire later: a buffer
		// changed in between (its owner's bug) fails the peer's ICRC
		// check, and the packet is resent.
		t.crc = ib::icrc_update(t.crc, kva, n);
		t.attached += n;
		return {};
	});
}

// Copies the packet's payload from the inline data or the SGEs, or
// attaches it from the SGEs' MRs (tx.zero_copy). An SGE that fails its lkey
// or bounds check fails the WQE (send_packet_locked).
ktl::Result<void> Qp::gather_payload_locked(SendWqe &w, const RequestPacket &p, Tx &tx) {
	if (!p.payload)
		return {};
	if (w.wqe.flags & SROCE_WQE_INLINE) {
		__builtin_memcpy(tx.data + tx.payload_off, w.inline_data() + p.off, p.payload);
		return {};
	}
	if (is_atomic_write(w.wqe.opcode)) { // the bytes as given, no byte order
		__builtin_memcpy(tx.data + tx.payload_off, &w.wqe.rdma.compare_add, p.payload);
		return {};
	}
	SgeList l{w.sges(), w.wqe.num_sge, pd_->pdn(), &keys_.send};
	if (tx.zero_copy)
		return sge_walk(*dev_, l, p.off, p.payload, 0,
				[&](const KeyRef &ref, u32 n, u32) { return tx_attach(tx, ref, n); });
	return sge_gather(*dev_, l, p.off, tx.data + tx.payload_off, p.payload);
}

void Qp::tx_finish(Tx &t, sroce_env_path *path, sroce_env_batch *b) {
	if (t.zero_copy) {
		dev_->counters().in_flight_sub(1);
		// The pad and the ICRC, in a tail of the env's.
		u32 pad = ib::pad_for(t.payload);
		u8 *tail = KTL_WARN_ON(t.attached != t.payload) ? nullptr
								: sroce_env_pkt_add_tail(t.pkt, pad + ib::len::icrc);
		if (!tail) {
			// No memory for the tail: lost, as on the wire (only
			// reliable QPs go zero-copy, and they resend).
			sroce_env_pkt_free(t.pkt);
			t.pkt = nullptr;
			return;
		}
		const u8 zeros[4] = {};
		for (u32 i = 0; i < pad; i++)
			tail[i] = 0;
		ib::icrc_store(tail + pad, ib::icrc_finish(ib::icrc_update(t.crc, zeros, pad)));
		count(SROCE_CNT_TX_ZERO_COPY_PKTS);
	} else {
		auto r = ib::icrc_fill(ktl::Span<u8>(t.data, t.len));
		dev_->counters().in_flight_sub(1);
		if (KTL_WARN_ON(r.is_error())) { // we wrote these headers ourselves
			sroce_env_pkt_free(t.pkt);
			return;
		}
	}
	count(SROCE_CNT_TX_PKTS);
	count(SROCE_CNT_TX_BYTES, t.len);
	sroce_env_pkt_send(b, path, t.pkt);
	t.pkt = nullptr;
}

void Qp::tx_abort(Tx &t) {
	sroce_env_pkt_free(t.pkt);
	t.pkt = nullptr;
	dev_->counters().in_flight_sub(1);
}

} // namespace sroce

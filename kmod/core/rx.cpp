// Packet in: IP/UDP and IB headers parsed without reading past the packet,
// the ICRC checked over the whole packet (fragments included), the QP
// looked up by number, and the packet handed to it (Qp::receive: its
// address check, then the completer or the responder). Every drop is
// counted. A request for an RSS QP may be steered, before its ICRC is
// checked, to the CPU of the CQ of the WQ it goes to (sroce_env_rx_steer):
// it comes back (steered) and is received there, ICRC first, without
// being counted on the device again.
#include "icrc.h"
#include "qp.h"
#include "wq.h"

namespace sroce {

namespace {
// Headers are read into a small linear copy: at most IP (with options) +
// UDP + the longest IB headers.
constexpr u32 max_hdr = 60 + 8 + ib::len::max_headers;

// XRC's halves each take one direction: a target requests, an initiator
// their responses.
bool transport_matches(ib::Transport t, bool response, u32 qp_type) {
	switch (t) {
	case ib::Transport::rc: return qp_type == ib::qpt_rc;
	case ib::Transport::uc: return qp_type == ib::qpt_uc;
	case ib::Transport::ud: return qp_type == ib::qpt_ud || qp_type == ib::qpt_gsi;
	case ib::Transport::xrc: return qp_type == (response ? ib::qpt_xrc_ini : ib::qpt_xrc_tgt);
	default: return false;
	}
}

// P_Key matching (IBTA 10.9.3): the low 15 bits equal, and at least one of
// the two keys a full member. The port's table holds only the default key
// 0xFFFF (full), so 0xFFFF and 0x7FFF match and nothing else does.
constexpr bool pkey_matches(u16 pkt, u16 table) {
	return (pkt & 0x7fff) == (table & 0x7fff) && ((pkt | table) & 0x8000) && (table & 0x7fff) != 0;
}
constexpr u8 bth_tver = 0;

constexpr bool pkey_valid(u16 pkey) { return pkey_matches(pkey, ib::default_pkey); }
static_assert(pkey_valid(0xffff) && pkey_valid(0x7fff), "the default partition, full and limited");
static_assert(!pkey_valid(0x1234) && !pkey_valid(0x0000) && !pkey_valid(0x8000) && !pkey_valid(0xfffe),
	      "other partitions and the invalid key");
static_assert(!pkey_matches(0x7fff, 0x7fff), "two limited members do not match");
} // namespace

namespace {
// A UD request for an RSS QP or a child of the consecutive-QPN form: true
// when the env took it for the CPU of the picked (or the child's) WQ's CQ. Nothing is counted here; the packet's checks come after.
bool steer(Qp *qp, const RxPacket &rx) {
	if (!qp)
		return false;
	if (ib::opcode_info(rx.pi.hdr.bth.opcode).transport != ib::Transport::ud)
		return qp->steer_rx(rx); // a connected QP's: to its owner's CPU
	if (rx.pi.flags & ib::op_response)
		return false;
	void *cq_owner = qp->rss_cq_owner(rx);
	return cq_owner && sroce_env_rx_steer(rx.pkt, cq_owner);
}
} // namespace

void rx_packet(Device &dev, sroce_env_pkt *pkt, sroce_env_batch *b, bool steered, Qp *steered_to) {
	ShardedCounterBlock &rc = dev.counters();
	unsigned int linear = 0, total = 0;
	sroce_env_pkt_head(pkt, &linear, &total);
	u8 hdr[max_hdr];
	u32 n = ktl::min(total, max_hdr);
	if (!steered) {
		rc.inc(SROCE_CNT_RX_PKTS);
		rc.inc(SROCE_CNT_RX_BYTES, total);
	}
	if (sroce_env_pkt_read(pkt, 0, hdr, n)) {
		rc.inc(SROCE_CNT_RX_BAD_HEADER);
		sroce_env_pkt_free(pkt);
		return;
	}
	RxPacket rx;
	rx.pkt = pkt;
	rx.len = total;
	auto ip = ib::parse_ip_udp(ktl::Span<const u8>(hdr, n), total);
	ktl::Span<const u8> ibh;
	if (ip.is_error() || !ktl::Span<const u8>(hdr, n).subspan(ip.value().bth_offset, n - ip.value().bth_offset, &ibh)) {
		rc.inc(SROCE_CNT_RX_BAD_HEADER);
		sroce_env_pkt_free(pkt);
		return;
	}
	rx.ip = ip.value();
	auto pi = ib::parse_ib(ibh, rx.ip.ib_len);
	if (pi.is_error()) {
		rc.inc(SROCE_CNT_RX_BAD_HEADER);
		sroce_env_pkt_free(pkt);
		return;
	}
	rx.pi = pi.value();
	// IBTA 9.2.1: TVer 0 is the only transport version; a later one's
	// headers may mean something else (rxe drops them too).
	if (rx.pi.hdr.bth.tver != bth_tver) {
		rc.inc(SROCE_CNT_RX_BAD_HEADER);
		sroce_env_pkt_free(pkt);
		return;
	}
	u32 bth = rx.ip.bth_offset;
	rx.payload_off = bth + rx.pi.payload_offset;
	// Looked up once, here; the checks below still count a bad QPN after
	// a bad ICRC or P_Key, as before. Without the table's lock: every
	// receive runs in a batch, an RCU read-side section (env.h).
	auto qp = dev.qps().lookup_rcu(rx.pi.hdr.bth.dest_qpn);
	// The ICRC and the copy are the work worth spreading: steer first.
	if (!steered && steer(qp.get(), rx))
		return; // the env has it, for another CPU
	// Steered to a QP destroyed since, its number maybe taken again: for no QP.
	if (steered_to && qp.get() != steered_to)
		qp = nullptr;
	// ICRC: masked headers from the linear copy, the rest from the packet.
	auto crc = ib::icrc_begin(ktl::Span<const u8>(hdr, bth + ib::len::bth));
	u8 stored[4];
	u32 rest = rx.ip.ib_len - ib::len::bth - ib::len::icrc;
	if (crc.is_error() || sroce_env_pkt_read(pkt, bth + rx.ip.ib_len - ib::len::icrc, stored, 4) ||
	    ib::icrc_finish(sroce_env_pkt_crc32(pkt, bth + ib::len::bth, rest, crc.value())) != ib::icrc_load(stored)) {
		rc.inc(SROCE_CNT_ICRC_ERRORS);
		sroce_env_pkt_free(pkt);
		return;
	}
	// As rxe's check_keys: a packet of another partition is for no QP here.
	if (!pkey_valid(rx.pi.hdr.bth.pkey)) {
		rc.inc(SROCE_CNT_RX_BAD_PKEY);
		sroce_env_pkt_free(pkt);
		return;
	}
	if (!qp || !transport_matches(ib::opcode_info(rx.pi.hdr.bth.opcode).transport, rx.pi.flags & ib::op_response,
				      qp->type())) {
		rc.inc(SROCE_CNT_RX_BAD_QPN);
		sroce_env_pkt_free(pkt);
		return;
	}
	qp->receive(rx, b);
	sroce_env_pkt_free(pkt);
}

// A connected QP takes packets only from its peer's address to its own
// source GID, as rxe's check_addr: QPN and PSN alone are no secret (`rdma
// res` shows them), so without this any host on the path, or any local user
// with a UDP socket, could inject requests or forge ACKs and NAKs. Before
// RTR there is no peer yet and the state checks drop everything.
bool Qp::from_peer_locked(const ib::IpUdp &a) const {
	if (!connected() || !path_)
		return true;
	return ktl::mem_equal(a.src, path_info_.dst, 16) && ktl::mem_equal(a.dst, path_info_.src, 16);
}

void Qp::receive(const RxPacket &rx, sroce_env_batch *b) {
	ktl::RefPtr<Wq> wq;
	rss::Hash h;
	{
		ktl::Guard g(lock_);
		if (dead_)
			return;
		// The device counted it on arrival (rx.cpp); now the QP is known.
		counters_.inc(SROCE_CNT_RX_PKTS);
		counters_.inc(SROCE_CNT_RX_BYTES, rx.len);
		if (!from_peer_locked(rx.ip.addr)) {
			count(SROCE_CNT_RX_BAD_ADDR);
			return;
		}
		if (rx.pi.flags & ib::op_response) {
			on_response_locked(rx, b);
			return;
		}
		if (!rss_.table && !rwq_) {
			on_request_locked(rx, b);
			if (!resp_.in_message) // a message ended: before its ACK leaves
				keys_.recv.drop();
			return;
		}
		// An RSS QP or a child of the consecutive-QPN form (UD:
		// rx_packet matched the transport). A wrong Q_Key is silently
		// dropped (IBTA 10.2.5), as ud_receive_locked does.
		if (!recv_allowed() || rx.pi.hdr.deth.qkey != qkey_)
			return;
		// The table, and so the WQ, stays while the QP does; the reference
		// keeps the WQ past a destroy that runs once the lock is dropped.
		// A child's message carries no hash (kind none).
		wq = rwq_ ? rwq_ : ktl::RefPtr<Wq>(&rss_.pick(rx, &h));
	}
	// An RSS QP holds no WQE of its own: the picked WQ places and completes
	// under its own lock (a message it cannot take is dropped, as UD does),
	// outside the QP's, so WQs receive in parallel, each where the packet
	// was steered. WQs are user objects (the glue makes no kernel
	// ones), so their CQs keep no QP owner a concurrent destroy could leave
	// dangling.
	wq->receive_ud(rx, qpn_, owner_, h, b);
}

void *Qp::rss_cq_owner(const RxPacket &rx) {
	if (rwq_) // a child: where its WQ's completions go (set before numbering)
		return rwq_->cq().owner();
	if (!rss_.table) // set before the QP is numbered, never changed
		return nullptr;
	ktl::Guard g(lock_);
	if (dead_)
		return nullptr;
	rss::Hash h;
	return rss_.pick(rx, &h).cq().owner();
}

} // namespace sroce

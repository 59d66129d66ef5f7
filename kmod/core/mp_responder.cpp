// The responder's multi-packet receive (seed 000, mp_recv.h,
// Documentation/mp-wr.md): every SEND packet, UD datagram and WRITE
// immediate into a multi-packet queue completes on its own, at its offset
// in the buffer in use; FIRST and MIDDLE packets with MORE_IN_MSG.
//
// Out of buffers within a message, RC answers the packet with an RNR NAK
// and the requester resumes from it; UC drops the rest of the message and
// ends it with a RECV_NOP flagged MP_INCOMPLETE, on the buffer the message
// last used (the application rebuilds messages per qp_num). A WRITE with
// immediate writes the MR, then completes on the buffer in use without
// taking any of its bytes; without one, RC answers RNR after the write (the
// requester's repeat writes the same bytes again) and UC loses the
// immediate.
#include "key_table.h"
#include "ktl/byteorder.h"
#include "qp.h"
#include "sge.h"

namespace sroce {

// One packet's placement: Qp::mp_place_locked's sink (MpRecv::place).
struct Qp::MpPacket {
	Qp &qp;
	const RxPacket &rx;
	sroce_env_batch *b;
	u8 opcode = ib::wc_recv;
	bool grh = false;          // UD: the GRH area, then the payload
	bool data = true;          // the payload goes into the buffer (not a WRITE's)
	bool more = false;         // a FIRST or MIDDLE packet
	bool imm = false;          // carries the message's immediate
	bool inv = false;          // SEND with invalidate: the key ends after placement
	bool inv_failed = false;   // that key was not this QP's to invalidate
	bool write_failed = false; // the SGEs refused the bytes
	Srq *held_srq = nullptr;   // XRC: the SRQ whose lock mp_place holds

	MpPacket(Qp &q, const RxPacket &r, sroce_env_batch *bt) : qp(q), rx(r), b(bt) {}

	ktl::Result<void> write(const RecvWqe &w, u32 offset) {
		auto r = place(w, offset);
		if (r.is_error()) {
			write_failed = true;
			return r;
		}
		// IBTA 9.4.1.4: invalidated once placed, before the completion.
		if (inv && qp.dev_->keys().invalidate(rx.pi.hdr.ieth.rkey, qp.resp_pdn_locked(), qp.qpn_).is_error())
			inv_failed = true;
		return {};
	}
	void complete(const MpCompletion &c) { qp.mp_post_locked(c, *this, b); }

private:
	ktl::Result<void> place(const RecvWqe &w, u32 offset) {
		SgeList l{w.sge, w.num_sge, qp.resp_pdn_locked()};
		const ib::PacketInfo &pi = rx.pi;
		if (grh) {
			u8 g[grh_len];
			TRY(ktl::from_rc(read_grh(rx, g)));
			TRY(sge_scatter(*qp.dev_, l, offset, g, grh_len));
			offset += grh_len;
		}
		if (!data || !pi.payload_len)
			return {};
		return sge_scatter_pkt(*qp.dev_, l, offset, rx.pkt, rx.payload_off, pi.payload_len);
	}
};

bool Qp::mp_receive_locked() const {
	const Srq *srq = xrc_target() ? recvq_.xrc_srq.get() : recvq_.srq.get();
	return srq ? srq->mp_buffer_size() != 0 : recvq_.mp.enabled();
}

ktl::Result<void> Qp::mp_place_locked(u32 len, MpPacket &p, u32 byte_len, sroce_env_batch *b) {
	Srq *srq = xrc_target() ? recvq_.xrc_srq.get() : recvq_.srq.get();
	if (srq) {
		p.held_srq = xrc_target() ? srq : nullptr;
		return srq->mp_place(len, p, byte_len, b);
	}
	auto take = [&](RecvWqe &w) -> ktl::Result<void> {
		auto r = recvq_.rq.take(w);
		if (r.is_error())
			return r.error();
		return {};
	};
	return recvq_.mp.place(len, take, p, byte_len);
}

void Qp::mp_post_locked(const MpCompletion &mc, const MpPacket &p, sroce_env_batch *b) {
	const RxPacket &rx = p.rx;
	sroce_cqe c{};
	c.wr_id = mc.wr_id;
	c.status = p.inv_failed ? u8(ib::wc_rem_inv_req_err) : mc.status;
	c.qp_num = qpn_;
	c.src_qp = connected() ? dest_qpn_ : rx.pi.hdr.deth.src_qp;
	c.mp_offset = mc.offset;
	bool solicited = false;
	if (mc.nop) {
		c.opcode = SROCE_CQE_OP_RECV_NOP;
	} else {
		c.opcode = p.opcode;
		c.byte_len = mc.len;
		if (p.more)
			c.flags |= SROCE_CQE_MP_MORE_IN_MSG;
		if (p.imm) {
			c.flags |= SROCE_CQE_WITH_IMM;
			c.imm_or_inv = ktl::cpu_to_be32(resp_.msg_imm_data);
		} else if (p.inv) {
			c.flags |= SROCE_CQE_WITH_INV;
			c.imm_or_inv = rx.pi.hdr.ieth.rkey;
		}
		if (!connected()) {
			c.flags |= SROCE_CQE_GRH;
			c.network_hdr_type = rx.ip.addr.ip_version == 6 ? ib::net_ipv6 : ib::net_ipv4;
		}
		resp_.mp_wr_id = mc.wr_id;
		solicited = rx.pi.hdr.bth.se && !p.more;
	}
	if (mc.consumed)
		c.flags |= SROCE_CQE_MP_CONSUMED;
	if (!p.held_srq) {
		post_cqe_locked(*rcq_, c, solicited, b);
	} else if (p.held_srq->post_cqe_held(c, owner_, solicited, b) == Srq::Posted::cq_full) {
		cq_overflowed_locked(b);
	}
}

// A UC message that completed packets ends unfinished (a gap, a refused
// packet, no buffer left).
void Qp::mp_incomplete_locked(const RxPacket &rx, sroce_env_batch *b) {
	if (!resp_.in_message || !mp_receive_locked() || resp_.msg_op != ib::op_send)
		return;
	sroce_cqe c{};
	c.wr_id = resp_.mp_wr_id;
	c.opcode = SROCE_CQE_OP_RECV_NOP;
	c.flags = SROCE_CQE_MP_INCOMPLETE;
	c.qp_num = qpn_;
	c.src_qp = dest_qpn_;
	post_recv_cqe_locked(c, false, b);
}

void Qp::mp_send_locked(const RxPacket &rx, sroce_env_batch *b) {
	const ib::PacketInfo &pi = rx.pi;
	bool first = pi.flags & ib::op_first, last = pi.flags & ib::op_last;
	if (first)
		resp_.recv_offset = 0;
	if (u64(resp_.recv_offset) + pi.payload_len > param::max_msg_sz) {
		mp_incomplete_locked(rx, b);
		reject_locked(ib::NakCode::invalid_request, rx, b);
		return;
	}
	MpPacket p(*this, rx, b);
	p.more = !last;
	p.imm = last && (pi.flags & ib::op_immdt);
	p.inv = last && (pi.flags & ib::op_ieth);
	if (p.imm)
		resp_.msg_imm_data = pi.hdr.immdt.imm;
	auto r = mp_place_locked(pi.payload_len, p, pi.payload_len, b);
	if (r.is_error()) {
		if (r.error().errno_value() == ktl::err::again) {
			if (reliable()) {
				rnr_locked(rx, first, b); // epsn unchanged: the requester resumes here
				return;
			}
			mp_incomplete_locked(rx, b);
			resp_.in_message = false;
			resp_.drop_message = !last;
		} else if (p.write_failed) {
			// Completed in error; a UC message's earlier packets with it.
			bool len = r.error().errno_value() == ktl::err::msgsize;
			reject_locked(len ? ib::NakCode::invalid_request : ib::NakCode::remote_op, rx, b);
		} else {
			to_error_locked(b); // a corrupt ring, or a WQE of the wrong size
		}
		return;
	}
	if (p.inv_failed) { // as execute_send_locked: the completion said so
		resp_.in_message = false;
		answer_locked(ib::Aeth::nak_syndrome(ib::NakCode::invalid_request), pi.hdr.bth.psn, b);
		return;
	}
	if (p.inv)
		count(SROCE_CNT_REMOTE_INVS);
	resp_.in_message = !last;
	resp_.recv_offset += pi.payload_len;
	resp_.epsn = psn_add(pi.hdr.bth.psn, 1);
	if (last)
		resp_.msn = psn_add(resp_.msn, 1);
}

bool Qp::mp_write_imm_locked(const RxPacket &rx, sroce_env_batch *b) {
	MpPacket p(*this, rx, b);
	p.opcode = ib::wc_recv_rdma_imm;
	p.data = false;
	p.imm = true;
	resp_.msg_imm_data = rx.pi.hdr.immdt.imm;
	auto r = mp_place_locked(0, p, resp_.write_len, b);
	if (!r.is_error())
		return true;
	if (r.error().errno_value() != ktl::err::again) {
		to_error_locked(b);
	} else if (reliable()) {
		rnr_locked(rx, rx.pi.flags & ib::op_first, b);
	} else {
		resp_.in_message = false; // UC: the immediate is lost
	}
	return false;
}

void Qp::mp_ud_receive_locked(const RxPacket &rx, sroce_env_batch *b) {
	MpPacket p(*this, rx, b);
	p.grh = true;
	p.imm = rx.pi.flags & ib::op_immdt;
	resp_.msg_imm_data = rx.pi.hdr.immdt.imm;
	u32 n = grh_len + rx.pi.payload_len;
	auto r = mp_place_locked(n, p, n, b);
	// UD drops what finds no buffer; a refused SGE completed in error, as
	// an ordinary UD receive's does. A corrupt ring, or a malformed WQE or
	// one of the wrong size (completed in error): the owner broke the
	// ring's contract, and the QP goes to ERR, as RC's and a WQ's do.
	if (r.is_error() && r.error().errno_value() != ktl::err::again && !p.write_failed)
		to_error_locked(b);
}

// The error state: the own RQ's buffer in use is flushed before the ring's.
void Qp::mp_flush_locked(sroce_env_batch *b) {
	sroce_cqe c{};
	if (!recvq_.mp.held(&c.wr_id))
		return;
	recvq_.mp.drop();
	c.status = ib::wc_wr_flush_err;
	c.opcode = ib::wc_recv;
	c.flags = SROCE_CQE_MP_CONSUMED;
	c.qp_num = qpn_;
	post_cqe_locked(*rcq_, c, false, b);
}

} // namespace sroce

// Responder: executes incoming requests (IBTA 9.7.5.1). RC checks the PSN
// against the expected one: in order it executes, ahead it NAKs once
// (sequence error), behind it answers the duplicate (ACK again, READ
// re-executed from the replay slot, ATOMIC replayed from the saved value).
// UC drops a message with a gap; UD delivers single packets with a GRH.
// READ, ATOMIC and ATOMIC WRITE execution and replay are in read_atomic.cpp.
#include "key_table.h"
#include "mw_layout.h"
#include "ktl/byteorder.h"
#include "param.h"
#include "qp.h"
#include "sge.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

namespace {
// The status a receive WQE completes with when its message is refused.
u8 refused_recv_status(ib::NakCode code) {
	return code == ib::NakCode::invalid_request ? ib::wc_loc_len_err : ib::wc_loc_prot_err;
}
} // namespace

void Qp::send_ack_locked(u8 syndrome, u32 psn, sroce_env_batch *b) {
	if (!path_)
		return;
	ib::Headers h;
	h.bth.opcode = u8(transport_base() | ib::op::acknowledge);
	h.bth.dest_qpn = dest_qpn_;
	h.bth.psn = psn;
	h.aeth.syndrome = syndrome;
	h.aeth.msn = resp_.msn;
	auto t = tx_begin(path_, path_info_, h, 0, sport_);
	if (t.is_error())
		return; // the requester's retry timer covers a lost ACK
	Tx tx = t.release_value();
	tx_finish(tx, path_, b);
	sroce_core_counter c = nak_counter(h.aeth, true);
	if (c != SROCE_CNT_MAX)
		count(c);
}

// Invalid request, remote access and remote operational errors are fatal
// to the responder's QP (IBTA 9.9.3.1.3), from when the NAK is sent: after
// the responses owed to earlier requests (answer_locked).
void Qp::nak_and_error_locked(ib::NakCode code, u32 psn, sroce_env_batch *b) {
	if (resp_.in_message && recvq_.valid) {
		post_recv_cqe_locked(recv_status_cqe(recvq_.wqe.wr_id, refused_recv_status(code)), false, b);
		recvq_.valid = false;
	}
	resp_.in_message = false;
	answer_locked(ib::Aeth::nak_syndrome(code), psn, b);
}

// A request that cannot be executed. RC NAKs it and the QP goes to error;
// UC drops the rest of the message (IBTA 9.8.3.2). Either way a receive WQE
// the message already took completes with the error instead of being lost.
void Qp::reject_locked(ib::NakCode code, const RxPacket &rx, sroce_env_batch *b) {
	if (reliable()) {
		nak_and_error_locked(code, rx.pi.hdr.bth.psn, b);
		return;
	}
	if (recvq_.valid)
		finish_recv_locked(refused_recv_status(code), resp_.recv_offset, rx, false, b);
	resp_.in_message = false;
	resp_.drop_message = true;
}

// Out of receive WQEs at the start of a message: RC answers RNR and the
// requester sends the packet again, UC loses the message. The message has
// not started: a retransmitted FIRST or ONLY must find no message open.
void Qp::rnr_locked(const RxPacket &rx, bool first, sroce_env_batch *b) {
	if (first)
		resp_.in_message = false;
	if (reliable())
		answer_locked(ib::Aeth::rnr_syndrome(u8(min_rnr_timer_)), rx.pi.hdr.bth.psn, b);
	else
		resp_.drop_message = true;
}

int Qp::take_recv_locked(sroce_env_batch *b) {
	int rc = 0;
	Srq *srq = xrc_target() ? recvq_.xrc_srq.get() : recvq_.srq.get();
	if (srq) {
		rc = ktl::to_rc(srq->take(recvq_.wqe, b));
	} else {
		auto r = recvq_.rq.take(recvq_.wqe);
		if (r.is_error())
			rc = r.error().code();
		steer_.saw_owner_on(recvq_.rq.poster_cpu()); // rx_steer.h
	}
	if (rc == -err::again)
		return 1;
	// take consumed a malformed WQE (its owner rewrote the ring): it
	// completes in error. That, a corrupt producer index or an SRQ in
	// error puts the QP in error, whatever its type, as a WQ does.
	if (rc == -err::inval)
		post_recv_cqe_locked(recv_status_cqe(recvq_.wqe.wr_id, ib::wc_loc_qp_op_err), false, b);
	if (rc) {
		to_error_locked(b);
		return rc;
	}
	recvq_.valid = true;
	return 0;
}

void Qp::fill_recv_cqe(sroce_cqe &c, u64 wr_id, u8 status, u32 byte_len, const RxPacket &rx, u32 qp_num,
			u32 src_qp, bool imm, u32 imm_data, bool grh) {
	c.wr_id = wr_id;
	c.status = status;
	bool write_imm = rx.pi.flags & ib::op_write;
	c.opcode = write_imm ? ib::wc_recv_rdma_imm : ib::wc_recv;
	c.byte_len = byte_len;
	c.qp_num = qp_num;
	c.src_qp = src_qp;
	if (imm) {
		c.flags |= SROCE_CQE_WITH_IMM;
		c.imm_or_inv = ktl::cpu_to_be32(imm_data);
	} else if (rx.pi.flags & ib::op_ieth) {
		c.flags |= SROCE_CQE_WITH_INV;
		c.imm_or_inv = rx.pi.hdr.ieth.rkey;
	}
	if (grh) {
		c.flags |= SROCE_CQE_GRH;
		c.network_hdr_type = rx.ip.addr.ip_version == 6 ? ib::net_ipv6 : ib::net_ipv4;
	}
}

void Qp::finish_recv_locked(u8 status, u32 byte_len, const RxPacket &rx, bool imm, sroce_env_batch *b) {
	sroce_cqe c{};
	fill_recv_cqe(c, recvq_.wqe.wr_id, status, byte_len, rx, qpn_,
		      connected() ? dest_qpn_ : rx.pi.hdr.deth.src_qp, imm, resp_.msg_imm_data, !connected());
	recvq_.valid = false;
	post_recv_cqe_locked(c, rx.pi.hdr.bth.se, b);
}

void Qp::post_recv_cqe_locked(const sroce_cqe &c, bool solicited, sroce_env_batch *b) {
	if (!xrc_target()) {
		post_cqe_locked(*rcq_, c, solicited, b);
		return;
	}
	keys_.drop_all(); // as post_cqe_locked does
	// Into the CQ of the SRQ the WQE came from, under that SRQ's lock: a
	// WQE of an SRQ destroyed since is no one's to complete.
	if (recvq_.xrc_srq && recvq_.xrc_srq->post_cqe(c, owner_, solicited, b) == Srq::Posted::cq_full)
		cq_overflowed_locked(b);
}

// ---- XRC target ------------------------------------------------------------------

// Every request to an XRC target names, in its XRCETH, the XRC SRQ whose
// receive WQEs, PD and CQ it uses; the SRQ must be of the target's domain
// (IBTA annex A14). A message keeps the SRQ it started with. false when
// refused: NAKed as a remote access error (the QP goes to error with
// IB_EVENT_QP_ACCESS_ERR, as hns and qedr report a bad XRCETH), or as an
// invalid request when a message changes SRQ.
bool Qp::xrc_bind_srq_locked(const RxPacket &rx, sroce_env_batch *b) {
	auto srq = dev_->srqs().lookup(rx.pi.hdr.xrceth.srqn);
	if (!srq || srq->xrcd() != xrcd_.get()) {
		nak_and_error_locked(ib::NakCode::remote_access, rx.pi.hdr.bth.psn, b);
		return false;
	}
	if (resp_.in_message && srq.get() != recvq_.xrc_srq.get()) {
		nak_and_error_locked(ib::NakCode::invalid_request, rx.pi.hdr.bth.psn, b);
		return false;
	}
	recvq_.xrc_srq = ktl::move(srq);
	return true;
}

// ---- UD ------------------------------------------------------------------------

// The GRH area of a UD receive: the IPv6 header, or 20 zero bytes and the
// IPv4 header (RoCEv2 convention, as rxe and mlx5 place it).
int Qp::read_grh(const RxPacket &rx, u8 *grh) {
	__builtin_memset(grh, 0, grh_len);
	u32 at = rx.ip.addr.ip_version == 6 ? 0 : 20;
	return sroce_env_pkt_read(rx.pkt, 0, grh + at, ktl::min(u32(rx.ip.ip_header_len), grh_len - at));
}

u8 Qp::place_ud(Device &dev, const RecvWqe &w, u32 pdn, const RxPacket &rx, u32 offset) {
	SgeList l{w.sge, w.num_sge, pdn};
	u8 grh[grh_len];
	int rc = read_grh(rx, grh);
	auto r = rc ? ktl::Result<void>(Error::from_errno(-rc)) : sge_scatter(dev, l, offset, grh, grh_len);
	if (!r.is_error() && rx.pi.payload_len)
		r = sge_scatter_pkt(dev, l, offset + grh_len, rx.pkt, rx.payload_off, rx.pi.payload_len);
	return r.is_error() ? len_or_prot_status(r.error()) : u8(ib::wc_success);
}

void Qp::fill_ud_recv_cqe(sroce_cqe &c, u64 wr_id, u8 status, const RxPacket &rx, u32 qp_num) {
	const ib::PacketInfo &pi = rx.pi;
	fill_recv_cqe(c, wr_id, status, grh_len + pi.payload_len, rx, qp_num, pi.hdr.deth.src_qp,
		      pi.flags & ib::op_immdt, pi.hdr.immdt.imm, true);
}

void Qp::ud_receive_locked(const RxPacket &rx, sroce_env_batch *b) {
	const ib::PacketInfo &pi = rx.pi;
	if (pi.hdr.deth.qkey != qkey_)
		return; // IBTA 10.2.5: silently dropped
	if (mp_receive_locked())
		mp_ud_receive_locked(rx, b);
	else if (take_recv_locked(b) == 0) { // else none posted (UD drops), or in error
		resp_.msg_imm_data = pi.hdr.immdt.imm;
		finish_recv_locked(place_ud(*dev_, recvq_.wqe, pd_->pdn(), rx), grh_len + pi.payload_len, rx,
				   pi.flags & ib::op_immdt, b);
	}
}


// ---- RC / UC ---------------------------------------------------------------------

void Qp::execute_send_locked(const RxPacket &rx, sroce_env_batch *b) {
	if (mp_receive_locked()) {
		mp_send_locked(rx, b);
		return;
	}
	const ib::PacketInfo &pi = rx.pi;
	bool first = pi.flags & ib::op_first, last = pi.flags & ib::op_last;
	if (first) {
		// A UC message lost mid-way (a gap, a lost LAST) leaves its WQE
		// taken: the next message uses it, as rxe does. Taking another
		// lost that one for good.
		int t = recvq_.valid ? 0 : take_recv_locked(b);
		if (t == 1)
			rnr_locked(rx, first, b); // epsn unchanged: the requester retries this packet
		if (t)
			return; // < 0: the QP is in error
		resp_.in_message = true;
		resp_.recv_offset = 0;
	}
	// No message is longer than max_msg_sz (which also keeps the u32
	// offset from wrapping when the receive SGEs add up to more).
	if (u64(resp_.recv_offset) + pi.payload_len > param::max_msg_sz) {
		reject_locked(ib::NakCode::invalid_request, rx, b);
		return;
	}
	SgeList l{recvq_.wqe.sge, recvq_.wqe.num_sge, resp_pdn_locked(), &keys_.recv};
	auto r = sge_scatter_pkt(*dev_, l, resp_.recv_offset, rx.pkt, rx.payload_off, pi.payload_len);
	if (r.is_error()) {
		bool len = r.error().errno_value() == err::msgsize;
		reject_locked(len ? ib::NakCode::invalid_request : ib::NakCode::remote_op, rx, b);
		return;
	}
	// SEND with invalidate (IBTA 9.4.1.4 and 10.6.3.3): the IETH's key is
	// invalidated once the message is placed, before its completion. A
	// key this QP may not invalidate is an invalid request (rxe's class J:
	// the receive completes with REM_INV_REQ_ERR and the QP goes to error;
	// the NAK spares the requester its retries).
	if (last && (pi.flags & ib::op_ieth) &&
	    dev_->keys().invalidate(pi.hdr.ieth.rkey, resp_pdn_locked(), qpn_).is_error()) {
		resp_.in_message = false;
		finish_recv_locked(ib::wc_rem_inv_req_err, resp_.recv_offset + pi.payload_len, rx, false, b);
		answer_locked(ib::Aeth::nak_syndrome(ib::NakCode::invalid_request), pi.hdr.bth.psn, b);
		return;
	}
	if (last && (pi.flags & ib::op_ieth))
		count(SROCE_CNT_REMOTE_INVS);
	resp_.recv_offset += pi.payload_len;
	resp_.epsn = psn_add(pi.hdr.bth.psn, 1);
	if (last) {
		resp_.msg_imm_data = pi.hdr.immdt.imm;
		resp_.msn = psn_add(resp_.msn, 1);
		resp_.in_message = false;
		finish_recv_locked(ib::wc_success, resp_.recv_offset, rx, pi.flags & ib::op_immdt, b);
	}
}

void Qp::execute_write_locked(const RxPacket &rx, sroce_env_batch *b) {
	const ib::PacketInfo &pi = rx.pi;
	u32 psn = pi.hdr.bth.psn;
	bool first = pi.flags & ib::op_first, last = pi.flags & ib::op_last;
	if (first) {
		resp_.write_va = pi.hdr.reth.va;
		resp_.write_rkey = pi.hdr.reth.rkey;
		resp_.write_len = pi.hdr.reth.length;
		resp_.recv_offset = 0;
		resp_.in_message = true;
		if (!(access_ & ib::access::remote_write)) {
			reject_locked(ib::NakCode::remote_access, rx, b);
			return;
		}
		if (resp_.write_len > param::max_msg_sz) {
			reject_locked(ib::NakCode::invalid_request, rx, b);
			return;
		}
	}
	// WRITE with immediate consumes a receive WQE at its last packet; RNR
	// before any byte of that packet is placed.
	bool imm_last = last && (pi.flags & ib::op_immdt);
	bool mp = imm_last && mp_receive_locked();
	if (imm_last && !recvq_.valid && !mp) {
		int t = take_recv_locked(b);
		if (t == 1)
			rnr_locked(rx, first, b);
		if (t)
			return; // < 0: the QP is in error
	}
	if (u64(resp_.recv_offset) + pi.payload_len > resp_.write_len || (last && resp_.recv_offset + pi.payload_len != resp_.write_len)) {
		reject_locked(ib::NakCode::invalid_request, rx, b);
		return;
	}
	if (pi.payload_len) {
		u64 va = resp_.write_va + resp_.recv_offset;
		auto mr = keys_.recv.rkey(dev_->keys(), resp_.write_rkey, resp_pdn_locked(), qpn_, va, pi.payload_len,
					  ib::access::remote_write);
		ktl::Result<void> r;
		if (mr.is_error()) {
			r = mr.error();
		} else {
			u32 at = rx.payload_off;
			r = mr.value()->for_each_chunk(pi.payload_len, [&](u8 *kva, u32 c) -> ktl::Result<void> {
				int e = sroce_env_pkt_read(rx.pkt, at, kva, c);
				at += c;
				return ktl::from_rc(e);
			});
		}
		if (r.is_error()) {
			reject_locked(ib::NakCode::remote_access, rx, b);
			return;
		}
	}
	// Multi-packet: the immediate completes on the buffer in use.
	if (mp && !mp_write_imm_locked(rx, b))
		return;
	resp_.recv_offset += pi.payload_len;
	resp_.epsn = psn_add(psn, 1);
	if (last) {
		resp_.msn = psn_add(resp_.msn, 1);
		resp_.in_message = false;
		if (imm_last && !mp) {
			resp_.msg_imm_data = pi.hdr.immdt.imm;
			finish_recv_locked(ib::wc_success, resp_.write_len, rx, true, b);
		}
	}
}

// Payload length against the path MTU (IBTA 9.7.5.1.1, as rxe's
// check_length): FIRST and MIDDLE carry exactly one MTU, LAST 1..MTU,
// ONLY at most one MTU. A sender that ignores it would overrun the
// receive or WRITE bookkeeping of every later packet.
bool Qp::payload_fits_mtu(const ib::PacketInfo &pi) const {
	u32 f = pi.flags;
	if (!(f & (ib::op_send | ib::op_write)))
		return true;
	u32 n = pi.payload_len, m = mtu();
	if ((f & ib::op_first) && (f & ib::op_last))
		return n <= m;
	if (f & (ib::op_first | ib::op_middle))
		return n == m;
	return n >= 1 && n <= m;
}

void Qp::execute_locked(const RxPacket &rx, sroce_env_batch *b) {
	const ib::PacketInfo &pi = rx.pi;
	u32 f = pi.flags;
	bool rc = reliable();
	if (xrc_target() && !xrc_bind_srq_locked(rx, b))
		return;
	// Message sequencing (IBTA 9.8.3): MIDDLE/LAST continue the message in
	// progress, of the same kind; FIRST/ONLY/READ/ATOMIC start one.
	bool starts = f & (ib::op_first | ib::op_slot_request);
	bool kind_ok = resp_.in_message ? (!starts && (f & (ib::op_send | ib::op_write)) == (resp_.msg_op & (ib::op_send | ib::op_write)))
				   : starts;
	if (!kind_ok) {
		if (rc) {
			nak_and_error_locked(ib::NakCode::invalid_request, pi.hdr.bth.psn, b);
		} else {
			mp_incomplete_locked(rx, b);
			resp_.in_message = false;
			resp_.drop_message = !starts;
			if (!starts)
				resp_.epsn = psn_add(pi.hdr.bth.psn, 1);
			else
				execute_locked(rx, b); // a new message after a lost LAST
		}
		return;
	}
	if (!payload_fits_mtu(pi)) {
		count(SROCE_CNT_RX_BAD_HEADER);
		if (rc) {
			nak_and_error_locked(ib::NakCode::invalid_request, pi.hdr.bth.psn, b);
		} else {
			// UC: the message is lost, as after a gap.
			mp_incomplete_locked(rx, b);
			resp_.in_message = false;
			resp_.recv_offset = 0;
			resp_.drop_message = !(f & ib::op_last);
			resp_.epsn = psn_add(pi.hdr.bth.psn, 1);
		}
		return;
	}
	if (starts)
		resp_.msg_op = f & (ib::op_send | ib::op_write);
	if (f & ib::op_send)
		execute_send_locked(rx, b);
	else if (f & ib::op_write)
		execute_write_locked(rx, b);
	else if (rc)
		execute_read_atomic_locked(rx, b);
	else
		return;
	// After responses still streaming, which it acknowledges implicitly.
	if (rc && state_ != ib::qps_err && pi.hdr.bth.ack_req && psn_diff(resp_.epsn, pi.hdr.bth.psn) > 0 &&
	    !(f & ib::op_slot_request))
		answer_locked(aeth_ack_unlimited, pi.hdr.bth.psn, b);
}

void Qp::on_request_locked(const RxPacket &rx, sroce_env_batch *b) {
	if (!recv_allowed())
		return;
	if (!connected()) {
		ud_receive_locked(rx, b);
		return;
	}
	const ib::PacketInfo &pi = rx.pi;
	u32 psn = pi.hdr.bth.psn;
	s32 d = psn_diff(psn, resp_.epsn);
	// Behind a refused request whose NAK waits for earlier responses,
	// nothing is executed (as rxe, which takes no request before a READ's
	// last response); duplicates of earlier requests are still answered.
	if (d >= 0 && resp_.error_waits())
		return;
	if (type_ == ib::qpt_uc) {
		if (d > 0)
			count(SROCE_CNT_OUT_OF_SEQ_REQ);
		if (d != 0) {
			// A gap: the message in progress is lost (IBTA 9.8.3.2).
			resp_.epsn = psn;
			if (resp_.in_message) {
				mp_incomplete_locked(rx, b);
				resp_.in_message = false;
				resp_.recv_offset = 0;
			}
			resp_.drop_message = !(pi.flags & ib::op_first);
		} else if (resp_.drop_message && (pi.flags & ib::op_first)) {
			resp_.drop_message = false;
		}
		if (resp_.drop_message) {
			resp_.epsn = psn_add(psn, 1);
			return;
		}
		execute_locked(rx, b);
		return;
	}
	if (d > 0) {
		count(SROCE_CNT_OUT_OF_SEQ_REQ);
		// One NAK per gap (IBTA 9.7.5.1.1), and once more when the requester
		// shows it is resending (a PSN at or behind the newest seen since
		// the NAK) and asks for an answer (AckReq) while the expected PSN
		// is still missing: its resent copy, or the NAK, was lost. Silent,
		// the requester would wait for its retry timer; at 10% loss that
		// was most of its timeouts. The same packet again counts only as
		// late as a tail-loss probe comes (the NAK was lost), not as soon
		// as a copy the network duplicated.
		u64 now = sroce_env_now_ns();
		// A probe is within what a requester may have out; a repeat far
		// beyond that is no probe (one NAK per gap still).
		bool repeat = psn == resp_.nak_prev_psn &&
			      (now - resp_.nak_sent_ns < param::probe_min_ns / 2 || u32(d) > 2 * param::max_unacked_pkts);
		bool resending = resp_.nak_sent && pi.hdr.bth.ack_req && psn_diff(psn, resp_.nak_high_psn) <= 0 && !repeat;
		resp_.nak_prev_psn = psn;
		if (!resp_.nak_sent || resending) {
			resp_.nak_sent = true;
			resp_.nak_sent_ns = now;
			resp_.nak_high_psn = psn;
			answer_locked(ib::Aeth::nak_syndrome(ib::NakCode::psn_seq_err), resp_.epsn, b);
		} else if (psn_diff(psn, resp_.nak_high_psn) > 0) {
			resp_.nak_high_psn = psn;
		}
		return;
	}
	if (d < 0) {
		count(SROCE_CNT_DUPLICATE_REQ);
		on_duplicate_locked(rx, b);
		return;
	}
	resp_.nak_sent = false;
	execute_locked(rx, b);
}

} // namespace sroce

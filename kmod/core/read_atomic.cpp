// Responder, READ and ATOMIC (IBTA 9.7.5.1.3): requests executed into a
// ring of replay slots, the last max_dest_rd_atomic kept, READ responses
// streamed from the slots within a budget, and duplicates answered again
// from them (a READ re-read from memory under today's access rules, an
// ATOMIC replayed from its saved result, an ATOMIC WRITE or FLUSH answered
// again without executing again).
// Duplicate SEND/WRITEs are ACKed again.
#include "key_table.h"
#include "mw_layout.h"
#include "param.h"
#include "qp.h"

namespace sroce {

namespace {

// Request j's slot. The ring always has max_qp_rd_atom entries, a power of
// two, so the free-running index maps the same across its 2^32 wrap and a
// max_dest_rd_atomic changed in SQD moves no slot; the last res_slots()
// requests are the ones kept for duplicates.
static_assert((param::max_qp_rd_atom & (param::max_qp_rd_atom - 1)) == 0, "replay ring: a power of two");
ReadAtomicRes &res_slot(ReadAtomicRes *res, u32 j) {
	return res[j % param::max_qp_rd_atom];
}

// An answer says every request before this PSN was done: after an ACK's
// PSN, at a NAK's.
u32 answer_end(u8 syndrome, u32 psn) {
	return ib::Aeth{syndrome}.is_ack() ? psn_add(psn, 1) : psn;
}

// Whether answer s replaces the one waiting, w. The first error NAK is
// final; otherwise the newest says most, but the sequence NAK that the
// packets behind an RNR-NAKed one draw leaves the RNR NAK's wait.
bool supersedes(u8 s, u32 psn, u8 w, u32 wpsn) {
	s32 d = psn_diff(answer_end(s, psn), answer_end(w, wpsn));
	if (is_error_nak(w))
		return is_error_nak(s) && d < 0;
	return is_error_nak(s) || d > 0 || (d == 0 && !(ib::Aeth{w}.is_rnr_nak() && ib::Aeth{s}.is_nak()));
}

// A response still to be sent for a PSN before end. Slots stream oldest
// first, so the first pending one has the oldest.
bool response_due_before(ResponderState &r, u32 end) {
	for (u32 j = r.res_send; j != r.res_next; j++) {
		ReadAtomicRes &e = res_slot(r.res, j);
		if (e.pending)
			return psn_diff(e.next_psn, end) < 0;
	}
	return false;
}

} // namespace

// An ACK or NAK (syndrome) for psn. Responses leave in PSN order (IBTA 9.5,
// 9.7.5.1): one still to be sent for an earlier request goes first, and
// the answer waits (send_read_responses_locked sends it), as rxe takes no
// request before a READ's last response is out. A NAK means every earlier
// request was done: sent at once, it made the requester ask for a READ
// still streaming again, and an error NAK's error state dropped the rest
// of the READ. An error NAK puts the QP in error once sent.
void Qp::answer_locked(u8 syndrome, u32 psn, sroce_env_batch *b) {
	if (resp_.answer_waits && !supersedes(syndrome, psn, resp_.answer_syndrome, resp_.answer_psn))
		return;
	resp_.answer_waits = response_due_before(resp_, answer_end(syndrome, psn));
	if (resp_.answer_waits) {
		resp_.answer_syndrome = syndrome;
		resp_.answer_psn = psn;
		return;
	}
	send_ack_locked(syndrome, psn, b);
	if (is_error_nak(syndrome))
		to_error_locked(b, ib::Aeth{syndrome}.nak_code() == ib::NakCode::remote_access ? ib::ev_qp_access_err
											: ib::ev_qp_req_err);
}

// The replay slot (free-running index) whose request consumed psn: the
// newest such, as 2^24 PSNs later a kept older request has the same PSN.
bool Qp::find_res_locked(u32 psn, u32 *idx) {
	for (u32 k = 1; k <= res_slots(); k++) {
		u32 j = resp_.res_next - k;
		ReadAtomicRes &e = res_slot(resp_.res, j);
		if (e.valid && psn_diff(psn, e.first_psn) >= 0 && psn_diff(psn, e.last_psn) <= 0) {
			*idx = j;
			return true;
		}
	}
	return false;
}

// A new request takes the slot of the oldest request, whose responses are
// being sent again for a duplicate. The requester only asks for something
// new in that slot once it has every response of the old request: those it
// missed came in the replay's first packets, the rest before, out of order.
// The remaining replay is for no one; stop it, and stream from the slot
// after it, so that the new request's responses keep their place.
void Qp::give_up_replay_locked() {
	u32 oldest = resp_.res_next - res_slots();
	res_slot(resp_.res, oldest).pending = false;
	if (s32(resp_.res_send - oldest) <= 0)
		resp_.res_send = oldest + 1;
}

void Qp::execute_read_atomic_locked(const RxPacket &rx, sroce_env_batch *b) {
	const ib::PacketInfo &pi = rx.pi;
	u32 psn = pi.hdr.bth.psn;
	bool atomic = pi.flags & ib::op_atomic;
	bool awrite = pi.flags & ib::op_atomic_write;
	bool flush = pi.flags & ib::op_flush;
	// No responder resources granted (max_dest_rd_atomic 0): no READ or
	// ATOMIC may come (IBTA 9.7.5.1.3, invalid request).
	if (max_dest_rd_atomic_ == 0) {
		nak_and_error_locked(ib::NakCode::invalid_request, psn, b);
		return;
	}
	// The request this one pushes out of the last res_slots() (the slot it
	// fills when max_dest_rd_atomic is max_qp_rd_atom).
	ReadAtomicRes &oldest = res_slot(resp_.res, resp_.res_next - res_slots());
	if (oldest.pending && oldest.replay)
		give_up_replay_locked();
	ReadAtomicRes &e = res_slot(resp_.res, resp_.res_next);
	// e is still sending only after max_dest_rd_atomic shrank in SQD.
	bool busy = oldest.pending || e.pending;
	// FLUSH's rights depend on its placement types (execute_flush_locked).
	u32 needs = atomic ? u32(ib::access::remote_atomic)
		    : awrite ? u32(ib::access::remote_write)
		    : flush  ? 0u
			     : u32(ib::access::remote_read);
	if (busy || (access_ & needs) != needs) {
		// More outstanding than max_dest_rd_atomic, or not allowed.
		nak_and_error_locked(busy ? ib::NakCode::invalid_request : ib::NakCode::remote_access, psn, b);
		return;
	}
	ReadAtomicRes n{};
	n.valid = n.pending = true;
	n.atomic = atomic;
	n.first_psn = n.req_psn = n.next_psn = psn;
	n.pdn = resp_pdn_locked();
	if (atomic) {
		const ib::AtomicEth &a = pi.hdr.atomic_eth;
		if (a.va & 7) {
			nak_and_error_locked(ib::NakCode::invalid_request, psn, b);
			return;
		}
		auto mr = dev_->keys().lookup_rkey(a.rkey, n.pdn, qpn_, a.va, 8, ib::access::remote_atomic);
		u64 *p = mr.is_error() ? nullptr : mr.value().atomic_ptr();
		if (!p) {
			nak_and_error_locked(ib::NakCode::remote_access, psn, b);
			return;
		}
		// A real atomic on the target memory: atomic against other QPs and
		// local CPU access alike (IB_ATOMIC_HCA).
		if ((pi.hdr.bth.opcode & 0x1f) == ib::op::compare_swap) {
			u64 expected = a.compare;
			__atomic_compare_exchange_n(p, &expected, a.swap_add, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
			n.orig = expected;
		} else {
			n.orig = __atomic_fetch_add(p, a.swap_add, __ATOMIC_SEQ_CST);
		}
		n.last_psn = psn;
	} else if (awrite || flush) {
		if (!(awrite ? execute_atomic_write_locked(rx, b) : execute_flush_locked(rx, b)))
			return;
		n.empty_answer = true;
		n.last_psn = psn;
	} else {
		const ib::Reth &r = pi.hdr.reth;
		if (r.length > param::max_msg_sz) {
			nak_and_error_locked(ib::NakCode::invalid_request, psn, b);
			return;
		}
		// A zero-length READ checks no key (IBTA C9-88, as rxe).
		if (r.length && keys_.read_resp.rkey(dev_->keys(), r.rkey, n.pdn, qpn_, r.va, r.length,
						     ib::access::remote_read).is_error()) {
			nak_and_error_locked(ib::NakCode::remote_access, psn, b);
			return;
		}
		u32 npkts = r.length ? (r.length + mtu() - 1) / mtu() : 1;
		n.last_psn = psn_add(psn, npkts - 1);
		n.rkey = n.orig_rkey = r.rkey;
		n.va = n.orig_va = r.va;
		n.remaining = n.orig_len = r.length;
	}
	e = n;
	resp_.res_next++;
	resp_.epsn = psn_add(n.last_psn, 1);
	resp_.msn = psn_add(resp_.msn, 1);
	send_read_responses_locked(b);
}

// ATOMIC WRITE (IBA 1.5 9.4.5.2): its 8 bytes stored at once, 8-byte
// aligned, in an MR with remote write; a reader sees the old or the new
// value, never a mix. false when refused (NAKed, the QP is in error).
bool Qp::execute_atomic_write_locked(const RxPacket &rx, sroce_env_batch *b) {
	const ib::PacketInfo &pi = rx.pi;
	const ib::Reth &r = pi.hdr.reth;
	u32 psn = pi.hdr.bth.psn;
	u64 v;
	if (r.length != sizeof(v) || pi.payload_len != sizeof(v) || (r.va & 7)) {
		nak_and_error_locked(ib::NakCode::invalid_request, psn, b);
		return false;
	}
	auto mr = dev_->keys().lookup_rkey(r.rkey, resp_pdn_locked(), qpn_, r.va, sizeof(v), ib::access::remote_write);
	u64 *p = mr.is_error() ? nullptr : mr.value().atomic_ptr();
	if (!p || sroce_env_pkt_read(rx.pkt, rx.payload_off, &v, sizeof(v))) {
		nak_and_error_locked(ib::NakCode::remote_access, psn, b);
		return false;
	}
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
	return true;
}

// FLUSH (IBA 1.5 9.4.6): the placement types asked for (global visibility,
// persistence) of the RETH's range or of the whole MR, each allowed by the
// matching FLUSH right of the QP and of the MR, as rxe requires. A range
// needs its start inside the MR even at length 0 (as rxe); the whole MR
// ignores the RETH's address and length. Earlier requests of this QP were
// placed before this one is executed (in PSN order, synchronously), so
// global visibility needs only a full barrier. An MR never has the
// persistence right here (ib::access::mr_supported). false when refused
// (NAKed, the QP is in error).
bool Qp::execute_flush_locked(const RxPacket &rx, sroce_env_batch *b) {
	const ib::PacketInfo &pi = rx.pi;
	const ib::Feth &f = pi.hdr.feth;
	const ib::Reth &r = pi.hdr.reth;
	u32 psn = pi.hdr.bth.psn;
	constexpr u8 types = ib::flush::global | ib::flush::persistent;
	if (!f.placement || (f.placement & ~types) || f.selectivity > ib::flush::level_region) {
		nak_and_error_locked(ib::NakCode::invalid_request, psn, b);
		return false;
	}
	u32 needs = (f.placement & ib::flush::global ? u32(ib::access::flush_global) : 0u) |
		    (f.placement & ib::flush::persistent ? u32(ib::access::flush_persistent) : 0u);
	// The whole MR: the key and rights alone (a zero length skips the bounds).
	u64 len = f.selectivity == ib::flush::level_region ? 0 : ktl::max(r.length, 1u);
	if ((access_ & needs) != needs || dev_->keys().lookup_rkey(r.rkey, resp_pdn_locked(), qpn_, r.va, len, needs).is_error()) {
		nak_and_error_locked(ib::NakCode::remote_access, psn, b);
		return false;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return true;
}

// Sends the next response packet of e. false when out of memory (retried
// from work) or the READ failed (the QP is in error).
bool Qp::send_one_response_locked(ReadAtomicRes &e, sroce_env_batch *b) {
	ib::Headers h;
	h.bth.dest_qpn = dest_qpn_;
	h.bth.psn = e.next_psn;
	h.aeth.syndrome = aeth_ack_unlimited;
	h.aeth.msn = resp_.msn;
	u32 payload = 0;
	if (e.atomic) {
		h.bth.opcode = u8(transport_base() | ib::op::atomic_acknowledge);
		h.atomic_ack_eth.orig = e.orig;
	} else {
		payload = ktl::min(e.remaining, mtu());
		bool first = e.next_psn == e.req_psn, last = payload == e.remaining;
		using namespace ib::op;
		h.bth.opcode = u8(transport_base() | (first && last ? read_response_only
					: first	     ? read_response_first
					: last	     ? read_response_last
						     : read_response_middle));
	}
	auto t = tx_begin(path_, path_info_, h, payload, sport_, e.replay);
	if (t.is_error()) {
		kick_locked();
		return false;
	}
	Tx tx = t.release_value();
	if (payload) {
		// The key is checked for every packet (a cache hit is checked
		// too, key_cache.h): a deregistration in the middle of a long
		// READ ends it with a NAK.
		auto mr = keys_.read_resp.rkey(dev_->keys(), e.rkey, e.pdn, qpn_, e.va, payload, ib::access::remote_read);
		auto r = mr.is_error() ? ktl::Result<void>(mr.error())
				       : mr.value()->copy_from(tx.data + tx.payload_off, payload);
		if (r.is_error()) {
			tx_abort(tx);
			e.pending = false;
			nak_and_error_locked(ib::NakCode::remote_access, e.next_psn, b);
			return false;
		}
	}
	tx_finish(tx, path_, b);
	e.va += payload;
	e.remaining -= payload;
	e.next_psn = psn_add(e.next_psn, 1);
	if (e.atomic || e.remaining == 0)
		e.pending = false;
	return true;
}

// Streams pending READ responses and ATOMIC ACKs, oldest first, within a
// budget; an answer that waits goes out before the first response not
// before its PSN (answer_locked), or after the last.
void Qp::send_read_responses_locked(sroce_env_batch *b) {
	u32 budget = param::read_resp_budget;
	while (resp_.res_send != resp_.res_next) {
		ReadAtomicRes &e = res_slot(resp_.res, resp_.res_send);
		if (!e.pending) {
			resp_.res_send++;
			continue;
		}
		if (state_ == ib::qps_err)
			return;
		if (resp_.answer_waits && psn_diff(e.next_psn, answer_end(resp_.answer_syndrome, resp_.answer_psn)) >= 0) {
			resp_.answer_waits = false;
			answer_locked(resp_.answer_syndrome, resp_.answer_psn, b);
			continue;
		}
		if (budget-- == 0) {
			kick_locked();
			return;
		}
		if (!send_one_response_locked(e, b))
			return;
	}
	keys_.read_resp.drop(); // all sent: before the last leaves (the batch flushes after)
	if (resp_.answer_waits) {
		resp_.answer_waits = false;
		answer_locked(resp_.answer_syndrome, resp_.answer_psn, b);
	}
}

void Qp::on_duplicate_locked(const RxPacket &rx, sroce_env_batch *b) {
	const ib::PacketInfo &pi = rx.pi;
	u32 psn = pi.hdr.bth.psn;
	if (pi.flags & ib::op_slot_request) {
		u32 idx;
		if (!find_res_locked(psn, &idx))
			return; // older than the replay slots: nothing to answer
		ReadAtomicRes *e = &res_slot(resp_.res, idx);
		if (e->empty_answer) {
			e->req_psn = e->next_psn = e->first_psn;
		} else if (!e->atomic) {
			const ib::Reth &r = pi.hdr.reth;
			// The memory is read again, so the access rules of now apply:
			// a READ right revoked since is refused as a new READ is.
			if (!(access_ & ib::access::remote_read)) {
				nak_and_error_locked(ib::NakCode::remote_access, psn, b);
				return;
			}
			// Resume from the requested PSN: the same key, and exactly the
			// bytes of the original request from that PSN on; anything
			// else is not a duplicate of it.
			u64 off = u64(u32(psn_diff(psn, e->first_psn))) * mtu();
			if (r.rkey != e->orig_rkey || r.va != e->orig_va + off || off + r.length > e->orig_len)
				return;
			if (r.length &&
			    dev_->keys().lookup_rkey(r.rkey, e->pdn, qpn_, r.va, r.length, ib::access::remote_read).is_error())
				return;
			e->rkey = r.rkey;
			e->va = r.va;
			e->remaining = r.length;
			e->req_psn = e->next_psn = psn;
		} else {
			e->next_psn = e->first_psn;
		}
		e->pending = e->replay = true;
		// The later requests will come again too: answer in order from
		// here. Not behind a refused request, after which none is taken:
		// what is owed before its NAK goes out first.
		for (u32 j = idx + 1; j != resp_.res_next && !resp_.error_waits(); j++)
			res_slot(resp_.res, j).pending = false;
		// An older response still streaming goes first: a repeated request
		// behind it must not skip it (its requester would wait for it
		// until RETRY_EXC_ERR).
		if (s32(idx - resp_.res_send) < 0)
			resp_.res_send = idx;
		send_read_responses_locked(b);
		return;
	}
	// A repeated SEND/WRITE: say again how far we are (IBTA 9.7.5.1.2).
	if (pi.hdr.bth.ack_req || (pi.flags & ib::op_last))
		answer_locked(aeth_ack_unlimited, psn_add(resp_.epsn, ib::psn_mask), b);
}

} // namespace sroce

// Qp: a queue pair. Its requester (requester.cpp) turns send WQEs into
// packets, its completer (completer.cpp) turns ACKs and responses into
// send completions, its responder (responder.cpp) executes incoming
// requests. All three run under the QP's lock, so one QP's work is strictly
// ordered while different QPs run in parallel.
//
// Kernel state lives here, never in the rings: a send WQE is copied out of
// the SQ and validated once (SendWqe), and receive WQEs are copied when a
// message starts (RecvWqe).
#pragma once
#include "ah.h"
#include "counters.h"
#include "cq.h"
#include "ind_table.h"
#include "key_cache.h"
#include "ib_enums.h"
#include "ktl/list.h"
#include "packet.h"
#include "param.h"
#include "pd.h"
#include "qpn_block.h"
#include "recv_queue.h"
#include "ring.h"
#include "rx_steer.h"
#include "sq_poller.h"
#include "srq.h"
#include "tx.h"
#include "xrcd.h"

struct sroce_env_timer;
struct sroce_env_work;
struct sroce_env_pkt;

namespace sroce {

// A received packet, parsed and checked by rx.cpp.
struct RxPacket {
	sroce_env_pkt *pkt;
	ib::IpUdpInfo ip;
	ib::PacketInfo pi;
	u32 payload_off; // from the IP header
	u32 len = 0;     // the whole packet, from the IP header
};

// AETH syndrome of a plain ACK with no credit information.
constexpr u8 aeth_ack_unlimited = ib::Aeth::ack_syndrome(ib::aeth_credits_invalid);
// A NAK that puts the responder's QP in error: all but a PSN sequence NAK (IBTA 9.9.3.1.3).
inline bool is_error_nak(u8 s) { return ib::Aeth{s}.is_nak() && ib::Aeth{s}.nak_code() != ib::NakCode::psn_seq_err; }

// 24-bit PSN arithmetic: a - b as a signed distance in (-2^23, 2^23].
inline s32 psn_diff(u32 a, u32 b) { return s32((a - b) << 8) >> 8; }
inline u32 psn_add(u32 psn, u32 n) { return (psn + n) & ib::psn_mask; }

// Kinds of send work request (ib::WrOpcode).
inline bool is_atomic(u8 op) { return op == ib::wr_atomic_cmp_swp || op == ib::wr_atomic_fetch_add; }
// ATOMIC WRITE (IBA 1.5 9.4.5.2): an 8-byte store answered by a zero-length
// READ RESPONSE ONLY. Like a READ or ATOMIC it takes a max_rd_atomic credit
// and a responder slot, and only its response completes it.
inline bool is_atomic_write(u8 op) { return op == ib::wr_atomic_write; }
// FLUSH (IBA 1.5 9.4.6): makes earlier writes to a range or a whole MR
// visible; no payload either way, answered and counted as ATOMIC WRITE is.
inline bool is_flush(u8 op) { return op == ib::wr_flush; }
inline bool is_empty_answer(u8 op) { return is_atomic_write(op) || is_flush(op); } // READ RESPONSE ONLY, no payload
inline bool is_read_or_atomic(u8 op) { return op == ib::wr_rdma_read || is_atomic(op) || is_empty_answer(op); }
inline bool is_single_request(u8 op) { return is_atomic(op) || is_empty_answer(op); } // whatever the length
inline bool has_imm(u8 op) { return op == ib::wr_send_imm || op == ib::wr_rdma_write_imm; }
inline bool is_write(u8 op) { return op == ib::wr_rdma_write || op == ib::wr_rdma_write_imm; }
// Executed by the requester itself, no packet: LOCAL_INV, REG_MR, BIND_MW.
inline bool is_local_op(u8 op) { return op == ib::wr_local_inv || op == ib::wr_reg_mr || op == ib::wr_bind_mw; }

// A send WQE copied out of the SQ ring plus its transport state.
struct SendWqe {
	sroce_wqe wqe;
	u32 first_psn;
	u32 last_psn;
	u32 npkts;
	u64 length;     // total payload bytes
	u8 status;      // ib::WcStatus once known
	bool done;      // acknowledged (or failed): ready to complete
	bool started;   // at least one packet sent
	// sroce_sge sge[num_sge] or inline bytes follow (sq_priv_stride_)
	sroce_sge *sges() { return reinterpret_cast<sroce_sge *>(this + 1); }
	u8 *inline_data() { return reinterpret_cast<u8 *>(this + 1); }
};

// The completion status of a local data transfer that failed: too long
// for the buffers (-EMSGSIZE), or a key, bounds or access failure.
inline u8 len_or_prot_status(ktl::Error e) {
	return e.errno_value() == ktl::err::msgsize ? ib::wc_loc_len_err : ib::wc_loc_prot_err;
}

// READ/ATOMIC requests of a WQE (a READ is asked for in parts of at most
// read_req_max_pkts response packets), and how many of them are answered
// once its first `answered` response packets arrived.
inline u32 wqe_requests(const SendWqe &w) {
	return is_single_request(w.wqe.opcode) ? 1 : (w.npkts + param::read_req_max_pkts - 1) / param::read_req_max_pkts;
}
inline u32 wqe_requests_answered(const SendWqe &w, u32 answered) {
	return answered >= w.npkts ? wqe_requests(w) : answered / param::read_req_max_pkts;
}

// A READ or ATOMIC request the responder has executed, kept so that a
// duplicate of it is answered again (IBTA 9.7.5.1.3).
struct ReadAtomicRes {
	bool valid = false;
	bool atomic = false;
	bool pending = false;  // responses still to send
	bool replay = false;   // sending again for a duplicate request
	u32 first_psn = 0;     // PSNs the request consumed
	u32 last_psn = 0;
	// READ, re-executed from any PSN on a duplicate (IBTA 9.7.5.1.3): the current request and its progress.
	u32 rkey = 0;
	u32 req_psn = 0;       // PSN of the (possibly resumed) request
	u32 next_psn = 0;
	u64 va = 0;            // next byte to send
	u32 remaining = 0;
	// READ: the request as first received; a duplicate asks for a part of exactly this.
	u32 orig_rkey = 0;
	u64 orig_va = 0;
	u32 orig_len = 0;
	// ATOMIC: the original value, replayed without executing again.
	u64 orig = 0;
	bool empty_answer = false; // ATOMIC WRITE and FLUSH: a zero-length READ response, sent again
	// The PD the request's keys were checked in: an XRC target's comes from
	// the message's SRQ, which a duplicate need not name again.
	u32 pdn = 0;
};

// The requester's state (requester.cpp), under the QP lock: what was
// fetched from the SQ and how far sending got.
struct RequesterState {
	u32 sq_fetched = 0;          // WQEs copied out of the ring
	u32 sq_next = 0;             // WQE the requester is sending
	u64 cur_offset = 0;          // bytes of sq_next already sent
	u32 psn = 0;                 // next PSN to send
	u32 psn_high = 0;            // next PSN never sent: responses below it count, sends below it are resends
	u32 rd_atomic_out = 0;       // outstanding READ/ATOMIC requests
	u32 pkts_since_ack_req = 0;
	bool probe = false;          // the next packet is a tail-loss probe: AckReq, past the window (retry.cpp)
	// PSNs that may be out beyond the oldest unacknowledged one, and what
	// it grows to by doubling: a retry timeout sets the window to
	// param::timeout_window and the limit to half of what was out, a PSN
	// NAK halves both (not below param::nak_window_floor); above the
	// limit each progress adds one (completer.cpp, transport.md).
	u32 window = param::max_unacked_pkts;
	u32 window_limit = param::max_unacked_pkts;
};

// The round-trip estimate and the tail-loss probe (retry.cpp), under the
// QP lock. One packet at a time is timed, never a resent one (Karn); the
// smoothing is RFC 6298's, in ns (srtt_ns 0: no sample yet). While answers
// are due, the retry timer fires at the probes before timeout_at_ns, then
// at it; probes counts those since the last progress.
struct LossRecovery {
	u64 srtt_ns = 0;
	u64 rttvar_ns = 0;
	bool timing = false;
	u32 timed_psn = 0;
	u64 timed_sent_ns = 0;
	u64 quiet_ns = 0;            // the newest first transmission or answer
	bool probe_armed = false;
	u32 probes = 0;
	u64 timeout_at_ns = 0;
};

// The completer's state (completer.cpp), under the QP lock: what was
// acknowledged and completed, and the retry machinery.
struct CompleterState {
	u32 sq_done = 0;             // oldest WQE not yet completed (= published consumer)
	u32 unacked_psn = 0;         // oldest PSN not yet acknowledged
	u64 ooo_mask = 0;            // READ responses received beyond unacked_psn + 1
	u32 retries_left = 0;
	u32 rnr_left = 0;
	bool rnr_wait = false;       // holding off after an RNR NAK
	bool sq_draining = false;    // in SQD, WQEs begun before it not all completed
	bool last_wqe_raised = false; // QP_LAST_WQE_REACHED: once per error, not per flush
	// Asked again for the READ/ATOMIC we wait for: not again this burst.
	bool resp_gap_retried = false;
	u32 resp_gap_probes = 0;     // tail-loss probes sent before that
	// A READ response gap at read_gap_psn was asked for again: further
	// responses beyond that same gap must not ask again.
	bool read_gap_resent = false;
	u32 read_gap_psn = 0;
	u32 read_gap_probes = 0;     // tail-loss probes sent before that
	u64 read_gap_resent_ns = 0;  // when a READ gap was last asked for again
	// How far a READ gap may be overtaken before it is asked for again,
	// requests since a spurious one, the farthest beyond gap_psn (retry.cpp).
	u32 reo_thresh = param::read_gap_resend_after;
	u32 reo_requests = 0;
	u32 gap_psn = 0;
	u32 gap_ahead = 0;
	bool timer_armed = false;
	LossRecovery rec;
};

// The responder's state (responder.cpp, read_atomic.cpp), under the QP lock:
// the expected PSN, the message in progress, the READ/ATOMIC replay slots.
struct ResponderState {
	u32 epsn = 0;                // expected PSN
	u32 msn = 0;                 // messages completed (24 bits)
	bool nak_sent = false;       // a PSN-sequence NAK is outstanding
	u32 nak_high_psn = 0;        // since that NAK: the newest PSN seen ahead of the expected one
	u32 nak_prev_psn = 0;        // the last PSN seen ahead of the expected one
	u64 nak_sent_ns = 0;         // when that NAK (or the last one again) went out
	bool in_message = false;     // between a FIRST and its LAST
	u32 recv_offset = 0;         // bytes placed of the current message
	u32 msg_op = 0;              // op_send or op_write: the message in progress
	u64 write_va = 0;            // RDMA WRITE in progress
	u32 write_rkey = 0;
	u32 write_len = 0;
	bool drop_message = false;   // UC: skip packets until the next FIRST/ONLY
	u32 msg_imm_data = 0;
	ReadAtomicRes *res = nullptr; // param::max_qp_rd_atom entries, a ring
	u32 res_next = 0;            // next slot to fill (free-running)
	u32 res_send = 0;            // oldest slot with responses to send
	// An ACK or NAK waiting for the responses of earlier PSNs (answers
	// leave in PSN order, read_atomic.cpp); an error NAK ends the QP when sent.
	bool answer_waits = false;
	u8 answer_syndrome = 0;
	u32 answer_psn = 0;
	bool error_waits() const { return answer_waits && is_error_nak(answer_syndrome); }
	u64 mp_wr_id = 0;            // multi-packet: the buffer the message last used
};

// Where the responder takes receive WQEs from, the QP's side of a receive
// queue owner: its own RQ, or the SRQ it shares (an RSS work queue later),
// or for an XRC target the SRQ each message's XRCETH names; and the WQE the
// message in progress holds.
struct QpRecv {
	RecvQueue rq;                // absent with an SRQ, and for an XRC target
	ktl::RefPtr<Srq> srq;        // set at creation, never changed
	ktl::RefPtr<Srq> xrc_srq;    // XRC target: the current request's SRQ
	u32 max_sge = 0;
	RecvWqe wqe;
	bool valid = false;          // wqe is held by the message in progress
	MpRecv mp;                   // the own RQ's multi-packet buffer (mp_responder.cpp)
};

class Qp : public ktl::RefCounted<Qp>, public ktl::RcuFreed, public SqPollTarget {
public:
	static ktl::Result<ktl::RefPtr<Qp>> create(Device &dev, const sroce_core_qp_init &init);
	void destroy();

	u32 qpn() const { return qpn_; }
	u32 type() const { return type_; }
	void *owner() const { return owner_; }
	Device &device() const { return *dev_; }

	ktl::Result<void> modify(const sroce_core_qp_attr &attr, u32 mask, sroce_env_batch *b);
	void query(sroce_core_qp_attr *attr);

	void doorbell(sroce_env_batch *b);
	void snapshot(sroce_core_qp_view *s);
	ktl::Result<void> post_send(const sroce_wqe &wqe, const sroce_sge *sge, const void *data, u32 inline_len);
	ktl::Result<void> post_recv(const sroce_wqe &wqe, const sroce_sge *sge);

	// A packet addressed to this QP (rx.cpp has parsed and checked it).
	void receive(const RxPacket &rx, sroce_env_batch *b);
	// An RSS QP's request (rx.cpp's receive steering): the glue's owner of
	// the CQ of the WQ it would go to; null for another QP or a dead one.
	void *rss_cq_owner(const RxPacket &rx);
	// A connected user QP's packet (rx_steer.cpp): true when the env took
	// it for the owner's CPU; steered_done once it is received or dropped.
	bool steer_rx(const RxPacket &rx);
	void steered_done(bool dropped);
	RxSteer &rx_steer() { return steer_; }
	QpnBlock *qpn_block() const { return block_.get(); } // a child's (qpn_block.h), or null
	// A UD message's receive, shared by a UD QP's own queue and an RSS
	// work queue (wq.h): its GRH area and payload scattered into w's SGEs
	// (checked against pdn) from offset, giving the status; and the
	// completion of such a message.
	static constexpr u32 grh_len = 40;
	static u8 place_ud(Device &dev, const RecvWqe &w, u32 pdn, const RxPacket &rx, u32 offset = 0);
	static void fill_ud_recv_cqe(sroce_cqe &c, u64 wr_id, u8 status, const RxPacket &rx, u32 qp_num);
	// A receive completion with no data: a flush or an error.
	sroce_cqe recv_status_cqe(u64 wr_id, u8 status) const;
	const CounterBlock &counters() const { return counters_; }

	ktl::ListNode table_node; // Device QP table collision chain

private:
	friend class ktl::RefCounted<Qp>;
	template <typename T, typename... A> friend T *ktl::create(ktl::AllocCtx, A &&...);
	template <typename T> friend void ktl::destroy(T *);
	Qp(Device &dev) : SqPollTarget(poll_ops), dev_(&dev) {}
	// The SQ poller (sq_poller.h): a user QP of a polled context.
	static const SqPollOps poll_ops;
	void sq_poll_drain(sroce_env_batch *b);
	~Qp();
	ktl::Result<void> init(const sroce_core_qp_init &init);
	ktl::Result<void> init_rss_child(const sroce_core_rss_child &c, const sroce_core_qp_init &in);
	void detach_rss_child();

	// ---- qp_attr.cpp: attributes ----
	ktl::Result<void> check_modify_locked(const sroce_core_qp_attr &attr, u32 mask) const;
	void apply_modify_locked(const sroce_core_qp_attr &attr, u32 mask, sroce_env_batch *b);

	// ---- qp.cpp: state, timer and work ----
	// To ERR with the affiliated asynchronous event that says why.
	void to_error_locked(sroce_env_batch *b, int event = ib::ev_qp_fatal);
	bool connected() const { return type_ != ib::qpt_ud && type_ != ib::qpt_gsi; }
	// Acknowledged, retried, READ and ATOMIC capable: RC and both XRC halves.
	bool reliable() const { return type_ == ib::qpt_rc || type_ == ib::qpt_xrc_ini || type_ == ib::qpt_xrc_tgt; }
	bool xrc_target() const { return type_ == ib::qpt_xrc_tgt; }
	// The BTH opcode's transport bits for this QP's packets.
	u8 transport_base() const {
		return type_ == ib::qpt_rc ? ib::op::rc : type_ == ib::qpt_uc ? ib::op::uc : connected() ? ib::op::xrc : ib::op::ud;
	}
	bool sends_allowed() const { return state_ == ib::qps_rts || state_ == ib::qps_sqd; }
	bool recv_allowed() const {
		return state_ == ib::qps_rtr || state_ == ib::qps_rts || state_ == ib::qps_sqd;
	}
	u32 mtu() const { return ib::mtu_bytes(path_mtu_); }
	void arm_retry_timer_locked();
	static void on_timer(void *arg, sroce_env_batch *b);
	static void on_work(void *arg, sroce_env_batch *b);
	void kick_locked(); // more requester or responder work: run it from work
	void update_ack_due_locked();
	// An event of this QP: counted on its device and on the QP.
	void count(sroce_core_counter id, u64 n = 1) {
		dev_->counters().inc(id, n);
		counters_.inc(id, n);
	}
	u32 res_slots() const { return ktl::max(max_dest_rd_atomic_, 1u); }

	// ---- requester.cpp ----
	void requester_run_locked(sroce_env_batch *b);
	bool fetch_wqe_locked(sroce_env_batch *b);
	ktl::Result<void> validate_wqe(const sroce_wqe &w) const;
	// One request packet on its way out (send_packet_locked's steps).
	struct RequestPacket {
		ktl::RefPtr<Ah> ah;    // UD: keeps path alive until the packet is out
		sroce_env_path *path = nullptr;
		const sroce_core_path_info *pinfo = nullptr;
		ib::Headers h;
		u64 off = 0;           // of the WQE's payload
		u32 payload = 0;
		bool first = false, last = true;
		u64 read_end = 0;      // a READ request asks up to here
	};
	bool send_packet_locked(SendWqe &w, u32 idx, sroce_env_batch *b);
	bool execute_local_op_locked(SendWqe &w, u32 idx, sroce_env_batch *b);
	bool route_packet_locked(SendWqe &w, RequestPacket &p, sroce_env_batch *b);
	void request_headers(const SendWqe &w, RequestPacket &p) const;
	bool ack_req_locked(const SendWqe &w, bool last);
	ktl::Result<void> gather_payload_locked(SendWqe &w, const RequestPacket &p, Tx &tx);
	void advance_locked(SendWqe &w, u32 idx, const RequestPacket &p, sroce_env_batch *b);
	void rewind_locked(u32 psn);
	void catch_up_locked();
	SendWqe &swqe(u32 idx) { return *reinterpret_cast<SendWqe *>(sq_priv_ + usize(idx & sq_mask_) * sq_priv_stride_); }
	u8 wire_opcode(const SendWqe &w, bool first, bool last) const;

	// ---- completer.cpp ----
	void on_response_locked(const RxPacket &rx, sroce_env_batch *b);
	void on_ack_psn_locked(u32 psn, sroce_env_batch *b);
	void on_data_response_locked(const RxPacket &rx, sroce_env_batch *b);
	void on_nak_locked(const ib::PacketInfo &pi, sroce_env_batch *b);
	bool place_read_response_locked(const RxPacket &rx, SendWqe &w, sroce_env_batch *b);
	void fail_send_locked(SendWqe &w, u8 status, sroce_env_batch *b);

	// ---- retry.cpp: the retry timer, the RTT estimate, the tail-loss
	// probe and the resends that need no timer ----
	void progress_locked();
	void restart_retry_timer_locked();
	void on_timeout_locked(sroce_env_batch *b);
	void arm_retry_or_probe_locked(u64 from, u64 now);
	void send_probe_locked(sroce_env_batch *b);
	u64 probe_delay_ns() const;
	void rtt_sent_locked(u32 psn, bool ack_req);
	void rtt_answered_locked(u32 psn);
	void resend_read_gap_locked(u32 ahead);
	void read_gap_filled_locked(u32 psn);
	// completions and flush
	void complete_send_locked(SendWqe &w, sroce_env_batch *b);
	bool post_cqe_locked(CompletionQueue &cq, const sroce_cqe &cqe, bool solicited, sroce_env_batch *b);
	void cq_overflowed_locked(sroce_env_batch *b);
	void complete_done_locked(sroce_env_batch *b);
	void flush_locked(sroce_env_batch *b);

	// ---- rx.cpp: the receive entry ----
	bool from_peer_locked(const ib::IpUdp &a) const;

	// ---- responder.cpp, read_atomic.cpp ----
	void on_request_locked(const RxPacket &rx, sroce_env_batch *b);
	void on_duplicate_locked(const RxPacket &rx, sroce_env_batch *b);
	bool payload_fits_mtu(const ib::PacketInfo &pi) const;
	bool xrc_bind_srq_locked(const RxPacket &rx, sroce_env_batch *b);
	// The PD a request's keys are checked in: the QP's, or for an XRC
	// target the PD of the SRQ its XRCETH named (IBTA annex A14).
	u32 resp_pdn_locked() const { return xrc_target() ? recvq_.xrc_srq->pdn() : pd_->pdn(); }
	void post_recv_cqe_locked(const sroce_cqe &c, bool solicited, sroce_env_batch *b);
	void execute_locked(const RxPacket &rx, sroce_env_batch *b);
	void execute_send_locked(const RxPacket &rx, sroce_env_batch *b);
	void execute_write_locked(const RxPacket &rx, sroce_env_batch *b);
	void give_up_replay_locked();
	void execute_read_atomic_locked(const RxPacket &rx, sroce_env_batch *b);
	bool execute_atomic_write_locked(const RxPacket &rx, sroce_env_batch *b);
	bool execute_flush_locked(const RxPacket &rx, sroce_env_batch *b);
	int take_recv_locked(sroce_env_batch *b); // 0 taken, 1 none, <0 QP in error
	void send_ack_locked(u8 syndrome, u32 psn, sroce_env_batch *b);
	void answer_locked(u8 syndrome, u32 psn, sroce_env_batch *b); // in PSN order, after responses
	void nak_and_error_locked(ib::NakCode code, u32 psn, sroce_env_batch *b);
	void reject_locked(ib::NakCode code, const RxPacket &rx, sroce_env_batch *b);
	void rnr_locked(const RxPacket &rx, bool first, sroce_env_batch *b);
	void send_read_responses_locked(sroce_env_batch *b);
	bool send_one_response_locked(ReadAtomicRes &e, sroce_env_batch *b);
	void ud_receive_locked(const RxPacket &rx, sroce_env_batch *b);
	static int read_grh(const RxPacket &rx, u8 *grh); // grh_len bytes
	void finish_recv_locked(u8 status, u32 byte_len, const RxPacket &rx, bool imm, sroce_env_batch *b);
	// The fields of a receive completion every transport has.
	static void fill_recv_cqe(sroce_cqe &c, u64 wr_id, u8 status, u32 byte_len, const RxPacket &rx, u32 qp_num,
				  u32 src_qp, bool imm, u32 imm_data, bool grh);
	bool find_res_locked(u32 psn, u32 *idx);

	// ---- mp_responder.cpp: multi-packet receive queues ----
	struct MpPacket;
	// The receive side in use is multi-packet: the own RQ's or the SRQ's
	// (for an XRC target, the current request's).
	bool mp_receive_locked() const;
	ktl::Result<void> mp_place_locked(u32 len, MpPacket &p, u32 byte_len, sroce_env_batch *b);
	void mp_post_locked(const MpCompletion &mc, const MpPacket &p, sroce_env_batch *b);
	void mp_incomplete_locked(const RxPacket &rx, sroce_env_batch *b);
	void mp_send_locked(const RxPacket &rx, sroce_env_batch *b);
	bool mp_write_imm_locked(const RxPacket &rx, sroce_env_batch *b);
	void mp_ud_receive_locked(const RxPacket &rx, sroce_env_batch *b);
	void mp_flush_locked(sroce_env_batch *b);

	// ---- tx.cpp: building packets ----
	// resend: a PSN sent before; zero_copy: the payload for tx_attach.
	ktl::Result<Tx> tx_begin(sroce_env_path *path, const sroce_core_path_info &pinfo, const ib::Headers &h,
				 u32 payload, u16 sport, bool resend = false, bool zero_copy = false);
	// Appends len bytes at ref as fragments. An error (memory not to be
	// sent in place, fragments full): send the packet as a copy instead.
	ktl::Result<void> tx_attach(Tx &t, const KeyRef &ref, u32 len);
	bool zero_copy_wanted(u32 len) const; // a payload of len from this QP's MRs
	void tx_finish(Tx &t, sroce_env_path *path, sroce_env_batch *b);
	void tx_abort(Tx &t); // a packet begun but not sent
	u16 udp_sport() const { return sport_; }

	ktl::RefPtr<Device> dev_;
	ktl::RefPtr<Pd> pd_; // none for an XRC target
	ktl::RefPtr<CompletionQueue> scq_;  // none for an XRC target
	ktl::RefPtr<CompletionQueue> rcq_;  // none for XRC: a target completes into its SRQs' CQs
	ktl::RefPtr<Xrcd> xrcd_;            // XRC target
	void *owner_ = nullptr;
	u32 qpn_ = 0;
	u32 type_ = 0;
	bool user_ = false;
	bool polled_ = false;        // on the device's SQ poller
	bool sq_sig_all_ = false;
	u16 sport_ = 0;

	ktl::SpinLock lock_{SROCE_LOCK_QP};
	// Everything below is guarded by lock_.
	bool dead_ = false;
	// Attributes (qp_attr.cpp: modify, query).
	u32 state_ = ib::qps_reset;
	u32 path_mtu_ = ib::mtu_1024;
	u32 qkey_ = 0;
	u32 dest_qpn_ = 0;
	u32 access_ = 0;
	u32 pkey_index_ = 0;
	u32 port_ = 1;
	u32 max_rd_atomic_ = 0;
	u32 max_dest_rd_atomic_ = 0;
	u32 min_rnr_timer_ = 0;
	u32 timeout_ = 0;
	u32 retry_cnt_ = 0;
	u32 rnr_retry_ = 0;
	u8 sgid_index_ = 0;
	bool sqd_notify_ = false;
	sroce_env_path *path_ = nullptr;
	sroce_core_path_info path_info_{};

	Ring sq_; // the send queue, and below the kernel's copies of its WQEs
	u32 sq_mask_ = 0;
	u32 max_send_sge_ = 0;
	u32 max_inline_ = 0;
	u8 *sq_priv_ = nullptr;      // SendWqe copies, one per SQ slot
	u32 sq_priv_stride_ = 0;
	CounterBlock counters_;      // this QP's share of the device's counters

	RequesterState req_;
	CompleterState comp_;
	ResponderState resp_;
	QpRecv recvq_;
	RssContext rss_; // an RSS QP's (immutable after init); rss_.table null otherwise
	// A child's (qpn_block.cpp; immutable after init): its block, its WQ.
	ktl::RefPtr<QpnBlock> block_;
	ktl::RefPtr<Wq> rwq_;

	sroce_env_timer *timer_ = nullptr;
	bool ack_due_ = false;       // SROCE_SQ_ACK_DUE as last written to a user SQ
	sroce_env_work *work_ = nullptr;
	RxSteer steer_;
	QpKeyCaches keys_; // under lock_, dropped as key_cache.h says
	QpWindows windows_; // the type 2 windows bound through it, under the key table's lock
};

} // namespace sroce

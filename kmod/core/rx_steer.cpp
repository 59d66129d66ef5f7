// Receive steering of a connected user QP (rx_steer.h): the packet goes to
// the CPU its owner is on, unless it is already there.
#include "qp.h"

namespace sroce {

bool Qp::steer_rx(const RxPacket &rx) {
	// Kernel QPs complete where ib_core polls their CQs; UD and XRC have
	// their own steering (RSS) or none.
	if (!user_ || (type_ != ib::qpt_rc && type_ != ib::qpt_uc))
		return false;
	s32 home = steer_.pinned();
	if (home == RxSteer::none)
		home = steer_.seen();
	// Worth a trip to another CPU: a payload to check and place, or an
	// answer that runs the owner's sending (the requester then sends from
	// the owner's CPU, not from the peer's). The rest, a small message or
	// an ACK while nothing waits to be sent, is received here at once: a
	// ping-pong takes no extra hop. Unless others of the QP wait (begin).
	bool answer = rx.pi.flags & ib::op_response;
	if (!steer_.enabled() ||
	    (rx.len - rx.payload_off < param::rx_steer_min_bytes && !(answer && steer_.clocked())))
		home = RxSteer::none; // begin: one load, unless others wait
	RxSteer::Target t = steer_.begin(home);
	if (t.full) { // as a full CPU queue would
		count(SROCE_CNT_RX_STEER_DROPS);
		sroce_env_pkt_free(rx.pkt);
		return true;
	}
	if (t.cpu == RxSteer::none)
		return false;
	ref(); // the token's: dropped by sroce_core_rx_steered or _rx_steer_drop
	if (sroce_env_rx_steer_qp(rx.pkt, t.cpu, t.must_queue, this, steer_.allowed()))
		return true; // counted when received there, or as dropped
	steer_.end();
	unref();
	return false;
}

void Qp::steered_done(bool dropped) {
	count(dropped ? SROCE_CNT_RX_STEER_DROPS : SROCE_CNT_RX_STEERED);
	// After the packet's receive: the QP's next one may now go elsewhere.
	steer_.end();
	unref(); // the token's; may be the last
}

} // namespace sroce

// RxSteer: where a connected user QP's packets are received (issue 17's
// receive steering; Documentation/transport.md, "Receive steering"). The
// work of a packet (ICRC, placement or completion, the answer) runs on the
// CPU of the QP's owner rather than on the CPU the packet arrived on,
// which on veth is the sender's: the two ends' work then runs on two CPUs.
//
// Order: while any of the QP's packets waits in a CPU's queue, every later
// one joins that queue, whatever the owner's CPU is by then, and one
// received here waits too; the target moves only when the QP has none
// queued (as RFS moves a flow). So a QP receives its packets in the order
// they arrived.
#pragma once
#include "ktl/atomic.h"
#include "ktl/types.h"

namespace sroce {

class RxSteer {
public:
	static constexpr s32 none = -1;

	// The owner's choice (srocedv_modify_qp_rx_cpu): a CPU, or none to
	// follow the owner.
	void pin(s32 cpu) { pinned_.store(cpu, ktl::MemoryOrder::relaxed); }
	s32 pinned() const { return pinned_.load(ktl::MemoryOrder::relaxed); }
	// Where the owner was last seen: its last system call on the QP
	// (create, modify, a doorbell), or the CPU its rings say it posted the
	// last WQE the kernel took from. Negative: nothing seen.
	void saw_owner_on(s32 cpu) {
		if (cpu >= 0 && seen_.load(ktl::MemoryOrder::relaxed) != cpu)
			seen_.store(cpu, ktl::MemoryOrder::relaxed);
	}
	s32 seen() const { return seen_.load(ktl::MemoryOrder::relaxed); }

	// Where a packet goes, home being the CPU the owner is on (none: here).
	// A target other than none counts the packet in flight until end().
	struct Target {
		s32 cpu;
		bool must_queue; // others of the QP are queued there: never here inline
	};
	Target begin(s32 home) {
		// Pairs with end()'s release: a count of 0 means the packets
		// queued before were received, so this one may go elsewhere.
		if (inflight_.load(ktl::MemoryOrder::acquire) == 0) {
			if (home == none)
				return {none, false};
			cpu_.store(home, ktl::MemoryOrder::relaxed);
			inflight_.fetch_add(1, ktl::MemoryOrder::acq_rel);
			return {home, false};
		}
		inflight_.fetch_add(1, ktl::MemoryOrder::acq_rel);
		return {cpu_.load(ktl::MemoryOrder::relaxed), true};
	}
	// A packet begin() counted was received, dropped, or not taken.
	void end() { inflight_.fetch_sub(1, ktl::MemoryOrder::release); }
	u32 in_flight() const { return inflight_.load(ktl::MemoryOrder::relaxed); }

private:
	ktl::Atomic<u32> inflight_;       // packets of the QP in a CPU's queue
	ktl::Atomic<s32> cpu_{none};      // that CPU, while inflight_ > 0
	ktl::Atomic<s32> pinned_{none};
	ktl::Atomic<s32> seen_{none};
};

} // namespace sroce

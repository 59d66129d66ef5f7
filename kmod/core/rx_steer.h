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
#include "env.h"
#include "ktl/atomic.h"
#include "ktl/types.h"
#include "ktl/utility.h"

namespace sroce {

class RxSteer : ktl::NonCopyable {
public:
	static constexpr s32 none = -1;
	RxSteer() = default;
	~RxSteer() { sroce_env_free(allowed_.load(ktl::MemoryOrder::relaxed)); }

	// The CPUs the owner may run on, as the glue gave them at its last
	// modify (a bitmap of len bytes; process context): a CPU the owner
	// names (ring hint, srocedv) outside them is not used, so a process
	// confined by a cpuset cannot send its receive work to other CPUs.
	// Null before the first: nothing is steered. bits null: steering is
	// off for this QP (the module parameter rx_steer at that modify), so
	// its packets cost one load here, unless some of them still wait.
	void set_allowed(const void *bits, u32 len) {
		if (!bits) {
			enabled_.store(false, ktl::MemoryOrder::relaxed);
			return;
		}
		enabled_.store(true, ktl::MemoryOrder::relaxed);
		u8 *a = allowed_.load(ktl::MemoryOrder::acquire);
		if (!a) {
			u8 *fresh = static_cast<u8 *>(sroce_env_zalloc(len, 0));
			if (!fresh)
				return; // not steered: no harm
			__builtin_memcpy(fresh, bits, len);
			// Two modifies may run at once (uverbs holds the QP shared):
			// one copy wins, the other is freed. Release pairs with
			// allowed()'s acquire: the bits before the pointer.
			if (allowed_.compare_exchange(a, fresh, ktl::MemoryOrder::release, ktl::MemoryOrder::acquire))
				return;
			sroce_env_free(fresh);
		}
		// A packet reading meanwhile sees old or new bits, either of them
		// the owner's.
		__builtin_memcpy(a, bits, len);
	}
	const void *allowed() const { return allowed_.load(ktl::MemoryOrder::acquire); }
	bool enabled() const { return enabled_.load(ktl::MemoryOrder::relaxed); }

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

	// Whether the QP's sending is clocked by its answers: requests are out
	// (SROCE_SQ_ACK_DUE: posts skip the doorbell, an answer runs the
	// requester) and more waits to be sent. Set under the QP lock. An
	// answer then carries the owner's sending work; in a ping-pong it does
	// not, and takes no extra hop.
	void set_clocked(bool on) { clocked_.store(on, ktl::MemoryOrder::relaxed); }
	bool clocked() const { return clocked_.load(ktl::MemoryOrder::relaxed); }

	// Where a packet goes, home being the CPU the owner is on (none: here).
	// A target other than none counts the packet in flight until end().
	// full: max_queued already wait; the caller drops it (a QP takes no
	// more of a CPU's queue, which all QPs and RSS share).
	struct Target {
		s32 cpu;
		bool must_queue; // others of the QP are queued there: never here inline
		bool full;
	};
	static constexpr u32 max_queued = 256;
	Target begin(s32 home) {
		// One atomic word, so that the test and the choice are one step:
		// two packets arriving at once on two CPUs cannot both find none
		// waiting and go two ways. Acquire pairs with end()'s release: a
		// count of 0 means the packets queued before were received.
		u64 old = state_.load(ktl::MemoryOrder::acquire);
		for (;;) {
			u32 n = u32(old);
			if (n >= max_queued)
				return {none, true, true};
			if (n == 0 && home == none)
				return {none, false, false};
			s32 cpu = n ? s32(u32(old >> 32)) : home;
			u64 next = u64(u32(cpu)) << 32 | (n + 1);
			if (state_.compare_exchange(old, next, ktl::MemoryOrder::acq_rel, ktl::MemoryOrder::acquire))
				return {cpu, n != 0, false};
		}
	}
	// A packet begin() counted was received, dropped, or not taken. The
	// count is the low word and above 0: no borrow reaches the CPU.
	void end() { state_.fetch_sub(1, ktl::MemoryOrder::release); }
	u32 in_flight() const { return u32(state_.load(ktl::MemoryOrder::relaxed)); }

private:
	// The CPU the waiting packets went to (high word, while the count is
	// above 0) and how many wait (low word).
	ktl::Atomic<u64> state_;
	ktl::Atomic<s32> pinned_{none};
	ktl::Atomic<s32> seen_{none};
	ktl::Atomic<u8 *> allowed_{nullptr};
	ktl::Atomic<bool> clocked_{false};
	ktl::Atomic<bool> enabled_{false};
};

} // namespace sroce

// SqPoller: an SQ poller (io_uring SQPOLL style), shared by the devices
// that join it (kmod/linux/sqpoll.c). A thread scans the send queues of the QPs of user contexts that asked for polling
// and runs their send path when a producer index moved, so a post needs no
// system call. After sq_idle_us without work it sets NEED_WAKEUP in the
// context page of every polled context, issues a full barrier, re-checks
// every SQ and only then sleeps; a doorbell wakes it again. When other
// tasks want its CPU (sroce_env_thread_contended) it sets NEED_WAKEUP and
// naps, leaving them the CPU while posts ring and run inline; if they
// still want the CPU after a short grace it takes the sleep path without
// waiting sq_idle_us: such a doze lasts sq_idle_us, during which posts ring
// and run inline without waking the thread. The thread's loop is a state
// machine (POLL, NAP, DOZE, SLEEP; the legal transitions are in
// sq_poll_state.h). The protocol is described in Documentation/sq-poller.md.
//
// The logic is here and runs on env.h threads, so the host tests drive the
// same code with real threads (tests/host/test_sq_poller.cpp).
#pragma once
#include "ktl/atomic.h"
#include "ktl/list.h"
#include "ktl/lock.h"
#include "ktl/result.h"
#include "sq_poll_state.h"

struct sroce_env_thread;
struct sroce_env_batch;

namespace sroce {

class SqPollTarget;

// How the poller reaches what it polls: a send queue (a Qp, or a test
// double that derives from SqPollTarget too).
struct SqPollOps {
	// The SQ's producer index as the poster published it (a lockless
	// load_acquire of the shared ring). Called only while the target is
	// on the poller's list, under the poller's lock: the ring exists then.
	u32 (*producer)(SqPollTarget &t);
	// Runs the send path for what was posted, under the target's own
	// serialization (the QP lock: the doorbell's path). In a batch, no
	// poller lock held.
	void (*drain)(SqPollTarget &t, sroce_env_batch *b);
	// Keep the object alive between the scan and the drain.
	void (*get)(SqPollTarget &t);
	void (*put)(SqPollTarget &t);
};

class SqPollTarget {
public:
	ktl::ListNode poll_node;   // SqPoller::targets_
	u32 poll_seen = 0;         // producer at the last drain; poller lock
	const SqPollOps *const poll_ops_;

protected:
	explicit SqPollTarget(const SqPollOps &ops) : poll_ops_(&ops) {}
	~SqPollTarget() = default;
};

// A polled user context: its NEED_WAKEUP flag word in the context page.
struct SqPollCtx {
	ktl::ListNode poll_node;          // SqPoller::ctxs_
	volatile u32 *flags = nullptr;    // sroce_context_page.flags
};

// sq_poll=auto, the default. A poller that shares its CPU with
// busy-polling processes costs them more than the system calls it saves
// (benchmarks.md, "The SQ poller on two vCPUs": on 2 vCPUs doorbell mode
// beat it in 9 of 10 rows), so a device polls only where its poller gets a
// CPU of its own: one per CPU the administrator set aside (sq_poll_cpus),
// or, with none named, when the online CPUs hold one per poller, this one
// included, and still sq_poll_auto_app_cpus for the application (a sender
// and a receiver, each busy-polling its CQ). Otherwise posts ring the
// doorbell, which skips while ACKs are due (abi.md, SQ-A1).
constexpr u32 sq_poll_auto_app_cpus = 2;
constexpr bool sq_poll_auto(u32 online_cpus, u32 poll_cpus, u32 pollers) {
	if (poll_cpus)
		return poll_cpus > pollers;
	return u64(online_cpus) >= u64(pollers) + 1 + sq_poll_auto_app_cpus;
}
static_assert(!sq_poll_auto(1, 0, 0) && !sq_poll_auto(2, 0, 0),
	      "1 or 2 CPUs: no poller unless CPUs are named (the test VMs have 2)");
static_assert(sq_poll_auto(3, 0, 0) && !sq_poll_auto(3, 0, 1), "3 CPUs: one poller");
static_assert(sq_poll_auto(2, 1, 0) && !sq_poll_auto(2, 1, 1) && sq_poll_auto(64, 3, 2) && !sq_poll_auto(64, 3, 3),
	      "one poller per named CPU, however many CPUs are online");
static_assert(sq_poll_auto(4, 0, 0) && sq_poll_auto(4, 0, 1) && !sq_poll_auto(4, 0, 2),
	      "4 CPUs: two pollers, two CPUs left for the application");
static_assert(!sq_poll_auto(~0u, 0, ~0u), "no overflow");

class SqPoller {
public:
	SqPoller() = default;
	~SqPoller();
	SqPoller(const SqPoller &) = delete;
	SqPoller &operator=(const SqPoller &) = delete;

	// How long its CPU must stay contended before an idle poller dozes.
	// Shorter contention (a kworker, the ksoftirqd its own sends woke)
	// gets naps: a doze would make every post ring for sq_idle_us.
	static constexpr u64 default_contend_grace_ns = 500 * 1000;

	// Starts the thread (may sleep). idle_ns: how long the thread polls
	// without finding work before it sleeps; grace_ns: how long contention
	// must last before it dozes (at most idle_ns / 2); cpu: where it runs
	// (env.h's thread_create; -1: the CPUs sq_poll_cpus allows).
	ktl::Result<void> start(u64 idle_ns, const char *name,
				u64 grace_ns = default_contend_grace_ns, int cpu = -1);
	// Stops and joins the thread (process context). Every context and
	// target must have been removed.
	void stop();
	bool running() const { return thread_ != nullptr; }

	// A polled context joins. Its page must already say NEED_WAKEUP (a
	// context starts in doorbell mode: its first doorbell makes the poller
	// clear the flag).
	void add_ctx(SqPollCtx &c);
	// After this returns the poller never writes c.flags again.
	void remove_ctx(SqPollCtx &c);
	void add(SqPollTarget &t);
	// After this returns the poller never reads t's ring again; a drain
	// already collected may still run (the target checks its own state).
	void remove(SqPollTarget &t);
	// Waits (process context, may sleep) until the pass under way, if it
	// had collected targets, has drained and dropped them. A device that
	// leaves a shared poller calls it once its QPs are removed: the thread
	// may still hold one of them, whose drain sends on the device and
	// whose last reference frees into it, and nothing else would wait
	// for the thread before the glue frees the device (a device's own
	// poller is stopped instead). Found by review.
	void sync();

	// A poster rang the doorbell (it saw NEED_WAKEUP): wake the thread,
	// which clears the flag in every polled context and polls again.
	void doorbell();

	// For tests and debugfs.
	struct Stats {
		u64 sleeps;    // times the thread went to sleep
		u64 wakeups;   // doorbells that found the thread asleep or dozing
		u64 drains;    // targets drained because their producer moved
		u64 rechecks;  // sleeps cancelled by the re-check after the barrier
		u64 dozes;     // sleeps begun before idle_ns: the CPU was contended
		u64 held;      // doorbells that did not wake the thread: a doze or nap held
		u64 naps;      // short sleeps, NEED_WAKEUP set, while others wanted the CPU
		u64 max_walk;  // most targets looked at under one hold of the lock
	};
	Stats stats() const;
	// True when the thread is asleep (NEED_WAKEUP set everywhere).
	bool asleep() const { return asleep_.load(ktl::MemoryOrder::acquire) != 0; }
	// Every transition the thread took so far, one sq_poll_transition_bit
	// each.
	u32 transitions_taken() const { return taken_.load(ktl::MemoryOrder::relaxed); }
	// The check the thread makes at each transition: false, with a
	// warning, when sq_poll_state.h's table does not allow it.
	static bool check_transition(SqPollState from, SqPollState to);

private:
	// What a scan of the awake thread found.
	enum class Seen : u8 {
		stop,       // should_stop
		work,       // drained something
		cpu_free,   // nothing; the CPU is free, idle_ns not over
		cpu_wanted, // nothing; others want the CPU, within the grace
		cpu_kept,   // nothing; others have wanted it for the grace
		idle,       // nothing for idle_ns
	};
	struct Loop;

	static void thread_main(void *arg, sroce_env_thread *self);
	void run(sroce_env_thread *self);
	// POLL and NAP: should_stop, a doorbell, then one scan.
	Seen scan(Loop &l);
	// The states (rxe_comp.c style): each does what the thread does in
	// it and returns the next state; move_to takes the transition.
	SqPollState poll_state(Loop &l, Seen seen);
	SqPollState nap_state(Loop &l, Seen seen);
	static SqPollState awake_exit(Seen seen);
	SqPollState doze_state(Loop &l);
	SqPollState sleep_state(Loop &l);
	void move_to(Loop &l, SqPollState next);
	void nap(Loop &l);
	bool sleep_cancelled(Loop &l);
	void sleep_until_woken(Loop &l);
	// One scan: drains every target whose producer moved. True if any.
	bool poll_once();
	bool any_moved();
	SqPollTarget &rotate_locked();
	void note_walk_locked(usize n);
	void set_need_wakeup_locked(bool on);
	void set_need_wakeup(bool on);

	static constexpr usize batch_max = 32; // targets drained per scan
	// Targets looked at under one hold of the lock (interrupts off): a
	// scan, or a chunk of the sleep path's look at all of them.
	static constexpr usize walk_max = 64;
	static constexpr u64 max_nap_ns = 100 * 1000;

	ktl::SpinLock lock_{SROCE_LOCK_SQ_POLLER};
	bool lock_ready_ = false;
	// Guarded by lock_.
	ktl::List<SqPollTarget, &SqPollTarget::poll_node> targets_;
	usize ntargets_ = 0;
	ktl::List<SqPollCtx, &SqPollCtx::poll_node> ctxs_;

	sroce_env_thread *thread_ = nullptr;
	u64 idle_ns_ = 0;
	u64 grace_ns_ = 0;
	u64 nap_ns_ = 0;
	ktl::Atomic<u32> wake_req_;  // a doorbell since the thread last looked
	// Odd while poll_once holds targets it collected (sync): made odd under
	// lock_, so a remove() that follows sees it.
	ktl::Atomic<u32> pass_;
	ktl::Atomic<u32> asleep_;
	// While a doze or a nap holds (now < doze_until_, 0: none), doorbells
	// do not wake the thread.
	ktl::Atomic<u64> doze_until_;
	ktl::Atomic<u64> sleeps_;
	ktl::Atomic<u64> wakeups_;
	ktl::Atomic<u64> drains_;
	ktl::Atomic<u64> rechecks_;
	ktl::Atomic<u64> dozes_;
	ktl::Atomic<u64> held_;
	ktl::Atomic<u64> naps_;
	ktl::Atomic<u64> max_walk_; // written under lock_, read by stats()
	ktl::Atomic<u32> taken_; // transitions_taken(); only the thread writes
};

} // namespace sroce

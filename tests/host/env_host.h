// Test hooks of the host env.h implementation.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace env_host {
// Allocations not yet freed (leak checks in tests).
long live_allocations();
// Lets n allocations succeed, then fails one (n = 0: the next one); -1 = off.
void fail_nth_allocation(int n);
// Log lines and warnings seen since the last clear.
std::vector<std::string> &log_lines();
int warnings();
void clear();

// For the env objects the simulator allocates (packets, paths, timers, work):
// counted in live_allocations; take_allocation_failure consumes the
// fail_nth_allocation countdown and says whether this allocation fails.
bool take_allocation_failure();
void count_allocation(long delta);

// Bytes allocated through sroce_env_zalloc_user (the kernel charges them to
// the user's memcg) since the program started; frees do not subtract.
long user_bytes();
// Restarts sroce_env_random_u32's stream (a Sim seeds it with its own seed,
// so a run replays key for key).
void seed_random(uint64_t seed);

// Lock order (env.h sroce_env_lock_kind): taking a lock whose kind is not
// later than that of every lock the thread holds calls the handler with
// both kinds before it waits. The default prints and aborts the test; a
// test of the checker installs its own. Returns the previous handler
// (nullptr restores the default).
using LockOrderHandler = void (*)(int held, int taken);
LockOrderHandler set_lock_order_handler(LockOrderHandler h);
int locks_held(); // by the calling thread
// How often locks of this kind were taken, by any thread (a test compares
// the count before and after an operation).
unsigned long locks_taken(int kind);
// RCU: sroce_env_free_rcu's blocks wait until rcu_barrier, which the
// simulator calls between two of its steps (no core call runs then, so no
// reader holds a pointer) and live_allocations before counting. A test that
// runs core calls on threads of its own calls it where they are quiet. An
// SQ poller thread (env_thread.cpp) is such a thread: it finds QPs and MR
// keys without locks, and rcu_barrier does not wait for it, so a test that
// frees objects while a poller runs keeps it from draining them meanwhile.
void rcu_barrier();
size_t rcu_pending(); // blocks waiting for it
// What sroce_env_cpu answers on the calling thread (default 0, taken
// modulo the CPU count), and sroce_env_nr_cpus for all (default 4; set it
// before creating a device: a device sizes its per-CPU shards at creation).
void set_cpu(int cpu);
void set_nr_cpus(int n);
// Bytes sroce_env_pkt_add_frag has attached in place (zero-copy), since
// the program started; note_zero_copy_frag counts them.
unsigned long zero_copy_bytes();
void note_zero_copy_frag(unsigned int len);

// Atomic context, as the kernel's preempt count: a spinlock held, a timer or
// receive callback running. A sleeping allocation or a waiting cancel there
// is a core bug and warns.
bool in_atomic();
struct AtomicScope {
	AtomicScope();
	~AtomicScope();
	AtomicScope(const AtomicScope &) = delete;
	AtomicScope &operator=(const AtomicScope &) = delete;
};

// What sroce_env_thread_contended answers for every thread (default false:
// a CPU of its own). The SQ poller sleeps early while it is true.
void set_thread_contended(bool on);

// Events flushed by sroce_env_run_batched while no simulator exists (an SQ
// poller on a device of its own), as (owner, kind), in order.
std::vector<std::pair<void *, int>> unsimulated_events();
void clear_unsimulated_events();
} // namespace env_host

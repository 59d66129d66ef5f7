// Atomics with an explicit memory order at every call site, over the GCC
// __atomic builtins (inlined as lock-prefixed instructions on x86_64; no
// library calls). Ring code uses load_acquire/store_release and names the
// barrier each one pairs with.
#pragma once
#include "types.h"

namespace ktl {

enum class MemoryOrder : int {
	relaxed = __ATOMIC_RELAXED,
	acquire = __ATOMIC_ACQUIRE,
	release = __ATOMIC_RELEASE,
	acq_rel = __ATOMIC_ACQ_REL,
	seq_cst = __ATOMIC_SEQ_CST,
};

template <typename T> class Atomic {
	static_assert(sizeof(T) <= 8, "lock-free sizes only");
public:
	constexpr Atomic() : v_() {}
	constexpr explicit Atomic(T v) : v_(v) {}
	Atomic(const Atomic &) = delete;
	Atomic &operator=(const Atomic &) = delete;

	T load(MemoryOrder mo) const { return __atomic_load_n(&v_, int(mo)); }
	void store(T v, MemoryOrder mo) { __atomic_store_n(&v_, v, int(mo)); }
	T exchange(T v, MemoryOrder mo) { return __atomic_exchange_n(&v_, v, int(mo)); }
	// Returns the previous value.
	T fetch_add(T d, MemoryOrder mo) { return __atomic_fetch_add(&v_, d, int(mo)); }
	T fetch_sub(T d, MemoryOrder mo) { return __atomic_fetch_sub(&v_, d, int(mo)); }
	T fetch_or(T d, MemoryOrder mo) { return __atomic_fetch_or(&v_, d, int(mo)); }
	T fetch_and(T d, MemoryOrder mo) { return __atomic_fetch_and(&v_, d, int(mo)); }
	// On failure, expected is updated to the current value.
	bool compare_exchange(T &expected, T desired, MemoryOrder success, MemoryOrder failure) {
		return __atomic_compare_exchange_n(&v_, &expected, desired, false, int(success),
						   int(failure));
	}

private:
	T v_;
};

// Accessors for fields of shared (user-mapped) memory, which are plain
// integers in abi/ structs rather than Atomic<T>.
template <typename T> inline T load_acquire(const volatile T *p) {
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
template <typename T> inline void store_release(volatile T *p, T v) {
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}
template <typename T> inline T load_relaxed(const volatile T *p) {
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}
template <typename T> inline void store_relaxed(volatile T *p, T v) {
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

// Full barrier (store->load ordering), e.g. for the poller sleep handshake.
inline void full_barrier() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

} // namespace ktl

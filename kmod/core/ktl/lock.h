// SpinLock over env.h locks, a scoped Guard, and Protected<T>, which keeps
// data reachable only through a guard (SerenityOS SpinlockProtected). Every
// lock has a kind (env.h sroce_env_lock_kind): its lockdep class, and its
// place in the lock order that enum states.
#pragma once
#include "../env.h"
#include "errno.h"
#include "result.h"
#include "utility.h"

namespace ktl {

class SpinLock : NonCopyable {
public:
	// The kind is fixed where the lock is declared, so every lock of one
	// member shares one class.
	explicit SpinLock(sroce_env_lock_kind kind) : kind_(kind) {}
	~SpinLock() { sroce_env_spin_destroy(lock_); }
	// Two-phase: construction cannot fail, init() can.
	Result<void> init() {
		lock_ = sroce_env_spin_create(kind_);
		if (!lock_)
			return Error::from_errno(err::nomem);
		return {};
	}
	unsigned long lock() { return sroce_env_spin_lock(lock_); }
	void unlock(unsigned long flags) { sroce_env_spin_unlock(lock_, flags); }

private:
	sroce_env_spinlock *lock_ = nullptr;
	sroce_env_lock_kind kind_;
};

class [[nodiscard]] Guard : NonCopyable {
public:
	// On the constructor too: GCC warns about a discarded `Guard{lock};`
	// (locked and unlocked at once) only when the constructor says so.
	[[nodiscard]] explicit Guard(SpinLock &l) : lock_(l), flags_(l.lock()) {}
	~Guard() { lock_.unlock(flags_); }
private:
	SpinLock &lock_;
	unsigned long flags_;
};

template <typename T> class Protected : NonCopyable {
public:
	explicit Protected(sroce_env_lock_kind kind) : lock_(kind) {}
	Result<void> init() { return lock_.init(); }

	// Runs fn(T&) with the lock held and returns what fn returns.
	template <typename Fn> auto with(Fn fn) {
		Guard g(lock_);
		return fn(data_);
	}

private:
	SpinLock lock_;
	T data_{};
};

} // namespace ktl

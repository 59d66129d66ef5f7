// SpinLock over env.h locks, a scoped Guard, and Protected<T>, which keeps
// data reachable only through a guard (SerenityOS SpinlockProtected).
#pragma once
#include "../env.h"
#include "errno.h"
#include "result.h"
#include "utility.h"

namespace ktl {

class SpinLock : NonCopyable {
public:
	SpinLock() = default;
	~SpinLock() { sroce_env_spin_destroy(lock_); }
	// Two-phase: construction cannot fail, init() can.
	Result<void> init() {
		lock_ = sroce_env_spin_create();
		if (!lock_)
			return Error::from_errno(err::nomem);
		return {};
	}
	unsigned long lock() { return sroce_env_spin_lock(lock_); }
	void unlock(unsigned long flags) { sroce_env_spin_unlock(lock_, flags); }

private:
	sroce_env_spinlock *lock_ = nullptr;
};

class [[nodiscard]] Guard : NonCopyable {
public:
	explicit Guard(SpinLock &l) : lock_(l), flags_(l.lock()) {}
	~Guard() { lock_.unlock(flags_); }
private:
	SpinLock &lock_;
	unsigned long flags_;
};

template <typename T> class Protected : NonCopyable {
public:
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

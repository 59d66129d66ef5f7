// Intrusive reference counting. RefCounted<T> is a CRTP base: the last
// unref() runs T's destructor and frees through env.h. RefPtr<T> owns one
// reference; adopt() takes over an existing one without incrementing.
#pragma once
#include "alloc.h"
#include "atomic.h"

namespace ktl {

// A T that readers may find without a lock (ObjectTable::lookup_rcu)
// derives from RcuFreed too: its memory is freed a grace period after its
// destructor ran (env.h sroce_env_free_rcu), so such a reader's try_ref()
// still reads a count, 0, and not freed memory.
class RcuFreed {
public:
	sroce_env_rcu_head *rcu_free_head() { return &rcu_head_; }

private:
	sroce_env_rcu_head rcu_head_{};
};

template <typename T> class RefCounted : NonCopyable {
public:
	void ref() const {
		u32 old = refs_.fetch_add(1, MemoryOrder::relaxed);
		KTL_WARN_ON(old == 0 || old == ~0u); // resurrection or overflow
	}
	// A reference unless the count already reached 0 (the object is being
	// destroyed): for readers that found it without a lock.
	bool try_ref() const {
		u32 old = refs_.load(MemoryOrder::relaxed);
		do {
			if (old == 0 || KTL_WARN_ON(old == ~0u))
				return false;
		} while (!refs_.compare_exchange(old, old + 1, MemoryOrder::acquire, MemoryOrder::relaxed));
		return true;
	}
	// True when this dropped the last reference (the object is gone).
	bool unref() const {
		u32 old = refs_.fetch_sub(1, MemoryOrder::acq_rel);
		if (KTL_WARN_ON(old == 0))
			return false;
		if (old != 1)
			return false;
		destroy_self();
		return true;
	}
	// Drops the caller's reference only if it is the last, in one step
	// (1 -> 0), so a reader's try_ref cannot slip in between a look at the
	// count and the drop: last() runs, then the object is destroyed, and
	// the answer is true. False: others hold references, and the caller
	// still holds its own.
	template <typename Fn> bool unref_if_last(Fn last) const {
		u32 one = 1;
		if (!refs_.compare_exchange(one, 0, MemoryOrder::acq_rel, MemoryOrder::relaxed))
			return false;
		last();
		destroy_self();
		return true;
	}
	u32 ref_count() const { return refs_.load(MemoryOrder::relaxed); }

protected:
	RefCounted() : refs_(1) {}
	~RefCounted() = default;

private:
	void destroy_self() const {
		T *obj = const_cast<T *>(static_cast<const T *>(this));
		if constexpr (requires(T *t) { t->rcu_free_head(); }) {
			sroce_env_rcu_head *h = obj->rcu_free_head();
			obj->~T();
			sroce_env_free_rcu(obj, h);
		} else {
			destroy(obj);
		}
	}

	mutable Atomic<u32> refs_;
};

template <typename T> class RefPtr {
public:
	RefPtr() : p_(nullptr) {}
	RefPtr(decltype(nullptr)) : p_(nullptr) {}
	explicit RefPtr(T *p) : p_(p) {
		if (p_)
			p_->ref();
	}
	RefPtr(const RefPtr &o) : RefPtr(o.p_) {}
	RefPtr(RefPtr &&o) : p_(o.leak()) {}
	~RefPtr() { reset(); }

	RefPtr &operator=(RefPtr o) {
		swap(p_, o.p_);
		return *this;
	}

	static RefPtr adopt(T *p) {
		RefPtr r;
		r.p_ = p;
		return r;
	}
	// Gives up ownership without dropping the reference.
	T *leak() {
		T *p = p_;
		p_ = nullptr;
		return p;
	}
	void reset() {
		T *p = leak();
		if (p)
			p->unref();
	}

	T *get() const { return p_; }
	T *operator->() const { return p_; }
	T &operator*() const { return *p_; }
	explicit operator bool() const { return p_ != nullptr; }

private:
	T *p_;
};

// Allocates a T with one reference held by the returned RefPtr.
template <typename T, typename... Args> Result<RefPtr<T>> make_ref(AllocCtx ctx, Args &&...args) {
	T *obj = create<T>(ctx, forward<Args>(args)...);
	if (!obj)
		return Error::from_errno(err::nomem);
	return RefPtr<T>::adopt(obj);
}

} // namespace ktl

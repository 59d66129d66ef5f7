// Intrusive reference counting. RefCounted<T> is a CRTP base: the last
// unref() runs T's destructor and frees through env.h. RefPtr<T> owns one
// reference; adopt() takes over an existing one without incrementing.
#pragma once
#include "alloc.h"
#include "atomic.h"

namespace ktl {

template <typename T> class RefCounted : NonCopyable {
public:
	void ref() const {
		u32 old = refs_.fetch_add(1, MemoryOrder::relaxed);
		KTL_WARN_ON(old == 0 || old == ~0u); // resurrection or overflow
	}
	// True when this dropped the last reference (the object is gone).
	bool unref() const {
		u32 old = refs_.fetch_sub(1, MemoryOrder::acq_rel);
		if (KTL_WARN_ON(old == 0))
			return false;
		if (old != 1)
			return false;
		destroy(const_cast<T *>(static_cast<const T *>(this)));
		return true;
	}
	u32 ref_count() const { return refs_.load(MemoryOrder::relaxed); }

protected:
	RefCounted() : refs_(1) {}
	~RefCounted() = default;

private:
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

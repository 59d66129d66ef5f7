// ObjectTable<T>: numbers -> objects for the lookups the data path makes
// (QPN -> Qp on every packet, AH handle -> Ah on every UD send). The table
// holds no reference: an object leaves the table (remove) before its owner
// drops the last reference, so a lookup never revives a dying object; the
// lookup takes its own reference under the lock. lookup_rcu takes none:
// for a T that is RcuFreed (refptr.h), whose memory outlives any reader
// that found it.
#pragma once
#include "id_alloc.h"
#include "ktl/alloc.h"
#include "ktl/lock.h"
#include "ktl/refptr.h"

namespace sroce {

template <typename T> class ObjectTable : ktl::NonCopyable {
public:
	ObjectTable() = default;
	~ObjectTable() { sroce_env_free(slots_); }

	// Numbers in [min, max]; numbers below min may be placed with insert_at.
	ktl::Result<void> init(u32 min, u32 max) {
		TRY(lock_.init());
		TRY(ids_.init(min, max));
		slots_ = static_cast<T **>(sroce_env_zalloc(sizeof(T *) * (usize(max) + 1), 0));
		if (!slots_)
			return ktl::Error::from_errno(ktl::err::nomem);
		max_ = max;
		return {};
	}

	ktl::Result<u32> insert(T *obj) {
		u32 id = TRY(ids_.alloc());
		ktl::Guard g(lock_);
		ktl::store_release(&slots_[id], obj); // pairs with lookup_rcu's load
		return id;
	}
	// A fixed number outside the allocator's range (QP1).
	ktl::Result<void> insert_at(u32 id, T *obj) {
		ktl::Guard g(lock_);
		if (id > max_ || slots_[id])
			return ktl::Error::from_errno(ktl::err::busy);
		ktl::store_release(&slots_[id], obj); // pairs with lookup_rcu's load
		return {};
	}
	// An aligned block of 2^log2 numbers taken from the allocator for
	// insert_at; each goes back with release().
	ktl::Result<u32> reserve_block(u32 log2, u32 reserve) { return ids_.alloc_block(log2, reserve); }
	void release(u32 id) { ids_.free(id); }
	void remove(u32 id, T *obj, bool allocated = true) {
		{
			ktl::Guard g(lock_);
			if (id > max_ || KTL_WARN_ON(slots_[id] != obj))
				return;
			ktl::store_relaxed(&slots_[id], static_cast<T *>(nullptr));
		}
		if (allocated)
			ids_.free(id);
	}
	ktl::RefPtr<T> lookup(u32 id) {
		ktl::Guard g(lock_);
		if (id > max_)
			return nullptr;
		return ktl::RefPtr<T>(slots_[id]);
	}
	// The same without the lock, from inside an RCU read-side section (a
	// batch: the receive path's per-packet look-up). An object found while
	// its last reference goes is missed, as if already removed.
	ktl::RefPtr<T> lookup_rcu(u32 id) {
		static_assert(requires(T *t) { t->rcu_free_head(); }, "T's memory must outlive RCU readers");
		if (id > max_)
			return nullptr;
		T *obj = ktl::load_acquire(&slots_[id]); // pairs with insert's store
		if (!obj || !obj->try_ref())
			return nullptr;
		return ktl::RefPtr<T>::adopt(obj);
	}

private:
	ktl::SpinLock lock_{SROCE_LOCK_OBJECT_TABLE};
	IdAllocator ids_;
	T **slots_ = nullptr; // written under lock_; lookup_rcu reads without it
	u32 max_ = 0;
};

} // namespace sroce

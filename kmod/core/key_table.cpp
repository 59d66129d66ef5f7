// Memory keys: handing out random-variant keys, lookup and invalidation (key_table.h).
#include "key_table.h"
#include "ib_enums.h"
#include "mr.h"
#include "mw.h"
#include "mw_layout.h"
#include "param.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;
namespace acc = ib::access;

MemoryKeyTable::~MemoryKeyTable() {
	// Every MR holds its PD and so the device: none can be left here.
	KTL_WARN_ON(chunks_ && indices_.in_use());
	for (u32 i = 0; chunks_ && i < nchunks_; i++)
		sroce_env_free(chunks_[i]);
	sroce_env_free(chunks_);
}

ktl::Result<void> MemoryKeyTable::init(u32 max_entries, ShardedCounterBlock *counters) {
	// Index and variant must fit a 32-bit key.
	if (max_entries == 0 || max_entries >= (1u << 24))
		return Error::from_errno(err::inval);
	TRY(lock_.init());
	TRY(indices_.init(1, max_entries));
	max_index_ = max_entries;
	counters_ = counters;
	nchunks_ = (max_entries >> chunk_shift) + 1;
	chunks_ = static_cast<Entry **>(sroce_env_zalloc(u64(nchunks_) * sizeof(Entry *), 0));
	if (!chunks_)
		return Error::from_errno(err::nomem);
	return {};
}

MemoryKeyTable::Entry *MemoryKeyTable::entry_locked(u32 index) const {
	if (index == 0 || index > max_index_)
		return nullptr;
	Entry *chunk = chunks_[index >> chunk_shift];
	return chunk ? &chunk[index & (chunk_size - 1)] : nullptr;
}

ktl::Result<void> MemoryKeyTable::ensure_chunk(u32 index) {
	u32 c = index >> chunk_shift;
	{
		ktl::Guard g(lock_);
		if (chunks_[c])
			return {};
	}
	// Allocated outside the lock (it may sleep); a racing insert into the
	// same chunk may have installed one meanwhile.
	auto *chunk = static_cast<Entry *>(sroce_env_zalloc(chunk_size * sizeof(Entry), 0));
	if (!chunk)
		return Error::from_errno(err::nomem);
	{
		ktl::Guard g(lock_);
		if (!chunks_[c]) {
			ktl::store_release(&chunks_[c], chunk); // pairs with find_mr_rcu's load
			chunk = nullptr;
		}
	}
	sroce_env_free(chunk);
	return {};
}

ktl::Result<u32> MemoryKeyTable::take_index(bool user) {
	u32 index = TRY(indices_.alloc(user ? param::reserve::mr : 0));
	if (auto r = ensure_chunk(index); r.is_error()) {
		indices_.free(index);
		return r.error();
	}
	return index;
}

// A fresh key byte on every use of the index: random, as rxe draws it, so
// keys cannot be predicted, and never the byte this index had last, so the
// freed key misses.
MemoryKeyTable::Entry *MemoryKeyTable::take_entry_locked(u32 index) {
	Entry *e = entry_locked(index);
	KTL_WARN_ON(e->state != State::free);
	e->variant = u8(e->variant + 1 + sroce_env_random_u32() % 255);
	set_key(e, index << 8 | e->variant);
	set_mr(e, nullptr);
	e->mw = nullptr;
	set_state(e, State::invalid);
	return e;
}

// An MR or a window into a fresh entry, state invalid: its slot of the
// entry (Entry::mr or Entry::mw) names it, and it learns its key.
template <typename T> ktl::Result<u32> MemoryKeyTable::insert_object(T &obj, T *Entry::*slot, bool user) {
	u32 index = TRY(take_index(user));
	ktl::Guard g(lock_);
	Entry *e = take_entry_locked(index);
	ktl::store_release(&(e->*slot), &obj); // Entry::mr: as set_mr
	obj.key_ = e->key;
	obj.in_table_ = true;
	return e->key;
}

ktl::Result<u32> MemoryKeyTable::insert(Mr &mr, bool user) { return insert_object(mr, &Entry::mr, user); }

ktl::Result<u32> MemoryKeyTable::insert_mw(Mw &mw, bool user) { return insert_object(mw, &Entry::mw, user); }

void MemoryKeyTable::enable(Mr &mr) {
	ktl::Guard g(lock_);
	Entry *e = entry_locked(index_of(mr.key_));
	if (KTL_WARN_ON(!e || e->mr != &mr || e->state == State::free))
		return;
	set_state(e, State::valid);
}

ktl::Result<void> MemoryKeyTable::invalidate(u32 key, u32 pdn, u32 qpn) {
	ktl::RefPtr<Mr> unbound; // let go after the lock
	ktl::RefPtr<MwLayout> unbound_layout;
	ktl::Guard g(lock_);
	Entry *e = entry_locked(index_of(key));
	if (!e || e->state == State::free || e->key != key)
		return Error::from_errno(err::inval);
	if (e->mw) {
		// Type 1 windows are invalidated by a zero-length bind only.
		if (e->mw->type_ != Mw::type2)
			return Error::from_errno(err::inval);
		// A bound window is its QP's: another QP of the PD may not end it.
		if (e->mw->pdn() != pdn || (e->state == State::valid && e->mw->qpn_ != qpn))
			return Error::from_errno(err::acces);
		if (e->mw->users_)
			return Error::from_errno(err::busy);
		unbind_locked(*e->mw, &unbound, &unbound_layout);
	} else {
		if (!e->mr->is_fast_reg())
			return Error::from_errno(err::inval);
		if (e->mr->pdn() != pdn)
			return Error::from_errno(err::acces);
	}
	set_state(e, State::invalid);
	return {};
}

ktl::Result<void> MemoryKeyTable::fast_register(u32 mr_key, u32 pdn, u32 new_key, u64 iova, u64 length,
						u32 access) {
	ktl::Guard g(lock_);
	Entry *e = entry_locked(index_of(mr_key));
	// A window's index has no MR (allocated and unbound windows are invalid too).
	if (!e || e->state != State::invalid || !e->mr || !e->mr->is_fast_reg() ||
	    index_of(new_key) != index_of(mr_key))
		return Error::from_errno(err::inval);
	if (e->mr->pdn() != pdn)
		return Error::from_errno(err::acces);
	TRY(e->mr->fast_register_locked(iova, length, access));
	// The consumer picks the key byte (ib_inc_rkey); a stale key of the
	// previous registration then misses, as after a deregistration.
	set_key(e, new_key);
	e->variant = u8(new_key);
	e->mr->key_ = new_key;
	set_state(e, State::valid);
	return {};
}

ktl::Result<void> MemoryKeyTable::remove(Mr &mr) {
	u32 index = index_of(mr.key_);
	{
		ktl::Guard g(lock_);
		Entry *e = entry_locked(index);
		if (KTL_WARN_ON(!e || e->mr != &mr || !mr.in_table_))
			return Error::from_errno(err::inval);
		// IBA 10.6.7.2.6, as rxe: not while windows are bound to it.
		if (mr.windows())
			return Error::from_errno(err::busy);
		set_mr(e, nullptr);
		set_state(e, State::free);
		mr.in_table_ = false;
	}
	indices_.free(index);
	return {};
}

const MemoryKeyTable::Entry *MemoryKeyTable::entry_rcu(u32 index) const {
	if (index == 0 || index > max_index_)
		return nullptr;
	const Entry *chunk = ktl::load_acquire(&chunks_[index >> chunk_shift]); // pairs with ensure_chunk
	return chunk ? &chunk[index & (chunk_size - 1)] : nullptr;
}

// State first (acquire, pairs with set_state): valid means the key stored
// before it is there; the MR pointer with acquire (pairs with set_mr). A
// fast-registration MR's bounds and rights change under the lock (REG_MR).
bool MemoryKeyTable::names_mr_rcu(u32 key, const Mr &mr) const {
	const Entry *e = entry_rcu(index_of(key));
	return e && ktl::load_acquire(&e->state) == State::valid && ktl::load_relaxed(&e->key) == key &&
	       ktl::load_acquire(&e->mr) == &mr && !mr.is_fast_reg();
}

ktl::RefPtr<Mr> MemoryKeyTable::find_mr_rcu(u32 key) const {
	const Entry *e = entry_rcu(index_of(key));
	// The MR pointer is loaded with acquire (pairs with set_mr), so what
	// its constructor wrote is visible; its memory outlives this RCU
	// section even if its last reference goes now (Mr is RcuFreed).
	Mr *mr = e ? ktl::load_acquire(&e->mr) : nullptr;
	if (!mr || !names_mr_rcu(key, *mr) || !mr->try_ref())
		return nullptr;
	// The reference is ours (try_ref's acquire); the entry may have changed
	// before it (removed, the index reused): then it is not this key's MR.
	auto ref = ktl::RefPtr<Mr>::adopt(mr);
	if (!names_mr_rcu(key, *mr))
		return nullptr;
	return ref;
}

ktl::Result<KeyRef> MemoryKeyTable::mr_ref_locked(const Entry &e, u32 pdn, u64 addr, u64 len,
						 u32 need) const {
	// Checked under the lock: a fast-registration MR's rights and bounds
	// change with REG_MR, which takes it.
	TRY(e.mr->check(pdn, addr, len, need));
	// Safe under the lock: the MR's owner holds a reference until close()
	// has taken it out of the table.
	return KeyRef{ktl::RefPtr<Mr>(e.mr), nullptr, addr};
}

} // namespace sroce

// MemoryKeyTable: the device's memory keys. A key is (index << 8) | an
// 8-bit variant. The variant is random (env.h's generator), so a key
// cannot be predicted from the order of registrations; it changes every
// time the index is handed out again, and indices are handed out next-fit, so a stale key (of
// a deregistered MR, or from an old packet) misses instead of hitting the
// next MR at the same index. Index 0 is never used: key 0 (a zeroed SGE)
// never matches. MRs use one key as lkey and rkey.
//
// Each entry has a state: free, invalid (registered but not usable: during
// registration, and after LOCAL_INV / SEND_WITH_INV) and valid. Only valid
// entries are found.
//
// Memory windows (mw.h) live in the same key space: an entry holds an MR
// or a window. A type 1 window is allocated invalid and becomes valid when
// bound; a type 2 window's variant is chosen by the consumer at bind time
// (ibv_inc_rkey), like the key byte of a fast-registration MR. A window
// refers to its MR, or to a compiled layout of MRs and windows (seed 003,
// mw_layout.h), by reference; lookups return a KeyRef (mw_layout.h), an MR
// and address or a layout and offset, whose for_each_chunk walks either.
#pragma once
#include "id_alloc.h"
#include "ktl/list.h"
#include "ktl/lock.h"
#include "ktl/refptr.h"

namespace sroce {

class Mr;
class Mw;
class ShardedCounterBlock;
class MwLayout;

struct KeyRef;
struct LayoutSource;

// A type 2 window's place among its QP's windows (QpWindows).
struct QpWindowLink {
	ktl::ListNode node;
	Mw *mw = nullptr;
};

// The type 2 windows bound through one QP (qp.h): IBTA type 2B, they are
// that QP's alone. Guarded by the key table's lock; close_qp_windows ends
// them and closes the list before the QP's number is free.
class QpWindows : ktl::NonCopyable {
	friend class MemoryKeyTable;
	ktl::List<QpWindowLink, &QpWindowLink::node> list_;
	bool closed_ = false; // a bind through the QP fails from here on
};

class MemoryKeyTable : ktl::NonCopyable {
public:
	MemoryKeyTable() = default;
	~MemoryKeyTable();

	// Room for max_entries keys (indices 1..max_entries). Data-path
	// look-ups count SROCE_CNT_KEY_LOOKUPS in counters, if given.
	ktl::Result<void> init(u32 max_entries, ShardedCounterBlock *counters = nullptr);

	// Gives mr a key, state invalid. -ENOSPC when the table is full (for
	// user MRs: all but the kernel's reserve), -ENOMEM. May sleep.
	ktl::Result<u32> insert(Mr &mr, bool user);
	// invalid -> valid (end of registration).
	void enable(Mr &mr);
	// valid -> invalid, for LOCAL_INV and SEND_WITH_INV on QP qpn: -EINVAL
	// if key is not a current key or not one that may be invalidated (a
	// fast-registration MR or a type 2 window), -EACCES if it belongs to
	// another PD or is a type 2 window bound to another QP (2B: it is that
	// QP's alone), -EBUSY for a window a bound layout includes.
	// Invalidating an invalid key succeeds, as on rxe.
	ktl::Result<void> invalidate(u32 key, u32 pdn, u32 qpn);
	// IB_WR_REG_MR: invalid -> valid with a new key byte. The MR is found
	// by the index of mr_key (its key byte may be the new one already:
	// ib_update_fast_reg_key); new_key must have the same index. -EINVAL
	// when that is no fast-registration MR, it is valid (registered and not
	// invalidated: IBTA 10.6.3.2), new_key names another index, or
	// Mr::fast_register_locked refuses the range or rights; -EACCES for
	// another PD.
	ktl::Result<void> fast_register(u32 mr_key, u32 pdn, u32 new_key, u64 iova, u64 length, u32 access);
	// Takes mr's key out; lookups miss from here on. -EBUSY (the MR stays)
	// while memory windows are bound to it.
	ktl::Result<void> remove(Mr &mr);

	// Memory windows (mw.h): a key, state invalid; and out again, letting
	// go of the MR or layout it was bound to (-EBUSY, and it stays, while a
	// bound layout includes it).
	ktl::Result<u32> insert_mw(Mw &mw, bool user);
	ktl::Result<void> remove_mw(Mw &mw);
	// A bind (IBV_WR_BIND_MW, or the ibv_bind_mw verb for type 1): the
	// window at new_key's index gets new_key, a part of the MR mr_lkey
	// names and rights; a type 2 window joins the QP's windows. -EINVAL:
	// no such window or MR, a window of the other type than `type1_verb`
	// says, a type 2 window still bound or the QP's windows closed, a
	// key byte change where none is allowed, the range outside the MR, or
	// rights beyond it (the MR needs MW_BIND, and remote write or atomic
	// its local write); -EACCES: another PD; -EBUSY: a bound layout
	// includes the window. A type 1 window with length 0 is unbound (its
	// new key then misses too). With `layout` (a staged layout's handle;
	// mr_lkey and addr ignored) the window takes the layout staged last,
	// if its handle, length and rights are those given and what it
	// includes is unchanged since it was compiled; -EINVAL otherwise.
	struct Bind {
		u32 new_key;
		u32 mr_lkey;
		u64 addr;
		u64 length;
		u32 access; // IB_ACCESS_REMOTE_*, ZERO_BASED, LOCAL_WRITE (the lkey)
		u32 pdn;    // the QP's
		u32 qpn;    // the QP's: a type 2 window is reachable through it only
		QpWindows *qp_windows; // the QP's
		bool type1_verb;
		u32 layout;
	};
	ktl::Result<void> bind_mw(const Bind &b);
	// The QP is going: its type 2 windows become invalid (unbound, as by
	// LOCAL_INV), and no window joins w any more. Before its QP number is
	// free, so a new QP given that number finds none of them bound to it.
	void close_qp_windows(QpWindows &w);

	// Layouts (mw_layout.h). resolve_layout_source: what an entry's key
	// names, for a layout of `self` with rights `access` (MwLayout::compile's
	// errors). stage_layout: keeps layout as self's staged one, its new
	// handle in *handle. source_current_locked: the source is still what
	// resolve_layout_source saw.
	ktl::Result<void> resolve_layout_source(u32 kind, u32 key, u32 pdn, const Mw &self, u32 access,
						LayoutSource &out) const;
	void stage_layout(Mw &mw, ktl::RefPtr<MwLayout> &layout, u32 *handle);
	bool source_current_locked(const LayoutSource &s) const;

	// Key lookups for the data path; each returns a reference. An MR's key
	// (not a fast-registration MR's) is found without the table's lock
	// (find_mr_rcu); windows and fast-registration MRs take it. The caller
	// is inside an RCU read-side section (a batch). Errors:
	//   -EINVAL: no such key (bad index, stale variant, freed or invalid);
	//   -EACCES: the MR is in another PD or lacks a right in need_access;
	//   -ERANGE: [addr, addr + len) is not inside the MR.
	// len 0 is accepted at any address with a valid key of the right PD and
	// rights (IBTA C9-88 even lets a zero-length RDMA request carry no key
	// at all: the responder skips the lookup then).
	// Local: need_access is a subset of LOCAL_WRITE | MW_BIND (0 = read).
	// A window's key is an lkey when it was bound with LOCAL_WRITE (-EACCES
	// otherwise), through any QP of its PD.
	ktl::Result<KeyRef> lookup_lkey(u32 lkey, u32 pdn, u64 addr, u64 len, u32 need_access) const;
	// Remote: need_access is one or more of the REMOTE_* and FLUSH_* rights.
	// A window's key (mw.h) resolves to its MR or layout; it also misses
	// for a type 2 window bound by another QP than qpn.
	ktl::Result<KeyRef> lookup_rkey(u32 rkey, u32 pdn, u32 qpn, u64 addr, u64 len, u32 need_access) const;

	// key still names mr, valid, and mr is no fast-registration MR: what
	// a look-up of key would find without the lock (find_mr_rcu), for a
	// caller that holds a reference to mr already (key_cache.h). Takes no
	// lock and no reference.
	bool names_mr_rcu(u32 key, const Mr &mr) const;

	u32 in_use() const { return indices_.in_use(); }
	static constexpr u32 index_of(u32 key) { return key >> 8; }

private:
	enum class State : u8 { free, invalid, valid };
	struct Entry {
		// Written under lock_; mr, key and state are also read by
		// find_mr_rcu without it (set_mr, set_key, set_state).
		Mr *mr;     // the MR's owner holds a reference while it is here
		Mw *mw;     // or the window's (then mr is null)
		u32 key;    // the current key while not free
		u8 variant; // of the last key handed out at this index
		State state;
	};
	static constexpr u32 chunk_shift = 8;
	static constexpr u32 chunk_size = 1u << chunk_shift;

	Entry *entry_locked(u32 index) const;
	// The entry at index without the lock (its chunk loaded with acquire,
	// pairs with ensure_chunk); null when there is none.
	const Entry *entry_rcu(u32 index) const;
	void count_lookup() const; // SROCE_CNT_KEY_LOOKUPS, per CPU
	// The entry key names, if the key is its current one and valid.
	const Entry *valid_entry_locked(u32 key) const {
		const Entry *e = entry_locked(index_of(key));
		return e && e->state == State::valid && e->key == key ? e : nullptr;
	}
	ktl::Result<void> ensure_chunk(u32 index);
	ktl::Result<u32> take_index(bool user);
	Entry *take_entry_locked(u32 index);
	template <typename T> ktl::Result<u32> insert_object(T &obj, T *Entry::*slot, bool user);
	// e is a valid MR entry: its checks and a reference, in the caller's
	// critical section (one lock per lookup, window or MR).
	ktl::Result<KeyRef> mr_ref_locked(const Entry &e, u32 pdn, u64 addr, u64 len, u32 need) const;
	ktl::Result<KeyRef> window_ref_locked(const Mw &mw, u64 addr, u64 len, u32 need_local) const;
	// Ends mw's binding (MR or layout, uncounted there); what it held goes
	// into *mr and *layout, to be let go outside the lock.
	static void unbind_locked(Mw &mw, ktl::RefPtr<Mr> *mr, ktl::RefPtr<MwLayout> *layout);

	// The lock-free part of a look-up (the caller is inside an RCU
	// read-side section: every data-path look-up runs under a batch,
	// env.h): the MR key names, with a reference, when its entry is valid
	// and holds an MR whose rights and bounds never change (not a
	// fast-registration MR). nullptr otherwise: the caller then takes the
	// lock, which also gives the exact error. The reference is taken with
	// try_ref (the owner may be dropping the last one) and the entry is
	// read again after it, by names_mr_rcu (the index may have been freed
	// and reused meanwhile); an Mr's memory outlives the readers (RcuFreed).
	ktl::RefPtr<Mr> find_mr_rcu(u32 key) const;
	// Entry fields that find_mr_rcu reads without the lock are written
	// with these, under the lock; the state last (release), so a reader
	// that sees valid sees the key written before it; the MR pointer with
	// release too (its constructed fields, for a reader of the pointer).
	static void set_state(Entry *e, State s) { ktl::store_release(&e->state, s); }
	static void set_key(Entry *e, u32 key) { ktl::store_relaxed(&e->key, key); }
	static void set_mr(Entry *e, Mr *mr) { ktl::store_release(&e->mr, mr); }

	mutable ktl::SpinLock lock_{SROCE_LOCK_KEY_TABLE};
	// [nchunks_]; a chunk is allocated on first use, published with a
	// release store (find_mr_rcu loads it without the lock) and freed only
	// with the table.
	Entry **chunks_ = nullptr;
	u32 nchunks_ = 0;
	u32 max_index_ = 0;
	IdAllocator indices_;
	ShardedCounterBlock *counters_ = nullptr;
};

} // namespace sroce

// Mw: a memory window (IBTA 10.6.7): a key of its own that gives remote
// access to a part of one MR, with rights no wider than the MR's. It lives
// in the device's key table beside the MRs, and all of its binding is
// guarded by that table's lock (MemoryKeyTable::bind_mw, invalidate,
// lookup_rkey).
//
// Type 1 is bound by the ibv_bind_mw verb (posted on a QP by the
// provider), may be bound again at any time with a new key byte, and is
// invalidated by a zero-length bind. Type 2 is bound by an IBV_WR_BIND_MW
// work request only while it is invalid, with the key byte the consumer
// chose (ibv_inc_rkey); it belongs to the binding QP (type 2B: remote access
// through another QP misses), and LOCAL_INV or a SEND with invalidate ends
// the binding. A window is either VA-based (the remote address is the
// MR's) or zero-based (IBV_ACCESS_ZERO_BASED: offsets from the window's
// start).
#pragma once
#include "core.h"
#include "mr.h"

namespace sroce {

class Mw : public ktl::RefCounted<Mw> {
public:
	enum : u8 { type1 = 1, type2 = 2 };
	// An invalid window of pd's; its key is in the table from here on.
	// -EINVAL for another type, -ENOSPC when the table is full.
	static ktl::Result<ktl::RefPtr<Mw>> create(Pd &pd, u8 type, bool user);
	// ibv_dealloc_mw: the key misses from here on and the MR it was bound
	// to is let go. Drops the caller's reference. May sleep.
	void close();

	u32 rkey() const { return key_; }
	u8 type() const { return type_; }
	u32 pdn() const { return pd_->pdn(); }

	// A snapshot of the binding, for views (taken under the table's lock by
	// the caller that needs it exact).
	u64 addr() const { return addr_; }
	u64 length() const { return length_; }
	u32 access() const { return access_; }
	bool bound() const { return mr_.get() != nullptr; }

private:
	friend class ktl::RefCounted<Mw>;
	friend class MemoryKeyTable;
	template <typename T, typename... A> friend T *ktl::create(ktl::AllocCtx, A &&...);
	template <typename T> friend void ktl::destroy(T *);
	Mw(Pd &pd, u8 type) : pd_(&pd), type_(type) {}
	~Mw();

	ktl::RefPtr<Pd> pd_;
	u8 type_;
	bool in_table_ = false; // guarded by the key table's lock
	u32 key_ = 0;           // set by the key table
	// The binding, guarded by the key table's lock: the MR (null when
	// unbound), the window [addr_, addr_ + length_) in the MR's addresses,
	// its REMOTE_* rights, whether remote addresses are offsets, and for
	// type 2 the QP that bound it.
	ktl::RefPtr<Mr> mr_;
	u64 addr_ = 0;
	u64 length_ = 0;
	u32 access_ = 0;
	bool zero_based_ = false;
	u32 qpn_ = 0;
};

} // namespace sroce

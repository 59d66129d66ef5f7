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
// through another QP misses), and LOCAL_INV or a SEND with invalidate on
// that QP ends the binding (another QP's fails), as does the QP's
// destruction (MemoryKeyTable::close_qp_windows). A window is either
// VA-based (the remote address is the MR's) or zero-based
// (IBV_ACCESS_ZERO_BASED: offsets from the window's start).
//
// A window allocated with room for layout pieces (srocedv_alloc_mw_ex:
// max_descriptors) can instead be bound to a layout (mw_layout.h, seed
// 003): stage_layout compiles one, and a bind naming its handle installs
// it. Such a window is zero-based, and with LOCAL_WRITE among the bind's
// rights its key is also an lkey. A bound window that a layout includes
// cannot be rebound, invalidated or deallocated (-EBUSY) until that layout
// is unbound.
#pragma once
#include "core.h"
#include "key_table.h"
#include "mr.h"
#include "mw_layout.h"

namespace sroce {

class Mw : public ktl::RefCounted<Mw> {
public:
	enum : u8 { type1 = 1, type2 = 2 };
	// An invalid window of pd's; its key is in the table from here on.
	// -EINVAL for another type, -ENOSPC when the table is full.
	// max_descriptors: the layout pieces it may be bound to (0: none;
	// -EINVAL above SROCE_MW_LAYOUT_MAX_DESCRIPTORS).
	static ktl::Result<ktl::RefPtr<Mw>> create(Pd &pd, u8 type, bool user, u32 max_descriptors = 0);
	// ibv_dealloc_mw: the key misses from here on and the MR or layout it
	// was bound to is let go. Drops the caller's reference. May sleep.
	// -EBUSY, and nothing changes, while a bound layout includes it.
	ktl::Result<void> close();
	// Compiles a layout (MwLayout::compile's errors; -EINVAL for a window
	// without descriptors) and keeps it for a bind naming its handle (the
	// fifth staging after it drops it); out gets its length, handle and
	// pieces. May sleep.
	ktl::Result<void> stage_layout(const MwLayout::Spec &spec, sroce_mw_layout_resp &out);

	u32 rkey() const { return key_; }
	u8 type() const { return type_; }
	u32 pdn() const { return pd_->pdn(); }

	// A snapshot of the binding, for views (taken under the table's lock by
	// the caller that needs it exact).
	u64 addr() const { return addr_; }
	u64 length() const { return length_; }
	u32 access() const { return access_; }
	bool bound() const { return mr_.get() != nullptr || layout_.get() != nullptr; }

private:
	friend class ktl::RefCounted<Mw>;
	friend class MemoryKeyTable;
	friend class MwLayout;
	template <typename T, typename... A> friend T *ktl::create(ktl::AllocCtx, A &&...);
	template <typename T> friend void ktl::destroy(T *);
	Mw(Pd &pd, u8 type, u32 max_descriptors) : pd_(&pd), type_(type), max_descriptors_(max_descriptors) {
		qp_link_.mw = this;
	}
	~Mw();

	ktl::RefPtr<Pd> pd_;
	u8 type_;
	bool in_table_ = false; // guarded by the key table's lock
	u32 key_ = 0;           // set by the key table
	u32 max_descriptors_;
	// The binding, guarded by the key table's lock: the MR (null when
	// unbound), the window [addr_, addr_ + length_) in the MR's addresses,
	// its REMOTE_* rights and LOCAL_WRITE (the lkey), whether remote
	// addresses are offsets, and for type 2 the QP that bound it (and its
	// place among that QP's windows). Or a layout (then mr_ is null, addr_
	// 0 and zero_based_ set).
	ktl::RefPtr<Mr> mr_;
	ktl::RefPtr<MwLayout> layout_;
	// Also under the key table's lock: the layouts staged for binds not yet
	// executed, the last staged_max of them (binds may be posted back to
	// back), handle h in slot h % staged_max; the last handle given; the
	// bound layouts that include this window; a count of binding changes,
	// which a staged layout that includes this window checks at its bind.
	static constexpr u32 staged_max = 4;
	ktl::RefPtr<MwLayout> staged_[staged_max];
	u32 staged_handle_[staged_max] = {};
	u32 stage_handle_ = 0;
	u32 users_ = 0;
	u64 gen_ = 0; // bumped at every unbind; a u32 would wrap after 2^32 rebinds (about an hour)
	u64 addr_ = 0;
	u64 length_ = 0;
	u32 access_ = 0;
	bool zero_based_ = false;
	u32 qpn_ = 0;
	QpWindowLink qp_link_; // type 2, bound: on QpWindows of qpn_
};

} // namespace sroce

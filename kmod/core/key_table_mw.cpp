// Memory windows in the key table: their keys, binding (to a range of an MR
// or to a layout, mw_layout.h), and what their keys resolve to (key_table.h).
#include "counters.h"
#include "ib_enums.h"
#include "key_table.h"
#include "mr.h"
#include "mw.h"
#include "mw_layout.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;
namespace acc = ib::access;

void MemoryKeyTable::unbind_locked(Mw &mw, ktl::RefPtr<Mr> *mr, ktl::RefPtr<MwLayout> *layout) {
	if (mw.mr_)
		mw.mr_->windows_.fetch_sub(1, ktl::MemoryOrder::relaxed);
	if (mw.layout_)
		mw.layout_->pin_locked(false);
	if (mw.qp_link_.node.linked())
		decltype(QpWindows::list_)::remove(mw.qp_link_);
	*mr = ktl::move(mw.mr_);
	*layout = ktl::move(mw.layout_);
	mw.gen_++;
}

ktl::Result<void> MemoryKeyTable::remove_mw(Mw &mw) {
	u32 index = index_of(mw.key_);
	ktl::RefPtr<Mr> mr; // let go outside the lock: it may be the last reference
	ktl::RefPtr<MwLayout> layout, staged[Mw::staged_max];
	{
		ktl::Guard g(lock_);
		Entry *e = entry_locked(index);
		if (KTL_WARN_ON(!e || e->mw != &mw || !mw.in_table_))
			return Error::from_errno(err::inval);
		if (mw.users_)
			return Error::from_errno(err::busy);
		e->mw = nullptr;
		set_state(e, State::free);
		mw.in_table_ = false;
		unbind_locked(mw, &mr, &layout);
		for (u32 i = 0; i < Mw::staged_max; i++)
			staged[i] = ktl::move(mw.staged_[i]);
	}
	indices_.free(index);
	return {};
}

void MemoryKeyTable::stage_layout(Mw &mw, ktl::RefPtr<MwLayout> &layout, u32 *handle) {
	ktl::RefPtr<MwLayout> old = ktl::move(layout); // the replaced one goes after the lock
	ktl::Guard g(lock_);
	// Never 0: a bind WQE's reg.layout 0 means no layout.
	if (++mw.stage_handle_ == 0)
		mw.stage_handle_ = 1;
	u32 slot = mw.stage_handle_ % Mw::staged_max;
	ktl::swap(old, mw.staged_[slot]);
	mw.staged_handle_[slot] = mw.stage_handle_;
	*handle = mw.stage_handle_;
}

ktl::Result<void> MemoryKeyTable::resolve_layout_source(u32 kind, u32 key, u32 pdn, const Mw &self, u32 access,
							 LayoutSource &out) const {
	ktl::Guard g(lock_);
	const Entry *e = valid_entry_locked(key);
	if (!e)
		return Error::from_errno(err::inval);
	out.key = key;
	if (kind == SROCE_MW_ENTRY_MR) {
		if (!e->mr)
			return Error::from_errno(err::inval);
		Mr &mr = *e->mr;
		if (mr.pdn() != pdn)
			return Error::from_errno(err::acces);
		// As for a plain window: bounded memory whose range never changes.
		if (mr.is_dma() || mr.is_fast_reg())
			return Error::from_errno(err::inval);
		if (!(mr.access() & acc::mw_bind) ||
		    ((access & (acc::remote_write | acc::remote_atomic | acc::local_write)) &&
		     !(mr.access() & acc::local_write)))
			return Error::from_errno(err::acces);
		out.mr = ktl::RefPtr<Mr>(&mr);
		out.base = out.mr_addr = mr.iova();
		out.len = mr.length();
		return {};
	}
	if (!e->mw)
		return Error::from_errno(err::inval);
	Mw &mw = *e->mw;
	if (&mw == &self)
		return Error::from_errno(err::loop);
	// A type 2 window is reachable through its QP only (2B): a layout would
	// pass it on to every QP its own key reaches.
	if (mw.type_ == Mw::type2)
		return Error::from_errno(err::inval);
	if (mw.pdn() != pdn)
		return Error::from_errno(err::acces);
	// A window passes on no right it was not given.
	if (access & ~mw.access_)
		return Error::from_errno(err::acces);
	out.mw = ktl::RefPtr<Mw>(&mw);
	out.gen = mw.gen_;
	if (mw.layout_) {
		out.inner = mw.layout_;
		out.base = 0;
		out.len = mw.layout_->length();
	} else {
		// Writes through the layout's lkey reach this MR (lookup_lkey
		// checks no MR of a layout): it needs LOCAL_WRITE itself, as for
		// an MR entry, whatever the window was bound with.
		if ((access & acc::local_write) && !(mw.mr_->access() & acc::local_write))
			return Error::from_errno(err::acces);
		out.mr = mw.mr_;
		out.base = mw.zero_based_ ? 0 : mw.addr_;
		out.len = mw.length_;
		out.mr_addr = mw.addr_;
	}
	return {};
}

bool MemoryKeyTable::source_current_locked(const LayoutSource &s) const {
	const Entry *e = valid_entry_locked(s.key);
	if (!e)
		return false;
	if (s.mw)
		return e->mw == s.mw.get() && s.mw->gen_ == s.gen;
	return e->mr == s.mr.get();
}

ktl::Result<void> MemoryKeyTable::bind_mw(const Bind &b) {
	ktl::RefPtr<Mr> old; // let go after the lock
	ktl::RefPtr<MwLayout> old_layout;
	ktl::Guard g(lock_);
	Entry *e = entry_locked(index_of(b.new_key));
	if (!e || !e->mw || e->state == State::free)
		return Error::from_errno(err::inval);
	Mw &mw = *e->mw;
	// The verb binds type 1 windows, the work request type 2 ones.
	if ((mw.type_ == Mw::type1) != b.type1_verb)
		return Error::from_errno(err::inval);
	if (mw.pdn() != b.pdn)
		return Error::from_errno(err::acces);
	// A type 2 window is bound once until invalidated (IBTA 10.6.7.2.2),
	// and not through a QP that is going.
	if (mw.type_ == Mw::type2 && (e->state != State::invalid || !b.qp_windows || b.qp_windows->closed_))
		return Error::from_errno(err::inval);
	// MW_BIND means nothing for a window; LOCAL_WRITE makes its key an
	// lkey too (seed 003; rdma-core's own tests bind with it).
	if (b.access & ~u32(acc::local_write | acc::mw_bind | acc::remote | acc::zero_based))
		return Error::from_errno(err::inval);
	if (mw.users_)
		return Error::from_errno(err::busy);
	if (b.layout) {
		const u32 slot = b.layout % Mw::staged_max;
		MwLayout *l = mw.staged_handle_[slot] == b.layout ? mw.staged_[slot].get() : nullptr;
		if (!l || b.length != l->length() ||
		    (b.access & (acc::remote | acc::local_write)) != l->access() || !l->sources_current_locked(*this))
			return Error::from_errno(err::inval);
		unbind_locked(mw, &old, &old_layout);
		l->pin_locked(true);
		mw.layout_ = ktl::move(mw.staged_[slot]);
		mw.staged_handle_[slot] = 0;
		mw.addr_ = 0;
		mw.zero_based_ = true;
	} else if (mw.type_ == Mw::type1 && b.length == 0) {
		// Unbind: the window's key changes and misses.
		unbind_locked(mw, &old, &old_layout);
		set_key(e, mw.key_ = b.new_key);
		e->variant = u8(b.new_key);
		set_state(e, State::invalid);
		return {};
	} else {
		if (b.length == 0) // type 2
			return Error::from_errno(err::inval);
		// Type 1 windows are VA-based only (IBTA o10-36.2.2, as rxe).
		if (mw.type_ == Mw::type1 && (b.access & acc::zero_based))
			return Error::from_errno(err::inval);
		const Entry *m = valid_entry_locked(b.mr_lkey);
		if (!m || !m->mr)
			return Error::from_errno(err::inval);
		Mr &mr = *m->mr;
		if (mr.pdn() != b.pdn)
			return Error::from_errno(err::acces);
		// The window's remote rights are its own, not bounded by the MR's
		// remote rights (IBTA 10.6.7.2.3; rxe and rdma-core's tests bind
		// REMOTE_WRITE windows to MRs without it); but remote write or
		// atomic through a window needs local write on its MR.
		if ((b.access & (acc::remote_write | acc::remote_atomic)) && !(mr.access() & acc::local_write))
			return Error::from_errno(err::inval);
		// Not a DMA MR (no bounds) nor a fast-registration one (its range
		// changes under the window).
		if (!(mr.access() & acc::mw_bind) || mr.is_dma() || mr.is_fast_reg() || !mr.contains(b.addr, b.length))
			return Error::from_errno(err::inval);
		unbind_locked(mw, &old, &old_layout);
		mr.windows_.fetch_add(1, ktl::MemoryOrder::relaxed);
		mw.mr_ = ktl::RefPtr<Mr>(&mr);
		mw.addr_ = b.addr;
		mw.zero_based_ = b.access & acc::zero_based;
	}
	mw.length_ = b.length;
	mw.access_ = b.access & (acc::remote | acc::local_write);
	mw.qpn_ = b.qpn;
	if (mw.type_ == Mw::type2)
		b.qp_windows->list_.push_back(mw.qp_link_);
	set_key(e, mw.key_ = b.new_key);
	e->variant = u8(b.new_key);
	set_state(e, State::valid);
	return {};
}

void MemoryKeyTable::close_qp_windows(QpWindows &w) {
	// One window per critical section: what it held is let go outside
	// the lock, as remove_mw does.
	for (;;) {
		ktl::RefPtr<Mr> mr;
		ktl::RefPtr<MwLayout> layout;
		ktl::Guard g(lock_);
		w.closed_ = true;
		QpWindowLink *l = w.list_.front();
		if (!l)
			return;
		Mw &mw = *l->mw;
		Entry *e = entry_locked(index_of(mw.key_));
		// No layout includes a type 2 window (resolve_layout_source).
		KTL_WARN_ON(!e || e->mw != &mw || e->state != State::valid || mw.users_);
		unbind_locked(mw, &mr, &layout);
		if (e && e->mw == &mw)
			set_state(e, State::invalid);
	}
}

// The window's range in the key user's addresses (offsets when zero-based),
// then its MR's own check of the MR's addresses (they never change while
// bound: only a fast-registration MR's would, and those take no window).
ktl::Result<KeyRef> MemoryKeyTable::window_ref_locked(const Mw &mw, u64 addr, u64 len, u32 need_local) const {
	u64 base = mw.zero_based_ ? 0 : mw.addr_;
	if (len && (addr < base || len > mw.length_ || addr - base > mw.length_ - len))
		return Error::from_errno(err::range);
	if (mw.layout_)
		return KeyRef{nullptr, mw.layout_, addr};
	u64 at = mw.zero_based_ ? mw.addr_ + addr : addr;
	TRY(mw.mr_->check(mw.pdn(), at, len, need_local));
	return KeyRef{mw.mr_, nullptr, at};
}

void MemoryKeyTable::count_lookup() const {
	if (counters_)
		counters_->inc(SROCE_CNT_KEY_LOOKUPS);
}

ktl::Result<KeyRef> MemoryKeyTable::lookup_lkey(u32 lkey, u32 pdn, u64 addr, u64 len, u32 need_access) const {
	if (KTL_WARN_ON(need_access & ~u32(acc::local_write | acc::mw_bind)))
		return Error::from_errno(err::inval);
	count_lookup();
	if (auto mr = find_mr_rcu(lkey)) {
		TRY(mr->check(pdn, addr, len, need_access));
		return KeyRef{ktl::move(mr), nullptr, addr};
	}
	ktl::Guard g(lock_);
	const Entry *e = valid_entry_locked(lkey);
	if (e && e->mw) {
		const Mw &mw = *e->mw;
		if (mw.pdn() != pdn || !(mw.access_ & acc::local_write) || (need_access & acc::mw_bind))
			return Error::from_errno(err::acces);
		// A layout's MRs all have LOCAL_WRITE (compile checked); a
		// plain window's MR is checked for what is needed.
		return window_ref_locked(mw, addr, len, need_access);
	}
	if (!e || !e->mr)
		return Error::from_errno(err::inval);
	return mr_ref_locked(*e, pdn, addr, len, need_access);
}

ktl::Result<KeyRef> MemoryKeyTable::lookup_rkey(u32 rkey, u32 pdn, u32 qpn, u64 addr, u64 len,
						u32 need_access) const {
	constexpr u32 remote = acc::remote | acc::flush;
	if (KTL_WARN_ON(!(need_access & remote) || (need_access & ~remote)))
		return Error::from_errno(err::inval);
	count_lookup();
	if (auto mr = find_mr_rcu(rkey)) {
		TRY(mr->check(pdn, addr, len, need_access));
		return KeyRef{ktl::move(mr), nullptr, addr};
	}
	ktl::Guard g(lock_);
	const Entry *e = valid_entry_locked(rkey);
	if (e && e->mw) {
		const Mw &mw = *e->mw;
		if (mw.pdn() != pdn || (need_access & ~mw.access_))
			return Error::from_errno(err::acces);
		if (mw.type_ == Mw::type2 && mw.qpn_ != qpn)
			return Error::from_errno(err::inval);
		return window_ref_locked(mw, addr, len, 0);
	}
	if (!e || !e->mr)
		return Error::from_errno(err::inval);
	return mr_ref_locked(*e, pdn, addr, len, need_access);
}

} // namespace sroce

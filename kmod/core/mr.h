// Mr: a memory region. Either a page list covering [iova, iova + length)
// (pinned user pages, or a kernel user's fast-registration pages) or a DMA
// MR, whose addresses are kernel virtual addresses and which has no bounds.
//
// A fast-registration MR (ib_alloc_mr) has room for a fixed number of
// pages. ib_map_mr_sg stages a mapping; IB_WR_REG_MR copies it in and sets
// iova, length, rights and key byte (MemoryKeyTable::fast_register, under
// the table's lock, only while the key is invalid). Its registration thus
// changes during the MR's life: the key lookup checks rights and bounds
// under the table's lock, and every page access checks its index against
// the fixed room, so a transfer that raced an invalidation and a new
// registration stays inside pages the MR's owner mapped (as on rxe, such a
// transfer is the owner's bug: invalidation is the fence).
//
// Every data access the transport makes goes through copy_to, copy_from,
// for_each_chunk or atomic_ptr, which check the range again (the key lookup
// checked it once already; this keeps a stale or miscomputed address from
// ever leaving the MR). Page lookup is O(1): the page of an address is
// (iova offset in the first page + addr - iova) >> page_shift.
#pragma once
#include "core.h"
#include "ib_enums.h"
#include "ktl/atomic.h"
#include "ktl/bitops.h"
#include "pd.h"

namespace sroce {

class MemoryKeyTable;

// RcuFreed: the key table finds an MR without its lock (find_mr_rcu), so
// its memory (not its pages: those go at the last reference) is freed a
// grace period after the last reference.
class Mr : public ktl::RefCounted<Mr>, public ktl::RcuFreed {
public:
	// Validates init and allocates the page table; the keys stay invalid
	// until enable(). The glue then fills the pages with set_page().
	static ktl::Result<ktl::RefPtr<Mr>> create(Pd &pd, const sroce_core_mr_init &init);

	// Registration: fill the pages, then make the keys valid. enable()
	// refuses (-EINVAL) while a page is missing.
	void set_page(u64 index, void *kva);
	ktl::Result<void> enable();
	// Takes the keys out of the device's table and drops the caller's
	// reference. The caller may sleep and holds no core lock. The pages are
	// released (init.release) by whoever drops the last reference: here, with
	// may_sleep = 1, unless an in-flight user still holds the MR. -EBUSY,
	// and nothing changes, while memory windows are bound to it.
	ktl::Result<void> close();

	u32 lkey() const { return key_; }
	u32 rkey() const { return key_; } // lkey == rkey; remote use needs a REMOTE right
	u32 pdn() const { return pd_->pdn(); }
	Pd &pd() const { return *pd_; }
	u64 iova() const { return iova_; }
	u64 length() const { return length_; }
	u32 access() const { return access_; }
	bool is_dma() const { return dma_; }
	bool is_fast_reg() const { return fast_reg_; }
	// Its pages may go into packets as fragments (env.h's add_frag).
	bool zero_copy() const { return zero_copy_; }
	u32 windows() const { return windows_.load(ktl::MemoryOrder::relaxed); }
	u32 page_shift() const { return page_shift_; }
	u64 npages() const { return npages_; }

	// [addr, addr + len) lies inside the MR, computed without overflow. An
	// empty range (len 0) is inside at any address.
	bool contains(u64 addr, u64 len) const;
	// The checks of a key lookup: PD (-EACCES), rights (-EACCES: need has a
	// bit the MR lacks), range (-ERANGE, skipped for len 0).
	ktl::Result<void> check(u32 pdn, u64 addr, u64 len, u32 need) const;

	// Data access, all -ERANGE outside the MR. len 0 does nothing.
	ktl::Result<void> copy_to(u64 addr, const void *src, u32 len);
	ktl::Result<void> copy_from(u64 addr, void *dst, u32 len) const;
	// Calls fn(u8 *kva, u32 chunk_len) over the physically contiguous pieces
	// of [addr, addr + len) in order (at most one page each). fn may return
	// void, or Result<void> to stop at its first error, which is returned.
	template <typename Fn> ktl::Result<void> for_each_chunk(u64 addr, u64 len, Fn fn) const;
	// The 8 bytes at addr for an atomic operation; nullptr when addr is not
	// 8-byte aligned or [addr, addr + 8) is not inside.
	u64 *atomic_ptr(u64 addr);

	// ib_map_mr_sg (fast-registration MRs; core.h's sroce_core_mr_stage_*).
	ktl::Result<void> stage_page(u64 index, void *kva);
	ktl::Result<void> stage_map(u64 npages, u64 iova, u64 length, u32 page_shift);

private:
	friend class ktl::RefCounted<Mr>;
	friend class MemoryKeyTable;
	friend class MwLayout;
	template <typename T, typename... A> friend T *ktl::create(ktl::AllocCtx, A &&...);
	template <typename T> friend void ktl::destroy(T *);
	Mr(Pd &pd, const sroce_core_mr_init &init);
	~Mr();
	static ktl::Result<void> validate(const sroce_core_mr_init &init, u64 *npages);
	// IB_WR_REG_MR: the staged mapping at iova, with these rights. Called
	// by MemoryKeyTable::fast_register under its lock, the key invalid.
	ktl::Result<void> fast_register_locked(u64 iova, u64 length, u32 access);

	// Kernel virtual address of byte `off` counted from the start of the
	// first page (page MRs) or of address `off` (DMA MRs). nullptr past
	// the page table: only a transfer racing a fast re-registration gets
	// there (mr.h's head), and it then fails instead of leaving the table.
	u8 *kva(u64 off) const {
		if (dma_)
			return reinterpret_cast<u8 *>(uptr(off));
		u64 i = off >> page_shift_;
		u8 *page = i < npages_ ? pages_[i] : nullptr;
		return page ? page + (off & ((1ull << page_shift_) - 1)) : nullptr;
	}
	u64 offset_of(u64 addr) const { return dma_ ? addr : addr - iova_ + first_offset_; }

	ktl::RefPtr<Pd> pd_;
	u64 iova_;
	u64 length_;
	u64 npages_;
	u8 **pages_ = nullptr;   // [npages_], null for DMA MRs
	u32 first_offset_;       // offset of iova in pages_[0]
	u32 access_;
	u32 page_shift_;
	bool dma_;
	bool fast_reg_;
	bool zero_copy_;
	// Fast registration: the mapping ib_map_mr_sg staged for the next
	// REG_MR ([npages_] pointers, nstaged_ of them set, iova at
	// staged_offset_ in the first).
	u8 **staged_ = nullptr;
	u64 nstaged_ = 0;
	u32 staged_offset_ = 0;
	bool counted_ = false;   // in the device's counts
	bool in_table_ = false;  // guarded by the key table's lock
	// Memory windows bound to it: changed under the key table's lock, read
	// anywhere (views).
	ktl::Atomic<u32> windows_;
	u32 key_ = 0;            // set by MemoryKeyTable::insert
	// Set on success of create: the glue's pinned memory, released once.
	void (*release_)(void *owner, int may_sleep) = nullptr;
	void *owner_ = nullptr;
	bool release_may_sleep_ = false;
};

namespace detail {
template <typename T> struct IsResult { static constexpr bool value = false; };
template <> struct IsResult<ktl::Result<void>> { static constexpr bool value = true; };
} // namespace detail

template <typename Fn> ktl::Result<void> Mr::for_each_chunk(u64 addr, u64 len, Fn fn) const {
	if (!contains(addr, len))
		return ktl::Error::from_errno(ktl::err::range);
	// DMA MRs are cut at kernel page boundaries too: virtually contiguous
	// kernel memory (vmalloc) need not be physically contiguous.
	const u64 page = 1ull << page_shift_;
	u64 off = offset_of(addr);
	while (len) {
		u32 n = u32(ktl::min(len, page - (off & (page - 1))));
		u8 *p = kva(off);
		if (!p)
			return ktl::Error::from_errno(ktl::err::range);
		if constexpr (detail::IsResult<decltype(fn(p, n))>::value)
			TRY(fn(p, n));
		else
			fn(p, n);
		off += n;
		len -= n;
	}
	return {};
}

} // namespace sroce

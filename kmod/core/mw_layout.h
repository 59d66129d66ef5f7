// MwLayout: the compiled walk of a non-contiguous memory window (seed 003;
// abi/sroce-abi.h "Non-contiguous memory windows"; Documentation/memory.md,
// "Layouts").
//
// A layout lists entries, each an MR or a bound window (which may have a
// layout itself: layouts nest up to SROCE_MW_LAYOUT_MAX_DEPTH). compile()
// resolves the entries' keys once, checks ranges, strides and rights, and
// expands the layout into a flat, sorted array of pieces {MR, address,
// length, offset in the window}, merging neighbours in one MR. The data
// path then finds the piece of any offset by binary search and walks
// forward: no recursion and no key lookup per piece. A layout never changes
// once compiled; the window holds it by reference, and a transfer that
// looked its key up holds it too, so a rebind never pulls memory from under
// a packet.
//
// What it reaches stays put while it is bound: each MR it names counts it
// among its windows (deregistration: -EBUSY), and each window it names
// counts it among its users (that window cannot be rebound, invalidated or
// deallocated: -EBUSY). Cycles are thus impossible: a window can only
// include windows bound before it, which then cannot change; and a window
// cannot include itself (-ELOOP).
#pragma once
#include "abi.h"
#include "core.h"
#include "mr.h"

namespace sroce {

class MemoryKeyTable;
class Mw;
class MwLayout;

// One entry of a layout's memory, as MwLayout::compile resolved it (with
// MemoryKeyTable::resolve_layout_source): an MR, a plain window (its MR's
// [mr_addr, +len) seen at base), or a layout window. key and gen let the
// bind check that it is still what was compiled.
struct LayoutSource {
	ktl::RefPtr<Mr> mr;
	ktl::RefPtr<Mw> mw;
	ktl::RefPtr<MwLayout> inner;
	u64 base;
	u64 len;
	u64 mr_addr;
	u32 key;
	u64 gen;
};

class MwLayout : public ktl::RefCounted<MwLayout> {
public:
	struct Spec {
		const sroce_mw_layout_req *req;
		const sroce_mw_layout_entry *entries; // [req->num_entries]
		const sroce_mw_layout_dim *dims;      // [num_dims]
		u32 num_dims;
	};
	// Compiles spec for window `self` (of PD pdn) into at most
	// max_descriptors pieces. May sleep. Errors:
	//   -EINVAL: a malformed request (type, flags, reserved fields, zero
	//            lengths or counts, dimensions not adding up, overlapping
	//            strides, entries running out in different rounds), an
	//            entry's key that names no valid MR or bound window, or a
	//            type 2 window (its QP's alone);
	//   -E2BIG:  too many entries, dimensions, items or pieces;
	//   -ELOOP:  the window itself among the entries, or nesting too deep;
	//   -EOVERFLOW: a stride, count or length whose product or sum overflows;
	//   -ERANGE: an entry reaching outside its MR or window;
	//   -EACCES: another PD's key, or rights the entry does not grant (a
	//            window's must include the layout's; an MR needs MW_BIND,
	//            and LOCAL_WRITE for remote write, atomics or the lkey).
	static ktl::Result<ktl::RefPtr<MwLayout>> compile(MemoryKeyTable &keys, const Mw &self, u32 pdn,
							  const Spec &spec, u32 max_descriptors);

	u64 length() const { return length_; }
	u32 access() const { return access_; }
	u32 descriptors() const { return nsegs_; }

	// Data access at offset off of the window, -ERANGE outside
	// [0, length()); as Mr's (mr.h).
	template <typename Fn> ktl::Result<void> for_each_chunk(u64 off, u64 len, Fn fn) const;
	ktl::Result<void> copy_to(u64 off, const void *src, u32 len) const;
	ktl::Result<void> copy_from(u64 off, void *dst, u32 len) const;
	// The 8 bytes at off when they lie in one piece and are aligned there.
	u64 *atomic_ptr(u64 off) const;

private:
	friend class ktl::RefCounted<MwLayout>;
	friend class MemoryKeyTable;
	template <typename T, typename... A> friend T *ktl::create(ktl::AllocCtx, A &&...);
	template <typename T> friend void ktl::destroy(T *);
	struct Emitter;

	// One piece: len bytes at addr of mr, at offset start of the window.
	struct Segment {
		Mr *mr; // kept alive by sources_ (directly or through an inner layout)
		u64 addr;
		u64 len;
		u64 start;
	};
	using Source = LayoutSource;

	MwLayout(); // in mw_layout.cpp, where Mw is complete
	~MwLayout();
	u32 find(u64 off) const;
	// Appends the pieces of the inner window's [off, off + len) to e.
	ktl::Result<void> emit_range(Emitter &e, u64 off, u64 len) const;
	static ktl::Result<void> emit_source(Emitter &e, const Source &s, u64 addr, u64 len);
	static ktl::Result<void> emit_all(Emitter &e, const Spec &spec, const Source *src);

	// Bind time, under the key table's lock: the sources are still what
	// compile() saw; then count (or uncount) this layout in each.
	bool sources_current_locked(const MemoryKeyTable &keys) const;
	void pin_locked(bool on) const;

	Source sources_[SROCE_MW_LAYOUT_MAX_ENTRIES];
	u32 nsources_ = 0;
	Segment *segs_ = nullptr; // [nsegs_], sorted by start, contiguous
	u32 nsegs_ = 0;
	u64 length_ = 0;
	u32 access_ = 0;
	u32 depth_ = 0;
};

template <typename Fn> ktl::Result<void> MwLayout::for_each_chunk(u64 off, u64 len, Fn fn) const {
	if (off > length_ || len > length_ - off)
		return ktl::Error::from_errno(ktl::err::range);
	for (u32 i = len ? find(off) : nsegs_; len && i < nsegs_; i++) {
		const Segment &s = segs_[i];
		u64 n = ktl::min(len, s.start + s.len - off);
		TRY(s.mr->for_each_chunk(s.addr + (off - s.start), n, fn));
		off += n;
		len -= n;
	}
	return {};
}

// What a key resolves to (MemoryKeyTable::lookup_lkey, lookup_rkey): an MR
// and the address there, or a layout window's walk and the offset in it.
struct KeyRef {
	ktl::RefPtr<Mr> mr;
	ktl::RefPtr<MwLayout> layout;
	u64 addr;

	template <typename Fn> ktl::Result<void> for_each_chunk(u64 len, Fn fn) const {
		return layout ? layout->for_each_chunk(addr, len, fn) : mr->for_each_chunk(addr, len, fn);
	}
	ktl::Result<void> copy_to(const void *src, u32 len) const {
		return layout ? layout->copy_to(addr, src, len) : mr->copy_to(addr, src, len);
	}
	ktl::Result<void> copy_from(void *dst, u32 len) const {
		return layout ? layout->copy_from(addr, dst, len) : mr->copy_from(addr, dst, len);
	}
	u64 *atomic_ptr() const { return layout ? layout->atomic_ptr(addr) : mr->atomic_ptr(addr); }
	// Its bytes may be sent in place (tx.cpp's zero-copy): an MR's pages,
	// not a layout window's walk over several MRs.
	bool zero_copy() const { return !layout && mr->zero_copy(); }
};

} // namespace sroce

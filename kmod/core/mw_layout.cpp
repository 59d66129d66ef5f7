// Non-contiguous memory windows: compiling a layout into a flat walk, and
// following it (mw_layout.h).
#include "mw_layout.h"
#include "ib_enums.h"
#include "key_table.h"
#include "mw.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;
namespace acc = ib::access;

namespace {
constexpr u32 layout_rights = acc::remote | acc::local_write;

bool mul_overflows(u64 a, u64 b, u64 *out) { return __builtin_mul_overflow(a, b, out); }
bool add_overflows(u64 a, u64 b, u64 *out) { return __builtin_add_overflow(a, b, out); }

// One entry's geometry: how many items, how far they reach from addr.
struct Shape {
	u64 items;
	u64 extent;
	u32 repeat;
};

// Interleaved entries: items of `length` at addr + sum(i_d * stride_d).
// Each dimension must step over everything the ones inside it cover
// (otherwise items overlap), and nothing may overflow.
ktl::Result<Shape> shape_of(const sroce_mw_layout_entry &en, const sroce_mw_layout_dim *dims, bool interleaved) {
	Shape s{1, en.length, en.repeat ? en.repeat : 1};
	if (!interleaved)
		return s;
	for (u32 d = 0; d < en.num_dims; d++) {
		const sroce_mw_layout_dim &dim = dims[d];
		if (dim.count == 0)
			return Error::from_errno(err::inval);
		if (dim.count > 1 && dim.stride < s.extent)
			return Error::from_errno(err::inval);
		u64 reach;
		if (mul_overflows(dim.count - 1, dim.stride, &reach) || add_overflows(reach, s.extent, &s.extent) ||
		    mul_overflows(s.items, dim.count, &s.items))
			return Error::from_errno(err::overflow);
	}
	if (s.items > SROCE_MW_LAYOUT_MAX_ITEMS)
		return Error::from_errno(err::toobig);
	if (s.items % s.repeat)
		return Error::from_errno(err::inval);
	return s;
}
} // namespace

// Collects pieces, merging each with the one before when it continues it
// in the same MR. Without `out` it only counts.
struct MwLayout::Emitter {
	Segment *out;
	u32 cap;
	u32 n = 0;
	u64 start = 0;
	Segment last{};

	ktl::Result<void> put(Mr *mr, u64 addr, u64 len) {
		if (n && last.mr == mr && last.addr + last.len == addr) {
			last.len += len;
		} else {
			if (n == cap)
				return Error::from_errno(err::toobig);
			if (out && n)
				out[n - 1] = last;
			last = {mr, addr, len, start};
			n++;
		}
		start += len;
		return {};
	}
	void finish() {
		if (out && n)
			out[n - 1] = last;
	}
};

MwLayout::MwLayout() = default;

MwLayout::~MwLayout() {
	// The last reference may go in softirq (a packet's lookup held it).
	sroce_env_free_deferred(segs_);
}

u32 MwLayout::find(u64 off) const {
	u32 lo = 0, hi = nsegs_;
	while (hi - lo > 1) {
		u32 mid = lo + (hi - lo) / 2;
		if (segs_[mid].start <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

ktl::Result<void> MwLayout::emit_range(Emitter &e, u64 off, u64 len) const {
	for (u32 i = find(off); len && i < nsegs_; i++) {
		const Segment &s = segs_[i];
		u64 n = ktl::min(len, s.start + s.len - off);
		TRY(e.put(s.mr, s.addr + (off - s.start), n));
		off += n;
		len -= n;
	}
	return {};
}

ktl::Result<void> MwLayout::emit_source(Emitter &e, const Source &s, u64 addr, u64 len) {
	if (s.inner)
		return s.inner->emit_range(e, addr - s.base, len);
	return e.put(s.mr.get(), s.mr_addr + (addr - s.base), len);
}

ktl::Result<void> MwLayout::emit_all(Emitter &e, const Spec &spec, const Source *src) {
	const sroce_mw_layout_req &rq = *spec.req;
	if (rq.type == SROCE_MW_LAYOUT_COMPOSITE) {
		for (u32 j = 0; j < rq.num_entries; j++)
			TRY(emit_source(e, src[j], spec.entries[j].addr, spec.entries[j].length));
		return {};
	}
	// Interleaved: an odometer per entry over its dimensions; the item's
	// address follows it by adding a stride, and taking the whole
	// dimension back off when it wraps (the extent was checked, so every
	// address met lies inside the entry's memory).
	u64 idx[SROCE_MW_LAYOUT_MAX_ENTRIES][SROCE_MW_LAYOUT_MAX_DIMS] = {};
	u64 at[SROCE_MW_LAYOUT_MAX_ENTRIES];
	const sroce_mw_layout_dim *dims[SROCE_MW_LAYOUT_MAX_ENTRIES];
	u32 nd = 0;
	for (u32 j = 0; j < rq.num_entries; j++) {
		at[j] = spec.entries[j].addr;
		dims[j] = spec.dims + nd;
		nd += spec.entries[j].num_dims;
	}
	const sroce_mw_layout_entry &e0 = spec.entries[0];
	u64 rounds = TRY(shape_of(e0, dims[0], true)).items / (e0.repeat ? e0.repeat : 1);
	for (u64 r = 0; r < rounds; r++) {
		for (u32 j = 0; j < rq.num_entries; j++) {
			const sroce_mw_layout_entry &en = spec.entries[j];
			for (u32 k = 0; k < (en.repeat ? en.repeat : 1); k++) {
				TRY(emit_source(e, src[j], at[j], en.length));
				for (u32 d = 0; d < en.num_dims; d++) {
					at[j] += dims[j][d].stride;
					if (++idx[j][d] < dims[j][d].count)
						break;
					idx[j][d] = 0;
					at[j] -= dims[j][d].stride * dims[j][d].count;
				}
			}
		}
	}
	return {};
}

ktl::Result<ktl::RefPtr<MwLayout>> MwLayout::compile(MemoryKeyTable &keys, const Mw &self, u32 pdn, const Spec &spec,
						     u32 max_descriptors) {
	const sroce_mw_layout_req &rq = *spec.req;
	if (rq.comp_mask || rq.reserved || rq.type > SROCE_MW_LAYOUT_INTERLEAVED || rq.num_entries == 0 ||
	    (rq.access & ~u32(layout_rights | acc::zero_based | acc::mw_bind)))
		return Error::from_errno(err::inval);
	if (rq.num_entries > SROCE_MW_LAYOUT_MAX_ENTRIES)
		return Error::from_errno(err::toobig);
	const bool interleaved = rq.type == SROCE_MW_LAYOUT_INTERLEAVED;
	const u32 access = rq.access & layout_rights;

	auto layout = TRY(ktl::make_ref<MwLayout>(ktl::AllocCtx::may_sleep));
	MwLayout &l = *layout;
	l.access_ = access;
	u64 items = 0, rounds = 0, total = 0;
	u32 nd = 0;
	for (u32 j = 0; j < rq.num_entries; j++) {
		const sroce_mw_layout_entry &en = spec.entries[j];
		if (en.kind > SROCE_MW_ENTRY_MW || en.length == 0 || (!interleaved && (en.repeat || en.num_dims)))
			return Error::from_errno(err::inval);
		if (en.num_dims > SROCE_MW_LAYOUT_MAX_DIMS)
			return Error::from_errno(err::toobig);
		if (en.num_dims > spec.num_dims - nd)
			return Error::from_errno(err::inval);
		const Shape s = TRY(shape_of(en, spec.dims + nd, interleaved));
		nd += en.num_dims;
		// Every entry runs out in the same round.
		if (interleaved && j && s.items / s.repeat != rounds)
			return Error::from_errno(err::inval);
		rounds = s.items / s.repeat;
		u64 bytes;
		if (add_overflows(items, s.items, &items) || mul_overflows(s.items, en.length, &bytes) ||
		    add_overflows(total, bytes, &total))
			return Error::from_errno(err::overflow);
		if (items > SROCE_MW_LAYOUT_MAX_ITEMS)
			return Error::from_errno(err::toobig);

		Source &src = l.sources_[j];
		TRY(keys.resolve_layout_source(en.kind, en.key, pdn, self, access, src));
		l.nsources_ = j + 1;
		u32 depth = src.inner ? src.inner->depth_ + 1 : 1;
		if (depth > SROCE_MW_LAYOUT_MAX_DEPTH)
			return Error::from_errno(err::loop);
		l.depth_ = ktl::max(l.depth_, depth);
		if (en.addr < src.base || en.addr - src.base > src.len || s.extent > src.len - (en.addr - src.base))
			return Error::from_errno(err::range);
	}
	if (nd != spec.num_dims)
		return Error::from_errno(err::inval);

	Emitter count{nullptr, max_descriptors};
	TRY(emit_all(count, spec, l.sources_));
	l.segs_ = static_cast<Segment *>(sroce_env_zalloc_user(u64(count.n) * sizeof(Segment)));
	if (!l.segs_)
		return Error::from_errno(err::nomem);
	Emitter fill{l.segs_, count.n};
	TRY(emit_all(fill, spec, l.sources_));
	fill.finish();
	l.nsegs_ = fill.n;
	l.length_ = total;
	return layout;
}

bool MwLayout::sources_current_locked(const MemoryKeyTable &keys) const {
	for (u32 i = 0; i < nsources_; i++) {
		const Source &s = sources_[i];
		if (!keys.source_current_locked(s))
			return false;
	}
	return true;
}

void MwLayout::pin_locked(bool on) const {
	for (u32 i = 0; i < nsources_; i++) {
		const Source &s = sources_[i];
		if (s.mw)
			s.mw->users_ += on ? 1 : u32(-1);
		else if (on)
			s.mr->windows_.fetch_add(1, ktl::MemoryOrder::relaxed);
		else
			s.mr->windows_.fetch_sub(1, ktl::MemoryOrder::relaxed);
	}
}

ktl::Result<void> MwLayout::copy_to(u64 off, const void *src, u32 len) const {
	const u8 *s = static_cast<const u8 *>(src);
	return for_each_chunk(off, len, [&](u8 *kva, u32 n) {
		__builtin_memcpy(kva, s, n);
		s += n;
	});
}

ktl::Result<void> MwLayout::copy_from(u64 off, void *dst, u32 len) const {
	u8 *d = static_cast<u8 *>(dst);
	return for_each_chunk(off, len, [&](u8 *kva, u32 n) {
		__builtin_memcpy(d, kva, n);
		d += n;
	});
}

u64 *MwLayout::atomic_ptr(u64 off) const {
	if (off > length_ || length_ - off < 8)
		return nullptr;
	const Segment &s = segs_[find(off)];
	if (s.start + s.len - off < 8)
		return nullptr;
	return s.mr->atomic_ptr(s.addr + (off - s.start));
}

} // namespace sroce

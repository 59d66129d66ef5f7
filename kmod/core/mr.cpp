// Memory regions: the page list, bounds and access checks, and the deferred free (mr.h).
#include "mr.h"
#include "key_table.h"
#include "param.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;
namespace acc = ib::access;

ktl::Result<void> Mr::validate(const sroce_core_mr_init &init, u64 *npages) {
	if (init.access & ~u32(acc::mr_supported))
		return Error::from_errno(err::inval);
	// IBTA: remote write and atomic need local write (ib_check_mr_access).
	if ((init.access & (acc::remote_write | acc::remote_atomic)) && !(init.access & acc::local_write))
		return Error::from_errno(err::inval);
	if (init.fast_reg) {
		// Rights, range and pages come with each REG_MR.
		if (init.dma || init.user || init.access || init.iova || init.length ||
		    init.page_shift != param::page_shift || init.npages == 0 ||
		    init.npages > param::max_fast_reg_page_list_len)
			return Error::from_errno(err::inval);
		*npages = init.npages;
		return {};
	}
	if (init.dma) {
		if (init.npages)
			return Error::from_errno(err::inval);
		*npages = 0;
		return {};
	}
	if (init.page_shift < param::page_shift || init.page_shift > param::max_page_shift)
		return Error::from_errno(err::inval);
	// Zero-length MRs are refused as ib_umem_get refuses them; the last
	// byte must not wrap around the address space.
	if (init.length == 0 || init.length > param::max_mr_size || init.length - 1 > ~init.iova)
		return Error::from_errno(err::inval);
	// No overflow: length <= max_mr_size and the offset is below one page.
	const u64 page = 1ull << init.page_shift;
	const u64 span = (init.iova & (page - 1)) + init.length;
	if (init.npages != (span + page - 1) >> init.page_shift)
		return Error::from_errno(err::inval);
	*npages = init.npages;
	return {};
}

Mr::Mr(Pd &pd, const sroce_core_mr_init &init)
	: pd_(&pd), iova_(init.dma ? 0 : init.iova), length_(init.dma ? ~0ull : init.length), npages_(0),
	  first_offset_(0), access_(init.access), page_shift_(init.dma ? param::page_shift : init.page_shift),
	  dma_(init.dma != 0), fast_reg_(init.fast_reg != 0),
	  zero_copy_(init.zero_copy != 0 && !init.dma && !init.fast_reg) {
	if (fast_reg_)
		length_ = 0; // nothing is inside until the first REG_MR
	else if (!dma_)
		first_offset_ = u32(iova_ & ((1ull << page_shift_) - 1));
}

ktl::Result<ktl::RefPtr<Mr>> Mr::create(Pd &pd, const sroce_core_mr_init &init) {
	u64 npages = 0;
	TRY(validate(init, &npages));
	auto mr = TRY(ktl::make_ref<Mr>(ktl::AllocCtx::may_sleep, pd, init));
	if (npages) {
		// No overflow: npages <= (max_mr_size >> page_shift) + 1.
		mr->pages_ = static_cast<u8 **>(ktl::zalloc_for(init.user != 0, npages * sizeof(u8 *)));
		if (!mr->pages_)
			return Error::from_errno(err::nomem);
		mr->npages_ = npages;
		if (mr->fast_reg_) {
			mr->staged_ = static_cast<u8 **>(ktl::zalloc_for(false, npages * sizeof(u8 *)));
			if (!mr->staged_)
				return Error::from_errno(err::nomem);
		}
	}
	Device &dev = pd.device();
	TRY(dev.keys().insert(*mr, init.user != 0));
	dev.count_mr(npages, true);
	mr->counted_ = true;
	// From here the MR owns the glue's memory.
	mr->release_ = init.release;
	mr->owner_ = init.owner;
	return mr;
}

Mr::~Mr() {
	// close() takes the keys out first: a reachable MR always has a reference.
	KTL_WARN_ON(in_table_);
	if (counted_)
		pd_->device().count_mr(npages_, false);
	// The last reference may be a packet's, dropped under a QP or CQ lock
	// with interrupts off: a page table above a page may be vmalloc'ed,
	// and vfree may sleep there. Only dereg's own last reference frees
	// it at once.
	if (release_may_sleep_) {
		sroce_env_free(pages_);
		sroce_env_free(staged_);
	} else {
		sroce_env_free_deferred(pages_);
		sroce_env_free_deferred(staged_);
	}
	if (release_)
		release_(owner_, release_may_sleep_);
}

void Mr::set_page(u64 index, void *kva) {
	if (KTL_WARN_ON(index >= npages_ || !kva))
		return;
	pages_[index] = static_cast<u8 *>(kva);
}

ktl::Result<void> Mr::stage_page(u64 index, void *kva) {
	if (!fast_reg_ || !kva || index >= npages_)
		return Error::from_errno(fast_reg_ && kva ? err::nomem : err::inval);
	staged_[index] = static_cast<u8 *>(kva);
	return {};
}

ktl::Result<void> Mr::stage_map(u64 npages, u64 iova, u64 length, u32 page_shift) {
	if (!fast_reg_ || page_shift != page_shift_ || npages == 0 || npages > npages_)
		return Error::from_errno(err::inval);
	const u64 page = 1ull << page_shift;
	const u64 offset = iova & (page - 1);
	// No overflow: npages <= max_fast_reg_page_list_len.
	if (length == 0 || length > (npages << page_shift) - offset || length - 1 > ~iova)
		return Error::from_errno(err::inval);
	for (u64 i = 0; i < npages; i++)
		if (!staged_[i])
			return Error::from_errno(err::inval);
	nstaged_ = npages;
	staged_offset_ = u32(offset);
	return {};
}

ktl::Result<void> Mr::fast_register_locked(u64 iova, u64 length, u32 access) {
	if (!fast_reg_ || !nstaged_)
		return Error::from_errno(err::inval);
	sroce_core_mr_init rights{};
	rights.access = access;
	rights.length = 1;
	rights.page_shift = param::page_shift;
	rights.npages = 1;
	u64 unused;
	TRY(validate(rights, &unused)); // the rights rules of reg_mr
	// The iova the consumer gives may differ from the mapped one (a
	// zero-based registration); the bytes are the staged pages' from the
	// staged offset on.
	if (length == 0 || length > (nstaged_ << page_shift_) - staged_offset_ || length - 1 > ~iova)
		return Error::from_errno(err::inval);
	__builtin_memcpy(pages_, staged_, nstaged_ * sizeof(u8 *));
	for (u64 i = nstaged_; i < npages_; i++)
		pages_[i] = nullptr;
	iova_ = iova;
	length_ = length;
	first_offset_ = staged_offset_;
	access_ = access;
	return {};
}

ktl::Result<void> Mr::enable() {
	// Registration is not the data path: one pass keeps a glue bug from
	// turning into a null dereference later.
	for (u64 i = 0; i < npages_ && !fast_reg_; i++)
		if (KTL_WARN_ON(!pages_[i]))
			return Error::from_errno(err::inval);
	// A fast-registration MR's key stays invalid until its first REG_MR.
	if (!fast_reg_)
		pd_->device().keys().enable(*this);
	return {};
}

ktl::Result<void> Mr::close() {
	TRY(pd_->device().keys().remove(*this));
	// When ours is the last reference, the pages go here, in a context
	// that may sleep. Otherwise the last in-flight user releases them, in
	// whatever context it runs. A look-up without the lock (find_mr_rcu)
	// that loaded the entry before remove() may still win a try_ref (and
	// drop it at once), so "ours is the last" is decided in the same step
	// that drops it, never by a look at the count first.
	if (!unref_if_last([this] { release_may_sleep_ = true; }))
		unref();
	return {};
}

bool Mr::contains(u64 addr, u64 len) const {
	if (len == 0)
		return true;
	if (dma_)
		return len - 1 <= ~addr; // the last byte does not wrap
	return addr >= iova_ && len <= length_ && addr - iova_ <= length_ - len;
}

ktl::Result<void> Mr::check(u32 pdn, u64 addr, u64 len, u32 need) const {
	if (pdn != this->pdn() || (need & ~access_))
		return Error::from_errno(err::acces);
	if (!contains(addr, len))
		return Error::from_errno(err::range);
	return {};
}

ktl::Result<void> Mr::copy_to(u64 addr, const void *src, u32 len) {
	const u8 *s = static_cast<const u8 *>(src);
	return for_each_chunk(addr, len, [&s](u8 *kva, u32 n) {
		__builtin_memcpy(kva, s, n);
		s += n;
	});
}

ktl::Result<void> Mr::copy_from(u64 addr, void *dst, u32 len) const {
	u8 *d = static_cast<u8 *>(dst);
	return for_each_chunk(addr, len, [&d](u8 *kva, u32 n) {
		__builtin_memcpy(d, kva, n);
		d += n;
	});
}

u64 *Mr::atomic_ptr(u64 addr) {
	// Aligned to 8, the 8 bytes never straddle a page: page offsets of iova
	// and of the page's kernel address are equal.
	if ((addr & 7) || !contains(addr, 8))
		return nullptr;
	return reinterpret_cast<u64 *>(kva(offset_of(addr)));
}

} // namespace sroce

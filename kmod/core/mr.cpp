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
	  dma_(init.dma != 0) {
	if (!dma_)
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
	if (release_may_sleep_)
		sroce_env_free(pages_);
	else
		sroce_env_free_deferred(pages_);
	if (release_)
		release_(owner_, release_may_sleep_);
}

void Mr::set_page(u64 index, void *kva) {
	if (KTL_WARN_ON(index >= npages_ || !kva))
		return;
	pages_[index] = static_cast<u8 *>(kva);
}

ktl::Result<void> Mr::enable() {
	// Registration is not the data path: one pass keeps a glue bug from
	// turning into a null dereference later.
	for (u64 i = 0; i < npages_; i++)
		if (KTL_WARN_ON(!pages_[i]))
			return Error::from_errno(err::inval);
	pd_->device().keys().enable(*this);
	return {};
}

void Mr::close() {
	pd_->device().keys().remove(*this);
	// Nothing can take a new reference now (the table was the only way to
	// one), so a count of 1 means ours is the last and the pages go here,
	// in a context that may sleep. Otherwise the last in-flight user
	// releases them, in whatever context it runs.
	if (ref_count() == 1)
		release_may_sleep_ = true;
	unref();
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

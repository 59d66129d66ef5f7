// Next-fit bitmap numbers for QPNs, PDNs, SRQNs and AH handles (id_alloc.h).
#include "id_alloc.h"
#include "ktl/alloc.h"
#include "ktl/bitops.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

IdAllocator::~IdAllocator() { sroce_env_free(words_); }

ktl::Result<void> IdAllocator::init(u32 min, u32 max) {
	if (max < min || max - min == ~0u)
		return Error::from_errno(err::inval);
	TRY(lock_.init());
	count_ = max - min + 1;
	u32 nwords = (count_ + bits_per_word - 1) / bits_per_word;
	words_ = static_cast<u64 *>(sroce_env_zalloc(u64(nwords) * sizeof(u64), 0));
	if (!words_)
		return Error::from_errno(err::nomem);
	min_ = min;
	return {};
}

ktl::Result<u32> IdAllocator::alloc(u32 reserve) {
	ktl::Guard g(lock_);
	if (in_use_ >= count_ || count_ - in_use_ <= reserve)
		return Error::from_errno(err::nospc);
	// Scan word by word from next_, wrapping once.
	u32 bit = next_;
	for (u32 scanned = 0; scanned < count_;) {
		u32 w = bit / bits_per_word, off = bit % bits_per_word;
		u64 free_bits = ~words_[w] >> off;
		u32 span = ktl::min(bits_per_word - off, count_ - bit);
		if (span < 64)
			free_bits &= (1ull << span) - 1;
		if (free_bits) {
			bit += ktl::ffs0(free_bits);
			words_[bit / bits_per_word] |= 1ull << (bit % bits_per_word);
			in_use_++;
			next_ = bit + 1 == count_ ? 0 : bit + 1;
			return min_ + bit;
		}
		scanned += span;
		bit += span;
		if (bit == count_)
			bit = 0;
	}
	KTL_WARN_ON(true); // in_use_ said there was room
	return Error::from_errno(err::nospc);
}

ktl::Result<u32> IdAllocator::alloc_block(u32 log2, u32 reserve) {
	if (log2 >= 31)
		return Error::from_errno(err::inval);
	u32 n = 1u << log2;
	ktl::Guard g(lock_);
	if (count_ - in_use_ < n || count_ - in_use_ - n < reserve)
		return Error::from_errno(err::nospc);
	// Aligned numbers, not bits: min_ need not be aligned. First fit: a
	// block is rare (created once per RSS set) and the scan is bounded by
	// the range.
	u64 first = (u64(min_) + n - 1) & ~u64(n - 1);
	for (u64 base = first; base + n - 1 <= u64(min_) + count_ - 1; base += n) {
		u32 b0 = u32(base - min_), free_run = 0;
		while (free_run < n && !test_locked(b0 + free_run))
			free_run++;
		if (free_run < n)
			continue;
		for (u32 i = 0; i < n; i++)
			words_[(b0 + i) / bits_per_word] |= 1ull << ((b0 + i) % bits_per_word);
		in_use_ += n;
		return u32(base);
	}
	return Error::from_errno(err::nospc);
}

void IdAllocator::free(u32 id) {
	ktl::Guard g(lock_);
	u32 bit = id - min_;
	if (KTL_WARN_ON(id < min_ || bit >= count_ || !test_locked(bit)))
		return;
	words_[bit / bits_per_word] &= ~(1ull << (bit % bits_per_word));
	in_use_--;
}

} // namespace sroce

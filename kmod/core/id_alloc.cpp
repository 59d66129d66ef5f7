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

void IdAllocator::free(u32 id) {
	ktl::Guard g(lock_);
	u32 bit = id - min_;
	if (KTL_WARN_ON(id < min_ || bit >= count_ || !test_locked(bit)))
		return;
	words_[bit / bits_per_word] &= ~(1ull << (bit % bits_per_word));
	in_use_--;
}

} // namespace sroce

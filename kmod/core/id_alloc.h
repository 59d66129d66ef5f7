// IdAllocator: numbers in [min, max] from a bitmap, next-fit, so a freed
// number is not handed out again at once (a stale handle or packet for an
// old QPN/PDN then misses instead of hitting a new object).
#pragma once
#include "ktl/lock.h"
#include "ktl/result.h"

namespace sroce {

class IdAllocator : ktl::NonCopyable {
public:
	IdAllocator() = default;
	~IdAllocator();

	ktl::Result<void> init(u32 min, u32 max);
	// -ENOSPC unless more than `reserve` numbers are free: a caller that
	// passes a reserve cannot take the last ones (param::reserve).
	ktl::Result<u32> alloc(u32 reserve = 0);
	// 2^log2 consecutive numbers whose first is a multiple of 2^log2 (the
	// seed's aligned QPN range, Documentation/rss.md), all taken at once,
	// each given back with free(). -ENOSPC as alloc(), or when no aligned
	// run is free.
	ktl::Result<u32> alloc_block(u32 log2, u32 reserve = 0);
	// Freeing a number that is not allocated is a core bug: warned, ignored.
	void free(u32 id);
	u32 in_use() const { return in_use_; }

private:
	static constexpr u32 bits_per_word = 64;
	bool test_locked(u32 bit) const { return words_[bit / bits_per_word] >> (bit % bits_per_word) & 1; }

	ktl::SpinLock lock_{SROCE_LOCK_ID_ALLOC};
	u64 *words_ = nullptr; // guarded by lock_
	u32 min_ = 0;
	u32 count_ = 0;
	u32 next_ = 0;   // guarded by lock_: where the next search starts
	u32 in_use_ = 0; // guarded by lock_
};

} // namespace sroce

// QpnBlock: the seed's consecutive, aligned QP numbers (002-B; the
// consecutive-QPN form of Documentation/rss.md). 2^log2 QPNs whose first is
// a multiple of 2^log2 leave the QPN allocator at once; each child UD QP
// claims base + i and holds a reference, and the numbers go back when the
// last child is gone. Only the context that made the block may claim in it:
// another process could otherwise plant a QP inside someone's set.
#pragma once
#include "device.h"
#include "ktl/atomic.h"

namespace sroce {

class QpnBlock : public ktl::RefCounted<QpnBlock> {
public:
	static constexpr u32 max_log2 = 8; // as the indirection table (param::max_ind_table_log)
	static ktl::Result<ktl::RefPtr<QpnBlock>> create(Device &dev, u32 log2, const void *uctx);
	// The block at `base` of 2^log2 numbers, found through one of its live
	// children (a block with none is gone); null when there is none.
	static ktl::RefPtr<QpnBlock> find(Device &dev, u32 base, u32 log2);

	// base + index for its caller's new child: -EPERM for another context,
	// -EINVAL out of range, -EBUSY when claimed.
	ktl::Result<u32> claim(u32 index, const void *uctx);
	void unclaim(u32 qpn);
	u32 base() const { return base_; }
	u32 log2() const { return log2_; }

private:
	friend class ktl::RefCounted<QpnBlock>;
	template <typename T, typename... A> friend T *ktl::create(ktl::AllocCtx, A &&...);
	template <typename T> friend void ktl::destroy(T *);
	QpnBlock(Device &dev, u32 base, u32 log2, const void *uctx)
		: dev_(&dev), base_(base), log2_(log2), uctx_(uctx) {}
	~QpnBlock();

	ktl::RefPtr<Device> dev_;
	u32 base_;
	u32 log2_;
	const void *uctx_;
	ktl::Atomic<u64> claimed_[(1u << max_log2) / 64]{}; // bit i: base + i has a child
};

} // namespace sroce

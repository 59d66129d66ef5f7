// The kernel's side of a shared ring (abi/sroce-abi.h: struct
// sroce_ring_header + 2^log_size entries). One writer per index:
//   work queues (SQ, RQ, SRQ): producer = the poster (user space, or the
//     kernel itself for kernel QPs), consumer = the kernel;
//   CQs: producer = the kernel, consumer = the poller.
// The kernel keeps private shadows of the indices it owns and never reads
// them back from shared memory. The other side's index is read once per
// use and validated against the shadow: a ring whose producer claims more
// than `size` entries, or whose consumer is ahead of the producer, is
// corrupt, and its owner (QP, CQ) goes to the error state.
#pragma once
#include "abi.h"
#include "ktl/atomic.h"
#include "ktl/errno.h"
#include "ktl/result.h"

namespace sroce {

class Ring {
public:
	void init(void *mem, u32 log_size, u32 stride) {
		hdr_ = static_cast<sroce_ring_header *>(mem);
		entries_ = static_cast<u8 *>(mem) + SROCE_RING_ENTRIES_OFFSET;
		mask_ = (1u << log_size) - 1;
		stride_ = stride;
		// Informational for the other side; never read back.
		hdr_->log_size = log_size;
		hdr_->entry_size = stride;
	}
	bool valid() const { return hdr_ != nullptr; }
	u32 size() const { return mask_ + 1; }
	u32 stride() const { return stride_; }
	// idx is a free-running counter; masking keeps every access in bounds
	// whatever the other side wrote.
	u8 *entry(u32 idx) const { return entries_ + usize(idx & mask_) * stride_; }

	// ---- work queues: the kernel consumes ----
	// The poster's producer index, validated against `consumed` (the
	// kernel's shadow of what it has released) and `seen` (how far the
	// kernel has already read, consumed <= seen): a producer more than
	// `size` ahead of consumed, or rewound behind seen, makes the ring
	// corrupt (-EPROTO).
	ktl::Result<u32> producer(u32 consumed, u32 seen) const {
		// Pairs with the poster's store_release of producer after it wrote
		// the WQE (provider post_send/post_recv, "WQ-P1"; kernel posts: Ring::
		// publish_producer).
		u32 prod = ktl::load_acquire(&hdr_->producer);
		if (prod - consumed > size() || prod - consumed < seen - consumed)
			return ktl::Error::from_errno(ktl::err::proto);
		return prod;
	}
	ktl::Result<u32> producer(u32 consumed) const { return producer(consumed, consumed); }
	// The producer index unvalidated, only to see whether it moved (the SQ
	// poller's scan); whoever consumes reads it again with producer().
	u32 producer_peek() const {
		// Pairs with the poster's store_release of producer (WQ-P1).
		return ktl::load_acquire(&hdr_->producer);
	}
	// The CPU the poster last said it posted from (poster_cpu, a hint any
	// value of which is harmless), or -1 when it said none.
	s32 poster_cpu() const {
		u32 v = ktl::load_relaxed(&hdr_->poster_cpu);
		return v - 1 < 0x7fffffffu ? s32(v - 1) : -1;
	}
	// Releases entries up to `consumed` to the poster.
	void publish_consumer(u32 consumed) {
		// Pairs with the poster's load_acquire of consumer before it reuses
		// a slot (provider sroce_wq_next, "WQ-C1"): our reads of the slot happen
		// before the slot can be overwritten.
		ktl::store_release(&hdr_->consumer, consumed);
	}

	// An SQ's kernel-written flags (SROCE_SQ_ACK_DUE). Setting needs no
	// order: a poster that misses it rings a doorbell it could have
	// skipped. Clearing is followed by a full barrier, after which the
	// caller reads the producer again ("SQ-A1", paired with the provider's
	// full barrier between its producer store and its read of kflags in
	// sroce_sq_doorbell).
	void set_kflags(u32 flags) {
		ktl::store_relaxed(&hdr_->kflags, flags);
		ktl::full_barrier();
	}

	// ---- kernel-owned producer (CQs; kernel work queues) ----
	void publish_producer(u32 produced) {
		// Pairs with the consumer's load_acquire of producer (provider
		// poll_cq "CQ-P1", or Ring::producer above for kernel work queues):
		// the entry is written before it is visible.
		ktl::store_release(&hdr_->producer, produced);
	}
	// The consumer's index, validated against our producer shadow.
	ktl::Result<u32> consumer(u32 produced) const {
		// Pairs with the consumer's store_release of consumer after it has
		// read the entry (provider poll_cq "CQ-C1").
		u32 cons = ktl::load_acquire(&hdr_->consumer);
		if (produced - cons > size())
			return ktl::Error::from_errno(ktl::err::proto);
		return cons;
	}
	// Kernel rings only: the consumer index as the kernel itself wrote it.
	void set_consumer(u32 cons) { ktl::store_release(&hdr_->consumer, cons); }

private:
	sroce_ring_header *hdr_ = nullptr;
	u8 *entries_ = nullptr;
	u32 mask_ = 0;
	u32 stride_ = 0;
};

} // namespace sroce

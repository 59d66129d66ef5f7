// RecvQueue: a receive queue in a shared ring, the part a QP's own RQ and
// an SRQ have in common (and an RSS work queue will). It keeps the consumer
// shadow, validates the poster's producer index, and copies each WQE out of
// the ring once. Its owner's lock guards it; the owner decides what an
// empty or corrupt queue means (RNR, an SRQ's limit event, the error state).
#pragma once
#include "param.h"
#include "ring.h"

namespace sroce {

// A receive WQE copied out of a receive queue's ring.
struct RecvWqe {
	u64 wr_id = 0;
	u32 num_sge = 0;
	sroce_sge sge[param::max_sge];
};

class RecvQueue {
public:
	void init(void *ring, u32 log_size, u32 stride, u32 max_sge) {
		ring_.init(ring, log_size, stride);
		max_sge_ = max_sge;
	}
	bool valid() const { return ring_.valid(); }
	u32 size() const { return ring_.size(); }
	u32 max_sge() const { return max_sge_; }
	s32 poster_cpu() const { return ring_.valid() ? ring_.poster_cpu() : -1; }

	// Copies the next posted WQE into out and releases its slot. Returns
	// how many were posted before it (at least 1). -EAGAIN when none is,
	// -EPROTO when the producer index is corrupt, -EINVAL when the WQE is
	// malformed: that one is consumed all the same (out has its wr_id and no
	// SGEs), and its owner completes it in error.
	ktl::Result<u32> take(RecvWqe &out);

	// Kernel queues: appends a WQE. -ENOMEM when full.
	ktl::Result<void> post(const sroce_wqe &wqe, const sroce_sge *sge);

	// The error state: fn(wr_id) for every posted WQE, in order, until it
	// returns false (that WQE stays posted). The others' slots are released.
	template <typename F> void flush(F fn) {
		auto p = ring_.producer(consumed_);
		if (p.is_error())
			return;
		for (; consumed_ != p.value(); consumed_++) {
			sroce_wqe w;
			__builtin_memcpy(&w, ring_.entry(consumed_), sizeof(w)); // only wr_id is used
			if (!fn(w.wr_id))
				break;
		}
		ring_.publish_consumer(consumed_);
	}

private:
	Ring ring_;
	u32 consumed_ = 0; // our shadow of the consumer index
	u32 kprod_ = 0;    // kernel queues: our shadow of the producer index
	u32 max_sge_ = 0;
};

} // namespace sroce

// RecvQueue: taking, posting and validating receive WQEs (recv_queue.h).
#include "recv_queue.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

namespace {
bool wqe_fits(u32 num_sge, u32 max_sge, u32 stride) {
	return num_sge <= max_sge && sizeof(sroce_wqe) + usize(num_sge) * sizeof(sroce_sge) <= stride;
}
} // namespace

ktl::Result<u32> RecvQueue::take(RecvWqe &out) {
	u32 prod = TRY(ring_.producer(consumed_));
	u32 posted = prod - consumed_;
	if (posted == 0)
		return Error::from_errno(err::again);
	const u8 *slot = ring_.entry(consumed_);
	sroce_wqe w;
	__builtin_memcpy(&w, slot, sizeof(w)); // one read of user memory
	bool ok = wqe_fits(w.num_sge, max_sge_, ring_.stride());
	out.wr_id = w.wr_id; // a malformed WQE's owner completes it with this
	out.num_sge = 0;
	if (ok) {
		out.num_sge = w.num_sge;
		__builtin_memcpy(out.sge, slot + sizeof(sroce_wqe), usize(w.num_sge) * sizeof(sroce_sge));
	}
	ring_.publish_consumer(++consumed_);
	if (!ok)
		return Error::from_errno(err::inval);
	return posted;
}

ktl::Result<void> RecvQueue::post(const sroce_wqe &wqe, const sroce_sge *sge) {
	if (kprod_ - consumed_ >= ring_.size())
		return Error::from_errno(err::nomem);
	if (!wqe_fits(wqe.num_sge, max_sge_, ring_.stride()))
		return Error::from_errno(err::inval);
	u8 *slot = ring_.entry(kprod_);
	__builtin_memcpy(slot, &wqe, sizeof(wqe));
	if (wqe.num_sge) // a receive without SGEs (ib_drain_rq's) may come with none
		__builtin_memcpy(slot + sizeof(sroce_wqe), sge, usize(wqe.num_sge) * sizeof(sroce_sge));
	ring_.publish_producer(++kprod_);
	return {};
}

} // namespace sroce

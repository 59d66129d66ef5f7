// Wq: a receive work queue (ibv_create_wq, IBV_WQT_RQ; issue 18 and
// Documentation/rss.md). An RSS QP's indirection table spreads received UD
// messages over WQs; each WQ is a RecvQueue under its own lock, with its
// own PD and CQ, so that messages for different WQs never meet on a lock.
//
// States (enum ib_wq_state; the table in wq.cpp): RESET takes no message
// and holds no WQE (moving to RESET discards what is posted, without
// completions, as a QP's reset does); RDY receives; ERR completes every
// posted WQE with WR_FLUSH_ERR and takes no message (moving to ERR again
// flushes what was posted since). A corrupt ring moves
// it to ERR and raises IB_EVENT_WQ_FATAL once.
//
// A multi-packet WQ (mp_recv.h, Documentation/mp-wr.md) places each
// message at the next alignment boundary of the buffer in use, as a UD
// QP's multi-packet RQ does; ERR flushes that buffer first, RESET drops it.
#pragma once
#include "cq.h"
#include "ktl/atomic.h"
#include "mp_recv.h"
#include "pd.h"
#include "recv_queue.h"
#include "rss.h"

namespace sroce {

struct RxPacket;

class Wq : public ktl::RefCounted<Wq> {
public:
	static ktl::Result<ktl::RefPtr<Wq>> create(Device &dev, const sroce_core_wq_init &init);

	// ibv_modify_wq: to `state`, from `cur` when the caller states one
	// (-1: not stated). -EINVAL for a transition the table refuses or a
	// stated current state that is not the current one.
	ktl::Result<void> modify(u32 state, s32 cur, sroce_env_batch *b);
	u32 state();
	void snapshot(sroce_core_wq_view *s);
	// Kernel WQs: appends a WQE (-EINVAL unless RDY, -ENOMEM when full).
	ktl::Result<void> post(const sroce_wqe &wqe, const sroce_sge *sge);

	// Places one UD message of an RSS QP (qp_num, qp_owner for the CQE):
	// its GRH area and payload into the next WQE (or the multi-packet
	// buffer in use), and completes it with the hash. Dropped when not
	// RDY, with no WQE posted, or a corrupt ring.
	void receive_ud(const RxPacket &rx, u32 qp_num, void *qp_owner, const rss::Hash &h, sroce_env_batch *b);

	u32 wqn() const { return wqn_; }
	const void *uctx() const { return uctx_; }
	// RSS QPs that name it as their default WQ (RssContext): added under
	// lock_ (add_default_user), so that close() sees every one.
	ktl::Atomic<u32> default_users{0};
	bool add_default_user(); // false once closed
	// The child UD QP (qpn, its owner) that receives into it (qpn_block.cpp);
	// what an RSS QP places here then names the child. -EBUSY when bound.
	ktl::Result<void> bind_child(u32 qpn, void *owner);
	void unbind_child(u32 qpn);
	// Destroy waits: an RSS QP names it as default, or a child receives into it.
	bool busy();
	// destroy's check: -EBUSY when busy(), else no QP may name it any more.
	ktl::Result<void> close();
	u32 pdn() const { return pd_->pdn(); }
	Device &device() const { return *dev_; }
	CompletionQueue &cq() const { return *cq_; }
	// destroy: no more events or completions.
	void kill();

private:
	friend class ktl::RefCounted<Wq>;
	template <typename T, typename... A> friend T *ktl::create(ktl::AllocCtx, A &&...);
	template <typename T> friend void ktl::destroy(T *);
	Wq(Device &dev) : dev_(&dev) {}
	~Wq();
	ktl::Result<void> init(const sroce_core_wq_init &init);
	void to_error_locked(sroce_env_batch *b);
	void fatal_locked(sroce_env_batch *b); // IB_EVENT_WQ_FATAL, then ERR
	void flush_locked(sroce_env_batch *b);
	void mp_receive_locked(const RxPacket &rx, u32 qp_num, void *qp_owner, const rss::Hash &h,
			       sroce_env_batch *b);

	ktl::RefPtr<Device> dev_;
	ktl::RefPtr<Pd> pd_;
	ktl::RefPtr<CompletionQueue> cq_;
	void *owner_ = nullptr;
	const void *uctx_ = nullptr;
	u32 wqn_ = 0;
	bool listed_ = false; // in the device's WQN table
	bool user_ = false;
	ktl::SpinLock lock_{SROCE_LOCK_WQ};
	RecvQueue rq_;      // guarded by lock_
	RecvWqe wqe_;       // guarded by lock_: the one being placed
	MpRecv mp_;         // guarded by lock_ (its sizes are immutable)
	u32 state_ = 0;     // guarded by lock_: enum ib_wq_state
	bool dead_ = false; // guarded by lock_
	u32 child_qpn_ = 0;        // guarded by lock_: 0 when no child is bound
	void *child_owner_ = nullptr; // guarded by lock_
	sroce_core_wq_view counts_{}; // guarded by lock_
};

} // namespace sroce

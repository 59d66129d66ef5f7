// CompletionQueue: the kernel produces CQEs into a ring the poller consumes
// (mapped for user CQs, kernel memory for kernel ones). Overflow is never
// silent: the CQ enters the error state and raises IB_EVENT_CQ_ERR, and
// the QP whose completion did not fit goes to the error state.
#pragma once
#include "device.h"
#include "ktl/lock.h"
#include "ring.h"

struct sroce_env_batch;

namespace sroce {

class CompletionQueue : public ktl::RefCounted<CompletionQueue> {
public:
	static ktl::Result<ktl::RefPtr<CompletionQueue>> create(Device &dev, const sroce_core_cq_init &init);

	// Appends a CQE. qp_owner is remembered for kernel polls. solicited
	// marks a completion that satisfies an IB_CQ_SOLICITED arm. false when
	// the CQ overflowed or is in error (the CQE is lost and CQ_ERR raised).
	bool post(const sroce_cqe &cqe, void *qp_owner, bool solicited, sroce_env_batch *b);
	int req_notify(int flags);
	// CQ moderation (sroce_core_cq_modify). Process context.
	ktl::Result<void> moderate(u32 count, u32 period_us);
	int poll(sroce_cqe *out, void **qp_owner, int n);
	ktl::Result<void> resize(void *ring, u32 log_size);
	// A QP is going away: its pending CQEs in a kernel CQ no longer name it.
	void forget_qp(void *qp_owner);
	void kill(); // destroy: no more events for this CQ
	void snapshot(sroce_core_cq_view *s);

	Device &device() const { return *dev_; }
	void *owner() const { return owner_; } // the glue's (sroce_env_rx_steer)

private:
	friend class ktl::RefCounted<CompletionQueue>;
	template <typename T, typename... A> friend T *ktl::create(ktl::AllocCtx, A &&...);
	template <typename T> friend void ktl::destroy(T *);
	CompletionQueue(Device &dev) : dev_(&dev) {}
	~CompletionQueue();
	ktl::Result<void> init(const sroce_core_cq_init &init);
	void raise_error_locked(sroce_env_batch *b);
	void notify_locked(sroce_env_batch *b);
	static void on_moderation_timer(void *arg, sroce_env_batch *b);
	int move_to_locked(void *mem, u32 log_size, void **&owners);

	ktl::RefPtr<Device> dev_;
	ktl::SpinLock lock_{SROCE_LOCK_CQ};
	Ring ring_;         // guarded by lock_
	u32 prod_ = 0;      // guarded by lock_: our shadow of the producer
	u32 kcons_ = 0;     // guarded by lock_: kernel CQs, the poller's index
	void **owners_ = nullptr; // kernel CQs: the QP owner of each slot
	void *owner_ = nullptr;
	bool user_ = false;
	bool timestamp_ = false; // CQEs carry the device clock (sroce_env_now_ns)
	bool error_ = false; // guarded by lock_
	bool dead_ = false;  // guarded by lock_
	int armed_ = 0;      // guarded by lock_: 0, cq_solicited or cq_next_comp
	// Moderation, guarded by lock_: events wait for mod_count_ completions
	// since the arm (mod_pending_) or mod_period_us_ after the first.
	u32 mod_count_ = 0;
	u32 mod_period_us_ = 0;
	u32 mod_pending_ = 0;
	sroce_env_timer *mod_timer_ = nullptr; // made by the first moderate(), gone at kill()
};

} // namespace sroce

// IndTable: an RSS indirection table (ibv_create_rwq_ind_table): 2^log_size
// work queues, repeats allowed, immutable once made; it holds a reference
// on each. RssContext: what makes a UD QP an RSS QP (rss.h, wq.h): the
// hashing, the table, the default WQ. Documentation/rss.md.
#pragma once
#include "param.h"
#include "rss.h"
#include "wq.h"

namespace sroce {

class IndTable : public ktl::RefCounted<IndTable> {
public:
	static ktl::Result<ktl::RefPtr<IndTable>> create(Device &dev, u32 log_size, Wq *const *wqs);
	u32 log_size() const { return log_size_; }
	u32 size() const { return 1u << log_size_; }
	Wq &entry(u32 i) const { return *wqs_[i & (size() - 1)]; }
	Device &device() const { return *dev_; }

private:
	friend class ktl::RefCounted<IndTable>;
	template <typename T, typename... A> friend T *ktl::create(ktl::AllocCtx, A &&...);
	template <typename T> friend void ktl::destroy(T *);
	IndTable(Device &dev) : dev_(&dev) {}
	~IndTable();

	ktl::RefPtr<Device> dev_;
	u32 log_size_ = 0;
	ktl::RefPtr<Wq> wqs_[1u << param::max_ind_table_log];
};

struct RssContext {
	rss::Config config;
	ktl::RefPtr<IndTable> table; // null: not an RSS QP
	ktl::RefPtr<Wq> default_wq;  // may be null

	// Checks and takes an RSS QP's attributes: the table of dev and PD
	// pdn, the default WQ of the same PD and of context uctx (by number),
	// fields_error's rules, a 40-byte Toeplitz key.
	ktl::Result<void> init(Device &dev, u32 pdn, const void *uctx, const sroce_core_rss_init &in);
	// The QP is destroyed (or never made): its default WQ may go. Once.
	void release();
	~RssContext() { release(); }
	// The hash of a received message and the WQ it goes to.
	Wq &pick(const RxPacket &rx, rss::Hash *h) const;
	// The QP is going away: its pending CQEs in the WQs' kernel CQs no
	// longer name it (CompletionQueue::forget_qp).
	void forget_qp(void *qp_owner) const;
};

} // namespace sroce

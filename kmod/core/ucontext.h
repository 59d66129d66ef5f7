// Ucontext: one process's open context on a device. It checks the
// provider's ABI and describes the mappings the provider will make.
#pragma once
#include "device.h"

struct sroce_alloc_ucontext_req;
struct sroce_alloc_ucontext_resp;

namespace sroce {

class Ucontext : public ktl::RefCounted<Ucontext> {
public:
	static ktl::Result<ktl::RefPtr<Ucontext>> create(Device &dev, const sroce_alloc_ucontext_req &req,
							 usize req_len, sroce_alloc_ucontext_resp *resp);
	// Fills the context page and, for a polled context, hands its
	// NEED_WAKEUP word to the device's SQ poller.
	void fill_page(void *page);
	// Leaves the poller: the page is not written after this returns.
	void close();
	bool sq_poll() const { return sq_poll_; }

	// Validates a request without side effects (exposed for tests).
	static ktl::Result<void> check_request(const sroce_alloc_ucontext_req &req, usize req_len);

private:
	friend class ktl::RefCounted<Ucontext>;
	template <typename T, typename... A> friend T *ktl::create(ktl::AllocCtx, A &&...);
	template <typename T> friend void ktl::destroy(T *);
	Ucontext(Device &dev, bool sq_poll) : dev_(&dev), sq_poll_(sq_poll) {}
	~Ucontext() {
		close();
		dev_->counts().ucontexts.put();
	}

	ktl::RefPtr<Device> dev_;
	bool sq_poll_;
	SqPollCtx poll_ctx_;
};

} // namespace sroce

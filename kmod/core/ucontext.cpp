// User contexts: the provider's ABI check and the mappings it will make (ucontext.h).
#include "ucontext.h"
#include "abi.h"
#include "param.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

ktl::Result<void> Ucontext::check_request(const sroce_alloc_ucontext_req &req, usize req_len) {
	if (req_len < sizeof(req.abi_version))
		return Error::from_errno(err::inval);
	if (req.abi_version != SROCE_ABI_VERSION) {
		sroce_env_log(SROCE_LOG_WARNING, "provider ABI %u, kernel ABI %u: refusing context",
			      req.abi_version, SROCE_ABI_VERSION);
		return Error::from_errno(err::proto);
	}
	if (req.comp_mask)
		return Error::from_errno(err::opnotsupp);
	if (req.flags & ~u32(SROCE_UCTX_REQ_NO_SQ_POLL) || req.reserved)
		return Error::from_errno(err::inval);
	return {};
}

ktl::Result<ktl::RefPtr<Ucontext>> Ucontext::create(Device &dev, const sroce_alloc_ucontext_req &req,
						    usize req_len, sroce_alloc_ucontext_resp *resp) {
	TRY(check_request(req, req_len));
	// Polled unless the device has no poller or the provider asked for
	// doorbell mode; the response says which (SROCE_UCTX_CAP_SQ_POLL).
	bool poll = dev.sq_poller().running() && !(req.flags & SROCE_UCTX_REQ_NO_SQ_POLL);
	auto uctx = create_counted<Ucontext>(dev.counts().ucontexts, param::max_ucontext, err::mfile,
					     ktl::AllocCtx::may_sleep, dev, poll);
	if (uctx.is_error())
		return uctx.error();
	*resp = {};
	resp->abi_version = SROCE_ABI_VERSION;
	resp->caps = uctx.value()->sq_poll() ? SROCE_UCTX_CAP_SQ_POLL : 0;
	resp->ctx_page_size = sizeof(sroce_context_page);
	resp->max_inline_data = param::max_inline_data;
	resp->max_sge = param::max_sge;
	return uctx;
}

void Ucontext::fill_page(void *mem) {
	auto *page = static_cast<sroce_context_page *>(mem);
	page->magic = SROCE_CTX_PAGE_MAGIC;
	page->abi_version = SROCE_ABI_VERSION;
	page->device_generation = dev_->generation();
	// Every context starts by ringing. Without polling it always does; a
	// polled one's first doorbell wakes the poller, which clears the flag.
	page->flags = SROCE_CTX_NEED_WAKEUP;
	if (sq_poll_ && !poll_ctx_.flags) {
		poll_ctx_.flags = &page->flags;
		dev_->sq_poller().add_ctx(poll_ctx_);
	}
}

void Ucontext::close() {
	if (!poll_ctx_.flags)
		return;
	dev_->sq_poller().remove_ctx(poll_ctx_);
	poll_ctx_.flags = nullptr;
}

} // namespace sroce

// Address handles: creation from a path, the handle table's PD check (ah.h).
#include "ah.h"
#include "param.h"

namespace sroce {

ktl::Result<ktl::RefPtr<Ah>> Ah::create(Pd &pd, sroce_env_path *path, const sroce_core_path_info &info) {
	Device &dev = pd.device();
	if (!path)
		return ktl::Error::from_errno(ktl::err::inval);
	// AHs are created in atomic context by kernel users (rdma_create_ah
	// with RDMA_CREATE_AH_SLEEPABLE unset).
	auto ah = create_counted<Ah>(dev.counts().ahs, param::max_ah, ktl::err::nomem, ktl::AllocCtx::atomic, pd, path,
				     info);
	if (ah.is_error()) {
		sroce_env_path_put(path);
		return ah.error();
	}
	auto ref = ah.release_value();
	auto h = dev.ahs().insert(ref.get());
	if (h.is_error())
		return h.error(); // the destructor puts the path and the count
	ref->handle_ = h.value();
	return ref;
}

void Ah::kill() {
	if (handle_)
		pd_->device().ahs().remove(handle_, this);
	handle_ = 0;
}

Ah::~Ah() {
	sroce_env_path_put(path_);
	pd_->device().counts().ahs.put();
}

} // namespace sroce

// Protection domains: their numbers and life cycle (pd.h).
#include "pd.h"

namespace sroce {

ktl::Result<ktl::RefPtr<Pd>> Pd::create(Device &dev) {
	u32 pdn = TRY(dev.pd_ids().alloc());
	auto pd = ktl::make_ref<Pd>(ktl::AllocCtx::may_sleep, dev, pdn);
	if (pd.is_error())
		dev.pd_ids().free(pdn);
	return pd;
}

Pd::~Pd() { dev_->pd_ids().free(pdn_); }

} // namespace sroce

// Protection domains: their numbers and life cycle (pd.h).
#include "pd.h"

namespace sroce {

ktl::Result<ktl::RefPtr<Pd>> Pd::create(Device &dev) {
	return create_numbered<Pd>(dev.pd_ids(), dev);
}

Pd::~Pd() { dev_->pd_ids().free(pdn_); }

} // namespace sroce

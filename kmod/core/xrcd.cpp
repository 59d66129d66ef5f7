// XRC domains: their numbers and life cycle (xrcd.h).
#include "xrcd.h"

namespace sroce {

ktl::Result<ktl::RefPtr<Xrcd>> Xrcd::create(Device &dev) {
	return create_numbered<Xrcd>(dev.xrcd_ids(), dev);
}

Xrcd::~Xrcd() { dev_->xrcd_ids().free(xrcdn_); }

} // namespace sroce

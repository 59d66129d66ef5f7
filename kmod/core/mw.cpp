// Memory windows: allocation and deallocation; binding, invalidation and
// lookup are the key table's (mw.h, key_table.cpp).
#include "mw.h"
#include "key_table.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

ktl::Result<ktl::RefPtr<Mw>> Mw::create(Pd &pd, u8 type, bool user) {
	if (type != type1 && type != type2)
		return Error::from_errno(err::inval);
	auto mw = TRY(ktl::make_ref<Mw>(ktl::AllocCtx::may_sleep, pd, type));
	TRY(pd.device().keys().insert_mw(*mw, user));
	return mw;
}

Mw::~Mw() {
	KTL_WARN_ON(in_table_);
}

void Mw::close() {
	pd_->device().keys().remove_mw(*this);
	unref();
}

} // namespace sroce

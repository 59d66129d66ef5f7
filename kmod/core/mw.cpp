// Memory windows: allocation, deallocation and staging a layout; binding,
// invalidation and lookup are the key table's (mw.h, key_table.cpp).
#include "mw.h"
#include "key_table.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

ktl::Result<ktl::RefPtr<Mw>> Mw::create(Pd &pd, u8 type, bool user, u32 max_descriptors) {
	if ((type != type1 && type != type2) || max_descriptors > SROCE_MW_LAYOUT_MAX_DESCRIPTORS)
		return Error::from_errno(err::inval);
	// The key table bounds windows (with MRs); the count shows leaks.
	auto mw = TRY(create_counted<Mw>(pd.device().counts().mws, ~0ull, err::nospc, ktl::AllocCtx::may_sleep, pd, type,
					 max_descriptors));
	TRY(pd.device().keys().insert_mw(*mw, user));
	return mw;
}

Mw::~Mw() {
	KTL_WARN_ON(in_table_ || qp_link_.node.linked());
	pd_->device().counts().mws.put();
}

ktl::Result<void> Mw::close() {
	TRY(pd_->device().keys().remove_mw(*this));
	unref();
	return {};
}

ktl::Result<void> Mw::stage_layout(const MwLayout::Spec &spec, sroce_mw_layout_resp &out) {
	if (!max_descriptors_)
		return Error::from_errno(err::inval);
	MemoryKeyTable &keys = pd_->device().keys();
	auto layout = TRY(MwLayout::compile(keys, *this, pdn(), spec, max_descriptors_));
	out = {layout->length(), 0, layout->descriptors()};
	keys.stage_layout(*this, layout, &out.handle);
	return {};
}

} // namespace sroce

// QP state transitions as ib_modify_qp_is_ok accepts them.
#pragma once
#include "ib_enums.h"

namespace sroce {

// True when moving a QP of `type` from cur to next with attribute `mask`
// (ib::QpAttrMask, IB_QP_STATE included or not) is allowed: every required
// attribute present and nothing outside required | optional.
bool qp_transition_ok(u32 cur, u32 next, u32 type, u32 mask);

} // namespace sroce

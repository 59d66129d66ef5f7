// ib_verbs numeric values the core uses. The core includes no kernel
// header, so the values of include/rdma/ib_verbs.h (which are the IBTA and
// uverbs UAPI values) are written out here once; core.h passes them through
// unchanged.
#pragma once
#include "ktl/types.h"

namespace sroce::ib {

// enum ib_access_flags (IB_ACCESS_*), as in IB_UVERBS_ACCESS_*.
namespace access {
enum : u32 {
	local_write = 1u << 0,
	remote_write = 1u << 1,
	remote_read = 1u << 2,
	remote_atomic = 1u << 3,
	mw_bind = 1u << 4,
	zero_based = 1u << 5,
	on_demand = 1u << 6,
	hugetlb = 1u << 7,

	remote = remote_write | remote_read | remote_atomic,
	// What an MR of this device can be registered with.
	mr_supported = local_write | remote | mw_bind,
};
} // namespace access

} // namespace sroce::ib

// C handles of core.h: a handle is the C++ object itself (the handle
// structs are never defined) and owns one reference to it.
#pragma once
#include "ktl/refptr.h"

namespace sroce {

// Moves the reference out of a successful Result into a C handle.
template <typename Handle, typename T> int to_handle(ktl::Result<ktl::RefPtr<T>> r, Handle **out) {
	if (r.is_error())
		return r.error().code();
	*out = reinterpret_cast<Handle *>(r.release_value().leak());
	return 0;
}

} // namespace sroce

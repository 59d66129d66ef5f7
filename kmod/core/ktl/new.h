// Placement new under a ktl tag, so it never collides with <new> when core
// headers meet standard headers in host tests. Objects are allocated
// through env.h (alloc.h); the core never references global operator
// new/delete.
#pragma once
#include "types.h"

namespace ktl {
struct Place {};
inline constexpr Place place{};
} // namespace ktl

inline void *operator new(usize, void *where, ktl::Place) noexcept { return where; }
inline void operator delete(void *, void *, ktl::Place) noexcept {}

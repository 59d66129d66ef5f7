// Placement new only. Objects are allocated through env.h (see alloc.h), so
// the core never references the global operator new/delete.
#pragma once
#include "types.h"

inline void *operator new(usize, void *where) noexcept { return where; }
inline void *operator new[](usize, void *where) noexcept { return where; }
inline void operator delete(void *, void *) noexcept {}

// Fixed-width types for the freestanding core. No libc or kernel headers here:
// the core reaches the OS only through env.h.
#pragma once

namespace ktl {}

using u8 = unsigned char;
using u16 = unsigned short;
using u32 = unsigned int;
using u64 = unsigned long long;
using s8 = signed char;
using s16 = short;
using s32 = int;
using s64 = long long;
using usize = __SIZE_TYPE__;
using uptr = __UINTPTR_TYPE__;

static_assert(sizeof(u16) == 2 && sizeof(u32) == 4 && sizeof(u64) == 8, "LP64 expected");
static_assert(sizeof(usize) == sizeof(void *), "usize is pointer-sized");

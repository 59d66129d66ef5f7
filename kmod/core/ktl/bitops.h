// Bit operations over compiler builtins.
#pragma once
#include "types.h"

namespace ktl {

constexpr bool is_pow2(u64 v) { return v && !(v & (v - 1)); }

// Index of the highest set bit; v must be non-zero.
constexpr u32 ilog2(u64 v) { return 63u - u32(__builtin_clzll(v)); }

// Smallest power of two >= v; 0 when that does not fit in 64 bits.
constexpr u64 roundup_pow2(u64 v) {
	if (v <= 1)
		return 1;
	if (v > (1ull << 63))
		return 0;
	return 1ull << (ilog2(v - 1) + 1);
}

constexpr u32 popcount(u64 v) { return u32(__builtin_popcountll(v)); }

// Index of the lowest set bit; v must be non-zero.
constexpr u32 ffs0(u64 v) { return u32(__builtin_ctzll(v)); }

template <typename T> constexpr T align_up(T v, T a) { return (v + a - 1) & ~(a - 1); }
template <typename T> constexpr T align_down(T v, T a) { return v & ~(a - 1); }

// Overflow-checked arithmetic for sizes taken from untrusted input.
template <typename T> constexpr bool add_overflows(T a, T b, T *out) {
	return __builtin_add_overflow(a, b, out);
}
template <typename T> constexpr bool mul_overflows(T a, T b, T *out) {
	return __builtin_mul_overflow(a, b, out);
}

} // namespace ktl

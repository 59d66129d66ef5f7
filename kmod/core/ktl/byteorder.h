// Big-endian (network/IBTA) loads and stores through byte pointers, so that
// unaligned header fields are safe to read.
#pragma once
#include "types.h"

namespace ktl {

constexpr u16 bswap16(u16 v) { return __builtin_bswap16(v); }
constexpr u32 bswap32(u32 v) { return __builtin_bswap32(v); }
constexpr u64 bswap64(u64 v) { return __builtin_bswap64(v); }

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr u16 cpu_to_be16(u16 v) { return bswap16(v); }
constexpr u32 cpu_to_be32(u32 v) { return bswap32(v); }
constexpr u64 cpu_to_be64(u64 v) { return bswap64(v); }
#else
constexpr u16 cpu_to_be16(u16 v) { return v; }
constexpr u32 cpu_to_be32(u32 v) { return v; }
constexpr u64 cpu_to_be64(u64 v) { return v; }
#endif
constexpr u16 be16_to_cpu(u16 v) { return cpu_to_be16(v); }
constexpr u32 be32_to_cpu(u32 v) { return cpu_to_be32(v); }
constexpr u64 be64_to_cpu(u64 v) { return cpu_to_be64(v); }

inline u16 get_be16(const u8 *p) { return u16(u16(p[0]) << 8 | p[1]); }
inline u32 get_be24(const u8 *p) { return u32(p[0]) << 16 | u32(p[1]) << 8 | p[2]; }
inline u32 get_be32(const u8 *p) { return u32(get_be16(p)) << 16 | get_be16(p + 2); }
inline u64 get_be64(const u8 *p) { return u64(get_be32(p)) << 32 | get_be32(p + 4); }

inline void put_be16(u8 *p, u16 v) {
	p[0] = u8(v >> 8);
	p[1] = u8(v);
}
inline void put_be24(u8 *p, u32 v) {
	p[0] = u8(v >> 16);
	p[1] = u8(v >> 8);
	p[2] = u8(v);
}
inline void put_be32(u8 *p, u32 v) {
	put_be16(p, u16(v >> 16));
	put_be16(p + 2, u16(v));
}
inline void put_be64(u8 *p, u64 v) {
	put_be32(p, u32(v >> 32));
	put_be32(p + 4, u32(v));
}

} // namespace ktl

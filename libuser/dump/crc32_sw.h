// Software CRC-32 with the semantics of the Linux kernel's crc32_le:
// reflected IEEE polynomial 0xEDB88320, no inversion inside (callers seed
// with ~0 and invert at the end). Slice-by-8 tables built at compile time.
// User space only: the host tests' env and sroce-dump use it; the kernel
// module calls crc32_le.
#pragma once
#include <cstddef>
#include <cstdint>

namespace crc32_sw {

struct Tables {
	uint32_t t[8][256];
};

constexpr Tables make_tables() {
	Tables x{};
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
		x.t[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int s = 1; s < 8; s++)
			x.t[s][i] = (x.t[s - 1][i] >> 8) ^ x.t[0][x.t[s - 1][i] & 0xff];
	return x;
}

inline constexpr Tables tables = make_tables();

inline uint32_t crc32_le(uint32_t crc, const void *data, size_t len) {
	const uint8_t *p = static_cast<const uint8_t *>(data);
	const auto &t = tables.t;
	while (len >= 8) {
		uint32_t lo = crc ^ (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
				     uint32_t(p[3]) << 24);
		crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
		      t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
	return crc;
}

// Bit-at-a-time reference, for testing the tables.
inline uint32_t crc32_le_bitwise(uint32_t crc, const void *data, size_t len) {
	const uint8_t *p = static_cast<const uint8_t *>(data);
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
	}
	return crc;
}

} // namespace crc32_sw

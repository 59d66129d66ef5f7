// env.h for the user-space copy of the core codec inside sroce-dump: the
// codec needs only CRC-32.
#include "crc32_sw.h"
#include "env.h"

extern "C" unsigned int sroce_env_crc32_le(unsigned int crc, const void *p, unsigned long len) {
	return crc32_sw::crc32_le(crc, p, len);
}

// MpRecv: the sizes of a multi-packet queue (mp_recv.h).
#include "mp_recv.h"
#include "opcode.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

// place()'s bound: a UD datagram's GRH area (40 bytes) and the largest
// payload parse_ib lets through fit in the smallest buffer.
static_assert(SROCE_MP_WR_MIN_BUFFER >= 40 + ib::len::max_payload, "a packet fits any buffer");

ktl::Result<void> MpRecv::round(u32 *buf_sz, u32 *align) {
	if (*buf_sz == 0 || *buf_sz > SROCE_MP_WR_MAX_BUFFER || *align > SROCE_MP_WR_MAX_ALIGN)
		return Error::from_errno(err::inval);
	u32 a = SROCE_MP_WR_MIN_ALIGN;
	while (a < *align)
		a <<= 1;
	u32 b = ktl::max(*buf_sz, SROCE_MP_WR_MIN_BUFFER);
	u64 rounded = (u64(b) + a - 1) & ~u64(a - 1);
	if (rounded > SROCE_MP_WR_MAX_BUFFER)
		return Error::from_errno(err::inval);
	*buf_sz = u32(rounded);
	*align = a;
	return {};
}

u64 MpRecv::buffer_bytes(const RecvWqe &w) {
	u64 n = 0;
	for (u32 i = 0; i < w.num_sge; i++)
		n += w.sge[i].length;
	return n;
}

} // namespace sroce

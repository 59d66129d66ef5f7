// Gather and scatter through SGE lists, each SGE checked in the key table (sge.h).
#include "sge.h"
#include "ib_enums.h"
#include "mw_layout.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

ktl::Result<u64> sge_total(const SgeList &l) {
	u64 t = 0;
	for (u32 i = 0; i < l.num; i++)
		t += l.sge[i].length;
	if (t > (1ull << 31))
		return Error::from_errno(err::msgsize);
	return t;
}

ktl::Result<void> sge_gather(Device &dev, const SgeList &l, u64 offset, u8 *dst, u32 len) {
	return sge_walk(dev, l, offset, len, 0, [&](const KeyRef &ref, u32 n, u32 done) {
		return ref.copy_from(dst + done, n);
	});
}

ktl::Result<void> sge_scatter(Device &dev, const SgeList &l, u64 offset, const u8 *src, u32 len) {
	return sge_walk(dev, l, offset, len, ib::access::local_write, [&](const KeyRef &ref, u32 n, u32 done) {
		return ref.copy_to(src + done, n);
	});
}

ktl::Result<void> sge_scatter_pkt(Device &dev, const SgeList &l, u64 offset, sroce_env_pkt *pkt, u32 pkt_off,
				  u32 len) {
	return sge_walk(dev, l, offset, len, ib::access::local_write, [&](const KeyRef &ref, u32 n, u32 done) {
		u32 at = pkt_off + done;
		return ref.for_each_chunk(n, [&](u8 *kva, u32 c) -> ktl::Result<void> {
			int rc = sroce_env_pkt_read(pkt, at, kva, c);
			at += c;
			return ktl::from_rc(rc);
		});
	});
}

} // namespace sroce

// Gather and scatter through SGE lists, each SGE checked in the key table (sge.h).
#include "sge.h"
#include "ib_enums.h"
#include "key_table.h"
#include "mw_layout.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

namespace {
// Walks the SGEs covering [offset, offset + len) and calls
// fn(ref, chunk_len, done) for each piece, ref being what the SGE's key
// resolved to at the piece's start (an MR, or a window: seed 003's lkey).
template <typename Fn>
ktl::Result<void> walk(Device &dev, const SgeList &l, u64 offset, u32 len, u32 access, Fn fn) {
	u32 done = 0;
	for (u32 i = 0; i < l.num && done < len; i++) {
		const sroce_sge &s = l.sge[i];
		if (offset >= s.length) {
			offset -= s.length;
			continue;
		}
		u32 n = u32(ktl::min(u64(s.length) - offset, u64(len - done)));
		auto ref = TRY(dev.keys().lookup_lkey(s.lkey, l.pdn, s.addr + offset, n, access));
		TRY(fn(ref, n, done));
		done += n;
		offset = 0;
	}
	if (done < len)
		return Error::from_errno(err::msgsize);
	return {};
}
} // namespace

ktl::Result<u64> sge_total(const SgeList &l) {
	u64 t = 0;
	for (u32 i = 0; i < l.num; i++)
		t += l.sge[i].length;
	if (t > (1ull << 31))
		return Error::from_errno(err::msgsize);
	return t;
}

ktl::Result<void> sge_gather(Device &dev, const SgeList &l, u64 offset, u8 *dst, u32 len) {
	return walk(dev, l, offset, len, 0, [&](const KeyRef &ref, u32 n, u32 done) {
		return ref.copy_from(dst + done, n);
	});
}

ktl::Result<void> sge_scatter(Device &dev, const SgeList &l, u64 offset, const u8 *src, u32 len) {
	return walk(dev, l, offset, len, ib::access::local_write, [&](const KeyRef &ref, u32 n, u32 done) {
		return ref.copy_to(src + done, n);
	});
}

ktl::Result<void> sge_scatter_pkt(Device &dev, const SgeList &l, u64 offset, sroce_env_pkt *pkt, u32 pkt_off,
				  u32 len) {
	return walk(dev, l, offset, len, ib::access::local_write, [&](const KeyRef &ref, u32 n, u32 done) {
		u32 at = pkt_off + done;
		return ref.for_each_chunk(n, [&](u8 *kva, u32 c) -> ktl::Result<void> {
			int rc = sroce_env_pkt_read(pkt, at, kva, c);
			at += c;
			return ktl::from_rc(rc);
		});
	});
}

} // namespace sroce

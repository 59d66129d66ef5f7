// Copies between a WQE's local SGE list and flat memory or a received
// packet. Every SGE is checked through the key table (lkey, PD, bounds,
// and LOCAL_WRITE where memory is written), per call, so a deregistered MR
// is never touched: looked up, or through the list's cache (key_cache.h).
// Errors: -EMSGSIZE when the SGEs are too short (LOC_LEN_ERR), anything
// else from the key table (LOC_PROT_ERR).
#pragma once
#include "abi.h"
#include "device.h"
#include "key_cache.h"
#include "mw_layout.h"

struct sroce_env_pkt;

namespace sroce {

struct SgeList {
	const sroce_sge *sge;
	u32 num;
	u32 pdn;
	KeyCache *cache = nullptr; // the user's (key_cache.h), or a look-up per SGE
};

// Walks the SGEs covering [offset, offset + len) and calls
// fn(ref, chunk_len, done) for each piece, ref being what the SGE's key
// resolved to at the piece's start (an MR, or a window: seed 003's lkey),
// with the rights in access. Stops at fn's first error.
template <typename Fn>
ktl::Result<void> sge_walk(Device &dev, const SgeList &l, u64 offset, u32 len, u32 access, Fn fn) {
	u32 done = 0;
	for (u32 i = 0; i < l.num && done < len; i++) {
		const sroce_sge &s = l.sge[i];
		if (offset >= s.length) {
			offset -= s.length;
			continue;
		}
		u32 n = u32(ktl::min(u64(s.length) - offset, u64(len - done)));
		KeyRef own;
		const KeyRef *ref = &own;
		if (l.cache)
			ref = TRY(l.cache->lkey(dev.keys(), s.lkey, l.pdn, s.addr + offset, n, access));
		else
			own = TRY(dev.keys().lookup_lkey(s.lkey, l.pdn, s.addr + offset, n, access));
		TRY(fn(*ref, n, done));
		done += n;
		offset = 0;
	}
	if (done < len)
		return ktl::Error::from_errno(ktl::err::msgsize);
	return {};
}

// Total bytes of the list; -EMSGSIZE above 2^31 (the port's max message).
ktl::Result<u64> sge_total(const SgeList &l);
// MR memory at [offset, offset + len) of the list -> dst.
ktl::Result<void> sge_gather(Device &dev, const SgeList &l, u64 offset, u8 *dst, u32 len);
// src -> MR memory at [offset, offset + len) of the list.
ktl::Result<void> sge_scatter(Device &dev, const SgeList &l, u64 offset, const u8 *src, u32 len);
// Packet bytes [pkt_off, pkt_off + len) -> MR memory at offset of the list.
ktl::Result<void> sge_scatter_pkt(Device &dev, const SgeList &l, u64 offset, sroce_env_pkt *pkt, u32 pkt_off,
				  u32 len);

} // namespace sroce

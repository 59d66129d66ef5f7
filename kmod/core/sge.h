// Copies between a WQE's local SGE list and flat memory or a received
// packet. Every SGE is checked through the key table (lkey, PD, bounds,
// and LOCAL_WRITE where memory is written), per call, so a deregistered MR
// is never touched. Errors: -EMSGSIZE when the SGEs are too short
// (LOC_LEN_ERR), anything else from the key table (LOC_PROT_ERR).
#pragma once
#include "abi.h"
#include "device.h"

struct sroce_env_pkt;

namespace sroce {

struct SgeList {
	const sroce_sge *sge;
	u32 num;
	u32 pdn;
};

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

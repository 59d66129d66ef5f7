// Counter blocks: one per device, behind `rdma statistic show link` (the
// glue copies them into ib_core's rdma_hw_stats), and one per QP, behind
// `rdma statistic qp` (the glue sums the QPs bound to an ib_core counter).
// A QP counts what is attributable to it: its packets and bytes, its
// retransmissions, timeouts and NAKs, its duplicate and out-of-sequence
// requests; packets dropped before a QP is found count on the device only.
// Relaxed atomics: each counter is exact, a read of the block is not a
// consistent snapshot.
#pragma once
#include "core.h"
#include "env.h"
#include "ktl/atomic.h"
#include "packet.h"

namespace sroce {

class CounterBlock {
public:
	void inc(sroce_core_counter id, u64 n = 1) { c_[id].fetch_add(n, ktl::MemoryOrder::relaxed); }
	u64 get(sroce_core_counter id) const { return c_[id].load(ktl::MemoryOrder::relaxed); }
	// Copies up to n values, in enum order; returns how many.
	u32 read(u64 *out, u32 n) const {
		u32 k = n < SROCE_CNT_MAX ? n : u32(SROCE_CNT_MAX);
		for (u32 i = 0; i < k; i++)
			out[i] = c_[i].load(ktl::MemoryOrder::relaxed);
		return k;
	}

private:
	ktl::Atomic<u64> c_[SROCE_CNT_MAX];
};

// The device's block, one shard per CPU: every packet counts on its
// device, and with one block the CPUs' increments pulled one cache line back
// and forth. An increment stays atomic (the caller may move to another CPU
// after sroce_env_cpu, and process and softirq context share a shard); a
// read sums the shards, each counter exact, the sum no snapshot (as above).
class ShardedCounterBlock : ktl::NonCopyable {
public:
	ShardedCounterBlock() = default;
	~ShardedCounterBlock() { sroce_env_free(mem_); }
	// Before any other call; process context.
	ktl::Result<void> init();
	void inc(sroce_core_counter id, u64 n = 1) { shards_[sroce_env_cpu() & mask_].b.inc(id, n); }
	u64 get(sroce_core_counter id) const;
	u32 read(u64 *out, u32 n) const;
	// The device's packets in flight (allocated by the core, not yet sent
	// or freed): every sent packet adds and takes one, so a shared count
	// was another line every CPU wrote per packet. A packet may end on
	// another CPU than it began: a shard wraps, the sum does not.
	void in_flight_add(u64 n) { shards_[sroce_env_cpu() & mask_].in_flight.fetch_add(n, ktl::MemoryOrder::relaxed); }
	void in_flight_sub(u64 n) { shards_[sroce_env_cpu() & mask_].in_flight.fetch_sub(n, ktl::MemoryOrder::relaxed); }
	u64 in_flight() const;
	// Where cpu's shard is (host tests check the layout).
	const void *shard_of(u32 cpu) const { return &shards_[cpu & mask_]; }
	static constexpr usize line = 64;

private:
	struct Shard {
		CounterBlock b;
		ktl::Atomic<u64> in_flight;
		// a shard ends where a line does
		u8 pad[(line - (sizeof(CounterBlock) + sizeof(ktl::Atomic<u64>)) % line) % line];
	};
	static_assert(sizeof(Shard) % line == 0, "shards do not share lines");
	void *mem_ = nullptr;     // the allocation, shards_ aligned to a line in it
	Shard *shards_ = nullptr; // [mask_ + 1]
	u32 mask_ = 0;
};

// The name ib_core shows for a counter (stable: scripts parse them).
const char *counter_name(u32 id);
// The NAK counter (sent or received) for an AETH; SROCE_CNT_MAX for an ACK
// or a reserved NAK code.
sroce_core_counter nak_counter(const ib::Aeth &a, bool sent);

} // namespace sroce

// Device: one sroce instance bound to one netdev. Owns the port, the limits
// and the object tables. PDs and user contexts hold a reference on it.
#pragma once
#include "core.h"
#include "counters.h"
#include "id_alloc.h"
#include "key_table.h"
#include "ktl/atomic.h"
#include "ktl/lock.h"
#include "ktl/refptr.h"
#include "object_table.h"
#include "port.h"
#include "sq_poller.h"

namespace sroce {

class Qp;
class Ah;
class Srq;
class Wq;

class Device;
// rx.cpp: one received packet (consumed). steered: back from the env's
// steering, for the QP steered_to (a connected QP's, else null).
void rx_packet(Device &dev, sroce_env_pkt *pkt, sroce_env_batch *b, bool steered, Qp *steered_to = nullptr);

// A count of live objects with a ceiling: creation takes a slot or fails.
class BoundedCount {
public:
	// User objects stop reserve short of max (param::reserve).
	bool try_get(u64 max, u64 reserve, bool user) { return try_get(ceiling(max, reserve, user)); }
	static constexpr u64 ceiling(u64 max, u64 reserve, bool user) { return user ? max - reserve : max; }
	bool try_get(u64 max) {
		u64 cur = n_.load(ktl::MemoryOrder::relaxed);
		do {
			if (cur >= max)
				return false;
		} while (!n_.compare_exchange(cur, cur + 1, ktl::MemoryOrder::relaxed, ktl::MemoryOrder::relaxed));
		return true;
	}
	void put() {
		u64 old = n_.fetch_sub(1, ktl::MemoryOrder::relaxed);
		KTL_WARN_ON(old == 0);
	}
	u64 get() const { return n_.load(ktl::MemoryOrder::relaxed); }

private:
	ktl::Atomic<u64> n_;
};

// Makes a T that holds one slot of `count` (ceiling `max`): the slot is
// taken first and given back if the allocation fails; after that T's
// destructor gives it back. `full` is the errno once the ceiling is reached.
template <typename T, typename... A>
ktl::Result<ktl::RefPtr<T>> create_counted(BoundedCount &count, u64 max, int full, ktl::AllocCtx ctx, A &&...args) {
	if (!count.try_get(max))
		return ktl::Error::from_errno(full);
	auto obj = ktl::make_ref<T>(ctx, ktl::forward<A>(args)...);
	if (obj.is_error())
		count.put();
	return obj;
}

// Live objects per device, readable by tests (debugfs) so leaks show.
struct DeviceCounts {
	BoundedCount ucontexts;
	BoundedCount qps;
	BoundedCount cqs;
	BoundedCount srqs;
	BoundedCount wqs;
	BoundedCount ind_tables;
	BoundedCount qpn_blocks;
	BoundedCount mrs;
	BoundedCount mws;
	BoundedCount ahs;
	ktl::Atomic<u64> pinned_pages;
	// (packets in flight: ShardedCounterBlock::in_flight)
};

// Modified EUI-64 node GUID from the netdev MAC, big-endian.
u64 guid_from_mac(const u8 mac[6]);

class Device : public ktl::RefCounted<Device> {
public:
	static ktl::Result<ktl::RefPtr<Device>> create(const sroce_core_dev_init &init);

	void query_port(sroce_core_port_attr *attr);
	sroce_core_port_event netdev_changed(bool up, u32 mtu);

	u64 generation() const { return generation_; }
	IdAllocator &pd_ids() { return pd_ids_; }
	MemoryKeyTable &keys() { return keys_; }
	// An MR with npages pinned pages came (true) or went (false).
	void count_mr(u64 npages, bool add);
	IdAllocator &xrcd_ids() { return xrcd_ids_; }
	// WQN -> Wq: an RSS QP finds its default WQ by number (ind_table.h).
	ObjectTable<Wq> &wqs() { return wqs_; }
	// SRQN -> Srq: an XRC target finds a message's SRQ by the number in
	// its XRCETH. 0 is never an SRQN, so an unset one matches nothing.
	ObjectTable<Srq> &srqs() { return srqs_; }
	ObjectTable<Qp> &qps() { return qps_; }
	ObjectTable<Ah> &ahs() { return ahs_; }
	// The active IB MTU (enum ib_mtu) of the port.
	u32 active_mtu();
	// Payloads from this many bytes go out zero-copy (tx.cpp); 0: never.
	u32 zero_copy_min() const { return zero_copy_min_; }

	// Its own poller, or the shared one it joined (core.h).
	SqPoller &sq_poller() { return *sq_poller_; }
	// Stops the device's threads (process context, before the last unref);
	// a shared poller's is the glue's to stop, and is only waited for.
	void shutdown() {
		own_poller_.stop();
		if (sq_poller_ != &own_poller_)
			sq_poller_->sync();
	}

	DeviceCounts &counts() { return counts_; }
	ShardedCounterBlock &counters() { return counters_; }
	void fill_counts(sroce_core_counts *c) const;

private:
	friend class ktl::RefCounted<Device>;
	template <typename T, typename... A> friend T *ktl::create(ktl::AllocCtx, A &&...);
	template <typename T> friend void ktl::destroy(T *);
	Device() = default;
	~Device() = default;
	ktl::Result<void> init(const sroce_core_dev_init &init);

	u64 generation_ = 0;
	u32 zero_copy_min_ = 0;
	ktl::SpinLock port_lock_{SROCE_LOCK_PORT};
	Port port_; // guarded by port_lock_
	IdAllocator pd_ids_;
	MemoryKeyTable keys_;
	IdAllocator xrcd_ids_;
	ObjectTable<Wq> wqs_;
	ObjectTable<Srq> srqs_;
	ObjectTable<Qp> qps_;
	ObjectTable<Ah> ahs_;
	DeviceCounts counts_;
	ShardedCounterBlock counters_;
	SqPoller own_poller_;
	SqPoller *sq_poller_ = &own_poller_;
};

// Starts p's thread named name (may be unterminated; empty: "sroce_sqpoll")
// on cpu (-1: anywhere allowed), with the module's microsecond settings.
ktl::Result<void> start_poller(SqPoller &p, const char (&name)[16], u32 idle_us, u32 yield_us, int cpu);

// Makes a T numbered from `ids` (T(dev, number)): the number goes back if
// the allocation fails, and in T's destructor after that.
template <typename T> ktl::Result<ktl::RefPtr<T>> create_numbered(IdAllocator &ids, Device &dev) {
	u32 n = TRY(ids.alloc());
	auto obj = ktl::make_ref<T>(ktl::AllocCtx::may_sleep, dev, n);
	if (obj.is_error())
		ids.free(n);
	return obj;
}

} // namespace sroce

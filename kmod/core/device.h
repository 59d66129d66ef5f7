// Device: one sroce instance bound to one netdev. Owns the port, the limits
// and the object tables. PDs and user contexts hold a reference on it.
#pragma once
#include "core.h"
#include "id_alloc.h"
#include "key_table.h"
#include "ktl/atomic.h"
#include "ktl/lock.h"
#include "ktl/refptr.h"
#include "port.h"

namespace sroce {

// Modified EUI-64 node GUID from the netdev MAC, big-endian.
u64 guid_from_mac(const u8 mac[6]);

class Device : public ktl::RefCounted<Device> {
public:
	static ktl::Result<ktl::RefPtr<Device>> create(const sroce_core_dev_init &init);

	void query(sroce_core_dev_attr *attr) const;
	void query_port(sroce_core_port_attr *attr);
	sroce_core_port_event netdev_changed(bool up, u32 mtu);

	u64 node_guid() const { return node_guid_; }
	u64 generation() const { return generation_; }
	IdAllocator &pd_ids() { return pd_ids_; }
	MemoryKeyTable &keys() { return keys_; }

	// Object counts for leak checks (sroce_core_dev_counts).
	void counts(sroce_core_counts *c) const;
	// An MR with npages pinned pages came (true) or went (false).
	void count_mr(u64 npages, bool add);

	// Bounded count of user contexts; false when at the limit.
	bool get_ucontext_slot();
	void put_ucontext_slot();

private:
	friend class ktl::RefCounted<Device>;
	template <typename T, typename... A> friend T *ktl::create(ktl::AllocCtx, A &&...);
	template <typename T> friend void ktl::destroy(T *);
	Device() = default;
	~Device() = default;
	ktl::Result<void> init(const sroce_core_dev_init &init);

	u64 node_guid_ = 0;
	u64 generation_ = 0;
	ktl::SpinLock port_lock_;
	Port port_; // guarded by port_lock_
	IdAllocator pd_ids_;
	MemoryKeyTable keys_;
	ktl::Atomic<u32> ucontexts_;
	ktl::Atomic<u64> mrs_;
	ktl::Atomic<u64> pinned_pages_;
};

} // namespace sroce

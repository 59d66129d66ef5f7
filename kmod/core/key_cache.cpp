// A QP's cached MR between packets (key_cache.h).
#include "key_cache.h"
#include "mr.h"

namespace sroce {

template <typename Lookup>
ktl::Result<const KeyRef *> KeyCache::get(const MemoryKeyTable &keys, u32 key, u32 pdn, u64 addr, u64 len, u32 need,
					  Lookup lookup) {
	if (key_ && key_ == key && keys.names_mr_rcu(key, *ref_.mr)) {
		TRY(ref_.mr->check(pdn, addr, len, need));
		ref_.addr = addr;
		return &ref_;
	}
	drop();
	ref_ = TRY(lookup());
	// A window's key resolves to its MR (or layout), which the key does
	// not name: answered, not kept.
	if (!ref_.layout && keys.names_mr_rcu(key, *ref_.mr))
		key_ = key;
	return &ref_;
}

ktl::Result<const KeyRef *> KeyCache::lkey(const MemoryKeyTable &keys, u32 lkey, u32 pdn, u64 addr, u64 len,
					   u32 need) {
	return get(keys, lkey, pdn, addr, len, need, [&] { return keys.lookup_lkey(lkey, pdn, addr, len, need); });
}

ktl::Result<const KeyRef *> KeyCache::rkey(const MemoryKeyTable &keys, u32 rkey, u32 pdn, u32 qpn, u64 addr, u64 len,
					   u32 need) {
	return get(keys, rkey, pdn, addr, len, need,
		   [&] { return keys.lookup_rkey(rkey, pdn, qpn, addr, len, need); });
}

} // namespace sroce

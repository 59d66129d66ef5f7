// KeyCache: the MR a QP's data path used last, kept between packets, so
// that a message takes one reference on its MR, not one per packet and SGE
// (issue 17 item 6; Documentation/research/key-cache.md).
//
// A hit takes no lock and writes no shared line: the key table still maps
// the key to the MR held (MemoryKeyTable::names_mr_rcu: valid, the same
// key, the same MR), and the MR's own checks (PD, rights, bounds) run on
// every use. Only a plain MR is kept: its bounds and rights never change,
// and a deregistration or a freed and reused index shows in the table at
// the next use, as with a fresh look-up. Windows and fast-registration MRs
// are looked up every time (their bounds change under the table's lock).
//
// The reference pins the MR's pages until the cache lets go. The QP drops
// all its caches before it posts any CQE (post_cqe_locked,
// post_recv_cqe_locked: an owner that polls and deregisters finds the MR
// released at once, as before), and the responder's when a message ends,
// the READ responder's when its responses are sent, and all at flush,
// reset and destroy. So an MR deregistered while a message uses it stays
// pinned until that message's next packet, its end or error, or the QP's
// reset or destroy: a peer that stops in the middle of a message keeps it
// so (siw's per-WQE references do the same). Under the QP's lock, like the
// state it serves.
#pragma once
#include "key_table.h"
#include "mw_layout.h"

namespace sroce {

class KeyCache : ktl::NonCopyable {
public:
	KeyCache() = default;
	// MemoryKeyTable::lookup_lkey / lookup_rkey, with their errors; the
	// answer is valid until the next call or drop(). The caller is in a
	// batch (RCU), as for those.
	ktl::Result<const KeyRef *> lkey(const MemoryKeyTable &keys, u32 lkey, u32 pdn, u64 addr, u64 len, u32 need);
	ktl::Result<const KeyRef *> rkey(const MemoryKeyTable &keys, u32 rkey, u32 pdn, u32 qpn, u64 addr, u64 len,
					 u32 need);
	void drop() {
		key_ = 0;
		ref_ = KeyRef{};
	}

private:
	template <typename Lookup>
	ktl::Result<const KeyRef *> get(const MemoryKeyTable &keys, u32 key, u32 pdn, u64 addr, u64 len, u32 need,
					Lookup lookup);
	KeyRef ref_{};
	u32 key_ = 0; // what ref_.mr is cached for; 0 (never a key): nothing
};

// A QP's caches, one per user of keys (qp.h).
struct QpKeyCaches {
	KeyCache send;       // requester: request payloads from the WQE's SGEs
	KeyCache read_place; // completer: READ responses into the WQE's SGEs
	KeyCache recv;       // responder: a SEND into its receive WQE, a WRITE's rkey
	KeyCache read_resp;  // responder: READ responses from the rkey
	void drop_all() {
		send.drop();
		read_place.drop();
		recv.drop();
		read_resp.drop();
	}
};

} // namespace sroce

// ObjectTable's lock-free look-up (issue 17 item 6): the receive path finds
// a QP by number without the table's lock, inside an RCU read-side section,
// so a QP's memory must outlive the readers that may still hold its
// pointer: RcuFreed objects are freed a grace period after their last
// reference (env.h sroce_env_free_rcu; the host's grace period is
// env_host::rcu_barrier).
#include <catch2/catch.hpp>

#include "env_host.h"
#include "ib_enums.h"
#include "object_table.h"
#include "transport_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {
struct Obj : ktl::RefCounted<Obj>, ktl::RcuFreed {
	int value = 7;
};
} // namespace

TEST_CASE("object table: a reader that found an object as it dies takes no reference",
	  "[core][object-table][rcu]") {
	long base = env_host::live_allocations();
	{
		sroce::ObjectTable<Obj> t;
		REQUIRE(!t.init(1, 15).is_error());
		Obj *o = ktl::create<Obj>(ktl::AllocCtx::may_sleep);
		REQUIRE(o);
		u32 id = t.insert(o).value();
		CHECK(!t.lookup_rcu(0));
		CHECK(!t.lookup_rcu(16));
		CHECK(!t.lookup_rcu(~0u));

		// A reader holds the pointer it loaded (here: from a look-up whose
		// reference it has dropped again) while the owner destroys the object.
		Obj *seen = t.lookup_rcu(id).get();
		REQUIRE(seen == o);
		CHECK(o->ref_count() == 1);
		t.remove(id, o);
		CHECK(!t.lookup_rcu(id));
		size_t pending = env_host::rcu_pending();
		o->unref(); // the last: destroyed, its memory waits for the grace period
		CHECK(env_host::rcu_pending() == pending + 1);
		// Still readable (under ASan, freed memory is not): the count is 0.
		CHECK(!seen->try_ref());
		CHECK(seen->ref_count() == 0);
		env_host::rcu_barrier();
		CHECK(env_host::rcu_pending() == 0);
	}
	CHECK(env_host::live_allocations() == base);
}

TEST_CASE("object table: a received packet finds its QP without the table's lock",
	  "[transport][rc][object-table][rcu]") {
	Fixture f(5);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	constexpr unsigned int len = 16 * 1024;
	Buffer &la = f.buffer(a, len, all_access);
	Buffer &rb = f.buffer(b, len, all_access);
	unsigned long before = env_host::locks_taken(SROCE_LOCK_OBJECT_TABLE);
	auto w = wqe(1, ib::wr_rdma_write, 1);
	w.rdma.remote_addr = iova_of(b, rb);
	w.rdma.rkey = f.lkey(rb);
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, len)}) == 0);
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(ca[0].status == ib::wc_success);
	CHECK(std::memcmp(la.data, rb.data, len) == 0);
	// 16 requests and their ACKs were received: none took the lock.
	CHECK(env_host::locks_taken(SROCE_LOCK_OBJECT_TABLE) == before);
}

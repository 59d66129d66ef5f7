// A modify to RESET (IBTA 10.3.1) empties both queues with no completions.
// Before it did, the send queue restarted at its oldest uncompleted WQE, so
// a WQE sent but not yet acknowledged went on the wire again at the next
// RTS, and receives posted before the RESET took messages after it.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "ib_enums.h"
#include "transport_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {
struct Pair {
	Fixture f;
	Node &a, &b;
	Qp &qa, &qb;
	Buffer &src, &dst;
	explicit Pair(uint64_t seed)
		: f(seed), a(f.node(0)), b(f.node(1)), qa(f.qp(a, ib::qpt_rc, 8)), qb(f.qp(b, ib::qpt_rc, 8)),
		  src(f.buffer(a, 4096, all_access)), dst(f.buffer(b, 4096, all_access)) {
		f.connect(qa, qb, ib::mtu_1024);
	}
	void send(uint64_t id) { REQUIRE(f.post_send(qa, wqe(id, ib::wr_send, 1), {sge_of(f, a, src, 0, 64)}) == 0); }
	void recv(uint64_t id) { REQUIRE(f.post_recv(qb, id, {sge_of(f, b, dst, 0, 64)}) == 0); }
	void reset_and_reconnect() {
		REQUIRE(f.modify_state(qa, ib::qps_reset) == 0);
		REQUIRE(f.modify_state(qb, ib::qps_reset) == 0);
		f.connect(qa, qb, ib::mtu_1024, 1000, 1000);
	}
};
} // namespace

TEST_CASE("RESET discards sent WQEs: nothing goes on the wire again at the next RTS", "[transport][reset]") {
	Pair p(41);
	p.recv(100);
	p.recv(101);
	// b receives both SENDs, and its ACKs are lost.
	p.f.sim().set_filter([](const sim::WirePacket &w) { return w.from != 1; });
	p.send(1);
	p.send(2);
	p.f.sim().run_for(100000);
	std::vector<sroce_cqe> cb;
	REQUIRE(p.f.wait_cqes(p.b, 2, cb));
	REQUIRE(p.f.poll(p.a).empty());
	p.f.sim().set_filter(nullptr);

	p.reset_and_reconnect();
	int from_a = 0;
	p.f.sim().set_tap([&from_a](const sim::WirePacket &w) { from_a += w.from == 0; });
	p.f.sim().run_for(50000000); // past the retry timeout
	CHECK(from_a == 0);
	CHECK(p.f.poll(p.a).empty()); // discarded, not completed
	CHECK(p.f.poll(p.b).empty());

	// The queue goes on from where it is: every slot free, a new SEND
	// completes once.
	for (uint64_t i = 0; i < 8; i++)
		p.recv(200 + i);
	for (uint64_t i = 0; i < 8; i++)
		p.send(10 + i);
	std::vector<sroce_cqe> ca;
	REQUIRE(p.f.wait_cqes(p.a, 8, ca));
	cb.clear();
	REQUIRE(p.f.wait_cqes(p.b, 8, cb));
	for (uint64_t i = 0; i < 8; i++) {
		CHECK(ca[i].wr_id == 10 + i);
		CHECK(ca[i].status == ib::wc_success);
		CHECK(cb[i].wr_id == 200 + i);
		CHECK(cb[i].status == ib::wc_success);
	}
	CHECK(Fixture::query(p.qa).qp_state == ib::qps_rts);
}

TEST_CASE("RESET discards posted receives", "[transport][reset]") {
	Pair p(42);
	p.recv(7);
	p.reset_and_reconnect();
	p.recv(8);
	p.send(1);
	std::vector<sroce_cqe> ca, cb;
	REQUIRE(p.f.wait_cqes(p.a, 1, ca));
	CHECK(ca[0].status == ib::wc_success);
	REQUIRE(p.f.wait_cqes(p.b, 1, cb));
	CHECK(cb[0].wr_id == 8);
	CHECK(cb[0].status == ib::wc_success);
	p.f.sim().run_for(1000000);
	CHECK(p.f.poll(p.b).empty()); // 7 never completes
}

TEST_CASE("RESET forgets READ responses received beyond a gap", "[transport][reset]") {
	Pair p(43);
	Buffer &la = p.f.buffer(p.a, 4096, all_access), &rb = p.f.buffer(p.b, 4096, all_access);
	// Of the READ's four responses the first is lost, two arrive beyond
	// the gap (too few to ask for it again), then nothing more from b.
	int n = 0;
	p.f.sim().set_filter([&n](const sim::WirePacket &w) {
		if (w.from != 1)
			return true;
		n++;
		return n > 1 && n <= 3;
	});
	auto r = rdma_wqe(1, ib::wr_rdma_read, iova_of(p.b, rb), p.f.lkey(rb));
	REQUIRE(p.f.post_send(p.qa, r, {sge_of(p.f, p.a, la, 0, 4096)}) == 0);
	p.f.sim().run_for(1000000);
	REQUIRE(n == 4);
	p.f.sim().set_filter(nullptr);

	p.reset_and_reconnect();
	std::memset(la.data, 0, 4096);
	r.wr_id = 2;
	REQUIRE(p.f.post_send(p.qa, r, {sge_of(p.f, p.a, la, 0, 4096)}) == 0);
	std::vector<sroce_cqe> ca;
	REQUIRE(p.f.wait_cqes(p.a, 1, ca));
	CHECK(ca[0].wr_id == 2);
	CHECK(ca[0].status == ib::wc_success);
	CHECK(std::memcmp(la.data, rb.data, 4096) == 0);
}

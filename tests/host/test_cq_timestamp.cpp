// Completion timestamps: a CQ created with them stamps every CQE with the
// device clock (sroce_env_now_ns) when it is posted; a CQ without them
// leaves the field zero, as before.
#include <catch2/catch.hpp>

#include "ib_enums.h"
#include "transport_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

TEST_CASE("cq: a CQ with timestamps stamps each CQE with the device clock", "[cq][timestamp]") {
	Fixture f(11);
	Node &a = f.node(0), &b = f.node(1);
	f.timestamp_cq(b);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	constexpr unsigned int acc = ib::access::local_write;
	Buffer &src = f.buffer(a, 8192, acc);
	Buffer &dst = f.buffer(b, 8192, acc);
	unsigned long long last = 0;
	for (unsigned int i = 0; i < 20; i++) {
		CAPTURE(i);
		REQUIRE(f.post_recv(qb, i, {sge_of(f, b, dst, 0, 8192)}) == 0);
		unsigned long long before = sroce_env_now_ns();
		REQUIRE(f.post_send(qa, wqe(i, ib::wr_send, 1), {sge_of(f, a, src, 0, 100 * i)}) == 0);
		std::vector<sroce_cqe> ca, cb;
		REQUIRE(f.wait_cqes(b, 1, cb));
		REQUIRE(f.wait_cqes(a, 1, ca));
		unsigned long long after = sroce_env_now_ns();
		CHECK(cb[0].status == ib::wc_success);
		CHECK(cb[0].timestamp >= before);
		CHECK(cb[0].timestamp <= after);
		CHECK(cb[0].timestamp >= last); // monotonic per CQ
		last = cb[0].timestamp;
		CHECK(ca[0].timestamp == 0); // a's CQ has none
	}
	CHECK(last > 0);
}

// The responder's READ/ATOMIC replay slots (kmod/core/read_atomic.cpp):
// which kept request a duplicate is answered from after max_dest_rd_atomic
// changed in SQD. After the PSN space wrapped: long_psn_wrap.cpp.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "ib_enums.h"
#include "transport_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {

constexpr unsigned int bth_at = 28; // IPv4 + UDP

} // namespace

TEST_CASE("responder: max_dest_rd_atomic lowered in SQD still answers the last READ again",
	  "[transport][review][read]") {
	Fixture f(61);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024, 0, 0, 10, 7, 7, 4);
	Buffer &la = f.buffer(a, 4096, all_access);
	Buffer &rb = f.buffer(b, 4096, all_access);
	for (unsigned int i = 0; i < 4096; i++)
		rb.data[i] = u8(i * 7 + 1);
	for (uint64_t id = 1; id <= 2; id++)
		REQUIRE(complete_one(f, qa, rdma_wqe(id, ib::wr_rdma_read, iova_of(b, rb), f.lkey(rb)),
				     {sge_of(f, a, la, 0, 64)})
				.status == ib::wc_success);

	// The third READ's response is lost once.
	bool dropped = false;
	f.sim().set_filter([&](const sim::WirePacket &p) {
		if (dropped || p.from != b.id || p.len <= bth_at || p.data[bth_at] != ib::op::read_response_only)
			return true;
		dropped = true;
		return false;
	});
	REQUIRE(f.post_send(qa, rdma_wqe(3, ib::wr_rdma_read, iova_of(b, rb) + 64, f.lkey(rb)),
			    {sge_of(f, a, la, 64, 64)}) == 0);
	for (int i = 0; i < 100000 && !dropped; i++)
		f.sim().run_for(1000);
	REQUIRE(dropped);
	REQUIRE(f.modify_state(qb, ib::qps_sqd) == 0);
	sroce_core_qp_attr at{};
	at.qp_state = ib::qps_sqd;
	at.max_dest_rd_atomic = 2;
	int rc = -1;
	f.sim().call([&](sroce_env_batch *bt) {
		rc = sroce_core_qp_modify(qb.qp, &at, ib::attr_state | ib::attr_max_dest_rd_atomic, bt);
	});
	REQUIRE(rc == 0);

	// Asked for again, it is the newest kept request: answered.
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(ca[0].wr_id == 3);
	CHECK(ca[0].status == ib::wc_success);
	CHECK(std::memcmp(la.data + 64, rb.data + 64, 64) == 0);
}

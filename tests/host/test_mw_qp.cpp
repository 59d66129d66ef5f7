// A type 2 window is its QP's (type 2B, mw.h): another QP of its PD can
// neither invalidate it (LOCAL_INV, a SEND with invalidate, also into a
// multi-packet RQ) nor reach it through a layout window (no layout takes
// it); and it ends with its QP, before a new QP may get that QP's number.
#include <catch2/catch.hpp>

#include "env_host.h"
#include "mw_fixture.h"
#include "param.h"

using namespace tfx;
using namespace mwfx;
namespace ib = sroce::ib;

namespace {
// Node b's MR and a type 2 window of it that qb1 binds; qa1-qb1 and
// qa2-qb2 are two connections between the same nodes, the b ends in one PD.
struct TwoQps {
	Fixture f{97};
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa1 = f.qp(a, ib::qpt_rc), &qb1 = f.qp(b, ib::qpt_rc);
	Buffer &la = f.buffer(a, 4 * page, rw);
	Buffer &mr = f.buffer(b, 4 * page, bindable);
	uint64_t base = iova_of(b, mr);
	Window w{b, 2};
	unsigned int k = next_key(w.key());
	TwoQps() {
		f.connect(qa1, qb1, ib::mtu_1024);
		sroce_wqe bw = bind(1, k, f.lkey(mr), base, 2 * page, ib::access::remote_write | ib::access::local_write,
				    false);
		REQUIRE(complete_one(f, qb1, bw).status == ib::wc_success);
	}
	// A second connection; its b end multi-packet (a buffer of 8 KiB) if asked.
	std::pair<Qp *, Qp *> second(bool mp = false) {
		Qp &qa2 = f.qp(a, ib::qpt_rc);
		Qp &qb2 = mp ? f.qp_mp(b, ib::qpt_rc, 8192, 512) : f.qp(b, ib::qpt_rc);
		f.connect(qa2, qb2, ib::mtu_1024);
		return {&qa2, &qb2};
	}
	int write(Qp &q, uint64_t wr_id, unsigned int len = 64) {
		return complete_one(f, q, rdma_wqe(wr_id, ib::wr_rdma_write, base + 16, k), {sge_of(f, a, la, 0, len)})
			.status;
	}
};

// Creates and destroys QPs on n until the next QP n makes gets number qpn:
// QPNs are handed out next-fit, so that takes a round of the QPN space.
void advance_qpn_to(Node &n, unsigned int qpn) {
	unsigned int stride = sroce_core_wqe_stride(1, 0);
	Ring sq, rq;
	sq.mem = alloc_ring(1, 16384, stride, &sq.log_size);
	rq.mem = alloc_ring(1, 16384, stride, &rq.log_size);
	int owner = 0;
	sroce_core_qp_init qi{};
	qi.owner = &owner;
	qi.qp_type = ib::qpt_rc;
	qi.port = 1;
	qi.pd = n.pd;
	qi.send_cq = qi.recv_cq = n.cq;
	qi.max_send_sge = qi.max_recv_sge = 1;
	qi.sq_ring = sq.mem;
	qi.sq_log_size = sq.log_size;
	qi.rq_ring = rq.mem;
	qi.rq_log_size = rq.log_size;
	qi.sq_stride = qi.rq_stride = stride;
	namespace param = sroce::param;
	for (unsigned int i = 0; i < 2 * param::max_qp; i++) {
		sroce_core_qp *q = nullptr;
		if (sroce_core_qp_create(n.dev, &qi, &q) != 0)
			FAIL("QP creation failed");
		unsigned int got = sroce_core_qp_number(q);
		sroce_core_qp_destroy(q);
		if (i % 1024 == 0)
			env_host::rcu_barrier();
		if (got + 1 == qpn || (got == param::max_qp - 1 && qpn == param::first_qpn))
			return;
	}
	FAIL("QPN " << qpn << " never came round");
}
} // namespace

TEST_CASE("mw qp: a SEND with invalidate on another QP of the PD leaves a type 2 window bound", "[mw][hostile]") {
	for (int mp = 0; mp < 2; mp++) {
		DYNAMIC_SECTION((mp ? "multi-packet RQ" : "plain RQ")) {
			TwoQps t;
			auto [qa2, qb2] = t.second(mp);
			Buffer &dst = t.f.buffer(t.b, 8192, rw);
			REQUIRE(t.f.post_recv(*qb2, 7, {sge_of(t.f, t.b, dst, 0, mp ? 8192 : 64)}) == 0);
			// The invalid request NAK completes the sender in error.
			sroce_cqe c = complete_one(t.f, *qa2, keyed(2, ib::wr_send_inv, t.k, 1), {sge_of(t.f, t.a, t.la, 0, 64)});
			CHECK(c.status == ib::wc_rem_inv_req_err);
			std::vector<sroce_cqe> cb;
			REQUIRE(t.f.wait_cqes(t.b, 1, cb));
			CHECK(cb[0].wr_id == 7);
			CHECK(cb[0].status == ib::wc_rem_inv_req_err);
			CHECK(device_counter(t.b, SROCE_CNT_REMOTE_INVS) == 0);
			// Still bound, and still its QP's.
			CHECK(t.write(t.qa1, 3) == ib::wc_success);
			CHECK(std::memcmp(t.mr.data + 16, t.la.data, 64) == 0);
		}
	}
}

TEST_CASE("mw qp: LOCAL_INV of a type 2 window from another QP of the PD fails", "[mw][hostile]") {
	TwoQps t;
	auto qb2 = t.second().second;
	sroce_cqe c = complete_one(t.f, *qb2, keyed(2, ib::wr_local_inv, t.k, 0));
	CHECK(c.status == ib::wc_loc_qp_op_err);
	CHECK(device_counter(t.b, SROCE_CNT_LOCAL_INVS) == 0);
	CHECK(t.write(t.qa1, 3) == ib::wc_success);
	// Its own QP still may.
	REQUIRE(complete_one(t.f, t.qb1, keyed(4, ib::wr_local_inv, t.k, 0)).status == ib::wc_success);
	CHECK(t.write(t.qa1, 5) == ib::wc_rem_access_err);
}

TEST_CASE("mw qp: a layout cannot include a type 2 window", "[mw][layout][hostile]") {
	// Else a layout window bound by qb2 would pass the window's memory on
	// to qa2.
	TwoQps t;
	Qp &qb2 = *t.second().second;
	for (unsigned int type : {1u, 2u}) {
		Window lw(t.b, type, 16);
		sroce_mw_layout_req req{0, SROCE_MW_LAYOUT_COMPOSITE, 1, ib::access::remote_write, 0};
		sroce_mw_layout_entry e{t.base, 64, SROCE_MW_ENTRY_MW, t.k, 0, 0};
		sroce_mw_layout_resp resp{};
		CHECK(sroce_core_mw_stage_layout(lw.mw, &req, &e, nullptr, 0, &resp) == -EINVAL);
		// An MR of the same memory is a member like any.
		e = {t.base, 64, SROCE_MW_ENTRY_MR, t.f.lkey(t.mr), 0, 0};
		REQUIRE(sroce_core_mw_stage_layout(lw.mw, &req, &e, nullptr, 0, &resp) == 0);
		sroce_wqe bw = bind(1, next_key(lw.key()), 0, 0, 64, ib::access::remote_write, type == 1);
		bw.reg.layout = resp.handle;
		CHECK(complete_one(t.f, qb2, bw).status == ib::wc_success);
	}
}

TEST_CASE("mw qp: destroying its QP invalidates a type 2 window; a new QP with that number cannot reach it",
	  "[mw][hostile]") {
	TwoQps t;
	unsigned int qpn = t.qb1.qpn;
	std::vector<unsigned char> before(t.mr.data, t.mr.data + t.mr.len);
	t.f.destroy_qp(t.qb1);
	// Unbound: it holds the MR no more.
	sroce_core_mr_view v{};
	sroce_core_mr_snapshot(t.mr.mr, &v);
	CHECK(v.windows == 0);
	// A QP that gets the number again, connected to a peer that knows the key.
	advance_qpn_to(t.b, qpn);
	auto [qa3, qb3] = t.second();
	REQUIRE(qb3->qpn == qpn);
	CHECK(t.write(*qa3, 3) == ib::wc_rem_access_err);
	CHECK(std::memcmp(before.data(), t.mr.data, t.mr.len) == 0);
	// The window binds again, through any QP of its PD.
	auto qb4 = t.second().second;
	unsigned int k2 = next_key(t.k);
	sroce_wqe bw = bind(4, k2, t.f.lkey(t.mr), t.base, page, ib::access::remote_write, false);
	CHECK(complete_one(t.f, *qb4, bw).status == ib::wc_success);
}

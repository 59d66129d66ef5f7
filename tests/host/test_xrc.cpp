// XRC (IBTA annex A14) on two simulated nodes: an initiator on node 0 sends
// through one target on node 1 into the XRC SRQs each request's XRCETH
// names. Receive completions land in that SRQ's CQ, memory keys are checked
// in that SRQ's PD, and a bad XRCETH and an empty SRQ each get what RC would
// give (faults and misuse: test_xrc_faults.cpp).
#include <catch2/catch.hpp>

#include <cerrno>

#include "device.h"
#include "ib_enums.h"
#include "srq.h"
#include "transport_fixture.h"
#include "xrc_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;
using namespace xrcfx;



TEST_CASE("xrc: domains and XRC SRQs are checked when made", "[xrc]") {
	Fixture f(1);
	Node &b = f.node(1);
	Domain d1(b.dev), d2(b.dev);
	CHECK(sroce_core_xrcd_number(d1.x) != 0);
	CHECK(sroce_core_xrcd_number(d1.x) != sroce_core_xrcd_number(d2.x));
	OwnCq cq(b.dev);
	unsigned int stride = sroce_core_wqe_stride(4, 0);
	tfx::Ring ring;
	ring.mem = ring_of(16, stride, &ring.log_size);
	sroce_core_srq_init si{};
	si.pd = b.pd;
	si.ring = ring.mem;
	si.log_size = ring.log_size;
	si.stride = stride;
	si.max_sge = 4;
	sroce_core_srq *srq = nullptr;
	si.xrcd = d1.x; // a domain without its CQ
	CHECK(sroce_core_srq_create(b.dev, &si, &srq) == -EINVAL);
	si.xrcd = nullptr; // a CQ without a domain
	si.cq = cq.cq;
	CHECK(sroce_core_srq_create(b.dev, &si, &srq) == -EINVAL);
	Domain other(f.node(0).dev); // another device's domain
	si.xrcd = other.x;
	CHECK(sroce_core_srq_create(b.dev, &si, &srq) == -EINVAL);
	si.xrcd = d1.x;
	REQUIRE(sroce_core_srq_create(b.dev, &si, &srq) == 0);
	auto &dev = *reinterpret_cast<sroce::Device *>(b.dev);
	unsigned int n = sroce_core_srq_number(srq);
	CHECK(n != 0);
	CHECK(dev.srqs().lookup(n).get() != nullptr);
	CHECK(dev.srqs().lookup(0).get() == nullptr);
	sroce_core_srq_destroy(srq);
	CHECK(dev.srqs().lookup(n).get() == nullptr); // out of the table at destroy

	// A target is its domain alone; an initiator has no receive side.
	sroce_core_qp_init ti{};
	ti.qp_type = ib::qpt_xrc_tgt;
	sroce_core_qp *q = nullptr;
	CHECK(sroce_core_qp_create(b.dev, &ti, &q) == -EINVAL);
	ti.xrcd = d1.x;
	ti.pd = b.pd;
	CHECK(sroce_core_qp_create(b.dev, &ti, &q) == -EINVAL);
	ti.pd = nullptr;
	ti.recv_cq = cq.cq;
	CHECK(sroce_core_qp_create(b.dev, &ti, &q) == -EINVAL);
	ti.recv_cq = nullptr;
	REQUIRE(sroce_core_qp_create(b.dev, &ti, &q) == 0);
	sroce_wqe w = wqe(1, ib::wr_send, 0);
	CHECK(sroce_core_qp_post_send(q, &w, nullptr, nullptr, 0) == -EINVAL); // no SQ
	w.opcode = SROCE_WQE_RECV;
	CHECK(sroce_core_qp_post_recv(q, &w, nullptr) == -EINVAL);           // no RQ
	f.sim().call([&](sroce_env_batch *bt) { sroce_core_qp_doorbell(q, bt); });
	sroce_core_qp_attr at{};
	sroce_core_qp_query(q, &at);
	CHECK(at.max_send_wr == 0);
	CHECK(at.max_recv_wr == 0);
	sroce_core_qp_view v{};
	sroce_core_qp_snapshot(q, &v);
	CHECK(v.xrcd == sroce_core_xrcd_number(d1.x)); // rdma res and debugfs show it
	CHECK(v.type == ib::qpt_xrc_tgt);
	sroce_core_qp_destroy(q);
	sroce_core_qp_init ii{};
	ii.qp_type = ib::qpt_xrc_ini;
	ii.pd = b.pd;
	ii.send_cq = b.cq;
	ii.recv_cq = b.cq;
	tfx::Ring sq;
	ii.sq_stride = sroce_core_wqe_stride(1, 0);
	ii.sq_ring = sq.mem = ring_of(16, ii.sq_stride, &sq.log_size);
	ii.sq_log_size = sq.log_size;
	ii.max_send_sge = 1;
	CHECK(sroce_core_qp_create(b.dev, &ii, &q) == -EINVAL); // a receive CQ
	ii.recv_cq = nullptr;
	ii.xrcd = d1.x;
	CHECK(sroce_core_qp_create(b.dev, &ii, &q) == -EINVAL); // a domain
	ii.xrcd = nullptr;
	REQUIRE(sroce_core_qp_create(b.dev, &ii, &q) == 0);
	sroce_core_qp_destroy(q);
}

TEST_CASE("xrc: SENDs through one target land in the SRQ each names", "[xrc]") {
	Fixture f(2);
	f.trace_from_env();
	Node &a = f.node(0), &b = f.node(1);
	Domain d(b.dev);
	TestSrq s1(b.dev, b.pd, d.x), s2(b.dev, b.pd, d.x);
	XrcPair x(f, d.x);
	Buffer &src = f.buffer(a, 1 << 16, all_access);
	Buffer &dst = f.buffer(b, 1 << 16, all_access);
	unsigned int at = 0;
	for (unsigned int len : {0u, 1u, 1024u, 1025u, 5000u, 20000u}) {
		CAPTURE(len);
		for (TestSrq *s : {&s1, &s2}) {
			bool imm = s == &s2;
			REQUIRE(s->post(100 + at, sge_of(f, b, dst, at, len ? len : 1)) == 0);
			auto w = wqe(at, imm ? ib::wr_send_imm : ib::wr_send, 1);
			w.imm_or_inv = 0x01020304;
			REQUIRE(x.send(w, s->srqn, {sge_of(f, a, src, at, len)}) == 0);
			std::vector<sroce_cqe> got, sent;
			REQUIRE(wait_on(f, *s->cq, 1, got));
			REQUIRE(f.wait_cqes(a, 1, sent));
			CHECK(got[0].status == ib::wc_success);
			CHECK(got[0].opcode == ib::wc_recv);
			CHECK(got[0].wr_id == 100 + at);
			CHECK(got[0].byte_len == len);
			CHECK(got[0].qp_num == x.tgt_qpn);
			CHECK(got[0].src_qp == x.ini.qpn);
			CHECK(bool(got[0].flags & SROCE_CQE_WITH_IMM) == imm);
			CHECK(sent[0].status == ib::wc_success);
			CHECK(sent[0].qp_num == x.ini.qpn);
			CHECK(std::memcmp(src.data + at, dst.data + at, len) == 0);
			// Nothing in the other SRQ's CQ, nor in node 1's own.
			CHECK((s == &s1 ? s2 : s1).cq->poll().empty());
			CHECK(f.poll(b).empty());
			at += len + 1;
		}
	}
	CHECK(dst.guards_intact());
}

TEST_CASE("xrc: WRITE, READ and atomics use the named SRQ's PD", "[xrc]") {
	Fixture f(3);
	Node &a = f.node(0), &b = f.node(1);
	Domain d(b.dev);
	TestSrq srq(b.dev, b.pd, d.x); // the PD of node 1's buffers
	XrcPair x(f, d.x, ib::mtu_2048);
	Buffer &la = f.buffer(a, 20000, all_access);
	Buffer &rb = f.buffer(b, 20000, all_access);
	uint64_t rva = iova_of(b, rb);
	unsigned int rkey = f.lkey(rb);
	std::vector<sroce_cqe> ca;

	auto w = wqe(1, ib::wr_rdma_write, 1);
	w.rdma.remote_addr = rva + 100;
	w.rdma.rkey = rkey;
	REQUIRE(x.send(w, srq.srqn, {sge_of(f, a, la, 0, 9000)}) == 0);
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(ca[0].status == ib::wc_success);
	CHECK(ca[0].opcode == ib::wc_rdma_write);
	CHECK(std::memcmp(rb.data + 100, la.data, 9000) == 0);

	std::memset(la.data, 0, 12000);
	w = wqe(2, ib::wr_rdma_read, 1);
	w.rdma.remote_addr = rva + 5000;
	w.rdma.rkey = rkey;
	REQUIRE(x.send(w, srq.srqn, {sge_of(f, a, la, 0, 12000)}) == 0);
	ca.clear();
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(ca[0].status == ib::wc_success);
	CHECK(ca[0].opcode == ib::wc_rdma_read);
	CHECK(std::memcmp(la.data, rb.data + 5000, 12000) == 0);

	uint64_t before;
	std::memcpy(&before, rb.data + 16000, 8);
	w = wqe(3, ib::wr_atomic_fetch_add, 1);
	w.rdma.remote_addr = rva + 16000;
	w.rdma.rkey = rkey;
	w.rdma.compare_add = 5;
	REQUIRE(x.send(w, srq.srqn, {sge_of(f, a, la, 0, 8)}) == 0);
	ca.clear();
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(ca[0].status == ib::wc_success);
	uint64_t old, now;
	std::memcpy(&old, la.data, 8);
	std::memcpy(&now, rb.data + 16000, 8);
	CHECK(old == before);
	CHECK(now == before + 5);
	CHECK(srq.cq->poll().empty()); // no receive WQE taken, no CQE
	CHECK(x.tgt_state() == ib::qps_rts);

	// An SRQ of the same domain in another PD: node 1's key is foreign to
	// it, the WRITE is refused and the target goes to error.
	sroce_core_pd *pd2 = nullptr;
	REQUIRE(sroce_core_pd_create(b.dev, &pd2) == 0);
	{
		TestSrq other(b.dev, pd2, d.x);
		std::memset(rb.data, 0x5a, 64);
		w = wqe(4, ib::wr_rdma_write, 1);
		w.rdma.remote_addr = rva;
		w.rdma.rkey = rkey;
		REQUIRE(x.send(w, other.srqn, {sge_of(f, a, la, 0, 64)}) == 0);
		ca.clear();
		REQUIRE(f.wait_cqes(a, 1, ca));
		CHECK(ca[0].status == ib::wc_rem_access_err);
		for (int i = 0; i < 64; i++)
			CHECK(rb.data[i] == 0x5a);
		CHECK(x.tgt_state() == ib::qps_err);
		CHECK(f.sim().events_for(&x.tgt_owner) == std::vector<int>{ib::ev_qp_access_err});
	}
	sroce_core_pd_destroy(pd2);
	CHECK(rb.guards_intact());
}

// What no SRQ of the target's domain is: a number nothing has, 0 (an unset
// wr_set_xrc_srqn), another domain's SRQ, a basic SRQ. Each is NAKed as a
// remote access error: the sender completes with REM_ACCESS_ERR, the
// target is in error with IB_EVENT_QP_ACCESS_ERR, and no SRQ lost a WQE.
TEST_CASE("xrc: a bad XRCETH is refused", "[xrc]") {
	Fixture f(4);
	Node &a = f.node(0), &b = f.node(1);
	Domain d(b.dev), other(b.dev);
	TestSrq mine(b.dev, b.pd, d.x), theirs(b.dev, b.pd, other.x), basic(b.dev, b.pd, nullptr);
	Buffer &src = f.buffer(a, 4096, all_access);
	Buffer &dst = f.buffer(b, 4096, all_access);
	REQUIRE(theirs.post(7, sge_of(f, b, dst, 0, 4096)) == 0);
	REQUIRE(basic.post(8, sge_of(f, b, dst, 0, 4096)) == 0);
	std::memset(dst.data, 0x33, dst.len);
	for (unsigned int srqn : {4000u, 0u, theirs.srqn, basic.srqn}) {
		CAPTURE(srqn);
		XrcPair x(f, d.x);
		REQUIRE(x.send(wqe(1, ib::wr_send, 1), srqn, {sge_of(f, a, src, 0, 100)}) == 0);
		std::vector<sroce_cqe> ca;
		REQUIRE(f.wait_cqes(a, 1, ca));
		CHECK(ca[0].status == ib::wc_rem_access_err);
		CHECK(x.tgt_state() == ib::qps_err);
		CHECK(f.sim().events_for(&x.tgt_owner) == std::vector<int>{ib::ev_qp_access_err});
		f.sim().clear_events();
	}
	CHECK(theirs.cq->poll().empty());
	for (int i = 0; i < 4096; i++)
		REQUIRE(dst.data[i] == 0x33);
	// The WQEs are still there: a target of their own domain takes them.
	XrcPair y(f, other.x);
	REQUIRE(y.send(wqe(2, ib::wr_send, 1), theirs.srqn, {sge_of(f, a, src, 0, 100)}) == 0);
	std::vector<sroce_cqe> got;
	REQUIRE(wait_on(f, *theirs.cq, 1, got));
	CHECK(got[0].wr_id == 7);
	CHECK(got[0].status == ib::wc_success);
}

TEST_CASE("xrc: an empty SRQ answers RNR until a WQE is posted", "[xrc]") {
	Fixture f(5);
	Node &a = f.node(0), &b = f.node(1);
	Domain d(b.dev);
	TestSrq srq(b.dev, b.pd, d.x);
	XrcPair x(f, d.x);
	Buffer &src = f.buffer(a, 8192, all_access);
	Buffer &dst = f.buffer(b, 8192, all_access);
	auto rnr_before = device_counter(b, SROCE_CNT_NAK_SENT_RNR);
	REQUIRE(x.send(wqe(1, ib::wr_send, 1), srq.srqn, {sge_of(f, a, src, 0, 3000)}) == 0);
	f.sim().run_for(2000000);
	CHECK(device_counter(b, SROCE_CNT_NAK_SENT_RNR) > rnr_before);
	CHECK(f.poll(a).empty());
	REQUIRE(srq.post(9, sge_of(f, b, dst, 0, 8192)) == 0);
	std::vector<sroce_cqe> got, ca;
	REQUIRE(wait_on(f, *srq.cq, 1, got));
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(got[0].status == ib::wc_success);
	CHECK(got[0].byte_len == 3000);
	CHECK(ca[0].status == ib::wc_success);
	CHECK(std::memcmp(src.data, dst.data, 3000) == 0);
}

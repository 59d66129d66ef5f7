// XRC under faults and misuse on two simulated nodes: an SRQ destroyed in
// the middle of a message, the wrong transport for each half, and mixed
// traffic under loss, duplication and reordering (helpers: xrc_fixture.h).
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


// The SRQ is destroyed while a message to it is half received: the rest of
// the message finds no SRQ and is NAKed, and the WQE the message held is
// not completed into the CQ the SRQ had (that CQ may be gone next).
TEST_CASE("xrc: an SRQ destroyed in the middle of a message", "[xrc]") {
	Fixture f(6);
	Node &a = f.node(0), &b = f.node(1);
	Domain d(b.dev);
	auto srq = std::make_unique<TestSrq>(b.dev, b.pd, d.x);
	OwnCq *cq = srq->cq.release(); // the CQ outlives the SRQ, as ib_core keeps it
	XrcPair x(f, d.x);
	Buffer &src = f.buffer(a, 8192, all_access);
	Buffer &dst = f.buffer(b, 8192, all_access);
	REQUIRE(srq->post(1, sge_of(f, b, dst, 0, 8192)) == 0);
	bool hold = true;
	int first_seen = 0;
	f.sim().set_filter([&](const sim::WirePacket &p) {
		if (p.from != 0)
			return true;
		return !hold || first_seen++ == 0; // only the FIRST gets through
	});
	REQUIRE(x.send(wqe(1, ib::wr_send, 1), srq->srqn, {sge_of(f, a, src, 0, 5000)}) == 0);
	f.sim().run_for(100000);
	auto &dev = *reinterpret_cast<sroce::Device *>(b.dev);
	CHECK(dev.counts().srqs.get() == 1);
	srq->destroy();
	hold = false;
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(a, 1, ca));
	CHECK(ca[0].status == ib::wc_rem_access_err);
	CHECK(x.tgt_state() == ib::qps_err);
	CHECK(cq->poll().empty());
	srq.reset();
	f.sim().set_filter(nullptr);
	delete cq;
}

// XRC packets go only to the matching half: an XRC request to an RC QP, an
// RC request to a target, an XRC response to a target are dropped and
// counted, and answer nothing.
TEST_CASE("xrc: the wrong transport for a QP is dropped", "[xrc]") {
	Fixture f(7);
	Node &b = f.node(1);
	Domain d(b.dev);
	TestSrq srq(b.dev, b.pd, d.x);
	Qp &rc = f.qp(b, ib::qpt_rc);
	sroce_core_qp_init ti{};
	ti.qp_type = ib::qpt_xrc_tgt;
	ti.xrcd = d.x;
	sroce_core_qp *tgt = nullptr;
	REQUIRE(sroce_core_qp_create(b.dev, &ti, &tgt) == 0);
	unsigned int tgt_qpn = sroce_core_qp_number(tgt);
	struct Case {
		unsigned int qpn;
		unsigned char opcode;
	};
	for (Case c : {Case{rc.qpn, ib::op::xrc | ib::op::send_only}, Case{tgt_qpn, ib::op::rc | ib::op::send_only},
		       Case{tgt_qpn, ib::op::xrc | ib::op::acknowledge}}) {
		CAPTURE(c.qpn, int(c.opcode));
		ib::Headers h;
		h.bth.opcode = c.opcode;
		h.xrceth.srqn = srq.srqn;
		auto before = device_counter(b, SROCE_CNT_RX_BAD_QPN);
		Qp to;
		to.qpn = c.qpn;
		CHECK(answers_to(f, to, h, (c.opcode & 0x1f) == ib::op::acknowledge ? 0 : 16).empty());
		CHECK(device_counter(b, SROCE_CNT_RX_BAD_QPN) == before + 1);
	}
	CHECK(srq.cq->poll().empty());
	sroce_core_qp_destroy(tgt);
}

// Every XRC operation under loss, duplication and reordering into two SRQs:
// all complete, every byte in place.
TEST_CASE("xrc: mixed traffic under loss reaches both SRQs intact", "[xrc][faults]") {
	Fixture f(sim::seed_from_env(8));
	Node &a = f.node(0), &b = f.node(1);
	sim::LinkConfig lc;
	lc.loss = 0.05;
	lc.duplicate = 0.02;
	lc.reorder = 0.05;
	f.sim().set_all_links(lc);
	Domain d(b.dev);
	TestSrq s1(b.dev, b.pd, d.x), s2(b.dev, b.pd, d.x);
	XrcPair x(f, d.x);
	Buffer &src = f.buffer(a, 1 << 18, all_access);
	Buffer &dst = f.buffer(b, 1 << 18, all_access);
	uint64_t rva = iova_of(b, dst);
	uint64_t rng = 12345;
	auto next = [&] {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		return rng;
	};
	for (int i = 0; i < 60; i++) {
		CAPTURE(i);
		unsigned int len = unsigned(next() % 6000);
		unsigned int off = unsigned(i % 30) * 8192;
		TestSrq &s = (i & 1) ? s2 : s1;
		for (unsigned int j = 0; j < len; j++)
			src.data[off + j] = (unsigned char)next();
		int kind = int(next() % 3);
		auto w = wqe(i, kind == 0 ? ib::wr_send : kind == 1 ? ib::wr_rdma_write : ib::wr_rdma_read, 1);
		w.rdma.remote_addr = rva + off;
		w.rdma.rkey = f.lkey(dst);
		if (kind == 0)
			REQUIRE(s.post(i, sge_of(f, b, dst, off, 8192)) == 0);
		if (kind == 2)
			std::memcpy(dst.data + off, src.data + off, len), std::memset(src.data + off, 0, len);
		REQUIRE(x.send(w, s.srqn, {sge_of(f, a, src, off, len)}) == 0);
		std::vector<sroce_cqe> ca, got;
		REQUIRE(f.wait_cqes(a, 1, ca, 20000000000ull));
		CHECK(ca[0].status == ib::wc_success);
		if (kind == 0) {
			REQUIRE(wait_on(f, *s.cq, 1, got));
			CHECK(got[0].byte_len == len);
			CHECK(got[0].wr_id == uint64_t(i));
		}
		CHECK(std::memcmp(src.data + off, dst.data + off, len) == 0);
	}
	CHECK(s1.cq->poll().empty());
	CHECK(s2.cq->poll().empty());
	CHECK(x.tgt_state() == ib::qps_rts);
	CHECK(dst.guards_intact());
}

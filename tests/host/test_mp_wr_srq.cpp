// Multi-packet receive through SRQs (kmod/core/srq.h mp_place,
// mp_responder.cpp): two RC QPs sharing one basic SRQ's buffers, their
// messages interleaved packet by packet and rebuilt per qp_num; an XRC SRQ,
// its completions in its own CQ.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <vector>

#include "xrc_fixture.h"

using namespace tfx;
using namespace xrcfx;

TEST_CASE("mp-wr: two QPs share an SRQ's buffers, their packets interleaved", "[mp_wr][srq]") {
	Fixture f(81);
	Node &a = f.node(0), &b = f.node(1), &a2n = f.add_node(9000);
	sim::LinkConfig lc;
	lc.bits_per_sec = 1000000000; // packets spaced, so that two senders' interleave
	f.sim().set_all_links(lc);
	constexpr unsigned int wr_sz = 65536;
	TestSrq s(b.dev, b.pd, nullptr, wr_sz, 512);
	Qp &a1 = f.qp(a, ib::qpt_rc), &a2 = f.qp(a2n, ib::qpt_rc);
	Qp &b1 = f.qp_mp(b, ib::qpt_rc, 0, 0, 256, s.srq), &b2 = f.qp_mp(b, ib::qpt_rc, 0, 0, 256, s.srq);
	f.connect(a1, b1, ib::mtu_4096);
	f.connect(a2, b2, ib::mtu_4096);
	Buffer &src = f.buffer(a, 1 << 20, all_access), &src2 = f.buffer(a2n, 1 << 20, all_access);
	Buffer &dst = f.buffer(b, size_t(wr_sz) * 8, all_access);
	for (unsigned int i = 0; i < 8; i++)
		REQUIRE(s.post(i + 1, sge_of(f, b, dst, size_t(i) * wr_sz, wr_sz)) == 0);
	// Both senders' messages in flight at once: 5 packets each.
	REQUIRE(f.post_send(a1, wqe(1, ib::wr_send, 1), {sge_of(f, a, src, 0, 20000)}) == 0);
	REQUIRE(f.post_send(a2, wqe(2, ib::wr_send, 1), {sge_of(f, a2n, src2, 100000, 20000)}) == 0);
	std::vector<sroce_cqe> got;
	REQUIRE(f.sim().run_until(
		[&] {
			for (auto &c : f.poll(b))
				got.push_back(c);
			f.poll(a);
			f.poll(a2n);
			return got.size() >= 10;
		},
		2000000000ull));
	std::map<unsigned int, std::vector<unsigned char>> msg;
	std::map<unsigned int, bool> ended;
	unsigned int next_offset = 0, switches = 0, last_qp = 0;
	for (auto &c : got) {
		CHECK(c.status == ib::wc_success);
		CHECK(c.wr_id == 1);
		CHECK(c.mp_offset == next_offset); // one buffer, in placement order
		next_offset += (c.byte_len + 511) & ~511u;
		switches += last_qp && c.qp_num != last_qp;
		last_qp = c.qp_num;
		const unsigned char *p = dst.data + c.mp_offset;
		msg[c.qp_num].insert(msg[c.qp_num].end(), p, p + c.byte_len);
		ended[c.qp_num] = !(c.flags & SROCE_CQE_MP_MORE_IN_MSG);
	}
	CHECK(switches > 1); // the packets did interleave
	REQUIRE(msg[b1.qpn].size() == 20000);
	REQUIRE(msg[b2.qpn].size() == 20000);
	CHECK((ended[b1.qpn] && ended[b2.qpn]));
	CHECK(std::memcmp(msg[b1.qpn].data(), src.data, 20000) == 0);
	CHECK(std::memcmp(msg[b2.qpn].data(), src2.data + 100000, 20000) == 0);
	CHECK(dst.guards_intact());
}

TEST_CASE("mp-wr: an XRC SRQ places the target's messages and completes into its CQ", "[mp_wr][xrc]") {
	Fixture f(82);
	Node &a = f.node(0), &b = f.node(1);
	Domain d(b.dev);
	TestSrq s(b.dev, b.pd, d.x, 8192, 4096);
	XrcPair x(f, d.x, ib::mtu_4096);
	Buffer &src = f.buffer(a, 1 << 16, all_access);
	Buffer &dst = f.buffer(b, 2 * 8192, all_access);
	REQUIRE(s.post(1, sge_of(f, b, dst, 0, 8192)) == 0);
	REQUIRE(s.post(2, sge_of(f, b, dst, 8192, 8192)) == 0);
	REQUIRE(x.send(wqe(1, ib::wr_send, 1), s.srqn, {sge_of(f, a, src, 0, 100)}) == 0);
	REQUIRE(x.send(wqe(2, ib::wr_send, 1), s.srqn, {sge_of(f, a, src, 1000, 5000)}) == 0);
	std::vector<sroce_cqe> got;
	REQUIRE(wait_on(f, *s.cq, 3, got));
	// 100 B at 0; the 5000 B message's 4096 fill the rest of WR 1 exactly
	// (released with it), its last 904 bytes open WR 2.
	REQUIRE(got.size() == 3);
	CHECK((got[0].wr_id == 1 && got[0].mp_offset == 0 && got[0].byte_len == 100 && got[0].qp_num == x.tgt_qpn));
	CHECK((got[1].wr_id == 1 && got[1].mp_offset == 4096 && got[1].byte_len == 4096 &&
	       got[1].flags == (SROCE_CQE_MP_MORE_IN_MSG | SROCE_CQE_MP_CONSUMED)));
	CHECK((got[2].wr_id == 2 && got[2].mp_offset == 0 && got[2].byte_len == 904 && got[2].flags == 0));
	CHECK(std::memcmp(dst.data + 4096, src.data + 1000, 4096) == 0);
	CHECK(std::memcmp(dst.data + 8192, src.data + 1000 + 4096, 904) == 0);
	f.sim().run_for(1000000);
	CHECK(s.cq->poll().empty());
	CHECK(f.poll(b).empty()); // nothing in the node's own CQ
}

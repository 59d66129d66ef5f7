// Shared by the RSS host tests (test_rss.cpp, test_rss_qpn_block.cpp,
// test_rss_mp_wr.cpp):
// kernel WQs with their own CQs, an RSS QP over a table of them on a node,
// the Toeplitz key and settings, UD senders and a drain of every WQ's CQ.
#pragma once
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <vector>

#include "rss.h"
#include "sim_internal.h"
#include "xrc_fixture.h"

namespace rssfx {

using namespace tfx;
using namespace xrcfx;
namespace rss = sroce::rss;


constexpr unsigned int qkey = 0x11223344;

constexpr unsigned char ms_key[rss::key_len] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

// A kernel WQ with its own CQ on a node.
struct TestWq {
	OwnCq cq;
	tfx::Ring ring;
	sroce_core_wq *wq = nullptr;
	int owner = 0;
	// mp_buf, mp_align: a multi-packet WQ with these (rounded) sizes.
	TestWq(sroce_core_dev *dev, sroce_core_pd *pd, sroce_core_ucontext *uctx = nullptr, unsigned int mp_buf = 0,
	       unsigned int mp_align = 0)
		: cq(dev) {
		unsigned int stride = sroce_core_wqe_stride(4, 0);
		ring.mem = ring_of(64, stride, &ring.log_size);
		sroce_core_wq_init wi{};
		wi.owner = &owner;
		wi.pd = pd;
		wi.cq = cq.cq;
		wi.ring = ring.mem;
		wi.log_size = ring.log_size;
		wi.stride = stride;
		wi.max_sge = 4;
		wi.uctx = uctx;
		wi.mp_wr_buffer_sz = mp_buf;
		wi.mp_packet_align_sz = mp_align;
		REQUIRE(sroce_core_wq_create(dev, &wi, &wq) == 0);
	}
	~TestWq() { sroce_core_wq_destroy(wq); }
	int modify(Fixture &f, unsigned int state, int cur = -1) {
		int rc = -1;
		f.sim().call([&](sroce_env_batch *b) { rc = sroce_core_wq_modify(wq, state, cur, b); });
		return rc;
	}
	int post(uint64_t wr_id, const sroce_sge &s) {
		sroce_wqe w = wqe(wr_id, SROCE_WQE_RECV, 1, 0);
		return sroce_core_wq_post_recv(wq, &w, &s);
	}
};

// n WQs (RDY, each with 16 receives of 2 KiB posted from dst), a table
// over them, and an RSS UD QP on node b in RTS.
struct RssSetup {
	Fixture &f;
	Node &b;
	Buffer &dst;
	std::vector<std::unique_ptr<TestWq>> wqs;
	std::unique_ptr<TestWq> dflt;
	sroce_core_ind_table *table = nullptr;
	tfx::Qp qp;
	static constexpr unsigned int slot = 2048, per_wq = 16;

	RssSetup(Fixture &fx, Node &node, unsigned int log_n, const sroce_core_rss_init &base, bool with_default = false)
		: f(fx), b(node), dst(f.buffer(node, size_t(slot) * per_wq * ((1u << log_n) + 1), all_access)) {
		std::vector<sroce_core_wq *> v;
		for (unsigned int i = 0; i < (1u << log_n); i++) {
			wqs.push_back(std::make_unique<TestWq>(b.dev, b.pd));
			v.push_back(wqs.back()->wq);
			fill(*wqs.back(), i);
		}
		if (with_default) {
			dflt = std::make_unique<TestWq>(b.dev, b.pd);
			fill(*dflt, 1u << log_n);
		}
		REQUIRE(sroce_core_ind_table_create(b.dev, log_n, v.data(), &table) == 0);
		sroce_core_rss_init ri = base;
		ri.table = table;
		ri.default_wqn = dflt ? sroce_core_wq_number(dflt->wq) : 0;
		REQUIRE(create_rss_qp(f, b, ri, &qp.qp) == 0);
		qp.node = &b;
		qp.type = ib::qpt_ud;
		qp.qpn = sroce_core_qp_number(qp.qp);
		f.to_ud_rts(qp, qkey);
	}
	~RssSetup() {
		if (qp.qp)
			sroce_core_qp_destroy(qp.qp);
		sroce_core_ind_table_destroy(table);
	}
	void fill(TestWq &w, unsigned int index) {
		REQUIRE(w.modify(f, ib::wqs_rdy) == 0);
		for (unsigned int k = 0; k < per_wq; k++)
			REQUIRE(w.post(index << 8 | k, sge_of(f, b, dst, (size_t(index) * per_wq + k) * slot, slot)) == 0);
	}
	// The message a CQE names, from its slot (wr_id: index << 8 | k).
	const unsigned char *data_of(const sroce_cqe &c) const {
		return dst.data + (size_t(c.wr_id >> 8) * per_wq + (c.wr_id & 0xff)) * slot;
	}
	static int create_rss_qp(Fixture &f, Node &n, const sroce_core_rss_init &ri, sroce_core_qp **out) {
		sroce_core_qp_init qi{};
		qi.qp_type = ib::qpt_ud;
		qi.port = 1;
		qi.pd = n.pd;
		qi.rss = &ri;
		return sroce_core_qp_create(n.dev, &qi, out);
	}
};

inline sroce_core_rss_init toeplitz(unsigned long long fields, unsigned int headers = SROCE_CORE_RSS_OUTER) {
	sroce_core_rss_init ri{};
	ri.fields = fields;
	ri.func = SROCE_CORE_RSS_TOEPLITZ;
	ri.headers = headers;
	ri.key_len = rss::key_len;
	std::memcpy(ri.key, ms_key, rss::key_len);
	return ri;
}

// The UDP source port the core gives a QP's packets (qp.cpp: per-QP
// entropy in the dynamic range).
inline uint16_t sport_of(unsigned int qpn) { return uint16_t(0xc000 | (((qpn * 0x9e3779b1u) >> 16) & 0x3fff)); }

inline int send_ud(Fixture &f, tfx::Qp &from, sroce_core_ah *ah, unsigned int to_qpn, Buffer &src, size_t off,
	    unsigned int len, uint64_t wr_id) {
	auto w = wqe(wr_id, ib::wr_send, 1);
	address_ud(w, ah, to_qpn, qkey);
	return f.post_send(from, w, {sge_of(f, *from.node, src, off, len)});
}

// n UD QPs on node a in RTS: n UDP source ports.
inline std::vector<tfx::Qp *> ud_senders(Fixture &f, Node &a, int n) {
	std::vector<tfx::Qp *> senders;
	for (int i = 0; i < n; i++) {
		senders.push_back(&f.qp(a, ib::qpt_ud));
		f.to_ud_rts(*senders.back(), qkey);
	}
	return senders;
}

// Every CQE of every WQ (and the default WQ), tagged with its WQ's index
// (the default's is the table size).
inline std::vector<std::pair<unsigned int, sroce_cqe>> drain(Fixture &f, RssSetup &s, size_t want) {
	std::vector<std::pair<unsigned int, sroce_cqe>> got;
	f.sim().run_until(
		[&] {
			for (unsigned int i = 0; i < s.wqs.size(); i++)
				for (auto &c : s.wqs[i]->cq.poll())
					got.push_back({i, c});
			if (s.dflt)
				for (auto &c : s.dflt->cq.poll())
					got.push_back({unsigned(s.wqs.size()), c});
			return got.size() >= want;
		},
		2000000000ull);
	f.sim().run_for(1000000); // and nothing more
	for (unsigned int i = 0; i < s.wqs.size(); i++)
		for (auto &c : s.wqs[i]->cq.poll())
			got.push_back({i, c});
	return got;
}

} // namespace rssfx

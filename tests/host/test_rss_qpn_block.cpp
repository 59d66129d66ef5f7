// The seed's consecutive-QPN form of RSS in the core (kmod/core/qpn_block.h;
// Documentation/rss.md): children numbered in an aligned block, receiving
// into their WQs directly and through an RSS QP; the claims checked.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "rss_fixture.h"

using namespace tfx;
using namespace xrcfx;
using namespace rssfx;
namespace rss = sroce::rss;

namespace {
// A user context on a node (children and their WQs must share one).
struct Uctx {
	sroce_core_ucontext *uc = nullptr;
	explicit Uctx(sroce_core_dev *dev) {
		sroce_alloc_ucontext_req req{};
		req.abi_version = SROCE_ABI_VERSION;
		sroce_alloc_ucontext_resp resp{};
		REQUIRE(sroce_core_ucontext_create(dev, &req, sizeof(req), &resp, &uc) == 0);
	}
	~Uctx() { sroce_core_ucontext_destroy(uc); }
};

// A child UD QP of the consecutive-QPN form receiving into w, with an SQ
// (the node's CQ) as the glue always gives one.
int make_child(Node &n, sroce_core_ucontext *uc, TestWq &w, unsigned int base, unsigned int log2, unsigned int index,
	       sroce_core_qp **out) {
	static std::vector<std::unique_ptr<tfx::Ring>> rings; // outlive their QPs
	rings.push_back(std::make_unique<tfx::Ring>());
	unsigned int stride = sroce_core_wqe_stride(1, 0);
	rings.back()->mem = ring_of(16, stride, &rings.back()->log_size);
	sroce_core_rss_child c{sroce_core_wq_number(w.wq), base, log2, index};
	sroce_core_qp_init qi{};
	qi.qp_type = ib::qpt_ud;
	qi.port = 1;
	qi.pd = n.pd;
	qi.send_cq = n.cq;
	qi.sq_ring = rings.back()->mem;
	qi.sq_log_size = rings.back()->log_size;
	qi.sq_stride = stride;
	qi.max_send_sge = 1;
	qi.recv_cq = w.cq.cq;
	qi.uctx = uc;
	qi.rss_child = &c;
	return sroce_core_qp_create(n.dev, &qi, out);
}
} // namespace

// The seed's consecutive-QPN form (qpn_block.h): 4 children numbered base +
// i with base a multiple of 4, each receiving into its own WQ; an RSS QP
// over those WQs spreads messages to them, and every completion names the
// child; a message sent to a child itself lands in its WQ. Claims are
// checked, and the numbers return when the last child is gone.
TEST_CASE("rss: consecutive aligned QPNs: children receive through the RSS QP and directly", "[rss][qpn_block]") {
	Fixture f(95);
	Node &a = f.node(0), &b = f.node(1);
	Uctx u(b.dev), other(b.dev);
	std::vector<std::unique_ptr<TestWq>> wqs;
	std::vector<sroce_core_wq *> v;
	Buffer &dst = f.buffer(b, 2048 * 16 * 5, all_access);
	for (unsigned int i = 0; i < 5; i++) {
		wqs.push_back(std::make_unique<TestWq>(b.dev, b.pd, u.uc));
		REQUIRE(wqs.back()->modify(f, ib::wqs_rdy) == 0);
		for (unsigned int k = 0; k < 16; k++)
			REQUIRE(wqs.back()->post(i << 8 | k, sge_of(f, b, dst, (i * 16 + k) * 2048, 2048)) == 0);
		if (i < 4)
			v.push_back(wqs.back()->wq);
	}
	std::vector<tfx::Qp> kids(4);
	// Some QPs first, so that the block is not simply where numbering starts.
	f.qp(b, ib::qpt_ud);
	f.qp(b, ib::qpt_ud);
	REQUIRE(make_child(b, u.uc, *wqs[0], SROCE_CORE_RSS_BLOCK_NEW, 2, 0, &kids[0].qp) == 0);
	unsigned int base = sroce_core_qp_number(kids[0].qp);
	CHECK(base % 4 == 0);
	for (unsigned int i = 1; i < 4; i++)
		REQUIRE(make_child(b, u.uc, *wqs[i], base, 2, i, &kids[i].qp) == 0);
	for (unsigned int i = 0; i < 4; i++) {
		kids[i].node = &b;
		kids[i].type = ib::qpt_ud;
		kids[i].qpn = sroce_core_qp_number(kids[i].qp);
		CHECK(kids[i].qpn == base + i);
		f.to_ud_rts(kids[i], qkey);
	}

	sroce_core_qp *bad = nullptr;
	SECTION("claims are checked; a bound WQ is busy") {
		CHECK(make_child(b, u.uc, *wqs[4], base, 2, 1, &bad) == -EBUSY);           // claimed
		CHECK(make_child(b, other.uc, *wqs[4], base, 2, 3, &bad) == -EINVAL);      // WQ of another context
		CHECK(make_child(b, u.uc, *wqs[4], base, 2, 4, &bad) == -EINVAL);          // out of the block
		CHECK(make_child(b, u.uc, *wqs[4], base + 4, 2, 0, &bad) == -ENOENT);      // no such block
		CHECK(make_child(b, u.uc, *wqs[4], base, 3, 0, &bad) == -ENOENT);          // not its size
		CHECK(make_child(b, u.uc, *wqs[1], SROCE_CORE_RSS_BLOCK_NEW, 0, 0, &bad) == -EBUSY); // WQ has a child
		CHECK(make_child(b, u.uc, *wqs[4], SROCE_CORE_RSS_BLOCK_NEW, 9, 0, &bad) == -EINVAL);
		CHECK(sroce_core_wq_busy(wqs[2]->wq));
		CHECK(!sroce_core_wq_busy(wqs[4]->wq));
		// Another context cannot plant a QP inside the block.
		TestWq foreign(b.dev, b.pd, other.uc);
		sroce_core_qp *q = nullptr;
		sroce_core_qp_destroy(kids[3].qp);
		kids[3].qp = nullptr;
		CHECK(make_child(b, other.uc, foreign, base, 2, 3, &q) == -EPERM);
		CHECK(!sroce_core_wq_busy(wqs[3]->wq));
		REQUIRE(make_child(b, u.uc, *wqs[3], base, 2, 3, &kids[3].qp) == 0); // the freed number again
		CHECK(sroce_core_qp_number(kids[3].qp) == base + 3);
	}
	SECTION("through the RSS QP and directly, every completion names the child") {
		sroce_core_ind_table *table = nullptr;
		REQUIRE(sroce_core_ind_table_create(b.dev, 2, v.data(), &table) == 0);
		sroce_core_rss_init ri = toeplitz(rss::field::ipv4 | rss::field::udp);
		ri.table = table;
		tfx::Qp ctx;
		REQUIRE(RssSetup::create_rss_qp(f, b, ri, &ctx.qp) == 0);
		ctx.node = &b;
		ctx.type = ib::qpt_ud;
		ctx.qpn = sroce_core_qp_number(ctx.qp);
		f.to_ud_rts(ctx, qkey);
		sroce_core_ah *ah = f.ah(a, b);
		Buffer &src = f.buffer(a, 1 << 16, all_access);
		std::vector<tfx::Qp *> senders = ud_senders(f, a, 12);
		for (unsigned int m = 0; m < 24; m++)
			REQUIRE(send_ud(f, *senders[m % 12], ah, ctx.qpn, src, m * 512, 100, m) == 0);
		REQUIRE(send_ud(f, *senders[0], ah, base + 2, src, 0, 77, 99) == 0); // child 2 itself
		std::vector<std::pair<unsigned int, sroce_cqe>> got;
		f.sim().run_until(
			[&] {
				for (unsigned int i = 0; i < 4; i++)
					for (auto &c : wqs[i]->cq.poll())
						got.push_back({i, c});
				return got.size() >= 25;
			},
			2000000000ull);
		REQUIRE(got.size() == 25);
		std::set<unsigned int> used;
		unsigned int direct = 0;
		for (auto &[wq, c] : got) {
			CHECK(c.status == ib::wc_success);
			CHECK(c.qp_num == base + wq);
			if (c.byte_len == 40 + 77) {
				direct++;
				CHECK(wq == 2);
				CHECK(c.hash_type == SROCE_HASH_NONE);
			} else {
				CHECK(c.hash_type == SROCE_HASH_UDP_IPV4);
				CHECK(wq == (c.hash_value & 3));
				used.insert(wq);
			}
		}
		CHECK(direct == 1);
		CHECK(used.size() > 1);
		sroce_core_qp_destroy(ctx.qp);
		sroce_core_ind_table_destroy(table);
	}
	for (auto &k : kids)
		if (k.qp)
			sroce_core_qp_destroy(k.qp);
	// The numbers came back: a new block of 4 is found where this one was
	// (first fit), and its WQ is free again.
	sroce_core_qp *again = nullptr;
	REQUIRE(make_child(b, u.uc, *wqs[0], SROCE_CORE_RSS_BLOCK_NEW, 2, 0, &again) == 0);
	CHECK(sroce_core_qp_number(again) == base);
	sroce_core_qp_destroy(again);
	CHECK(f.poll(b).empty());
}

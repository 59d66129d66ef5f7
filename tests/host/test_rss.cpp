// RSS in the core (kmod/core/wq.h, ind_table.h; Documentation/rss.md): UD
// messages from many flows into one RSS QP spread over work queues by the
// hash of their headers, each checked against the hash computed here; the
// default WQ; WQ states; and every bad creation refused.
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

TEST_CASE("rss: UD messages spread over the WQs by the Toeplitz hash of their IP and UDP headers", "[rss][ud]") {
	Fixture f(91);
	Node &a = f.node(0), &b = f.node(1);
	RssSetup s(f, b, 2, toeplitz(rss::field::ipv4 | rss::field::udp));
	sroce_core_ah *ah = f.ah(a, b);
	Buffer &src = f.buffer(a, 1 << 16, all_access);
	// 12 sending QPs: 12 UDP source ports, 2 messages each.
	std::vector<tfx::Qp *> senders = ud_senders(f, a, 12);
	std::map<unsigned int, unsigned int> qp_of_msg; // payload tag -> sender QPN
	for (unsigned int m = 0; m < 24; m++) {
		tfx::Qp &q = *senders[m % 12];
		src.data[m * 512] = (unsigned char)m; // a tag to find the message by
		qp_of_msg[m] = q.qpn;
		REQUIRE(send_ud(f, q, ah, s.qp.qpn, src, m * 512, 300 + m, m) == 0);
	}
	auto got = drain(f, s, 24);
	REQUIRE(got.size() == 24);
	std::set<unsigned int> used;
	for (auto &[wq, c] : got) {
		CHECK(c.status == ib::wc_success);
		CHECK(c.qp_num == s.qp.qpn);
		CHECK((c.flags & SROCE_CQE_WITH_HASH));
		CHECK(c.hash_type == SROCE_HASH_UDP_IPV4);
		const unsigned char *m = s.data_of(c);
		unsigned int tag = m[40];
		REQUIRE(qp_of_msg.count(tag));
		CHECK(c.src_qp == qp_of_msg[tag]);
		CHECK(c.byte_len == 40 + 300 + tag);
		CHECK(std::memcmp(m + 40, src.data + tag * 512, 300 + tag) == 0);
		// The hash computed here from the GRH area's IPv4 header and the
		// sender's port: the same value, and its low bits are this WQ.
		rss::Tuple t;
		t.ip_version = 4;
		std::memcpy(t.src, m + 20 + 12, 4);
		std::memcpy(t.dst, m + 20 + 16, 4);
		t.l4 = rss::ip_proto_udp;
		t.sport = sport_of(c.src_qp);
		t.dport = 4791;
		rss::Config cfg;
		cfg.fields = rss::field::ipv4 | rss::field::udp;
		std::memcpy(cfg.key, ms_key, rss::key_len);
		rss::Hash h = rss::compute(cfg, t);
		CHECK(c.hash_value == h.value);
		CHECK(wq == (h.value & 3));
		used.insert(wq);
	}
	CHECK(used.size() > 1);
	// Each WQ's counts (debugfs wqs): what it received, nothing dropped.
	for (unsigned int i = 0; i < s.wqs.size(); i++) {
		sroce_core_wq_view v{};
		sroce_core_wq_snapshot(s.wqs[i]->wq, &v);
		size_t n = 0;
		for (auto &g : got)
			n += g.first == i;
		CHECK(v.received == n);
		CHECK((v.errors == 0 && v.no_wqe == 0 && v.not_ready == 0));
	}
	CHECK(f.poll(b).empty()); // nothing in the node's own CQ
}

TEST_CASE("rss: payload mode with XOR hashes the IPoIB-style IP/TCP header; the default WQ takes the rest",
	  "[rss][ud]") {
	Fixture f(92);
	Node &a = f.node(0), &b = f.node(1);
	sroce_core_rss_init ri{};
	ri.fields = rss::field::ipv4 | rss::field::tcp;
	ri.func = SROCE_CORE_RSS_XOR;
	ri.headers = SROCE_CORE_RSS_PAYLOAD;
	RssSetup s(f, b, 3, ri, true);
	tfx::Qp &q = f.qp(a, ib::qpt_ud);
	f.to_ud_rts(q, qkey);
	sroce_core_ah *ah = f.ah(a, b);
	Buffer &src = f.buffer(a, 1 << 16, all_access);
	// 16 TCP/IPv4 payloads with distinct ports, then 3 that match nothing
	// (ARP's EtherType, IPv6 where IPv4 is asked for, 2 bytes).
	std::map<unsigned int, uint32_t> want; // tag -> hash
	for (unsigned int m = 0; m < 16; m++) {
		unsigned char *p = src.data + m * 512;
		std::memset(p, 0, 512);
		p[0] = 0x08, p[1] = 0x00;
		p[4] = 0x45, p[4 + 9] = 6;
		const unsigned char ip[8] = {192, 168, 1, (unsigned char)(m + 1), 10, 1, 2, 3};
		std::memcpy(p + 4 + 12, ip, 8);
		uint16_t sp = uint16_t(40000 + 7 * m), dp = 80;
		p[24] = sp >> 8, p[25] = sp & 0xff, p[26] = dp >> 8, p[27] = dp & 0xff;
		p[100] = (unsigned char)m;
		want[m] = (0xc0a80100u | (m + 1)) ^ 0x0a010203u ^ (uint32_t(sp) << 16 | dp);
		REQUIRE(send_ud(f, q, ah, s.qp.qpn, src, m * 512, 200, m) == 0);
	}
	for (unsigned int m = 16; m < 19; m++) {
		unsigned char *p = src.data + m * 512;
		std::memset(p, 0, 512);
		if (m == 16)
			p[0] = 0x08, p[1] = 0x06;
		if (m == 17)
			p[0] = 0x86, p[1] = 0xdd, p[4] = 0x60;
		p[100] = (unsigned char)m;
		REQUIRE(send_ud(f, q, ah, s.qp.qpn, src, m * 512, m == 18 ? 2 : 200, m) == 0);
	}
	auto got = drain(f, s, 19);
	REQUIRE(got.size() == 19);
	unsigned int to_default = 0;
	for (auto &[wq, c] : got) {
		CHECK(c.status == ib::wc_success);
		const unsigned char *m = s.data_of(c);
		if (wq == 8) {
			to_default++;
			CHECK(c.hash_type == SROCE_HASH_NONE);
			CHECK(c.hash_value == 0);
			continue;
		}
		unsigned int tag = m[40 + 100];
		REQUIRE(want.count(tag));
		CHECK(c.hash_type == SROCE_HASH_TCP_IPV4);
		CHECK(c.hash_value == want[tag]);
		CHECK(wq == (want[tag] & 7));
	}
	CHECK(to_default == 3);
	// The default WQ cannot go while the QP names it.
	CHECK(sroce_core_wq_busy(s.dflt->wq));
	CHECK(!sroce_core_wq_busy(s.wqs[0]->wq)); // ib_core counts the table's
	CHECK(sroce_core_wq_close(s.dflt->wq) == -EBUSY);
	// Destroy's check and naming the WQ exclude each other: refused, the
	// check left it open; passed, no RSS QP may name it any more (it was
	// destroyed under a QP created in between).
	ri.table = s.table;
	ri.default_wqn = sroce_core_wq_number(s.dflt->wq);
	sroce_core_qp *other = nullptr;
	REQUIRE(RssSetup::create_rss_qp(f, b, ri, &other) == 0);
	sroce_core_qp_destroy(other);
	sroce_core_qp_destroy(s.qp.qp);
	s.qp.qp = nullptr;
	CHECK(!sroce_core_wq_busy(s.dflt->wq));
	CHECK(sroce_core_wq_close(s.dflt->wq) == 0);
	other = nullptr;
	CHECK(RssSetup::create_rss_qp(f, b, ri, &other) == -EINVAL);
	CHECK(other == nullptr);
	CHECK(!sroce_core_wq_busy(s.dflt->wq));
}

TEST_CASE("rss: without a default WQ a message that matches nothing goes to slot 0 with hash 0", "[rss][ud]") {
	Fixture f(93);
	Node &a = f.node(0), &b = f.node(1);
	RssSetup s(f, b, 1, toeplitz(rss::field::ipv6 | rss::field::udp)); // the sim speaks IPv4
	tfx::Qp &q = f.qp(a, ib::qpt_ud);
	f.to_ud_rts(q, qkey);
	sroce_core_ah *ah = f.ah(a, b);
	Buffer &src = f.buffer(a, 4096, all_access);
	for (unsigned int m = 0; m < 3; m++)
		REQUIRE(send_ud(f, q, ah, s.qp.qpn, src, 0, 100, m) == 0);
	auto got = drain(f, s, 3);
	REQUIRE(got.size() == 3);
	for (auto &[wq, c] : got) {
		CHECK(wq == 0);
		CHECK(c.hash_type == SROCE_HASH_NONE);
		CHECK(c.hash_value == 0);
	}
}

TEST_CASE("rss: a WQ's message steered to its CQ's CPU before its ICRC check is received when it comes back, "
	  "once and counted once",
	  "[rss][steer]") {
	Fixture f(95);
	Node &a = f.node(0), &b = f.node(1);
	RssSetup s(f, b, 2, toeplitz(rss::field::ipv4 | rss::field::udp));
	sroce_core_ah *ah = f.ah(a, b);
	Buffer &src = f.buffer(a, 1 << 16, all_access);
	std::vector<std::pair<sroce_env_pkt *, void *>> taken; // packet, CQ owner
	f.sim().set_steer([&](sroce_env_pkt *pkt, void *cq_owner) {
		taken.push_back({pkt, cq_owner});
		return true;
	});
	std::vector<tfx::Qp *> senders = ud_senders(f, a, 8);
	for (unsigned int m = 0; m < 16; m++)
		REQUIRE(send_ud(f, *senders[m % 8], ah, s.qp.qpn, src, m * 512, 200, m) == 0);
	f.sim().run_for(100000000);
	// Taken before any WQ received it, each for the CQ of one of the WQs.
	REQUIRE(taken.size() == 16);
	std::map<void *, unsigned int> wq_of_owner;
	for (unsigned int i = 0; i < s.wqs.size(); i++)
		wq_of_owner[&s.wqs[i]->cq.owner] = i;
	for (auto &t : taken)
		CHECK(wq_of_owner.count(t.second) == 1);
	for (auto &w : s.wqs)
		CHECK(w->cq.poll().empty());
	sroce_core_rx_counts before{};
	sroce_core_dev_rx_counts(b.dev, &before);
	CHECK(before.packets == 16);

	// A plain UD QP on the same node is never asked about.
	tfx::Qp &plain = f.qp(b, ib::qpt_ud);
	f.to_ud_rts(plain, qkey);
	Buffer &pdst = f.buffer(b, 4096, all_access);
	REQUIRE(f.post_recv(plain, 7, {sge_of(f, b, pdst, 0, 4096)}) == 0);
	REQUIRE(send_ud(f, *senders[0], ah, plain.qpn, src, 0, 100, 99) == 0);
	std::vector<sroce_cqe> pc;
	REQUIRE(f.wait_cqes(b, 1, pc));
	CHECK(pc[0].wr_id == 7);
	CHECK(taken.size() == 16);

	// Steered before its ICRC was checked: one corrupted meanwhile (the
	// stored ICRC's last byte) is dropped and counted when it comes back.
	auto &last = taken.back().first->frags.back();
	last.data[last.len - 1] ^= 0xff;
	void *corrupt_owner = taken.back().second;
	// Back on "their" CPU: each lands in the WQ whose CQ it was steered to.
	std::map<sroce_env_pkt *, void *> owner_of;
	for (auto &t : taken) {
		owner_of[t.first] = t.second;
		f.sim().call([&](sroce_env_batch *bt) { sroce_core_rx_steered(b.dev, t.first, nullptr, bt); });
	}
	auto got = drain(f, s, 15);
	REQUIRE(got.size() == 15);
	std::map<unsigned int, unsigned int> per_wq;
	for (auto &[wq, c] : got) {
		CHECK(c.status == ib::wc_success);
		CHECK(c.byte_len == 40 + 200);
		CHECK(c.hash_type == SROCE_HASH_UDP_IPV4);
		CHECK(wq == (c.hash_value & 3));
		per_wq[wq]++;
	}
	std::map<unsigned int, unsigned int> steered_per_wq;
	for (auto &t : taken)
		steered_per_wq[wq_of_owner[t.second]]++;
	steered_per_wq[wq_of_owner[corrupt_owner]]--;
	CHECK(per_wq == steered_per_wq);
	sroce_core_rx_counts after{};
	sroce_core_dev_rx_counts(b.dev, &after);
	CHECK(after.packets == before.packets + 1); // the plain QP's only
	CHECK(after.icrc_errors == 1);
	CHECK(taken.size() == 16); // not steered again
}

// An RSS QP over one WQ on node 1, and a UD sender on node 0.
struct OneWq {
	Fixture f;
	Node &a, &b;
	RssSetup s;
	TestWq &w;
	tfx::Qp &q;
	sroce_core_ah *ah;
	Buffer &src;
	explicit OneWq(uint64_t seed)
		: f(seed), a(f.node(0)), b(f.node(1)), s(f, b, 0, toeplitz(rss::field::ipv4)), w(*s.wqs[0]),
		  q(f.qp(a, ib::qpt_ud)), ah(f.ah(a, b)), src(f.buffer(a, 4096, all_access)) {
		f.to_ud_rts(q, qkey);
	}
};

TEST_CASE("rss: WQ states: RESET drops, ERR flushes, and only the allowed moves are made", "[rss][wq]") {
	OneWq o(94);
	auto &[f, a, b, s, w, q, ah, src] = o;

	CHECK(sroce_core_wq_state(w.wq) == ib::wqs_rdy);
	CHECK(w.modify(f, ib::wqs_reset, ib::wqs_err) == -EINVAL); // the stated current state is wrong
	CHECK(w.modify(f, 7) == -EINVAL);
	// RESET discards the 16 posted receives without completions and drops
	// what arrives; kernel posts are refused.
	REQUIRE(w.modify(f, ib::wqs_reset, ib::wqs_rdy) == 0);
	CHECK(w.post(99, sge_of(f, b, s.dst, 0, 2048)) == -EINVAL);
	REQUIRE(send_ud(f, q, ah, s.qp.qpn, src, 0, 100, 1) == 0);
	f.sim().run_for(5000000);
	CHECK(w.cq.poll().empty());
	sroce_core_wq_view v{};
	sroce_core_wq_snapshot(w.wq, &v);
	CHECK((v.not_ready == 1 && v.received == 0 && v.no_wqe == 0));
	CHECK(w.modify(f, ib::wqs_err) == -EINVAL); // RESET -> ERR is not a move
	// RDY again: a new receive takes the next message.
	REQUIRE(w.modify(f, ib::wqs_rdy) == 0);
	REQUIRE(w.post(7, sge_of(f, b, s.dst, 0, 2048)) == 0);
	REQUIRE(send_ud(f, q, ah, s.qp.qpn, src, 0, 100, 2) == 0);
	std::vector<sroce_cqe> got;
	REQUIRE(wait_on(f, w.cq, 1, got));
	CHECK((got[0].wr_id == 7 && got[0].status == ib::wc_success));
	// RDY with nothing posted: dropped, and counted as such.
	REQUIRE(send_ud(f, q, ah, s.qp.qpn, src, 0, 100, 4) == 0);
	f.sim().run_for(5000000);
	CHECK(w.cq.poll().empty());
	sroce_core_wq_snapshot(w.wq, &v);
	CHECK((v.received == 1 && v.no_wqe == 1 && v.not_ready == 1));
	// ERR: what is posted completes flushed, arrivals are dropped, and it
	// leaves only through RESET.
	REQUIRE(w.post(8, sge_of(f, b, s.dst, 0, 2048)) == 0);
	REQUIRE(w.post(9, sge_of(f, b, s.dst, 2048, 2048)) == 0);
	REQUIRE(w.modify(f, ib::wqs_err) == 0);
	got.clear();
	REQUIRE(wait_on(f, w.cq, 2, got));
	CHECK((got[0].wr_id == 8 && got[0].status == ib::wc_wr_flush_err));
	CHECK((got[1].wr_id == 9 && got[1].status == ib::wc_wr_flush_err));
	REQUIRE(send_ud(f, q, ah, s.qp.qpn, src, 0, 100, 3) == 0);
	f.sim().run_for(5000000);
	CHECK(w.cq.poll().empty());
	CHECK(w.modify(f, ib::wqs_rdy) == -EINVAL);
	CHECK(sroce_core_wq_state(w.wq) == ib::wqs_err);
	CHECK(w.modify(f, ib::wqs_reset) == 0);
	CHECK(w.modify(f, ib::wqs_rdy) == 0);
}

TEST_CASE("rss: a malformed WQE completes in error and the WQ goes to ERR with WQ_FATAL", "[rss][wq]") {
	OneWq o(95);
	auto &[f, a, b, s, w, q, ah, src] = o;
	// The first posted WQE's num_sge rewritten in the ring, as a hostile
	// owner of a user ring could.
	auto *slot = reinterpret_cast<sroce_wqe *>(static_cast<unsigned char *>(w.ring.mem) + SROCE_RING_ENTRIES_OFFSET);
	slot->num_sge = 200;
	f.sim().clear_events();
	REQUIRE(send_ud(f, q, ah, s.qp.qpn, src, 0, 100, 1) == 0);
	std::vector<sroce_cqe> got;
	REQUIRE(wait_on(f, w.cq, RssSetup::per_wq, got)); // the bad one, then 15 flushed
	CHECK(got[0].wr_id == 0);
	CHECK(got[0].status == ib::wc_loc_qp_op_err);
	sroce_core_wq_view v{};
	sroce_core_wq_snapshot(w.wq, &v);
	CHECK((v.errors == 1 && v.received == 0));
	for (size_t i = 1; i < got.size(); i++)
		CHECK(got[i].status == ib::wc_wr_flush_err);
	CHECK(sroce_core_wq_state(w.wq) == ib::wqs_err);
	size_t fatal = 0;
	for (const auto &e : f.sim().events())
		fatal += e.owner == &w.owner && e.kind == ib::ev_wq_fatal;
	CHECK(fatal == 1);
	// A receive a user ring takes after that ERR (written straight into
	// the ring, as the provider does) waits until ERR is set again.
	auto *hdr = static_cast<sroce_ring_header *>(w.ring.mem);
	auto *next = reinterpret_cast<sroce_wqe *>(static_cast<unsigned char *>(w.ring.mem) + SROCE_RING_ENTRIES_OFFSET +
						   size_t(hdr->producer & ((1u << w.ring.log_size) - 1)) *
							   sroce_core_wqe_stride(4, 0));
	*next = wqe(77, SROCE_WQE_RECV, 0, 0);
	hdr->producer++;
	f.sim().run_for(1000000);
	CHECK(w.cq.poll().empty());
	REQUIRE(w.modify(f, ib::wqs_err) == 0);
	got.clear();
	REQUIRE(wait_on(f, w.cq, 1, got));
	CHECK((got[0].wr_id == 77 && got[0].status == ib::wc_wr_flush_err));
}

TEST_CASE("rss: bad WQs, tables and RSS QPs are refused, nothing half made", "[rss][bad]") {
	Fixture f(96);
	Node &a = f.node(0), &b = f.node(1);
	TestWq w1(b.dev, b.pd), w2(b.dev, b.pd), other_dev(a.dev, a.pd);
	sroce_core_pd *pd2 = nullptr;
	REQUIRE(sroce_core_pd_create(b.dev, &pd2) == 0);
	sroce_core_ind_table *t = nullptr;
	sroce_core_wq *two[2] = {w1.wq, w2.wq};
	SECTION("tables") {
		std::vector<sroce_core_wq *> big(512, w1.wq);
		CHECK(sroce_core_ind_table_create(b.dev, 9, big.data(), &t) == -EINVAL); // above the cap (2^8)
		sroce_core_wq *mixed[2] = {w1.wq, other_dev.wq};
		CHECK(sroce_core_ind_table_create(b.dev, 1, mixed, &t) == -EINVAL);
		sroce_core_wq *hole[2] = {w1.wq, nullptr};
		CHECK(sroce_core_ind_table_create(b.dev, 1, hole, &t) == -EINVAL);
		CHECK(t == nullptr);
	}
	SECTION("RSS QPs") {
		REQUIRE(sroce_core_ind_table_create(b.dev, 1, two, &t) == 0);
		sroce_core_qp *q = nullptr;
		auto ri = toeplitz(rss::field::ipv4 | rss::field::udp);
		ri.table = t;
		auto try_qp = [&](sroce_core_qp_init qi) {
			int rc = sroce_core_qp_create(b.dev, &qi, &q);
			CHECK(q == nullptr);
			return rc;
		};
		sroce_core_qp_init qi{};
		qi.qp_type = ib::qpt_ud;
		qi.port = 1;
		qi.pd = b.pd;
		qi.rss = &ri;
		auto bad = qi;
		bad.qp_type = ib::qpt_rc;
		CHECK(try_qp(bad) == -EINVAL); // RSS is UD's
		bad = qi;
		bad.recv_cq = b.cq;
		CHECK(try_qp(bad) == -EINVAL); // no receive side of its own
		bad = qi;
		bad.pd = pd2;
		CHECK(try_qp(bad) == -EINVAL); // the WQs are in another PD
		auto r2 = ri;
		r2.fields = rss::field::src_ipv4 | rss::field::dst_ipv6;
		bad = qi;
		bad.rss = &r2;
		CHECK(try_qp(bad) == -EINVAL);
		r2 = ri;
		r2.fields = rss::field::ipv4 | rss::field::src_port_tcp | rss::field::dst_port_udp;
		CHECK(try_qp(bad) == -EINVAL);
		r2 = ri;
		r2.fields = rss::field::ipv4 | rss::field::tcp; // the RoCE packet has no TCP header
		CHECK(try_qp(bad) == -EOPNOTSUPP);
		r2 = ri;
		r2.key_len = 39;
		CHECK(try_qp(bad) == -EINVAL);
		r2 = ri;
		r2.func = 2;
		CHECK(try_qp(bad) == -EINVAL);
		// A default WQ by a number that is none, one in another PD, one of
		// another context.
		TestWq other_pd(b.dev, pd2), other_ctx(b.dev, b.pd, reinterpret_cast<sroce_core_ucontext *>(&f));
		for (unsigned int wqn : {999u, sroce_core_wq_number(other_pd.wq), sroce_core_wq_number(other_ctx.wq)}) {
			r2 = ri;
			r2.default_wqn = wqn;
			CHECK(try_qp(bad) == -EINVAL);
		}
		CHECK(!sroce_core_wq_busy(other_pd.wq));
		// And the good one, with an SQ half-given refused.
		bad = qi;
		bad.send_cq = b.cq;
		CHECK(try_qp(bad) == -EINVAL);
		REQUIRE(sroce_core_qp_create(b.dev, &qi, &q) == 0);
		sroce_core_qp_destroy(q);
	}
	sroce_core_ind_table_destroy(t);
	sroce_core_pd_destroy(pd2);
}

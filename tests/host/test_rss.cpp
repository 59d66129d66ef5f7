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

#include "rss.h"
#include "sim_internal.h"
#include "xrc_fixture.h"

using namespace tfx;
using namespace xrcfx;
namespace rss = sroce::rss;

namespace {

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
	TestWq(sroce_core_dev *dev, sroce_core_pd *pd, sroce_core_ucontext *uctx = nullptr) : cq(dev) {
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

sroce_core_rss_init toeplitz(unsigned long long fields, unsigned int headers = SROCE_CORE_RSS_OUTER) {
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
uint16_t sport_of(unsigned int qpn) { return uint16_t(0xc000 | (((qpn * 0x9e3779b1u) >> 16) & 0x3fff)); }

int send_ud(Fixture &f, tfx::Qp &from, sroce_core_ah *ah, unsigned int to_qpn, Buffer &src, size_t off,
	    unsigned int len, uint64_t wr_id) {
	auto w = wqe(wr_id, ib::wr_send, 1);
	w.ud.ah_handle = sroce_core_ah_handle(ah);
	w.ud.remote_qpn = to_qpn;
	w.ud.remote_qkey = qkey;
	return f.post_send(from, w, {sge_of(f, *from.node, src, off, len)});
}

// n UD QPs on node a in RTS: n UDP source ports.
std::vector<tfx::Qp *> ud_senders(Fixture &f, Node &a, int n) {
	std::vector<tfx::Qp *> senders;
	for (int i = 0; i < n; i++) {
		senders.push_back(&f.qp(a, ib::qpt_ud));
		f.to_ud_rts(*senders.back(), qkey);
	}
	return senders;
}

// Every CQE of every WQ (and the default WQ), tagged with its WQ's index
// (the default's is the table size).
std::vector<std::pair<unsigned int, sroce_cqe>> drain(Fixture &f, RssSetup &s, size_t want) {
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

} // namespace

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
	sroce_core_qp_destroy(s.qp.qp);
	s.qp.qp = nullptr;
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
		f.sim().call([&](sroce_env_batch *bt) { sroce_core_rx_steered(b.dev, t.first, bt); });
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
	Fixture &f = o.f;
	Node &b = o.b;
	RssSetup &s = o.s;
	TestWq &w = o.w;
	tfx::Qp &q = o.q;
	sroce_core_ah *ah = o.ah;
	Buffer &src = o.src;

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
	Fixture &f = o.f;
	Node &b = o.b;
	RssSetup &s = o.s;
	TestWq &w = o.w;
	tfx::Qp &q = o.q;
	sroce_core_ah *ah = o.ah;
	Buffer &src = o.src;
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

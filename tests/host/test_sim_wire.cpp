// The host simulator's wire and nodes, with stub receivers in place of
// sroce_core_rx: batches, link faults, filter and tap, determinism, node
// devices and injection.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "env_host.h"
#include "sim.h"

namespace {

// A test packet: a sequence number, filler, and a CRC over both, so the
// receiver can tell order and damage.
constexpr unsigned int kLen = 100;

void send_numbered(sroce_env_batch *b, const sim::Path &p, uint32_t seq, unsigned int len = kLen) {
	unsigned char *d = nullptr;
	sroce_env_pkt *pkt = sroce_env_pkt_alloc(p.path, len, &d);
	REQUIRE(pkt);
	for (unsigned int i = 0; i < len - 4; i++)
		d[i] = uint8_t(seq * 7 + i);
	memcpy(d, &seq, 4);
	uint32_t crc = ~sroce_env_crc32_le(~0u, d, len - 4);
	memcpy(d + len - 4, &crc, 4);
	sroce_env_pkt_send(b, p.path, pkt);
}

struct Receiver {
	std::vector<uint32_t> seqs; // intact packets, in arrival order
	std::vector<uint64_t> times;
	uint64_t damaged = 0;

	sim::RxHook hook(sim::Sim &s) {
		return [this, &s](sroce_env_pkt *pkt, sroce_env_batch *) {
			unsigned int linear, total;
			sroce_env_pkt_head(pkt, &linear, &total);
			uint32_t seq, crc;
			REQUIRE(sroce_env_pkt_read(pkt, 0, &seq, 4) == 0);
			REQUIRE(sroce_env_pkt_read(pkt, total - 4, &crc, 4) == 0);
			if (~sroce_env_pkt_crc32(pkt, 0, total - 4, ~0u) == crc) {
				seqs.push_back(seq);
				times.push_back(s.now());
			} else {
				damaged++;
			}
			sroce_env_pkt_free(pkt);
		};
	}
	uint64_t out_of_order() const {
		uint64_t n = 0;
		for (size_t i = 1; i < seqs.size(); i++)
			n += seqs[i] < seqs[i - 1];
		return n;
	}
};

// Two nodes with a stub receiver on node 1.
struct Pair {
	sim::Sim s;
	int a, b;
	sim::Path ab;
	Receiver rx;
	explicit Pair(uint64_t seed) : s(seed), a(s.add_node()), b(s.add_node()), ab(s.path(a, b)) {
		s.set_rx_hook(b, rx.hook(s));
	}
	~Pair() { sroce_env_path_put(ab.path); }
};

} // namespace

TEST_CASE("a batch goes out after the call: packets then events in order", "[sim][batch]") {
	env_host::clear();
	Pair t(sim::seed_from_env(2));
	INFO("seed " << t.s.seed());
	int owner1 = 0, owner2 = 0;
	std::vector<std::pair<void *, int>> handled;
	t.s.set_event_handler([&](void *o, int k) { handled.emplace_back(o, k); });
	std::vector<uint32_t> tapped;
	t.s.set_tap([&](const sim::WirePacket &w) {
		uint32_t seq;
		memcpy(&seq, w.data, 4);
		tapped.push_back(seq);
		CHECK(handled.empty()); // packets are flushed before events
	});
	t.s.call([&](sroce_env_batch *b) {
		for (uint32_t i = 0; i < 5; i++)
			send_numbered(b, t.ab, i);
		sroce_env_event(b, &owner1, SROCE_ENV_EVENT_COMP);
		sroce_env_event(b, &owner2, 1);
		sroce_env_event(b, &owner1, 2);
		// Nothing leaves while the core call runs.
		CHECK(t.s.counters().sent == 0);
		CHECK(handled.empty());
	});
	CHECK(t.s.counters().sent == 5);
	CHECK(tapped == std::vector<uint32_t>{0, 1, 2, 3, 4});
	REQUIRE(handled.size() == 3);
	CHECK(handled[0] == std::make_pair((void *)&owner1, SROCE_ENV_EVENT_COMP));
	CHECK(handled[1] == std::make_pair((void *)&owner2, 1));
	CHECK(t.s.events_for(&owner1) == std::vector<int>{SROCE_ENV_EVENT_COMP, 2});
	// Delivery waits for the clock: the wire has latency.
	CHECK(t.rx.seqs.empty());
	t.s.run_for(10000);
	CHECK(t.rx.seqs == std::vector<uint32_t>{0, 1, 2, 3, 4});
	t.s.clear_events();
	CHECK(t.s.events().empty());
	CHECK(env_host::warnings() == 0);
}

TEST_CASE("fault rates over 100k packets are within tolerance", "[sim][wire]") {
	env_host::clear();
	long base = env_host::live_allocations();
	{
		Pair t(sim::seed_from_env(6));
		INFO("seed " << t.s.seed());
		sim::LinkConfig c;
		c.loss = 0.05;
		c.duplicate = 0.02;
		c.reorder = 0.1;
		c.corrupt = 0.03;
		t.s.set_link(t.a, t.b, c);
		const uint32_t n = 100000;
		t.s.call([&](sroce_env_batch *b) {
			for (uint32_t i = 0; i < n; i++)
				send_numbered(b, t.ab, i);
		});
		t.s.run_for(1000000000);
		const sim::Counters &k = t.s.counters();
		auto near = [](uint64_t got, double expect) {
			// Binomial: well within 5 standard deviations.
			return std::fabs(double(got) - expect) < 5 * std::sqrt(expect) + 1;
		};
		CHECK(k.sent == n);
		CHECK(near(k.dropped, n * 0.05));
		const double kept = n - double(k.dropped);
		CHECK(near(k.duplicated, kept * 0.02));
		const double copies = kept + double(k.duplicated);
		CHECK(near(k.corrupted, copies * 0.03));
		CHECK(near(k.reordered, copies * 0.1));
		CHECK(k.delivered == k.sent - k.dropped + k.duplicated);
		// The receiver sees the same: every flipped bit breaks its CRC.
		CHECK(t.rx.damaged == k.corrupted);
		CHECK(t.rx.seqs.size() + t.rx.damaged == k.delivered);
		CHECK(t.rx.out_of_order() > k.reordered / 4);
		const sim::Counters l = t.s.link_counters(t.a, t.b);
		CHECK(l.sent == k.sent);
		CHECK(l.bytes == uint64_t(n) * kLen);
		CHECK(t.s.link_counters(t.b, t.a).sent == 0);
	}
	CHECK(env_host::warnings() == 0);
	CHECK(env_host::live_allocations() == base);
}

TEST_CASE("a clean link is in order and keeps latency and bandwidth", "[sim][wire]") {
	Pair t(sim::seed_from_env(7));
	sim::LinkConfig c;
	c.latency_ns = 5000;
	c.bits_per_sec = 8000000000ull; // 1 byte per ns
	t.s.set_all_links(c);
	const uint64_t t0 = t.s.now();
	t.s.call([&](sroce_env_batch *b) {
		for (uint32_t i = 0; i < 1000; i++)
			send_numbered(b, t.ab, i, 1000);
	});
	t.s.run_for(10000000);
	REQUIRE(t.rx.seqs.size() == 1000);
	CHECK(t.rx.out_of_order() == 0);
	// Packet i leaves after i + 1 serialization times, then flies 5 us.
	CHECK(t.rx.times.front() == t0 + 1000 + 5000);
	CHECK(t.rx.times.back() == t0 + 1000 * 1000 + 5000);
	CHECK(t.s.counters().dropped == 0);
}

TEST_CASE("the filter drops chosen packets and the tap sees every fate", "[sim][wire]") {
	Pair t(sim::seed_from_env(8));
	std::vector<std::pair<uint32_t, bool>> seen;
	t.s.set_filter([](const sim::WirePacket &w) {
		uint32_t seq;
		memcpy(&seq, w.data, 4);
		return seq != 2;
	});
	t.s.set_tap([&](const sim::WirePacket &w) {
		uint32_t seq;
		memcpy(&seq, w.data, 4);
		CHECK(w.from == t.a);
		CHECK(w.to == t.b);
		CHECK(w.len == kLen);
		seen.emplace_back(seq, w.dropped);
	});
	t.s.call([&](sroce_env_batch *b) {
		for (uint32_t i = 0; i < 4; i++)
			send_numbered(b, t.ab, i);
	});
	t.s.run_for(100000);
	CHECK(seen == std::vector<std::pair<uint32_t, bool>>{{0, false}, {1, false}, {2, true}, {3, false}});
	CHECK(t.rx.seqs == std::vector<uint32_t>{0, 1, 3});
}

namespace {
// A ping-pong with faults both ways, a retransmit timer and work: its trace
// depends on every random choice.
uint64_t ping_pong_trace(uint64_t seed, sim::Counters *out) {
	sim::Sim s(seed);
	int a = s.add_node(), b = s.add_node();
	sim::LinkConfig c;
	c.loss = 0.1;
	c.duplicate = 0.05;
	c.reorder = 0.2;
	c.corrupt = 0.05;
	s.set_all_links(c);
	sim::Path ab = s.path(a, b), ba = s.path(b, a);
	uint32_t acked = 0;
	sroce_env_timer *retx = nullptr;
	auto send_next = [&](sroce_env_batch *bt) {
		send_numbered(bt, ab, acked);
		sroce_env_timer_arm(retx, 50000);
	};
	struct Ctx {
		std::function<void(sroce_env_batch *)> fn;
	} ctx{send_next};
	retx = sroce_env_timer_create([](void *arg, sroce_env_batch *bt) { static_cast<Ctx *>(arg)->fn(bt); }, &ctx);
	Receiver echo;
	s.set_rx_hook(b, [&](sroce_env_pkt *pkt, sroce_env_batch *bt) {
		uint32_t seq;
		REQUIRE(sroce_env_pkt_read(pkt, 0, &seq, 4) == 0);
		sroce_env_pkt_free(pkt);
		send_numbered(bt, ba, seq); // damaged or not: the sender checks
	});
	s.set_rx_hook(a, echo.hook(s));
	s.call(send_next);
	s.run_until([&] {
		while (!echo.seqs.empty() && echo.seqs.back() == acked) {
			acked++;
			echo.seqs.clear();
			s.call(send_next);
		}
		return acked == 200;
	}, 1000000000ull);
	CHECK(acked == 200);
	sroce_env_timer_destroy(retx);
	sroce_env_path_put(ab.path);
	sroce_env_path_put(ba.path);
	*out = s.counters();
	return s.trace_hash();
}
} // namespace

TEST_CASE("the same seed replays the same run; another seed does not", "[sim][determinism]") {
	env_host::clear();
	long base = env_host::live_allocations();
	const uint64_t seed = sim::seed_from_env(42);
	INFO("seed " << seed);
	sim::Counters c1, c2, c3;
	uint64_t h1 = ping_pong_trace(seed, &c1);
	uint64_t h2 = ping_pong_trace(seed, &c2);
	uint64_t h3 = ping_pong_trace(seed + 1, &c3);
	CHECK(h1 == h2);
	CHECK(c1.sent == c2.sent);
	CHECK(c1.dropped == c2.dropped);
	CHECK(c1.corrupted == c2.corrupted);
	CHECK(h1 != h3);
	CHECK(c1.dropped > 0);
	CHECK(c1.corrupted > 0);
	CHECK(env_host::warnings() == 0);
	CHECK(env_host::live_allocations() == base);
}

TEST_CASE("nodes are core devices with IPv4-mapped or IPv6 GIDs", "[sim][node]") {
	env_host::clear();
	long base = env_host::live_allocations();
	{
		sim::Sim s(sim::seed_from_env(10));
		int a = s.add_node(), b = s.add_node();
		REQUIRE(a == 0);
		REQUIRE(b == 1);
		CHECK(s.dev(a) != s.dev(b));
		sroce_core_port_attr pa{};
		sroce_core_query_port(s.dev(b), &pa);
		CHECK(pa.state == SROCE_PORT_ACTIVE);
		CHECK(pa.active_mtu == SROCE_MTU_4096);
		sim::Path p = s.path(a, b);
		const unsigned char src[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
		const unsigned char dst[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2};
		CHECK(p.info.ipv6 == 0);
		CHECK(memcmp(p.info.src, src, 16) == 0);
		CHECK(memcmp(p.info.dst, dst, 16) == 0);
		sim::Path p6 = s.path(b, a, true);
		CHECK(p6.info.ipv6 == 1);
		CHECK(p6.info.src[0] == 0xfd);
		CHECK(p6.info.src[15] == 2);
		CHECK(p6.info.dst[15] == 1);
		sroce_env_path_put(p.path);
		sroce_env_path_put(p6.path);
		// In flight at the end: packets and their routes are freed with the Sim.
		sim::Path q = s.path(a, b);
		s.set_rx_hook(b, [](sroce_env_pkt *pkt, sroce_env_batch *) { sroce_env_pkt_free(pkt); });
		s.call([&](sroce_env_batch *bt) { send_numbered(bt, q, 1); });
		sroce_env_path_put(q.path);
		CHECK_FALSE(s.idle());
	}
	CHECK(env_host::warnings() == 0);
	CHECK(env_host::live_allocations() == base);
}

TEST_CASE("injected bytes reach the node; a removed node's packets are dropped", "[sim][node]") {
	env_host::clear();
	long base = env_host::live_allocations();
	{
		sim::Sim s(sim::seed_from_env(11));
		int a = s.add_node(), b = s.add_node(), c = s.add_node();
		std::vector<unsigned char> got;
		s.set_rx_hook(b, [&](sroce_env_pkt *pkt, sroce_env_batch *) {
			unsigned int lin, total;
			sroce_env_pkt_head(pkt, &lin, &total);
			got.resize(total);
			REQUIRE(sroce_env_pkt_read(pkt, 0, got.data(), total) == 0);
			sroce_env_pkt_free(pkt);
		});
		int tapped = 0;
		s.set_tap([&](const sim::WirePacket &) { tapped++; });
		const unsigned char hostile[3] = {0x45, 0xff, 0x00};
		s.inject(a, b, hostile, sizeof(hostile));
		s.run_for(10000);
		CHECK(got == std::vector<unsigned char>(hostile, hostile + 3));
		CHECK(tapped == 1);

		s.remove_node(c);
		CHECK(s.dev(c) == nullptr);
		s.inject(a, c, hostile, sizeof(hostile));
		s.run_for(10000);
		CHECK(s.link_counters(a, c).dropped == 1);
		CHECK(s.link_counters(a, c).delivered == 0);
		CHECK(s.counters().delivered == 1);
	}
	CHECK(env_host::warnings() == 0);
	CHECK(env_host::live_allocations() == base);
}

// The host simulator itself, driven through env.h as the core drives it,
// with stub receivers in place of sroce_core_rx.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
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

// Records when a timer or work callback ran.
struct Probe {
	sim::Sim *s;
	std::vector<uint64_t> runs;
	std::function<void(sroce_env_batch *)> also;
	static void cb(void *arg, sroce_env_batch *b) {
		auto *p = static_cast<Probe *>(arg);
		p->runs.push_back(p->s->now());
		if (p->also)
			p->also(b);
	}
};

} // namespace

TEST_CASE("crc32_le has the kernel's convention", "[sim][crc]") {
	const char *check = "123456789";
	// The standard CRC-32 is crc32_le seeded with ~0 and inverted.
	CHECK(~sroce_env_crc32_le(~0u, check, 9) == 0xCBF43926u);
	// No inversion inside: zeros keep a zero CRC, and it continues in pieces.
	const unsigned char zeros[16] = {};
	CHECK(sroce_env_crc32_le(0, zeros, 16) == 0);
	CHECK(sroce_env_crc32_le(sroce_env_crc32_le(~0u, check, 4), check + 4, 5) ==
	      sroce_env_crc32_le(~0u, check, 9));
}

TEST_CASE("received packets can be fully linear or fragmented after a short head", "[sim][pkt]") {
	env_host::clear();
	long base = env_host::live_allocations();
	for (unsigned int linear : {0u, 60u, 1u}) {
		sim::Sim s(sim::seed_from_env(1));
		INFO("seed " << s.seed() << " linear " << linear);
		int a = s.add_node(), b = s.add_node();
		s.set_rx_linear(b, linear);
		std::vector<unsigned char> sent(1500);
		for (size_t i = 0; i < sent.size(); i++)
			sent[i] = uint8_t(i * 31 + 5);
		bool seen = false;
		s.set_rx_hook(b, [&](sroce_env_pkt *pkt, sroce_env_batch *) {
			seen = true;
			unsigned int lin, total;
			const unsigned char *head = sroce_env_pkt_head(pkt, &lin, &total);
			CHECK(total == 1500);
			CHECK(lin == (linear ? linear : 1500));
			CHECK(memcmp(head, sent.data(), lin) == 0);
			std::vector<unsigned char> got(1500);
			REQUIRE(sroce_env_pkt_read(pkt, 0, got.data(), 1500) == 0);
			CHECK(got == sent);
			// Reads across fragment boundaries, and the edges.
			unsigned char mid[300];
			REQUIRE(sroce_env_pkt_read(pkt, 50, mid, 300) == 0);
			CHECK(memcmp(mid, sent.data() + 50, 300) == 0);
			CHECK(sroce_env_pkt_read(pkt, 1500, mid, 0) == 0);
			CHECK(sroce_env_pkt_read(pkt, 1400, mid, 101) == -EFAULT);
			CHECK(sroce_env_pkt_read(pkt, 1501, mid, 0) == -EFAULT);
			CHECK(sroce_env_pkt_read(pkt, 0xffffff00u, mid, 0x200) == -EFAULT);
			CHECK(sroce_env_pkt_crc32(pkt, 10, 1000, ~0u) == sroce_env_crc32_le(~0u, sent.data() + 10, 1000));
			sroce_env_pkt_free(pkt);
		});
		sim::Path p = s.path(a, b);
		s.call([&](sroce_env_batch *bt) {
			unsigned char *d;
			sroce_env_pkt *pkt = sroce_env_pkt_alloc(p.path, 1500, &d);
			REQUIRE(pkt);
			memcpy(d, sent.data(), 1500);
			sroce_env_pkt_send(bt, p.path, pkt);
		});
		sroce_env_path_put(p.path);
		s.run_for(1000000);
		CHECK(seen);
	}
	CHECK(env_host::warnings() == 0);
	CHECK(env_host::live_allocations() == base);
}

TEST_CASE("a fresh packet is poisoned and its allocation can fail", "[sim][pkt]") {
	env_host::clear();
	long base = env_host::live_allocations();
	unsigned char *d = nullptr;
	sroce_env_pkt *pkt = sroce_env_pkt_alloc(nullptr, 64, &d);
	REQUIRE(pkt);
	CHECK(d[0] == 0xa5);
	CHECK(d[63] == 0xa5);
	CHECK(env_host::live_allocations() == base + 1);
	sroce_env_pkt_free(pkt);
	env_host::fail_nth_allocation(0);
	CHECK(sroce_env_pkt_alloc(nullptr, 64, &d) == nullptr);
	CHECK(env_host::live_allocations() == base);
}

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

TEST_CASE("timers fire in expiry order on the virtual clock; re-arm and cancel", "[sim][timer]") {
	env_host::clear();
	long base = env_host::live_allocations();
	{
		std::optional<sim::Sim> sim_;
		sim::Sim &s = sim_.emplace(sim::seed_from_env(3));
		const uint64_t t0 = s.now();
		CHECK(sroce_env_now_ns() == t0);
		Probe p1{&s}, p2{&s}, p3{&s}, p4{&s};
		auto *t1 = sroce_env_timer_create(Probe::cb, &p1);
		auto *t2 = sroce_env_timer_create(Probe::cb, &p2);
		auto *t3 = sroce_env_timer_create(Probe::cb, &p3);
		auto *t4 = sroce_env_timer_create(Probe::cb, &p4);
		REQUIRE((t1 && t2 && t3 && t4));
		sroce_env_timer_arm(t1, 300);
		sroce_env_timer_arm(t2, 100);
		sroce_env_timer_arm(t3, 200);
		sroce_env_timer_arm(t3, 500); // re-arm moves it; it fires once
		sroce_env_timer_arm(t4, 50);
		sroce_env_timer_cancel(t4);
		std::vector<Probe *> order;
		for (Probe *p : {&p1, &p2, &p3})
			p->also = [&order, p](sroce_env_batch *) { order.push_back(p); };
		s.run_for(1000);
		CHECK(order == std::vector<Probe *>{&p2, &p1, &p3});
		CHECK(p1.runs == std::vector<uint64_t>{t0 + 300});
		CHECK(p2.runs == std::vector<uint64_t>{t0 + 100});
		CHECK(p3.runs == std::vector<uint64_t>{t0 + 500});
		CHECK(p4.runs.empty());
		CHECK(s.now() == t0 + 1000);
		CHECK(sroce_env_now_ns() == t0 + 1000);

		// A callback re-arms its own timer: periodic until cancelled.
		p1.runs.clear();
		p1.also = [&](sroce_env_batch *) { sroce_env_timer_arm(t1, 1000); };
		sroce_env_timer_arm(t1, 1000);
		s.run_for(5500);
		CHECK(p1.runs.size() == 5);
		sroce_env_timer_cancel(t1);
		s.run_for(10000);
		CHECK(p1.runs.size() == 5);

		// Equal expiry: arming order.
		order.clear();
		sroce_env_timer_arm(t3, 10);
		sroce_env_timer_arm(t2, 10);
		p1.also = nullptr;
		s.run_for(10);
		CHECK(order == std::vector<Probe *>{&p3, &p2});

		// Destroying a pending timer: it never fires; a timer left
		// pending when the Sim ends is just freed by its owner.
		sroce_env_timer_arm(t2, 10);
		sroce_env_timer_destroy(t2);
		sroce_env_timer_arm(t3, 10);
		s.run_for(5);
		sroce_env_timer_destroy(t1);
		sroce_env_timer_destroy(t4);
		sroce_env_timer_destroy(nullptr);
		CHECK(p2.runs.size() == 2);
		// t3 is still armed when the Sim ends, and destroyed after.
		sim_.reset();
		sroce_env_timer_destroy(t3);
		CHECK(p3.runs.size() == 2);
	}
	CHECK(env_host::warnings() == 0);
	CHECK(env_host::live_allocations() == base);
}

TEST_CASE("work runs once per queueing and again if queued while running", "[sim][work]") {
	env_host::clear();
	long base = env_host::live_allocations();
	{
		sim::Sim s(sim::seed_from_env(4));
		Probe p{&s};
		auto *w = sroce_env_work_create(Probe::cb, &p);
		REQUIRE(w);
		sroce_env_work_queue(w);
		sroce_env_work_queue(w); // pending: no-op
		CHECK(p.runs.empty());   // "soon", not now
		s.run_for(0);
		CHECK(p.runs.size() == 1);

		// Queued from inside itself: runs once more, at the same instant.
		int requeues = 1;
		p.also = [&](sroce_env_batch *) {
			if (requeues-- > 0) {
				sroce_env_work_queue(w);
				sroce_env_work_queue(w);
			}
		};
		sroce_env_work_queue(w);
		s.run_for(0);
		CHECK(p.runs.size() == 3);
		CHECK(p.runs[1] == p.runs[2]);

		// Cancelled while pending: does not run.
		sroce_env_work_queue(w);
		sroce_env_work_cancel(w);
		s.run_for(100);
		CHECK(p.runs.size() == 3);
		CHECK(s.idle());

		// Destroy cancels pending work. Work is process context: a sleeping
		// allocation there is fine.
		p.also = [&](sroce_env_batch *) { sroce_env_free(sroce_env_zalloc(8, 0)); };
		sroce_env_work_queue(w);
		sroce_env_work_destroy(w); // cancels first
		s.run_for(100);
		CHECK(p.runs.size() == 3);
		w = sroce_env_work_create(Probe::cb, &p);
		sroce_env_work_queue(w);
		s.run_for(0);
		CHECK(p.runs.size() == 4);
		sroce_env_work_destroy(w);
	}
	CHECK(env_host::warnings() == 0);
	CHECK(env_host::live_allocations() == base);
}

TEST_CASE("timer callbacks and receive are atomic context; misuse there warns", "[sim][context]") {
	env_host::clear();
	sim::Sim s(sim::seed_from_env(5));
	Probe p{&s};
	auto *t = sroce_env_timer_create(Probe::cb, &p);
	auto *w = sroce_env_work_create(Probe::cb, &p);
	p.also = [&](sroce_env_batch *) {
		sroce_env_free(sroce_env_zalloc(8, 1)); // GFP_ATOMIC: fine
	};
	sroce_env_timer_arm(t, 1);
	s.run_for(1);
	CHECK(env_host::warnings() == 0);

	p.also = [&](sroce_env_batch *) { sroce_env_free(sroce_env_zalloc(8, 0)); };
	sroce_env_timer_arm(t, 1);
	s.run_for(1);
	CHECK(env_host::warnings() == 1);

	p.also = [&](sroce_env_batch *) { sroce_env_work_cancel(w); };
	sroce_env_timer_arm(t, 1);
	s.run_for(1);
	CHECK(env_host::warnings() == 2);

	// Work cancelling itself would wait for itself.
	p.also = [&](sroce_env_batch *) { sroce_env_work_cancel(w); };
	sroce_env_work_queue(w);
	s.run_for(1);
	CHECK(env_host::warnings() == 3);

	// Under a spinlock, too.
	auto *lock = sroce_env_spin_create(SROCE_LOCK_TEST);
	unsigned long f = sroce_env_spin_lock(lock);
	sroce_env_free(sroce_env_zalloc(8, 0));
	sroce_env_spin_unlock(lock, f);
	sroce_env_spin_destroy(lock);
	CHECK(env_host::warnings() == 4);
	CHECK(p.runs.size() == 4);
	sroce_env_timer_destroy(t);
	sroce_env_work_destroy(w);
	env_host::clear();
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

TEST_CASE("run_until stops at the predicate or at the virtual deadline", "[sim][run]") {
	sim::Sim s(sim::seed_from_env(9));
	Probe p{&s};
	auto *t = sroce_env_timer_create(Probe::cb, &p);
	const uint64_t t0 = s.now();
	sroce_env_timer_arm(t, 700);
	CHECK(s.run_until([&] { return !p.runs.empty(); }, 1000));
	CHECK(s.now() == t0 + 700);
	CHECK_FALSE(s.run_until([] { return false; }, 1000));
	CHECK(s.now() == t0 + 1700);
	sroce_env_timer_arm(t, 5000);
	CHECK_FALSE(s.run_until([&] { return p.runs.size() == 2; }, 1000));
	CHECK(s.now() == t0 + 2700);
	CHECK_FALSE(s.idle());
	CHECK(s.step());
	CHECK(s.now() == t0 + 6700);
	CHECK(p.runs.size() == 2);
	CHECK_FALSE(s.step());
	sroce_env_timer_destroy(t);
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

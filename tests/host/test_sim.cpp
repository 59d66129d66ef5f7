// The host simulator's env itself, driven through env.h as the core drives
// it: CRC, packet buffers, timers, work, atomic context and the run loop.
// Packets on the simulated wire are in test_sim_wire.cpp.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "env_host.h"
#include "sim.h"

namespace {

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

// Receive steering of a connected user QP (rx_steer.h, env.h's
// sroce_env_rx_steer_qp): its packets worth a trip (a payload of 512 bytes
// and more, or an answer that clocks its sending) are offered to the env for
// the CPU its owner was last seen on; while any waits in a CPU's queue the
// next ones must follow it there; a packet comes back with its token
// exactly once, received or dropped. The test plays the env's per-CPU
// queues: it holds what it takes and hands it back later, in order. The
// user QP is a's (user_sq_fixture.h); b's kernel QP writes into it.
#include <catch2/catch.hpp>

#include <atomic>
#include <deque>
#include <functional>
#include <thread>

#include "env_host.h"
#include "rx_steer.h"
#include "user_sq_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {
const uint64_t any_cpu = ~0ull; // the owner may run anywhere (the glue tests the bits)

struct Offer {
	sroce_env_pkt *pkt;
	int cpu;
	bool must_queue;
	void *token;
};

// Setup (user_sq_fixture.h) with the env's side of steering: every offer
// recorded; taken ones wait in `queued` until pump() or drop().
struct Steered : Setup {
	std::vector<Offer> offers;
	std::deque<Offer> queued;
	bool take = true;
	std::function<void()> on_offer;
	Buffer &ta; // a's target of b's WRITEs
	explicit Steered(uint64_t seed, size_t target = 1 << 20)
		: Setup(seed, target), ta(f.buffer(a, 1 << 20, all_access)) {
		f.sim().set_steer_qp([this](sroce_env_pkt *pkt, int cpu, bool must, void *token) {
			offers.push_back({pkt, cpu, must, token});
			if (on_offer)
				on_offer();
			if (!take && !must)
				return false;
			queued.push_back(offers.back());
			return true;
		});
	}
	~Steered() { pump(); }
	// The CPUs' queues run: everything taken is received, in order.
	void pump() {
		while (!queued.empty()) {
			Offer o = queued.front();
			queued.pop_front();
			f.sim().call([&](sroce_env_batch *b) { sroce_core_rx_steered(a.dev, o.pkt, o.token, b); });
		}
	}
	// The first n queued are dropped (their CPU's queue was full).
	void drop(size_t n) {
		for (; n && !queued.empty(); n--) {
			Offer o = queued.front();
			queued.pop_front();
			sroce_core_rx_steer_drop(a.dev, o.pkt, o.token);
		}
	}
	// b's kernel QP WRITEs len bytes from rb + off to the user QP's ta +
	// off, then time for its packets to arrive (and be offered).
	void write_in(uint64_t id, unsigned int off, unsigned int len) {
		sroce_wqe w = wqe(id, ib::wr_rdma_write, 1);
		w.rdma.remote_addr = iova_of(a, ta) + off;
		w.rdma.rkey = f.lkey(ta);
		REQUIRE(f.post_send(qb, w, {sge_of(f, b, rb, off, len)}) == 0);
		f.sim().run_for(50000);
	}
	// The user QP WRITEs len bytes from la to rb; `ring`: its doorbell
	// (else published only, fetched with the next).
	void write_out(uint64_t id, unsigned int len, bool ring = true) {
		sroce_wqe w = wqe(id, ib::wr_rdma_write, 1);
		w.rdma.remote_addr = iova_of(b, rb);
		w.rdma.rkey = f.lkey(rb);
		u.post(w, sge_of(f, a, la, 0, len), ring);
	}
	void write_len_out(uint64_t id, unsigned int len) {
		write_out(id, len);
		f.sim().run_for(100000);
	}
	// The owner seen on cpu (as a modify_qp there tells the core).
	void owner_on(int cpu) { sroce_core_qp_owner_seen(u.qp, cpu, &any_cpu, sizeof(any_cpu)); }
	bool same(size_t off, size_t len) const { return std::memcmp(ta.data + off, rb.data + off, len) == 0; }
	unsigned long long live_qps() {
		sroce_core_counts c{};
		sroce_core_dev_counts(a.dev, &c);
		return c.qps;
	}
};
} // namespace

TEST_CASE("receive steering: a user QP's packets go to its owner's CPU, and follow it only once none waits",
	  "[transport][rx-steer]") {
	Steered t(81);
	t.owner_on(3);
	t.write_in(1, 0, 4096); // four 1 KiB packets
	REQUIRE(t.offers.size() == 4);
	CHECK(t.offers[0].cpu == 3);
	CHECK_FALSE(t.offers[0].must_queue);
	CHECK(t.offers[0].token == static_cast<void *>(t.u.qp));
	for (size_t i = 1; i < 4; i++) {
		INFO("offer " << i);
		CHECK(t.offers[i].cpu == 3);
		CHECK(t.offers[i].must_queue);
	}
	std::vector<sroce_cqe> c;
	CHECK(t.f.poll(t.b).empty()); // the WRITE waits on "CPU 3"
	// The owner moves while they wait: the next must still follow them,
	// and a small one too, which alone would stay where it arrived.
	t.owner_on(5);
	t.write_in(2, 4096, 4096);
	t.write_in(3, 8192, 64);
	REQUIRE(t.offers.size() == 9);
	for (size_t i = 4; i < 9; i++) {
		INFO("offer " << i);
		CHECK(t.offers[i].cpu == 3);
		CHECK(t.offers[i].must_queue);
	}
	t.pump();
	REQUIRE(t.f.wait_cqes(t.b, 3, c));
	for (const auto &e : c)
		CHECK(int(e.status) == ib::wc_success);
	CHECK(t.same(0, 8192 + 64));

	// None waits now: the next goes where the owner is; a small one alone
	// stays here (a ping-pong takes no hop).
	size_t before = t.offers.size();
	t.write_in(4, 16384, 1024);
	REQUIRE(t.offers.size() == before + 1);
	CHECK(t.offers[before].cpu == 5);
	CHECK_FALSE(t.offers[before].must_queue);
	t.pump();
	t.write_in(5, 20480, 64);
	CHECK(t.offers.size() == before + 1);
	c.clear();
	REQUIRE(t.f.wait_cqes(t.b, 2, c));
	CHECK(t.same(16384, 1024));
	CHECK(t.same(20480, 64));
	CHECK(device_counter(t.a, SROCE_CNT_RX_STEERED) == t.offers.size());
	CHECK(device_counter(t.a, SROCE_CNT_RX_STEER_DROPS) == 0);
}

TEST_CASE("receive steering: the ring's hint, the owner's own choice, and the env saying 'here'",
	  "[transport][rx-steer]") {
	Steered t(82);
	// Steering on (its modify), with no CPU the core knows: no hint in the
	// ring and no system call seen, so nothing is offered.
	sroce_core_qp_owner_seen(t.u.qp, -1, &any_cpu, sizeof(any_cpu));
	t.write_in(1, 0, 4096);
	CHECK(t.offers.empty());
	// The owner posts from CPU 2 (its provider's hint, read with the WQE).
	t.u.say_cpu(2);
	sroce_wqe w = wqe(100, ib::wr_rdma_write, 1);
	w.rdma.remote_addr = iova_of(t.b, t.rb);
	w.rdma.rkey = t.f.lkey(t.rb);
	t.u.post(w, sge_of(t.f, t.a, t.la, 0, 64));
	t.f.sim().run_for(100000);
	t.pump();
	std::vector<sroce_cqe> c;
	REQUIRE(t.f.wait_cqes(t.a, 1, c));
	size_t before = t.offers.size();
	t.write_in(2, 4096, 2048);
	REQUIRE(t.offers.size() > before);
	CHECK(t.offers[before].cpu == 2);
	t.pump();
	// Its own choice wins over where it posts, until it gives it up.
	sroce_core_qp_pin_rx_cpu(t.u.qp, 7);
	before = t.offers.size();
	t.write_in(3, 8192, 2048);
	REQUIRE(t.offers.size() > before);
	CHECK(t.offers[before].cpu == 7);
	t.pump();
	sroce_core_qp_pin_rx_cpu(t.u.qp, -1);
	before = t.offers.size();
	t.write_in(4, 12288, 2048);
	REQUIRE(t.offers.size() > before);
	CHECK(t.offers[before].cpu == 2);
	t.pump();
	// The env declines (the packet is on that CPU already): received here,
	// and nothing counts as waiting, so no later one must queue.
	t.take = false;
	before = t.offers.size();
	for (unsigned int i = 0; i < 10; i++)
		t.write_in(10 + i, 16384 + 4096 * i, 3000);
	c.clear();
	REQUIRE(t.f.wait_cqes(t.b, 14, c));
	for (const auto &e : c)
		CHECK(int(e.status) == ib::wc_success);
	CHECK(t.same(0, 16384 + 4096 * 9 + 3000));
	REQUIRE(t.offers.size() > before);
	for (size_t i = before; i < t.offers.size(); i++)
		CHECK_FALSE(t.offers[i].must_queue);
	for (const auto &o : t.offers) // only the user QP's: b's kernel QP is never asked
		CHECK(o.token == static_cast<void *>(t.u.qp));
	CHECK(device_counter(t.b, SROCE_CNT_RX_STEERED) == 0);
}

TEST_CASE("receive steering: answers are steered while they clock the owner's sending, not in a ping-pong",
	  "[transport][rx-steer]") {
	Steered t(83);
	t.owner_on(1);
	// One WRITE at a time: its ACK finds nothing more to send.
	t.write_len_out(1, 64);
	t.pump();
	CHECK(t.offers.empty());
	// 200 WRITEs of 2 KiB, one doorbell: more than a run sends (tx_budget),
	// so answers come while more waits, and run the sending where the owner is.
	for (unsigned int i = 0; i < 200; i++)
		t.write_out(2 + i, 2048, i == 199);
	std::vector<sroce_cqe> c;
	for (int k = 0; k < 200 && c.size() < 201; k++) {
		t.f.sim().run_for(1000000);
		t.pump();
		for (auto &e : t.f.poll(t.a))
			c.push_back(e);
	}
	REQUIRE(c.size() == 201);
	for (const auto &e : c)
		CHECK(int(e.status) == ib::wc_success);
	REQUIRE_FALSE(t.offers.empty());
	for (const auto &o : t.offers)
		CHECK(o.cpu == 1);
}

TEST_CASE("receive steering: packets dropped from a full queue are recovered, every byte right",
	  "[transport][rx-steer]") {
	Steered t(84);
	t.owner_on(1);
	unsigned long long dropped = 0;
	for (unsigned int i = 0; i < 40; i++) {
		t.write_in(i, 8192 * i, 1000 + 150 * i);
		if (i % 3 == 0) {
			dropped += std::min<size_t>(t.queued.size(), 2);
			t.drop(2);
		}
		t.pump();
	}
	// The lost packets are made up by NAKs, the probe or the retry timer.
	std::vector<sroce_cqe> c;
	for (int k = 0; k < 200 && c.size() < 40; k++) {
		t.f.sim().run_for(10000000);
		t.pump();
		for (auto &e : t.f.poll(t.b))
			c.push_back(e);
	}
	REQUIRE(c.size() == 40);
	for (unsigned int i = 0; i < 40; i++) {
		INFO("WQE " << i);
		CHECK(c[i].wr_id == i);
		CHECK(int(c[i].status) == ib::wc_success);
		CHECK(t.same(8192 * i, 1000 + 150 * i));
	}
	CHECK(dropped > 0);
	CHECK(device_counter(t.a, SROCE_CNT_RX_STEER_DROPS) == dropped);
	// Steered counts only what was received there (it counted drops too).
	CHECK(device_counter(t.a, SROCE_CNT_RX_STEERED) + dropped == t.offers.size());
}

TEST_CASE("receive steering: a QP destroyed with packets waiting lives until they come back, then is gone",
	  "[transport][rx-steer]") {
	Steered t(85);
	t.owner_on(1);
	t.write_in(1, 0, 4096);
	REQUIRE(!t.queued.empty());
	unsigned long long qps = t.live_qps(), bad_qpn = device_counter(t.a, SROCE_CNT_RX_BAD_QPN);
	size_t waiting = t.queued.size();
	t.u.destroy();
	CHECK(t.live_qps() == qps); // the waiting packets' references
	t.pump();
	CHECK(t.live_qps() == qps - 1);
	// Received for no QP: the number may already be another's.
	CHECK(device_counter(t.a, SROCE_CNT_RX_BAD_QPN) == bad_qpn + waiting);
}

TEST_CASE("receive steering: a QP takes at most RxSteer::max_queued places in the CPUs' queues",
	  "[transport][rx-steer]") {
	Steered t(86);
	t.owner_on(1);
	// 64 WRITEs of 8 KiB while none is received, every packet arriving
	// twice (b's window alone stops at the cap): past the cap the QP's
	// packets are dropped, then recovered.
	sim::LinkConfig dup;
	dup.duplicate = 1.0;
	t.f.sim().set_link(t.b.id, t.a.id, dup);
	for (unsigned int i = 0; i < 64; i++)
		t.write_in(i, 8192 * i, 8192);
	t.f.sim().run_for(2000000);
	INFO("offered " << t.offers.size() << ", waiting " << t.queued.size());
	CHECK(t.queued.size() == sroce::RxSteer::max_queued);
	CHECK(t.offers.size() == t.queued.size()); // the rest were dropped before any offer
	CHECK(device_counter(t.a, SROCE_CNT_RX_STEER_DROPS) > 0);
	std::vector<sroce_cqe> c;
	for (int k = 0; k < 300 && c.size() < 64; k++) {
		t.pump();
		t.f.sim().run_for(10000000);
		for (auto &e : t.f.poll(t.b))
			c.push_back(e);
	}
	REQUIRE(c.size() == 64);
	for (const auto &e : c)
		CHECK(int(e.status) == ib::wc_success);
	CHECK(t.same(0, 8192 * 64));
}

TEST_CASE("receive steering: off for a QP (rx_steer=N at its modify), nothing is offered once none waits",
	  "[transport][rx-steer]") {
	Steered t(87);
	t.owner_on(1);
	t.write_in(1, 0, 4096);
	REQUIRE(t.queued.size() == 4);
	// Off while four wait: the next still follow them, in order.
	sroce_core_qp_owner_seen(t.u.qp, 1, nullptr, 0);
	t.write_in(2, 4096, 4096);
	REQUIRE(t.offers.size() == 8);
	for (size_t i = 4; i < 8; i++)
		CHECK(t.offers[i].must_queue);
	t.pump();
	// None waits: received where they arrive, never offered.
	t.write_in(3, 8192, 8192);
	CHECK(t.offers.size() == 8);
	std::vector<sroce_cqe> c;
	REQUIRE(t.f.wait_cqes(t.b, 3, c));
	for (const auto &e : c)
		CHECK(int(e.status) == ib::wc_success);
	CHECK(t.same(0, 16384));
	// On again at the next modify.
	t.owner_on(1);
	t.write_in(4, 16384, 4096);
	CHECK(t.offers.size() == 12);
}

// The choice and the count are one atomic word: packets of one QP arriving
// at once on two CPUs, each with the owner on a different CPU, never wait
// on two CPUs at the same time (found by review: a load, a store and an
// add in three steps let two "first" packets go two ways).
TEST_CASE("receive steering: concurrent arrivals never leave a QP's packets waiting on two CPUs",
	  "[transport][rx-steer]") {
	// Rounds: both threads wait at a line, then each offers a packet with
	// the owner on "its" CPU, from none waiting; both must get one CPU.
	sroce::RxSteer s;
	constexpr int rounds = 20000;
	std::atomic<int> arrived{0};
	static int got[2][rounds];
	auto arrive = [&](int me) {
		int k = 0;
		auto both_here = [&] { // a spin barrier of the two threads
			k++;
			arrived.fetch_add(1);
			while (arrived.load() < 2 * k)
				;
		};
		for (int r = 0; r < rounds; r++) {
			both_here(); // the other received its last: none waits
			got[me][r] = s.begin(me).cpu;
			both_here();
			s.end();
		}
	};
	std::thread a(arrive, 0), b(arrive, 1);
	a.join();
	b.join();
	int split = 0, first_wins[2] = {0, 0};
	for (int r = 0; r < rounds; r++) {
		split += got[0][r] != got[1][r];
		first_wins[got[0][r] == 1 ? 1 : 0]++;
	}
	INFO("rounds won by each thread's CPU: " << first_wins[0] << ", " << first_wins[1]);
	CHECK(split == 0);
	CHECK(s.in_flight() == 0);
}

TEST_CASE("receive steering: two first modifies at once keep one copy of the allowed CPUs",
	  "[transport][rx-steer]") {
	// uverbs holds a QP shared for modify_qp, so two threads may modify a
	// new QP at once. Both saw no copy and stored their own: one leaked.
	constexpr int rounds = 20000;
	long before = env_host::live_allocations();
	std::atomic<int> arrived{0}, unset{0};
	sroce::RxSteer *s = nullptr;
	auto modify = [&](int me) {
		int k = 0;
		auto both_here = [&] {
			k++;
			arrived.fetch_add(1);
			while (arrived.load() < 2 * k)
				;
		};
		for (int r = 0; r < rounds; r++) {
			if (me == 0)
				s = new sroce::RxSteer;
			both_here();
			s->set_allowed(&any_cpu, sizeof(any_cpu));
			both_here();
			if (me == 0) { // Catch's CHECK is not for threads
				unset += s->allowed() == nullptr;
				delete s;
			}
			both_here();
		}
	};
	std::thread a(modify, 0), b(modify, 1);
	a.join();
	b.join();
	CHECK(unset == 0);
	CHECK(env_host::live_allocations() == before);
}

// Receive steering of a connected user QP (rx_steer.h, env.h's
// sroce_env_rx_steer_qp): its packets are offered to the env for the CPU
// its owner was last seen on; while any waits in a CPU's queue the next
// ones must follow it there; a packet comes back with its token exactly
// once, received or dropped. The test plays the env's per-CPU queues: it
// holds what it takes and hands it back later, in order.
#include <catch2/catch.hpp>

#include <atomic>
#include <deque>
#include <functional>
#include <thread>

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
	explicit Steered(uint64_t seed, size_t target = 1 << 20) : Setup(seed, target) {
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
	// WRITE id of len (<= 4096) bytes from the start of la to rb + off,
	// then time for its answers to arrive (and be offered).
	void write_len(uint64_t id, unsigned int off, unsigned int len) {
		sroce_wqe w = wqe(id, ib::wr_rdma_write, 1);
		w.rdma.remote_addr = iova_of(b, rb) + off;
		w.rdma.rkey = f.lkey(rb);
		u.post(w, sge_of(f, a, la, 0, len));
		f.sim().run_for(50000);
	}
	unsigned long long live_qps() {
		sroce_core_counts c{};
		sroce_core_dev_counts(a.dev, &c);
		return c.qps;
	}
};
// The next posts say no CPU (an old provider's zero).
void h_cpu_silent(Steered &t) { t.u.hdr()->poster_cpu = 0; }
} // namespace

TEST_CASE("receive steering: a user QP's packets go to the CPU its owner posted from, and follow it only once none "
	  "waits",
	  "[transport][rx-steer]") {
	Steered t(81);
	t.u.say_cpu(3);
	t.write_len(1, 0, 64);
	REQUIRE(t.offers.size() >= 1);
	CHECK(t.offers[0].cpu == 3);
	CHECK_FALSE(t.offers[0].must_queue);
	CHECK(t.offers[0].token == static_cast<void *>(t.u.qp));
	std::vector<sroce_cqe> c;
	CHECK(t.f.poll(t.a).empty()); // its ACK waits on "CPU 3"
	t.pump();
	REQUIRE(t.f.wait_cqes(t.a, 1, c));
	CHECK(c[0].wr_id == 1);

	// A 64 KiB WRITE is answered by several ACKs: while the first waits,
	// the owner moves (a system call elsewhere), and the rest must still
	// queue behind it.
	t.write_len(2, 0, 4096);
	sroce_wqe w = wqe(3, ib::wr_rdma_write, 1);
	w.rdma.remote_addr = iova_of(t.b, t.rb);
	w.rdma.rkey = t.f.lkey(t.rb);
	Buffer &big = t.f.buffer(t.a, 65536, all_access);
	t.u.post(w, sge_of(t.f, t.a, big, 0, 65536), false); // fetched when WQE 2's ACK is received
	t.pump();
	size_t first = t.offers.size();
	t.on_offer = [&] {
		if (t.offers.size() == first + 1)
			sroce_core_qp_owner_seen(t.u.qp, 5, &any_cpu, sizeof(any_cpu));
	};
	t.f.sim().run_for(200000);
	REQUIRE(t.offers.size() > first + 1);
	CHECK(t.offers[first].cpu == 3);
	CHECK_FALSE(t.offers[first].must_queue);
	for (size_t i = first + 1; i < t.offers.size(); i++) {
		INFO("offer " << i);
		CHECK(t.offers[i].cpu == 3);
		CHECK(t.offers[i].must_queue);
	}
	t.pump();
	c.clear();
	REQUIRE(t.f.wait_cqes(t.a, 2, c));
	CHECK(c[0].wr_id == 2);
	CHECK(c[1].wr_id == 3);
	CHECK(int(c[1].status) == ib::wc_success);
	CHECK(std::memcmp(t.rb.data, big.data, 65536) == 0);

	// None waits now: the next goes where the owner is.
	size_t before = t.offers.size();
	h_cpu_silent(t);
	t.write_len(4, 65536, 64);
	REQUIRE(t.offers.size() > before);
	CHECK(t.offers[before].cpu == 5);
	CHECK_FALSE(t.offers[before].must_queue);
	t.pump();
	c.clear();
	REQUIRE(t.f.wait_cqes(t.a, 1, c));
	CHECK(c[0].wr_id == 4);
	CHECK(std::memcmp(t.rb.data + 65536, t.la.data, 64) == 0);
	CHECK(device_counter(t.a, SROCE_CNT_RX_STEERED) == t.offers.size());
	CHECK(device_counter(t.a, SROCE_CNT_RX_STEER_DROPS) == 0);
}

TEST_CASE("receive steering: an owner never seen, a kernel QP and the env saying 'here' keep packets here",
	  "[transport][rx-steer]") {
	Steered t(82);
	// No hint in the ring and no system call seen: nothing is offered.
	t.write_len(1, 0, 64);
	CHECK(t.offers.empty());
	// The env declines (the packet is on its CPU already): received here,
	// and nothing counts as waiting, so no later one must queue.
	t.take = false;
	t.u.say_cpu(1);
	for (unsigned int i = 0; i < 20; i++)
		t.write_len(2 + i, 4096 * i, 3000);
	std::vector<sroce_cqe> c;
	REQUIRE(t.f.wait_cqes(t.a, 21, c));
	for (const auto &e : c)
		CHECK(int(e.status) == ib::wc_success);
	REQUIRE_FALSE(t.offers.empty());
	for (const auto &o : t.offers) {
		CHECK(o.cpu == 1);
		CHECK_FALSE(o.must_queue);
		// Only the user QP's: b's kernel QP received every WRITE unasked.
		CHECK(o.token == static_cast<void *>(t.u.qp));
	}
	CHECK(device_counter(t.a, SROCE_CNT_RX_STEERED) == 0);
	CHECK(device_counter(t.b, SROCE_CNT_RX_STEERED) == 0);
}

TEST_CASE("receive steering: the owner's own CPU choice wins over where it posts, until it gives it up",
	  "[transport][rx-steer]") {
	Steered t(83);
	t.u.say_cpu(2);
	sroce_core_qp_pin_rx_cpu(t.u.qp, 7);
	t.write_len(1, 0, 64);
	REQUIRE(!t.offers.empty());
	CHECK(t.offers[0].cpu == 7);
	t.pump();
	sroce_core_qp_pin_rx_cpu(t.u.qp, -1);
	size_t before = t.offers.size();
	t.write_len(2, 64, 64);
	REQUIRE(t.offers.size() > before);
	CHECK(t.offers[before].cpu == 2);
	// A system call on another CPU (a modify) is where the owner was seen
	// last, until its next post says otherwise.
	t.pump();
	sroce_core_qp_owner_seen(t.u.qp, 4, &any_cpu, sizeof(any_cpu));
	h_cpu_silent(t); // this post says nothing
	before = t.offers.size();
	t.write_len(3, 128, 64);
	REQUIRE(t.offers.size() > before);
	CHECK(t.offers[before].cpu == 4);
	t.pump();
	std::vector<sroce_cqe> c;
	REQUIRE(t.f.wait_cqes(t.a, 3, c));
}

TEST_CASE("receive steering: answers dropped from a full queue are recovered, every byte right",
	  "[transport][rx-steer]") {
	Steered t(84);
	t.u.say_cpu(1);
	unsigned long long dropped = 0;
	std::vector<sroce_cqe> c;
	for (unsigned int i = 0; i < 40; i++) {
		t.write_len(i, 4096 * i, 1000 + 70 * i);
		if (i % 3 == 0) {
			dropped += std::min<size_t>(t.queued.size(), 2);
			t.drop(2);
		}
		t.pump();
	}
	// The lost answers are made up by the probe or the retry timer.
	for (int k = 0; k < 200 && c.size() < 40; k++) {
		t.f.sim().run_for(10000000);
		t.pump();
		for (auto &e : t.f.poll(t.a))
			c.push_back(e);
	}
	REQUIRE(c.size() == 40);
	for (unsigned int i = 0; i < 40; i++) {
		INFO("WQE " << i);
		CHECK(c[i].wr_id == i);
		CHECK(int(c[i].status) == ib::wc_success);
		CHECK(std::memcmp(t.rb.data + 4096 * i, t.la.data, 1000 + 70 * i) == 0);
	}
	CHECK(dropped > 0);
	CHECK(device_counter(t.a, SROCE_CNT_RX_STEER_DROPS) == dropped);
}

TEST_CASE("receive steering: a QP destroyed with packets waiting lives until they come back, then is gone",
	  "[transport][rx-steer]") {
	Steered t(85);
	t.u.say_cpu(1);
	t.write_len(1, 0, 64);
	t.write_len(2, 64, 64);
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
	t.u.say_cpu(1);
	sim::LinkConfig dup;
	dup.duplicate = 1.0; // every answer twice: more than a QP may have waiting
	t.f.sim().set_link(t.b.id, t.a.id, dup);
	constexpr unsigned int n = 200;
	for (unsigned int i = 0; i < n; i++) {
		sroce_wqe w = wqe(i, ib::wr_rdma_write, 1);
		w.rdma.remote_addr = iova_of(t.b, t.rb) + 64 * i;
		w.rdma.rkey = t.f.lkey(t.rb);
		t.u.post(w, sge_of(t.f, t.a, t.la, 0, 64), i == n - 1); // one doorbell for all
	}
	t.f.sim().run_for(5000000); // none is received meanwhile
	INFO("offered " << t.offers.size() << ", waiting " << t.queued.size());
	CHECK(t.queued.size() == sroce::RxSteer::max_queued);
	CHECK(t.offers.size() == t.queued.size()); // the rest were dropped before any offer
	CHECK(device_counter(t.a, SROCE_CNT_RX_STEER_DROPS) > 0);
	t.pump();
	std::vector<sroce_cqe> c;
	for (int k = 0; k < 200 && c.size() < n; k++) {
		t.f.sim().run_for(10000000);
		t.pump();
		for (auto &e : t.f.poll(t.a))
			c.push_back(e);
	}
	REQUIRE(c.size() == n);
	for (const auto &e : c)
		CHECK(int(e.status) == ib::wc_success);
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

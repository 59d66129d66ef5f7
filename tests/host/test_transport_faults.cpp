// The transport under a faulty wire: loss, duplication, reordering and
// corruption, each alone and mixed. A deterministic workload mixes SEND,
// WRITE, READ and FETCH_ADD of random sizes and offsets, crosses the 24-bit
// PSN wrap, and checks every byte and every atomic result. The seed is
// printed; SROCE_SIM_SEED replays a run, SROCE_FAULT_MESSAGES sets its length.
#include <catch2/catch.hpp>

#include <cstdio>
#include <deque>

#include "ib_enums.h"
#include "transport_fixture.h"

using namespace tfx;
using namespace sroce;

namespace {
// Outstanding operations, each on its own memory, and that memory's size
// (messages go up to half of it): set by run_workload from its Shape.
unsigned int slots = 16;
unsigned int slot_size = 16384;

struct Rng {
	uint64_t s;
	uint64_t next() {
		uint64_t z = (s += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		return z ^ (z >> 31);
	}
	uint32_t below(uint32_t n) { return uint32_t(next() % n); }
};

struct Op {
	uint64_t id;
	unsigned char opcode;
	unsigned int slot, off, len;
	uint64_t add;
	uint64_t expect_orig;
};


size_t messages() {
	const char *e = std::getenv("SROCE_FAULT_MESSAGES");
	return e ? std::strtoull(e, nullptr, 0) : 2000;
}

// The workload's shape: 16 slots of 16 KiB and timeout 6 (262 us) by
// default; SROCE_FAULT_SLOT, SROCE_FAULT_SLOTS, SROCE_FAULT_TIMEOUT and
// SROCE_FAULT_LATENCY_NS override it.
struct Shape {
	unsigned int slot_size = 16384, slots = 16, timeout = 6;
	uint64_t latency_ns = 1000;
	static unsigned long env(const char *name, unsigned long dflt) {
		const char *e = std::getenv(name);
		return e ? std::strtoul(e, nullptr, 0) : dflt;
	}
	static Shape from_env() {
		Shape s;
		s.slot_size = unsigned(env("SROCE_FAULT_SLOT", s.slot_size));
		s.slots = unsigned(env("SROCE_FAULT_SLOTS", s.slots));
		s.timeout = unsigned(env("SROCE_FAULT_TIMEOUT", s.timeout));
		s.latency_ns = env("SROCE_FAULT_LATENCY_NS", s.latency_ns);
		return s;
	}
};

struct Outcome {
	uint64_t elapsed_ns, timeouts, probes;
};

// Runs `count` operations, every one checked; returns what they took.
Outcome run_workload(const sim::LinkConfig &link, uint64_t seed, size_t count, const Shape &shape = Shape::from_env()) {
	slot_size = shape.slot_size;
	slots = shape.slots;
	Fixture f(seed);
	sim::LinkConfig l = link;
	l.latency_ns = shape.latency_ns;
	unsigned int timeout = shape.timeout;
	f.sim().set_all_links(l);
	const uint64_t t0 = f.sim().now();
	f.trace_from_env();
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc, 64), &qb = f.qp(b, ib::qpt_rc, 64);
	// Start near the top of the PSN space so the run wraps.
	f.connect(qa, qb, ib::mtu_1024, 0xffff00, 0xffff00, timeout, 7, 7, 8);
	Buffer &la = f.buffer(a, slots * slot_size, all_access);
	Buffer &rb = f.buffer(b, slots * slot_size + 8, all_access);
	uint64_t la_va = iova_of(a, la), rb_va = iova_of(b, rb);
	uint64_t counter_off = slots * slot_size;
	std::memset(rb.data + counter_off, 0, 8);
	uint64_t counter = 0;
	Rng rng{seed * 7919 + 1};
	std::deque<Op> inflight;
	std::vector<bool> busy(slots, false);
	size_t posted = 0, done = 0, recvs_done = 0;
	uint64_t next_id = 1;
	std::deque<Op> sends; // SENDs in order, matched to receive completions

	auto fill = [&](unsigned char *p, unsigned int len, uint64_t id) {
		for (unsigned int i = 0; i < len; i++)
			p[i] = (unsigned char)(id * 131 + i * 7);
	};
	while (done < count) {
		// Post while there is room.
		while (posted < count && inflight.size() < slots) {
			unsigned int slot = 0;
			while (busy[slot])
				slot++;
			Op op{};
			op.id = next_id++;
			op.slot = slot;
			op.len = rng.below(3) == 0 ? rng.below(64) : rng.below(slot_size / 2);
			op.off = rng.below(slot_size - op.len);
			unsigned int kind = rng.below(4);
			uint64_t lbase = la_va + uint64_t(slot) * slot_size, rbase = rb_va + uint64_t(slot) * slot_size;
			unsigned char *lp = la.data + size_t(slot) * slot_size, *rp = rb.data + size_t(slot) * slot_size;
			sroce_wqe w{};
			w.wr_id = op.id;
			w.flags = SROCE_WQE_SIGNALED;
			w.num_sge = 1;
			sroce_sge s{lbase + op.off, op.len, f.lkey(la)};
			if (kind == 0) {
				op.opcode = w.opcode = ib::wr_send;
				fill(lp + op.off, op.len, op.id);
				std::memset(rp, 0, slot_size);
				REQUIRE(f.post_recv(qb, op.id, {sroce_sge{rbase, slot_size, f.lkey(rb)}}) == 0);
				sends.push_back(op);
			} else if (kind == 1) {
				op.opcode = w.opcode = ib::wr_rdma_write;
				fill(lp + op.off, op.len, op.id);
				w.rdma.remote_addr = rbase + op.off;
				w.rdma.rkey = f.lkey(rb);
			} else if (kind == 2) {
				op.opcode = w.opcode = ib::wr_rdma_read;
				fill(rp + op.off, op.len, op.id);
				std::memset(lp, 0, slot_size);
				w.rdma.remote_addr = rbase + op.off;
				w.rdma.rkey = f.lkey(rb);
			} else {
				op.opcode = w.opcode = ib::wr_atomic_fetch_add;
				op.len = 8;
				op.off = 0;
				s = sroce_sge{lbase, 8, f.lkey(la)};
				op.add = rng.below(1000) + 1;
				op.expect_orig = counter;
				counter += op.add;
				w.rdma.remote_addr = rb_va + counter_off;
				w.rdma.rkey = f.lkey(rb);
				w.rdma.compare_add = op.add;
			}
			REQUIRE(f.post_send(qa, w, {s}) == 0);
			busy[slot] = true;
			inflight.push_back(op);
			posted++;
		}
		std::vector<sroce_cqe> ca;
		bool progressed = f.wait_cqes(a, 1, ca, 30000000000ull);
		INFO("seed " << seed << " done " << done << " posted " << posted);
		REQUIRE(progressed);
		// A receive completes before its sender's ACK leaves, so every
		// receive of the SENDs completed in `ca` is in the CQ by now, and
		// its slot is still busy.
		for (auto &r : f.poll(b)) {
			REQUIRE(!sends.empty());
			Op s = sends.front();
			sends.pop_front();
			INFO("recv of op " << s.id);
			REQUIRE(int(r.status) == ib::wc_success);
			REQUIRE(r.wr_id == s.id);
			REQUIRE(r.byte_len == s.len);
			unsigned char *slp = la.data + size_t(s.slot) * slot_size;
			unsigned char *srp = rb.data + size_t(s.slot) * slot_size;
			REQUIRE(std::memcmp(slp + s.off, srp, s.len) == 0);
			recvs_done++;
		}
		for (auto &c : ca) {
			REQUIRE(!inflight.empty());
			Op op = inflight.front();
			inflight.pop_front();
			INFO("op " << op.id << " opcode " << int(op.opcode) << " len " << op.len << " off " << op.off);
			REQUIRE(int(c.status) == ib::wc_success);
			REQUIRE(c.wr_id == op.id);
			unsigned char *lp = la.data + size_t(op.slot) * slot_size, *rp = rb.data + size_t(op.slot) * slot_size;
			if (op.opcode == ib::wr_rdma_write || op.opcode == ib::wr_rdma_read)
				REQUIRE(std::memcmp(lp + op.off, rp + op.off, op.len) == 0);
			if (op.opcode == ib::wr_atomic_fetch_add) {
				uint64_t orig;
				std::memcpy(&orig, lp, 8);
				REQUIRE(orig == op.expect_orig);
			}
			busy[op.slot] = false;
			done++;
		}
	}
	uint64_t final_counter;
	std::memcpy(&final_counter, rb.data + counter_off, 8);
	CHECK(final_counter == counter); // every FETCH_ADD executed exactly once
	CHECK(la.guards_intact());
	CHECK(rb.guards_intact());
	CHECK(sends.empty());
	sroce_core_qp_attr at{};
	sroce_core_qp_query(qa.qp, &at);
	CHECK(at.qp_state == ib::qps_rts);
	std::printf("faults seed %llu: %zu ops, %llu packets sent, %llu dropped, %llu duplicated, %llu reordered, "
		    "%llu corrupted, sq_psn 0x%06x; requester: %llu timeouts, %llu probes, %llu PSN NAKs, %llu resent; %llu ms\n",
		    (unsigned long long)seed, done, (unsigned long long)f.sim().counters().sent,
		    (unsigned long long)f.sim().counters().dropped, (unsigned long long)f.sim().counters().duplicated,
		    (unsigned long long)f.sim().counters().reordered, (unsigned long long)f.sim().counters().corrupted,
		    at.sq_psn, device_counter(a, SROCE_CNT_RETRANS_TIMEOUTS), device_counter(a, SROCE_CNT_TAIL_PROBES),
		    device_counter(a, SROCE_CNT_NAK_RCVD_PSN_SEQ),
		    device_counter(a, SROCE_CNT_RETRANS_PKTS), (unsigned long long)((f.sim().now() - t0) / 1000000));
	return {f.sim().now() - t0, device_counter(a, SROCE_CNT_RETRANS_TIMEOUTS), device_counter(a, SROCE_CNT_TAIL_PROBES)};
}
} // namespace

TEST_CASE("transport faults: every byte arrives under each fault mode", "[transport][faults]") {
	uint64_t seed = sim::seed_from_env(1000);
	size_t n = messages();
	sim::LinkConfig c;
	SECTION("clean") { run_workload(c, seed, n); }
	SECTION("loss 1%") {
		c.loss = 0.01;
		run_workload(c, seed + 1, n);
	}
	SECTION("loss 10%") {
		c.loss = 0.10;
		run_workload(c, seed + 2, n);
	}
	SECTION("duplicate 5%") {
		c.duplicate = 0.05;
		run_workload(c, seed + 3, n);
	}
	SECTION("reorder 25%") {
		c.reorder = 0.25;
		run_workload(c, seed + 4, n);
	}
	SECTION("corrupt 1%") {
		c.corrupt = 0.01;
		run_workload(c, seed + 5, n);
	}
	SECTION("mixed") {
		c.loss = 0.02;
		c.duplicate = 0.02;
		c.reorder = 0.1;
		c.corrupt = 0.01;
		run_workload(c, seed + 6, n);
	}
}

// With a guest's round trip (25 us each way) and sroce_integrity's timeout
// 16 (268 ms), one 128 KiB operation at a time as 82-netem runs it: the
// tail-loss probe and the resends that need no timer recover what is lost,
// so loss costs round trips, not timeouts (issue 17: at 1% loss at most 3x
// the clean time). Without the probe, loss 1% took 37-90 times the clean
// time here and loss 10% about 4000 times (219-233 timeouts in 300
// operations).
TEST_CASE("transport faults: with a guest's timeout, loss costs probes, not timeouts", "[faults][probe]") {
	Shape shape;
	shape.slot_size = 262144;
	shape.slots = 1;
	shape.timeout = 16;
	shape.latency_ns = 25000;
	constexpr size_t n = 300;
	for (uint64_t seed : {1000ull, 2000ull, 3000ull}) {
		INFO("seed " << seed);
		sim::LinkConfig c;
		Outcome clean = run_workload(c, seed, n, shape);
		CHECK(clean.timeouts == 0);
		CHECK(clean.probes == 0);
		c.loss = 0.01;
		Outcome loss1 = run_workload(c, seed + 1, n, shape);
		CHECK(loss1.probes > 0);
		CHECK(loss1.timeouts == 0);
		CHECK(loss1.elapsed_ns <= 3 * clean.elapsed_ns);
		c.loss = 0;
		c.corrupt = 0.01;
		Outcome corrupt1 = run_workload(c, seed + 5, n, shape);
		CHECK(corrupt1.timeouts == 0);
		CHECK(corrupt1.elapsed_ns <= 3 * clean.elapsed_ns);
		c.corrupt = 0;
		c.loss = 0.10;
		Outcome loss10 = run_workload(c, seed + 2, n, shape);
		CHECK(loss10.timeouts <= 2);
		CHECK(loss10.elapsed_ns <= 60 * clean.elapsed_ns);
	}
}

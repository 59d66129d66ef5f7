// RecvQueue: the receive-queue part a QP's RQ and an SRQ share. The owner
// relies on the errno telling empty, corrupt and malformed apart.
#include <catch2/catch.hpp>

#include <vector>

#include "recv_queue.h"

using sroce::RecvQueue;
using sroce::RecvWqe;

namespace {
constexpr u32 log_size = 2; // 4 slots
constexpr u32 max_sge = 2;
constexpr u32 stride = sizeof(sroce_wqe) + max_sge * sizeof(sroce_sge);

struct UserRing {
	alignas(64) u8 mem[SROCE_RING_ENTRIES_OFFSET + (stride << log_size)] = {};
	RecvQueue q;
	u32 prod = 0;
	UserRing() { q.init(mem, log_size, stride, max_sge); }
	sroce_ring_header *hdr() { return reinterpret_cast<sroce_ring_header *>(mem); }
	// What the provider's post_recv does: write the slot, then release the producer.
	void post(u64 wr_id, u32 num_sge) {
		sroce_wqe w{};
		w.wr_id = wr_id;
		w.num_sge = num_sge;
		u8 *slot = mem + SROCE_RING_ENTRIES_OFFSET + (prod & ((1u << log_size) - 1)) * stride;
		__builtin_memcpy(slot, &w, sizeof(w));
		for (u32 i = 0; i < num_sge && i < max_sge; i++) {
			sroce_sge s{};
			s.addr = 0x1000 * (i + 1);
			s.length = 64;
			__builtin_memcpy(slot + sizeof(w) + i * sizeof(s), &s, sizeof(s));
		}
		__atomic_store_n(&hdr()->producer, ++prod, __ATOMIC_RELEASE);
	}
};
} // namespace

TEST_CASE("recv queue: take copies WQEs in order and says how many were posted", "[recv_queue]") {
	UserRing r;
	RecvWqe w;
	auto e = r.q.take(w);
	REQUIRE(e.is_error());
	CHECK(e.error().errno_value() == ktl::err::again);
	r.post(7, 1);
	r.post(8, 2);
	auto a = r.q.take(w);
	REQUIRE(!a.is_error());
	CHECK(a.value() == 2);
	CHECK(w.wr_id == 7);
	CHECK(w.num_sge == 1);
	CHECK(w.sge[0].addr == 0x1000);
	CHECK(r.hdr()->consumer == 1);
	auto b = r.q.take(w);
	REQUIRE(!b.is_error());
	CHECK(b.value() == 1);
	CHECK(w.wr_id == 8);
	CHECK(w.num_sge == 2);
	CHECK(w.sge[1].addr == 0x2000);
	CHECK(r.hdr()->consumer == 2);
}

TEST_CASE("recv queue: a malformed WQE is consumed and reported, a corrupt producer is not", "[recv_queue]") {
	UserRing r;
	RecvWqe w;
	r.post(1, max_sge + 1); // more SGEs than the queue allows
	auto bad = r.q.take(w);
	REQUIRE(bad.is_error());
	CHECK(bad.error().errno_value() == ktl::err::inval);
	CHECK(r.hdr()->consumer == 1); // consumed: the owner completes it in error
	// A producer more than the ring's size ahead.
	__atomic_store_n(&r.hdr()->producer, 1 + 5, __ATOMIC_RELEASE);
	auto corrupt = r.q.take(w);
	REQUIRE(corrupt.is_error());
	CHECK(corrupt.error().errno_value() == ktl::err::proto);
	CHECK(r.hdr()->consumer == 1);
}

TEST_CASE("recv queue: flush reports every posted WQE and stops where its callback does", "[recv_queue]") {
	UserRing r;
	r.post(10, 0);
	r.post(11, 0);
	r.post(12, 0);
	std::vector<u64> seen;
	r.q.flush([&](u64 id) {
		seen.push_back(id);
		return id != 11; // the CQ is full at the second
	});
	CHECK(seen == std::vector<u64>{10, 11});
	CHECK(r.hdr()->consumer == 1); // 11 stays posted
	seen.clear();
	r.q.flush([&](u64 id) {
		seen.push_back(id);
		return true;
	});
	CHECK(seen == std::vector<u64>{11, 12});
	CHECK(r.hdr()->consumer == 3);
}

TEST_CASE("recv queue: kernel posts stop at the ring's size and check the SGE count", "[recv_queue]") {
	alignas(64) static u8 mem[SROCE_RING_ENTRIES_OFFSET + (stride << log_size)];
	RecvQueue q;
	q.init(mem, log_size, stride, max_sge);
	sroce_wqe w{};
	sroce_sge sge[max_sge + 1] = {};
	w.num_sge = max_sge + 1;
	auto inval = q.post(w, sge);
	REQUIRE(inval.is_error());
	CHECK(inval.error().errno_value() == ktl::err::inval);
	w.num_sge = 1;
	for (u32 i = 0; i < (1u << log_size); i++) {
		w.wr_id = i;
		REQUIRE(!q.post(w, sge).is_error());
	}
	auto full = q.post(w, sge);
	REQUIRE(full.is_error());
	CHECK(full.error().errno_value() == ktl::err::nomem);
	RecvWqe out;
	auto t = q.take(out);
	REQUIRE(!t.is_error());
	CHECK(t.value() == (1u << log_size));
	CHECK(out.wr_id == 0);
	CHECK(!q.post(w, sge).is_error()); // the slot taken is free again
}

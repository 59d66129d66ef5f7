// CQ moderation (sroce_core_cq_modify): a completion event waits for
// cq_count completions since the arm, or cq_period after the first of
// them; the CQEs themselves are never held back.
#include <catch2/catch.hpp>

#include "cq.h"
#include "ib_enums.h"
#include "param.h"
#include "transport_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {
// Completion events of node n's CQ so far.
size_t comp_events(Fixture &f, Node &n) {
	size_t k = 0;
	for (const auto &e : f.sim().events())
		k += e.owner == &n.cq_owner && e.kind == SROCE_ENV_EVENT_COMP;
	return k;
}

// Sends `msgs` SENDs from a to b one at a time; b's CQ is re-armed after
// each of its events, as an event-driven consumer does. Returns b's events.
size_t stream(Fixture &f, Node &a, Node &b, Qp &qa, Qp &qb, unsigned int msgs, uint64_t gap_ns) {
	Buffer &src = f.buffer(a, 256, ib::access::local_write);
	Buffer &dst = f.buffer(b, 256, ib::access::local_write);
	f.sim().clear_events();
	size_t seen = 0;
	for (unsigned int i = 0; i < msgs; i++) {
		REQUIRE(f.post_recv(qb, i, {sge_of(f, b, dst, 0, 256)}) == 0);
		REQUIRE(f.post_send(qa, wqe(i, ib::wr_send, 1), {sge_of(f, a, src, 0, 64)}) == 0);
		std::vector<sroce_cqe> ca, cb;
		REQUIRE(f.wait_cqes(b, 1, cb)); // every CQE is there at once
		REQUIRE(f.wait_cqes(a, 1, ca));
		CHECK(cb[0].wr_id == i);
		f.sim().run_for(gap_ns);
		if (comp_events(f, b) != seen) {
			seen = comp_events(f, b);
			REQUIRE(sroce_core_cq_req_notify(b.cq, ib::cq_next_comp) == 0);
		}
	}
	return comp_events(f, b);
}
} // namespace

TEST_CASE("cq moderation: an event per cq_count completions", "[cq][moderation]") {
	Fixture f(13);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	SECTION("without moderation: one event per completion") {
		CHECK(stream(f, a, b, qa, qb, 64, 0) == 64);
	}
	SECTION("cq_count 16, no period: 64 completions give 4 events") {
		REQUIRE(sroce_core_cq_modify(b.cq, 16, 0) == 0);
		CHECK(stream(f, a, b, qa, qb, 64, 0) == 4);
	}
	SECTION("cq_count 16, a 1 ms period, a completion every 300 us: the period ends each wait") {
		REQUIRE(sroce_core_cq_modify(b.cq, 16, 1000) == 0);
		// A message takes some simulated time itself; the events come every
		// 1 ms, so far fewer than 64 and far more than 4.
		size_t ev = stream(f, a, b, qa, qb, 64, 300000);
		CHECK(ev > 4);
		CHECK(ev < 32);
	}
	SECTION("a lone completion is reported after cq_period") {
		REQUIRE(sroce_core_cq_modify(b.cq, 16, 500) == 0);
		CHECK(stream(f, a, b, qa, qb, 1, 0) == 0); // not yet
		f.sim().run_for(600000);                  // past 500 us
		CHECK(comp_events(f, b) == 1);
	}
	SECTION("moderation off again (count 1): one event per completion") {
		REQUIRE(sroce_core_cq_modify(b.cq, 16, 100) == 0);
		REQUIRE(sroce_core_cq_modify(b.cq, 1, 0) == 0);
		CHECK(stream(f, a, b, qa, qb, 8, 0) == 8);
	}
}

TEST_CASE("cq moderation: limits", "[cq][moderation]") {
	Fixture f(14);
	Node &a = f.node(0);
	CHECK(sroce_core_cq_modify(a.cq, SROCE_MAX_CQ_MODERATION_COUNT, SROCE_MAX_CQ_MODERATION_PERIOD) == 0);
	CHECK(sroce_core_cq_modify(a.cq, SROCE_MAX_CQ_MODERATION_COUNT + 1, 0) == -EINVAL);
	CHECK(sroce_core_cq_modify(a.cq, 2, SROCE_MAX_CQ_MODERATION_PERIOD + 1) == -EINVAL);
	CHECK(sroce_core_cq_modify(a.cq, 0, 0) == 0);
}

TEST_CASE("cq moderation: a CQ being destroyed refuses it and keeps no timer", "[cq][moderation]") {
	Fixture f(15);
	Node &a = f.node(0);
	// The handle is the object (core_api_transport.cpp); hold a reference
	// across kill() as a racing modify would.
	auto *cq = reinterpret_cast<sroce::CompletionQueue *>(a.cq);
	cq->ref();
	REQUIRE(!cq->moderate(16, 100).is_error()); // makes the timer
	cq->kill();                               // destroys it
	CHECK(cq->moderate(8, 200).is_error());   // a fresh timer is made and dropped (LeakSanitizer)
	cq->unref();
}

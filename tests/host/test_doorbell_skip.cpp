// ACK-clocked doorbell skipping (abi: SROCE_SQ_ACK_DUE; Qp::update_ack_due_locked).
// A user RC SQ in doorbell mode: while requests are unacknowledged the
// kernel sets ACK_DUE beside the consumer index, and a poster that sees it
// after publishing skips the doorbell, because the answer runs the
// requester, which fetches what was posted meanwhile. These play the
// provider's side exactly as sroce_sq_doorbell does: WQE, producer store,
// full barrier, then the flag.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>

#include "ib_enums.h"
#include "user_sq_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

TEST_CASE("doorbell skipping: streaming WRITEs ring no more doorbells than answers came",
	  "[transport][doorbell-skip]") {
	Setup t(71, 64 * 2000);
	Fixture &f = t.f;
	Node &b = t.b;
	UserSq &u = t.u;
	Buffer &la = t.la, &rb = t.rb;
	unsigned long long acks = 0;
	f.sim().set_tap([&](const sim::WirePacket &p) {
		if (p.from == b.id && p.len > 40 && p.data[28] == acknowledge)
			acks++;
	});
	constexpr unsigned int total = 2000, depth = 64;
	unsigned int posted = 0, done = 0;
	std::vector<sroce_cqe> cqes;
	while (done < total) {
		while (posted < total && posted - done < depth) {
			t.write(posted, (posted % 64) * 64, 64ull * posted);
			posted++;
		}
		cqes.clear();
		REQUIRE(f.wait_cqes(t.a, 1, cqes));
		for (const auto &c : cqes) {
			REQUIRE(int(c.status) == ib::wc_success);
			REQUIRE(c.wr_id == done);
			done++;
		}
	}
	for (unsigned int i = 0; i < total; i++)
		REQUIRE(std::memcmp(rb.data + 64 * i, la.data + (i % 64) * 64, 64) == 0);
	INFO("doorbells " << u.doorbells << ", skipped " << u.skipped << ", ACKs " << acks);
	CHECK(u.skipped > 0);
	CHECK(u.doorbells <= acks + 2);
	CHECK(u.doorbells + u.skipped == total);
	// Idle: nothing is due, so the next post rings.
	CHECK_FALSE(u.ack_due());
}

TEST_CASE("doorbell skipping: a WQE published without a doorbell just before the last answer is sent",
	  "[transport][doorbell-skip]") {
	Setup t(72, 4096);
	Fixture &f = t.f;
	UserSq &u = t.u;
	bool hold = true; // b's answers are lost
	f.sim().set_filter([&](const sim::WirePacket &p) { return !(hold && p.from == t.b.id); });
	t.write(1, 0, 0);
	CHECK(u.doorbells == 1);
	f.sim().run_for(100000);
	CHECK(u.ack_due()); // sent, not answered
	// The second WQE: published, the flag seen set, no doorbell.
	t.write(2, 64, 64);
	CHECK(u.skipped == 1);
	// The first answer was lost (held); the retry timer (67 ms at 14), or
	// a probe before it, brings an answer, and the requester fetches the
	// second WQE when it runs: both complete, without a doorbell.
	hold = false;
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(t.a, 2, ca, 1000000000ull));
	CHECK(ca[0].wr_id == 1);
	CHECK(ca[1].wr_id == 2);
	CHECK(int(ca[1].status) == ib::wc_success);
	CHECK(std::memcmp(t.rb.data, t.la.data, 128) == 0);
	CHECK(u.doorbells == 1);
	CHECK_FALSE(u.ack_due());
}

TEST_CASE("doorbell skipping: the flag clears in the error state, so a post rings and is flushed",
	  "[transport][doorbell-skip]") {
	Setup t(73, 4096);
	Fixture &f = t.f;
	UserSq &u = t.u;
	f.sim().set_filter([&](const sim::WirePacket &p) { return p.from != t.b.id; }); // b answers nothing
	t.write(1, 0, 0);
	f.sim().run_for(100000);
	REQUIRE(u.ack_due());
	sroce_core_qp_attr at{};
	at.qp_state = ib::qps_err;
	f.sim().call([&](sroce_env_batch *bt) { REQUIRE(sroce_core_qp_modify(u.qp, &at, ib::attr_state, bt) == 0); });
	CHECK_FALSE(u.ack_due());
	t.write(2, 0, 0);
	CHECK(u.doorbells == 2);
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(t.a, 2, ca));
	CHECK(int(ca[0].status) == ib::wc_wr_flush_err);
	CHECK(ca[1].wr_id == 2);
	CHECK(int(ca[1].status) == ib::wc_wr_flush_err);
	CHECK(query(u.qp).qp_state == ib::qps_err);
}

// Timeout 0 (IBTA: infinite) arms no retry timer and no tail-loss probe, so
// nothing but a post would resend after a lost ACK: the flag is never set
// and every post rings (found by review, 2026-12-01: with the flag, a lost
// ACK hung the QP for good, every later post skipping its doorbell).
TEST_CASE("doorbell skipping: a QP with timeout 0 (no retry timer) never skips", "[transport][doorbell-skip]") {
	Setup t(74, 4096, 0);
	Fixture &f = t.f;
	UserSq &u = t.u;
	bool lose = true; // b's answers to the first WRITE are lost
	f.sim().set_filter([&](const sim::WirePacket &p) { return !(lose && p.from == t.b.id); });
	t.write(1, 0, 0);
	f.sim().run_for(100000);
	CHECK_FALSE(u.ack_due());
	lose = false;
	t.write(2, 64, 64);
	CHECK(u.doorbells == 2);
	CHECK(u.skipped == 0);
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(t.a, 2, ca));
	CHECK((ca[0].wr_id == 1 && int(ca[0].status) == ib::wc_success));
	CHECK((ca[1].wr_id == 2 && int(ca[1].status) == ib::wc_success));
	CHECK(std::memcmp(t.rb.data, t.la.data, 128) == 0);
}

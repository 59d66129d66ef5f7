// The SQ poller's state machine (kmod/core/sq_poll_state.h): the table of
// legal transitions as Documentation/sq-poller.md gives it, the check the
// thread makes at each transition, and a walk of the real thread through
// POLL, SLEEP, NAP and DOZE that takes only transitions in the table.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

#include "env_host.h"
#include "sq_poller_fake.h"

using namespace sqfx;
using sroce::SqPollState;

namespace {

constexpr const char *state_names[] = {"poll", "nap", "doze", "sleep", "stop"};
static_assert(sizeof(state_names) / sizeof(state_names[0]) == sroce::sq_poll_state_count);

std::string describe(uint32_t taken) {
	std::string s;
	for (uint32_t f = 0; f < sroce::sq_poll_state_count; f++)
		for (uint32_t t = 0; t < sroce::sq_poll_state_count; t++)
			if (taken & sroce::sq_poll_transition_bit(SqPollState(f), SqPollState(t)))
				s += std::string(" ") + state_names[f] + "->" + state_names[t];
	return s;
}

// wait_for with 20 s: a loaded host may hold a step up for a while.
template <class Pred> bool wait_long(Pred pred) {
	for (int i = 0; i < 20000 && !pred(); i++)
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	return pred();
}

} // namespace

TEST_CASE("SQ poller states: the table allows what sq-poller.md says, and the check catches the rest", "[sq_poller]") {
	// Rows: from; columns: to (poll, nap, doze, sleep, stop).
	const bool expect[5][5] = {
		{true, true, true, true, true},       // poll
		{true, true, true, true, true},       // nap
		{true, false, false, false, false},   // doze: woken or cancelled
		{true, false, false, false, false},   // sleep: woken or cancelled
		{false, false, false, false, false},  // stop: the end
	};
	env_host::clear();
	int illegal = 0;
	for (uint32_t f = 0; f < 5; f++) {
		for (uint32_t t = 0; t < 5; t++) {
			INFO(state_names[f] << "->" << state_names[t]);
			auto from = SqPollState(f), to = SqPollState(t);
			CHECK(sroce::sq_poll_transition_ok(from, to) == expect[f][t]);
			bool legal_bit = (sroce::sq_poll_transitions_legal() & sroce::sq_poll_transition_bit(from, to)) != 0;
			CHECK(legal_bit == expect[f][t]);
			// What the thread runs at each transition: a warning for
			// each one outside the table.
			int w0 = env_host::warnings();
			CHECK(SqPoller::check_transition(from, to) == expect[f][t]);
			CHECK(env_host::warnings() - w0 == (expect[f][t] ? 0 : 1));
			illegal += !expect[f][t];
		}
	}
	CHECK(illegal == 13);
	CHECK(env_host::warnings() == illegal);
	env_host::clear();
}

TEST_CASE("SQ poller states: the thread walks POLL, SLEEP, NAP and DOZE by the table", "[sq_poller][threads]") {
	// Idle for 3 s before it sleeps, a grace of 1.5 s before it dozes:
	// each step below is reached long before the next one could start.
	OnePolledSq f(3000ull * 1000 * 1000, 1500ull * 1000 * 1000);
	SqPoller &poller = f.poller;
	FakeSq &sq = f.sq;
	Page &p = f.p;
	auto flag_set = [&] { return (p.page.flags & SROCE_CTX_NEED_WAKEUP) != 0; };
	auto took = [&](SqPollState from, SqPollState to) {
		return (poller.transitions_taken() & sroce::sq_poll_transition_bit(from, to)) != 0;
	};
	// A transition is recorded when the state's function returns (after
	// a nap, say): wait for it.
	auto wait_took = [&](SqPollState from, SqPollState to) { return wait_long([&] { return took(from, to); }); };
	using S = SqPollState;

	// Nothing to do: POLL spins, then SLEEP.
	REQUIRE(wait_long([&] { return poller.asleep(); }));
	CHECK(took(S::poll, S::poll));
	CHECK(took(S::poll, S::sleep));
	// A doorbell wakes it into POLL, which takes the flag down.
	CHECK(post(sq, poller, p.page, 1));
	REQUIRE(wait_long([&] { return !flag_set(); }));
	CHECK(wait_took(S::sleep, S::poll));

	// Its CPU wanted: NAP, the flag up, a nap after each empty scan; the
	// CPU free again within the grace: back to POLL, the flag down.
	Contended busy(true);
	REQUIRE(wait_long(flag_set));
	CHECK(wait_took(S::poll, S::nap));
	CHECK(wait_took(S::nap, S::nap));
	busy.set(false);
	REQUIRE(wait_long([&] { return !flag_set(); }));
	CHECK(wait_took(S::nap, S::poll));
	CHECK(poller.stats().dozes == 0);

	// Wanted past the grace: DOZE, asleep with the flag up. A post
	// first, drained without a doorbell: idle_ns starts again.
	CHECK(!post(sq, poller, p.page, 1));
	REQUIRE(wait_consumed(sq, 10000000000ull));
	busy.set(true);
	REQUIRE(wait_long([&] { return poller.asleep() && poller.stats().dozes == 1; }));
	CHECK(took(S::nap, S::doze));
	CHECK(flag_set());
	busy.set(false);

	// Stopped while it dozes: woken into POLL, which sees should_stop.
	f.stop();
	uint32_t taken = poller.transitions_taken();
	INFO("taken:" << describe(taken));
	CHECK(took(S::doze, S::poll));
	CHECK(took(S::poll, S::stop));
	// Nothing outside the table.
	CHECK((taken & ~sroce::sq_poll_transitions_legal()) == 0);
	CHECK(sq.consumed.load() == sq.hdr.producer);
	CHECK(env_host::warnings() == 0);
}

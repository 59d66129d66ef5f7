// The SQ poller thread's states, and which transitions between them are
// legal, as data. The thread's loop (SqPoller::run, sq_poller.cpp) checks
// every transition it takes against this table; the states and the events
// that move them are described in Documentation/sq-poller.md.
#pragma once
#include "ktl/types.h"

namespace sroce {

enum class SqPollState : u8 {
	poll,  // awake, scanning; spins while its CPU is free
	nap,   // its CPU wanted, within the grace: NEED_WAKEUP up, naps between scans
	doze,  // its CPU still wanted after the grace: asleep, doorbells held for idle_ns
	sleep, // nothing found for idle_ns: asleep until a doorbell
	stop,  // should_stop: NEED_WAKEUP up for good, the thread returns
};
constexpr u32 sq_poll_state_count = 5;

constexpr u32 sq_poll_state_bit(SqPollState s) { return 1u << u32(s); }

namespace sq_poll_table {
using S = SqPollState;

// The states `from` may move to.
constexpr u32 targets(S from) {
	switch (from) {
	case S::poll:
	case S::nap:
		// Awake: a scan decides (poll or nap again, nap to poll when
		// the CPU is free or a doorbell came, doze when contention
		// outlasted the grace, which a doorbell or work found does
		// not reset), and should_stop is seen only here.
		return sq_poll_state_bit(S::poll) | sq_poll_state_bit(S::nap) | sq_poll_state_bit(S::doze) |
		       sq_poll_state_bit(S::sleep) | sq_poll_state_bit(S::stop);
	case S::doze:
	case S::sleep:
		// Woken, or the re-check after SQ-W1 cancelled the sleep: a
		// scan comes first, whatever woke it (stop included).
		return sq_poll_state_bit(S::poll);
	case S::stop:
		return 0;
	}
	return 0;
}

struct Table {
	u32 to[sq_poll_state_count];
	constexpr Table() : to{} {
		for (u32 s = 0; s < sq_poll_state_count; s++)
			to[s] = targets(S(s));
	}
};

// Built at compile time: no global constructor.
inline constexpr Table table;

// True if `to` can be reached from `from` in any number of transitions.
constexpr bool reaches(S from, S to) {
	u32 seen = sq_poll_state_bit(from);
	for (u32 round = 0; round < sq_poll_state_count; round++)
		for (u32 s = 0; s < sq_poll_state_count; s++)
			if (seen & (1u << s))
				seen |= table.to[s];
	return seen & sq_poll_state_bit(to);
}
} // namespace sq_poll_table

constexpr bool sq_poll_transition_ok(SqPollState from, SqPollState to) {
	return u32(from) < sq_poll_state_count && (sq_poll_table::table.to[u32(from)] & sq_poll_state_bit(to));
}

// One bit per (from, to) pair: SqPoller::transitions_taken.
constexpr u32 sq_poll_transition_bit(SqPollState from, SqPollState to) {
	return 1u << (u32(from) * sq_poll_state_count + u32(to));
}
static_assert(sq_poll_state_count * sq_poll_state_count <= 32, "the pairs fit a u32");

// Every legal pair's bit.
constexpr u32 sq_poll_transitions_legal() {
	u32 m = 0;
	for (u32 f = 0; f < sq_poll_state_count; f++)
		for (u32 t = 0; t < sq_poll_state_count; t++)
			if (sq_poll_transition_ok(SqPollState(f), SqPollState(t)))
				m |= sq_poll_transition_bit(SqPollState(f), SqPollState(t));
	return m;
}

// The rules the wake-up protocol rests on.
namespace sq_poll_table {
// Only an awake thread goes to sleep: the handshake (SQ-W1, SQ-W2) runs
// on the way into DOZE and SLEEP, never from one to the other.
static_assert(!sq_poll_transition_ok(S::doze, S::sleep) && !sq_poll_transition_ok(S::sleep, S::doze));
static_assert(!sq_poll_transition_ok(S::doze, S::doze) && !sq_poll_transition_ok(S::sleep, S::sleep));
// A sleeping thread scans before it naps or stops: the WRs that woke it
// are drained by POLL.
static_assert(table.to[u32(S::doze)] == sq_poll_state_bit(S::poll));
static_assert(table.to[u32(S::sleep)] == sq_poll_state_bit(S::poll));
// NAP is left for POLL (the flag comes down) or a sleep (the handshake
// keeps it up); STOP is the end.
static_assert(sq_poll_transition_ok(S::nap, S::poll) && sq_poll_transition_ok(S::nap, S::doze));
static_assert(table.to[u32(S::stop)] == 0);
// From every state the thread can stop, and come back to POLL.
static_assert(reaches(S::poll, S::stop) && reaches(S::nap, S::stop) && reaches(S::doze, S::stop) &&
	      reaches(S::sleep, S::stop));
static_assert(reaches(S::nap, S::poll) && reaches(S::doze, S::poll) && reaches(S::sleep, S::poll));
} // namespace sq_poll_table

} // namespace sroce

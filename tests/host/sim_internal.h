// Internals shared by sim.cpp (the engine) and sim_env.cpp (env.h's data
// path): the env objects and the event queue.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "sim.h"

// A packet: fragment 0 is the linear head. Buffers are exactly as long as
// their fragment, so ASan catches a read past the linear head. A borrowed
// fragment (sroce_env_pkt_add_frag: zero-copy) points into an MR's pages
// and is not freed with the packet; the engine reads it when the packet
// leaves (the batch's flush), as the kernel's stack does.
struct sroce_env_pkt {
	struct Frag {
		unsigned char *data;
		unsigned int len;
		bool borrowed = false;
	};
	std::vector<Frag> frags;
	unsigned int len = 0; // total
};

// A destination on the simulated wire.
struct sroce_env_path {
	long refs = 1;
	int from, to;
};

struct sroce_env_batch {
	std::vector<std::pair<sroce_env_path *, sroce_env_pkt *>> pkts;
	std::vector<std::pair<void *, int>> events;
	unsigned int distinct = 0; // distinct (owner, kind) in events
};

namespace sim::detail {

using Key = std::pair<uint64_t, uint64_t>; // virtual time, sequence

// What timers and work have in common: a callback and a queue slot.
struct Task {
	sroce_env_callback fn;
	void *arg;
	bool pending = false; // armed / queued
	bool queued = false;  // has a slot in the engine's queue
	bool running = false;
	bool destroy_after_run = false;
	bool atomic;          // timer callbacks are atomic, work is process context
	Key key{};
};

struct Item {
	enum Kind { task, deliver } kind;
	Task *t = nullptr;
	sroce_env_pkt *pkt = nullptr;
	int from = 0, to = 0;
};

struct Link {
	LinkConfig cfg;
	uint64_t busy_until = 0;
	std::deque<uint64_t> departures; // when each queued packet leaves
	Counters c;
};

struct Node {
	sroce_core_dev *dev = nullptr;
	RxHook hook;
	unsigned int rx_linear = 0;
};

struct Engine {
	uint64_t seed;
	uint64_t rng;
	uint64_t now = 1000000000ull;
	uint64_t work_delay_ns = 0; // deferred work runs this much later (a busy CPU)
	uint64_t timer_tick_ns = 0; // timers fire on tick boundaries (jiffies); 0: exact
	uint64_t seq = 0;
	uint64_t same_instant = 0; // items run at the current instant in a row
	uint64_t hash = 0xcbf29ce484222325ull;
	bool print_trace = false;
	std::map<Key, Item> queue;
	std::vector<Node> nodes;
	std::map<std::pair<int, int>, Link> links;
	LinkConfig default_link;
	Counters totals;
	std::function<void(const WirePacket &)> tap;
	std::function<bool(const WirePacket &)> filter;
	std::function<void(void *, int)> on_event;
	std::function<bool(sroce_env_pkt *, void *)> steer; // Sim::set_steer
	std::function<bool(sroce_env_pkt *, int, bool, void *)> steer_qp; // Sim::set_steer_qp
	std::vector<Event> events;

	explicit Engine(uint64_t s);
	~Engine();
	uint64_t next_random();
	bool chance(double p);
	void mix(uint64_t v);
	Link &link(int from, int to);

	void schedule(Task *t, uint64_t at);
	void unschedule(Task *t);
	void run_task(Task *t);
	void with_batch(bool atomic, const Batched &fn);
	void flush(sroce_env_batch *b);
	void transmit(int from, int to, sroce_env_pkt *pkt);
	void deliver(const Item &it);
	sroce_env_pkt *fragment(sroce_env_pkt *pkt, unsigned int linear);
	bool step();
};

// The active engine, or nullptr outside a Sim.
extern Engine *g_engine;

// Packet helpers of sim_env.cpp.
sroce_env_pkt *pkt_new(const std::vector<unsigned int> &frag_lens);
void pkt_linearize(const sroce_env_pkt *pkt, unsigned char *out);
void path_get(sroce_env_path *p);
sroce_env_path *path_new(int from, int to);
void task_free(Task *t);

} // namespace sim::detail

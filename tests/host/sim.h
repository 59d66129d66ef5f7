// The host simulator: a deterministic discrete-event network on which core
// Devices exchange packets. It implements env.h's data path (virtual time,
// packets, paths, batches, timers, deferred work) for user space.
//
// One Sim exists at a time; while it does, sroce_env_now_ns is its virtual
// clock. Everything runs on the test's thread, in virtual-time order: packet
// deliveries (sroce_core_rx, "softirq"), timer callbacks (atomic) and work
// (process context). Faults come from one PRNG seeded by the test, so the
// same seed replays the same run. See Documentation/testing.md.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

extern "C" {
#include "core.h"
#include "env.h"
}

namespace sim {

// One direction of a link. Probabilities are per packet.
struct LinkConfig {
	double loss = 0;
	double duplicate = 0;      // a second copy is delivered too
	double reorder = 0;        // a copy is delayed by an extra [1, reorder_max_ns]
	double corrupt = 0;        // one random bit of a copy is flipped
	uint64_t reorder_max_ns = 20000;
	uint64_t latency_ns = 1000;
	uint64_t bits_per_sec = 0; // serialization delay; 0: none
	// Packets waiting for the wire (with bits_per_sec) beyond which a new
	// one is dropped, as a full receive backlog does (netdev_max_backlog);
	// 0: no limit.
	unsigned int queue_packets = 0;
};

struct Counters {
	uint64_t sent = 0;       // packets flushed onto the wire
	uint64_t dropped = 0;    // lost (loss, filter) or for a removed node
	uint64_t duplicated = 0;
	uint64_t reordered = 0;
	uint64_t corrupted = 0;
	uint64_t delivered = 0;  // copies handed to a receiver
	uint64_t bytes = 0;      // bytes sent
};

// A packet as it goes onto the wire (before corruption), with its fate.
struct WirePacket {
	uint64_t time_ns;
	int from, to;
	const unsigned char *data; // from the IP header
	unsigned int len;
	bool dropped, duplicated, reordered, corrupted;
};

struct Event {
	uint64_t time_ns;
	void *owner;
	int kind; // SROCE_ENV_EVENT_COMP or an ib_event_type
};

struct NodeConfig {
	unsigned int netdev_mtu = 9000;
	bool up = true;
	unsigned int zero_copy_min = 0; // sroce_core_dev_init's
};

// A route from one node to another: the caller owns one reference of path
// (give it to the core or drop it with sroce_env_path_put).
struct Path {
	sroce_env_path *path;
	sroce_core_path_info info;
};

// Receives one packet (consumes it) with a batch flushed afterwards.
using RxHook = std::function<void(sroce_env_pkt *pkt, sroce_env_batch *b)>;
using Batched = std::function<void(sroce_env_batch *b)>;

namespace detail {
struct Engine;
}

class Sim {
public:
	explicit Sim(uint64_t seed);
	~Sim();
	Sim(const Sim &) = delete;
	Sim &operator=(const Sim &) = delete;

	uint64_t seed() const;
	uint64_t now() const; // virtual ns; starts at 1 s

	// Nodes: a core Device each, at 10.0.0.(n+1) / fd00::(n+1).
	int add_node(const NodeConfig &cfg = {});
	sroce_core_dev *dev(int node) const;
	Path path(int from, int to, bool ipv6 = false);
	// Replaces the node's receiver (default: sroce_core_rx on its device);
	// nullptr restores the default.
	void set_rx_hook(int node, RxHook hook);
	// Received packets get only `bytes` linear bytes, the rest in random
	// fragments; 0: fully linear (default, or SROCE_SIM_RX_LINEAR).
	void set_rx_linear(int node, unsigned int bytes);
	// Deferred work runs ns after it is queued instead of at once: a busy
	// CPU, so packets can arrive while a long READ response is streamed.
	void set_work_delay(uint64_t ns);
	// Timers fire on ticks of ns, as the kernel's timer_list does: armed
	// for ceil(delay / tick) ticks, they fire at that tick's boundary,
	// anywhere up to one tick sooner than the delay; 0: exact (default).
	void set_timer_tick(uint64_t ns);
	// Destroys the node's device now; packets still addressed to it are
	// dropped (unless it has an rx hook).
	void remove_node(int node);
	// Puts raw bytes (from the IP header) on the wire from -> to, as if
	// `from` had sent them: for hostile or hand-made packets.
	void inject(int from, int to, const void *data, unsigned int len);

	// The wire.
	void set_link(int from, int to, const LinkConfig &c);
	void set_all_links(const LinkConfig &c); // every direction, existing and new
	const Counters &counters() const;
	Counters link_counters(int from, int to) const;
	// Sees every packet sent; the filter runs first and drops on false.
	void set_tap(std::function<void(const WirePacket &)> tap);
	void set_filter(std::function<bool(const WirePacket &)> filter);

	// sroce_env_rx_steer: true takes the packet (the test hands it back
	// with sroce_core_rx_steered). Without one nothing is steered.
	void set_steer(std::function<bool(sroce_env_pkt *pkt, void *cq_owner)> fn);
	// sroce_env_rx_steer_qp: true takes the packet (the test hands it back
	// with sroce_core_rx_steered or _rx_steer_drop). Without one, nothing.
	void set_steer_qp(std::function<bool(sroce_env_pkt *pkt, int cpu, bool must_queue, void *token)> fn);

	// Events raised through batches, in flush order.
	void set_event_handler(std::function<void(void *owner, int kind)> fn);
	const std::vector<Event> &events() const;
	std::vector<int> events_for(void *owner) const;
	void clear_events();

	// Runs fn in process context with a fresh batch, then flushes it.
	void call(const Batched &fn);

	// The run loop. step() runs the next scheduled item (false: none);
	// run_for runs everything due within ns and leaves the clock at now + ns;
	// run_until stops as soon as pred() holds (true) or after timeout_ns of
	// virtual time (false, clock at the deadline).
	bool step();
	void run_for(uint64_t ns);
	bool run_until(const std::function<bool()> &pred, uint64_t timeout_ns);
	bool idle() const; // nothing scheduled

	// A hash of everything that happened (deliveries with their bytes,
	// timers, work, events): equal for equal runs.
	uint64_t trace_hash() const;

private:
	std::unique_ptr<detail::Engine> e_;
};

// SROCE_SIM_SEED from the environment if set, else fallback.
uint64_t seed_from_env(uint64_t fallback);

} // namespace sim

// The simulator engine: one queue of timed items (packet deliveries, timer
// callbacks, work) run in (virtual time, sequence) order, and the wire that
// applies each link's faults from one seeded PRNG.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "env_host.h"
#include "sim_internal.h"

namespace sim::detail {

Engine *g_engine = nullptr;

namespace {
// Items at one virtual instant beyond which the run loop reports a livelock
// (work or zero-delay timers re-queueing each other forever).
constexpr uint64_t livelock_limit = 1000000;
} // namespace

Engine::Engine(uint64_t s) : seed(s), rng(s) {
	if (g_engine) {
		fprintf(stderr, "sim: only one Sim may exist at a time\n");
		abort();
	}
	const char *t = getenv("SROCE_SIM_TRACE");
	print_trace = t && *t && strcmp(t, "0") != 0;
	g_engine = this;
}

Engine::~Engine() {
	// Devices first: their teardown may still cancel timers and work.
	for (auto it = nodes.rbegin(); it != nodes.rend(); ++it)
		sroce_core_dev_destroy(it->dev);
	for (auto &[key, item] : queue) {
		if (item.kind == Item::task)
			item.t->queued = item.t->pending = false;
		else
			sroce_env_pkt_free(item.pkt);
	}
	g_engine = nullptr;
}

// splitmix64: one stream for every random choice, so a seed replays a run.
uint64_t Engine::next_random() {
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

bool Engine::chance(double p) { return p > 0 && double(next_random() >> 11) * 0x1.0p-53 < p; }

void Engine::mix(uint64_t v) {
	hash ^= v + 0x9e3779b97f4a7c15ull + (hash << 6) + (hash >> 2);
	hash *= 0x100000001b3ull;
}

Link &Engine::link(int from, int to) {
	auto it = links.find({from, to});
	if (it == links.end())
		it = links.emplace(std::make_pair(from, to), Link{default_link, 0, {}, {}}).first;
	return it->second;
}

void Engine::schedule(Task *t, uint64_t at) {
	t->key = {at, seq++};
	queue.emplace(t->key, Item{Item::task, t});
	t->queued = true;
}

void Engine::unschedule(Task *t) {
	queue.erase(t->key);
	t->queued = false;
}

void Engine::with_batch(bool atomic, const Batched &fn) {
	sroce_env_batch b;
	{
		std::optional<env_host::AtomicScope> scope;
		if (atomic)
			scope.emplace();
		fn(&b);
	}
	flush(&b);
}

// What the glue does after a core call: packets onto the wire, then events.
void Engine::flush(sroce_env_batch *b) {
	for (auto [path, pkt] : b->pkts) {
		transmit(path->from, path->to, pkt);
		sroce_env_path_put(path);
	}
	for (auto [owner, kind] : b->events) {
		events.push_back({now, owner, kind});
		mix(uint64_t(kind));
		if (on_event)
			on_event(owner, kind);
	}
}

void Engine::transmit(int from, int to, sroce_env_pkt *pkt) {
	if (std::max(from, to) >= int(nodes.size())) { // a path from another Sim
		sroce_env_warn(__FILE__, __LINE__, "sim: packet for a node that does not exist");
		sroce_env_pkt_free(pkt);
		return;
	}
	Link &l = link(from, to);
	const unsigned int len = pkt->len;
	std::vector<unsigned char> bytes(len);
	pkt_linearize(pkt, bytes.data());
	sroce_env_pkt_free(pkt);

	WirePacket w{now, from, to, bytes.data(), len, false, false, false, false};
	for (Counters *c : {&totals, &l.c}) {
		c->sent++;
		c->bytes += len;
	}
	while (!l.departures.empty() && l.departures.front() <= now)
		l.departures.pop_front();
	bool full = l.cfg.queue_packets && l.departures.size() >= l.cfg.queue_packets;
	w.dropped = (filter && !filter(w)) || chance(l.cfg.loss) || full;
	if (w.dropped) {
		totals.dropped++;
		l.c.dropped++;
		if (tap)
			tap(w);
		return;
	}
	// Serialization: a link sends one packet at a time.
	uint64_t start = std::max(now, l.busy_until);
	uint64_t wire_ns = l.cfg.bits_per_sec ? uint64_t(len) * 8 * 1000000000ull / l.cfg.bits_per_sec : 0;
	l.busy_until = start + wire_ns;
	if (l.cfg.queue_packets)
		l.departures.push_back(l.busy_until);
	const uint64_t arrival = l.busy_until + l.cfg.latency_ns;

	w.duplicated = chance(l.cfg.duplicate);
	int copies = w.duplicated ? 2 : 1;
	for (int i = 0; i < copies; i++) {
		sroce_env_pkt *copy = pkt_new({len});
		memcpy(copy->frags[0].data, bytes.data(), len);
		uint64_t at = arrival;
		if (len && chance(l.cfg.corrupt)) {
			uint64_t bit = next_random() % (uint64_t(len) * 8);
			copy->frags[0].data[bit / 8] ^= uint8_t(1u << (bit % 8));
			w.corrupted = true;
			totals.corrupted++;
			l.c.corrupted++;
		}
		if (l.cfg.reorder_max_ns && chance(l.cfg.reorder)) {
			at += 1 + next_random() % l.cfg.reorder_max_ns;
			w.reordered = true;
			totals.reordered++;
			l.c.reordered++;
		}
		queue.emplace(Key{at, seq++}, Item{Item::deliver, nullptr, copy, from, to});
	}
	if (w.duplicated) {
		totals.duplicated++;
		l.c.duplicated++;
	}
	if (tap)
		tap(w);
}

// The receive side's layout: `linear` bytes of head, the rest in fragments
// of random size, as a real skb with paged data.
sroce_env_pkt *Engine::fragment(sroce_env_pkt *pkt, unsigned int linear) {
	std::vector<unsigned int> lens{std::min(linear, pkt->len)};
	for (unsigned int left = pkt->len - lens[0]; left;) {
		unsigned int n = std::min(left, unsigned(1 + next_random() % 256));
		lens.push_back(n);
		left -= n;
	}
	sroce_env_pkt *out = pkt_new(lens);
	std::vector<unsigned char> bytes(pkt->len);
	pkt_linearize(pkt, bytes.data());
	size_t off = 0;
	for (auto &f : out->frags) {
		memcpy(f.data, bytes.data() + off, f.len);
		off += f.len;
	}
	sroce_env_pkt_free(pkt);
	return out;
}

void Engine::deliver(const Item &it) {
	Node &n = nodes[size_t(it.to)];
	// FNV-1a of the bytes (not a CRC: packets that end in their own CRC
	// would all leave the same residue).
	uint64_t h = 0xcbf29ce484222325ull;
	for (const auto &f : it.pkt->frags)
		for (unsigned int i = 0; i < f.len; i++)
			h = (h ^ f.data[i]) * 0x100000001b3ull;
	mix(now);
	mix(uint64_t(it.from) << 32 | uint64_t(it.to));
	mix(h);
	if (print_trace)
		fprintf(stderr, "sim %llu: deliver %d->%d len %u hash %016llx\n", (unsigned long long)now,
			it.from, it.to, it.pkt->len, (unsigned long long)h);
	if (!n.dev && !n.hook) { // removed
		totals.dropped++;
		link(it.from, it.to).c.dropped++;
		sroce_env_pkt_free(it.pkt);
		return;
	}
	totals.delivered++;
	link(it.from, it.to).c.delivered++;
	sroce_env_pkt *pkt = n.rx_linear ? fragment(it.pkt, n.rx_linear) : it.pkt;
	// Receive runs in softirq: atomic context.
	with_batch(true, [&](sroce_env_batch *b) {
		if (n.hook)
			n.hook(pkt, b);
		else
			sroce_core_rx(n.dev, pkt, b);
	});
}

void Engine::run_task(Task *t) {
	mix(now);
	mix(t->atomic ? 1 : 2);
	if (print_trace)
		fprintf(stderr, "sim %llu: %s\n", (unsigned long long)now, t->atomic ? "timer" : "work");
	t->pending = false;
	t->running = true;
	with_batch(t->atomic, [&](sroce_env_batch *b) { t->fn(t->arg, b); });
	t->running = false;
	if (t->destroy_after_run)
		task_free(t);
}

bool Engine::step() {
	if (queue.empty())
		return false;
	auto first = queue.begin();
	Item item = first->second;
	uint64_t at = first->first.first;
	queue.erase(first);
	same_instant = at == now ? same_instant + 1 : 0;
	now = at;
	if (same_instant > livelock_limit) {
		sroce_env_warn(__FILE__, __LINE__, "sim: livelock, too many items at one instant");
		abort();
	}
	if (item.kind == Item::task) {
		item.t->queued = false;
		run_task(item.t);
	} else {
		deliver(item);
	}
	// A grace period: no core call runs between two steps (env_host.h).
	env_host::rcu_barrier();
	return true;
}

} // namespace sim::detail

namespace sim {

using detail::Engine;

Sim::Sim(uint64_t seed) : e_(std::make_unique<Engine>(seed)) {
	// Memory keys are random: the same seed gives the same keys.
	env_host::seed_random(seed);
}
Sim::~Sim() = default;

uint64_t Sim::seed() const { return e_->seed; }
uint64_t Sim::now() const { return e_->now; }

int Sim::add_node(const NodeConfig &cfg) {
	int n = int(e_->nodes.size());
	sroce_core_dev_init init{};
	init.netdev_mtu = cfg.netdev_mtu;
	init.netdev_up = cfg.up;
	init.zero_copy_min = cfg.zero_copy_min;
	sroce_core_dev *dev = nullptr;
	int rc = sroce_core_dev_create(&init, &dev);
	if (rc)
		return rc;
	// SROCE_SIM_RX_LINEAR=60 runs every test with fragmented receives.
	const char *lin = getenv("SROCE_SIM_RX_LINEAR");
	e_->nodes.push_back({dev, nullptr, lin ? unsigned(strtoul(lin, nullptr, 0)) : 0});
	return n;
}

static detail::Node &node(Engine &e, int n) {
	if (n < 0 || size_t(n) >= e.nodes.size()) {
		fprintf(stderr, "sim: no node %d\n", n);
		abort();
	}
	return e.nodes[size_t(n)];
}

sroce_core_dev *Sim::dev(int n) const { return node(*e_, n).dev; }

// ::ffff:10.0.x.y for IPv4 (RoCEv2's IPv4-mapped GID), fd00::x:y for IPv6.
static void node_gid(int n, bool ipv6, unsigned char gid[16]) {
	memset(gid, 0, 16);
	unsigned int host = unsigned(n + 1);
	if (ipv6) {
		gid[0] = 0xfd;
	} else {
		gid[10] = gid[11] = 0xff;
		gid[12] = 10;
	}
	gid[14] = uint8_t(host >> 8);
	gid[15] = uint8_t(host);
}

Path Sim::path(int from, int to, bool ipv6) {
	node(*e_, from);
	node(*e_, to);
	Path p{detail::path_new(from, to), {}};
	p.info.ipv6 = ipv6;
	p.info.hop_limit = 64;
	node_gid(from, ipv6, p.info.src);
	node_gid(to, ipv6, p.info.dst);
	return p;
}

void Sim::set_rx_hook(int n, RxHook hook) { node(*e_, n).hook = std::move(hook); }
void Sim::set_rx_linear(int n, unsigned int bytes) { node(*e_, n).rx_linear = bytes; }

void Sim::set_work_delay(uint64_t ns) { e_->work_delay_ns = ns; }
void Sim::set_timer_tick(uint64_t ns) { e_->timer_tick_ns = ns; }

void Sim::remove_node(int n) {
	detail::Node &nd = node(*e_, n);
	sroce_core_dev_destroy(nd.dev);
	nd.dev = nullptr;
}

void Sim::inject(int from, int to, const void *data, unsigned int len) {
	node(*e_, from);
	node(*e_, to);
	sroce_env_pkt *pkt = detail::pkt_new({len});
	memcpy(pkt->frags[0].data, data, len);
	e_->transmit(from, to, pkt);
}

void Sim::set_link(int from, int to, const LinkConfig &c) { e_->link(from, to).cfg = c; }

void Sim::set_all_links(const LinkConfig &c) {
	e_->default_link = c;
	for (auto &[key, l] : e_->links)
		l.cfg = c;
}

const Counters &Sim::counters() const { return e_->totals; }

Counters Sim::link_counters(int from, int to) const {
	auto it = e_->links.find({from, to});
	return it == e_->links.end() ? Counters{} : it->second.c;
}

void Sim::set_tap(std::function<void(const WirePacket &)> tap) { e_->tap = std::move(tap); }
void Sim::set_filter(std::function<bool(const WirePacket &)> f) { e_->filter = std::move(f); }
void Sim::set_event_handler(std::function<void(void *, int)> fn) { e_->on_event = std::move(fn); }
void Sim::set_steer(std::function<bool(sroce_env_pkt *, void *)> fn) { e_->steer = std::move(fn); }
void Sim::set_steer_qp(std::function<bool(sroce_env_pkt *, int, bool, void *)> fn) { e_->steer_qp = std::move(fn); }
const std::vector<Event> &Sim::events() const { return e_->events; }
void Sim::clear_events() { e_->events.clear(); }

std::vector<int> Sim::events_for(void *owner) const {
	std::vector<int> kinds;
	for (const Event &ev : e_->events)
		if (ev.owner == owner)
			kinds.push_back(ev.kind);
	return kinds;
}

void Sim::call(const Batched &fn) { e_->with_batch(false, fn); }

bool Sim::step() { return e_->step(); }

void Sim::run_for(uint64_t ns) {
	const uint64_t deadline = e_->now + ns;
	while (!e_->queue.empty() && e_->queue.begin()->first.first <= deadline)
		e_->step();
	e_->now = deadline;
}

bool Sim::run_until(const std::function<bool()> &pred, uint64_t timeout_ns) {
	const uint64_t deadline = e_->now + timeout_ns;
	for (;;) {
		if (pred())
			return true;
		if (e_->queue.empty() || e_->queue.begin()->first.first > deadline) {
			e_->now = deadline;
			return pred();
		}
		e_->step();
	}
}

bool Sim::idle() const { return e_->queue.empty(); }
uint64_t Sim::trace_hash() const { return e_->hash; }

uint64_t seed_from_env(uint64_t fallback) {
	const char *s = getenv("SROCE_SIM_SEED");
	return s && *s ? strtoull(s, nullptr, 0) : fallback;
}

} // namespace sim

// env.h's data path for user space: virtual time, packets, paths, batches,
// timers and deferred work, scheduled by the simulator engine (sim.cpp).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "env_host.h"
#include "sim_internal.h"

using sim::detail::g_engine;
using sim::detail::Task;

struct sroce_env_timer : Task {};
struct sroce_env_work : Task {};

namespace sim::detail {

sroce_env_pkt *pkt_new(const std::vector<unsigned int> &frag_lens) {
	auto *pkt = new sroce_env_pkt;
	for (unsigned int n : frag_lens) {
		pkt->frags.push_back({new unsigned char[std::max(n, 1u)], n});
		pkt->len += n;
	}
	env_host::count_allocation(1);
	return pkt;
}

void pkt_linearize(const sroce_env_pkt *pkt, unsigned char *out) {
	for (const auto &f : pkt->frags) {
		memcpy(out, f.data, f.len);
		out += f.len;
	}
}

void path_get(sroce_env_path *p) { p->refs++; }

sroce_env_path *path_new(int from, int to) {
	env_host::count_allocation(1);
	return new sroce_env_path{1, from, to};
}

void task_free(Task *t) {
	env_host::count_allocation(-1);
	if (t->atomic)
		delete static_cast<sroce_env_timer *>(t);
	else
		delete static_cast<sroce_env_work *>(t);
}

} // namespace sim::detail

namespace {

// Calls fn(chunk, chunk_len) over [off, off + len) of pkt, across fragments.
template <typename Fn> void for_range(const sroce_env_pkt *pkt, unsigned int off, unsigned int len, Fn fn) {
	for (const auto &f : pkt->frags) {
		if (!len)
			return;
		if (off >= f.len) {
			off -= f.len;
			continue;
		}
		unsigned int n = std::min(len, f.len - off);
		fn(f.data + off, n);
		off = 0;
		len -= n;
	}
}

bool in_range(const sroce_env_pkt *pkt, unsigned int off, unsigned int len) {
	return off <= pkt->len && len <= pkt->len - off;
}

Task *task_new(sroce_env_callback fn, void *arg, bool atomic, Task *t) {
	t->fn = fn;
	t->arg = arg;
	t->atomic = atomic;
	env_host::count_allocation(1);
	return t;
}

// Cancel that waits for a running callback: only from process context, and
// never from the callback itself (the kernel would deadlock).
void task_cancel(Task *t) {
	if (env_host::in_atomic())
		sroce_env_warn(__FILE__, __LINE__, "timer/work cancel in atomic context");
	else if (t->running)
		sroce_env_warn(__FILE__, __LINE__, "timer/work cancelled from its own callback");
	if (t->queued && g_engine)
		g_engine->unschedule(t);
	t->queued = false;
	t->pending = false;
}

void task_destroy(Task *t) {
	if (!t)
		return;
	task_cancel(t);
	if (t->running)
		t->destroy_after_run = true; // already warned; keep ASan quiet about it
	else
		sim::detail::task_free(t);
}

} // namespace

extern "C" {

unsigned long long sroce_env_now_ns(void) {
	if (g_engine)
		return g_engine->now;
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void sroce_env_path_put(sroce_env_path *path) {
	if (!path)
		return;
	if (path->refs <= 0) {
		sroce_env_warn(__FILE__, __LINE__, "path reference underflow");
		return;
	}
	if (--path->refs == 0) {
		env_host::count_allocation(-1);
		delete path;
	}
}

sroce_env_pkt *sroce_env_pkt_alloc(sroce_env_path *path, unsigned int len, unsigned char **data) {
	if (env_host::take_allocation_failure())
		return nullptr;
	sroce_env_pkt *pkt = sim::detail::pkt_new({len});
	// Poisoned, as an skb is not zeroed: a field the core forgets shows.
	memset(pkt->frags[0].data, 0xa5, len);
	*data = pkt->frags[0].data;
	return pkt;
}

void sroce_env_pkt_free(sroce_env_pkt *pkt) {
	if (!pkt)
		return;
	for (auto &f : pkt->frags)
		if (!f.borrowed)
			delete[] f.data;
	env_host::count_allocation(-1);
	delete pkt;
}

// As the glue's: page fragments after a linear head, at most
// SROCE_ENV_PKT_FRAGS, each inside one 4 KiB page; then the tail.
int sroce_env_pkt_add_frag(sroce_env_pkt *pkt, const void *kva, unsigned int len) {
	auto addr = reinterpret_cast<uintptr_t>(kva);
	if (!len || (addr & 4095) + len > 4096)
		return -EINVAL;
	if (pkt->frags.size() > SROCE_ENV_PKT_FRAGS)
		return -ENOSPC;
	pkt->frags.push_back({static_cast<unsigned char *>(const_cast<void *>(kva)), len, true});
	pkt->len += len;
	env_host::note_zero_copy_frag(len);
	return 0;
}

unsigned char *sroce_env_pkt_add_tail(sroce_env_pkt *pkt, unsigned int len) {
	if (len > 8) {
		sroce_env_warn(__FILE__, __LINE__, "pkt_add_tail: more than 8 bytes");
		return nullptr;
	}
	if (env_host::take_allocation_failure())
		return nullptr;
	auto *d = new unsigned char[std::max(len, 1u)];
	memset(d, 0xa5, len); // poisoned: the core writes every byte
	pkt->frags.push_back({d, len});
	pkt->len += len;
	return d;
}

void sroce_env_pkt_send(sroce_env_batch *b, sroce_env_path *path, sroce_env_pkt *pkt) {
	sim::detail::path_get(path);
	b->pkts.emplace_back(path, pkt);
}

const unsigned char *sroce_env_pkt_head(const sroce_env_pkt *pkt, unsigned int *linear,
					unsigned int *total) {
	*linear = pkt->frags[0].len;
	*total = pkt->len;
	return pkt->frags[0].data;
}

int sroce_env_pkt_read(const sroce_env_pkt *pkt, unsigned int off, void *dst, unsigned int len) {
	if (!in_range(pkt, off, len))
		return -EFAULT;
	auto *out = static_cast<unsigned char *>(dst);
	for_range(pkt, off, len, [&](const unsigned char *p, unsigned int n) {
		memcpy(out, p, n);
		out += n;
	});
	return 0;
}

unsigned int sroce_env_pkt_crc32(const sroce_env_pkt *pkt, unsigned int off, unsigned int len,
				 unsigned int crc) {
	// The core checks lengths before it checksums: out of range is its bug.
	if (!in_range(pkt, off, len)) {
		sroce_env_warn(__FILE__, __LINE__, "pkt_crc32 out of range");
		return crc;
	}
	for_range(pkt, off, len,
		  [&](const unsigned char *p, unsigned int n) { crc = sroce_env_crc32_le(crc, p, n); });
	return crc;
}

int sroce_env_rx_steer(sroce_env_pkt *pkt, void *cq_owner) {
	return g_engine && g_engine->steer && g_engine->steer(pkt, cq_owner);
}

int sroce_env_rx_steer_qp(sroce_env_pkt *pkt, int cpu, int must_queue, void *token, const void *) {
	return g_engine && g_engine->steer_qp && g_engine->steer_qp(pkt, cpu, must_queue != 0, token);
}

// The glue's batch holds SROCE_ENV_BATCH_EVENTS distinct events and drops
// (with a warning) what does not fit: the same here, so a core entry point
// that queues more fails its host test. Repeats are kept for the event log.
void sroce_env_event(sroce_env_batch *b, void *owner, int kind) {
	std::pair<void *, int> e(owner, kind);
	if (std::find(b->events.begin(), b->events.end(), e) == b->events.end()) {
		if (b->distinct == SROCE_ENV_BATCH_EVENTS) {
			sroce_env_warn(__FILE__, __LINE__, "batch event overflow: event dropped");
			return;
		}
		b->distinct++;
	}
	b->events.push_back(e);
}

sroce_env_timer *sroce_env_timer_create(sroce_env_callback fn, void *arg) {
	if (env_host::take_allocation_failure())
		return nullptr;
	return static_cast<sroce_env_timer *>(task_new(fn, arg, true, new sroce_env_timer));
}

void sroce_env_timer_arm(sroce_env_timer *t, unsigned long long delay_ns) {
	if (t->queued)
		g_engine->unschedule(t);
	t->pending = true;
	// Without a simulator there is no clock to fire on: it stays pending.
	if (!g_engine)
		return;
	uint64_t at = g_engine->now + delay_ns;
	if (uint64_t tick = g_engine->timer_tick_ns) // mod_timer(jiffies + ceil(delay / tick))
		at = (g_engine->now / tick + (delay_ns + tick - 1) / tick) * tick;
	g_engine->schedule(t, at);
}

void sroce_env_timer_cancel(sroce_env_timer *t) { task_cancel(t); }
void sroce_env_timer_destroy(sroce_env_timer *t) { task_destroy(t); }

sroce_env_work *sroce_env_work_create(sroce_env_callback fn, void *arg) {
	if (env_host::take_allocation_failure())
		return nullptr;
	return static_cast<sroce_env_work *>(task_new(fn, arg, false, new sroce_env_work));
}

void sroce_env_work_queue(sroce_env_work *w) {
	// Kernel semantics: the pending bit is cleared just before the work
	// runs, so queueing while it runs makes it run once more.
	if (w->pending)
		return;
	w->pending = true;
	if (g_engine)
		g_engine->schedule(w, g_engine->now + g_engine->work_delay_ns);
}

void sroce_env_work_cancel(sroce_env_work *w) { task_cancel(w); }
void sroce_env_work_destroy(sroce_env_work *w) { task_destroy(w); }

} // extern "C"

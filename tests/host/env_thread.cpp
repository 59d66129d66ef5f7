// env.h threads for user space: std::thread with the kernel's task-state
// semantics (prepare_sleep = TASK_INTERRUPTIBLE, a wake makes the thread
// runnable, sleep returns at once for a runnable thread), so the core's
// SQ poller runs its real sleep/wake protocol in the host tests.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "env_host.h"
#include "sim_internal.h"

struct sroce_env_thread {
	sroce_env_thread_fn fn;
	void *arg;
	std::thread th;
	std::mutex m;
	std::condition_variable cv;
	bool runnable = true; // guarded by m: false between prepare_sleep and a wake
	std::atomic<bool> stop{false};
};

namespace {
// What sroce_env_thread_contended answers: set by the tests, since the
// host's real run queues are not the VM's.
std::atomic<bool> g_contended{false};
// Events of batches run without a simulator, in flush order.
std::mutex g_events_mutex;
std::vector<std::pair<void *, int>> g_events;
} // namespace

void env_host::set_thread_contended(bool on) { g_contended.store(on, std::memory_order_relaxed); }

std::vector<std::pair<void *, int>> env_host::unsimulated_events() {
	std::lock_guard<std::mutex> g(g_events_mutex);
	return g_events;
}

void env_host::clear_unsimulated_events() {
	std::lock_guard<std::mutex> g(g_events_mutex);
	g_events.clear();
}

extern "C" {

sroce_env_thread *sroce_env_thread_create(sroce_env_thread_fn fn, void *arg, const char *, int) {
	if (env_host::take_allocation_failure())
		return nullptr;
	env_host::count_allocation(1);
	auto *t = new sroce_env_thread;
	t->fn = fn;
	t->arg = arg;
	t->th = std::thread([t] { t->fn(t->arg, t); });
	return t;
}

void sroce_env_thread_stop(sroce_env_thread *t) {
	if (!t)
		return;
	if (env_host::in_atomic())
		sroce_env_warn(__FILE__, __LINE__, "thread stop in atomic context");
	t->stop.store(true, std::memory_order_seq_cst);
	sroce_env_thread_wake(t);
	t->th.join();
	delete t;
	env_host::count_allocation(-1);
}

int sroce_env_thread_should_stop(sroce_env_thread *self) { return self->stop.load(std::memory_order_seq_cst); }

void sroce_env_thread_prepare_sleep(sroce_env_thread *self) {
	{
		std::lock_guard<std::mutex> g(self->m);
		self->runnable = false;
	}
	// set_current_state is smp_store_mb: a full barrier after the store.
	std::atomic_thread_fence(std::memory_order_seq_cst);
}

void sroce_env_thread_cancel_sleep(sroce_env_thread *self) {
	std::lock_guard<std::mutex> g(self->m);
	self->runnable = true;
}

void sroce_env_thread_sleep(sroce_env_thread *self) {
	std::unique_lock<std::mutex> l(self->m);
	self->cv.wait(l, [self] { return self->runnable; });
}

void sroce_env_thread_relax(sroce_env_thread *) { std::this_thread::yield(); }

int sroce_env_thread_contended(sroce_env_thread *) { return g_contended.load(std::memory_order_relaxed); }

void sroce_env_thread_nap(sroce_env_thread *, unsigned long long ns) {
	std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
}

void sroce_env_thread_wake(sroce_env_thread *t) {
	if (!t)
		return;
	// try_to_wake_up: a full barrier before it looks at the task state.
	std::atomic_thread_fence(std::memory_order_seq_cst);
	std::lock_guard<std::mutex> g(t->m);
	t->runnable = true;
	t->cv.notify_one();
}

void sroce_env_run_batched(sroce_env_callback fn, void *arg) {
	if (sim::detail::g_engine) {
		sim::detail::g_engine->with_batch(false, [&](sroce_env_batch *b) { fn(arg, b); });
		return;
	}
	// No simulated wire: packets have nowhere to go; events are logged
	// for the test (env_host::unsimulated_events).
	sroce_env_batch b;
	fn(arg, &b);
	if (!b.pkts.empty())
		sroce_env_warn(__FILE__, __LINE__, "packets without a simulator");
	{
		std::lock_guard<std::mutex> g(g_events_mutex);
		for (auto e : b.events)
			g_events.push_back(e);
	}
	for (auto [path, pkt] : b.pkts) {
		sroce_env_pkt_free(pkt);
		sroce_env_path_put(path);
	}
}

} // extern "C"

// env.h for user space: the core's OS services backed by libc, with hooks
// that let tests inject allocation failures and see leaks, logs and warnings.
// The data path (time, packets, timers, work) is the simulator: sim_env.cpp.
#include "env_host.h"

#include "crc32_sw.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>

extern "C" {
#include "env.h"
}

namespace {
std::atomic<long> g_live{0};
std::atomic<int> g_fail_countdown{-1}; // allocations to let pass before one fails
std::atomic<int> g_warnings{0};
std::mutex g_log_mutex;
std::vector<std::string> g_log;
// Spinlocks held plus atomic callbacks running, per thread (kernel: preempt count).
thread_local int t_atomic = 0;
} // namespace

namespace env_host {
long live_allocations() { return g_live.load(); }
void fail_nth_allocation(int n) { g_fail_countdown.store(n); }
std::vector<std::string> &log_lines() { return g_log; }
int warnings() { return g_warnings.load(); }
bool take_allocation_failure() {
	int left = g_fail_countdown.load();
	while (left >= 0) {
		if (g_fail_countdown.compare_exchange_weak(left, left - 1))
			return left == 0;
	}
	return false;
}
void count_allocation(long delta) { g_live += delta; }
bool in_atomic() { return t_atomic > 0; }
AtomicScope::AtomicScope() { t_atomic++; }
AtomicScope::~AtomicScope() { t_atomic--; }
void clear() {
	std::lock_guard<std::mutex> g(g_log_mutex);
	g_log.clear();
	g_warnings = 0;
	g_fail_countdown = -1;
	t_atomic = 0; // a test that failed inside a callback left it raised
}
} // namespace env_host

extern "C" {

void *sroce_env_zalloc(unsigned long size, int atomic) {
	// GFP_KERNEL under a spinlock or in softirq sleeps where it must not.
	if (!atomic && t_atomic > 0)
		sroce_env_warn(__FILE__, __LINE__, "sleeping allocation in atomic context");
	if (env_host::take_allocation_failure())
		return nullptr;
	void *p = calloc(1, size ? size : 1);
	if (p)
		g_live++;
	return p;
}

void sroce_env_free(void *ptr) {
	if (!ptr)
		return;
	g_live--;
	free(ptr);
}

struct sroce_env_spinlock {
	std::mutex m;
};

sroce_env_spinlock *sroce_env_spin_create(void) {
	void *mem = sroce_env_zalloc(sizeof(sroce_env_spinlock), 0);
	return mem ? new (mem) sroce_env_spinlock() : nullptr;
}

void sroce_env_spin_destroy(sroce_env_spinlock *l) {
	if (!l)
		return;
	l->~sroce_env_spinlock();
	sroce_env_free(l);
}

unsigned long sroce_env_spin_lock(sroce_env_spinlock *l) {
	l->m.lock();
	t_atomic++;
	return 0;
}

void sroce_env_spin_unlock(sroce_env_spinlock *l, unsigned long) {
	t_atomic--;
	l->m.unlock();
}

void sroce_env_log(int level, const char *fmt, ...) {
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	std::lock_guard<std::mutex> g(g_log_mutex);
	g_log.emplace_back(buf);
}

void sroce_env_warn(const char *file, int line, const char *what) {
	g_warnings++;
	std::fprintf(stderr, "sroce core warning: %s:%d: %s\n", file, line, what);
}

unsigned int sroce_env_crc32_le(unsigned int crc, const void *p, unsigned long len) {
	return crc32_sw::crc32_le(crc, p, len);
}

} // extern "C"

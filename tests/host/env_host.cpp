// env.h for user space: the core's OS services backed by libc, with hooks
// that let tests inject allocation failures and see leaks, logs and warnings.
// The data path (time, packets, timers, work) is the simulator: sim_env.cpp.
#include "env_host.h"

#include "crc32_sw.h"

#include <atomic>
#include <cstdint>
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
// The kinds of the spinlocks this thread holds, in the order taken.
constexpr int max_held = 16;
thread_local int t_held[max_held];
thread_local int t_nheld = 0;
// Acquisitions per lock kind, all threads, since the program started.
std::atomic<unsigned long> g_lock_taken[SROCE_LOCK_KINDS];
// sroce_env_free_rcu's blocks, until the next grace period (rcu_barrier).
std::mutex g_rcu_mutex;
std::vector<void *> g_rcu_pending;
// The CPU sroce_env_cpu names for this thread, and how many there are.
thread_local int t_cpu = 0;
std::atomic<int> g_nr_cpus{4};
std::atomic<long> g_user_bytes{0};
std::atomic<unsigned long> g_zero_copy_bytes{0};
std::atomic<uint64_t> g_random{0x5eed};

void lock_order_abort(int held, int taken) {
	std::fprintf(stderr,
		     "sroce lock order: kind %d taken while holding kind %d "
		     "(env.h sroce_env_lock_kind is the order)\n",
		     taken, held);
	std::abort();
}
std::atomic<env_host::LockOrderHandler> g_lock_order{lock_order_abort};

// A free of more than a page may be vfree in the kernel (kvzalloc falls
// back to vmalloc only above a page), which may sleep. Each block carries
// its size in front so the free can tell.
constexpr size_t header = 16;
constexpr unsigned long page = 4096;
void *block_alloc(unsigned long size) {
	auto *p = static_cast<unsigned char *>(calloc(1, header + (size ? size : 1)));
	if (!p)
		return nullptr;
	*reinterpret_cast<unsigned long *>(p) = size;
	g_live++;
	return p + header;
}
unsigned long block_free(void *ptr) {
	auto *p = static_cast<unsigned char *>(ptr) - header;
	unsigned long size = *reinterpret_cast<unsigned long *>(p);
	g_live--;
	free(p);
	return size;
}
} // namespace

namespace env_host {
long live_allocations() {
	rcu_barrier();
	return g_live.load();
}
void rcu_barrier() {
	std::vector<void *> ready;
	{
		std::lock_guard<std::mutex> g(g_rcu_mutex);
		ready.swap(g_rcu_pending);
	}
	for (void *p : ready)
		block_free(p);
}
// What is still pending at exit is freed then, before the leak check.
struct RcuDrainAtExit {
	~RcuDrainAtExit() { rcu_barrier(); }
} g_rcu_drain_at_exit;
size_t rcu_pending() {
	std::lock_guard<std::mutex> g(g_rcu_mutex);
	return g_rcu_pending.size();
}
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
long user_bytes() { return g_user_bytes.load(); }
void seed_random(uint64_t seed) { g_random.store(seed); }
LockOrderHandler set_lock_order_handler(LockOrderHandler h) {
	return g_lock_order.exchange(h ? h : lock_order_abort);
}
int locks_held() { return t_nheld; }
bool in_atomic() { return t_atomic > 0; }
void set_cpu(int cpu) { t_cpu = cpu; }
void set_nr_cpus(int n) { g_nr_cpus = n > 0 ? n : 1; }
unsigned long zero_copy_bytes() { return g_zero_copy_bytes.load(); }
void note_zero_copy_frag(unsigned int len) { g_zero_copy_bytes += len; }
unsigned long locks_taken(int kind) {
	return unsigned(kind) < SROCE_LOCK_KINDS ? g_lock_taken[kind].load() : 0;
}
AtomicScope::AtomicScope() { t_atomic++; }
AtomicScope::~AtomicScope() { t_atomic--; }
void clear() {
	std::lock_guard<std::mutex> g(g_log_mutex);
	g_log.clear();
	g_warnings = 0;
	g_fail_countdown = -1;
	t_atomic = 0; // a test that failed inside a callback left it raised
	t_nheld = 0;
}
} // namespace env_host

extern "C" {

void *sroce_env_zalloc(unsigned long size, int atomic) {
	// GFP_KERNEL under a spinlock or in softirq sleeps where it must not.
	if (!atomic && t_atomic > 0)
		sroce_env_warn(__FILE__, __LINE__, "sleeping allocation in atomic context");
	if (env_host::take_allocation_failure())
		return nullptr;
	return block_alloc(size);
}

void *sroce_env_zalloc_user(unsigned long size) {
	if (t_atomic > 0)
		sroce_env_warn(__FILE__, __LINE__, "sleeping allocation in atomic context");
	if (env_host::take_allocation_failure())
		return nullptr;
	void *p = block_alloc(size);
	// Cumulative: tests compare the count before and after a create.
	if (p)
		g_user_bytes += long(size);
	return p;
}

void sroce_env_free(void *ptr) {
	if (!ptr)
		return;
	// Only the spinlock case: in softirq (a receive or timer callback here)
	// the kernel's vfree defers by itself.
	if (t_nheld > 0 && *reinterpret_cast<unsigned long *>(static_cast<unsigned char *>(ptr) - header) > page)
		sroce_env_warn(__FILE__, __LINE__, "free that may sleep (vfree) under a spinlock");
	block_free(ptr);
}

void sroce_env_free_rcu(void *ptr, sroce_env_rcu_head *) {
	if (!ptr)
		return;
	std::lock_guard<std::mutex> g(g_rcu_mutex);
	g_rcu_pending.push_back(ptr);
}

void sroce_env_free_deferred(void *ptr) {
	if (ptr)
		block_free(ptr);
}

unsigned int sroce_env_cpu(void) { return unsigned(t_cpu) % unsigned(g_nr_cpus.load()); }

unsigned int sroce_env_nr_cpus(void) { return unsigned(g_nr_cpus.load()); }

unsigned int sroce_env_random_u32(void) {
	// splitmix64: one atomic step per draw, safe from any thread.
	uint64_t z = g_random.fetch_add(0x9e3779b97f4a7c15ull) + 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return unsigned(z ^ (z >> 31));
}

struct sroce_env_spinlock {
	std::mutex m;
	int kind;
};

sroce_env_spinlock *sroce_env_spin_create(sroce_env_lock_kind kind) {
	if (unsigned(kind) >= SROCE_LOCK_KINDS) {
		sroce_env_warn(__FILE__, __LINE__, "spinlock of no kind");
		return nullptr;
	}
	void *mem = sroce_env_zalloc(sizeof(sroce_env_spinlock), 0);
	if (!mem)
		return nullptr;
	auto *l = new (mem) sroce_env_spinlock();
	l->kind = kind;
	return l;
}

void sroce_env_spin_destroy(sroce_env_spinlock *l) {
	if (!l)
		return;
	l->~sroce_env_spinlock();
	sroce_env_free(l);
}

unsigned long sroce_env_spin_lock(sroce_env_spinlock *l) {
	// Checked before waiting, so an inversion is reported even when this
	// run would not deadlock (what lockdep does in the kernel).
	for (int i = 0; i < t_nheld; i++)
		if (t_held[i] >= l->kind)
			g_lock_order.load()(t_held[i], l->kind);
	l->m.lock();
	g_lock_taken[l->kind]++;
	t_atomic++;
	if (t_nheld < max_held)
		t_held[t_nheld] = l->kind;
	t_nheld++;
	return 0;
}

void sroce_env_spin_unlock(sroce_env_spinlock *l, unsigned long) {
	// Locks may be released out of order: drop the newest of this kind.
	int n = t_nheld < max_held ? t_nheld : max_held;
	for (int i = n - 1; i >= 0; i--) {
		if (t_held[i] == l->kind) {
			for (int j = i; j + 1 < n; j++)
				t_held[j] = t_held[j + 1];
			break;
		}
	}
	if (t_nheld > 0)
		t_nheld--;
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

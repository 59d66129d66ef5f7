// Host micro-benchmark of a data-path key look-up (not a test: it asserts
// nothing about speed; `make bench-host` runs it after bench_packet). A
// packet looks its keys up (one per SGE it touches, at each end), from its
// QP's cache since issue 17 item 6 (key_cache.h), to set beside
// bench_packet's cost of a packet.
//
//   mr:     lookup_rkey of an MR's key: MemoryKeyTable::find_mr_rcu, no lock
//           (a reference taken with try_ref and dropped);
//   cached: the same key through a KeyCache of the thread's own (a QP's),
//           as every packet of a message after its first: no reference;
//   miss:   a stale key, which takes the table's lock (as every MR look-up
//           did before 2026-12-02, and a window's still does);
// each by one thread, then by two at once on the same key (the two CPUs
// receiving for one MR).
//
//   bench_keys [--ms MS] [--rounds N]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "device.h"
#include "env_host.h"
#include "ib_enums.h"
#include "key_cache.h"
#include "key_table.h"
#include "mw_layout.h"

extern "C" {
#include "core.h"
}

using Clock = std::chrono::steady_clock;
namespace acc = sroce::ib::access;

namespace {

constexpr u64 iova = 0x100000, len = 1 << 16, page = 4096;
volatile int sink;

// ns per look-up of key by `threads` threads at once, over ms milliseconds.
double ns_per_lookup(sroce::MemoryKeyTable &keys, u32 key, u32 pdn, unsigned threads, unsigned ms, bool cached) {
	std::atomic<bool> go{false};
	std::vector<unsigned long> done(threads);
	std::vector<double> secs(threads);
	std::vector<std::thread> ts;
	for (unsigned t = 0; t < threads; t++)
		ts.emplace_back([&, t] {
			env_host::set_cpu(int(t)); // its own counter shard, as each CPU has
			while (!go.load())
				;
			unsigned long n = 0;
			sroce::KeyCache cache;
			auto t0 = Clock::now(), until = t0 + std::chrono::milliseconds(ms);
			Clock::time_point now;
			do {
				for (int k = 0; k < 256; k++, n++) {
					u64 at = iova + (n & 0xff) * 64;
					sink = cached ? cache.rkey(keys, key, pdn, 0, at, 64, acc::remote_write).is_error()
						      : keys.lookup_rkey(key, pdn, 0, at, 64, acc::remote_write).is_error();
				}
				now = Clock::now();
			} while (now < until);
			done[t] = n;
			secs[t] = std::chrono::duration<double>(now - t0).count();
		});
	go = true;
	for (auto &t : ts)
		t.join();
	double worst = 0;
	for (unsigned t = 0; t < threads; t++)
		worst = std::max(worst, secs[t] * 1e9 / double(done[t]));
	return worst;
}

} // namespace

int main(int argc, char **argv) {
	unsigned ms = 100, rounds = 5;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--ms") && i + 1 < argc)
			ms = unsigned(atoi(argv[++i]));
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = unsigned(atoi(argv[++i]));
		else {
			fprintf(stderr, "usage: %s [--ms MS] [--rounds N]\n", argv[0]);
			return 2;
		}
	}
	sroce_core_dev_init di{};
	di.netdev_mtu = 9000;
	di.netdev_up = 1;
	sroce_core_dev *dev = nullptr;
	sroce_core_pd *pd = nullptr;
	sroce_core_mr *mr = nullptr;
	std::vector<u8> mem((len / page + 1) * page);
	sroce_core_mr_init mi{};
	if (sroce_core_dev_create(&di, &dev) || sroce_core_pd_create(dev, &pd))
		return 1;
	mi.pd = pd;
	mi.iova = iova;
	mi.length = len;
	mi.access = acc::local_write | acc::remote_write;
	mi.page_shift = 12;
	mi.npages = len / page;
	if (sroce_core_mr_create(dev, &mi, &mr))
		return 1;
	for (u64 p = 0; p < mi.npages; p++)
		sroce_core_mr_set_page(mr, p, mem.data() + p * page);
	if (sroce_core_mr_enable(mr))
		return 1;
	auto &keys = reinterpret_cast<sroce::Device *>(dev)->keys();
	u32 key = sroce_core_mr_lkey(mr), pdn = sroce_core_pd_number(pd);
	// The look-ups must do what they say: a hit and a miss.
	if (keys.lookup_rkey(key, pdn, 0, iova, 64, acc::remote_write).is_error() ||
	    !keys.lookup_rkey(key ^ 1, pdn, 0, iova, 64, acc::remote_write).is_error()) {
		fprintf(stderr, "bench_keys: the look-ups do not hit and miss\n");
		return 1;
	}
	// And the cache answers its second call itself (no look-up counted).
	{
		unsigned long long c0[SROCE_CNT_MAX], c1[SROCE_CNT_MAX];
		sroce::KeyCache cache;
		sroce_core_dev_read_counters(dev, c0, SROCE_CNT_MAX);
		bool hit = !cache.rkey(keys, key, pdn, 0, iova, 64, acc::remote_write).is_error() &&
			   !cache.rkey(keys, key, pdn, 0, iova + 64, 64, acc::remote_write).is_error();
		sroce_core_dev_read_counters(dev, c1, SROCE_CNT_MAX);
		if (!hit || c1[SROCE_CNT_KEY_LOOKUPS] - c0[SROCE_CNT_KEY_LOOKUPS] != 1) {
			fprintf(stderr, "bench_keys: the cache does not answer its second call\n");
			return 1;
		}
	}
	struct Row {
		const char *name;
		u32 key;
		unsigned threads;
		bool cached;
		double ns;
	} rows[] = {{"mr, 1 thread", key, 1, false, 1e18},     {"cached, 1 thread", key, 1, true, 1e18},
		    {"miss, 1 thread", key ^ 1, 1, false, 1e18},  {"mr, 2 threads", key, 2, false, 1e18},
		    {"cached, 2 threads", key, 2, true, 1e18}, {"miss, 2 threads", key ^ 1, 2, false, 1e18}};
	for (unsigned r = 0; r < rounds; r++) // interleaved, best of each
		for (auto &row : rows)
			row.ns = std::min(row.ns, ns_per_lookup(keys, row.key, pdn, row.threads, ms, row.cached));
	printf("sroce key look-up (lookup_rkey, 64 B), ns each, best of %u rounds\n", rounds);
	for (auto &row : rows)
		printf("  %-18s %7.1f ns  %s\n", row.name, row.ns,
		       row.cached	 ? "a QP's cache: no lock, no reference (key_cache.h)"
		       : row.key == key ? "an MR's key: no lock (find_mr_rcu)"
					: "a stale key: the table's lock");
	sroce_core_mr_destroy(mr);
	sroce_core_pd_destroy(pd);
	sroce_core_dev_destroy(dev);
	return 0;
}

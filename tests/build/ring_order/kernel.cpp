// The kernel's side of a user QP's rings under ThreadSanitizer: the core's
// own Ring (kmod/core/ring.h) consumes WQEs the provider posts and produces
// one CQE for each, while provider.c posts with libuser/ring.c and polls
// with libuser/cq.c on another thread. Every barrier pair of
// Documentation/abi.md is crossed (WQ-P1, WQ-C1, CQ-P1, CQ-C1); TSAN reports
// a data race on an entry if either side's half of a pair is weakened.
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"

extern "C" int provider_run(void *wq, void *cq, u32 log_size, u32 count);

namespace {

constexpr u32 log_size = 3; // 8 entries: both rings fill and wrap often
constexpr u32 count = 20000;

struct Rings {
	void *wq_mem, *cq_mem;
	int errors;
};

void *alloc_ring() {
	usize bytes = SROCE_RING_ENTRIES_OFFSET + (usize(64) << log_size);
	void *mem = aligned_alloc(64, bytes);
	memset(mem, 0, bytes);
	return mem;
}

// One WQE in, one CQE out, in order, as the responder and completer do.
void *kernel_run(void *arg) {
	auto *r = static_cast<Rings *>(arg);
	sroce::Ring wq, cq;
	wq.init(r->wq_mem, log_size, sizeof(sroce_wqe));
	cq.init(r->cq_mem, log_size, sizeof(sroce_cqe));
	u32 consumed = 0, produced = 0;
	while (consumed < count) {
		auto prod = wq.producer(consumed); // WQ-P1
		if (prod.is_error()) {
			r->errors++;
			return nullptr;
		}
		if (prod.value() == consumed) {
			sched_yield();
			continue;
		}
		u64 wr_id = reinterpret_cast<const sroce_wqe *>(wq.entry(consumed))->wr_id;
		wq.publish_consumer(++consumed); // WQ-C1: done reading the slot
		if (wr_id != consumed - 1)
			r->errors++;
		for (;;) {
			auto cons = cq.consumer(produced); // CQ-C1
			if (cons.is_error()) {
				r->errors++;
				return nullptr;
			}
			if (produced - cons.value() < cq.size())
				break;
			sched_yield();
		}
		sroce_cqe cqe{};
		cqe.wr_id = wr_id;
		cqe.byte_len = u32(wr_id);
		*reinterpret_cast<sroce_cqe *>(cq.entry(produced)) = cqe;
		cq.publish_producer(++produced); // CQ-P1
	}
	return nullptr;
}

} // namespace

int main() {
	Rings r{alloc_ring(), alloc_ring(), 0};
	pthread_t kernel;
	if (pthread_create(&kernel, nullptr, kernel_run, &r))
		return 2;
	int provider_errors = provider_run(r.wq_mem, r.cq_mem, log_size, count);
	pthread_join(kernel, nullptr);
	printf("%u WQEs and CQEs, kernel errors %d, provider errors %d\n", count, r.errors,
	       provider_errors);
	free(r.wq_mem);
	free(r.cq_mem);
	return r.errors || provider_errors ? 1 : 0;
}

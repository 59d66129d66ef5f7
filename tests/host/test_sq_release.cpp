// A send WQE's SQ slot is released (the SQ consumer index published)
// before its CQE appears. A poster that polls the CQE and posts at once
// must find the slot free: ib_read_lat, with a one-deep SQ and the
// completion running on another CPU (the SQ poller's send), failed with
// "Couldn't post send" while the CQE came first.
//
// The moment the CQE is written is caught by write-protecting the CQ ring:
// the completer's CQE store faults, and the handler reads the SQ's
// consumer index right then, before any later store can happen.
#include <catch2/catch.hpp>

#include <csignal>
#include <sys/mman.h>

#include "ib_enums.h"
#include "transport_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {
struct Watch {
	char *lo = nullptr;
	size_t len = 0;
	const volatile uint32_t *sq_consumer = nullptr;
	volatile uint32_t consumer_at_cqe = ~0u;
	volatile int faults = 0;
};
Watch *g_watch;
struct sigaction g_old_segv;

void on_segv(int, siginfo_t *si, void *) {
	char *a = static_cast<char *>(si->si_addr);
	if (!g_watch || a < g_watch->lo || a >= g_watch->lo + g_watch->len) {
		// Not ours: a real crash. Back to the previous handler, which
		// runs when the instruction faults again.
		sigaction(SIGSEGV, &g_old_segv, nullptr);
		return;
	}
	g_watch->consumer_at_cqe = *g_watch->sq_consumer;
	g_watch->faults = g_watch->faults + 1;
	mprotect(g_watch->lo, g_watch->len, PROT_READ | PROT_WRITE);
}
} // namespace

TEST_CASE("completer: the SQ slot is released before the CQE appears", "[transport][completer]") {
	constexpr unsigned int rw_access =
		ib::access::local_write | ib::access::remote_write | ib::access::remote_read;
	Fixture f(12);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_4096);
	Buffer &ba = f.buffer(a, 4096, rw_access);
	Buffer &bb = f.buffer(b, 4096, rw_access);
	unsigned int log_size = 0;
	unsigned long cq_bytes = 0;
	// The fixture's CQ ring size (transport_fixture.cpp, add_node).
	REQUIRE(sroce_core_ring_size(4096, 65536, sizeof(sroce_cqe), &log_size, &cq_bytes) == 0);
	REQUIRE(log_size == a.cq_ring.log_size);
	auto *sq_hdr = static_cast<sroce_ring_header *>(qa.sq.mem);

	for (unsigned char opcode : {ib::wr_rdma_read, ib::wr_rdma_write}) {
		INFO("opcode " << int(opcode));
		uint32_t before = sq_hdr->consumer;
		sroce_wqe w = wqe(opcode, opcode, 1);
		w.rdma.remote_addr = iova_of(b, bb);
		w.rdma.rkey = f.lkey(bb);
		REQUIRE(f.post_send(qa, w, {sge_of(f, a, ba, 0, 8)}) == 0);

		Watch watch;
		watch.lo = static_cast<char *>(a.cq_ring.mem);
		watch.len = cq_bytes;
		watch.sq_consumer = &sq_hdr->consumer;
		struct sigaction sa{};
		sa.sa_sigaction = on_segv;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		REQUIRE(sigaction(SIGSEGV, &sa, &g_old_segv) == 0);
		g_watch = &watch;
		REQUIRE(mprotect(watch.lo, watch.len, PROT_READ) == 0);
		// Run until the CQ's producer moves, without polling: polling
		// writes the ring's consumer index, and the completer must be
		// the only writer while the ring is protected.
		auto *cq_hdr = static_cast<const volatile sroce_ring_header *>(a.cq_ring.mem);
		uint32_t cq_prod = cq_hdr->producer;
		bool got = f.sim().run_until([&] { return cq_hdr->producer != cq_prod; }, 100000000ull);
		mprotect(watch.lo, watch.len, PROT_READ | PROT_WRITE);
		g_watch = nullptr;
		sigaction(SIGSEGV, &g_old_segv, nullptr);

		REQUIRE(got);
		std::vector<sroce_cqe> c = f.poll(a);
		REQUIRE(c.size() == 1);
		CHECK(c[0].status == ib::wc_success);
		CHECK(c[0].wr_id == opcode);
		REQUIRE(watch.faults == 1);
		// When the CQE was stored, the slot was free already.
		CHECK(watch.consumer_at_cqe == before + 1);
		CHECK(sq_hdr->consumer == before + 1);
	}
}

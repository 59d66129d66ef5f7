// Many long READs outstanding on a lossy wire, as perftest's ib_read_bw
// posts them: 16 READs of 64 KiB in flight at a 1024 MTU, loss 5% both
// ways, the QP timeout perftest gets with -u 16. In the VM this workload
// failed (tests/vm/82-netem.sh, Documentation/status.md); here each READ
// must complete with its bytes, within a bounded number of packets.
// It failed before the requester asked again for a READ only once per
// gap (seed 4242: the READ request for PSN 271 was sent again every ~8.5 us
// of virtual time and the first READ never completed).
#include <catch2/catch.hpp>

#include "ib_enums.h"
#include "transport_fixture.h"

using namespace tfx;
using namespace sroce;

TEST_CASE("transport: 16 outstanding 64 KiB READs under 5% loss", "[transport][reads]") {
	constexpr unsigned int depth = 16, len = 65536, total = 32;
	Fixture f(sim::seed_from_env(4242));
	INFO("seed " << f.sim().seed());
	sim::LinkConfig lossy;
	lossy.loss = 0.05;
	lossy.latency_ns = 20000;
	lossy.bits_per_sec = 1000000000ull;
	f.sim().set_all_links(lossy);
	f.trace_from_env();
	size_t sent = 0;
	f.sim().set_tap([&](const sim::WirePacket &) { sent++; });
	// 32 READs of 64 packets: even 20x that many packets is a storm.
	const size_t budget = 20 * 32 * 64;
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc, 64), &qb = f.qp(b, ib::qpt_rc, 64);
	f.connect(qa, qb, ib::mtu_1024, 0x100, 0x200, 16, 7, 7, 16);
	unsigned int all = ib::access::local_write | ib::access::remote_read;
	Buffer &la = f.buffer(a, depth * len, all);
	Buffer &rb = f.buffer(b, len, all);
	for (unsigned int i = 0; i < len; i++)
		rb.data[i] = (unsigned char)(i * 7 + 3);
	// The fixture's iova of each node's first buffer.
	const uint64_t la_va = 0x10000000ull, rb_va = 0x10000000ull;
	unsigned int posted = 0, done = 0;
	auto post = [&](unsigned int slot) {
		sroce_wqe w = wqe(posted + 1, ib::wr_rdma_read, 1);
		w.rdma.remote_addr = rb_va;
		w.rdma.rkey = f.lkey(rb);
		std::memset(la.data + size_t(slot) * len, 0, len);
		REQUIRE(f.post_send(qa, w, {sroce_sge{la_va + uint64_t(slot) * len, len, f.lkey(la)}}) == 0);
		posted++;
	};
	for (unsigned int i = 0; i < depth; i++)
		post(i);
	while (done < total) {
		std::vector<sroce_cqe> c;
		INFO("done " << done << " posted " << posted);
		bool got = false;
		while (!got && sent < budget)
			got = f.wait_cqes(a, 1, c, 10000000ull); // 10 ms of virtual time
		INFO("packets sent " << sent);
		REQUIRE(got);
		for (auto &e : c) {
			INFO("wr " << e.wr_id << " status " << int(e.status));
			REQUIRE(int(e.status) == ib::wc_success);
			unsigned int slot = unsigned(e.wr_id - 1) % depth;
			REQUIRE(std::memcmp(la.data + size_t(slot) * len, rb.data, len) == 0);
			done++;
			if (posted < total)
				post(slot);
		}
	}
	CHECK(la.guards_intact());
}

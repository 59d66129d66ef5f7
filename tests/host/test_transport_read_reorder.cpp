// ib_read_bw -a's 1 MiB READs between two namespaces of the debug kernel
// (tests/vm/80-transport.sh, Documentation/status.md): the responder's
// packets leave from either CPU and wait in that CPU's receive backlog, so
// the requester sees them reordered by dozens of packets, behind a slow
// receiver whose backlog drops what exceeds it. Every response beyond a gap
// once asked for the READ again, and every such request made the responder
// stream the rest of the window again: 35126 packets sent for ~10000 needed,
// the backlog overflowing, a 14 s queue, RETRY_EXC_ERR. Each READ must
// complete with its bytes, and the responder may send only a bounded excess.
#include <catch2/catch.hpp>

#include "ib_enums.h"
#include "transport_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

TEST_CASE("transport: 1 MiB READs through reordering backlogs, little resent", "[transport][read][reorder]") {
	constexpr unsigned int len = 1u << 20, total = 10, depth = 5;
	Fixture f(sim::seed_from_env(4343), 9000);
	INFO("seed " << f.sim().seed());
	f.trace_from_env();
	sim::LinkConfig lc;
	lc.bits_per_sec = 80000000ull;  // 10 MB/s: a 4 KiB packet every ~400 us
	lc.latency_ns = 4000000;        // a round trip of ~8 ms, as queued in the backlogs
	lc.reorder = 0.1;               // the other CPU's backlog
	lc.reorder_max_ns = 8000000;    // up to ~20 packets, a round trip late
	lc.queue_packets = 1000;        // netdev_max_backlog
	f.sim().set_all_links(lc);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc, 64), &qb = f.qp(b, ib::qpt_rc, 64);
	f.connect(qa, qb, ib::mtu_4096, 0x100, 0x200, 18, 7, 7, 16);
	Buffer &la = f.buffer(a, len, all_access);
	Buffer &rb = f.buffer(b, len, all_access);
	for (unsigned int i = 0; i < len; i++)
		rb.data[i] = (unsigned char)(i * 13 + 5);
	unsigned int posted = 0, done = 0;
	std::vector<sroce_cqe> c;
	while (done < total) {
		while (posted < total && posted - done < depth) {
			auto w = wqe(posted, ib::wr_rdma_read, 1);
			w.rdma.remote_addr = iova_of(b, rb);
			w.rdma.rkey = f.lkey(rb);
			REQUIRE(f.post_send(qa, w, {sroce_sge{iova_of(a, la), len, f.lkey(la)}}) == 0);
			posted++;
		}
		c.clear();
		REQUIRE(f.wait_cqes(a, 1, c, 60000000000ull));
		for (auto &e : c) {
			CAPTURE(done, e.wr_id);
			REQUIRE(e.status == ib::wc_success);
			done++;
		}
	}
	CHECK(std::memcmp(la.data, rb.data, len) == 0);
	const unsigned long long needed = total * (len / 4096);
	unsigned long long resent = device_counter(a, SROCE_CNT_READ_GAP_RESENDS);
	unsigned long long sent_b = device_counter(b, SROCE_CNT_TX_PKTS);
	INFO("responder sent " << sent_b << " for " << needed << ", gap resends " << resent
			       << ", retransmit timeouts " << device_counter(a, SROCE_CNT_RETRANS_TIMEOUTS));
	CHECK(device_counter(a, SROCE_CNT_RETRY_EXCEEDED) == 0);
	// Reordering is no loss. Asking again after 3 responses beyond a gap
	// sent 22 times what was needed here; the threshold that learns from
	// spurious requests sends about 5 times: a READ's response that
	// arrives before the previous READ's last is still dropped and asked
	// for again, with the window behind it (Documentation/transport.md,
	// "Loss recovery").
	CHECK(sent_b < 8 * needed);
}

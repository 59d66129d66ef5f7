// The responder's replay slots after the PSN space wrapped
// (kmod/core/read_atomic.cpp): 2^24 packets, so it runs in the optimized
// core_faults build (about 20x faster than the sanitized core_tests),
// not in test_replay_slots.cpp.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "ib_enums.h"
#include "icrc.h"
#include "transport_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {

constexpr unsigned int bth_at = 28; // IPv4 + UDP

// The FETCH_ADD original values qb answered, in order.
void tap_atomic_acks(Fixture &f, int from, std::vector<uint64_t> &origs) {
	f.sim().set_tap([&origs, from](const sim::WirePacket &p) {
		if (p.from != from || p.dropped || p.len < bth_at + 24 || p.data[bth_at] != ib::op::atomic_acknowledge)
			return;
		uint64_t v = 0;
		for (unsigned int i = 0; i < 8; i++) // BTH 12, AETH 4, then the value
			v = v << 8 | p.data[bth_at + 16 + i];
		origs.push_back(v);
	});
}

} // namespace

TEST_CASE("responder: a duplicate ATOMIC 2^24 PSNs after a kept one is answered with its own result",
	  "[psn_wrap]") {
	Fixture f(60);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024, 0, 0, 10, 7, 7, 4);
	Buffer &rb = f.buffer(b, 4096, all_access);
	std::memset(rb.data, 0, 8);
	std::vector<uint64_t> origs;
	tap_atomic_acks(f, b.id, origs);

	ib::Headers at;
	at.bth.opcode = ib::op::rc + ib::op::fetch_add;
	at.bth.ack_req = true;
	at.atomic_eth.va = iova_of(b, rb);
	at.atomic_eth.rkey = f.lkey(rb);
	at.atomic_eth.swap_add = 5;
	auto first = make_packet(f, qb.qpn, at, 0);
	f.sim().inject(a.id, b.id, first.data(), (unsigned)first.size());
	f.sim().run_for(1000000);
	REQUIRE(origs.size() == 1);
	CHECK(origs[0] == 0);

	// 2^24 - 1 zero-length WRITEs (no key, no ACK asked) bring the
	// expected PSN round to the first ATOMIC's, with only it kept.
	ib::Headers wr;
	wr.bth.opcode = ib::op::rc + ib::op::write_only;
	auto filler = make_packet(f, qb.qpn, wr, 0);
	unsigned int icrc_errors = 0;
	for (uint32_t psn = 1; psn < (1u << 24); psn++) {
		filler[bth_at + 9] = u8(psn >> 16);
		filler[bth_at + 10] = u8(psn >> 8);
		filler[bth_at + 11] = u8(psn);
		icrc_errors += ib::icrc_fill(ktl::Span<u8>(filler.data(), filler.size())).is_error();
		f.sim().inject(a.id, b.id, filler.data(), (unsigned)filler.size());
		if ((psn & 4095) == 0)
			f.sim().run_for(1000000);
	}
	f.sim().run_for(1000000);
	REQUIRE(icrc_errors == 0);

	at.atomic_eth.swap_add = 7;
	auto second = make_packet(f, qb.qpn, at, 0); // PSN 0 again
	f.sim().inject(a.id, b.id, second.data(), (unsigned)second.size());
	f.sim().run_for(1000000);
	REQUIRE(origs.size() == 2);
	CHECK(origs[1] == 5);
	// Its ACK lost: the duplicate is the second ATOMIC's, not the first's.
	f.sim().inject(a.id, b.id, second.data(), (unsigned)second.size());
	f.sim().run_for(1000000);
	REQUIRE(origs.size() == 3);
	CHECK(origs[2] == 5);
	uint64_t now;
	std::memcpy(&now, rb.data, 8);
	CHECK(now == 12); // each executed once
	CHECK(Fixture::query(qb).qp_state == ib::qps_rts);
	f.sim().set_tap(nullptr);
	(void)qa;
}

// Review cases of the error state (Documentation/status.md, "Left open from
// that review"): a corrupt receive producer index puts every QP type in
// error, UD as RC. Each failed on the code before its fix.
#include <catch2/catch.hpp>

#include <vector>

#include "ib_enums.h"
#include "transport_fixture.h"
#include "xrc_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {

size_t events_of(Fixture &f, void *owner, int kind) {
	size_t n = 0;
	for (const auto &e : f.sim().events())
		n += e.owner == owner && e.kind == kind;
	return n;
}

std::vector<sroce_cqe> cqes_of(Fixture &f, Node &n, unsigned int qpn) {
	std::vector<sroce_cqe> mine;
	for (auto &c : f.poll(n))
		if (c.qp_num == qpn)
			mine.push_back(c);
	return mine;
}

} // namespace

// Review of 2026-12-03: a UD QP took a receive producer index more than the
// ring's size ahead of its consumer (its owner rewrote it) for an empty RQ
// and dropped the datagram, in RTS; RC and UC went to error. Every type now
// goes to error with QP_FATAL, from its own RQ or an SRQ (which raises
// SRQ_ERR besides). Nothing is flushed from a ring whose count is
// impossible.
TEST_CASE("responder: a corrupt receive producer index puts every QP type in error, UD too",
	  "[transport][review][recv]") {
	for (unsigned int type : {ib::qpt_ud, ib::qpt_uc, ib::qpt_rc}) {
		for (bool with_srq : {false, true}) {
			CAPTURE(type, with_srq);
			Fixture f(90);
			Node &a = f.node(0), &b = f.node(1);
			xrcfx::TestSrq s(b.dev, b.pd, nullptr);
			Qp &qa = f.qp(a, type);
			Qp &qb = with_srq ? f.qp_mp(b, type, 0, 0, 256, s.srq) : f.qp(b, type);
			sroce_core_ah *ah = nullptr;
			if (type == ib::qpt_ud) {
				f.to_ud_rts(qa, 0x1234);
				f.to_ud_rts(qb, 0x1234);
				ah = f.ah(a, b);
			} else {
				f.connect(qa, qb, ib::mtu_1024);
			}
			Buffer &src = f.buffer(a, 4096, all_access), &dst = f.buffer(b, 2 * 4096, all_access);
			for (unsigned int i = 0; i < 2; i++) {
				sroce_sge sg = sge_of(f, b, dst, i * 4096, 4096);
				REQUIRE((with_srq ? s.post(10 + i, sg) : f.post_recv(qb, 10 + i, {sg})) == 0);
			}
			// Two posted; the owner rewrites the producer to claim the
			// ring's size and two more.
			auto *hdr = static_cast<sroce_ring_header *>(with_srq ? s.ring.mem : qb.rq.mem);
			unsigned int size = 1u << (with_srq ? s.ring.log_size : qb.rq.log_size);
			REQUIRE(hdr->producer == 2);
			hdr->producer = 2 + size;
			f.sim().clear_events();
			auto w = wqe(1, ib::wr_send, 1);
			if (ah)
				address_ud(w, ah, qb.qpn, 0x1234);
			REQUIRE(f.post_send(qa, w, {sge_of(f, a, src, 0, 100)}) == 0);
			f.sim().run_for(50000000);
			CHECK(Fixture::query(qb).qp_state == ib::qps_err);
			CHECK(events_of(f, &qb.owner, ib::ev_qp_fatal) == 1);
			CHECK(events_of(f, &s.owner, ib::ev_srq_err) == (with_srq ? 1u : 0u));
			CHECK(cqes_of(f, b, qb.qpn).empty());
			f.destroy_qp(qb); // before the SRQ it names
		}
	}
}

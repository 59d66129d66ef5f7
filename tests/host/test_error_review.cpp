// Review cases of the error state (Documentation/status.md, "Left open from
// that review"): a corrupt receive producer index puts every QP type in
// error, UD as RC; a local operation the requester executed ahead of a
// WQE that then failed is flushed, not completed with success after the
// error. Each failed on the code before its fix.
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

// A fast-registration MR's key: LOCAL_INV of it succeeds (invalid already,
// which invalidating again does not mind).
struct FastRegKey {
	sroce_core_mr *mr = nullptr;
	explicit FastRegKey(Node &n) {
		sroce_core_mr_init mi{};
		mi.pd = n.pd;
		mi.page_shift = 12;
		mi.npages = 1;
		mi.fast_reg = 1;
		REQUIRE(sroce_core_mr_create(n.dev, &mi, &mr) == 0);
	}
	~FastRegKey() { sroce_core_mr_destroy(mr); }
	unsigned int key() const { return sroce_core_mr_lkey(mr); }
};

sroce_wqe local_inv(uint64_t wr_id, unsigned int key) {
	sroce_wqe w = wqe(wr_id, ib::wr_local_inv, 0);
	w.imm_or_inv = key;
	return w;
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
			sroce_core_ah *ah = f.join(qa, qb);
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
			send_one_and_run(f, qa, ah, qb.qpn, sge_of(f, a, src, 0, 100));
			CHECK(Fixture::query(qb).qp_state == ib::qps_err);
			CHECK(events_of(f, &qb.owner, ib::ev_qp_fatal) == 1);
			CHECK(events_of(f, &s.owner, ib::ev_srq_err) == (with_srq ? 1u : 0u));
			CHECK(cqes_of(f, b, qb.qpn).empty());
			f.destroy_qp(qb); // before the SRQ it names
		}
	}
}

// Review of 2026-12-03: a local operation (LOCAL_INV, REG_MR, BIND_MW) runs
// when the requester reaches it, while WQEs before it may still wait for
// their ACK. When one of those then failed, the flush kept the local
// operation's success, and its CQE came after the error's. Completions
// stay in SQ order, and after the first in error every WQE is flushed,
// executed or not (the error state, IBTA 10.3.1; as rxe flushes its SQ).
TEST_CASE("completer: a local operation executed ahead of a WQE that fails is flushed, not a success after the error",
	  "[transport][review][local]") {
	for (int cause = 0; cause < 2; cause++) {
		DYNAMIC_SECTION((cause ? "a WQE after it fails validation while a SEND before it is in flight"
				       : "a WRITE before it is NAKed for its rkey")) {
			Fixture f(91 + cause);
			Node &a = f.node(0), &b = f.node(1);
			Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
			f.connect(qa, qb, ib::mtu_1024);
			Buffer &la = f.buffer(a, 4096, all_access), &rb = f.buffer(b, 4096, all_access);
			FastRegKey fr(a);
			REQUIRE(f.post_recv(qb, 50, {sge_of(f, b, rb, 0, 4096)}) == 0);
			// Posted together: one requester run sends the first WQE,
			// executes the LOCAL_INV and reaches the third before any
			// answer comes.
			sroce_wqe first = cause ? wqe(1, ib::wr_send, 1)
						: rdma_wqe(1, ib::wr_rdma_write, iova_of(b, rb), f.lkey(rb) ^ 0x100);
			REQUIRE(f.post_send(qa, first, {sge_of(f, a, la, 0, 64)}) == 0);
			REQUIRE(f.post_send(qa, local_inv(2, fr.key()), {}) == 0);
			// A flag the kernel does not know: LOC_QP_OP_ERR at fetch.
			auto third = wqe(3, ib::wr_send, 1, cause ? SROCE_WQE_SIGNALED | 0x80 : SROCE_WQE_SIGNALED);
			REQUIRE(f.post_send(qa, third, {sge_of(f, a, la, 64, 64)}) == 0);
			std::vector<sroce_cqe> ca;
			REQUIRE(f.wait_cqes(a, 3, ca, 5000000000ull));
			f.sim().run_for(1000000);
			for (auto &c : f.poll(a))
				ca.push_back(c);
			std::vector<sroce_cqe> sends;
			for (auto &c : ca)
				if (c.qp_num == qa.qpn)
					sends.push_back(c);
			REQUIRE(sends.size() == 3);
			for (unsigned int i = 0; i < 3; i++)
				CHECK(sends[i].wr_id == i + 1);
			if (cause) {
				// The QP went to error with the SEND unanswered.
				CHECK(sends[0].status == ib::wc_wr_flush_err);
				CHECK(sends[2].status == ib::wc_loc_qp_op_err);
			} else {
				CHECK(sends[0].status == ib::wc_rem_access_err);
				CHECK(sends[2].status == ib::wc_wr_flush_err);
			}
			CHECK(sends[1].status == ib::wc_wr_flush_err);
			CHECK(Fixture::query(qa).qp_state == ib::qps_err);
			// Nothing after the first error is a success.
			bool failed = false;
			for (auto &c : sends) {
				CHECK_FALSE((failed && c.status == ib::wc_success));
				failed |= c.status != ib::wc_success;
			}
		}
	}
}

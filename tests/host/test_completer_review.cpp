// The completer's review cases of 2026-12-03 (kmod/core/completer.cpp):
// an implied NAK, SQ Drained, QP_LAST_WQE_REACHED once per error. Each
// failed on the code before its fix.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "ib_enums.h"
#include "transport_fixture.h"
#include "xrc_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;
// Review of 2026-12-03: a NAK for the request after a READ or ATOMIC whose
// response was lost failed the READ or ATOMIC with the NAK's status, and the
// request the NAK named was only flushed.
TEST_CASE("completer: a NAK after a READ or ATOMIC whose response was lost is not that request's error",
	  "[transport][review][nak]") {
	for (int atomic = 0; atomic < 2; atomic++) {
		DYNAMIC_SECTION((atomic ? "ATOMIC, then a WRITE with a bad rkey" : "READ, then a SEND that draws RNR")) {
			Fixture f(40 + atomic);
			Node &a = f.node(0), &b = f.node(1);
			Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
			f.connect(qa, qb, ib::mtu_1024, 0, 0, 10, 7, /*rnr_retry*/ 0);
			Buffer &la = f.buffer(a, 4096, all_access);
			Buffer &rb = f.buffer(b, 4096, all_access);
			uint64_t init = 0x100;
			std::memcpy(rb.data + 64, &init, 8);
			const unsigned int bth_at = 20 + 8; // IPv4 and UDP headers
			u8 answer = atomic ? ib::op::atomic_acknowledge : ib::op::read_response_only;
			bool dropped = false;
			f.sim().set_filter([&](const sim::WirePacket &p) {
				if (dropped || p.from != b.id || p.len <= bth_at || p.data[bth_at] != answer)
					return true;
				dropped = true;
				return false;
			});
			auto w1 = wqe(1, atomic ? ib::wr_atomic_fetch_add : ib::wr_rdma_read, 1);
			w1.rdma.remote_addr = iova_of(b, rb) + 64;
			w1.rdma.rkey = f.lkey(rb);
			w1.rdma.compare_add = 5;
			REQUIRE(f.post_send(qa, w1, {sge_of(f, a, la, 0, atomic ? 8 : 64)}) == 0);
			auto w2 = wqe(2, atomic ? ib::wr_rdma_write : ib::wr_send, 1);
			if (atomic) {
				w2.rdma.remote_addr = iova_of(b, rb);
				w2.rdma.rkey = f.lkey(rb) ^ 0x100;
			}
			REQUIRE(f.post_send(qa, w2, {sge_of(f, a, la, 128, 64)}) == 0); // no receive posted on qb
			std::vector<sroce_cqe> ca;
			REQUIRE(f.wait_cqes(a, 2, ca, 20000000000ull));
			REQUIRE(dropped);
			CHECK(ca[0].wr_id == 1);
			CHECK(ca[1].wr_id == 2);
			uint64_t now;
			std::memcpy(&now, rb.data + 64, 8);
			if (atomic) {
				// The responder went to error with its NAK: the ATOMIC's
				// answer never comes again. Its outcome is unknown, never
				// the WRITE's access error; it was executed once.
				CHECK(ca[0].status == ib::wc_retry_exc_err);
				CHECK(ca[1].status == ib::wc_wr_flush_err);
				CHECK(now == init + 5);
			} else {
				// The READ is asked again and answered; the SEND draws
				// RNR again and, with no RNR retry, fails.
				CHECK(ca[0].status == ib::wc_success);
				CHECK(std::memcmp(la.data, rb.data + 64, 64) == 0);
				CHECK(ca[1].status == ib::wc_rnr_retry_exc_err);
			}
		}
	}
}

// Review of 2026-12-03: SQ Drained was never raised and sq_draining always
// read 0, so a consumer waiting for the drain before an SQD->SQD change
// waited forever.
TEST_CASE("completer: RTS->SQD raises SQ Drained once the WQEs begun before it completed",
	  "[transport][review][sqd]") {
	for (int notify = 0; notify < 2; notify++) {
		DYNAMIC_SECTION((notify ? "asked for" : "not asked for")) {
			Fixture f(50 + notify);
			Node &a = f.node(0), &b = f.node(1);
			Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
			f.connect(qa, qb, ib::mtu_1024);
			Buffer &la = f.buffer(a, 4096, all_access);
			Buffer &rb = f.buffer(b, 4096, all_access);
			auto drained = [&] {
				int n = 0;
				for (int e : f.sim().events_for(&qa.owner))
					n += e == ib::ev_sq_drained;
				return n;
			};
			// The WRITE's ACK is lost: it stays outstanding until the
			// retry timer resends it.
			const unsigned int bth_at = 28;
			bool dropped = false;
			f.sim().set_filter([&](const sim::WirePacket &p) {
				if (dropped || p.from != b.id || p.len <= bth_at || p.data[bth_at] != ib::op::acknowledge)
					return true;
				dropped = true;
				return false;
			});
			REQUIRE(f.post_send(qa, rdma_wqe(1, ib::wr_rdma_write, iova_of(b, rb), f.lkey(rb)),
					    {sge_of(f, a, la, 0, 64)}) == 0);
			for (int i = 0; i < 100000 && !dropped; i++)
				f.sim().run_for(1000);
			REQUIRE(dropped);
			sroce_core_qp_attr at{};
			at.qp_state = ib::qps_sqd;
			at.en_sqd_async_notify = notify;
			int rc = -1;
			f.sim().call([&](sroce_env_batch *bt) {
				rc = sroce_core_qp_modify(qa.qp, &at, ib::attr_state | ib::attr_en_sqd_async_notify, bt);
			});
			REQUIRE(rc == 0);
			CHECK(Fixture::query(qa).sq_draining == 1);
			CHECK(drained() == 0);
			// A WQE posted in SQD does not start, and is no part of the drain.
			REQUIRE(f.post_send(qa, rdma_wqe(2, ib::wr_rdma_write, iova_of(b, rb), f.lkey(rb)),
					    {sge_of(f, a, la, 0, 64)}) == 0);
			std::vector<sroce_cqe> ca;
			REQUIRE(f.wait_cqes(a, 1, ca, 5000000000ull));
			CHECK(ca[0].wr_id == 1);
			CHECK(ca[0].status == ib::wc_success);
			f.sim().run_for(1000000);
			CHECK(f.poll(a).empty());
			CHECK(Fixture::query(qa).sq_draining == 0);
			CHECK(drained() == notify);
			// Drained already: SQD->SQD raises nothing more, and RTS sends the rest.
			rc = -1;
			f.sim().call([&](sroce_env_batch *bt) {
				rc = sroce_core_qp_modify(qa.qp, &at, ib::attr_state, bt);
			});
			REQUIRE(rc == 0);
			CHECK(drained() == notify);
			REQUIRE(f.modify_state(qa, ib::qps_rts) == 0);
			ca.clear();
			REQUIRE(f.wait_cqes(a, 1, ca));
			CHECK(ca[0].wr_id == 2);
			// With nothing outstanding, RTS->SQD is drained at once.
			rc = -1;
			f.sim().call([&](sroce_env_batch *bt) {
				rc = sroce_core_qp_modify(qa.qp, &at, ib::attr_state | ib::attr_en_sqd_async_notify, bt);
			});
			REQUIRE(rc == 0);
			CHECK(Fixture::query(qa).sq_draining == 0);
			CHECK(drained() == 2 * notify);
		}
	}
}

// Review of 2026-12-03: every flush of a QP in error (each doorbell or
// poller pass) raised QP_LAST_WQE_REACHED again for a QP with an SRQ; in
// uverbs each is an allocation only the owner's reads free.
TEST_CASE("completer: QP_LAST_WQE_REACHED is raised once per entry into error", "[transport][review][srq]") {
	Fixture f(70);
	Node &a = f.node(0), &b = f.node(1);
	xrcfx::TestSrq s(b.dev, b.pd, nullptr);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp_mp(b, ib::qpt_rc, 0, 0, 256, s.srq);
	f.connect(qa, qb, ib::mtu_1024);
	Buffer &lb = f.buffer(b, 4096, all_access);
	auto raised = [&] {
		int n = 0;
		for (int e : f.sim().events_for(&qb.owner))
			n += e == ib::ev_qp_last_wqe_reached;
		return n;
	};
	REQUIRE(f.modify_state(qb, ib::qps_err) == 0);
	f.sim().run_for(1000);
	CHECK(raised() == 1);
	// Each post to a QP in error flushes it again.
	for (int i = 0; i < 50; i++)
		REQUIRE(f.post_send(qb, wqe(100 + i, ib::wr_send, 1), {sge_of(f, b, lb, 0, 64)}) == 0);
	f.sim().run_for(1000000);
	CHECK(f.poll(b).size() == 50);
	CHECK(raised() == 1);
	// A new life (RESET, then error again) raises it again.
	REQUIRE(f.modify_state(qb, ib::qps_reset) == 0);
	REQUIRE(f.modify_state(qb, ib::qps_err) == 0);
	f.sim().run_for(1000);
	CHECK(raised() == 2);
}

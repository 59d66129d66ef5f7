// A QP's key cache (kmod/core/key_cache.h, issue 17 item 6): a message
// looks each key up once a side, not once a packet; a deregistration still
// stops a message at its next packet; and the cache lets go before the
// completion that ends a message, so an owner that deregisters after
// polling finds its MR and pages gone at once, as before the cache.
#include <catch2/catch.hpp>

#include "device.h"
#include "env_host.h"
#include "ib_enums.h"
#include "qp.h"
#include "transport_fixture.h"

#include <cstring>

using namespace tfx;
namespace ib = sroce::ib;

namespace {

unsigned long long lookups(const Node &n) { return device_counter(n, SROCE_CNT_KEY_LOOKUPS); }

sroce_core_counts counts(const Node &n) {
	sroce_core_counts c{};
	sroce_core_dev_counts(n.dev, &c);
	return c;
}

} // namespace

TEST_CASE("key cache: a message looks each key up once a side, not once a packet", "[transport][keys][key-cache]") {
	Fixture f(17);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	constexpr unsigned int len = 16 * 1024; // 16 packets
	Buffer &la = f.buffer(a, len, all_access);
	Buffer &rb = f.buffer(b, len, all_access);
	const uint64_t rva = iova_of(b, rb);
	const sroce_sge whole = sge_of(f, a, la, 0, len);
	unsigned long long a0 = lookups(a), b0 = lookups(b);
	// Each operation moves fill's bytes, and costs `at_a` and `at_b`
	// look-ups: one per packet and SGE before the cache.
	auto op = [&](const char *what, const sroce_wqe &w, const std::vector<sroce_sge> &sges, unsigned char fill,
		      unsigned long long at_a, unsigned long long at_b) {
		INFO(what);
		std::memset(w.opcode == ib::wr_rdma_read ? rb.data : la.data, fill, len);
		if (w.opcode == ib::wr_send)
			REQUIRE(f.post_recv(qb, 100, {sge_of(f, b, rb, 0, len)}) == 0);
		CHECK(complete_one(f, qa, w, sges).status == ib::wc_success);
		if (w.opcode == ib::wr_send) {
			std::vector<sroce_cqe> cb;
			REQUIRE(f.wait_cqes(b, 1, cb));
			CHECK(cb[0].status == ib::wc_success);
		}
		CHECK(std::memcmp(la.data, rb.data, len) == 0);
		CHECK(lookups(a) - a0 == at_a);
		CHECK(lookups(b) - b0 == at_b);
		a0 = lookups(a);
		b0 = lookups(b);
	};
	op("WRITE: 16 and 16 before", rdma_wqe(1, ib::wr_rdma_write, rva, f.lkey(rb)), {whole}, 0x11, 1, 1);
	op("SEND: 16 and 16 before", wqe(2, ib::wr_send, 1), {whole}, 0x22, 1, 1);
	// The responder's request check and its 16 responses share one.
	op("READ: 16 and 17 before", rdma_wqe(3, ib::wr_rdma_read, rva, f.lkey(rb)), {whole}, 0x5a, 1, 1);
	sroce_wqe two = rdma_wqe(4, ib::wr_rdma_write, rva, f.lkey(rb));
	two.num_sge = 2;
	op("two SGEs of one MR: 32 and 16 before", two, {sge_of(f, a, la, 0, len / 2), sge_of(f, a, la, len / 2, len / 2)},
	   0x33, 1, 1);

	// Eight WRITEs in a row: a completion lets the requester's cache go
	// (key_cache.h), so at most two look-ups a WQE (here every packet may
	// leave before the first ACK: one); the responder one a message. 128
	// and 128 before.
	for (uint64_t id = 10; id < 18; id++)
		REQUIRE(f.post_send(qa, rdma_wqe(id, ib::wr_rdma_write, rva, f.lkey(rb)), {whole}) == 0);
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(a, 8, ca));
	for (auto &c : ca)
		CHECK(c.status == ib::wc_success);
	unsigned long long da = lookups(a) - a0;
	CHECK(da >= 1);
	CHECK(da <= 16);
	CHECK(lookups(b) - b0 == 8);
	CHECK(counts(a).pkts_in_flight == 0);
}

TEST_CASE("key cache: a deregistration stops a message at its next packet", "[transport][keys][key-cache]") {
	Fixture f(18);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	constexpr unsigned int len = 1024 * 1024;
	Buffer &la = f.buffer(a, len, all_access);
	Buffer &rb = f.buffer(b, len, all_access);
	std::memset(la.data, 0x77, len);
	std::memset(rb.data, 0, len);
	std::vector<sroce_cqe> ca;
	// Until the first KiB has landed, and the last has not.
	auto part_landed = [&] { return rb.data[0] == 0x77; };
	auto counts_b = counts(b), counts_a = counts(a);

	SECTION("the target's MR: REM_ACCESS_ERR, nothing lands after, its pages go") {
		REQUIRE(f.post_send(qa, rdma_wqe(1, ib::wr_rdma_write, iova_of(b, rb), f.lkey(rb)), {sge_of(f, a, la, 0, len)}) == 0);
		REQUIRE(f.sim().run_until(part_landed, 1000000000ull));
		REQUIRE(rb.data[len - 1] == 0);
		f.dereg(rb);
		std::vector<unsigned char> after(rb.data, rb.data + len);
		REQUIRE(f.wait_cqes(a, 1, ca));
		CHECK(ca[0].status == ib::wc_rem_access_err);
		CHECK(std::memcmp(after.data(), rb.data, len) == 0);
		CHECK(counts(b).mrs == counts_b.mrs - 1);
		CHECK(counts(b).pinned_pages == counts_b.pinned_pages - len / 4096);
	}
	SECTION("the sender's MR: LOC_PROT_ERR, its pages go") {
		REQUIRE(f.post_send(qa, rdma_wqe(1, ib::wr_rdma_write, iova_of(b, rb), f.lkey(rb)), {sge_of(f, a, la, 0, len)}) == 0);
		REQUIRE(f.sim().run_until(part_landed, 1000000000ull));
		REQUIRE(rb.data[len - 1] == 0);
		f.dereg(la);
		REQUIRE(f.wait_cqes(a, 1, ca));
		CHECK(ca[0].status == ib::wc_loc_prot_err);
		f.sim().run_for(100000000);
		CHECK(rb.data[len - 1] == 0);
		CHECK(counts(a).mrs == counts_a.mrs - 1);
		CHECK(counts(a).pinned_pages == counts_a.pinned_pages - len / 4096);
	}
	SECTION("a READ's source: REM_ACCESS_ERR, its pages go") {
		std::memset(rb.data, 0x33, len);
		std::memset(la.data, 0, len);
		REQUIRE(f.post_send(qa, rdma_wqe(1, ib::wr_rdma_read, iova_of(b, rb), f.lkey(rb)), {sge_of(f, a, la, 0, len)}) == 0);
		REQUIRE(f.sim().run_until([&] { return la.data[0] == 0x33; }, 1000000000ull));
		REQUIRE(la.data[len - 1] == 0);
		f.dereg(rb);
		REQUIRE(f.wait_cqes(a, 1, ca));
		CHECK(ca[0].status == ib::wc_rem_access_err);
		CHECK(la.data[len - 1] == 0);
		CHECK(counts(b).mrs == counts_b.mrs - 1);
		CHECK(counts(b).pinned_pages == counts_b.pinned_pages - len / 4096);
	}
	CHECK(env_host::warnings() == 0);
}

// The cache holds a reference on the MR; it must be gone by the time the
// owner can know the message ended, or a deregistration right after the
// completion would leave the pages pinned (until the QP's next message).
TEST_CASE("key cache: after a completion, a deregistration releases the MR at once", "[transport][keys][key-cache]") {
	Fixture f(19);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	constexpr unsigned int len = 8 * 1024;
	Buffer &la = f.buffer(a, len, all_access);
	Buffer &rb = f.buffer(b, len, all_access);
	std::vector<sroce_cqe> ca, cb;
	auto mrs_a = counts(a).mrs, mrs_b = counts(b).mrs;
	auto check_released = [&] {
		f.dereg(la);
		f.dereg(rb);
		// No simulated time passes: nothing else could let go.
		CHECK(counts(a).mrs == mrs_a - 1);
		CHECK(counts(b).mrs == mrs_b - 1);
		CHECK(counts(a).pinned_pages + counts(b).pinned_pages == 0);
	};
	SECTION("WRITE") {
		REQUIRE(f.post_send(qa, rdma_wqe(1, ib::wr_rdma_write, iova_of(b, rb), f.lkey(rb)), {sge_of(f, a, la, 0, len)}) == 0);
		REQUIRE(f.wait_cqes(a, 1, ca));
		CHECK(ca[0].status == ib::wc_success);
		check_released();
	}
	SECTION("SEND") {
		REQUIRE(f.post_recv(qb, 2, {sge_of(f, b, rb, 0, len)}) == 0);
		REQUIRE(f.post_send(qa, wqe(3, ib::wr_send, 1), {sge_of(f, a, la, 0, len)}) == 0);
		REQUIRE(f.wait_cqes(b, 1, cb));
		REQUIRE(f.wait_cqes(a, 1, ca));
		CHECK(cb[0].status == ib::wc_success);
		check_released();
	}
	SECTION("READ") {
		REQUIRE(f.post_send(qa, rdma_wqe(4, ib::wr_rdma_read, iova_of(b, rb), f.lkey(rb)), {sge_of(f, a, la, 0, len)}) == 0);
		REQUIRE(f.wait_cqes(a, 1, ca));
		CHECK(ca[0].status == ib::wc_success);
		check_released();
	}
	SECTION("a SEND whose receive completes, the sender not yet") {
		// The receiver's completion alone: its cache is gone with it.
		REQUIRE(f.post_recv(qb, 2, {sge_of(f, b, rb, 0, len)}) == 0);
		REQUIRE(f.post_send(qa, wqe(3, ib::wr_send, 1), {sge_of(f, a, la, 0, len)}) == 0);
		REQUIRE(f.wait_cqes(b, 1, cb));
		f.dereg(rb);
		CHECK(counts(b).mrs == mrs_b - 1);
		CHECK(counts(b).pinned_pages == 0);
		REQUIRE(f.wait_cqes(a, 1, ca));
	}
}

// A message cut short by the owner (modify to ERR or RESET, destroy) ends
// no message by receiving: the QP lets its caches go there too, and on
// destroy at once, not when its last reference goes.
TEST_CASE("key cache: an error, reset or destroy in the middle of a message lets the MR go",
	  "[transport][keys][key-cache]") {
	Fixture f(20);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	Buffer &rb = f.buffer(b, 8192, all_access);
	auto mrs_b = counts(b).mrs;
	// A WRITE's FIRST packet from A's address: the responder now holds
	// the rkey's MR for the rest of the message.
	ib::Headers h;
	h.bth.opcode = ib::op::rc + ib::op::write_first;
	h.reth.va = iova_of(b, rb);
	h.reth.rkey = f.lkey(rb);
	h.reth.length = 4096;
	auto pkt = make_packet(f, qb.qpn, h, 1024);
	f.sim().inject(a.id, b.id, pkt.data(), (unsigned)pkt.size());
	f.sim().run_for(1000000);
	REQUIRE(rb.data[0] == pkt[pkt.size() - 4 - 1024]); // the FIRST landed
	SECTION("modify to ERR") { REQUIRE(f.modify_state(qb, ib::qps_err) == 0); }
	SECTION("modify to RESET") { REQUIRE(f.modify_state(qb, ib::qps_reset) == 0); }
	SECTION("destroy") { f.destroy_qp(qb); }
	SECTION("destroy while a packet in flight holds the QP") {
		// As a steered packet's token does: the QP outlives destroy.
		auto held = reinterpret_cast<sroce::Device *>(b.dev)->qps().lookup_rcu(qb.qpn);
		REQUIRE(held);
		f.destroy_qp(qb);
		f.dereg(rb);
		CHECK(counts(b).mrs == mrs_b - 1);
		CHECK(counts(b).pinned_pages == 0);
		return;
	}
	f.dereg(rb);
	CHECK(counts(b).mrs == mrs_b - 1);
	CHECK(counts(b).pinned_pages == 0);
	(void)qa;
}

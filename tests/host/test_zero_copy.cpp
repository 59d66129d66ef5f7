// Zero-copy send (tx.cpp's tx_attach; transport.md, "Zero-copy send"): a
// user RC QP's request payload from a zero-copy MR goes into the packet as
// page fragments that point into the MR (the host env's borrowed
// fragments), its ICRC computed along the way and sent in a tail; what
// cannot go in place is copied, as before.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "env_host.h"
#include "icrc.h"
#include "ib_enums.h"
#include "user_sq_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {

// a's user RC QP (up to 24 SGEs) to b's kernel QP, path MTU 1024, devices
// sending payloads from zc_min bytes in place (0: never).
struct ZcSetup {
	Fixture f;
	Node &a, &b;
	Qp &qb;
	UserSq u;
	ZcSetup(uint64_t seed, unsigned int zc_min)
		: f(seed, 1500, zc_min), a(f.node(0)), b(f.node(1)), qb(f.qp(b, ib::qpt_rc)), u(f, a, 24, 64) {
		connect_user(f, u, qb);
	}
	unsigned long long zc_pkts() const { return device_counter(a, SROCE_CNT_TX_ZERO_COPY_PKTS); }
	// Posts one signaled WQE and waits for its completion.
	sroce_cqe run(const sroce_wqe &w, const std::vector<sroce_sge> &sges) {
		u.post(w, sges.data(), unsigned(sges.size()));
		std::vector<sroce_cqe> c;
		REQUIRE(f.wait_cqes(a, 1, c));
		REQUIRE(c.size() == 1);
		return c[0];
	}
	sroce_cqe write(const Buffer &src, size_t off, unsigned int len, const Buffer &dst) {
		sroce_wqe w = wqe(1, ib::wr_rdma_write, 1);
		w.rdma.remote_addr = iova_of(b, dst);
		w.rdma.rkey = f.lkey(dst);
		return run(w, {sge_of(f, a, src, off, len)});
	}
};

// Every packet a puts on the wire has a valid ICRC (checked on the bytes
// the engine read when the packet left, fragments and tail included).
void check_icrcs(ZcSetup &t, unsigned long long &checked, unsigned long long &bad) {
	t.f.sim().set_tap([&](const sim::WirePacket &p) {
		if (p.from != t.a.id)
			return;
		checked++;
		if (ib::icrc_check(ktl::Span<const u8>(p.data, p.len)).is_error())
			bad++;
	});
}

} // namespace

TEST_CASE("zero-copy: an RC WRITE's packets carry the MR's bytes in place, ICRC valid",
	  "[transport][zero-copy]") {
	ZcSetup t(301, 256);
	unsigned long long checked = 0, bad = 0;
	check_icrcs(t, checked, bad);
	Buffer &la = t.f.buffer(t.a, 20000, all_access);
	Buffer &rb = t.f.buffer(t.b, 20000, all_access);
	unsigned long before = env_host::zero_copy_bytes();
	// 16383 bytes from an odd offset: 16 packets of 1024, the last with a
	// pad of 1, and pieces that cross pages.
	sroce_cqe c = t.write(la, 777, 16383, rb);
	CHECK(int(c.status) == ib::wc_success);
	CHECK(std::memcmp(rb.data, la.data + 777, 16383) == 0);
	CHECK(t.zc_pkts() == 16);
	CHECK(env_host::zero_copy_bytes() - before == 16383);
	CHECK(device_counter(t.b, SROCE_CNT_ICRC_ERRORS) == 0);
	CHECK(checked >= 16);
	CHECK(bad == 0);
	CHECK(la.guards_intact());
	CHECK(rb.guards_intact());
}

TEST_CASE("zero-copy: a SEND with several SGEs goes in place, the receiver gets it whole",
	  "[transport][zero-copy]") {
	ZcSetup t(302, 1);
	Buffer &la = t.f.buffer(t.a, 8192, all_access);
	Buffer &rb = t.f.buffer(t.b, 8192, all_access);
	REQUIRE(t.f.post_recv(t.qb, 9, {sge_of(t.f, t.b, rb, 0, 8192)}) == 0);
	// Three SGEs, out of order in the buffer: 3000 + 5 + 2000 bytes.
	std::vector<sroce_sge> s{sge_of(t.f, t.a, la, 5000, 3000), sge_of(t.f, t.a, la, 3, 5),
				 sge_of(t.f, t.a, la, 100, 2000)};
	sroce_cqe c = t.run(wqe(2, ib::wr_send, 3), s);
	CHECK(int(c.status) == ib::wc_success);
	std::vector<sroce_cqe> r;
	REQUIRE(t.f.wait_cqes(t.b, 1, r));
	CHECK(r[0].byte_len == 5005);
	CHECK(std::memcmp(rb.data, la.data + 5000, 3000) == 0);
	CHECK(std::memcmp(rb.data + 3000, la.data + 3, 5) == 0);
	CHECK(std::memcmp(rb.data + 3005, la.data + 100, 2000) == 0);
	CHECK(t.zc_pkts() == 5); // ceil(5005 / 1024)
	CHECK(device_counter(t.b, SROCE_CNT_ICRC_ERRORS) == 0);
}

TEST_CASE("zero-copy: small payloads, inline data, zero_copy_min 0 and plain MRs are copied",
	  "[transport][zero-copy]") {
	// A WRITE of len bytes with the devices' zero_copy_min, from a
	// zero-copy MR or not: the bytes arrive, and `in_place` packets went
	// zero-copy.
	auto write_case = [](uint64_t seed, unsigned int zc_min, unsigned int len, bool zc_mr, unsigned int in_place) {
		ZcSetup t(seed, zc_min);
		Buffer &la = t.f.buffer(t.a, 8192, all_access, zc_mr);
		Buffer &rb = t.f.buffer(t.b, 8192, all_access);
		unsigned long before = env_host::zero_copy_bytes();
		CHECK(int(t.write(la, 0, len, rb).status) == ib::wc_success);
		CHECK(std::memcmp(rb.data, la.data, len) == 0);
		CHECK(t.zc_pkts() == in_place);
		if (!in_place)
			CHECK(env_host::zero_copy_bytes() == before);
	};
	SECTION("below zero_copy_min") // a 1024-byte packet in place, a 476-byte one copied
		write_case(303, 1024, 1500, true, 1);
	SECTION("zero_copy_min 0")
		write_case(304, 0, 8192, true, 0);
	SECTION("an MR whose pages may not be sent in place")
		write_case(305, 1, 8192, false, 0);
	SECTION("inline data") {
		ZcSetup t(306, 1);
		Buffer &rb = t.f.buffer(t.b, 4096, all_access);
		sroce_wqe w = wqe(1, ib::wr_rdma_write, 0, SROCE_WQE_SIGNALED | SROCE_WQE_INLINE);
		w.rdma.remote_addr = iova_of(t.b, rb);
		w.rdma.rkey = t.f.lkey(rb);
		const char msg[] = "inline bytes";
		w.inline_len = sizeof(msg);
		// The inline bytes follow the WQE in its slot, where SGEs would.
		std::vector<sroce_sge> raw(2);
		std::memcpy(raw.data(), msg, sizeof(msg));
		CHECK(int(t.run(w, raw).status) == ib::wc_success);
		CHECK(std::memcmp(rb.data, msg, sizeof(msg)) == 0);
		CHECK(t.zc_pkts() == 0);
	}
}

TEST_CASE("zero-copy: a packet of more pieces than fragments is copied, its neighbours not",
	  "[transport][zero-copy]") {
	ZcSetup t(307, 1);
	Buffer &la = t.f.buffer(t.a, 8192, all_access);
	Buffer &rb = t.f.buffer(t.b, 8192, all_access);
	// 20 SGEs of 40 bytes, then one of 2048: the first packet's 1024 bytes
	// are 21 pieces (more than SROCE_ENV_PKT_FRAGS), the next two are one
	// piece each.
	std::vector<sroce_sge> s;
	for (unsigned int i = 0; i < 20; i++)
		s.push_back(sge_of(t.f, t.a, la, 100 * i, 40));
	s.push_back(sge_of(t.f, t.a, la, 4000, 2048));
	sroce_wqe w = wqe(1, ib::wr_rdma_write, unsigned(s.size()));
	w.rdma.remote_addr = iova_of(t.b, rb);
	w.rdma.rkey = t.f.lkey(rb);
	CHECK(int(t.run(w, s).status) == ib::wc_success);
	for (unsigned int i = 0; i < 20; i++)
		CHECK(std::memcmp(rb.data + 40 * i, la.data + 100 * i, 40) == 0);
	CHECK(std::memcmp(rb.data + 800, la.data + 4000, 2048) == 0);
	CHECK(t.zc_pkts() == 2); // 2848 bytes: packets 2 and 3
}

TEST_CASE("zero-copy: a bad lkey still fails the WQE as a local protection error",
	  "[transport][zero-copy]") {
	ZcSetup t(308, 1);
	Buffer &la = t.f.buffer(t.a, 4096, all_access);
	Buffer &rb = t.f.buffer(t.b, 4096, all_access);
	sroce_sge s = sge_of(t.f, t.a, la, 0, 4096);
	s.lkey ^= 0x100; // no such key
	sroce_wqe w = wqe(1, ib::wr_rdma_write, 1);
	w.rdma.remote_addr = iova_of(t.b, rb);
	w.rdma.rkey = t.f.lkey(rb);
	CHECK(int(t.run(w, {s}).status) == ib::wc_loc_prot_err);
	CHECK(t.zc_pkts() == 0);
}

TEST_CASE("zero-copy: under loss, duplication and reordering every byte arrives, resends in place too",
	  "[transport][zero-copy]") {
	ZcSetup t(309, 1);
	sim::LinkConfig lc;
	lc.loss = 0.03;
	lc.duplicate = 0.02;
	lc.reorder = 0.05;
	t.f.sim().set_all_links(lc);
	Buffer &la = t.f.buffer(t.a, 256 * 1024, all_access);
	Buffer &rb = t.f.buffer(t.b, 256 * 1024, all_access);
	CHECK(int(t.write(la, 0, 256 * 1024, rb).status) == ib::wc_success);
	CHECK(std::memcmp(rb.data, la.data, 256 * 1024) == 0);
	unsigned long long resent = device_counter(t.a, SROCE_CNT_RETRANS_PKTS);
	INFO("resent " << resent);
	CHECK(resent > 0);
	CHECK(t.zc_pkts() == 256 + resent);
}

TEST_CASE("zero-copy: a tail that cannot be allocated loses the packet, and it is resent",
	  "[transport][zero-copy]") {
	ZcSetup t(310, 1);
	Buffer &la = t.f.buffer(t.a, 4096, all_access);
	Buffer &rb = t.f.buffer(t.b, 4096, all_access);
	// The packet is allocated, then its tail is not.
	unsigned long before = env_host::zero_copy_bytes();
	env_host::fail_nth_allocation(1);
	CHECK(int(t.write(la, 0, 1000, rb).status) == ib::wc_success);
	CHECK(std::memcmp(rb.data, la.data, 1000) == 0);
	CHECK(device_counter(t.a, SROCE_CNT_RETRANS_PKTS) == 1);
	// Attached twice (the lost packet, then its resend), sealed once: the
	// tail failed, not the packet's allocation.
	CHECK(env_host::zero_copy_bytes() - before == 2000);
	CHECK(t.zc_pkts() == 1);
	CHECK(env_host::warnings() == 0);
}

// ATOMIC WRITE (IBA 1.5 9.4.5.2) between two simulated nodes: the 8 bytes
// land whole, the answer is a zero-length READ RESPONSE ONLY (as rdma_rxe
// sends and expects), a lost answer is asked for again without a second
// store, and every bad request is refused with the NAK the spec names.
#include <catch2/catch.hpp>

#include "ib_enums.h"
#include "transport_fixture.h"

#include <string>

using namespace tfx;
namespace ib = sroce::ib;

namespace {

sroce_wqe atomic_write(uint64_t wr_id, uint64_t va, unsigned int rkey, uint64_t value) {
	sroce_wqe w = wqe(wr_id, ib::wr_atomic_write, 0);
	w.rdma.remote_addr = va;
	w.rdma.rkey = rkey;
	std::memcpy(&w.rdma.compare_add, &value, 8);
	return w;
}

uint64_t word_at(const Buffer &b, size_t off) {
	uint64_t v;
	std::memcpy(&v, b.data + off, 8);
	return v;
}

// One ATOMIC WRITE from a to b's rb at offset off: the status it completes
// with, and b's QP state after it.
struct Outcome {
	unsigned int status;
	unsigned int opcode;
};

Outcome post_one(Fixture &f, Qp &qa, const sroce_wqe &w) {
	REQUIRE(f.post_send(qa, w, {}) == 0);
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(*qa.node, 1, ca, 20000000000ull));
	return {ca[0].status, ca[0].opcode};
}
} // namespace

TEST_CASE("atomic write: 8 bytes stored whole, answered by a READ RESPONSE ONLY", "[atomic_write]") {
	Fixture f(41);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	Buffer &la = f.buffer(a, 8192, all_access);
	Buffer &rb = f.buffer(b, 8192, all_access);
	std::vector<unsigned char> before(rb.data, rb.data + rb.len);
	std::vector<std::string> seen;
	tap_names(f, -1, seen);
	uint64_t rva = iova_of(b, rb);

	Outcome o = post_one(f, qa, atomic_write(7, rva + 4088, f.lkey(rb), 0x1122334455667788ull));
	CHECK(o.status == ib::wc_success);
	CHECK(o.opcode == ib::wc_atomic_write);
	CHECK(word_at(rb, 4088) == 0x1122334455667788ull);
	std::memcpy(before.data() + 4088, rb.data + 4088, 8);
	CHECK(std::memcmp(before.data(), rb.data, rb.len) == 0); // nothing else moved
	CHECK(rb.guards_intact());
	REQUIRE(seen.size() == 2);
	CHECK(seen[0] == "RC_ATOMIC_WRITE");
	CHECK(seen[1] == "RC_RDMA_READ_RESPONSE_ONLY ACK");

	// In order with the other kinds, one after another on the same QP: a
	// WRITE, an ATOMIC WRITE over its first word, a READ of both.
	auto w = wqe(8, ib::wr_rdma_write, 1);
	w.rdma.remote_addr = rva;
	w.rdma.rkey = f.lkey(rb);
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 64)}) == 0);
	REQUIRE(f.post_send(qa, atomic_write(9, rva, f.lkey(rb), 0xa5a5a5a5a5a5a5a5ull), {}) == 0);
	w = wqe(10, ib::wr_rdma_read, 1);
	w.rdma.remote_addr = rva;
	w.rdma.rkey = f.lkey(rb);
	REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 4096, 64)}) == 0);
	std::vector<sroce_cqe> ca;
	REQUIRE(f.wait_cqes(a, 3, ca));
	for (int i = 0; i < 3; i++) {
		CHECK(ca[i].wr_id == uint64_t(8 + i));
		CHECK(ca[i].status == ib::wc_success);
	}
	CHECK(ca[1].opcode == ib::wc_atomic_write);
	CHECK(word_at(la, 4096) == 0xa5a5a5a5a5a5a5a5ull);
	CHECK(std::memcmp(la.data + 4096 + 8, la.data + 8, 56) == 0);
	CHECK(f.poll(b).empty()); // no receive consumed
}

TEST_CASE("atomic write: a lost answer is asked for again, the store is not repeated", "[atomic_write]") {
	Fixture f(42);
	Node &a = f.node(0), &b = f.node(1);
	Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024, 0, 0, /*timeout*/ 10);
	Buffer &rb = f.buffer(b, 4096, all_access);
	int answers = 0, requests = 0;
	bool lose = true;
	f.sim().set_filter([&](const sim::WirePacket &p) {
		if (p.from == a.id) {
			requests++;
			return true;
		}
		// b's first answer is lost; once it is gone, the word changes
		// locally: a second store would overwrite the change.
		answers++;
		if (lose) {
			lose = false;
			std::memset(rb.data + 64, 0x5c, 8);
			return false;
		}
		return true;
	});
	Outcome o = post_one(f, qa, atomic_write(1, iova_of(b, rb) + 64, f.lkey(rb), 0x0102030405060708ull));
	CHECK(o.status == ib::wc_success);
	CHECK(requests == 2);
	CHECK(answers == 2);
	CHECK(word_at(rb, 64) == 0x5c5c5c5c5c5c5c5cull);
	CHECK(device_counter(b, SROCE_CNT_DUPLICATE_REQ) == 1);
}

TEST_CASE("atomic write: bad requests get the NAK the spec names", "[atomic_write][errors]") {
	Fixture f(43);
	Node &a = f.node(0), &b = f.node(1);
	Buffer &rb = f.buffer(b, 4096, all_access);
	Buffer &ro = f.buffer(b, 4096, ib::access::local_write | ib::access::remote_read);
	uint64_t rva = iova_of(b, rb);
	struct Case {
		const char *what;
		uint64_t va;
		unsigned int rkey;
		unsigned int rd_atomic;
		unsigned int status;
	};
	const Case cases[] = {
		{"misaligned", rva + 4, f.lkey(rb), 16, ib::wc_rem_inv_req_err},
		{"past the MR", rva + 4096, f.lkey(rb), 16, ib::wc_rem_access_err},
		{"wrong rkey", rva, f.lkey(rb) ^ 0x100, 16, ib::wc_rem_access_err},
		{"MR without remote write", iova_of(b, ro), f.lkey(ro), 16, ib::wc_rem_access_err},
		{"no responder resources (max_dest_rd_atomic 0)", rva, f.lkey(rb), 0, ib::wc_rem_inv_req_err},
	};
	for (const Case &c : cases) {
		INFO(c.what);
		Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
		f.connect(qa, qb, ib::mtu_1024, 0, 0, 10, 7, 7, c.rd_atomic);
		std::vector<unsigned char> before(rb.data, rb.data + rb.len);
		Outcome o = post_one(f, qa, atomic_write(1, c.va, c.rkey, ~0ull));
		CHECK(o.status == c.status);
		CHECK(std::memcmp(before.data(), rb.data, rb.len) == 0);
		f.poll(b); // the responder's QP went to error: nothing to receive
		f.destroy_qp(qa);
		f.destroy_qp(qb);
	}
}

TEST_CASE("atomic write: the responder checks the length and the 8 bytes", "[atomic_write][hostile]") {
	Fixture f(44);
	Node &b = f.node(1);
	Qp &qb = f.qp(b, ib::qpt_rc), &qa = f.qp(f.node(0), ib::qpt_rc);
	f.connect(qa, qb, ib::mtu_1024);
	Buffer &rb = f.buffer(b, 4096, all_access);
	std::vector<unsigned char> before(rb.data, rb.data + rb.len);
	ib::Headers h;
	h.bth.opcode = ib::op::rc + ib::op::atomic_write;
	h.bth.ack_req = true;
	h.reth.va = iova_of(b, rb);
	h.reth.rkey = f.lkey(rb);
	unsigned int payload = 0;
	SECTION("RETH length 4 with 4 bytes") {
		h.reth.length = payload = 4;
	}
	SECTION("RETH length 8 with 16 bytes") {
		h.reth.length = 8;
		payload = 16;
	}
	std::vector<std::string> seen = answers_to(f, qb, h, payload);
	REQUIRE(seen.size() == 1);
	CHECK(seen[0] == "RC_ACKNOWLEDGE NAK_INVALID_REQUEST");
	CHECK(std::memcmp(before.data(), rb.data, rb.len) == 0);
}

TEST_CASE("atomic write: RC only, its 8 bytes in the WQE", "[atomic_write][errors]") {
	Fixture f(45);
	Node &a = f.node(0), &b = f.node(1);
	Buffer &rb = f.buffer(b, 4096, all_access);
	Buffer &la = f.buffer(a, 4096, all_access);
	SECTION("on UC: local QP operation error, nothing sent") {
		Qp &qa = f.qp(a, ib::qpt_uc), &qb = f.qp(b, ib::qpt_uc);
		f.connect(qa, qb, ib::mtu_1024);
		Outcome o = post_one(f, qa, atomic_write(1, iova_of(b, rb), f.lkey(rb), 1));
		CHECK(o.status == ib::wc_loc_qp_op_err);
	}
	SECTION("with an SGE: local QP operation error") {
		Qp &qa = f.qp(a, ib::qpt_rc), &qb = f.qp(b, ib::qpt_rc);
		f.connect(qa, qb, ib::mtu_1024);
		sroce_wqe w = atomic_write(1, iova_of(b, rb), f.lkey(rb), 1);
		w.num_sge = 1;
		REQUIRE(f.post_send(qa, w, {sge_of(f, a, la, 0, 8)}) == 0);
		std::vector<sroce_cqe> ca;
		REQUIRE(f.wait_cqes(a, 1, ca));
		CHECK(ca[0].status == ib::wc_loc_qp_op_err);
	}
	CHECK(word_at(rb, 0) != 1);
}

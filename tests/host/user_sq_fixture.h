// A user RC QP on node a whose SQ the test writes as the provider does
// (WQE, producer store, full barrier, then the kernel's flag), connected
// to a kernel QP on node b: test_doorbell_skip.cpp, test_rx_steer.cpp.
#pragma once
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>

#include "ib_enums.h"
#include "transport_fixture.h"

namespace tfx {
constexpr unsigned char acknowledge = 0x11; // the BTH opcode

// A user QP of a doorbell-mode context on a's device, its SQ written here as
// the provider writes it.
struct UserSq {
	Fixture &f;
	Node &n;
	sroce_core_ucontext *uc = nullptr;
	sroce_core_qp *qp = nullptr;
	void *sq = nullptr, *rq = nullptr;
	unsigned int stride = 0, log_size = 0, prod = 0;
	int owner = 0;
	unsigned long long doorbells = 0, skipped = 0;

	// max_sge, max_inline: of its send WQEs (post takes up to max_sge
	// SGEs, or inline bytes in their place).
	UserSq(Fixture &fx, Node &node, unsigned int max_sge = 1, unsigned int max_inline = 0) : f(fx), n(node) {
		sroce_alloc_ucontext_req req{};
		req.abi_version = SROCE_ABI_VERSION;
		req.flags = SROCE_UCTX_REQ_NO_SQ_POLL;
		sroce_alloc_ucontext_resp resp{};
		REQUIRE(sroce_core_ucontext_create(n.dev, &req, sizeof(req), &resp, &uc) == 0);
		sroce_core_qp_init qi{};
		qi.owner = &owner;
		qi.qp_type = sroce::ib::qpt_rc;
		qi.port = 1;
		qi.pd = n.pd;
		qi.send_cq = n.cq;
		qi.recv_cq = n.cq;
		qi.max_send_sge = max_sge;
		qi.max_inline_data = max_inline;
		qi.max_recv_sge = 1;
		qi.user = 1;
		qi.uctx = uc;
		qi.sq_stride = stride = sroce_core_wqe_stride(max_sge, max_inline);
		qi.rq_stride = sroce_core_wqe_stride(1, 0);
		sq = qi.sq_ring = alloc_ring(256, 16384, stride, &qi.sq_log_size);
		rq = qi.rq_ring = alloc_ring(256, 16384, qi.rq_stride, &qi.rq_log_size);
		log_size = qi.sq_log_size;
		REQUIRE(sroce_core_qp_create(n.dev, &qi, &qp) == 0);
	}
	~UserSq() { destroy(); }
	void destroy() {
		if (!qp)
			return;
		sroce_core_qp_destroy(qp);
		qp = nullptr;
		f.sim().run_for(1000000); // timers and work that hold the QP run out
		sroce_core_ucontext_destroy(uc);
		std::free(sq); // the glue frees a QP's rings once destroy returns
		std::free(rq);
		sq = rq = nullptr;
	}
	// The poster's CPU hint (abi: poster_cpu), written before each post.
	void say_cpu(int cpu) { __atomic_store_n(&hdr()->poster_cpu, unsigned(cpu + 1), __ATOMIC_RELAXED); }
	sroce_ring_header *hdr() const { return static_cast<sroce_ring_header *>(sq); }
	bool ack_due() const { return __atomic_load_n(&hdr()->kflags, __ATOMIC_ACQUIRE) & SROCE_SQ_ACK_DUE; }
	// Writes one WQE and publishes it; the doorbell only when the flag
	// allows (ring false: never, as a post racing the flag's clear).
	void post(const sroce_wqe &w, const sroce_sge &s, bool ring = true) { post(w, &s, 1, ring); }
	void post(const sroce_wqe &w, const sroce_sge *s, unsigned int nsge, bool ring = true) {
		auto *slot = static_cast<unsigned char *>(sq) + SROCE_RING_ENTRIES_OFFSET +
			     size_t(prod & ((1u << log_size) - 1)) * stride;
		std::memcpy(slot, &w, sizeof(w));
		std::memcpy(slot + sizeof(w), s, nsge * sizeof(*s));
		__atomic_store_n(&hdr()->producer, ++prod, __ATOMIC_RELEASE);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!ring || ack_due()) {
			skipped++;
			return;
		}
		doorbells++;
		f.sim().call([&](sroce_env_batch *b) { sroce_core_qp_doorbell(qp, b); });
	}
};

inline sroce_core_qp_attr query(sroce_core_qp *qp) {
	sroce_core_qp_attr a{};
	sroce_core_qp_query(qp, &a);
	return a;
}

// Both to RTS against each other (Fixture::connect on a view of the user QP).
inline void connect_user(Fixture &f, UserSq &u, Qp &q, unsigned char timeout = 14) {
	Qp shadow{};
	shadow.node = &u.n;
	shadow.qp = u.qp;
	shadow.qpn = sroce_core_qp_number(u.qp);
	shadow.type = sroce::ib::qpt_rc;
	f.connect(shadow, q, sroce::ib::mtu_1024, 0x100, 0x100, timeout, 7, 7);
}
// a's user QP connected to b's kernel QP, a source and a target buffer.
struct Setup {
	Fixture f;
	Node &a, &b;
	Qp &qb;
	UserSq u;
	Buffer &la, &rb;
	Setup(uint64_t seed, size_t target, unsigned char timeout = 14)
		: f(seed, 1500), a(f.node(0)), b(f.node(1)), qb(f.qp(b, sroce::ib::qpt_rc)), u(f, a),
		  la(f.buffer(a, 4096, all_access)), rb(f.buffer(b, target, all_access)) {
		connect_user(f, u, qb, timeout);
	}
	// Posts a 64-byte WRITE from la + src_off to rb + dst_off.
	void write(uint64_t id, unsigned int src_off, uint64_t dst_off, bool ring = true) {
		sroce_wqe w = wqe(id, sroce::ib::wr_rdma_write, 1);
		w.rdma.remote_addr = iova_of(b, rb) + dst_off;
		w.rdma.rkey = f.lkey(rb);
		u.post(w, sge_of(f, a, la, src_off, 64), ring);
	}
};
} // namespace tfx

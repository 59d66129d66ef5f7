// XRC test helpers (test_xrc.cpp, test_xrc_faults.cpp): a kernel CQ of its
// own, an SRQ (XRC or basic) on a node, an XRC initiator on node 0 connected
// to a target on node 1, and an XRC domain, all through the core's C API.
#pragma once
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "ib_enums.h"
#include "transport_fixture.h"

namespace xrcfx {
using namespace tfx;
namespace ib = sroce::ib;

inline void *ring_of(unsigned int entries, unsigned int stride, unsigned int *log_size) {
	return alloc_ring(entries, 1u << 16, stride, log_size);
}

// A kernel CQ of its own (an XRC SRQ's).
struct OwnCq {
	tfx::Ring ring;
	sroce_core_cq *cq = nullptr;
	int owner = 0;
	OwnCq(sroce_core_dev *dev) {
		ring.mem = ring_of(1024, sizeof(sroce_cqe), &ring.log_size);
		sroce_core_cq_init ci{};
		ci.owner = &owner;
		ci.ring = ring.mem;
		ci.log_size = ring.log_size;
		REQUIRE(sroce_core_cq_create(dev, &ci, &cq) == 0);
	}
	~OwnCq() { sroce_core_cq_destroy(cq); }
	std::vector<sroce_cqe> poll() {
		std::vector<sroce_cqe> out;
		sroce_cqe c[16];
		void *owners[16];
		int got;
		while ((got = sroce_core_cq_poll(cq, c, owners, 16)) > 0)
			out.insert(out.end(), c, c + got);
		return out;
	}
};

// An SRQ on a node: XRC (with its own CQ) when xrcd is given, basic if not;
// multi-packet with mp_buf and mp_align.
struct TestSrq {
	tfx::Ring ring;
	std::unique_ptr<OwnCq> cq;
	sroce_core_srq *srq = nullptr;
	unsigned int srqn = 0;
	int owner = 0;
	TestSrq(sroce_core_dev *dev, sroce_core_pd *pd, sroce_core_xrcd *xrcd, unsigned int mp_buf = 0,
		unsigned int mp_align = 0) {
		unsigned int stride = sroce_core_wqe_stride(4, 0);
		ring.mem = ring_of(256, stride, &ring.log_size);
		sroce_core_srq_init si{};
		si.owner = &owner;
		si.pd = pd;
		si.ring = ring.mem;
		si.log_size = ring.log_size;
		si.stride = stride;
		si.max_sge = 4;
		si.mp_wr_buffer_sz = mp_buf;
		si.mp_packet_align_sz = mp_align;
		if (xrcd) {
			cq = std::make_unique<OwnCq>(dev);
			si.xrcd = xrcd;
			si.cq = cq->cq;
		}
		REQUIRE(sroce_core_srq_create(dev, &si, &srq) == 0);
		srqn = sroce_core_srq_number(srq);
	}
	~TestSrq() { destroy(); }
	void destroy() {
		sroce_core_srq_destroy(srq);
		srq = nullptr;
	}
	int post(uint64_t wr_id, const sroce_sge &s) {
		sroce_wqe w = wqe(wr_id, SROCE_WQE_RECV, 1, 0);
		return sroce_core_srq_post_recv(srq, &w, &s, nullptr);
	}
};

inline sroce_core_qp_attr init_attr() {
	sroce_core_qp_attr at{};
	at.qp_state = ib::qps_init;
	at.port_num = 1;
	at.qp_access_flags = ib::access::remote_write | ib::access::remote_read | ib::access::remote_atomic;
	return at;
}
constexpr unsigned int init_mask = ib::attr_state | ib::attr_pkey_index | ib::attr_port | ib::attr_access_flags;

// An initiator on node 0 connected to a target on node 1, the target in
// domain `xrcd`.
struct XrcPair {
	Fixture &f;
	tfx::Qp ini; // posted through the fixture's post_send
	sroce_core_qp *tgt = nullptr;
	unsigned int tgt_qpn = 0;
	int tgt_owner = 0;

	XrcPair(Fixture &fx, sroce_core_xrcd *xrcd, unsigned int mtu = ib::mtu_1024, bool tgt_rts = true) : f(fx) {
		Node &a = f.node(0), &b = f.node(1);
		ini.node = &a;
		ini.type = ib::qpt_xrc_ini;
		ini.sq_stride = sroce_core_wqe_stride(4, 64);
		ini.sq.mem = ring_of(256, ini.sq_stride, &ini.sq.log_size);
		sroce_core_qp_init qi{};
		qi.owner = &ini.owner;
		qi.qp_type = ib::qpt_xrc_ini;
		qi.port = 1;
		qi.pd = a.pd;
		qi.send_cq = a.cq;
		qi.max_send_sge = 4;
		qi.max_inline_data = 64;
		qi.sq_ring = ini.sq.mem;
		qi.sq_log_size = ini.sq.log_size;
		qi.sq_stride = ini.sq_stride;
		REQUIRE(sroce_core_qp_create(a.dev, &qi, &ini.qp) == 0);
		ini.qpn = sroce_core_qp_number(ini.qp);
		sroce_core_qp_init ti{};
		ti.owner = &tgt_owner;
		ti.qp_type = ib::qpt_xrc_tgt;
		ti.port = 1;
		ti.xrcd = xrcd;
		REQUIRE(sroce_core_qp_create(b.dev, &ti, &tgt) == 0);
		tgt_qpn = sroce_core_qp_number(tgt);

		REQUIRE(modify(ini.qp, init_attr(), init_mask) == 0);
		REQUIRE(modify(tgt, init_attr(), init_mask) == 0);
		unsigned int rtr = ib::attr_state | ib::attr_av | ib::attr_path_mtu | ib::attr_dest_qpn | ib::attr_rq_psn;
		REQUIRE(modify(ini.qp, rtr_attr(a, b, tgt_qpn, mtu), rtr) == 0);
		REQUIRE(modify(tgt, rtr_attr(b, a, ini.qpn, mtu),
			       rtr | ib::attr_max_dest_rd_atomic | ib::attr_min_rnr_timer) == 0);
		sroce_core_qp_attr at{};
		at.qp_state = ib::qps_rts;
		at.timeout = 10;
		at.retry_cnt = 7;
		at.rnr_retry = 7;
		at.max_rd_atomic = 16;
		REQUIRE(modify(ini.qp, at,
			       ib::attr_state | ib::attr_timeout | ib::attr_retry_cnt | ib::attr_rnr_retry |
				       ib::attr_sq_psn | ib::attr_max_qp_rd_atomic) == 0);
		if (tgt_rts)
			REQUIRE(modify(tgt, at, ib::attr_state | ib::attr_timeout | ib::attr_sq_psn) == 0);
	}
	~XrcPair() {
		sroce_core_qp_destroy(ini.qp);
		sroce_core_qp_destroy(tgt);
	}
	sroce_core_qp_attr rtr_attr(Node &me, Node &peer, unsigned int dest, unsigned int mtu) {
		sroce_core_qp_attr at{};
		at.qp_state = ib::qps_rtr;
		at.path_mtu = mtu;
		at.dest_qp_num = dest;
		at.max_dest_rd_atomic = 16;
		at.min_rnr_timer = 1;
		sim::Path p = f.sim().path(me.id, peer.id);
		at.path = p.path;
		at.path_info = p.info;
		return at;
	}
	int modify(sroce_core_qp *q, const sroce_core_qp_attr &at, unsigned int mask) {
		int rc = -1;
		f.sim().call([&](sroce_env_batch *bt) { rc = sroce_core_qp_modify(q, &at, int(mask), bt); });
		return rc;
	}
	unsigned int tgt_state() {
		sroce_core_qp_attr at{};
		sroce_core_qp_query(tgt, &at);
		return at.qp_state;
	}
	int send(const sroce_wqe &w, unsigned int srqn, const std::vector<sroce_sge> &sges) {
		sroce_wqe x = w;
		x.xrc_remote_srqn = srqn;
		return f.post_send(ini, x, sges);
	}
};

// Runs until cq holds n CQEs (collected into out).
inline bool wait_on(Fixture &f, OwnCq &cq, size_t n, std::vector<sroce_cqe> &out) {
	return f.sim().run_until(
		[&] {
			auto more = cq.poll();
			out.insert(out.end(), more.begin(), more.end());
			return out.size() >= n;
		},
		2000000000ull);
}

struct Domain {
	sroce_core_xrcd *x = nullptr;
	explicit Domain(sroce_core_dev *dev) { REQUIRE(sroce_core_xrcd_create(dev, &x) == 0); }
	~Domain() { sroce_core_xrcd_destroy(x); }
};
} // namespace xrcfx

// Device-wide object caps and the kernel's reserve (param::reserve), and
// the memory a user's objects make the core hold, charged to that user
// (sroce_env_zalloc_user). Documentation/security.md.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "device.h"
#include "env_host.h"
#include "ib_enums.h"
#include "param.h"

extern "C" {
#include "abi.h"
#include "core.h"
}

namespace param = sroce::param;

namespace {

struct RingMem {
	RingMem(unsigned int entries, unsigned int max, unsigned int stride) {
		unsigned long bytes = 0;
		REQUIRE(sroce_core_ring_size(entries, max, stride, &log_size, &bytes) == 0);
		mem = std::aligned_alloc(4096, bytes);
		memset(mem, 0, bytes);
	}
	~RingMem() { std::free(mem); }
	void *mem = nullptr;
	unsigned int log_size = 0;
};

struct Dev {
	Dev() {
		env_host::clear();
		base = env_host::live_allocations();
		sroce_core_dev_init init{};
		init.netdev_mtu = 1500;
		init.netdev_up = 1;
		REQUIRE(sroce_core_dev_create(&init, &dev) == 0);
		REQUIRE(sroce_core_pd_create(dev, &pd) == 0);
	}
	~Dev() {
		sroce_core_pd_destroy(pd);
		sroce_core_dev_destroy(dev);
		CHECK(env_host::live_allocations() == base);
		CHECK(env_host::warnings() == 0);
	}
	sroce::DeviceCounts &counts() { return reinterpret_cast<sroce::Device *>(dev)->counts(); }
	long base;
	sroce_core_dev *dev = nullptr;
	sroce_core_pd *pd = nullptr;
};

int make_cq(Dev &d, RingMem &ring, int user, sroce_core_cq **out) {
	sroce_core_cq_init ci{};
	ci.ring = ring.mem;
	ci.log_size = ring.log_size;
	ci.user = user;
	return sroce_core_cq_create(d.dev, &ci, out);
}

struct QpRings {
	unsigned int sq_stride = sroce_core_wqe_stride(param::max_sge, 0);
	unsigned int rq_stride = sroce_core_wqe_stride(1, 0);
	RingMem sq{1024, param::max_qp_wr, sq_stride};
	RingMem rq{1, param::max_qp_wr, rq_stride};
};

sroce_core_qp_init qp_init(Dev &d, sroce_core_cq *cq, QpRings &r, int user) {
	sroce_core_qp_init qi{};
	qi.qp_type = sroce::ib::qpt_rc;
	qi.port = 1;
	qi.pd = d.pd;
	qi.send_cq = cq;
	qi.recv_cq = cq;
	qi.max_send_sge = param::max_sge;
	qi.max_recv_sge = 1;
	qi.user = user;
	qi.sq_ring = r.sq.mem;
	qi.sq_log_size = r.sq.log_size;
	qi.sq_stride = r.sq_stride;
	qi.rq_ring = r.rq.mem;
	qi.rq_log_size = r.rq.log_size;
	qi.rq_stride = r.rq_stride;
	return qi;
}

int make_qp(Dev &d, sroce_core_cq *cq, QpRings &r, int user, sroce_core_qp **out) {
	sroce_core_qp_init qi = qp_init(d, cq, r, user);
	return sroce_core_qp_create(d.dev, &qi, out);
}

} // namespace

// The glue's query_device reports param.h's SROCE_* macros as they are and
// checks no cap itself: the core must accept each limit and refuse one past.
TEST_CASE("the core takes every limit query_device reports and refuses one past it", "[core][limits]") {
	Dev d;
	RingMem cq_ring{SROCE_MAX_CQE, SROCE_MAX_CQE + 1, sizeof(sroce_cqe)};
	sroce_core_cq *cq = nullptr;
	REQUIRE(make_cq(d, cq_ring, 0, &cq) == 0);
	unsigned int log = 0;
	unsigned long bytes = 0;
	CHECK(sroce_core_ring_size(SROCE_MAX_QP_WR + 1, SROCE_MAX_QP_WR, 64, &log, &bytes) == -EINVAL);
	{
		sroce_core_cq_init ci{};
		ci.ring = cq_ring.mem;
		ci.log_size = cq_ring.log_size + 1; // past SROCE_MAX_CQE
		sroce_core_cq *big = nullptr;
		CHECK(sroce_core_cq_create(d.dev, &ci, &big) == -EINVAL);
	}
	// Strides clamp to the limits, so an oversized cap meets the core's check.
	CHECK(sroce_core_wqe_stride(SROCE_MAX_SGE + 100, 0) == sroce_core_wqe_stride(SROCE_MAX_SGE, 0));

	QpRings r; // SROCE_MAX_SGE send SGEs
	sroce_core_qp_init qi = qp_init(d, cq, r, 0);
	struct Case {
		unsigned int sge, inl, sq_log;
		int want;
	} cases[] = {
		{SROCE_MAX_SGE, SROCE_MAX_INLINE_DATA, r.sq.log_size, 0},
		{SROCE_MAX_SGE + 1, 0, r.sq.log_size, -EINVAL},
		{1, SROCE_MAX_INLINE_DATA + 1, r.sq.log_size, -EINVAL},
		{1, 0, 15, -EINVAL}, // 2^15 WQEs > SROCE_MAX_QP_WR
	};
	static_assert(SROCE_MAX_QP_WR == 1u << 14);
	for (const Case &c : cases) {
		qi.max_send_sge = c.sge;
		qi.max_inline_data = c.inl;
		qi.sq_log_size = c.sq_log;
		sroce_core_qp *qp = nullptr;
		CHECK(sroce_core_qp_create(d.dev, &qi, &qp) == c.want);
		if (qp)
			sroce_core_qp_destroy(qp);
	}

	for (unsigned int sge : {SROCE_MAX_SRQ_SGE, SROCE_MAX_SRQ_SGE + 1}) {
		unsigned int stride = sroce_core_wqe_stride(SROCE_MAX_SGE, 0);
		RingMem ring{SROCE_MAX_SRQ_WR, SROCE_MAX_SRQ_WR, stride};
		sroce_core_srq_init si{};
		si.pd = d.pd;
		si.ring = ring.mem;
		si.log_size = ring.log_size;
		si.stride = stride;
		si.max_sge = sge;
		sroce_core_srq *srq = nullptr;
		CHECK(sroce_core_srq_create(d.dev, &si, &srq) == (sge == SROCE_MAX_SRQ_SGE ? 0 : -EINVAL));
		if (srq)
			sroce_core_srq_destroy(srq);
	}
	sroce_core_cq_destroy(cq);
}

TEST_CASE("user CQs stop at the cap less the kernel's reserve; kernel CQs still come", "[core][limits]") {
	Dev d;
	RingMem ring(1, param::max_cqe, sizeof(sroce_cqe));
	std::vector<sroce_core_cq *> cqs;
	sroce_core_cq *cq = nullptr;
	int rc;
	// Nothing is written to a user CQ's ring without completions: one ring
	// serves them all.
	while ((rc = make_cq(d, ring, 1, &cq)) == 0) {
		cqs.push_back(cq);
		REQUIRE(cqs.size() <= param::max_cq);
	}
	CHECK(rc == -ENOMEM);
	CHECK(cqs.size() == param::max_cq - param::reserve::cq);
	// ib_mad's CQ on a device a user has filled.
	std::vector<sroce_core_cq *> kernel;
	for (u32 i = 0; i < param::reserve::cq; i++) {
		rc = make_cq(d, ring, 0, &cq);
		if (rc)
			break;
		kernel.push_back(cq);
	}
	CHECK(rc == 0);
	CHECK(kernel.size() == param::reserve::cq);
	// The device-wide cap still holds for the kernel.
	CHECK(make_cq(d, ring, 0, &cq) == -ENOMEM);
	for (auto *c : kernel)
		sroce_core_cq_destroy(c);
	for (auto *c : cqs)
		sroce_core_cq_destroy(c);
}

TEST_CASE("user QPs and SRQs stop short of the kernel's reserve; their memory is charged",
	  "[core][limits]") {
	Dev d;
	RingMem cq_ring(64, param::max_cqe, sizeof(sroce_cqe));
	sroce_core_cq *cq = nullptr;
	REQUIRE(make_cq(d, cq_ring, 0, &cq) == 0);
	QpRings rings;

	// A user QP's private SQ copy and responder resources are charged to
	// its process; a kernel QP's are not.
	long before = env_host::user_bytes();
	sroce_core_qp *uqp = nullptr, *kqp = nullptr;
	REQUIRE(make_qp(d, cq, rings, 1, &uqp) == 0);
	long charged = env_host::user_bytes() - before;
	CHECK(charged >= long(rings.sq_stride) * 1024);
	REQUIRE(make_qp(d, cq, rings, 0, &kqp) == 0);
	CHECK(env_host::user_bytes() - before == charged);

	// Other users hold all but one of the QPs users may have (taken
	// straight from the count: 64k real QPs would only make this slow).
	auto &qps = d.counts().qps;
	u64 filler = param::max_qp - param::reserve::qp - qps.get() - 1;
	for (u64 i = 0; i < filler; i++)
		REQUIRE(qps.try_get(param::max_qp));
	sroce_core_qp *last = nullptr, *refused = nullptr, *kernel = nullptr;
	CHECK(make_qp(d, cq, rings, 1, &last) == 0);
	CHECK(make_qp(d, cq, rings, 1, &refused) == -ENOMEM);
	CHECK(make_qp(d, cq, rings, 0, &kernel) == 0);

	// The same for SRQs.
	auto &srqs = d.counts().srqs;
	for (u64 i = 0; i < param::max_srq - param::reserve::srq; i++)
		REQUIRE(srqs.try_get(param::max_srq));
	unsigned int stride = sroce_core_wqe_stride(1, 0);
	RingMem srq_ring(16, param::max_srq_wr, stride);
	sroce_core_srq_init si{};
	si.pd = d.pd;
	si.ring = srq_ring.mem;
	si.log_size = srq_ring.log_size;
	si.stride = stride;
	si.max_sge = 1;
	si.user = 1;
	sroce_core_srq *srq = nullptr;
	CHECK(sroce_core_srq_create(d.dev, &si, &srq) == -ENOMEM);
	si.user = 0;
	CHECK(sroce_core_srq_create(d.dev, &si, &srq) == 0);

	if (srq)
		sroce_core_srq_destroy(srq);
	for (u64 i = 0; i < param::max_srq - param::reserve::srq; i++)
		srqs.put();
	for (auto *q : {kernel, last, kqp, uqp})
		if (q)
			sroce_core_qp_destroy(q);
	for (u64 i = 0; i < filler; i++)
		qps.put();
	sroce_core_cq_destroy(cq);
}

// The SQ poller inside a device, through the C API the glue calls: which
// contexts' QPs it scans, and a pass that errors many QPs at once. The
// poller alone, against a fake send queue, is in test_sq_poller.cpp.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "env.h"
#include "env_host.h"
#include "ib_enums.h"
#include "transport_fixture.h"

extern "C" {
#include "core.h"
#include "sroce-abi.h"
}

namespace {

void *zring(unsigned int entries, unsigned int entry_size, unsigned int *log_size) {
	return tfx::alloc_ring(entries, 1u << 16, entry_size, log_size);
}

// A device whose SQ poller thread is started with it.
sroce_core_dev *make_polled_dev(unsigned int idle_us, const char *poller_name) {
	sroce_core_dev_init init{};
	init.netdev_mtu = 9000;
	init.netdev_up = 1;
	init.sq_poll = 1;
	init.sq_idle_us = idle_us;
	std::strcpy(init.poller_name, poller_name);
	sroce_core_dev *dev = nullptr;
	REQUIRE(sroce_core_dev_create(&init, &dev) == 0);
	return dev;
}

// A user context; resp gets the core's answer.
sroce_core_ucontext *make_uctx(sroce_core_dev *dev, unsigned int req_flags, sroce_alloc_ucontext_resp &resp) {
	sroce_alloc_ucontext_req req{};
	req.abi_version = SROCE_ABI_VERSION;
	req.flags = req_flags;
	sroce_core_ucontext *uc = nullptr;
	REQUIRE(sroce_core_ucontext_create(dev, &req, sizeof(req), &resp, &uc) == 0);
	return uc;
}

// A user CQ of 64 entries on memory the test owns (the glue's pinned ring).
struct UserCq {
	sroce_core_cq *cq = nullptr;
	sroce_core_cq_init ci{};
	int owner = 0;
};

void make_user_cq(UserCq &c, sroce_core_dev *dev) {
	c.ci.owner = &c.owner;
	c.ci.ring = zring(64, sizeof(sroce_cqe), &c.ci.log_size);
	c.ci.user = 1;
	REQUIRE(sroce_core_cq_create(dev, &c.ci, &c.cq) == 0);
}

// A user QP with one-SGE rings of 16 on memory the test owns, both queues on
// one CQ, as the glue creates it for the provider.
struct UserQp {
	sroce_core_qp *qp = nullptr;
	void *sq = nullptr, *rq = nullptr;
	int owner = 0;
};

void make_user_qp(UserQp &q, sroce_core_dev *dev, sroce_core_pd *pd, sroce_core_cq *cq, sroce_core_ucontext *uc,
		  unsigned int qp_type) {
	sroce_core_qp_init qi{};
	qi.owner = &q.owner;
	qi.qp_type = qp_type;
	qi.port = 1;
	qi.pd = pd;
	qi.send_cq = cq;
	qi.recv_cq = cq;
	qi.max_send_sge = 1;
	qi.max_recv_sge = 1;
	qi.user = 1;
	qi.uctx = uc;
	qi.sq_stride = sroce_core_wqe_stride(1, 0);
	qi.rq_stride = qi.sq_stride;
	q.sq = qi.sq_ring = zring(16, qi.sq_stride, &qi.sq_log_size);
	q.rq = qi.rq_ring = zring(16, qi.rq_stride, &qi.rq_log_size);
	REQUIRE(sroce_core_qp_create(dev, &qi, &q.qp) == 0);
}

// Polls the device's poller stats every millisecond for up to 3 s until it
// is asleep; st holds the last answer.
void wait_asleep(sroce_core_dev *dev, sroce_core_sq_poll_stats &st) {
	for (int i = 0; i < 3000 && !st.asleep; i++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
		sroce_core_dev_sq_poll(dev, &st);
	}
}

} // namespace

// sq_poll=auto (sq_poller.h, sq_poll_auto): a poller only where it gets a
// CPU of its own. Before auto, any non-zero mode started one.
TEST_CASE("sq_poll: auto starts a poller only where it gets a CPU of its own; Y and N force it", "[sq_poller]") {
	struct {
		int mode;
		unsigned int online, named, pollers;
		int running;
	} cases[] = {
		{SROCE_SQ_POLL_AUTO, 2, 0, 0, 0},  // the test VMs: doorbell mode
		{SROCE_SQ_POLL_AUTO, 1, 0, 0, 0},
		{SROCE_SQ_POLL_AUTO, 2, 1, 0, 1},  // sq_poll_cpus=1
		{SROCE_SQ_POLL_AUTO, 3, 0, 0, 1},
		{SROCE_SQ_POLL_AUTO, 4, 0, 1, 1},
		{SROCE_SQ_POLL_AUTO, 4, 0, 2, 0},  // two pollers already
		{SROCE_SQ_POLL_AUTO, 64, 2, 1, 1}, // one poller per named CPU
		{SROCE_SQ_POLL_AUTO, 64, 2, 2, 0},
		{SROCE_SQ_POLL_OFF, 64, 8, 0, 0},
		{SROCE_SQ_POLL_ON, 1, 0, 3, 1},
	};
	for (const auto &c : cases) {
		CAPTURE(c.mode, c.online, c.named, c.pollers);
		sroce_core_dev_init init{};
		init.netdev_mtu = 1500;
		init.sq_poll = c.mode;
		init.online_cpus = c.online;
		init.poll_cpus = c.named;
		init.pollers = c.pollers;
		init.sq_idle_us = 100;
		sroce_core_dev *dev = nullptr;
		REQUIRE(sroce_core_dev_create(&init, &dev) == 0);
		sroce_core_sq_poll_stats st{};
		sroce_core_dev_sq_poll(dev, &st);
		CHECK(st.running == c.running);
		sroce_core_dev_destroy(dev);
	}
}

TEST_CASE("SQ poller on a device: polled contexts' QPs are scanned, NO_SQ_POLL contexts ring", "[sq_poller][threads]") {
	env_host::clear();
	long base = env_host::live_allocations();
	// sq_idle_us of 300 ms: awake long enough for the checks.
	sroce_core_dev *dev = make_polled_dev(300000, "test_sqp");
	sroce_core_sq_poll_stats st{};
	sroce_core_dev_sq_poll(dev, &st);
	CHECK(st.running == 1);

	// Two contexts: one polled, one in doorbell mode.
	sroce_alloc_ucontext_resp resp{};
	sroce_core_ucontext *polled = make_uctx(dev, 0, resp);
	CHECK((resp.caps & SROCE_UCTX_CAP_SQ_POLL));
	sroce_core_ucontext *bell = make_uctx(dev, SROCE_UCTX_REQ_NO_SQ_POLL, resp);
	CHECK(!(resp.caps & SROCE_UCTX_CAP_SQ_POLL));
	std::vector<unsigned char> page_p(SROCE_PAGE_SIZE), page_b(SROCE_PAGE_SIZE);
	sroce_core_ucontext_fill_page(polled, page_p.data());
	sroce_core_ucontext_fill_page(bell, page_b.data());
	auto *pp = reinterpret_cast<sroce_context_page *>(page_p.data());
	auto *pb = reinterpret_cast<sroce_context_page *>(page_b.data());
	// Both start by ringing.
	CHECK((pp->flags & SROCE_CTX_NEED_WAKEUP));
	CHECK((pb->flags & SROCE_CTX_NEED_WAKEUP));

	sroce_core_pd *pd = nullptr;
	REQUIRE(sroce_core_pd_create(dev, &pd) == 0);
	UserCq cq;
	make_user_cq(cq, dev);
	UserQp qa, qb;
	make_user_qp(qa, dev, pd, cq.cq, polled, sroce::ib::qpt_rc);
	make_user_qp(qb, dev, pd, cq.cq, bell, sroce::ib::qpt_rc);

	auto drains = [&] {
		sroce_core_dev_sq_poll(dev, &st);
		return st.drains;
	};
	// The poller wakes on the first doorbell of the polled context...
	sroce_env_run_batched([](void *q, sroce_env_batch *b) { sroce_core_qp_doorbell((sroce_core_qp *)q, b); },
			      qa.qp);
	for (int i = 0; i < 2000 && (pp->flags & SROCE_CTX_NEED_WAKEUP); i++)
		std::this_thread::sleep_for(std::chrono::microseconds(50));
	// ...and then sees the producer move with no doorbell at all. (The QP
	// is in RESET: the send path runs and finds nothing it may send.)
	uint64_t d0 = drains();
	__atomic_store_n(&static_cast<sroce_ring_header *>(qa.sq)->producer, 1u, __ATOMIC_RELEASE);
	for (int i = 0; i < 2000 && drains() == d0; i++)
		std::this_thread::sleep_for(std::chrono::microseconds(50));
	CHECK(drains() == d0 + 1);
	// The doorbell-only context's QP is not polled and its flag stays.
	__atomic_store_n(&static_cast<sroce_ring_header *>(qb.sq)->producer, 1u, __ATOMIC_RELEASE);
	std::this_thread::sleep_for(std::chrono::milliseconds(5));
	CHECK(drains() == d0 + 1);
	CHECK((pb->flags & SROCE_CTX_NEED_WAKEUP));
	// Idle again: asleep, NEED_WAKEUP set in the polled page.
	wait_asleep(dev, st);
	CHECK(st.asleep == 1);
	CHECK((pp->flags & SROCE_CTX_NEED_WAKEUP));

	// Teardown in the glue's order; the poller thread stops with the device.
	sroce_core_qp_destroy(qa.qp);
	sroce_core_qp_destroy(qb.qp);
	sroce_core_ucontext_destroy(polled);
	sroce_core_ucontext_destroy(bell);
	sroce_core_cq_destroy(cq.cq);
	sroce_core_pd_destroy(pd);
	sroce_core_dev_destroy(dev);
	for (void *m : {qa.sq, qa.rq, qb.sq, qb.rq, cq.ci.ring})
		std::free(m);
	CHECK(env_host::live_allocations() == base);
	CHECK(env_host::warnings() == 0);
}

// One poller pass that errors many QPs at once onto one armed CQ: each QP
// raises its own QP_FATAL, the CQ one completion event. The glue's batch
// holds SROCE_ENV_BATCH_EVENTS distinct events (so does the host's, which
// warns and drops beyond it): one batch for the whole pass overflowed with
// 33 (a WARN a user could trigger at will, and lost events).
TEST_CASE("SQ poller: a pass erroring 40 QPs onto one armed CQ loses no event", "[sq_poller][threads]") {
	env_host::clear();
	env_host::clear_unsimulated_events();
	long base = env_host::live_allocations();
	sroce_core_dev *dev = make_polled_dev(1000, "test_sqp_ovf");

	sroce_alloc_ucontext_resp resp{};
	sroce_core_ucontext *uc = make_uctx(dev, 0, resp);
	std::vector<unsigned char> page(SROCE_PAGE_SIZE);
	sroce_core_ucontext_fill_page(uc, page.data());
	auto *pg = reinterpret_cast<sroce_context_page *>(page.data());
	sroce_core_pd *pd = nullptr;
	REQUIRE(sroce_core_pd_create(dev, &pd) == 0);
	UserCq cq;
	make_user_cq(cq, dev);
	REQUIRE(sroce_core_cq_req_notify(cq.cq, sroce::ib::cq_next_comp) == 0);

	constexpr int nqps = 41; // 40 that fail and one whose doorbell wakes the poller
	std::vector<UserQp> qps(nqps);
	auto batched = [](auto fn) {
		sroce_env_run_batched([](void *f, sroce_env_batch *b) { (*static_cast<decltype(fn) *>(f))(b); }, &fn);
	};
	for (UserQp &q : qps) {
		make_user_qp(q, dev, pd, cq.cq, uc, sroce::ib::qpt_ud);
		int rc = -1;
		sroce_core_qp_attr at{};
		at.qp_state = sroce::ib::qps_init;
		at.port_num = 1;
		at.qkey = 0x11111111;
		batched([&](sroce_env_batch *b) {
			rc = sroce_core_qp_modify(q.qp, &at,
						  sroce::ib::attr_state | sroce::ib::attr_pkey_index | sroce::ib::attr_port |
							  sroce::ib::attr_qkey,
						  b);
		});
		REQUIRE(rc == 0);
		for (unsigned int st : {sroce::ib::qps_rtr, sroce::ib::qps_rts}) {
			at = {};
			at.qp_state = st;
			int mask = sroce::ib::attr_state | (st == sroce::ib::qps_rts ? sroce::ib::attr_sq_psn : 0);
			batched([&](sroce_env_batch *b) { rc = sroce_core_qp_modify(q.qp, &at, mask, b); });
			REQUIRE(rc == 0);
		}
	}
	// Asleep (NEED_WAKEUP up): the posts below all wait for one pass.
	sroce_core_sq_poll_stats st{};
	wait_asleep(dev, st);
	REQUIRE(st.asleep == 1);
	REQUIRE((pg->flags & SROCE_CTX_NEED_WAKEUP));
	// A UD SEND naming an AH that does not exist: LOC_QP_OP_ERR, the QP
	// goes to the error state (QP_FATAL).
	for (int i = 0; i + 1 < nqps; i++) {
		auto *hdr = static_cast<sroce_ring_header *>(qps[i].sq);
		auto *w = reinterpret_cast<sroce_wqe *>(static_cast<unsigned char *>(qps[i].sq) +
							SROCE_RING_ENTRIES_OFFSET);
		*w = {};
		w->wr_id = 1000 + i;
		w->opcode = sroce::ib::wr_send;
		w->flags = SROCE_WQE_SIGNALED; // no SGE: a zero-length SEND
		w->ud.ah_handle = 0xdead0000u + i;
		w->ud.remote_qpn = 1;
		w->ud.remote_qkey = 0x11111111;
		__atomic_store_n(&hdr->producer, 1u, __ATOMIC_RELEASE);
	}
	// The last QP's empty doorbell wakes the poller, which finds 40 SQs moved.
	batched([&](sroce_env_batch *b) { sroce_core_qp_doorbell(qps[nqps - 1].qp, b); });
	auto fatal_events = [&] {
		int n = 0;
		for (auto [owner, kind] : env_host::unsimulated_events())
			for (int i = 0; i + 1 < nqps; i++)
				if (owner == &qps[i].owner && kind == sroce::ib::ev_qp_fatal)
					n++;
		return n;
	};
	for (int i = 0; i < 5000 && fatal_events() < nqps - 1; i++)
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	CHECK(fatal_events() == nqps - 1);
	int comp = 0;
	for (auto [owner, kind] : env_host::unsimulated_events())
		if (owner == &cq.owner && kind == SROCE_ENV_EVENT_COMP)
			comp++;
	CHECK(comp == 1);
	auto *cqh = static_cast<sroce_ring_header *>(cq.ci.ring);
	CHECK(__atomic_load_n(&cqh->producer, __ATOMIC_ACQUIRE) == unsigned(nqps - 1));
	CHECK(env_host::warnings() == 0);

	for (UserQp &q : qps)
		sroce_core_qp_destroy(q.qp);
	sroce_core_ucontext_destroy(uc);
	sroce_core_cq_destroy(cq.cq);
	sroce_core_pd_destroy(pd);
	sroce_core_dev_destroy(dev);
	for (UserQp &q : qps) {
		std::free(q.sq);
		std::free(q.rq);
	}
	std::free(cq.ci.ring);
	CHECK(env_host::live_allocations() == base);
	env_host::clear_unsimulated_events();
}

// Shared pollers (core.h, sroce_core_sq_poller_*; the glue's sqpoll.c): two
// devices join one poller thread, which scans both devices' polled QPs;
// either device may go first, and the poller keeps serving the other.
TEST_CASE("SQ poller: two devices share one poller thread, which serves both and outlives each",
	  "[sq_poller][threads]") {
	env_host::clear();
	long base = env_host::live_allocations();
	sroce_core_sq_poller_init pi{};
	pi.cpu = -1;
	pi.sq_idle_us = 300000; // awake long enough for the checks
	std::strcpy(pi.name, "test_shared");
	sroce_core_sq_poller *poller = nullptr;
	REQUIRE(sroce_core_sq_poller_create(&pi, &poller) == 0);

	struct Dev {
		sroce_core_dev *dev = nullptr;
		sroce_core_ucontext *uc = nullptr;
		std::vector<unsigned char> page = std::vector<unsigned char>(SROCE_PAGE_SIZE);
		sroce_core_pd *pd = nullptr;
		UserCq cq;
		UserQp qp;
	} d[2];
	for (Dev &x : d) {
		sroce_core_dev_init init{};
		init.netdev_mtu = 9000;
		init.netdev_up = 1;
		init.sq_poller = poller;
		REQUIRE(sroce_core_dev_create(&init, &x.dev) == 0);
		sroce_alloc_ucontext_resp resp{};
		x.uc = make_uctx(x.dev, 0, resp);
		CHECK((resp.caps & SROCE_UCTX_CAP_SQ_POLL)); // polled: the device has a poller
		sroce_core_ucontext_fill_page(x.uc, x.page.data());
		REQUIRE(sroce_core_pd_create(x.dev, &x.pd) == 0);
		make_user_cq(x.cq, x.dev);
		make_user_qp(x.qp, x.dev, x.pd, x.cq.cq, x.uc, sroce::ib::qpt_rc);
	}
	sroce_core_sq_poll_stats st{};
	auto drains = [&] {
		sroce_core_dev_sq_poll(d[1].dev, &st); // either device shows the shared poller's counts
		return st.drains;
	};
	auto kick = [](Dev &x) {
		sroce_env_run_batched(
			[](void *q, sroce_env_batch *b) { sroce_core_qp_doorbell((sroce_core_qp *)q, b); }, x.qp.qp);
		auto *pg = reinterpret_cast<sroce_context_page *>(x.page.data());
		for (int i = 0; i < 2000 && (pg->flags & SROCE_CTX_NEED_WAKEUP); i++)
			std::this_thread::sleep_for(std::chrono::microseconds(50));
	};
	// A producer that moves with no doorbell is drained, on either device.
	auto moved_is_drained = [&](Dev &x, unsigned int prod) {
		uint64_t d0 = drains();
		__atomic_store_n(&static_cast<sroce_ring_header *>(x.qp.sq)->producer, prod, __ATOMIC_RELEASE);
		for (int i = 0; i < 4000 && drains() == d0; i++)
			std::this_thread::sleep_for(std::chrono::microseconds(50));
		return drains() > d0;
	};
	kick(d[0]);
	kick(d[1]);
	CHECK(moved_is_drained(d[0], 1));
	CHECK(moved_is_drained(d[1], 1));
	sroce_core_dev_sq_poll(d[0].dev, &st);
	CHECK(st.running == 1);

	// The first device goes (in the glue's order); the poller still serves
	// the second.
	auto teardown = [](Dev &x) {
		sroce_core_qp_destroy(x.qp.qp);
		sroce_core_ucontext_destroy(x.uc);
		sroce_core_cq_destroy(x.cq.cq);
		sroce_core_pd_destroy(x.pd);
		sroce_core_dev_destroy(x.dev);
		for (void *m : {x.qp.sq, x.qp.rq, x.cq.ci.ring})
			std::free(m);
	};
	teardown(d[0]);
	kick(d[1]);
	CHECK(moved_is_drained(d[1], 2));
	teardown(d[1]);
	sroce_core_sq_poller_destroy(poller);
	CHECK(env_host::live_allocations() == base);
	CHECK(env_host::warnings() == 0);
}

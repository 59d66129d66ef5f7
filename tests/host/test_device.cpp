// The device model through the same C API the kernel glue calls.
#include <catch2/catch.hpp>

#include <cstring>
#include <set>
#include <vector>

#include "env_host.h"
#include "id_alloc.h"
#include "ucontext.h"

extern "C" {
#include "core.h"
#include "sroce-abi.h"
}

namespace {
sroce_core_dev *make_dev(unsigned mtu = 9000, int up = 1) {
	sroce_core_dev_init init{};
	init.netdev_mtu = mtu;
	init.netdev_up = up;
	sroce_core_dev *dev = nullptr;
	REQUIRE(sroce_core_dev_create(&init, &dev) == 0);
	return dev;
}

sroce_alloc_ucontext_req good_req() {
	sroce_alloc_ucontext_req req{};
	req.abi_version = SROCE_ABI_VERSION;
	return req;
}
} // namespace

TEST_CASE("active MTU is the largest IB MTU a full RoCEv2 packet fits", "[core][port]") {
	CHECK(sroce_core_mtu_for_netdev(9000) == SROCE_MTU_4096);
	CHECK(sroce_core_mtu_for_netdev(4096 + 80) == SROCE_MTU_4096);
	CHECK(sroce_core_mtu_for_netdev(4096 + 79) == SROCE_MTU_2048);
	CHECK(sroce_core_mtu_for_netdev(1500) == SROCE_MTU_1024); // as rxe
	CHECK(sroce_core_mtu_for_netdev(1280) == SROCE_MTU_1024);
	CHECK(sroce_core_mtu_for_netdev(576) == SROCE_MTU_256);
	CHECK(sroce_core_mtu_for_netdev(256 + 79) == SROCE_MTU_NONE);
	CHECK(sroce_core_mtu_for_netdev(0) == SROCE_MTU_NONE);
}

TEST_CASE("node GUID is the modified EUI-64 of the MAC", "[core][device]") {
	const unsigned char mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
	unsigned long long be = sroce_core_guid_from_mac(mac);
	const unsigned char *b = reinterpret_cast<const unsigned char *>(&be);
	const unsigned char want[8] = {0x50, 0x54, 0x00, 0xff, 0xfe, 0x12, 0x34, 0x56};
	CHECK(memcmp(b, want, 8) == 0); // stored big-endian, as ib_device.node_guid
}

TEST_CASE("port state follows the netdev and raises one event per change", "[core][port]") {
	env_host::clear();
	auto *dev = make_dev(9000, 0);
	sroce_core_port_attr pa{};
	sroce_core_query_port(dev, &pa);
	CHECK(pa.state == SROCE_PORT_DOWN);
	CHECK(pa.phys_state == SROCE_PHYS_DISABLED);
	CHECK(pa.max_mtu == SROCE_MTU_4096);

	CHECK(sroce_core_netdev_changed(dev, 1, 9000) == SROCE_EVENT_PORT_ACTIVE);
	CHECK(sroce_core_netdev_changed(dev, 1, 9000) == SROCE_EVENT_NONE);
	sroce_core_query_port(dev, &pa);
	CHECK(pa.state == SROCE_PORT_ACTIVE);
	CHECK(pa.phys_state == SROCE_PHYS_LINK_UP);
	CHECK(pa.active_mtu == SROCE_MTU_4096);

	// An MTU change is not an event but shows in the next query.
	CHECK(sroce_core_netdev_changed(dev, 1, 1500) == SROCE_EVENT_NONE);
	sroce_core_query_port(dev, &pa);
	CHECK(pa.active_mtu == SROCE_MTU_1024);

	CHECK(sroce_core_netdev_changed(dev, 0, 1500) == SROCE_EVENT_PORT_ERR);
	sroce_core_query_port(dev, &pa);
	CHECK(pa.state == SROCE_PORT_DOWN);

	// Up, but too small an MTU to carry a packet: not active.
	sroce_core_netdev_changed(dev, 1, 100);
	sroce_core_query_port(dev, &pa);
	CHECK(pa.state == SROCE_PORT_DOWN);
	sroce_core_dev_destroy(dev);
}

TEST_CASE("PDs get distinct non-zero numbers and are freed", "[core][pd]") {
	env_host::clear();
	long base = env_host::live_allocations();
	auto *dev = make_dev();
	std::vector<sroce_core_pd *> pds(100);
	std::set<unsigned> numbers;
	for (auto &pd : pds) {
		REQUIRE(sroce_core_pd_create(dev, &pd) == 0);
		numbers.insert(sroce_core_pd_number(pd));
	}
	CHECK(numbers.size() == 100);
	CHECK(numbers.count(0) == 0);
	// A freed number is not handed out again at once.
	unsigned first = sroce_core_pd_number(pds[0]);
	sroce_core_pd_destroy(pds[0]);
	REQUIRE(sroce_core_pd_create(dev, &pds[0]) == 0);
	CHECK(sroce_core_pd_number(pds[0]) != first);
	// The device lives until its last PD is gone.
	sroce_core_dev_destroy(dev);
	for (auto *pd : pds)
		sroce_core_pd_destroy(pd);
	CHECK(env_host::live_allocations() == base);
	CHECK(env_host::warnings() == 0);
}

TEST_CASE("PD creation fails cleanly when memory runs out", "[core][pd]") {
	env_host::clear();
	long base = env_host::live_allocations();
	auto *dev = make_dev();
	sroce_core_pd *pd = nullptr;
	env_host::fail_nth_allocation(0);
	CHECK(sroce_core_pd_create(dev, &pd) == -ENOMEM);
	// The number taken for it was given back: all 65536 still fit.
	std::vector<sroce_core_pd *> pds;
	for (;;) {
		if (sroce_core_pd_create(dev, &pd))
			break;
		pds.push_back(pd);
	}
	CHECK(pds.size() == 65536);
	CHECK(sroce_core_pd_create(dev, &pd) == -ENOSPC);
	for (auto *p : pds)
		sroce_core_pd_destroy(p);
	sroce_core_dev_destroy(dev);
	CHECK(env_host::live_allocations() == base);
}

TEST_CASE("device creation frees everything whichever allocation fails", "[core][device]") {
	env_host::clear();
	long base = env_host::live_allocations();
	sroce_core_dev_init init{};
	init.netdev_mtu = 1500;
	int failures = 0;
	for (int n = 0;; n++) {
		sroce_core_dev *dev = nullptr;
		env_host::fail_nth_allocation(n);
		int rc = sroce_core_dev_create(&init, &dev);
		env_host::fail_nth_allocation(-1);
		if (rc == 0) {
			sroce_core_dev_destroy(dev);
			break;
		}
		CHECK(rc == -ENOMEM);
		CHECK(env_host::live_allocations() == base);
		failures++;
	}
	CHECK(failures >= 3); // the object, its locks and its PD bitmap
	CHECK(env_host::live_allocations() == base);
}

TEST_CASE("ucontext requests are checked for ABI and unknown bits", "[core][ucontext]") {
	env_host::clear();
	auto *dev = make_dev();
	sroce_alloc_ucontext_resp resp{};
	sroce_core_ucontext *uc = nullptr;

	auto req = good_req();
	REQUIRE(sroce_core_ucontext_create(dev, &req, sizeof(req), &resp, &uc) == 0);
	CHECK(resp.abi_version == SROCE_ABI_VERSION);
	CHECK(resp.ctx_page_size == sizeof(sroce_context_page));
	CHECK(resp.max_sge > 0);
	std::vector<unsigned char> page(SROCE_PAGE_SIZE);
	sroce_core_ucontext_fill_page(uc, page.data());
	auto *cp = reinterpret_cast<sroce_context_page *>(page.data());
	CHECK(cp->magic == SROCE_CTX_PAGE_MAGIC);
	CHECK(cp->abi_version == SROCE_ABI_VERSION);
	CHECK(cp->flags & SROCE_CTX_NEED_WAKEUP); // no poller: always ring
	sroce_core_ucontext_destroy(uc);

	SECTION("another ABI version is refused with EPROTO and one log line") {
		req.abi_version = SROCE_ABI_VERSION + 1;
		CHECK(sroce_core_ucontext_create(dev, &req, sizeof(req), &resp, &uc) == -EPROTO);
		CHECK(env_host::log_lines().size() == 1);
	}
	SECTION("a request too short to hold the version is EINVAL") {
		CHECK(sroce_core_ucontext_create(dev, &req, 2, &resp, &uc) == -EINVAL);
		CHECK(sroce_core_ucontext_create(dev, &req, 0, &resp, &uc) == -EINVAL);
	}
	SECTION("unknown comp_mask bits are EOPNOTSUPP") {
		req.comp_mask = 1;
		CHECK(sroce_core_ucontext_create(dev, &req, sizeof(req), &resp, &uc) == -EOPNOTSUPP);
	}
	SECTION("unknown flags or reserved fields are EINVAL") {
		req.flags = 1u << 31;
		CHECK(sroce_core_ucontext_create(dev, &req, sizeof(req), &resp, &uc) == -EINVAL);
		req.flags = SROCE_UCTX_REQ_NO_SQ_POLL;
		req.reserved = 1;
		CHECK(sroce_core_ucontext_create(dev, &req, sizeof(req), &resp, &uc) == -EINVAL);
		req.reserved = 0;
		REQUIRE(sroce_core_ucontext_create(dev, &req, sizeof(req), &resp, &uc) == 0);
		sroce_core_ucontext_destroy(uc);
	}
	sroce_core_dev_destroy(dev);
}

TEST_CASE("contexts per device are bounded and their slots come back", "[core][ucontext]") {
	auto *dev = make_dev();
	auto req = good_req();
	sroce_alloc_ucontext_resp resp{};
	std::vector<sroce_core_ucontext *> ucs;
	sroce_core_ucontext *uc;
	while (sroce_core_ucontext_create(dev, &req, sizeof(req), &resp, &uc) == 0)
		ucs.push_back(uc);
	CHECK(ucs.size() == 4096);
	CHECK(sroce_core_ucontext_create(dev, &req, sizeof(req), &resp, &uc) == -EMFILE);
	sroce_core_ucontext_destroy(ucs.back());
	ucs.pop_back();
	CHECK(sroce_core_ucontext_create(dev, &req, sizeof(req), &resp, &uc) == 0);
	ucs.push_back(uc);
	for (auto *u : ucs)
		sroce_core_ucontext_destroy(u);
	sroce_core_dev_destroy(dev);
}

TEST_CASE("IdAllocator hands out every id once and wraps next-fit", "[core][id_alloc]") {
	sroce::IdAllocator ids;
	REQUIRE_FALSE(ids.init(10, 209).is_error()); // 200 ids, spans 4 bitmap words
	std::set<u32> seen;
	for (int i = 0; i < 200; i++) {
		auto r = ids.alloc();
		REQUIRE_FALSE(r.is_error());
		CHECK(r.value() >= 10);
		CHECK(r.value() <= 209);
		seen.insert(r.value());
	}
	CHECK(seen.size() == 200);
	CHECK(ids.alloc().error().code() == -ENOSPC);
	ids.free(150);
	ids.free(20);
	// Next-fit: the search continues after the last id handed out.
	CHECK(ids.alloc().value() == 20);
	CHECK(ids.alloc().value() == 150);
	CHECK(ids.in_use() == 200);
	CHECK(ids.init(5, 4).is_error()); // empty range refused
}

TEST_CASE("freeing an id that is not allocated warns and changes nothing", "[core][id_alloc]") {
	env_host::clear();
	sroce::IdAllocator ids;
	REQUIRE_FALSE(ids.init(1, 64).is_error());
	u32 a = ids.alloc().value();
	ids.free(a);
	ids.free(a);      // double free
	ids.free(1000);   // out of range
	CHECK(env_host::warnings() == 2);
	CHECK(ids.in_use() == 0);
}

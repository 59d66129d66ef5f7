// The device: its tables, limits, counts and the SQ poller it starts (device.h).
#include "device.h"
#include "ktl/byteorder.h"
#include "param.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

u64 guid_from_mac(const u8 mac[6]) {
	// Modified EUI-64: flip the universal/local bit, insert ff:fe.
	const u8 eui[8] = {u8(mac[0] ^ 2), mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]};
	u64 v = 0;
	for (u8 b : eui)
		v = v << 8 | b;
	return ktl::cpu_to_be64(v);
}

// Whether a device starts a poller: the module parameter sq_poll's mode,
// auto deciding by the machine (sq_poll_auto, sq_poller.h).
constexpr bool sq_poll_wanted(int mode, u32 online_cpus, u32 poll_cpus, u32 pollers) {
	return mode == SROCE_SQ_POLL_ON || (mode == SROCE_SQ_POLL_AUTO && sq_poll_auto(online_cpus, poll_cpus, pollers));
}
static_assert(!sq_poll_wanted(SROCE_SQ_POLL_OFF, 64, 8, 0) && sq_poll_wanted(SROCE_SQ_POLL_ON, 1, 0, 9),
	      "N and Y are what they say, whatever the machine");
static_assert(!sq_poll_wanted(SROCE_SQ_POLL_AUTO, 2, 0, 0) && sq_poll_wanted(SROCE_SQ_POLL_AUTO, 2, 1, 0) &&
		      !sq_poll_wanted(SROCE_SQ_POLL_AUTO, 2, 1, 1),
	      "auto: the machine decides");
static_assert(!sq_poll_wanted(7, 64, 8, 0), "an unknown mode starts none");

ktl::Result<ktl::RefPtr<Device>> Device::create(const sroce_core_dev_init &init) {
	auto dev = TRY(ktl::make_ref<Device>(ktl::AllocCtx::may_sleep));
	TRY(dev->init(init));
	return dev;
}

ktl::Result<void> Device::init(const sroce_core_dev_init &init) {
	TRY(port_lock_.init());
	TRY(counters_.init());
	// PD number 0 is never handed out, so 0 can mean "none" in the ABI.
	TRY(pd_ids_.init(1, param::max_pd));
	TRY(keys_.init(param::max_mr, &counters_));
	TRY(xrcd_ids_.init(1, param::max_xrcd));
	TRY(wqs_.init(1, param::max_wq));
	TRY(srqs_.init(1, param::max_srq));
	// QPNs 0 and 1 are the special QPs; QP1 is placed with insert_at.
	TRY(qps_.init(param::first_qpn, param::max_qp - 1));
	TRY(ahs_.init(1, param::max_ah));
	generation_ = sroce_env_now_ns();
	zero_copy_min_ = init.zero_copy_min;
	port_.init(init.netdev_up, init.netdev_mtu);
	if (init.sq_poller) {
		sq_poller_ = reinterpret_cast<SqPoller *>(init.sq_poller);
		return {};
	}
	if (sq_poll_wanted(init.sq_poll, init.online_cpus, init.poll_cpus, init.pollers))
		TRY(start_poller(own_poller_, init.poller_name, init.sq_idle_us, init.sq_yield_us, -1));
	return {};
}

ktl::Result<void> start_poller(SqPoller &p, const char (&name)[16], u32 idle_us, u32 yield_us, int cpu) {
	char n[sizeof(name)];
	__builtin_memcpy(n, name, sizeof(n));
	n[sizeof(n) - 1] = 0;
	return p.start(u64(idle_us) * 1000, n[0] ? n : "sroce_sqpoll", u64(yield_us) * 1000, cpu);
}

void Device::count_mr(u64 npages, bool add) {
	if (add) {
		// The key table bounds MRs; this only counts them.
		KTL_WARN_ON(!counts_.mrs.try_get(~0ull));
		counts_.pinned_pages.fetch_add(npages, ktl::MemoryOrder::relaxed);
		return;
	}
	counts_.mrs.put();
	KTL_WARN_ON(counts_.pinned_pages.fetch_sub(npages, ktl::MemoryOrder::relaxed) < npages);
}

void Device::query_port(sroce_core_port_attr *attr) {
	ktl::Guard g(port_lock_);
	port_.query(attr);
}

sroce_core_port_event Device::netdev_changed(bool up, u32 mtu) {
	ktl::Guard g(port_lock_);
	return port_.netdev_changed(up, mtu);
}

u32 Device::active_mtu() {
	sroce_core_port_attr a;
	query_port(&a);
	return a.active_mtu;
}

void Device::fill_counts(sroce_core_counts *c) const {
	c->qps = counts_.qps.get();
	c->cqs = counts_.cqs.get();
	c->srqs = counts_.srqs.get();
	c->mrs = counts_.mrs.get();
	c->mws = counts_.mws.get();
	c->ahs = counts_.ahs.get();
	c->pinned_pages = counts_.pinned_pages.load(ktl::MemoryOrder::relaxed);
	c->pkts_in_flight = counters_.in_flight();
}

} // namespace sroce

extern "C" int sroce_core_sq_poll_wanted(int mode, unsigned int online_cpus, unsigned int poll_cpus,
					 unsigned int pollers) {
	return sroce::sq_poll_wanted(mode, online_cpus, poll_cpus, pollers);
}

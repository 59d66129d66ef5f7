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

ktl::Result<ktl::RefPtr<Device>> Device::create(const sroce_core_dev_init &init) {
	auto dev = TRY(ktl::make_ref<Device>(ktl::AllocCtx::may_sleep));
	TRY(dev->init(init));
	return dev;
}

ktl::Result<void> Device::init(const sroce_core_dev_init &init) {
	TRY(port_lock_.init());
	// PD number 0 is never handed out, so 0 can mean "none" in the ABI.
	TRY(pd_ids_.init(1, param::max_pd));
	TRY(keys_.init(param::max_mr));
	TRY(srq_ids_.init(1, param::max_srq));
	// QPNs 0 and 1 are the special QPs; QP1 is placed with insert_at.
	TRY(qps_.init(param::first_qpn, param::max_qp - 1));
	TRY(ahs_.init(1, param::max_ah));
	node_guid_ = guid_from_mac(init.mac);
	generation_ = sroce_env_now_ns();
	port_.init(init.netdev_up, init.netdev_mtu);
	if (init.sq_poll) {
		char name[sizeof(init.poller_name)];
		__builtin_memcpy(name, init.poller_name, sizeof(name));
		name[sizeof(name) - 1] = 0;
		TRY(sq_poller_.start(u64(init.sq_idle_us) * 1000, name[0] ? name : "sroce_sqpoll",
				     u64(init.sq_yield_us) * 1000));
	}
	return {};
}

void Device::query(sroce_core_dev_attr *a) const {
	namespace av = param::available;
	// The limit of an object kind that exists, 0 for one that does not yet.
	auto lim = [](bool exists, u32 v) { return exists ? v : 0u; };
	a->node_guid = node_guid_;
	a->sys_image_guid = node_guid_;
	a->fw_ver = param::fw_ver;
	a->max_mr_size = av::mr ? param::max_mr_size : 0;
	a->page_size_cap = 1ull << param::page_shift;
	a->vendor_id = param::vendor_id;
	a->vendor_part_id = param::vendor_part_id;
	a->hw_ver = param::hw_ver;
	a->max_pd = param::max_pd;
	a->max_pkeys = param::max_pkeys;
	a->local_ca_ack_delay = param::local_ca_ack_delay;
	a->max_qp = lim(av::qp, param::max_qp);
	a->max_qp_wr = lim(av::qp, param::max_qp_wr);
	a->max_send_sge = lim(av::qp, param::max_sge);
	a->max_recv_sge = lim(av::qp, param::max_sge);
	a->max_sge_rd = lim(av::qp, param::max_sge_rd);
	a->max_qp_rd_atom = lim(av::qp, param::max_qp_rd_atom);
	a->max_qp_init_rd_atom = lim(av::qp, param::max_qp_rd_atom);
	a->max_res_rd_atom = lim(av::qp, param::max_res_rd_atom);
	a->max_inline_data = lim(av::qp, param::max_inline_data);
	a->max_cq = lim(av::cq, param::max_cq);
	a->max_cqe = lim(av::cq, param::max_cqe);
	a->max_mr = lim(av::mr, param::max_mr);
	a->max_fast_reg_page_list_len = lim(av::fast_reg, param::max_fast_reg_page_list_len);
	a->max_mw = lim(av::mw, param::max_mw);
	a->max_srq = lim(av::srq, param::max_srq);
	a->max_srq_wr = lim(av::srq, param::max_srq_wr);
	a->max_srq_sge = lim(av::srq, param::max_srq_sge);
	a->max_ah = lim(av::ah, param::max_ah);
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
	c->ahs = counts_.ahs.get();
	c->pinned_pages = counts_.pinned_pages.load(ktl::MemoryOrder::relaxed);
	c->pkts_in_flight = counts_.pkts_in_flight.load(ktl::MemoryOrder::relaxed);
}

} // namespace sroce

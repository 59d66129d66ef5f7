// The extern "C" surface of core.h: handle casts and Result -> errno, no logic.
// A C handle is the C++ object itself (the handle structs are never defined)
// and owns one reference to it.
#include "abi.h"
#include "core.h"
#include "handle.h"
#include "device.h"
#include "mr.h"
#include "mw.h"
#include "pd.h"
#include "ucontext.h"

using namespace sroce;

namespace {
Device *from(sroce_core_dev *h) { return reinterpret_cast<Device *>(h); }
Pd *from(sroce_core_pd *h) { return reinterpret_cast<Pd *>(h); }
const Pd *from(const sroce_core_pd *h) { return reinterpret_cast<const Pd *>(h); }
Ucontext *from(sroce_core_ucontext *h) { return reinterpret_cast<Ucontext *>(h); }
Mr *from(sroce_core_mr *h) { return reinterpret_cast<Mr *>(h); }
const Mr *from(const sroce_core_mr *h) { return reinterpret_cast<const Mr *>(h); }
Mw *from(sroce_core_mw *h) { return reinterpret_cast<Mw *>(h); }
const Mw *from(const sroce_core_mw *h) { return reinterpret_cast<const Mw *>(h); }

} // namespace

extern "C" {

unsigned int sroce_core_mtu_for_netdev(unsigned int netdev_mtu) { return Port::mtu_for_netdev(netdev_mtu); }

unsigned long long sroce_core_guid_from_mac(const unsigned char mac[6]) { return guid_from_mac(mac); }

int sroce_core_dev_create(const sroce_core_dev_init *init, sroce_core_dev **out) {
	return to_handle(Device::create(*init), out);
}

int sroce_core_sq_poller_create(const sroce_core_sq_poller_init *init, sroce_core_sq_poller **out) {
	auto *p = ktl::create<SqPoller>(ktl::AllocCtx::may_sleep);
	if (!p)
		return -ktl::err::nomem;
	auto r = start_poller(*p, init->name, init->sq_idle_us, init->sq_yield_us, init->cpu);
	if (r.is_error()) {
		ktl::destroy(p);
		return ktl::to_rc(r);
	}
	*out = reinterpret_cast<sroce_core_sq_poller *>(p);
	return 0;
}

void sroce_core_sq_poller_destroy(sroce_core_sq_poller *h) {
	auto *p = reinterpret_cast<SqPoller *>(h);
	if (!p)
		return;
	p->stop();
	ktl::destroy(p);
}

void sroce_core_dev_destroy(sroce_core_dev *dev) {
	if (!dev)
		return;
	from(dev)->shutdown();
	from(dev)->unref();
}


void sroce_core_query_port(sroce_core_dev *dev, sroce_core_port_attr *attr) { from(dev)->query_port(attr); }

sroce_core_port_event sroce_core_netdev_changed(sroce_core_dev *dev, int up, unsigned int mtu) {
	return from(dev)->netdev_changed(up != 0, mtu);
}

int sroce_core_ucontext_create(sroce_core_dev *dev, const sroce_alloc_ucontext_req *req,
			       unsigned long req_len, sroce_alloc_ucontext_resp *resp,
			       sroce_core_ucontext **out) {
	return to_handle(Ucontext::create(*from(dev), *req, req_len, resp), out);
}

void sroce_core_ucontext_destroy(sroce_core_ucontext *uctx) {
	if (!uctx)
		return;
	from(uctx)->close();
	from(uctx)->unref();
}

void sroce_core_ucontext_fill_page(sroce_core_ucontext *uctx, void *page) { from(uctx)->fill_page(page); }

int sroce_core_pd_create(sroce_core_dev *dev, sroce_core_pd **out) { return to_handle(Pd::create(*from(dev)), out); }

void sroce_core_pd_destroy(sroce_core_pd *pd) {
	if (pd)
		from(pd)->unref();
}

unsigned int sroce_core_pd_number(const sroce_core_pd *pd) { return from(pd)->pdn(); }

int sroce_core_mr_create(sroce_core_dev *dev, const sroce_core_mr_init *init, sroce_core_mr **out) {
	Pd *pd = from(init->pd);
	if (!pd || &pd->device() != from(dev))
		return -ktl::err::inval;
	return to_handle(Mr::create(*pd, *init), out);
}

void sroce_core_mr_set_page(sroce_core_mr *mr, unsigned long index, void *kva) { from(mr)->set_page(index, kva); }

int sroce_core_mr_enable(sroce_core_mr *mr) { return ktl::to_rc(from(mr)->enable()); }

int sroce_core_mr_destroy(sroce_core_mr *mr) {
	return mr ? ktl::to_rc(from(mr)->close()) : 0;
}

unsigned int sroce_core_mr_lkey(const sroce_core_mr *mr) { return from(mr)->lkey(); }

unsigned int sroce_core_mr_rkey(const sroce_core_mr *mr) { return from(mr)->rkey(); }

int sroce_core_mw_create(sroce_core_pd *pd, unsigned int type, int user, unsigned int max_descriptors,
			 sroce_core_mw **out) {
	Pd *p = from(pd);
	if (!p || type > 0xff)
		return -ktl::err::inval;
	return to_handle(Mw::create(*p, u8(type), user != 0, max_descriptors), out);
}

int sroce_core_mw_destroy(sroce_core_mw *mw) {
	return mw ? ktl::to_rc(from(mw)->close()) : 0;
}

int sroce_core_mw_stage_layout(sroce_core_mw *mw, const sroce_mw_layout_req *req,
			       const sroce_mw_layout_entry *entries, const sroce_mw_layout_dim *dims,
			       unsigned int num_dims, sroce_mw_layout_resp *resp) {
	if (!mw || !req || !resp || (req->num_entries && !entries) || (num_dims && !dims))
		return -ktl::err::inval;
	return ktl::to_rc(from(mw)->stage_layout({req, entries, dims, num_dims}, *resp));
}

unsigned int sroce_core_mw_rkey(const sroce_core_mw *mw) { return from(mw)->rkey(); }

int sroce_core_mr_stage_page(sroce_core_mr *mr, unsigned long index, void *kva) {
	return ktl::to_rc(from(mr)->stage_page(index, kva));
}

int sroce_core_mr_stage_map(sroce_core_mr *mr, unsigned long npages, unsigned long long iova,
			    unsigned long long length, unsigned int page_shift) {
	return ktl::to_rc(from(mr)->stage_map(npages, iova, length, page_shift));
}

void sroce_core_dev_counts(sroce_core_dev *dev, sroce_core_counts *c) { from(dev)->fill_counts(c); }

void sroce_core_dev_rx_counts(sroce_core_dev *dev, sroce_core_rx_counts *c) {
	sroce::ShardedCounterBlock &dc = from(dev)->counters();
	c->packets = dc.get(SROCE_CNT_RX_PKTS);
	c->bad_header = dc.get(SROCE_CNT_RX_BAD_HEADER);
	c->icrc_errors = dc.get(SROCE_CNT_ICRC_ERRORS);
	c->bad_qpn = dc.get(SROCE_CNT_RX_BAD_QPN);
}

void sroce_core_dev_sq_poll(sroce_core_dev *dev, sroce_core_sq_poll_stats *s) {
	SqPoller &p = from(dev)->sq_poller();
	auto st = p.stats();
	s->running = p.running();
	s->asleep = p.asleep();
	s->sleeps = st.sleeps;
	s->wakeups = st.wakeups;
	s->drains = st.drains;
	s->rechecks = st.rechecks;
	s->dozes = st.dozes;
	s->held = st.held;
	s->naps = st.naps;
	s->max_walk = st.max_walk;
}

} // extern "C"

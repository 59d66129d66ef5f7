// The extern "C" surface of core.h for the transport objects: handle casts
// and Result -> errno, no logic (see core_api.cpp).
#include "abi.h"
#include "core.h"
#include "handle.h"
#include "ind_table.h"
#include "mp_recv.h"
#include "param.h"
#include "qp.h"

using namespace sroce;

namespace {
template <typename T, typename H> T *obj(H *h) { return reinterpret_cast<T *>(h); }
template <typename T, typename H> const T *obj(const H *h) { return reinterpret_cast<const T *>(h); }
Device *dev_of(sroce_core_dev *h) { return reinterpret_cast<Device *>(h); }


// The next power of two >= v (v <= 2^31).
u32 pow2_ceil(u32 v) {
	u32 p = 1;
	while (p < v)
		p <<= 1;
	return p;
}
} // namespace

extern "C" {

int sroce_core_ring_size(unsigned int entries, unsigned int max_entries, unsigned int entry_size,
			 unsigned int *log_size, unsigned long *bytes) {
	if (entries == 0 || entries > max_entries || max_entries > (1u << 30) || entry_size == 0 ||
	    entry_size > (1u << 16))
		return -ktl::err::inval;
	u32 n = pow2_ceil(entries);
	u32 lg = 0;
	while ((1u << lg) < n)
		lg++;
	u64 b = SROCE_RING_ENTRIES_OFFSET + u64(n) * entry_size;
	b = (b + SROCE_PAGE_SIZE - 1) & ~u64(SROCE_PAGE_SIZE - 1);
	if (b > (1ull << 31))
		return -ktl::err::inval;
	*log_size = lg;
	*bytes = (unsigned long)b;
	return 0;
}

unsigned int sroce_core_wqe_stride(unsigned int max_sge, unsigned int max_inline) {
	u32 body = ktl::max(ktl::min(max_sge, param::max_sge) * u32(sizeof(sroce_sge)),
			    ktl::min(max_inline, param::max_inline_data));
	return pow2_ceil(u32(sizeof(sroce_wqe)) + body);
}

int sroce_core_mp_wr_round(unsigned int *buf_sz, unsigned int *align) {
	return ktl::to_rc(MpRecv::round(buf_sz, align));
}

int sroce_core_cq_create(sroce_core_dev *dev, const sroce_core_cq_init *init, sroce_core_cq **out) {
	return to_handle(CompletionQueue::create(*dev_of(dev), *init), out);
}

void sroce_core_cq_destroy(sroce_core_cq *cq) {
	if (!cq)
		return;
	obj<CompletionQueue>(cq)->kill();
	obj<CompletionQueue>(cq)->unref();
}

int sroce_core_cq_req_notify(sroce_core_cq *cq, int flags) { return obj<CompletionQueue>(cq)->req_notify(flags); }

int sroce_core_cq_modify(sroce_core_cq *cq, unsigned int count, unsigned int period_us) {
	return ktl::to_rc(obj<CompletionQueue>(cq)->moderate(count, period_us));
}

int sroce_core_cq_poll(sroce_core_cq *cq, sroce_cqe *out, void **qp_owner, int n) {
	return obj<CompletionQueue>(cq)->poll(out, qp_owner, n);
}

int sroce_core_cq_resize(sroce_core_cq *cq, void *ring, unsigned int log_size) {
	return ktl::to_rc(obj<CompletionQueue>(cq)->resize(ring, log_size));
}

int sroce_core_xrcd_create(sroce_core_dev *dev, sroce_core_xrcd **out) {
	return to_handle(Xrcd::create(*dev_of(dev)), out);
}

void sroce_core_xrcd_destroy(sroce_core_xrcd *xrcd) {
	if (xrcd)
		obj<Xrcd>(xrcd)->unref();
}

unsigned int sroce_core_xrcd_number(const sroce_core_xrcd *xrcd) { return obj<Xrcd>(xrcd)->xrcdn(); }

int sroce_core_srq_create(sroce_core_dev *dev, const sroce_core_srq_init *init, sroce_core_srq **out) {
	return to_handle(Srq::create(*dev_of(dev), *init), out);
}

void sroce_core_srq_destroy(sroce_core_srq *srq) {
	if (!srq)
		return;
	obj<Srq>(srq)->kill();
	obj<Srq>(srq)->unref();
}

int sroce_core_srq_set_limit(sroce_core_srq *srq, unsigned int limit) {
	return ktl::to_rc(obj<Srq>(srq)->set_limit(limit));
}

void sroce_core_srq_query(sroce_core_srq *srq, unsigned int *max_wr, unsigned int *max_sge, unsigned int *limit) {
	obj<Srq>(srq)->query(max_wr, max_sge, limit);
}

unsigned int sroce_core_srq_number(const sroce_core_srq *srq) { return obj<Srq>(srq)->srqn(); }

int sroce_core_srq_post_recv(sroce_core_srq *srq, const sroce_wqe *wqe, const sroce_sge *sge, sroce_env_batch *) {
	return ktl::to_rc(obj<Srq>(srq)->post(*wqe, sge));
}

int sroce_core_wq_create(sroce_core_dev *dev, const sroce_core_wq_init *init, sroce_core_wq **out) {
	return to_handle(Wq::create(*dev_of(dev), *init), out);
}

void sroce_core_wq_destroy(sroce_core_wq *wq) {
	if (!wq)
		return;
	obj<Wq>(wq)->kill();
	obj<Wq>(wq)->unref();
}

unsigned int sroce_core_wq_number(const sroce_core_wq *wq) { return obj<Wq>(wq)->wqn(); }

int sroce_core_wq_modify(sroce_core_wq *wq, unsigned int state, int cur_state, sroce_env_batch *b) {
	return ktl::to_rc(obj<Wq>(wq)->modify(state, cur_state, b));
}

unsigned int sroce_core_wq_state(sroce_core_wq *wq) { return obj<Wq>(wq)->state(); }
void sroce_core_wq_snapshot(sroce_core_wq *wq, sroce_core_wq_view *s) { obj<Wq>(wq)->snapshot(s); }

int sroce_core_wq_busy(sroce_core_wq *wq) { return obj<Wq>(wq)->busy(); }
int sroce_core_wq_close(sroce_core_wq *wq) { return ktl::to_rc(obj<Wq>(wq)->close()); }

int sroce_core_wq_post_recv(sroce_core_wq *wq, const sroce_wqe *wqe, const sroce_sge *sge) {
	return ktl::to_rc(obj<Wq>(wq)->post(*wqe, sge));
}

int sroce_core_ind_table_create(sroce_core_dev *dev, unsigned int log_size, sroce_core_wq *const *wqs,
				sroce_core_ind_table **out) {
	return to_handle(IndTable::create(*dev_of(dev), log_size, reinterpret_cast<Wq *const *>(wqs)), out);
}

void sroce_core_ind_table_destroy(sroce_core_ind_table *t) {
	if (t)
		obj<IndTable>(t)->unref();
}

int sroce_core_qp_create(sroce_core_dev *dev, const sroce_core_qp_init *init, sroce_core_qp **out) {
	return to_handle(Qp::create(*dev_of(dev), *init), out);
}

void sroce_core_qp_destroy(sroce_core_qp *qp) {
	if (!qp)
		return;
	obj<Qp>(qp)->destroy();
	obj<Qp>(qp)->unref();
}

unsigned int sroce_core_qp_number(const sroce_core_qp *qp) { return obj<Qp>(qp)->qpn(); }

int sroce_core_qp_modify(sroce_core_qp *qp, const sroce_core_qp_attr *attr, int mask, sroce_env_batch *b) {
	return ktl::to_rc(obj<Qp>(qp)->modify(*attr, u32(mask), b));
}

void sroce_core_qp_query(sroce_core_qp *qp, sroce_core_qp_attr *attr) { obj<Qp>(qp)->query(attr); }

void sroce_core_qp_doorbell(sroce_core_qp *qp, sroce_env_batch *b) { obj<Qp>(qp)->doorbell(b); }
void sroce_core_qp_owner_seen(sroce_core_qp *qp, int cpu, const void *allowed, unsigned int len) {
	obj<Qp>(qp)->rx_steer().set_allowed(allowed, len);
	obj<Qp>(qp)->rx_steer().saw_owner_on(cpu);
}
void sroce_core_qp_pin_rx_cpu(sroce_core_qp *qp, int cpu) { obj<Qp>(qp)->rx_steer().pin(cpu < 0 ? RxSteer::none : cpu); }
int sroce_core_qp_pinned_rx_cpu(const sroce_core_qp *qp) {
	return const_cast<Qp *>(obj<Qp>(qp))->rx_steer().pinned();
}

int sroce_core_qp_post_send(sroce_core_qp *qp, const sroce_wqe *wqe, const sroce_sge *sge, const void *data,
			    unsigned int inline_len) {
	return ktl::to_rc(obj<Qp>(qp)->post_send(*wqe, sge, data, inline_len));
}

int sroce_core_qp_post_recv(sroce_core_qp *qp, const sroce_wqe *wqe, const sroce_sge *sge) {
	return ktl::to_rc(obj<Qp>(qp)->post_recv(*wqe, sge));
}

int sroce_core_ah_create(sroce_core_pd *pd, sroce_env_path *path, const sroce_core_path_info *info,
			 sroce_core_ah **out) {
	return to_handle(Ah::create(*obj<Pd>(pd), path, *info), out);
}

void sroce_core_ah_destroy(sroce_core_ah *ah) {
	if (!ah)
		return;
	obj<Ah>(ah)->kill();
	obj<Ah>(ah)->unref();
}

unsigned int sroce_core_ah_handle(const sroce_core_ah *ah) { return obj<Ah>(ah)->handle(); }

void sroce_core_rx(sroce_core_dev *dev, sroce_env_pkt *pkt, sroce_env_batch *b) {
	rx_packet(*dev_of(dev), pkt, b, false);
}

void sroce_core_rx_steered(sroce_core_dev *dev, sroce_env_pkt *pkt, void *token, sroce_env_batch *b) {
	Qp *qp = static_cast<Qp *>(token);
	rx_packet(*dev_of(dev), pkt, b, true, qp);
	if (qp)
		qp->steered_done(false);
}

void sroce_core_rx_steer_drop(sroce_core_dev *, sroce_env_pkt *pkt, void *token) {
	sroce_env_pkt_free(pkt);
	static_cast<Qp *>(token)->steered_done(true);
}

} // extern "C"

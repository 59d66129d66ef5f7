// Counter names, NAK kinds, and the C surface of the observability API
// (counters and resource snapshots, core.h).
#include "counters.h"
#include "cq.h"
#include "mr.h"
#include "qp.h"

namespace sroce {

ktl::Result<void> ShardedCounterBlock::init() {
	// A power of two of shards, at least one per CPU id, so a mask picks one.
	u32 n = 1;
	while (n < sroce_env_nr_cpus())
		n <<= 1;
	mem_ = sroce_env_zalloc(sizeof(Shard) * n + line, 0);
	if (!mem_)
		return ktl::Error::from_errno(ktl::err::nomem);
	uptr at = (reinterpret_cast<uptr>(mem_) + line - 1) & ~uptr(line - 1);
	shards_ = reinterpret_cast<Shard *>(at);
	for (u32 i = 0; i < n; i++)
		new (&shards_[i], ktl::place) Shard();
	mask_ = n - 1;
	return {};
}

u64 ShardedCounterBlock::get(sroce_core_counter id) const {
	u64 sum = 0;
	for (u32 i = 0; i <= mask_; i++)
		sum += shards_[i].b.get(id);
	return sum;
}

u64 ShardedCounterBlock::in_flight() const {
	u64 sum = 0;
	for (u32 i = 0; i <= mask_; i++)
		sum += shards_[i].in_flight.load(ktl::MemoryOrder::relaxed);
	return sum;
}

u32 ShardedCounterBlock::read(u64 *out, u32 n) const {
	u32 k = shards_[0].b.read(out, n);
	for (u32 i = 1; i <= mask_; i++)
		for (u32 c = 0; c < k; c++)
			out[c] += shards_[i].b.get(sroce_core_counter(c));
	return k;
}

namespace {
// Indexed by sroce_core_counter; the static_assert below keeps them in step.
const char *const names[] = {
	"tx_pkts",
	"tx_bytes",
	"rx_pkts",
	"rx_bytes",
	"retrans_pkts",
	"retrans_timeouts",
	"retry_exceeded",
	"rnr_retry_exceeded",
	"nak_sent_psn_seq",
	"nak_sent_rnr",
	"nak_sent_rem_access",
	"nak_sent_rem_op",
	"nak_sent_inv_req",
	"nak_rcvd_psn_seq",
	"nak_rcvd_rnr",
	"nak_rcvd_rem_access",
	"nak_rcvd_rem_op",
	"nak_rcvd_inv_req",
	"icrc_errors",
	"out_of_seq_req",
	"duplicate_req",
	"rx_bad_qpn",
	"rx_bad_header",
	"sq_doorbells",
	"sq_poller_wakeups",
	"rx_bad_pkey",
	"rx_bad_addr",
	"read_gap_resends",
	"fast_regs",
	"local_invs",
	"remote_invs",
	"mw_binds",
	"tail_probes",
	"rx_steered",
	"rx_steer_drops",
	"tx_zero_copy",
	"key_lookups",
};
static_assert(sizeof(names) / sizeof(names[0]) == SROCE_CNT_MAX, "a name per counter");
} // namespace

const char *counter_name(u32 id) { return id < SROCE_CNT_MAX ? names[id] : nullptr; }

sroce_core_counter nak_counter(const ib::Aeth &a, bool sent) {
	if (a.is_rnr_nak())
		return sent ? SROCE_CNT_NAK_SENT_RNR : SROCE_CNT_NAK_RCVD_RNR;
	if (!a.is_nak())
		return SROCE_CNT_MAX;
	switch (a.nak_code()) {
	case ib::NakCode::psn_seq_err: return sent ? SROCE_CNT_NAK_SENT_PSN_SEQ : SROCE_CNT_NAK_RCVD_PSN_SEQ;
	case ib::NakCode::invalid_request: return sent ? SROCE_CNT_NAK_SENT_INV_REQ : SROCE_CNT_NAK_RCVD_INV_REQ;
	case ib::NakCode::remote_access: return sent ? SROCE_CNT_NAK_SENT_REM_ACCESS : SROCE_CNT_NAK_RCVD_REM_ACCESS;
	case ib::NakCode::remote_op: return sent ? SROCE_CNT_NAK_SENT_REM_OP : SROCE_CNT_NAK_RCVD_REM_OP;
	default: return SROCE_CNT_MAX;
	}
}


namespace {
template <usize N> constexpr usize bytes_of(const sroce_core_view_field (&t)[N]) {
	usize n = 0;
	for (const auto &f : t)
		n += f.size;
	return n;
}
template <usize N> constexpr bool sizes_ok(const sroce_core_view_field (&t)[N]) {
	for (const auto &f : t)
		if (f.size != 4 && f.size != 8)
			return false;
	return true;
}
} // namespace

} // namespace sroce

using namespace sroce;

extern "C" {

#define SROCE_VIEW_FIELD_F(view, name, member, flags) \
	{ name, u16(__builtin_offsetof(view, member)), u8(sizeof(view::member)), u8(flags) }
#define SROCE_VIEW_FIELD(view, name, member) SROCE_VIEW_FIELD_F(view, name, member, 0)
#define QPF(member) SROCE_VIEW_FIELD(sroce_core_qp_view, #member, member)
constexpr sroce_core_view_field sroce_core_qp_view_fields[] = {
	QPF(sq_psn), QPF(sq_unacked_psn), QPF(rq_psn), QPF(msn), QPF(sq_wqes), QPF(rd_atomic_out),
	QPF(rd_atomic_max), QPF(responses_pending), QPF(window), QPF(window_limit), QPF(timeout),
	QPF(retry_cnt), QPF(retries_left), QPF(rnr_retry), QPF(rnr_retries_left), QPF(rnr_wait),
	QPF(timer_armed), QPF(srtt_us), QPF(rttvar_us), QPF(retrans_pkts), QPF(retrans_timeouts), QPF(xrcd),
};
#undef QPF
constexpr sroce_core_view_field sroce_core_cq_view_fields[] = {
	SROCE_VIEW_FIELD(sroce_core_cq_view, "entries", entries),
	SROCE_VIEW_FIELD(sroce_core_cq_view, "fill", fill),
	SROCE_VIEW_FIELD(sroce_core_cq_view, "armed", armed),
	SROCE_VIEW_FIELD(sroce_core_cq_view, "overflow", error),
	SROCE_VIEW_FIELD(sroce_core_cq_view, "user", user),
};
constexpr sroce_core_view_field sroce_core_wq_view_fields[] = {
	SROCE_VIEW_FIELD(sroce_core_wq_view, "received", received),
	SROCE_VIEW_FIELD(sroce_core_wq_view, "errors", errors),
	SROCE_VIEW_FIELD(sroce_core_wq_view, "no_wqe", no_wqe),
	SROCE_VIEW_FIELD(sroce_core_wq_view, "not_ready", not_ready),
};
// In the order `rdma res show mr -dd` always printed them.
constexpr sroce_core_view_field sroce_core_mr_view_fields[] = {
	SROCE_VIEW_FIELD_F(sroce_core_mr_view, "lkey", lkey, SROCE_VIEW_KEY | SROCE_VIEW_HEX),
	SROCE_VIEW_FIELD_F(sroce_core_mr_view, "rkey", rkey, SROCE_VIEW_KEY | SROCE_VIEW_HEX),
	SROCE_VIEW_FIELD_F(sroce_core_mr_view, "access", access, SROCE_VIEW_HEX),
	SROCE_VIEW_FIELD(sroce_core_mr_view, "dma", dma),
	SROCE_VIEW_FIELD(sroce_core_mr_view, "fast_reg", fast_reg),
	SROCE_VIEW_FIELD(sroce_core_mr_view, "windows", windows),
	// A key with its iova is all a peer needs to reach the memory.
	SROCE_VIEW_FIELD_F(sroce_core_mr_view, "iova", iova, SROCE_VIEW_KEY | SROCE_VIEW_HEX | SROCE_VIEW_USER_MEM),
	SROCE_VIEW_FIELD_F(sroce_core_mr_view, "length", length, SROCE_VIEW_USER_MEM),
	SROCE_VIEW_FIELD_F(sroce_core_mr_view, "npages", npages, SROCE_VIEW_USER_MEM),
	SROCE_VIEW_FIELD_F(sroce_core_mr_view, "page_shift", page_shift, SROCE_VIEW_USER_MEM),
};
#define CNT(member) SROCE_VIEW_FIELD(sroce_core_counts, #member, member)
constexpr sroce_core_view_field sroce_core_counts_fields[] = {
	CNT(qps), CNT(cqs), CNT(srqs), CNT(mrs), CNT(mws), CNT(ahs), CNT(pinned_pages), CNT(pkts_in_flight),
};
#undef CNT
constexpr sroce_core_view_field sroce_core_rx_counts_fields[] = {
	SROCE_VIEW_FIELD(sroce_core_rx_counts, "rx_core_pkts", packets),
	SROCE_VIEW_FIELD(sroce_core_rx_counts, "rx_bad_header", bad_header),
	SROCE_VIEW_FIELD(sroce_core_rx_counts, "rx_icrc_errors", icrc_errors),
	SROCE_VIEW_FIELD(sroce_core_rx_counts, "rx_bad_qpn", bad_qpn),
};
#undef SROCE_VIEW_FIELD
#undef SROCE_VIEW_FIELD_F

// Every member is printed, but what ib_core prints itself for a QP (state,
// type, dest_qpn): a member without a row fails here.
static_assert(bytes_of(sroce_core_qp_view_fields) + 3 * sizeof(unsigned int) == sizeof(sroce_core_qp_view),
	      "a QP view member without a row");
static_assert(bytes_of(sroce_core_cq_view_fields) == sizeof(sroce_core_cq_view), "a CQ view member without a row");
static_assert(bytes_of(sroce_core_wq_view_fields) == sizeof(sroce_core_wq_view), "a WQ view member without a row");
// windows is last and nothing before it is padding.
static_assert(bytes_of(sroce_core_mr_view_fields) ==
		      __builtin_offsetof(sroce_core_mr_view, windows) + sizeof(unsigned int),
	      "an MR view member without a row");
static_assert(bytes_of(sroce_core_counts_fields) == sizeof(sroce_core_counts), "a count without a row");
static_assert(bytes_of(sroce_core_rx_counts_fields) == sizeof(sroce_core_rx_counts), "an rx count without a row");
static_assert(sizes_ok(sroce_core_qp_view_fields) && sizes_ok(sroce_core_cq_view_fields) &&
		      sizes_ok(sroce_core_mr_view_fields) && sizes_ok(sroce_core_counts_fields) &&
		      sizes_ok(sroce_core_rx_counts_fields) && sizes_ok(sroce_core_wq_view_fields),
	      "the glue prints u32 and u64 only");
#define NFIELDS(t) (sizeof(t) / sizeof(t[0]))
const unsigned int sroce_core_qp_view_nfields = NFIELDS(sroce_core_qp_view_fields);
const unsigned int sroce_core_cq_view_nfields = NFIELDS(sroce_core_cq_view_fields);
const unsigned int sroce_core_wq_view_nfields = NFIELDS(sroce_core_wq_view_fields);
const unsigned int sroce_core_mr_view_nfields = NFIELDS(sroce_core_mr_view_fields);
const unsigned int sroce_core_counts_nfields = NFIELDS(sroce_core_counts_fields);
const unsigned int sroce_core_rx_counts_nfields = NFIELDS(sroce_core_rx_counts_fields);
#undef NFIELDS

const char *sroce_core_counter_name(unsigned int id) { return counter_name(id); }

unsigned int sroce_core_dev_read_counters(sroce_core_dev *dev, unsigned long long *values, unsigned int n) {
	static_assert(sizeof(unsigned long long) == sizeof(u64), "u64 values");
	Device *d = reinterpret_cast<Device *>(dev);
	unsigned int got = d->counters().read(reinterpret_cast<u64 *>(values), n);
	// The poller keeps its own count of the doorbells that woke it.
	if (got > SROCE_CNT_SQ_POLLER_WAKEUPS)
		values[SROCE_CNT_SQ_POLLER_WAKEUPS] = d->sq_poller().stats().wakeups;
	return got;
}

unsigned int sroce_core_qp_read_counters(sroce_core_qp *qp, unsigned long long *values, unsigned int n) {
	return reinterpret_cast<Qp *>(qp)->counters().read(reinterpret_cast<u64 *>(values), n);
}

void sroce_core_qp_snapshot(sroce_core_qp *qp, sroce_core_qp_view *s) { reinterpret_cast<Qp *>(qp)->snapshot(s); }

void sroce_core_cq_snapshot(sroce_core_cq *cq, sroce_core_cq_view *s) {
	reinterpret_cast<CompletionQueue *>(cq)->snapshot(s);
}

void sroce_core_mr_snapshot(sroce_core_mr *mr, sroce_core_mr_view *s) {
	const Mr *m = reinterpret_cast<const Mr *>(mr);
	*s = {};
	s->lkey = m->lkey();
	s->rkey = m->rkey();
	s->access = m->access();
	s->dma = m->is_dma();
	s->fast_reg = m->is_fast_reg();
	s->windows = m->windows();
	if (!s->dma) {
		s->page_shift = m->page_shift();
		s->iova = m->iova();
		s->length = m->length();
		s->npages = m->npages();
	}
}

} // extern "C"

// IndTable and RssContext (ind_table.h): checking an RSS QP's attributes
// and picking a received message's WQ.
#include "ind_table.h"
#include "abi.h"
#include "qp.h"

namespace sroce {

using ktl::Error;
namespace err = ktl::err;

// The provider sends the ABI's values; the glue passes them through.
static_assert(u32(SROCE_RX_HASH_TOEPLITZ) == u32(SROCE_CORE_RSS_TOEPLITZ) &&
	      u32(SROCE_RX_HASH_XOR) == u32(SROCE_CORE_RSS_XOR));
static_assert(sizeof(sroce_create_qp_req::rx_hash_key) == rss::key_len);

ktl::Result<ktl::RefPtr<IndTable>> IndTable::create(Device &dev, u32 log_size, Wq *const *wqs) {
	if (log_size > param::max_ind_table_log || !wqs)
		return Error::from_errno(err::inval);
	for (u32 i = 0; i < (1u << log_size); i++)
		if (!wqs[i] || &wqs[i]->device() != &dev)
			return Error::from_errno(err::inval);
	auto t = TRY(create_counted<IndTable>(dev.counts().ind_tables, param::max_ind_table, err::nomem,
					      ktl::AllocCtx::may_sleep, dev));
	t->log_size_ = log_size;
	for (u32 i = 0; i < (1u << log_size); i++)
		t->wqs_[i] = ktl::RefPtr<Wq>(wqs[i]);
	return t;
}

IndTable::~IndTable() { dev_->counts().ind_tables.put(); }

ktl::Result<void> RssContext::init(Device &dev, u32 pdn, const void *uctx, const sroce_core_rss_init &in) {
	auto *t = reinterpret_cast<IndTable *>(in.table);
	if (!t || &t->device() != &dev)
		return Error::from_errno(err::inval);
	// Another context's WQ, or none by that number, looks the same.
	ktl::RefPtr<Wq> dwq = in.default_wqn ? dev.wqs().lookup(in.default_wqn) : nullptr;
	if (in.default_wqn && (!dwq || dwq->uctx() != uctx || dwq->pdn() != pdn))
		return Error::from_errno(err::inval);
	for (u32 i = 0; i < t->size(); i++)
		if (t->entry(i).pdn() != pdn)
			return Error::from_errno(err::inval);
	if (in.func > SROCE_CORE_RSS_XOR || in.headers > SROCE_CORE_RSS_PAYLOAD)
		return Error::from_errno(err::inval);
	rss::Mode mode = in.headers == SROCE_CORE_RSS_PAYLOAD ? rss::Mode::payload : rss::Mode::outer;
	if (int e = rss::fields_error(in.fields, mode))
		return Error::from_errno(-e);
	bool toeplitz = in.func == SROCE_CORE_RSS_TOEPLITZ;
	if (toeplitz && in.key_len != rss::key_len)
		return Error::from_errno(err::inval);
	config.fields = in.fields;
	config.mode = mode;
	config.algo = toeplitz ? rss::Algo::toeplitz : rss::Algo::xor32;
	if (toeplitz)
		__builtin_memcpy(config.key, in.key, rss::key_len);
	// Last, nothing to undo after it: a WQ being destroyed is as good as gone.
	if (dwq && !dwq->add_default_user())
		return Error::from_errno(err::inval);
	table = ktl::RefPtr<IndTable>(t);
	default_wq = ktl::move(dwq);
	return {};
}

void RssContext::release() {
	if (default_wq)
		default_wq->default_users.fetch_sub(1, ktl::MemoryOrder::acq_rel);
	default_wq = nullptr;
}

Wq &RssContext::pick(const RxPacket &rx, rss::Hash *h) const {
	rss::Tuple t;
	if (config.mode == rss::Mode::outer) {
		t = rss::outer_tuple(rx.ip.addr);
	} else {
		// The encapsulation header, the longest IP header and the ports.
		u8 head[rss::payload_encap_len + 60 + 4]; // IPv4 with options, then ports
		u32 n = ktl::min(u32(sizeof(head)), rx.pi.payload_len);
		if (sroce_env_pkt_read(rx.pkt, rx.payload_off, head, n) == 0)
			t = rss::payload_tuple(head, n);
	}
	*h = rss::compute(config, t);
	if (h->kind == rss::Kind::none && default_wq)
		return *default_wq;
	return table->entry(h->value);
}

void RssContext::forget_qp(void *qp_owner) const {
	if (!table)
		return;
	for (u32 i = 0; i < table->size(); i++)
		table->entry(i).cq().forget_qp(qp_owner);
	if (default_wq)
		default_wq->cq().forget_qp(qp_owner);
}

} // namespace sroce

#include "transport_fixture.h"

#include <catch2/catch.hpp>

#include <cstdio>

#include "device.h"
#include "ib_enums.h"
#include "icrc.h"
#include "packet.h"

namespace tfx {

using namespace sroce;

void *alloc_ring(unsigned int entries, unsigned int max, unsigned int stride, unsigned int *log_size) {
	unsigned long bytes = 0;
	REQUIRE(sroce_core_ring_size(entries, max, stride, log_size, &bytes) == 0);
	void *mem = std::aligned_alloc(4096, bytes);
	std::memset(mem, 0, bytes);
	return mem;
}

void Fixture::trace_from_env() {
	if (!std::getenv("SROCE_PACKET_TRACE"))
		return;
	sim_.set_tap([](const sim::WirePacket &p) {
		auto ip = ib::parse_ip_udp(ktl::Span<const u8>(p.data, p.len));
		if (ip.is_error()) {
			std::printf("%llu %d->%d bad ip\n", (unsigned long long)p.time_ns, p.from, p.to);
			return;
		}
		auto pi = ib::parse_ib(ktl::Span<const u8>(p.data + ip.value().bth_offset, ip.value().ib_len));
		if (pi.is_error()) {
			std::printf("%llu %d->%d bad ib\n", (unsigned long long)p.time_ns, p.from, p.to);
			return;
		}
		const ib::Headers &h = pi.value().hdr;
		std::printf("%llu %d->%d %-32s psn %-8u%s%s len %u%s%s%s%s\n", (unsigned long long)p.time_ns, p.from, p.to,
			    ib::opcode_name(h.bth.opcode), h.bth.psn, h.bth.ack_req ? " A" : "  ",
			    (pi.value().flags & ib::op_aeth) ? ib::aeth_kind_name(h.aeth) : "", pi.value().payload_len,
			    p.dropped ? " DROPPED" : "", p.duplicated ? " DUP" : "", p.reordered ? " REORD" : "",
			    p.corrupted ? " CORRUPT" : "");
	});
}

Buffer::~Buffer() {
	if (mr)
		sroce_core_mr_destroy(mr);
	std::free(base);
}

bool Buffer::guards_intact() const {
	for (size_t i = 0; i < guard; i++)
		if (base[i] != 0xee || data[len + i] != 0xee)
			return false;
	return true;
}

Fixture::Fixture(uint64_t seed, unsigned int mtu, unsigned int zero_copy_min) : sim_(seed) {
	add_node(mtu, zero_copy_min);
	add_node(mtu, zero_copy_min);
}

Fixture::~Fixture() {
	for (auto &q : qps_)
		if (q->qp)
			sroce_core_qp_destroy(q->qp);
	for (auto *a : ahs_)
		sroce_core_ah_destroy(a);
	for (auto &n : nodes_) {
		n->bufs.clear();
		sroce_core_cq_destroy(n->cq);
		sroce_core_pd_destroy(n->pd);
	}
	// Let timers and work that still hold references run out.
	sim_.run_for(1000000);
	for (auto &n : nodes_)
		sim_.remove_node(n->id);
}

Node &Fixture::add_node(unsigned int netdev_mtu, unsigned int zero_copy_min) {
	auto n = std::make_unique<Node>();
	sim::NodeConfig cfg;
	cfg.netdev_mtu = netdev_mtu;
	cfg.zero_copy_min = zero_copy_min;
	n->id = sim_.add_node(cfg);
	REQUIRE(n->id >= 0);
	n->dev = sim_.dev(n->id);
	REQUIRE(sroce_core_pd_create(n->dev, &n->pd) == 0);
	n->cq_ring.mem = alloc_ring(4096, 65536, sizeof(sroce_cqe), &n->cq_ring.log_size);
	sroce_core_cq_init ci{};
	ci.owner = &n->cq_owner;
	ci.ring = n->cq_ring.mem;
	ci.log_size = n->cq_ring.log_size;
	REQUIRE(sroce_core_cq_create(n->dev, &ci, &n->cq) == 0);
	REQUIRE(sroce_core_cq_req_notify(n->cq, ib::cq_next_comp) == 0);
	nodes_.push_back(std::move(n));
	return *nodes_.back();
}

void Fixture::timestamp_cq(Node &n) {
	sroce_core_cq_destroy(n.cq);
	std::memset(n.cq_ring.mem, 0, 4096);
	sroce_core_cq_init ci{};
	ci.owner = &n.cq_owner;
	ci.ring = n.cq_ring.mem;
	ci.log_size = n.cq_ring.log_size;
	ci.timestamp = 1;
	REQUIRE(sroce_core_cq_create(n.dev, &ci, &n.cq) == 0);
	REQUIRE(sroce_core_cq_req_notify(n.cq, ib::cq_next_comp) == 0);
}

Buffer &Fixture::buffer(Node &n, size_t len, unsigned int access, bool zero_copy) {
	auto b = std::make_unique<Buffer>();
	b->len = len;
	size_t pages = (len + 4095) / 4096;
	b->base = static_cast<unsigned char *>(std::aligned_alloc(4096, (pages + 2) * 4096));
	std::memset(b->base, 0xee, (pages + 2) * 4096);
	b->data = b->base + b->guard;
	for (size_t i = 0; i < len; i++)
		b->data[i] = (unsigned char)(i * 7 + 3);
	sroce_core_mr_init mi{};
	mi.pd = n.pd;
	mi.iova = 0x10000000ull + 0x100000ull * n.bufs.size();
	mi.length = len;
	mi.access = access;
	mi.page_shift = 12;
	mi.npages = pages ? pages : 1;
	mi.zero_copy = zero_copy;
	REQUIRE(sroce_core_mr_create(n.dev, &mi, &b->mr) == 0);
	for (size_t i = 0; i < mi.npages; i++)
		sroce_core_mr_set_page(b->mr, i, b->data + i * 4096);
	REQUIRE(sroce_core_mr_enable(b->mr) == 0);
	n.bufs.push_back(std::move(b));
	return *n.bufs.back();
}

void Fixture::dereg(Buffer &b) {
	sroce_core_mr_destroy(b.mr);
	b.mr = nullptr;
}

Qp &Fixture::qp(Node &n, unsigned int type, unsigned int depth) { return qp_mp(n, type, 0, 0, depth); }

Qp &Fixture::qp_mp(Node &n, unsigned int type, unsigned int mp_buf, unsigned int mp_align, unsigned int depth,
		   sroce_core_srq *srq) {
	auto q = std::make_unique<Qp>();
	q->node = &n;
	q->type = type;
	q->sq_stride = sroce_core_wqe_stride(4, 64);
	q->rq_stride = sroce_core_wqe_stride(4, 0);
	q->sq.mem = alloc_ring(depth, 16384, q->sq_stride, &q->sq.log_size);
	q->rq.mem = alloc_ring(depth, 16384, q->rq_stride, &q->rq.log_size);
	sroce_core_qp_init qi{};
	qi.owner = &q->owner;
	qi.qp_type = type;
	qi.port = 1;
	qi.pd = n.pd;
	qi.send_cq = n.cq;
	qi.recv_cq = n.cq;
	qi.max_send_sge = 4;
	qi.max_recv_sge = 4;
	qi.max_inline_data = 64;
	qi.sq_ring = q->sq.mem;
	qi.sq_log_size = q->sq.log_size;
	qi.sq_stride = q->sq_stride;
	qi.rq_ring = srq ? nullptr : q->rq.mem;
	qi.rq_log_size = q->rq.log_size;
	qi.rq_stride = q->rq_stride;
	qi.srq = srq;
	qi.mp_wr_buffer_sz = mp_buf;
	qi.mp_packet_align_sz = mp_align;
	REQUIRE(sroce_core_qp_create(n.dev, &qi, &q->qp) == 0);
	q->qpn = sroce_core_qp_number(q->qp);
	qps_.push_back(std::move(q));
	return *qps_.back();
}

sroce_core_qp_attr Fixture::query(Qp &q) {
	sroce_core_qp_attr a{};
	sroce_core_qp_query(q.qp, &a);
	return a;
}

int Fixture::modify_state(Qp &q, unsigned int state) {
	sroce_core_qp_attr a{};
	a.qp_state = state;
	int rc = 0;
	sim_.call([&](sroce_env_batch *b) { rc = sroce_core_qp_modify(q.qp, &a, ib::attr_state, b); });
	return rc;
}

int Fixture::modify_access(Qp &q, unsigned int access) {
	sroce_core_qp_attr a{};
	a.qp_state = ib::qps_rts;
	a.qp_access_flags = access;
	int rc = 0;
	sim_.call([&](sroce_env_batch *b) {
		rc = sroce_core_qp_modify(q.qp, &a, ib::attr_state | ib::attr_access_flags, b);
	});
	return rc;
}

void Fixture::connect(Qp &a, Qp &b, unsigned int path_mtu, unsigned int psn_a, unsigned int psn_b,
		      unsigned int timeout, unsigned int retry, unsigned int rnr_retry, unsigned int rd_atomic) {
	for (int side = 0; side < 2; side++) {
		Qp &me = side ? b : a;
		Qp &peer = side ? a : b;
		sroce_core_qp_attr at{};
		at.qp_state = ib::qps_init;
		at.port_num = 1;
		at.qp_access_flags = ib::access::remote_write | ib::access::remote_read | ib::access::remote_atomic;
		int rc = -1;
		sim_.call([&](sroce_env_batch *bt) {
			rc = sroce_core_qp_modify(me.qp, &at, ib::attr_state | ib::attr_pkey_index | ib::attr_port |
								     ib::attr_access_flags, bt);
		});
		REQUIRE(rc == 0);
		at = {};
		at.qp_state = ib::qps_rtr;
		at.path_mtu = path_mtu;
		at.dest_qp_num = peer.qpn;
		at.rq_psn = side ? psn_a : psn_b;
		at.max_dest_rd_atomic = rd_atomic;
		at.min_rnr_timer = 1;
		sim::Path p = sim_.path(me.node->id, peer.node->id);
		at.path = p.path;
		at.path_info = p.info;
		u32 mask = ib::attr_state | ib::attr_av | ib::attr_path_mtu | ib::attr_dest_qpn | ib::attr_rq_psn;
		if (me.type == ib::qpt_rc)
			mask |= ib::attr_max_dest_rd_atomic | ib::attr_min_rnr_timer;
		sim_.call([&](sroce_env_batch *bt) { rc = sroce_core_qp_modify(me.qp, &at, mask, bt); });
		REQUIRE(rc == 0);
		at = {};
		at.qp_state = ib::qps_rts;
		at.sq_psn = side ? psn_b : psn_a;
		at.timeout = timeout;
		at.retry_cnt = retry;
		at.rnr_retry = rnr_retry;
		at.max_rd_atomic = rd_atomic;
		mask = ib::attr_state | ib::attr_sq_psn;
		if (me.type == ib::qpt_rc)
			mask |= ib::attr_timeout | ib::attr_retry_cnt | ib::attr_rnr_retry | ib::attr_max_qp_rd_atomic;
		sim_.call([&](sroce_env_batch *bt) { rc = sroce_core_qp_modify(me.qp, &at, mask, bt); });
		REQUIRE(rc == 0);
	}
}

void Fixture::to_ud_rts(Qp &q, unsigned int qkey) {
	sroce_core_qp_attr at{};
	at.qp_state = ib::qps_init;
	at.port_num = 1;
	at.qkey = qkey;
	int rc = -1;
	sim_.call([&](sroce_env_batch *b) {
		rc = sroce_core_qp_modify(q.qp, &at, ib::attr_state | ib::attr_pkey_index | ib::attr_port | ib::attr_qkey, b);
	});
	REQUIRE(rc == 0);
	REQUIRE(modify_state(q, ib::qps_rtr) == 0);
	at = {};
	at.qp_state = ib::qps_rts;
	sim_.call([&](sroce_env_batch *b) { rc = sroce_core_qp_modify(q.qp, &at, ib::attr_state | ib::attr_sq_psn, b); });
	REQUIRE(rc == 0);
}

sroce_core_ah *Fixture::join(Qp &a, Qp &b) {
	REQUIRE(a.type == b.type);
	if (a.type != ib::qpt_ud) {
		connect(a, b, ib::mtu_1024);
		return nullptr;
	}
	to_ud_rts(a, ud_qkey);
	to_ud_rts(b, ud_qkey);
	return ah(*a.node, *b.node);
}

sroce_core_ah *Fixture::ah(Node &from, Node &to) {
	sim::Path p = sim_.path(from.id, to.id);
	sroce_core_ah *a = nullptr;
	REQUIRE(sroce_core_ah_create(from.pd, p.path, &p.info, &a) == 0);
	ahs_.push_back(a);
	return a;
}

void Fixture::destroy_qp(Qp &q) {
	sroce_core_qp_destroy(q.qp);
	q.qp = nullptr;
}

int Fixture::post_send(Qp &q, const sroce_wqe &w, const std::vector<sroce_sge> &sges) {
	int rc = 0;
	sim_.call([&](sroce_env_batch *) { rc = sroce_core_qp_post_send(q.qp, &w, sges.data(), nullptr, 0); });
	return rc;
}

int Fixture::post_recv(Qp &q, uint64_t wr_id, const std::vector<sroce_sge> &sges) {
	sroce_wqe w = wqe(wr_id, SROCE_WQE_RECV, (unsigned)sges.size(), 0);
	return sroce_core_qp_post_recv(q.qp, &w, sges.data());
}

std::vector<sroce_cqe> Fixture::poll(Node &n) {
	std::vector<sroce_cqe> out;
	sroce_cqe c[16];
	void *owners[16];
	int got;
	while ((got = sroce_core_cq_poll(n.cq, c, owners, 16)) > 0)
		out.insert(out.end(), c, c + got);
	return out;
}

bool Fixture::wait_cqes(Node &n, size_t count, std::vector<sroce_cqe> &out, uint64_t timeout_ns) {
	return sim_.run_until(
		[&] {
			auto more = poll(n);
			out.insert(out.end(), more.begin(), more.end());
			return out.size() >= count;
		},
		timeout_ns);
}

sroce_wqe wqe(uint64_t wr_id, unsigned char opcode, unsigned int num_sge, unsigned short flags) {
	sroce_wqe w{};
	w.wr_id = wr_id;
	w.opcode = opcode;
	w.num_sge = (unsigned char)num_sge;
	w.flags = flags;
	return w;
}

void address_ud(sroce_wqe &w, sroce_core_ah *ah, unsigned int qpn, unsigned int qkey) {
	w.ud.ah_handle = sroce_core_ah_handle(ah);
	w.ud.remote_qpn = qpn;
	w.ud.remote_qkey = qkey;
}

unsigned int Fixture::lkey(const Buffer &b) const { return sroce_core_mr_lkey(b.mr); }

uint64_t iova_of(const Node &n, const Buffer &b) {
	for (size_t i = 0; i < n.bufs.size(); i++)
		if (n.bufs[i].get() == &b)
			return 0x10000000ull + 0x100000ull * i;
	return 0;
}

unsigned long long device_counter(const Node &n, sroce_core_counter id) {
	return reinterpret_cast<sroce::Device *>(n.dev)->counters().get(id);
}

sroce_sge sge_of(Fixture &f, const Node &n, const Buffer &b, size_t off, unsigned int len) {
	return sroce_sge{iova_of(n, b) + off, len, f.lkey(b)};
}

std::vector<unsigned char> make_packet(Fixture &f, unsigned int qpn, const ib::Headers &h0, unsigned int payload,
				       bool fix_icrc, const ib::IpUdp *addr) {
	ib::IpUdp ip;
	if (addr) {
		ip = *addr;
	} else {
		sim::Path p = f.sim().path(f.node(0).id, f.node(1).id);
		ip.ip_version = 4;
		std::memcpy(ip.src, p.info.src, 16);
		std::memcpy(ip.dst, p.info.dst, 16);
		ip.sport = 0xc123;
		sroce_env_path_put(p.path);
	}
	ib::Headers h = h0;
	h.bth.dest_qpn = qpn;
	h.bth.pad = ib::pad_for(payload);
	unsigned int ib_len = ib::ib_length(h.bth.opcode, payload);
	unsigned int hl = ib::ip_udp_len(ip.ip_version);
	std::vector<unsigned char> pkt(hl + ib_len, 0x5a);
	REQUIRE(!ib::write_ip_udp(ip, ib_len, ktl::Span<u8>(pkt.data(), pkt.size())).is_error());
	REQUIRE(!ib::write_ib_headers(h, ktl::Span<u8>(pkt.data() + hl, ib_len)).is_error());
	if (fix_icrc)
		REQUIRE(!ib::icrc_fill(ktl::Span<u8>(pkt.data(), pkt.size())).is_error());
	return pkt;
}

std::vector<std::string> answers_to(Fixture &f, const Qp &to, const ib::Headers &h, unsigned int payload) {
	std::vector<std::string> seen;
	tap_names(f, 1, seen);
	auto p = make_packet(f, to.qpn, h, payload);
	f.sim().inject(0, 1, p.data(), (unsigned)p.size());
	f.sim().run_for(1000000);
	f.sim().set_tap(nullptr);
	return seen;
}

void tap_names(Fixture &f, int from, std::vector<std::string> &seen) {
	f.sim().set_tap([&seen, from](const sim::WirePacket &p) {
		if ((from >= 0 && p.from != from) || p.dropped)
			return;
		auto ip = ib::parse_ip_udp(ktl::Span<const u8>(p.data, p.len));
		auto pi = ib::parse_ib(ktl::Span<const u8>(p.data + ip.value().bth_offset, ip.value().ib_len));
		std::string s = ib::opcode_name(pi.value().hdr.bth.opcode);
		if (pi.value().flags & ib::op_aeth)
			s += std::string(" ") + ib::aeth_kind_name(pi.value().hdr.aeth);
		seen.push_back(s);
	});
}



sroce_wqe rdma_wqe(uint64_t wr_id, unsigned char opcode, uint64_t va, unsigned int rkey) {
	sroce_wqe w = wqe(wr_id, opcode, 1);
	w.rdma.remote_addr = va;
	w.rdma.rkey = rkey;
	return w;
}

sroce_cqe complete_one(Fixture &f, Qp &q, const sroce_wqe &w, const std::vector<sroce_sge> &sges) {
	REQUIRE(f.post_send(q, w, sges) == 0);
	std::vector<sroce_cqe> c;
	REQUIRE(f.wait_cqes(*q.node, 1, c, 20000000000ull));
	REQUIRE(c.size() == 1);
	return c[0];
}

void send_one_and_run(Fixture &f, Qp &q, sroce_core_ah *ah, unsigned int to_qpn, const sroce_sge &sg) {
	f.sim().clear_events();
	auto w = wqe(1, ib::wr_send, 1);
	if (ah)
		address_ud(w, ah, to_qpn, Fixture::ud_qkey);
	REQUIRE(f.post_send(q, w, {sg}) == 0);
	f.sim().run_for(50000000);
}

} // namespace tfx

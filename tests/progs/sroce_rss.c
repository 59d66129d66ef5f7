// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_rss - RSS over work queues (issue 18; Documentation/rss.md):
 *
 *   sroce_rss DEV [SENDER_DEV]
 *
 * One RSS UD QP on DEV over 8 WQs, each with its own CQ on vector w modulo
 * the device's vectors (so the receives run on every CPU). 64 UD QPs on
 * SENDER_DEV (default DEV), 64 flows, send 2 datagrams each; every completion's hash
 * (srocedv_wc_read_rss_hash) is checked against the Toeplitz hash this
 * program computes from the GRH area's addresses and the sender's UDP
 * source port, and its WQ against the hash's low bits, and each WQ's
 * received count in debugfs against its completions; the WQ receive family
 * (srocedv_wq_ops) reposts each WQ's taken buffers. Then payload mode
 * with the XOR hash over IPoIB-style IP/TCP headers, a datagram that
 * matches no field (into the default WQ: srocedv's RSS_DEFAULT_WQ, which
 * cannot be destroyed meanwhile; without one, slot 0 with hash 0), the WQ states (RESET and ERR refuse
 * posts, ERR flushes), EBUSY for a WQ in a table and a table in use, the
 * caps, and the bad creations.
 */
#include <stdbool.h>
#include <unistd.h>

#include <infiniband/srocedv.h>

#include "progs_common.h"

enum { NWQ = 8, SENDERS = 64, PER_SENDER = 2, SLOT = 512, PER_WQ = 64, QKEY = 0x2468ace0 };

static const uint8_t ms_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/* Toeplitz, bit by bit, as the RSS specification states it. */
static uint32_t toeplitz(const uint8_t *in, unsigned int len)
{
	uint32_t h = 0;

	for (unsigned int bit = 0; bit < len * 8; bit++) {
		if (!(in[bit / 8] & (0x80 >> (bit % 8))))
			continue;
		uint32_t w = 0;

		for (unsigned int k = 0; k < 32; k++)
			w = w << 1 | ((ms_key[(bit + k) / 8] >> (7 - (bit + k) % 8)) & 1);
		h ^= w;
	}
	return h;
}

/* The UDP source port sroce gives a QP's packets (kmod/core/qp.cpp). */
static uint16_t sport_of(uint32_t qpn)
{
	return (uint16_t)(0xc000 | (((qpn * 0x9e3779b1u) >> 16) & 0x3fff));
}

struct rx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_cq_ex *cq[NWQ + 1]; /* [NWQ]: the default WQ's */
	struct ibv_wq *wq[NWQ + 1];
	struct ibv_rwq_ind_table *table;
	struct ibv_qp *qp;
};

static int post_wq(struct rx *r, unsigned int w, unsigned int k)
{
	struct ibv_sge s = { .addr = (uintptr_t)(r->buf + ((size_t)w * PER_WQ + k) * SLOT), .length = SLOT,
			     .lkey = r->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)w << 16 | k, .sg_list = &s, .num_sge = 1 }, *bad;

	return ibv_post_wq_recv(r->wq[w], &wr, &bad);
}

static struct ibv_wq *make_wq(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq, uint32_t max_wr)
{
	struct ibv_wq_init_attr a = { .wq_type = IBV_WQT_RQ, .max_wr = max_wr, .max_sge = 1, .pd = pd, .cq = cq };

	return ibv_create_wq(ctx, &a);
}

static int wq_state(struct ibv_wq *wq, enum ibv_wq_state s)
{
	struct ibv_wq_attr a = { .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = s };

	return ibv_modify_wq(wq, &a);
}

static struct ibv_qp *make_rss_qp(struct rx *r, enum ibv_qp_type t, uint64_t fields, uint8_t func,
				  const uint8_t *key, uint8_t key_len, uint64_t sroce_flags, struct ibv_wq *dflt)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = t,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH,
		.pd = r->pd,
		.rwq_ind_tbl = r->table,
		.rx_hash_conf = { .rx_hash_function = func, .rx_hash_key_len = key_len, .rx_hash_key = (uint8_t *)key,
				  .rx_hash_fields_mask = fields },
	};
	struct srocedv_qp_init_attr sa = { .comp_mask = sroce_flags | (dflt ? SROCEDV_QP_INIT_ATTR_RSS_DEFAULT_WQ : 0),
					   .rss_default_wq = dflt };

	return srocedv_create_qp(r->ctx, &a, &sa);
}

/* Polls every WQ's CQ until n completions arrived or 5 s passed; each goes
 * to fn(w, wr_id, status, byte_len, src_qp, hash, type). */
typedef void (*seen_fn)(struct rx *r, unsigned int w, const struct ibv_cq_ex *c, uint32_t hash,
			enum srocedv_rss_hash_type type);

static unsigned int drain(struct rx *r, unsigned int n, seen_fn fn)
{
	unsigned int got = 0;

	for (int spins = 0; got < n && spins < 5000; spins++) {
		for (unsigned int w = 0; w <= NWQ; w++) {
			struct ibv_poll_cq_attr pa = {};

			if (ibv_start_poll(r->cq[w], &pa))
				continue;
			do {
				enum srocedv_rss_hash_type type;
				uint32_t h = srocedv_wc_read_rss_hash(r->cq[w], &type);

				fn(r, w, r->cq[w], h, type);
				got++;
			} while (!ibv_next_poll(r->cq[w]));
			ibv_end_poll(r->cq[w]);
		}
		usleep(1000);
	}
	return got;
}

static unsigned int used_mask, per_wq[NWQ + 1];

/* The kernel's count of what WQ wqn received (<debugfs>/sroce/DEV/wqs), or
 * -1 without a line for it. */
static long long debugfs_received(const char *dev, uint32_t wqn)
{
	char path[128], line[256];
	long long got = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/sroce/%s/wqs", dev);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned int n;
		const char *rcv = strstr(line, " received ");

		if (sscanf(line, "wqn %x", &n) == 1 && n == wqn && rcv)
			got = atoll(rcv + strlen(" received "));
	}
	fclose(f);
	return got;
}

static void seen_outer(struct rx *r, unsigned int w, const struct ibv_cq_ex *c, uint32_t hash,
		       enum srocedv_rss_hash_type type)
{
	struct ibv_cq_ex *cq = (struct ibv_cq_ex *)c;
	const uint8_t *m = r->buf + ((size_t)(c->wr_id >> 16) * PER_WQ + (c->wr_id & 0xffff)) * SLOT;
	uint8_t in[12];
	uint16_t sp = sport_of(ibv_wc_read_src_qp(cq));

	CHECK(c->status == IBV_WC_SUCCESS, "outer: completion status %d", c->status);
	CHECK(type == SROCEDV_RSS_HASH_UDP_IPV4, "outer: hash type %d", type);
	/* The GRH area's IPv4 header (at 20): source and destination. */
	memcpy(in, m + 20 + 12, 8);
	in[8] = (uint8_t)(sp >> 8), in[9] = (uint8_t)sp, in[10] = 4791 >> 8, in[11] = 4791 & 0xff;
	uint32_t want = toeplitz(in, 12);

	CHECK(hash == want, "outer: hash %#x, computed %#x (sender QP %u)", hash, want, ibv_wc_read_src_qp(cq));
	CHECK((hash & (NWQ - 1)) == w, "outer: hash %#x in WQ %u", hash, w);
	CHECK(ibv_wc_read_byte_len(cq) == 40u + 100 + m[40] % 100, "outer: byte_len %u", ibv_wc_read_byte_len(cq));
	used_mask |= 1u << w;
	per_wq[w]++;
}

static uint32_t xor_want[256];

static void seen_payload(struct rx *r, unsigned int w, const struct ibv_cq_ex *c, uint32_t hash,
			 enum srocedv_rss_hash_type type)
{
	const uint8_t *m = r->buf + ((size_t)(c->wr_id >> 16) * PER_WQ + (c->wr_id & 0xffff)) * SLOT;
	unsigned int tag = m[40 + 100];

	CHECK(c->status == IBV_WC_SUCCESS, "payload: completion status %d", c->status);
	if (tag == 0xff) { /* the one that matches nothing: the default WQ */
		CHECK(type == SROCEDV_RSS_HASH_NONE && hash == 0 && w == NWQ,
		      "payload: no match went to WQ %u with hash %#x type %d", w, hash, type);
		return;
	}
	CHECK(type == SROCEDV_RSS_HASH_TCP_IPV4, "payload: hash type %d", type);
	CHECK(hash == xor_want[tag], "payload: tag %u hash %#x, computed %#x", tag, hash, xor_want[tag]);
	CHECK((hash & (NWQ - 1)) == w, "payload: hash %#x in WQ %u", hash, w);
}

int main(int argc, char **argv)
{
	struct rx r = { 0 };
	struct ibv_context *sctx;
	struct ibv_pd *spd;
	union ibv_gid gid, sgid;
	int gid_idx, sgid_idx;

	if (argc < 2) {
		fprintf(stderr, "usage: %s DEV [SENDER_DEV]\n", argv[0]);
		return 2;
	}
	if (open_with_gid(argv[1], &r.ctx, &r.pd, &gid, &gid_idx) ||
	    open_with_gid(argc > 2 ? argv[2] : argv[1], &sctx, &spd, &sgid, &sgid_idx))
		return 1;

	/* Caps. */
	struct ibv_device_attr_ex dx = {};

	CHECK(!ibv_query_device_ex(r.ctx, NULL, &dx), "ibv_query_device_ex: %s", strerror(errno));
	CHECK(dx.rss_caps.supported_qpts & (1u << IBV_QPT_UD), "rss_caps: UD (supported_qpts %#x)",
	      dx.rss_caps.supported_qpts);
	CHECK(dx.rss_caps.max_rwq_indirection_table_size == 256 && dx.rss_caps.max_rwq_indirection_tables > 0 &&
		      dx.max_wq_type_rq > 0,
	      "rss_caps: table size %u, tables %u, max_wq_type_rq %u", dx.rss_caps.max_rwq_indirection_table_size,
	      dx.rss_caps.max_rwq_indirection_tables, dx.max_wq_type_rq);

	size_t bytes = (size_t)(NWQ + 1) * PER_WQ * SLOT;

	r.buf = calloc(1, bytes);
	r.mr = ibv_reg_mr(r.pd, r.buf, bytes, IBV_ACCESS_LOCAL_WRITE);
	CHECK(r.buf && r.mr, "receive buffer: %s", strerror(errno));
	for (unsigned int w = 0; w <= NWQ; w++) {
		struct ibv_cq_init_attr_ex ca = { .cqe = 256,
						  .comp_vector = w % (unsigned int)r.ctx->num_comp_vectors,
						  .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_SRC_QP };

		r.cq[w] = ibv_create_cq_ex(r.ctx, &ca);
		r.wq[w] = r.cq[w] ? make_wq(r.ctx, r.pd, ibv_cq_ex_to_cq(r.cq[w]), PER_WQ) : NULL;
		CHECK(r.wq[w], "WQ %u: %s", w, strerror(errno));
		if (!r.wq[w])
			return 1;
		/* RESET takes no receives. */
		CHECK_ERR(post_wq(&r, w, 0), EINVAL, "a post to a WQ in RESET");
		CHECK(!wq_state(r.wq[w], IBV_WQS_RDY), "WQ %u to RDY: %s", w, strerror(errno));
		unsigned int posted = 0;

		for (unsigned int k = 0; k < PER_WQ; k++)
			posted += !post_wq(&r, w, k);
		CHECK(posted == PER_WQ, "%u receives posted to WQ %u", posted, w);
	}
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = 3, .ind_tbl = r.wq };

	r.table = ibv_create_rwq_ind_table(r.ctx, &ta);
	CHECK(r.table, "ibv_create_rwq_ind_table: %s", strerror(errno));

	/* Bad creations, each refused with nothing made. */
	struct ibv_wq *big[512];

	for (unsigned int i = 0; i < 512; i++)
		big[i] = r.wq[0];
	struct ibv_rwq_ind_table_init_attr bad_ta = { .log_ind_tbl_size = 9, .ind_tbl = big };

	CHECK(!ibv_create_rwq_ind_table(r.ctx, &bad_ta) && errno == EINVAL, "a table of 2^9: %s", strerror(errno));
	CHECK(!make_wq(r.ctx, r.pd, ibv_cq_ex_to_cq(r.cq[0]), 1u << 20) && errno == EINVAL, "a WQ of 2^20: %s",
	      strerror(errno));
	CHECK(!make_rss_qp(&r, IBV_QPT_RC, IBV_RX_HASH_SRC_IPV4, IBV_RX_HASH_FUNC_TOEPLITZ, ms_key, 40, 0, NULL),
	      "an RC RSS QP");
	CHECK(!make_rss_qp(&r, IBV_QPT_UD, IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV6, IBV_RX_HASH_FUNC_TOEPLITZ,
			   ms_key, 40, 0, NULL) && errno == EINVAL,
	      "IPv4 with IPv6 fields: %s", strerror(errno));
	CHECK(!make_rss_qp(&r, IBV_QPT_UD, IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_UDP,
			   IBV_RX_HASH_FUNC_TOEPLITZ, ms_key, 40, SROCEDV_QP_INIT_ATTR_RSS_PAYLOAD, NULL) && errno == EINVAL,
	      "TCP with UDP ports: %s", strerror(errno));
	CHECK(!make_rss_qp(&r, IBV_QPT_UD, IBV_RX_HASH_SRC_IPV4, IBV_RX_HASH_FUNC_TOEPLITZ, ms_key, 39, 0, NULL) &&
		      errno == EINVAL,
	      "a 39-byte key: %s", strerror(errno));

	/* Another context's WQ as the default: the provider refuses its
	 * handle; the kernel refuses its number (a forged copy that claims
	 * this context), as it refuses one of another PD. */
	struct ibv_context *ctx2 = open_by_name(argv[1]);
	struct ibv_pd *pd2 = ctx2 ? ibv_alloc_pd(ctx2) : NULL, *pd3 = ibv_alloc_pd(r.ctx);
	struct ibv_cq *cq2 = ctx2 ? ibv_create_cq(ctx2, 16, NULL, NULL, 0) : NULL;
	struct ibv_wq *wq2 = cq2 ? make_wq(ctx2, pd2, cq2, 16) : NULL;
	struct ibv_wq *wq3 = pd3 ? make_wq(r.ctx, pd3, ibv_cq_ex_to_cq(r.cq[0]), 16) : NULL;

	CHECK(wq2 && wq3, "WQs of another context and PD: %s", strerror(errno));
	if (wq2 && wq3) {
		struct ibv_wq forged = *wq2;

		forged.context = r.ctx;
		CHECK(!make_rss_qp(&r, IBV_QPT_UD, IBV_RX_HASH_SRC_IPV4, IBV_RX_HASH_FUNC_TOEPLITZ, ms_key, 40, 0, wq2) &&
			      errno == EINVAL,
		      "another context's WQ as the default: %s", strerror(errno));
		CHECK(!make_rss_qp(&r, IBV_QPT_UD, IBV_RX_HASH_SRC_IPV4, IBV_RX_HASH_FUNC_TOEPLITZ, ms_key, 40, 0,
				   &forged) && errno == EINVAL,
		      "another context's WQ number as the default: %s", strerror(errno));
		CHECK(!make_rss_qp(&r, IBV_QPT_UD, IBV_RX_HASH_SRC_IPV4, IBV_RX_HASH_FUNC_TOEPLITZ, ms_key, 40, 0, wq3) &&
			      errno == EINVAL,
		      "another PD's WQ as the default: %s", strerror(errno));
		CHECK(!ibv_destroy_wq(wq2) && !ibv_destroy_wq(wq3), "the other WQs go (not busy)");
	}
	if (cq2)
		ibv_destroy_cq(cq2);
	if (pd2)
		ibv_dealloc_pd(pd2);
	if (pd3)
		ibv_dealloc_pd(pd3);
	if (ctx2)
		ibv_close_device(ctx2);

	/* Outer mode, Toeplitz over the IPv4 addresses and UDP ports. */
	r.qp = make_rss_qp(&r, IBV_QPT_UD,
			   IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_PORT_UDP |
				   IBV_RX_HASH_DST_PORT_UDP,
			   IBV_RX_HASH_FUNC_TOEPLITZ, ms_key, 40, 0, NULL);
	CHECK(r.qp && !ud_qp_rts(r.qp, QKEY), "the RSS QP: %s", strerror(errno));
	if (!r.qp)
		return 1;
	CHECK_ERR(ibv_destroy_wq(r.wq[0]), EBUSY, "destroying a WQ in a table");
	CHECK_ERR(ibv_destroy_rwq_ind_table(r.table), EBUSY, "destroying a table in use");

	struct ud_senders snd;

	CHECK(!ud_senders_make(&snd, sctx, spd, &gid, sgid_idx, SENDERS, 64, QKEY), "senders: %s", strerror(errno));
	uint8_t *sbuf = snd.buf;

	for (unsigned int m = 0; m < SENDERS * PER_SENDER; m++) {
		uint8_t *p = sbuf + m * 256;

		p[0] = (uint8_t)m;
		CHECK(!ud_senders_send(&snd, m % SENDERS, r.qp->qp_num, p, 100 + p[0] % 100), "send %u", m);
		if (m % 32 == 31)
			usleep(2000); /* each WQ holds 64: let the consumers keep up */
	}
	unsigned int got = drain(&r, SENDERS * PER_SENDER, seen_outer);

	CHECK(got == SENDERS * PER_SENDER, "outer: %u of %u datagrams", got, SENDERS * PER_SENDER);
	CHECK(__builtin_popcount(used_mask) > 1, "outer: WQs used %#x", used_mask);
	printf("outer: %u datagrams over WQs %#x, every hash as computed\n", got, used_mask);
	for (unsigned int w = 0; w < NWQ; w++) {
		long long k = debugfs_received(argv[1], r.wq[w]->wq_num);

		CHECK(k == per_wq[w], "outer: WQ %u (0x%x): debugfs counts %lld received, %u completed", w,
		      r.wq[w]->wq_num, k, per_wq[w]);
	}
	CHECK(!ibv_destroy_qp(r.qp), "destroy the outer RSS QP");

	/* Payload mode, XOR, over IPoIB-style IPv4/TCP headers; one datagram
	 * matches nothing and goes to slot 0 with hash 0. */
	/* The refill through the WQ receive family (srocedv_wq_ops): the
	 * buffers each WQ took in the outer phase, reposted as they were. */
	for (unsigned int w = 0; w < NWQ; w++) {
		struct srocedv_query_intf_params ip = { .intf = SROCEDV_INTF_WQ_RECV,
							.intf_version = SROCEDV_INTF_VERSION, .obj = r.wq[w] };
		const struct srocedv_wq_ops *ops = srocedv_query_intf(r.ctx, &ip);
		int err = ops ? ops->recv_repost(r.wq[w], (int)per_wq[w]) : errno;

		CHECK(!err, "WQ %u: its %u taken buffers reposted through srocedv_wq_ops: %s", w, per_wq[w],
		      strerror(err));
		if (ops)
			CHECK(ops->recv_repost(r.wq[w], 1) == EINVAL && !srocedv_release_intf(r.ctx, (void *)ops),
			      "WQ %u: recv_repost of one more than taken refused; table released", w);
	}
	r.qp = make_rss_qp(&r, IBV_QPT_UD, IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_PORT_TCP |
					   IBV_RX_HASH_DST_PORT_TCP,
			   SROCEDV_RX_HASH_FUNC_XOR, NULL, 0, SROCEDV_QP_INIT_ATTR_RSS_PAYLOAD, r.wq[NWQ]);
	CHECK(r.qp && !ud_qp_rts(r.qp, QKEY), "the payload RSS QP: %s", strerror(errno));
	if (!r.qp)
		return 1;
	for (unsigned int m = 0; m <= 32; m++) {
		uint8_t *p = sbuf + 32768 + m * 256;
		uint16_t sport = (uint16_t)(1024 + 97 * m), dport = 443;

		memset(p, 0, 256);
		if (m < 32) {
			p[0] = 0x08, p[1] = 0x00, p[4] = 0x45, p[4 + 9] = 6;
			p[16] = 192, p[17] = 168, p[18] = 7, p[19] = (uint8_t)m;
			p[20] = 10, p[21] = 0, p[22] = 0, p[23] = 1;
			p[24] = (uint8_t)(sport >> 8), p[25] = (uint8_t)sport, p[26] = dport >> 8, p[27] = dport & 0xff;
			xor_want[m] = (0xc0a80700u | m) ^ 0x0a000001u ^ ((uint32_t)sport << 16 | dport);
		} else {
			p[0] = 0x08, p[1] = 0x06; /* ARP: not IP */
		}
		p[100] = m < 32 ? (uint8_t)m : 0xff;
		CHECK(!ud_senders_send(&snd, m % SENDERS, r.qp->qp_num, p, 200), "payload send %u", m);
	}
	got = drain(&r, 33, seen_payload);
	CHECK(got == 33, "payload: %u of 33 datagrams", got);
	printf("payload: %u datagrams, every XOR hash as computed, the unmatched one in the default WQ\n", got);
	CHECK_ERR(ibv_destroy_wq(r.wq[NWQ]), EBUSY, "destroying the default WQ of a live RSS QP");

	/* ERR flushes what is posted, and refuses posts. */
	unsigned int flushed = 0;

	CHECK(!wq_state(r.wq[1], IBV_WQS_ERR), "WQ 1 to ERR: %s", strerror(errno));
	for (int spins = 0; spins < 1000 && !flushed; spins++) {
		struct ibv_poll_cq_attr pa = {};

		if (!ibv_start_poll(r.cq[1], &pa)) {
			do
				flushed += r.cq[1]->status == IBV_WC_WR_FLUSH_ERR;
			while (!ibv_next_poll(r.cq[1]));
			ibv_end_poll(r.cq[1]);
		}
		usleep(1000);
	}
	CHECK(flushed > 0, "ERR flushed WQ 1's receives (%u)", flushed);
	CHECK_ERR(post_wq(&r, 1, 0), EINVAL, "a post to a WQ in ERR");
	struct ibv_wq_attr back = { .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_RDY };

	CHECK(ibv_modify_wq(r.wq[1], &back) == EINVAL, "ERR -> RDY is refused");

	/* Teardown in order: QPs, table, WQs, CQs. */
	CHECK(!ibv_destroy_qp(r.qp), "destroy the payload RSS QP");
	CHECK(!ibv_destroy_rwq_ind_table(r.table), "destroy the table");
	for (unsigned int w = 0; w <= NWQ; w++)
		CHECK(!ibv_destroy_wq(r.wq[w]) && !ibv_destroy_cq(ibv_cq_ex_to_cq(r.cq[w])), "destroy WQ %u", w);
	ud_senders_free(&snd);
	ibv_dereg_mr(r.mr);
	printf("%s\n", failures ? "FAILED" : "all checks passed");
	return failures ? 1 : 0;
}

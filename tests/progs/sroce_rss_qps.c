// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_rss_qps - the seed's consecutive-QPN form of RSS
 * (srocedv_create_rss_ud_qps; issue 18, Documentation/rss.md):
 *
 *   sroce_rss_qps DEV [SENDER_DEV]
 *
 * A set of 4 child UD QPs and a context QP on DEV: the children are
 * numbered base + i with base a multiple of 4. 32 UD QPs on SENDER_DEV
 * (default DEV) send 2 datagrams each to the context QP's number: each
 * completes in a child's CQ (its WQ's), names that child, carries a hash
 * whose low bits pick it, and holds the bytes sent; one datagram sent to a
 * child's own number lands there, without a hash. Receives are posted with
 * ibv_post_recv on the children. A child's WQ cannot be destroyed
 * (EBUSY); a second set gets another aligned block; bad attributes are
 * refused; after destroy a new set gets the first block again.
 */
#include <stdbool.h>
#include <unistd.h>

#include <infiniband/srocedv.h>

#include "progs_common.h"

enum { LOG2 = 2, N = 1 << LOG2, SENDERS = 32, PER_SENDER = 2, SLOT = 512, PER_CHILD = 64, QKEY = 0x13572468 };

static const uint8_t key[40] = { 0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
				 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb };

struct rx {
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq[N];
	struct ibv_cq *cqs[N];
	struct srocedv_rss_ud_qps *set;
	uint8_t *buf;
	struct ibv_mr *mr;
};

static int post(struct rx *r, unsigned int child, unsigned int k)
{
	struct ibv_sge s = { .addr = (uintptr_t)(r->buf + ((size_t)child * PER_CHILD + k) * SLOT),
			     .length = SLOT, .lkey = r->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = child << 8 | k, .sg_list = &s, .num_sge = 1 }, *bad;

	return ibv_post_recv(r->set->qps[child], &wr, &bad);
}

static struct srocedv_rss_ud_qps *make_set(struct rx *r, uint32_t log2, struct ibv_cq **cqs)
{
	struct srocedv_rss_ud_qps_attr a = {
		.log2 = log2,
		.send_cq = cqs[0],
		.recv_cqs = cqs,
		.cap = { .max_send_wr = 16, .max_recv_wr = PER_CHILD, .max_send_sge = 1, .max_recv_sge = 1 },
		.rx_hash_conf = { .rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ, .rx_hash_key_len = 40,
				  .rx_hash_key = (uint8_t *)key,
				  .rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 |
							 IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP },
	};

	return srocedv_create_rss_ud_qps(r->pd, &a);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx, *sctx;
	struct ibv_pd *spd;
	union ibv_gid gid, sgid;
	int gid_idx, sgid_idx;
	struct rx r = { 0 };

	if (argc < 2) {
		fprintf(stderr, "usage: %s DEV [SENDER_DEV]\n", argv[0]);
		return 2;
	}
	if (open_with_gid(argv[1], &ctx, &r.pd, &gid, &gid_idx) ||
	    open_with_gid(argc > 2 ? argv[2] : argv[1], &sctx, &spd, &sgid, &sgid_idx))
		return 1;
	size_t bytes = (size_t)N * PER_CHILD * SLOT;

	r.buf = calloc(1, bytes);
	r.mr = ibv_reg_mr(r.pd, r.buf, bytes, IBV_ACCESS_LOCAL_WRITE);
	CHECK(r.buf && r.mr, "receive buffer: %s", strerror(errno));
	for (unsigned int i = 0; i < N; i++) {
		struct ibv_cq_init_attr_ex ca = { .cqe = 256, .comp_vector = i % (unsigned int)ctx->num_comp_vectors,
						  .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM |
							      IBV_WC_EX_WITH_SRC_QP };

		r.cq[i] = ibv_create_cq_ex(ctx, &ca);
		if (!r.cq[i]) {
			CHECK(0, "CQ %u: %s", i, strerror(errno));
			return 1;
		}
		r.cqs[i] = ibv_cq_ex_to_cq(r.cq[i]);
	}

	/* Bad attributes: nothing made. */
	struct srocedv_rss_ud_qps_attr bad = { .log2 = 9, .send_cq = r.cqs[0], .recv_cqs = r.cqs };

	CHECK(!srocedv_create_rss_ud_qps(r.pd, &bad) && errno == EINVAL, "log2 9: %s", strerror(errno));
	bad.log2 = 1;
	bad.comp_mask = 1;
	CHECK(!srocedv_create_rss_ud_qps(r.pd, &bad) && errno == EOPNOTSUPP, "an unknown comp_mask bit: %s",
	      strerror(errno));
	bad.comp_mask = 0;
	bad.flags = SROCEDV_RSS_UD_QPS_DEFAULT;
	bad.default_index = 2;
	CHECK(!srocedv_create_rss_ud_qps(r.pd, &bad) && errno == EINVAL, "a default child outside the set: %s",
	      strerror(errno));

	r.set = make_set(&r, LOG2, r.cqs);
	if (!r.set) {
		CHECK(0, "srocedv_create_rss_ud_qps: %s", strerror(errno));
		return 1;
	}
	uint32_t base = r.set->base_qpn;

	CHECK(base % N == 0, "base QPN %#x is a multiple of %u", base, N);
	for (unsigned int i = 0; i < N; i++) {
		CHECK(r.set->qps[i]->qp_num == base + i, "child %u is QPN %#x (base %#x)", i, r.set->qps[i]->qp_num,
		      base);
		CHECK(!ud_qp_rts(r.set->qps[i], QKEY), "child %u to RTS: %s", i, strerror(errno));
		unsigned int posted = 0;

		for (unsigned int k = 0; k < PER_CHILD; k++)
			posted += !post(&r, i, k);
		CHECK(posted == PER_CHILD, "%u receives posted on child %u", posted, i);
	}
	CHECK(!ud_qp_rts(r.set->context_qp, QKEY), "context QP to RTS: %s", strerror(errno));
	CHECK(ibv_destroy_wq(r.set->wqs[1]) == EBUSY, "a child's WQ cannot be destroyed");

	/* A second set: another aligned block. */
	struct ibv_cq *two[2] = { r.cqs[0], r.cqs[1] };
	struct srocedv_rss_ud_qps *set2 = make_set(&r, 1, two);

	CHECK(set2 && set2->base_qpn % 2 == 0 && (set2->base_qpn + 1 < base || set2->base_qpn >= base + N),
	      "a second set of 2 at %#x, outside [%#x, %#x]: %s", set2 ? set2->base_qpn : 0, base, base + N - 1,
	      strerror(errno));
	CHECK(set2 && !srocedv_destroy_rss_ud_qps(set2), "destroy the second set");

	struct ud_senders snd;

	CHECK(!ud_senders_make(&snd, sctx, spd, &gid, sgid_idx, SENDERS, 8, QKEY), "senders: %s", strerror(errno));
	uint8_t *sbuf = snd.buf;

	unsigned int sent = 0;

	for (unsigned int m = 0; m < SENDERS * PER_SENDER; m++) {
		sbuf[m * 256] = (uint8_t)m; /* the tag */
		sent += !ud_senders_send(&snd, m % SENDERS, r.set->context_qp->qp_num, sbuf + m * 256, 100 + m % 50);
	}
	sbuf[SENDERS * PER_SENDER * 256] = 0xee;
	sent += !ud_senders_send(&snd, 0, base + 1, sbuf + SENDERS * PER_SENDER * 256, 77);
	CHECK(sent == SENDERS * PER_SENDER + 1, "%u datagrams posted", sent);

	/* Every completion in child i's CQ names child i. */
	unsigned int got = 0, direct = 0, hashed[N] = { 0 }, bad_cqe = 0;
	for (int spins = 0; got < sent && spins < 10000; spins++) {
		usleep(1000);
		for (unsigned int i = 0; i < N; i++) {
			struct ibv_poll_cq_attr pa = {};

			if (ibv_start_poll(r.cq[i], &pa))
				continue;
			do {
				struct ibv_cq_ex *c = r.cq[i];
				enum srocedv_rss_hash_type type;
				uint32_t hash = srocedv_wc_read_rss_hash(c, &type);
				const uint8_t *m = r.buf + ((size_t)(c->wr_id >> 8) * PER_CHILD + (c->wr_id & 0xff)) * SLOT + 40;
				uint32_t len = ibv_wc_read_byte_len(c) - 40;
				bool ok = c->status == IBV_WC_SUCCESS && ibv_wc_read_qp_num(c) == base + i &&
					  (c->wr_id >> 8) == i;

				if (ok && m[0] == 0xee && len == 77) {
					direct++;
					ok = i == 1 && type == SROCEDV_RSS_HASH_NONE;
				} else if (ok) {
					unsigned int tag = m[0];

					ok = type == SROCEDV_RSS_HASH_UDP_IPV4 && (hash & (N - 1)) == i &&
					     len == 100 + tag % 50 && !memcmp(m, sbuf + tag * 256, len);
					hashed[i]++;
				}
				if (!ok && bad_cqe++ < 5)
					fprintf(stderr, "  child %u: wr_id %#llx status %d qp_num %#x hash %#x type %d len %u\n",
						i, (unsigned long long)c->wr_id, c->status, ibv_wc_read_qp_num(c), hash, type, len);
				got++;
			} while (!ibv_next_poll(r.cq[i]));
			ibv_end_poll(r.cq[i]);
		}
	}
	CHECK(got == sent && !bad_cqe, "%u of %u completions, %u wrong", got, sent, bad_cqe);
	CHECK(direct == 1, "the datagram to child 1 itself arrived there (%u)", direct);
	unsigned int used = 0;

	for (unsigned int i = 0; i < N; i++)
		used += hashed[i] > 0;
	CHECK(used > 1, "hashed datagrams reached %u children (%u %u %u %u)", used, hashed[0], hashed[1], hashed[2],
	      hashed[3]);

	ud_senders_free(&snd);
	CHECK(!srocedv_destroy_rss_ud_qps(r.set), "destroy the set");
	/* The numbers came back: a new set is where the first was. */
	r.set = make_set(&r, LOG2, r.cqs);
	CHECK(r.set && r.set->base_qpn == base, "a new set at %#x again (%#x): %s", base, r.set ? r.set->base_qpn : 0,
	      strerror(errno));
	CHECK(r.set && !srocedv_destroy_rss_ud_qps(r.set), "destroy it");
	printf("sroce_rss_qps: base %#x, %u datagrams over %u children, %s\n", base, got, used,
	       failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}

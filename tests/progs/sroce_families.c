// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_families - the interface families (seed 004, srocedv_query_intf)
 * on a real device: DEV TYPE N SEED, TYPE rc, uc or ud.
 *
 * Two QPs of DEV, A sending to B. Every work request goes through a family
 * function of A's tables (RDMA and message families, every function the
 * type allows, pending bursts of 1..8 then flush), every receive through
 * B's recv and recv_repost (of its QP, or with SROCE_FAMILIES_SRQ=1 of the
 * SRQ it receives through), every completion through poll_formatted. The
 * CQ format changes every few hundred WRs, through all 32 formats. Checked:
 * every completion is successful and its fields match what was posted
 * (wr_id, byte_len, imm, the QP numbers, SL); every byte that arrived;
 * timestamps never go back on a CQ. Prints the count per function and
 * `ok`; exit status 0 only when everything was checked and right. With
 * SROCE_FAMILIES_PER_FUNCTION=1, N is per function: it runs until every
 * function the type allows posted N.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/srocedv.h>

#include "progs_common.h"

enum { SLOTS = 16, SLOT = 4096, RQ_DEPTH = 64, GRH = 40, MAX_BURST = 8 };

enum fn { F_READ, F_WRITE, F_WRITE_IMM, F_WRITE_INLINE, F_WRITE_PENDING, F_SEND, F_SEND_IMM,
	  F_SEND_INLINE, F_SEND_PENDING, F_SEND_INLINE_PENDING, F_SENDTO, F_SENDTO_IMM,
	  F_SENDTO_INLINE, F_COUNT };
static const char *const fn_name[F_COUNT] = {
	"read", "write", "write_imm", "write_inline", "write_pending", "send", "send_imm",
	"send_inline", "send_pending", "send_inline_pending", "sendto", "sendto_imm", "sendto_inline",
};
static unsigned long fn_count[F_COUNT], recv_count, repost_count, polled[64];

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_idx;
static enum ibv_qp_type type;
static uint64_t rng;

#define FAIL(...)                                         \
	do {                                              \
		fprintf(stderr, "FAIL: " __VA_ARGS__);    \
		fputc('\n', stderr);                      \
		if (++failures > 20)                      \
			exit(1);                          \
	} while (0)

struct side {
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	uint8_t *buf;        /* A: SLOTS source slots; B: SLOTS targets, then RQ_DEPTH receive buffers */
	struct ibv_mr *mr;
	const struct srocedv_cq_formatted_ops *fmt;
	uint64_t format;
	uint64_t last_ts;
};
static struct side A, B;
static const struct srocedv_qp_ops_rdma *rdma;
static const struct srocedv_qp_ops_msg *msg, *rmsg;
static struct ibv_ah *ah;
/* SROCE_FAMILIES_SRQ=1: B receives through an SRQ and its family. B is its
 * only QP, so completions come in post order and recv_repost on a count of
 * them is safe (srocedv_srq_ops(3)). */
static struct ibv_srq *srq;
static const struct srocedv_srq_ops *rsrq;

/* What a posted WR must come back as. */
struct expect {
	enum fn fn;
	uint32_t len, imm;
	int slot;
	uint64_t seed;       /* of the bytes */
};
static struct expect out[1 << 16]; /* by wr_id & 0xffff */
/* The WRs that take a receive at B, in order: B's receives complete so. */
static uint32_t recv_fifo[1024];
static unsigned int fifo_in, fifo_out;

static void fill(uint8_t *p, uint32_t len, uint64_t seed)
{
	uint64_t s = seed | 1;

	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)xorshift64(&s);
}

static int same(const uint8_t *p, uint32_t len, uint64_t seed)
{
	uint64_t s = seed | 1;

	for (uint32_t i = 0; i < len; i++)
		if (p[i] != (uint8_t)xorshift64(&s))
			return 0;
	return 1;
}

/* UC completes a WRITE when it is sent: its bytes may land a moment later. */
static int lands(const uint8_t *p, uint32_t len, uint64_t seed)
{
	for (long spin = 0; spin < 100000000l; spin++)
		if (same(p, len, seed))
			return 1;
	return 0;
}

static int make_side(struct side *s, size_t bytes, struct ibv_srq *with_srq)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 1024, .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
								      IBV_WC_EX_WITH_BYTE_LEN };
	struct ibv_qp_init_attr ia = {
		.qp_type = type,
		.cap = { .max_send_wr = 64, .max_recv_wr = RQ_DEPTH, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = 64 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x1111,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ };

	s->cq = ibv_create_cq_ex(ctx, &ca);
	s->buf = aligned_alloc(4096, bytes);
	if (!s->cq || !s->buf)
		return -1;
	memset(s->buf, 0, bytes);
	s->mr = ibv_reg_mr(pd, s->buf, bytes, a.qp_access_flags);
	ia.send_cq = ia.recv_cq = ibv_cq_ex_to_cq(s->cq);
	ia.srq = with_srq;
	if (with_srq)
		ia.cap.max_recv_wr = ia.cap.max_recv_sge = 0;
	s->qp = ibv_create_qp(pd, &ia);
	if (!s->mr || !s->qp)
		return -1;
	return ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				 (type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
}

static void *query(void *obj, enum srocedv_intf_family fam, uint32_t family_flags)
{
	struct srocedv_query_intf_params p = { .intf = fam, .intf_version = SROCEDV_INTF_VERSION,
					       .obj = obj, .family_flags = family_flags };
	void *t = srocedv_query_intf(ctx, &p);

	if (!t)
		FAIL("srocedv_query_intf(family %d): %s", fam, strerror(errno));
	return t;
}

/* B's receives, through its QP's message family or its SRQ's family. */
static int b_recv(uint64_t addr, uint32_t length, uint32_t lkey, uint64_t wr_id)
{
	return rsrq ? rsrq->recv(srq, addr, length, lkey, wr_id) : rmsg->recv(B.qp, addr, length, lkey, wr_id);
}

static int b_repost(int n)
{
	return rsrq ? rsrq->recv_repost(srq, n) : rmsg->recv_repost(B.qp, n);
}

/* A new format on a CQ: release its table, set it, take the new table. */
static void set_format(struct side *s, uint64_t format)
{
	struct srocedv_cq_attr attr = { .format_mask = format };

	if (s->fmt && srocedv_release_intf(ctx, (void *)s->fmt))
		FAIL("srocedv_release_intf: %s", strerror(errno));
	if (srocedv_modify_cq(ibv_cq_ex_to_cq(s->cq), &attr, SROCEDV_CQ_FORMAT_MASK))
		FAIL("srocedv_modify_cq(format %#llx)", (unsigned long long)format);
	s->fmt = query(ibv_cq_ex_to_cq(s->cq), SROCEDV_INTF_CQ_FORMATTED, 0);
	s->format = format;
}

static uint64_t part_u64(const uint8_t *rec, uint64_t fmt, uint64_t part)
{
	uint64_t v;

	memcpy(&v, rec + srocedv_wc_format_offset(fmt, part), sizeof(v));
	return v;
}

static uint32_t part_u32(const uint8_t *rec, uint64_t fmt, uint64_t part)
{
	uint32_t v;

	memcpy(&v, rec + srocedv_wc_format_offset(fmt, part), sizeof(v));
	return v;
}

/* Checks one formatted completion of side s: a send-side one of A's, or a
 * receive of B's. */
static void check_one(struct side *s, const uint8_t *rec)
{
	struct srocedv_wc_base base;
	struct expect *e;

	memcpy(&base, rec, sizeof(base));
	polled[s->format]++;
	if (s->format & SROCEDV_WC_TS) {
		uint64_t ts = part_u64(rec, s->format, SROCEDV_WC_TS);

		if (ts < s->last_ts)
			FAIL("timestamp went back: %llu after %llu", (unsigned long long)ts,
			     (unsigned long long)s->last_ts);
		s->last_ts = ts;
	}
	if (s->format & SROCEDV_WC_DEST) {
		uint32_t qpn = part_u32(rec, s->format, SROCEDV_WC_DEST);

		if (qpn != s->qp->qp_num)
			FAIL("DEST qp_num %u, not %u", qpn, s->qp->qp_num);
	}
	if (s == &A) {
		e = &out[base.wr_id & 0xffff];
		/* READ: the bytes are here now; a WRITE's are at B. */
		if (e->fn == F_READ && !same(A.buf + (size_t)e->slot * SLOT, e->len, e->seed))
			FAIL("read %#llx: bytes differ", (unsigned long long)base.wr_id);
		if ((e->fn == F_WRITE || e->fn == F_WRITE_INLINE || e->fn == F_WRITE_PENDING) &&
		    !lands(B.buf + (size_t)e->slot * SLOT, e->len, e->seed))
			FAIL("%s %#llx: bytes differ at B", fn_name[e->fn], (unsigned long long)base.wr_id);
		return;
	}
	/* B: a receive, of the oldest WR that takes one; its wr_id is the
	 * buffer. */
	{
		uint32_t idx = (uint32_t)base.wr_id, want_id = recv_fifo[fifo_out++ % 1024], id, want_len;
		uint32_t off = type == IBV_QPT_UD ? GRH : 0;
		uint8_t *rbuf = B.buf + (size_t)(SLOTS + idx % RQ_DEPTH) * SLOT;
		bool has_imm = base.wc_flags & IBV_WC_WITH_IMM;

		e = &out[want_id & 0xffff];
		if (has_imm != (e->fn == F_WRITE_IMM || e->fn == F_SEND_IMM || e->fn == F_SENDTO_IMM))
			FAIL("%s %u: IBV_WC_WITH_IMM is %d", fn_name[e->fn], want_id, has_imm);
		if (has_imm && (s->format & SROCEDV_WC_IMM) &&
		    be32toh(part_u32(rec, s->format, SROCEDV_WC_IMM)) != want_id)
			FAIL("%s %u: imm_data %#x", fn_name[e->fn], want_id, part_u32(rec, s->format, SROCEDV_WC_IMM));
		if (e->fn == F_WRITE_IMM) {
			if (!same(B.buf + (size_t)e->slot * SLOT, e->len, e->seed))
				FAIL("write_imm %u: bytes differ", want_id);
		} else {
			want_len = e->len + off;
			memcpy(&id, rbuf + off, 4);
			if (id != want_id || base.byte_len != want_len || !same(rbuf + off + 4, e->len - 4, e->seed))
				FAIL("%s %u: got WR %u, byte_len %u (want %u), or bytes differ", fn_name[e->fn],
				     want_id, id, base.byte_len, want_len);
		}
		if (s->format & SROCEDV_WC_SOURCE) {
			struct srocedv_wc_source src;

			memcpy(&src, rec + srocedv_wc_format_offset(s->format, SROCEDV_WC_SOURCE), sizeof(src));
			if (type == IBV_QPT_UD && src.src_qp != A.qp->qp_num)
				FAIL("SOURCE src_qp %u, not %u", src.src_qp, A.qp->qp_num);
		}
	}
}

/* Polls side s until `want` completions came; each is checked. Receives
 * are reposted through recv_repost as they are consumed. */
static void drain(struct side *s, unsigned long want)
{
	uint8_t buf[MAX_BURST * 64 + 7];
	unsigned long got = 0, spins = 0;

	while (got < want) {
		size_t room = (size_t)(rng % MAX_BURST + 1) * srocedv_wc_format_size(s->format);
		int n = s->fmt->poll_formatted(ibv_cq_ex_to_cq(s->cq), buf + 3, room);

		if (n < 0) {
			struct ibv_wc wc;

			if (ibv_poll_cq(ibv_cq_ex_to_cq(s->cq), 1, &wc) == 1)
				FAIL("%s completion error: %s (wr_id %#llx)", s == &A ? "send" : "recv",
				     ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id);
			got++;
			continue;
		}
		if (!n && ++spins > 200000000ul) {
			FAIL("%s CQ: %lu of %lu completions", s == &A ? "send" : "recv", got, want);
			exit(1);
		}
		for (int i = 0; i < n; i++)
			check_one(s, buf + 3 + (size_t)i * srocedv_wc_format_size(s->format));
		if (s == &B && n) {
			if (b_repost(n))
				FAIL("recv_repost(%d): %s", n, strerror(errno));
			repost_count += (unsigned long)n;
		}
		got += (unsigned long)n;
	}
}

/* The functions this type may use; the pending ones end a burst with flush. */
static int allowed(enum fn f)
{
	switch (type) {
	case IBV_QPT_RC:
		return f < F_SENDTO;
	case IBV_QPT_UC:
		return f != F_READ && f < F_SENDTO;
	default:
		return f >= F_SENDTO;
	}
}

/* The receives a WR uses at B: one for messages and WRITE with immediate. */
static int uses_recv(enum fn f)
{
	return f >= F_SEND || f == F_WRITE_IMM;
}

/* Posts WR `id` through function f, from slot `slot`. */
static int post(enum fn f, uint32_t id, int slot)
{
	struct expect *e = &out[id & 0xffff];
	uint8_t *src = A.buf + (size_t)slot * SLOT;
	bool inl = f == F_WRITE_INLINE || f == F_SEND_INLINE || f == F_SEND_INLINE_PENDING || f == F_SENDTO_INLINE;
	uint32_t len = 4 + (uint32_t)(xorshift64(&rng) % ((inl ? 64 : (type == IBV_QPT_UD ? 1000 : SLOT)) - 3));
	uint64_t raddr = (uintptr_t)B.buf + (size_t)slot * SLOT, laddr = (uintptr_t)src;
	uint32_t imm = htobe32(id);

	*e = (struct expect){ .fn = f, .len = len, .imm = imm, .slot = slot, .seed = xorshift64(&rng) };
	if (f == F_READ) {
		/* The bytes come from B's slot into A's. */
		fill(B.buf + (size_t)slot * SLOT, len, e->seed);
		memset(src, 0, len);
		raddr = (uintptr_t)B.buf + (size_t)slot * SLOT;
	} else {
		/* The WR's id leads, for receives without IMM. */
		fill(src, len, e->seed);
		if (f != F_WRITE_IMM && f != F_WRITE && f != F_WRITE_INLINE && f != F_WRITE_PENDING) {
			memcpy(src, &id, 4);
			fill(src + 4, len - 4, e->seed);
		}
	}
	fn_count[f]++;
	if (uses_recv(f))
		recv_fifo[fifo_in++ % 1024] = id;
	switch (f) {
	case F_READ:
		return rdma->read(A.qp, laddr, len, A.mr->lkey, raddr, B.mr->rkey, id);
	case F_WRITE:
		return rdma->write(A.qp, laddr, len, A.mr->lkey, raddr, B.mr->rkey, id);
	case F_WRITE_IMM:
		return rdma->write_imm(A.qp, laddr, len, A.mr->lkey, imm, raddr, B.mr->rkey, id);
	case F_WRITE_INLINE:
		return rdma->write_inline(A.qp, laddr, len, raddr, B.mr->rkey, id);
	case F_WRITE_PENDING:
		return rdma->write_pending(A.qp, laddr, len, A.mr->lkey, raddr, B.mr->rkey, id);
	case F_SEND:
		return msg->send(A.qp, laddr, len, A.mr->lkey, id);
	case F_SEND_IMM:
		return msg->send_imm(A.qp, laddr, len, A.mr->lkey, imm, id);
	case F_SEND_INLINE:
		return msg->send_inline(A.qp, laddr, len, id);
	case F_SEND_PENDING:
		return msg->send_pending(A.qp, laddr, len, A.mr->lkey, id);
	case F_SEND_INLINE_PENDING:
		return msg->send_inline_pending(A.qp, laddr, len, id);
	case F_SENDTO:
		return msg->sendto(A.qp, laddr, len, A.mr->lkey, ah, B.qp->qp_num, 0x1111, id);
	case F_SENDTO_IMM:
		return msg->sendto_imm(A.qp, laddr, len, A.mr->lkey, imm, ah, B.qp->qp_num, 0x1111, id);
	default:
		return msg->sendto_inline(A.qp, laddr, len, ah, B.qp->qp_num, 0x1111, id);
	}
}

/* The count of the least used function the type allows. */
static unsigned long fewest(void)
{
	unsigned long least = ~0ul;

	for (int f = 0; f < F_COUNT; f++)
		if (allowed((enum fn)f) && fn_count[f] < least)
			least = fn_count[f];
	return least;
}

int main(int argc, char **argv)
{
	unsigned long want, posted = 0;
	uint32_t id = 1;
	bool per_function;
	int format_i = 0;

	if (argc != 5 || (strcmp(argv[2], "rc") && strcmp(argv[2], "uc") && strcmp(argv[2], "ud"))) {
		fprintf(stderr, "usage: %s DEV rc|uc|ud N SEED\n", argv[0]);
		return 2;
	}
	type = !strcmp(argv[2], "rc") ? IBV_QPT_RC : !strcmp(argv[2], "uc") ? IBV_QPT_UC : IBV_QPT_UD;
	want = strtoul(argv[3], NULL, 0);
	rng = strtoull(argv[4], NULL, 0) | 1;
	if (open_with_gid(argv[1], &ctx, &pd, &gid, &gid_idx))
		return 1;
	if (getenv("SROCE_FAMILIES_SRQ") && !strcmp(getenv("SROCE_FAMILIES_SRQ"), "1")) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = RQ_DEPTH, .max_sge = 1 } };

		srq = ibv_create_srq(pd, &sa);
		if (!srq) {
			fprintf(stderr, "ibv_create_srq: %s\n", strerror(errno));
			return 1;
		}
	}
	if (make_side(&A, SLOTS * SLOT, NULL) || make_side(&B, (SLOTS + RQ_DEPTH) * SLOT, srq)) {
		fprintf(stderr, "setup failed: %s\n", strerror(errno));
		return 1;
	}
	/* B's receives go in before RTR, through the family (INIT is enough). */
	if (srq)
		rsrq = query(srq, SROCEDV_INTF_SRQ_RECV, 0);
	else
		rmsg = query(B.qp, SROCEDV_INTF_QP_MSG, SROCEDV_QP_OPS_RECV);
	if (!rmsg && !rsrq)
		return 1;
	if (srq && ibv_destroy_srq(srq) != EBUSY)
		FAIL("ibv_destroy_srq with a table held: not EBUSY");
	for (uint32_t i = 0; i < RQ_DEPTH; i++)
		if (b_recv((uintptr_t)B.buf + (SLOTS + i) * SLOT, SLOT, B.mr->lkey, i))
			FAIL("recv %u", i);
	recv_count = RQ_DEPTH;
	if (qp_to_rts(A.qp, B.qp->qp_num, &gid, gid_idx, 4, 14) || qp_to_rts(B.qp, A.qp->qp_num, &gid, gid_idx, 4, 14)) {
		fprintf(stderr, "to RTS: %s\n", strerror(errno));
		return 1;
	}
	if (type == IBV_QPT_UD) {
		struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
					  .grh = { .dgid = gid, .sgid_index = (uint8_t)gid_idx, .hop_limit = 64 } };

		ah = ibv_create_ah(pd, &aa);
		if (!ah)
			return 1;
	} else {
		rdma = query(A.qp, SROCEDV_INTF_QP_RDMA, 0);
	}
	msg = query(A.qp, SROCEDV_INTF_QP_MSG, type == IBV_QPT_UD ? SROCEDV_QP_OPS_SENDTO : SROCEDV_QP_OPS_SEND);
	if (!msg || (type != IBV_QPT_UD && !rdma))
		return 1;
	/* Destroy waits for the tables (the kernel alone would destroy it). */
	if (ibv_destroy_qp(A.qp) != EBUSY)
		FAIL("ibv_destroy_qp with a table held: not EBUSY");
	set_format(&A, SROCEDV_WC_BASE);
	set_format(&B, SROCEDV_WC_FORMAT_ALL);

	per_function = getenv("SROCE_FAMILIES_PER_FUNCTION") && !strcmp(getenv("SROCE_FAMILIES_PER_FUNCTION"), "1");
	while ((per_function ? fewest() : posted) < want && !failures) {
		int burst = (int)(xorshift64(&rng) % MAX_BURST) + 1, recvs = 0, pending = 0;
		enum fn f;

		/* Slots and receives of one burst never overlap. */
		for (int i = 0; i < burst && i < SLOTS; i++) {
			do
				f = (enum fn)(xorshift64(&rng) % F_COUNT);
			while (!allowed(f));
			if (uses_recv(f) && recvs == RQ_DEPTH / 2)
				f = type == IBV_QPT_UD ? F_SENDTO : F_WRITE;
			recvs += uses_recv(f);
			pending |= f == F_WRITE_PENDING ? 1 : f == F_SEND_PENDING || f == F_SEND_INLINE_PENDING ? 2 : 0;
			if (post(f, id, i))
				FAIL("%s: %s", fn_name[f], strerror(errno));
			id++;
		}
		if ((pending & 1) && rdma->flush(A.qp))
			FAIL("rdma flush");
		if ((pending & 2) && msg->flush(A.qp))
			FAIL("msg flush");
		drain(&A, (unsigned long)burst);
		drain(&B, (unsigned long)recvs);
		posted += (unsigned long)burst;
		/* Every format, on both CQs, in turn. */
		if (posted / 300 != (posted - (unsigned long)burst) / 300) {
			format_i = (format_i + 1) % 32;
			set_format(&A, SROCEDV_WC_BASE | ((uint64_t)format_i << 1));
			set_format(&B, SROCEDV_WC_BASE | ((uint64_t)((format_i * 7) % 32) << 1));
		}
	}
	for (int f = 0; f < F_COUNT; f++)
		if (allowed((enum fn)f))
			printf("  %s: %lu\n", fn_name[f], fn_count[f]);
	printf("  recv: %lu, recv_repost: %lu%s\n", recv_count, repost_count, srq ? " (SRQ family)" : "");
	{
		int formats = 0;

		for (int m = 0; m < 64; m++)
			formats += polled[m] != 0;
		printf("  formats polled: %d\n", formats);
	}
	srocedv_release_intf(ctx, (void *)A.fmt);
	srocedv_release_intf(ctx, (void *)B.fmt);
	if (rdma)
		srocedv_release_intf(ctx, (void *)rdma);
	srocedv_release_intf(ctx, (void *)msg);
	srocedv_release_intf(ctx, (void *)(rsrq ? (const void *)rsrq : (const void *)rmsg));
	if (ibv_destroy_qp(A.qp) || ibv_destroy_qp(B.qp) || ibv_destroy_cq(ibv_cq_ex_to_cq(A.cq)) ||
	    ibv_destroy_cq(ibv_cq_ex_to_cq(B.cq)) || (srq && ibv_destroy_srq(srq)))
		FAIL("destroy after release");
	if (failures || (per_function ? fewest() : posted) < want)
		return 1;
	printf("ok: %s: %lu work requests through the families, every completion and byte checked\n",
	       argv[2], posted);
	return 0;
}

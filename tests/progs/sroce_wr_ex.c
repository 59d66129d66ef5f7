// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_wr_ex - the extended verbs end to end on one device: QP A posts N
 * work requests to QP B (their own address; the glue loops the packets
 * back) through the ibv_wr_* builders only, and every completion is read
 * through the ibv_cq_ex readers only.
 *
 *   sroce_wr_ex DEV rc|uc|ud N [SEED [PEER_DEV]]
 *
 * With PEER_DEV, QP B lives there instead (rdma_rxe across a veth, for
 * interop: 85-rxe-interop, sroce to rxe). A's side is what is tested (its
 * timestamps where its device has a clock); B's completions are read with
 * ibv_poll_cq. ATOMIC WRITE and FLUSH are posted only when both devices
 * report them (rxe has them from Linux 6.2); FLUSH to a peer device only
 * with SROCE_WR_EX_PEER_FLUSH=1, because rdma_rxe up to 6.12 at least drops
 * every spec FLUSH (its ICRC covers the headers twice: extended-verbs.md,
 * "FLUSH and rdma_rxe"). FLUSH goes through
 * srocedv_wr_flush (rdma-core 44 has no ibv_wr_flush), to a range or the
 * whole MR, whose FLUSH right B's QP and MR are given then.
 *
 * Each batch (ibv_wr_start .. ibv_wr_complete) holds 1-16 work requests of
 * random opcodes (every one the QP type has), sizes and gathers: one SGE
 * (ibv_wr_set_sge), a list (ibv_wr_set_sge_list) or inline bytes
 * (ibv_wr_set_inline_data / _list). Every WR is signaled. After each batch
 * every completion is checked field by field (status, opcode, wr_id,
 * byte_len, imm, qp_num, src_qp, wc_flags) and every byte: received and
 * written data, data read back, atomic results and targets (RC's ATOMIC
 * WRITE included: an 8-byte target replaced whole; a FLUSH completes as
 * one, in order after the writes before it). Completion
 * timestamps must grow per CQ and lie between ibv_query_rt_values_ex
 * readings taken before the batch and after its completions; the wall-clock
 * reader must agree with CLOCK_REALTIME. Prints the count per builder.
 * With SROCE_WR_EX_PER_BUILDER=1, N is the least each builder in use must
 * post (slow/91-extended-verbs-long), not the total.
 * The CQ, its readers, the device promises and the per-builder counts are
 * in sroce_wr_ex/ (wr_ex.h).
 */
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/srocedv.h>

#include "progs_common.h"
#include "sroce-abi.h"
#include "sroce_wr_ex/wr_ex.h"

enum { SLOT = 4096, SLOTS = 16, MAX_INL = 64, GRH = 40 };
#define BUF_BYTES (SLOT * SLOTS)

struct end {
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_cq_ex *cq;
	struct ibv_mr *mr;
	uint8_t *buf;   /* A: sources then read landing; B: receives then targets */
	uint64_t last_ts;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
	int gid_idx;
	bool ts;        /* the device has a completion clock */
	uint64_t lo, hi; /* its clock around the batch */
};
static enum ibv_qp_type type;
static bool with_atomic_write; /* RC, and both devices have it */
static bool with_flush;        /* RC, and both devices have FLUSH to global visibility */
static bool per_builder;       /* SROCE_WR_EX_PER_BUILDER=1: the gathers balanced too */
static bool pair;              /* B on another device */
static struct ibv_ah *ah;
static struct end A, B;
static uint64_t rng = 88172645463325252ull;
static struct tally tally;
static unsigned long errors_reported;

#define FAILQ(...)                                                       \
	do {                                                             \
		if (errors_reported++ < 20)                              \
			CHECK(0, __VA_ARGS__);                           \
		else                                                     \
			failures++;                                      \
	} while (0)

static uint64_t rnd(void)
{
	return xorshift64(&rng);
}

static uint64_t rt_now(struct end *e)
{
	return e->ts ? device_clock_ns(e->ctx) : 0;
}

static int end_init(struct end *e, uint64_t ops)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = type,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 4, .max_recv_sge = 1,
			 .max_inline_data = MAX_INL },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = e->pd,
		.send_ops_flags = ops,
	};
	unsigned int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC | (with_flush ? SROCEDV_ACCESS_FLUSH_GLOBAL : 0);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x1111,
				 .qp_access_flags = acc };

	e->cq = make_cq_ex(e->ctx, e->ts);
	e->buf = aligned_alloc(4096, 2 * BUF_BYTES);
	if (!e->cq || !e->buf)
		return -1;
	memset(e->buf, 0, 2 * BUF_BYTES);
	ia.send_cq = ibv_cq_ex_to_cq(e->cq);
	ia.recv_cq = ibv_cq_ex_to_cq(e->cq);
	e->mr = ibv_reg_mr(e->pd, e->buf, 2 * BUF_BYTES, acc);
	e->qp = ibv_create_qp_ex(e->ctx, &ia);
	if (!e->mr || !e->qp)
		return -1;
	e->qpx = ibv_qp_to_qp_ex(e->qp);
	if (!e->qpx)
		return -1;
	return ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				       (type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
}

/* One work request of a batch and what it must do. */
struct wr_plan {
	enum ibv_wr_opcode op;
	uint32_t len;
	uint32_t imm;
	uint8_t *src;      /* A: the bytes sent or written, or where READ lands */
	uint8_t *remote;   /* B: the target of WRITE/READ/atomics */
	uint8_t expect[SLOT];
	uint64_t atomic_old;  /* atomics: the target before */
	uint64_t atomic_new;  /* atomics: the target after */
	bool takes_recv;
};

static const enum ibv_wc_opcode send_wc[] = {
	[IBV_WR_RDMA_WRITE] = IBV_WC_RDMA_WRITE, [IBV_WR_RDMA_WRITE_WITH_IMM] = IBV_WC_RDMA_WRITE,
	[IBV_WR_SEND] = IBV_WC_SEND, [IBV_WR_SEND_WITH_IMM] = IBV_WC_SEND,
	[IBV_WR_RDMA_READ] = IBV_WC_RDMA_READ, [IBV_WR_ATOMIC_CMP_AND_SWP] = IBV_WC_COMP_SWAP,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = IBV_WC_FETCH_ADD, [IBV_WR_ATOMIC_WRITE] = IBV_WC_ATOMIC_WRITE,
	[WR_FLUSH] = SROCEDV_WC_FLUSH,
};

/* The gather of one WR: its bytes (already in p->src) as one SGE, a list
 * of up to three pieces, or inline. */
static void set_gather(struct wr_plan *p, bool may_inline)
{
	struct ibv_qp_ex *x = A.qpx;
	uint32_t cut1 = p->len ? (uint32_t)(rnd() % (p->len + 1)) : 0;
	uint32_t cut2 = cut1 + (p->len - cut1 ? (uint32_t)(rnd() % (p->len - cut1 + 1)) : 0);
	unsigned int how = (unsigned int)(rnd() % 4);

	/* Per builder: the setter used least so far among those that fit
	 * (inline only up to MAX_INL; build() keeps such WRs short). */
	if (per_builder) {
		const unsigned long n[4] = { tally.sge, tally.sge_list, tally.inl, tally.inl_list };
		unsigned int kinds = may_inline && p->len <= MAX_INL ? 4 : 2;

		how = 0;
		for (unsigned int k = 1; k < kinds; k++)
			if (n[k] < n[how])
				how = k;
	}
	if (may_inline && p->len <= MAX_INL && how >= 2) {
		if (how == 2) {
			ibv_wr_set_inline_data(x, p->src, p->len);
			tally.inl++;
		} else {
			struct ibv_data_buf b[3] = { { p->src, cut1 }, { p->src + cut1, cut2 - cut1 },
						     { p->src + cut2, p->len - cut2 } };

			ibv_wr_set_inline_data_list(x, 3, b);
			tally.inl_list++;
		}
	} else if (how % 2 == 0) {
		ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)p->src, p->len);
		tally.sge++;
	} else {
		struct ibv_sge s[3] = {
			{ (uintptr_t)p->src, cut1, A.mr->lkey },
			{ (uintptr_t)p->src + cut1, cut2 - cut1, A.mr->lkey },
			{ (uintptr_t)p->src + cut2, p->len - cut2, A.mr->lkey },
		};

		ibv_wr_set_sge_list(x, 3, s);
		tally.sge_list++;
	}
}

static enum ibv_wr_opcode pick_op(void)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_ATOMIC_WRITE, WR_FLUSH,
	};
	unsigned int n = type == IBV_QPT_RC ? 7 + with_atomic_write : type == IBV_QPT_UC ? 4 : 2;
	enum ibv_wr_opcode op = ops[rnd() % (n + with_flush)];

	/* FLUSH without ATOMIC WRITE takes the last place. */
	return op == IBV_WR_ATOMIC_WRITE && !with_atomic_write ? WR_FLUSH : op;
}

static void build(struct wr_plan *p, unsigned int slot, uint64_t wr_id)
{
	struct ibv_qp_ex *x = A.qpx;
	uint32_t max = type == IBV_QPT_UD ? 1024 : SLOT;
	uint64_t *target;

	p->op = pick_op();
	p->len = (uint32_t)(rnd() % (max + 1));
	p->imm = (uint32_t)rnd();
	p->src = A.buf + slot * SLOT;
	p->remote = B.buf + BUF_BYTES + slot * SLOT;
	p->takes_recv = p->op == IBV_WR_SEND || p->op == IBV_WR_SEND_WITH_IMM ||
			p->op == IBV_WR_RDMA_WRITE_WITH_IMM;
	x->wr_id = wr_id;
	x->wr_flags = IBV_SEND_SIGNALED;
	tally.op[p->op]++;
	switch ((unsigned int)p->op) { /* WR_FLUSH is outside 44's enum */
	case IBV_WR_RDMA_READ:
		for (uint32_t i = 0; i < p->len; i++)
			p->remote[i] = (uint8_t)rnd();
		memcpy(p->expect, p->remote, p->len);
		memset(p->src, 0, SLOT);
		ibv_wr_rdma_read(x, B.mr->rkey, (uintptr_t)p->remote);
		set_gather(p, false);
		return;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD: {
		uint64_t arg = rnd(), swap = rnd();

		p->len = 8;
		target = (uint64_t *)p->remote;
		*target = rnd();
		p->atomic_old = *target;
		memset(p->src, 0, 8);
		if (p->op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			p->atomic_new = p->atomic_old + arg;
			ibv_wr_atomic_fetch_add(x, B.mr->rkey, (uintptr_t)target, arg);
		} else {
			uint64_t cmp = rnd() % 2 ? p->atomic_old : arg;

			p->atomic_new = cmp == p->atomic_old ? swap : p->atomic_old;
			ibv_wr_atomic_cmp_swp(x, B.mr->rkey, (uintptr_t)target, cmp, swap);
		}
		ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)p->src, 8);
		tally.sge++;
		return;
	}
	case IBV_WR_ATOMIC_WRITE: { /* 8 bytes, no gather: the target changes whole */
		uint64_t v = rnd();

		p->len = 8;
		target = (uint64_t *)p->remote;
		*target = rnd();
		p->atomic_old = *target;
		p->atomic_new = v;
		ibv_wr_atomic_write(x, B.mr->rkey, (uintptr_t)target, &v);
		return;
	}
	case SROCE_WQE_FLUSH: { /* the slot (any length within it) or the whole MR */
		bool whole = rnd() % 4 == 0;

		tally.flush_mr += whole;
		srocedv_wr_flush(x, B.mr->rkey, (uintptr_t)p->remote, whole ? 0 : p->len, SROCEDV_FLUSH_GLOBAL,
				 whole ? SROCEDV_FLUSH_MR : SROCEDV_FLUSH_RANGE);
		return;
	}
	default:
		break;
	}
	/* Per builder, a WR that could go inline does while the inline
	 * setters are behind (most WRs are longer than MAX_INL). */
	if (per_builder && tally.inl + tally.inl_list < tally.sge + tally.sge_list)
		p->len %= MAX_INL + 1;
	for (uint32_t i = 0; i < p->len; i++)
		p->src[i] = (uint8_t)rnd();
	memcpy(p->expect, p->src, p->len);
	switch (p->op) {
	case IBV_WR_SEND:
		ibv_wr_send(x);
		break;
	case IBV_WR_SEND_WITH_IMM:
		ibv_wr_send_imm(x, htonl(p->imm));
		break;
	case IBV_WR_RDMA_WRITE:
		memset(p->remote, 0, SLOT);
		ibv_wr_rdma_write(x, B.mr->rkey, (uintptr_t)p->remote);
		break;
	default: /* WRITE_WITH_IMM */
		memset(p->remote, 0, SLOT);
		ibv_wr_rdma_write_imm(x, B.mr->rkey, (uintptr_t)p->remote, htonl(p->imm));
		break;
	}
	if (type == IBV_QPT_UD)
		ibv_wr_set_ud_addr(x, ah, B.qp->qp_num, 0x1111);
	set_gather(p, true);
}

static int read_cq(struct end *e, struct got *g, unsigned int n)
{
	return pair && e == &B ? read_cq_plain(e->cq, g, n) : read_cq_ex(e->cq, e->ts, g, n);
}

static void check_ts(struct end *e, const struct got *g, const char *cq)
{
	int64_t off;

	if (!e->ts)
		return;
	if (g->ts < e->last_ts || g->ts < e->lo || g->ts > e->hi)
		FAILQ("%s CQ timestamp %llu: last %llu, batch [%llu, %llu]", cq,
		      (unsigned long long)g->ts, (unsigned long long)e->last_ts,
		      (unsigned long long)e->lo, (unsigned long long)e->hi);
	e->last_ts = g->ts;
	off = (int64_t)(g->wall - g->ts) - realtime_offset();
	/* Both offsets are tight readings; they differ by the readings'
	 * widths and any step of the wall clock in between. */
	if (off > 10000000 || off < -10000000)
		FAILQ("%s CQ wall clock off by %lld ns", cq, (long long)off);
}

/* Whether B's memory holds the bytes. A UC WRITE completes at A once sent,
 * not once placed, so for UC the bytes get time to arrive (the loopback
 * loses nothing; a mismatch after 10 s is a fault). */
static bool arrived(const uint8_t *at, const uint8_t *want, uint32_t len)
{
	for (int i = 0; i < 10000; i++) {
		if (!memcmp(at, want, len))
			return true;
		if (type != IBV_QPT_UC)
			return false;
		usleep(1000);
	}
	return false;
}

static void post_recvs(unsigned int n, uint64_t first)
{
	for (unsigned int i = 0; i < n; i++) {
		struct ibv_sge s = { (uintptr_t)B.buf + i * SLOT, SLOT, B.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = first + i, .sg_list = &s, .num_sge = 1 }, *bad;

		memset(B.buf + i * SLOT, 0, SLOT);
		if (ibv_post_recv(B.qp, &wr, &bad))
			FAILQ("post_recv: %s", strerror(errno));
	}
}

static int run_batch(uint64_t *next_id)
{
	struct wr_plan plan[SLOTS];
	struct got gs[SLOTS], gr[SLOTS];
	unsigned int n = 1 + (unsigned int)(rnd() % SLOTS), recvs = 0, r = 0;
	uint64_t first = *next_id;
	int err;

	for (unsigned int i = 0; i < n; i++)
		plan[i].takes_recv = false;
	/* Receives for every message that takes one; decided after building,
	 * so post one per WR up front (extra ones stay for the next batch
	 * only on B's side: drain them by posting exactly what is used). */
	A.lo = rt_now(&A);
	B.lo = rt_now(&B);
	ibv_wr_start(A.qpx);
	for (unsigned int i = 0; i < n; i++) {
		build(&plan[i], i, first + i);
		recvs += plan[i].takes_recv;
	}
	post_recvs(recvs, first);
	err = ibv_wr_complete(A.qpx);
	if (err) {
		FAILQ("ibv_wr_complete: %s", strerror(err));
		return -1;
	}
	*next_id += n;
	if (read_cq(&A, gs, n) != (int)n || (recvs && read_cq(&B, gr, recvs) != (int)recvs)) {
		FAILQ("batch of %u WRs (%u receives): completions missing", n, recvs);
		return -1;
	}
	A.hi = rt_now(&A);
	B.hi = rt_now(&B);
	for (unsigned int i = 0; i < n; i++) {
		struct wr_plan *p = &plan[i];
		const struct got *g = &gs[i];

		if (g->wr_id != first + i || g->status != IBV_WC_SUCCESS || g->opcode != send_wc[p->op] ||
		    g->qp_num != A.qp->qp_num)
			FAILQ("send completion %u: wr_id %llu (want %llu) status %s opcode %d (want %d) qp %#x",
			      i, (unsigned long long)g->wr_id, (unsigned long long)(first + i),
			      ibv_wc_status_str(g->status), g->opcode, send_wc[p->op], g->qp_num);
		check_ts(&A, g, "send");
		if (p->op == IBV_WR_RDMA_READ && memcmp(p->src, p->expect, p->len))
			FAILQ("READ of %u bytes: data differ", p->len);
		if (p->op == IBV_WR_ATOMIC_CMP_AND_SWP || p->op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			uint64_t old, now;

			memcpy(&old, p->src, 8);
			memcpy(&now, p->remote, 8);
			if (old != p->atomic_old || now != p->atomic_new)
				FAILQ("atomic %d: returned %#llx (want %#llx), target %#llx (want %#llx)",
				      p->op, (unsigned long long)old, (unsigned long long)p->atomic_old,
				      (unsigned long long)now, (unsigned long long)p->atomic_new);
		}
		if (p->op == IBV_WR_ATOMIC_WRITE && memcmp(p->remote, &p->atomic_new, 8))
			FAILQ("ATOMIC WRITE: target %#llx (want %#llx)", (unsigned long long)*(uint64_t *)p->remote,
			      (unsigned long long)p->atomic_new);
		if ((p->op == IBV_WR_RDMA_WRITE || p->op == IBV_WR_RDMA_WRITE_WITH_IMM) &&
		    !arrived(p->remote, p->expect, p->len))
			FAILQ("WRITE of %u bytes: data differ", p->len);
		if (!p->takes_recv)
			continue;
		/* Receive completions arrive in message order. */
		{
			const struct got *v = &gr[r];
			uint32_t grh = type == IBV_QPT_UD ? GRH : 0;
			bool imm = p->op != IBV_WR_SEND;
			enum ibv_wc_opcode want = p->op == IBV_WR_RDMA_WRITE_WITH_IMM ?
							  IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
			uint8_t *data = B.buf + (v->wr_id - first) * SLOT + grh;

			if (v->status != IBV_WC_SUCCESS || v->opcode != want || v->byte_len != p->len + grh ||
			    v->qp_num != B.qp->qp_num || (type != IBV_QPT_RC && type != IBV_QPT_UC &&
							  v->src_qp != A.qp->qp_num) ||
			    !!(v->flags & IBV_WC_WITH_IMM) != imm || (imm && v->imm != p->imm) ||
			    /* rdma_rxe flags every RoCE receive with GRH */
			    (!!(v->flags & IBV_WC_GRH) != (type == IBV_QPT_UD) && !(pair && type != IBV_QPT_UD)))
				FAILQ("receive %u: status %s opcode %d (want %d) len %u (want %u) qp %#x src %#x "
				      "flags %#x imm %#x (want %#x)",
				      r, ibv_wc_status_str(v->status), v->opcode, want, v->byte_len,
				      p->len + grh, v->qp_num, v->src_qp, v->flags, v->imm, p->imm);
			else if (p->op != IBV_WR_RDMA_WRITE_WITH_IMM && memcmp(data, p->expect, p->len))
				FAILQ("receive %u: %u bytes differ", r, p->len);
			check_ts(&B, v, "receive");
			r++;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t ops, id = 1, want;
	struct ibv_device_attr_ex dx, dxb;
	unsigned long posted = 0;
	bool peer_flush;

	if (argc < 4) {
		fprintf(stderr, "usage: %s DEV rc|uc|ud N [SEED [PEER_DEV]]\n", argv[0]);
		return 2;
	}
	pair = argc > 5;
	type = !strcmp(argv[2], "rc") ? IBV_QPT_RC : !strcmp(argv[2], "uc") ? IBV_QPT_UC : IBV_QPT_UD;
	want = strtoull(argv[3], NULL, 0);
	if (argc > 4)
		rng = strtoull(argv[4], NULL, 0) | 1;
	if (open_with_gid(argv[1], &A.ctx, &A.pd, &A.gid, &A.gid_idx) ||
	    (pair && open_with_gid(argv[5], &B.ctx, &B.pd, &B.gid, &B.gid_idx)))
		return 1;
	if (!pair) {
		B.ctx = A.ctx, B.pd = A.pd, B.gid = A.gid, B.gid_idx = A.gid_idx;
	}
	if (ibv_query_device_ex(A.ctx, NULL, &dx) || ibv_query_device_ex(B.ctx, NULL, &dxb)) {
		CHECK(0, "ibv_query_device_ex: %s", strerror(errno));
		return 1;
	}
	A.ts = dx.hca_core_clock != 0;
	B.ts = !pair && dxb.hca_core_clock != 0; /* a peer's CQ is read plainly */
	if (!pair) /* sroce's own promises (sroce_wr_ex/promises.c) */
		failures += check_device_promises(&dx, A.pd);
	with_atomic_write = type == IBV_QPT_RC && (dx.device_cap_flags_ex & SROCE_DEVICE_CAP_ATOMIC_WRITE) &&
			    (dxb.device_cap_flags_ex & SROCE_DEVICE_CAP_ATOMIC_WRITE);
	with_flush = type == IBV_QPT_RC && (dx.device_cap_flags_ex & SROCEDV_DEVICE_FLUSH_GLOBAL) &&
		     (dxb.device_cap_flags_ex & SROCEDV_DEVICE_FLUSH_GLOBAL);
	peer_flush = getenv("SROCE_WR_EX_PEER_FLUSH") && !strcmp(getenv("SROCE_WR_EX_PEER_FLUSH"), "1");
	if (pair)
		printf("  %s -> %s: timestamps %schecked, ATOMIC WRITE %s, FLUSH %s\n", argv[1], argv[5],
		       A.ts ? "" : "not ", with_atomic_write ? "posted" : "not posted (a device lacks it)",
		       !with_flush   ? "not posted (a device lacks it)"
		       : !peer_flush ? "not posted (SROCE_WR_EX_PEER_FLUSH unset)"
				     : "posted");
	with_flush = with_flush && (!pair || peer_flush);
	ops = type == IBV_QPT_RC ? 0x7f | (with_atomic_write ? IBV_QP_EX_WITH_ATOMIC_WRITE : 0) |
					   (with_flush ? SROCEDV_QP_EX_WITH_FLUSH : 0)
	      : type == IBV_QPT_UC ? 0xf : 0xc;
	/* B posts nothing; librxe (rdma-core 44) refuses the FLUSH bit. */
	if (end_init(&A, ops) || end_init(&B, ops & ~SROCEDV_QP_EX_WITH_FLUSH) ||
	    qp_to_rts(A.qp, B.qp->qp_num, &B.gid, A.gid_idx, 16, 14) ||
	    qp_to_rts(B.qp, A.qp->qp_num, &A.gid, B.gid_idx, 16, 14)) {
		CHECK(0, "set up %s QPs with the builders: %s", argv[2], strerror(errno));
		return 1;
	}
	if (type == IBV_QPT_UD) {
		struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
					  .grh = { .dgid = B.gid, .sgid_index = (uint8_t)A.gid_idx,
						   .hop_limit = 64 } };

		ah = ibv_create_ah(A.pd, &aa);
		if (!ah)
			return 1;
	}
	/* SROCE_WR_EX_PER_BUILDER=1: N through each builder, not N in all. */
	per_builder = getenv("SROCE_WR_EX_PER_BUILDER") && !strcmp(getenv("SROCE_WR_EX_PER_BUILDER"), "1");
	while ((per_builder ? fewest_per_builder(&tally, ops, with_flush) : posted) < want && errors_reported == 0) {
		uint64_t before = id;

		if (run_batch(&id))
			break;
		posted += id - before;
	}
	CHECK((per_builder ? fewest_per_builder(&tally, ops, with_flush) : posted) >= want,
	      "%s: %lu work requests through the builders%s, every completion and byte checked", argv[2], posted,
	      per_builder ? " (at least N through each)" : "");
	print_tally(&tally, ops, with_flush);
	if (ah)
		ibv_destroy_ah(ah);
	ibv_destroy_qp(A.qp);
	ibv_destroy_qp(B.qp);
	ibv_destroy_cq(ibv_cq_ex_to_cq(A.cq));
	ibv_destroy_cq(ibv_cq_ex_to_cq(B.cq));
	ibv_dereg_mr(A.mr);
	ibv_dereg_mr(B.mr);
	ibv_dealloc_pd(A.pd);
	ibv_close_device(A.ctx);
	if (pair) {
		ibv_dealloc_pd(B.pd);
		ibv_close_device(B.ctx);
	}
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}

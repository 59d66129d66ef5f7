// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_ncm DEV - non-contiguous memory windows (seed 003) through the real
 * provider and kernel: srocedv_alloc_mw_ex, srocedv_bind_mw with layouts,
 * and RDMA WRITE, READ and SEND through the window's one key, between two
 * RC QPs of one device (packets loop through the device's own address).
 * Every byte the layout does not list is checked unchanged. Then what a
 * bound layout pins, and bad layouts, each with its errno.
 */
#include <unistd.h>

#include "infiniband/srocedv.h"
#include "progs_common.h"

#define CELL 8
#define N 1024 /* the matrix: N x N cells */

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_idx;
static struct ibv_cq *cq;
static struct ibv_qp *qa, *qb; /* a: the peer that writes; b: owns the windows */
static uint8_t *src;           /* a's contiguous buffer */
static struct ibv_mr *src_mr;

static const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
static const int bindable = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
static const int remote = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

static int poll_one(struct ibv_wc *wc)
{
	for (int i = 0; i < 10000; i++) {
		if (ibv_poll_cq(cq, 1, wc))
			return 1;
		usleep(500);
	}
	return 0;
}

/* A fresh connected pair (a NAK leaves both QPs in error). */
static int pair_new(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = rw | IBV_ACCESS_MW_BIND };
	const int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;

	if (qa)
		ibv_destroy_qp(qa);
	if (qb)
		ibv_destroy_qp(qb);
	qa = ibv_create_qp(pd, &ia);
	qb = ibv_create_qp(pd, &ia);
	if (!qa || !qb || ibv_modify_qp(qa, &a, mask) || ibv_modify_qp(qb, &a, mask))
		return -1;
	if (qp_to_rts(qa, qb->qp_num, &gid, gid_idx, 4, 14) || qp_to_rts(qb, qa->qp_num, &gid, gid_idx, 4, 14))
		return -1;
	return 0;
}

/* Posts one WR on qp and returns its completion's status (-1: none). */
static int complete(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	wr->send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(qp, wr, &bad) || !poll_one(&wc))
		return -1;
	return wc.status;
}

static int rdma(enum ibv_wr_opcode op, uint64_t va, uint32_t rkey, uint32_t len, size_t at)
{
	struct ibv_sge sge = { (uintptr_t)src + at, len, src_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .wr = { .rdma = { .remote_addr = va, .rkey = rkey } } };

	return complete(qa, &wr);
}

/* Binds mw to layout l on qb: srocedv_bind_mw's errno, or the completion's
 * status + 1000 when it is not success. */
static int bind_layout(struct ibv_mw *mw, const struct srocedv_mw_layout *l, int access)
{
	struct srocedv_mw_bind b = { .wr_id = 1, .send_flags = IBV_SEND_SIGNALED,
				     .rkey = ibv_inc_rkey(mw->rkey),
				     .bind_info = { .layout = l,
						    .mw_access_flags = access | SROCEDV_ACCESS_BIND_MW_NONCONTIG } };
	struct ibv_wc wc;
	int err = mw ? srocedv_bind_mw(qb, mw, &b) : ENOMEM;

	if (err)
		return err;
	if (!poll_one(&wc))
		return 2000;
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_BIND_MW)
		printf("  bind completion: %s, opcode %d\n", ibv_wc_status_str(wc.status), wc.opcode);
	return wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW ? 0 : 1000 + (int)wc.status;
}

/* CHECK_ERR evaluates its first argument twice: bind once. */
#define BIND_ERR(mw, l, access, want, what)                 \
	do {                                                \
		int got_ = bind_layout(mw, l, access);      \
		CHECK_ERR(got_, want, what);                \
	} while (0)

static struct ibv_mw *window(enum ibv_mw_type type, uint32_t descriptors)
{
	struct srocedv_mw_alloc_attr at = { .type = type, .max_descriptors = descriptors };
	struct ibv_mw *mw = srocedv_alloc_mw_ex(pd, &at);

	if (!mw)
		printf("  srocedv_alloc_mw_ex: %s\n", strerror(errno));
	return mw;
}

/* Registered memory of b's, filled with a pattern. */
static struct ibv_mr *memory(size_t len, int access)
{
	uint8_t *p = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);

	for (size_t i = 0; p && i < len; i++)
		p[i] = (uint8_t)(i * 7 + 3);
	return p ? ibv_reg_mr(pd, p, len, access) : NULL;
}

static void memory_free(struct ibv_mr *mr)
{
	void *p = mr->addr;

	ibv_dereg_mr(mr);
	free(p);
}

/* mr's bytes equal the pattern except `n` items of `item` bytes at offs[],
 * which equal src from `from` on, in order. */
static int landed(const struct ibv_mr *mr, const size_t *offs, size_t n, size_t item, size_t from)
{
	const uint8_t *p = mr->addr;
	size_t bad = 0;
	uint8_t *want = malloc(mr->length);

	for (size_t i = 0; i < mr->length; i++)
		want[i] = (uint8_t)(i * 7 + 3);
	for (size_t i = 0; i < n; i++)
		memcpy(want + offs[i], src + from + i * item, item);
	for (size_t i = 0; i < mr->length; i++)
		bad += want[i] != p[i];
	free(want);
	return bad == 0;
}

static void test_matrix_column(void)
{
	struct ibv_mr *m = memory((size_t)N * N * CELL, bindable);
	struct ibv_mw *mw = window(IBV_MW_TYPE_1, N);
	struct srocedv_mw_stride rows = { N * CELL, N };
	struct srocedv_mw_layout_entry e = { .mem_obj_type = SROCEDV_MW_ENTRY_USE_MR, .mr = m,
					     .addr = (uintptr_t)m->addr + 37 * CELL, .length = CELL,
					     .interleaved = { .dimension_count = 1, .dimension = &rows } };
	struct srocedv_mw_layout l = { .type = SROCEDV_MW_LAYOUT_TYPE_INTERLEAVED, .entry_count = 1, .entries = &e };
	static size_t offs[N];

	CHECK(m && mw, "a 1024x1024 matrix MR and a window with 1024 descriptors");
	CHECK(bind_layout(mw, &l, remote) == 0, "column 37 bound through srocedv_bind_mw");
	for (size_t r = 0; r < N; r++) {
		offs[r] = r * N * CELL + 37 * CELL;
		for (size_t i = 0; i < CELL; i++)
			src[r * CELL + i] = (uint8_t)(r ^ (i << 4) ^ 0xa5);
	}
	CHECK(rdma(IBV_WR_RDMA_WRITE, 0, mw->rkey, N * CELL, 0) == IBV_WC_SUCCESS, "RDMA WRITE of 8 KiB into it");
	CHECK(landed(m, offs, N, CELL, 0), "exactly the column's cells changed (8 MiB compared)");
	CHECK(rdma(IBV_WR_RDMA_READ, 100 * CELL, mw->rkey, 300 * CELL, 32768) == IBV_WC_SUCCESS &&
		      memcmp(src + 32768, src + 100 * CELL, 300 * CELL) == 0,
	      "RDMA READ of rows 100..399 back from it");
	CHECK_ERR(ibv_dereg_mr(m), EBUSY, "the MR while the layout is bound");
	CHECK(ibv_dealloc_mw(mw) == 0, "the window deallocated");
	memory_free(m);
}

static void test_cube_face(void)
{
	enum { X = 16, Y = 12, Z = 10, X0 = 3 };
	struct ibv_mr *m = memory((size_t)X * Y * Z * CELL, bindable);
	struct ibv_mw *mw = window(IBV_MW_TYPE_1, Y * Z);
	struct srocedv_mw_stride dims[2] = { { X * CELL, Y }, { (uint64_t)X * Y * CELL, Z } };
	struct srocedv_mw_layout_entry e = { .mem_obj_type = SROCEDV_MW_ENTRY_USE_MR, .mr = m,
					     .addr = (uintptr_t)m->addr + X0 * CELL, .length = CELL,
					     .interleaved = { .dimension_count = 2, .dimension = dims } };
	struct srocedv_mw_layout l = { .type = SROCEDV_MW_LAYOUT_TYPE_INTERLEAVED, .entry_count = 1, .entries = &e };
	size_t offs[Y * Z];

	for (size_t k = 0; k < Z; k++)
		for (size_t j = 0; j < Y; j++)
			offs[k * Y + j] = ((k * Y + j) * X + X0) * CELL;
	CHECK(bind_layout(mw, &l, remote) == 0, "a cube face bound (two stride dimensions)");
	CHECK(rdma(IBV_WR_RDMA_WRITE, 0, mw->rkey, Y * Z * CELL, 4096) == IBV_WC_SUCCESS &&
		      landed(m, offs, Y * Z, CELL, 4096),
	      "a write fills exactly the face");
	ibv_dealloc_mw(mw);
	memory_free(m);
}

static void test_composite_nested_and_ratio(void)
{
	struct ibv_mr *m[3] = { memory(8192, bindable), memory(4096, bindable), memory(12288, bindable) };
	struct ibv_mw *comp = window(IBV_MW_TYPE_1, 8), *outer = window(IBV_MW_TYPE_2, 8), *il = window(IBV_MW_TYPE_1, 64);
	struct srocedv_mw_layout_entry three[3] = {
		{ .mem_obj_type = SROCEDV_MW_ENTRY_USE_MR, .mr = m[0], .addr = (uintptr_t)m[0]->addr + 100, .length = 1000 },
		{ .mem_obj_type = SROCEDV_MW_ENTRY_USE_MR, .mr = m[1], .addr = (uintptr_t)m[1]->addr, .length = 4096 },
		{ .mem_obj_type = SROCEDV_MW_ENTRY_USE_MR, .mr = m[2], .addr = (uintptr_t)m[2]->addr + 8199, .length = 500 },
	};
	struct srocedv_mw_layout l3 = { .type = SROCEDV_MW_LAYOUT_TYPE_COMPOSITE, .entry_count = 3, .entries = three };
	size_t off0 = 100, off1 = 0, off2 = 8199;

	CHECK(bind_layout(comp, &l3, remote) == 0, "a composite of three MRs bound");
	CHECK(rdma(IBV_WR_RDMA_WRITE, 0, comp->rkey, 5596, 0) == IBV_WC_SUCCESS && landed(m[0], &off0, 1, 1000, 0) &&
		      landed(m[1], &off1, 1, 4096, 1000) && landed(m[2], &off2, 1, 500, 5096),
	      "a write of 5596 bytes lands in the three ranges only");

	/* A layout of layouts: bytes 990..1009 of the composite (across its
	 * first seam), then 16 bytes of its third piece. */
	struct srocedv_mw_layout_entry nest[2] = {
		{ .mem_obj_type = SROCEDV_MW_ENTRY_USE_MW, .mw = comp, .addr = 990, .length = 20 },
		{ .mem_obj_type = SROCEDV_MW_ENTRY_USE_MW, .mw = comp, .addr = 5100, .length = 16 },
	};
	struct srocedv_mw_layout ln = { .type = SROCEDV_MW_LAYOUT_TYPE_COMPOSITE, .entry_count = 2, .entries = nest };
	CHECK(bind_layout(outer, &ln, remote) == 0, "a type 2 window bound to a layout of the composite (depth 2)");
	CHECK(rdma(IBV_WR_RDMA_WRITE, 0, outer->rkey, 36, 20000) == IBV_WC_SUCCESS &&
		      memcmp((uint8_t *)m[0]->addr + 1090, src + 20000, 10) == 0 &&
		      memcmp(m[1]->addr, src + 20010, 10) == 0 &&
		      memcmp((uint8_t *)m[2]->addr + 8199 + 4, src + 20020, 16) == 0,
	      "a write through it lands across both levels");
	CHECK_ERR(ibv_dealloc_mw(comp), EBUSY, "the inner window while the outer layout is bound");

	/* 2:1: two 16-byte items of A (32 apart) for each 24-byte item of B. */
	struct srocedv_mw_stride sa = { 32, 8 }, sb = { 40, 4 };
	struct srocedv_mw_layout_entry two[2] = {
		{ .mem_obj_type = SROCEDV_MW_ENTRY_USE_MR, .mr = m[1], .addr = (uintptr_t)m[1]->addr + 2048, .length = 16,
		  .interleaved = { .repeat_count = 2, .dimension_count = 1, .dimension = &sa } },
		{ .mem_obj_type = SROCEDV_MW_ENTRY_USE_MR, .mr = m[1], .addr = (uintptr_t)m[1]->addr + 3072, .length = 24,
		  .interleaved = { .repeat_count = 1, .dimension_count = 1, .dimension = &sb } },
	};
	struct srocedv_mw_layout l2 = { .type = SROCEDV_MW_LAYOUT_TYPE_INTERLEAVED, .entry_count = 2, .entries = two };
	int ok = bind_layout(il, &l2, remote) == 0 && rdma(IBV_WR_RDMA_WRITE, 0, il->rkey, 224, 30000) == IBV_WC_SUCCESS;
	for (size_t r = 0, at = 30000; ok && r < 4; r++, at += 56)
		ok = memcmp((uint8_t *)m[1]->addr + 2048 + 64 * r, src + at, 16) == 0 &&
		     memcmp((uint8_t *)m[1]->addr + 2048 + 64 * r + 32, src + at + 16, 16) == 0 &&
		     memcmp((uint8_t *)m[1]->addr + 3072 + 40 * r, src + at + 32, 24) == 0;
	CHECK(ok, "2:1 non-uniform interleaving: A, A, B in every round");

	/* Invalidation: LOCAL_INV of the type 2 window; its key is refused. */
	struct ibv_send_wr inv = { .wr_id = 5, .opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = outer->rkey };
	CHECK(complete(qb, &inv) == IBV_WC_SUCCESS, "LOCAL_INV of the type 2 layout window");
	uint8_t before[36];
	memcpy(before, (uint8_t *)m[0]->addr + 1090, 10);
	CHECK(rdma(IBV_WR_RDMA_WRITE, 0, outer->rkey, 36, 0) == IBV_WC_REM_ACCESS_ERR &&
		      memcmp(before, (uint8_t *)m[0]->addr + 1090, 10) == 0,
	      "a write through the invalidated key: remote access error, no byte changed");
	pair_new();
	CHECK(ibv_dealloc_mw(outer) == 0 && ibv_dealloc_mw(comp) == 0 && ibv_dealloc_mw(il) == 0,
	      "outer, then inner windows deallocated");
	for (int i = 0; i < 3; i++)
		memory_free(m[i]);
}

static void test_send_through_lkey(void)
{
	enum { ROWS = 256, COLS = 16 };
	struct ibv_mr *m = memory(ROWS * COLS * CELL, bindable);
	struct ibv_mw *mw = window(IBV_MW_TYPE_1, ROWS);
	struct srocedv_mw_stride rows = { COLS * CELL, ROWS };
	struct srocedv_mw_layout_entry e = { .mem_obj_type = SROCEDV_MW_ENTRY_USE_MR, .mr = m,
					     .addr = (uintptr_t)m->addr, .length = CELL,
					     .interleaved = { .dimension_count = 1, .dimension = &rows } };
	struct srocedv_mw_layout l = { .type = SROCEDV_MW_LAYOUT_TYPE_INTERLEAVED, .entry_count = 1, .entries = &e };
	struct srocedv_mw_attr attr;
	struct ibv_recv_wr *rbad, rwr = { .wr_id = 7, .num_sge = 1 };
	struct ibv_sge rsge = { (uintptr_t)src + 40000, ROWS * CELL, src_mr->lkey };
	struct ibv_wc wc;
	int ok = 1;

	CHECK(bind_layout(mw, &l, remote | IBV_ACCESS_LOCAL_WRITE) == 0, "a column bound with LOCAL_WRITE");
	CHECK(srocedv_query_mw(mw, &attr) == 0 && attr.lkey == mw->rkey && attr.max_descriptors == ROWS,
	      "srocedv_query_mw: its lkey and descriptors");
	rwr.sg_list = &rsge;
	CHECK(ibv_post_recv(qa, &rwr, &rbad) == 0, "a receive posted on the peer");
	struct ibv_sge sge = { 0, ROWS * CELL, attr.lkey };
	struct ibv_send_wr send = { .wr_id = 8, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND };
	struct ibv_send_wr *sbad;
	struct ibv_wc wcs[2];
	int n = 0;
	send.send_flags = IBV_SEND_SIGNALED;
	if (ibv_post_send(qb, &send, &sbad) == 0)
		while (n < 2 && poll_one(&wc))
			wcs[n++] = wc;
	ok = n == 2;
	for (int i = 0; i < n; i++)
		ok &= wcs[i].status == IBV_WC_SUCCESS && (wcs[i].wr_id != 7 || wcs[i].byte_len == ROWS * CELL);
	CHECK(ok, "SEND out of the column through the window's lkey: both completions, %u bytes", ROWS * CELL);
	for (size_t r = 0; ok && r < ROWS; r++)
		ok &= memcmp(src + 40000 + r * CELL, (uint8_t *)m->addr + r * COLS * CELL, CELL) == 0;
	CHECK(ok, "the peer received the column, packed");
	/* Into a layout: the peer's SEND scatters through a receive naming the lkey. */
	struct ibv_recv_wr into = { .wr_id = 10, .num_sge = 1 };
	struct ibv_sge isge = { 0, ROWS * CELL, attr.lkey };
	struct ibv_sge ssge = { (uintptr_t)src + 8192, ROWS * CELL, src_mr->lkey };
	struct ibv_send_wr from = { .wr_id = 11, .sg_list = &ssge, .num_sge = 1, .opcode = IBV_WR_SEND,
				    .send_flags = IBV_SEND_SIGNALED };
	static size_t offs[ROWS];
	into.sg_list = &isge;
	n = 0;
	if (ibv_post_recv(qb, &into, &rbad) == 0 && ibv_post_send(qa, &from, &sbad) == 0)
		while (n < 2 && poll_one(&wc))
			wcs[n++] = wc;
	for (size_t r = 0; r < ROWS; r++)
		offs[r] = r * COLS * CELL;
	CHECK(n == 2 && wcs[0].status == IBV_WC_SUCCESS && wcs[1].status == IBV_WC_SUCCESS &&
		      landed(m, offs, ROWS, CELL, 8192),
	      "SEND into the column through a receive naming the lkey: exactly its cells changed");
	ibv_dealloc_mw(mw);
	memory_free(m);
}

static void test_bad_layouts(void)
{
	struct ibv_mr *m = memory(16384, bindable), *nobind = memory(4096, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mw *w = window(IBV_MW_TYPE_1, 16), *plain = window(IBV_MW_TYPE_1, 0);
	struct srocedv_mw_layout_entry es[17];
	struct srocedv_mw_stride dims[5] = { { 8, 2 }, { 16, 2 }, { 32, 2 }, { 64, 2 }, { 128, 2 } };
	struct srocedv_mw_layout l = { .type = SROCEDV_MW_LAYOUT_TYPE_COMPOSITE, .entry_count = 1, .entries = es };
	uint64_t base = (uintptr_t)m->addr;

	for (int i = 0; i < 17; i++)
		es[i] = (struct srocedv_mw_layout_entry){ .mem_obj_type = SROCEDV_MW_ENTRY_USE_MR, .mr = m,
							  .addr = base, .length = 8 };
	l.entry_count = 17;
	BIND_ERR(w, &l, remote, E2BIG, "17 entries");
	l.entry_count = 1;
	l.type = SROCEDV_MW_LAYOUT_TYPE_INTERLEAVED;
	es[0].interleaved.dimension = dims;
	es[0].interleaved.dimension_count = 5;
	BIND_ERR(w, &l, remote, E2BIG, "5 stride dimensions");
	es[0].interleaved.dimension_count = 1;
	es[0].length = 16;
	BIND_ERR(w, &l, remote, EINVAL, "a stride shorter than the item (overlap)");
	struct srocedv_mw_stride huge = { 1ull << 62, 8 };
	es[0].length = 8;
	es[0].interleaved.dimension = &huge;
	BIND_ERR(w, &l, remote, EOVERFLOW, "a stride that overflows");
	struct srocedv_mw_stride far = { 4096, 5 };
	es[0].interleaved.dimension = &far;
	BIND_ERR(w, &l, remote, ERANGE, "items past the MR's end");
	struct srocedv_mw_stride many = { 16, 17 };
	es[0].interleaved.dimension = &many;
	BIND_ERR(w, &l, remote, E2BIG, "more pieces than the window's 16 descriptors");
	BIND_ERR(plain, &l, remote, EINVAL, "a window without descriptors");
	l.type = SROCEDV_MW_LAYOUT_TYPE_COMPOSITE;
	es[0].interleaved.dimension_count = 0;
	es[0].mr = nobind;
	es[0].addr = (uintptr_t)nobind->addr;
	BIND_ERR(w, &l, remote, EACCES, "an MR without MW_BIND");
	es[0].mr = m;
	es[0].addr = base;
	CHECK(bind_layout(w, &l, remote) == 0, "a good one binds");
	es[0].mem_obj_type = SROCEDV_MW_ENTRY_USE_MW;
	es[0].mw = w;
	es[0].addr = 0;
	BIND_ERR(w, &l, remote, ELOOP, "the window inside itself");
	struct ibv_mw *w2 = window(IBV_MW_TYPE_1, 16);
	BIND_ERR(w2, &l, remote | IBV_ACCESS_REMOTE_ATOMIC, EACCES, "a right the inner window lacks");
	uint32_t old = w->rkey;
	struct srocedv_mw_bind unbind = { .wr_id = 9, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;
	CHECK(srocedv_bind_mw(qb, w, &unbind) == 0 && poll_one(&wc) && wc.status == IBV_WC_SUCCESS,
	      "a zero-length bind unbinds the layout window");
	struct ibv_mw stale = *w;
	stale.rkey = old;
	es[0].mw = &stale;
	BIND_ERR(w2, &l, remote, EINVAL, "an entry naming a stale window key");
	CHECK(rdma(IBV_WR_RDMA_WRITE, 0, old, 8, 0) == IBV_WC_REM_ACCESS_ERR, "the stale key: remote access error");
	pair_new();
	ibv_dealloc_mw(w2);
	ibv_dealloc_mw(w);
	ibv_dealloc_mw(plain);
	memory_free(m);
	memory_free(nobind);
}

int main(int argc, char **argv)
{
	struct srocedv_device_attr da = { .comp_mask = SROCEDV_DEVICE_ATTR_MASK_MW_LAYOUT_CAPS };

	if (argc != 2 || open_with_gid(argv[1], &ctx, &pd, &gid, &gid_idx))
		return 2;
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	src = aligned_alloc(4096, 65536);
	src_mr = src ? ibv_reg_mr(pd, src, 65536, rw) : NULL;
	if (!cq || !src_mr || pair_new()) {
		fprintf(stderr, "setup failed\n");
		return 2;
	}
	for (size_t i = 0; i < 65536; i++)
		src[i] = (uint8_t)(i * 13 + 1);
	CHECK(srocedv_query_device(ctx, &da) == 0 && (da.comp_mask & SROCEDV_DEVICE_ATTR_MASK_MW_LAYOUT_CAPS) &&
		      da.mw_layout_caps.max_list_size == 16 && da.mw_layout_caps.max_recursion_depth == 3 &&
		      da.mw_layout_caps.max_stride_dimension == 4 &&
		      (da.mw_layout_caps.general_caps & SROCEDV_MW_LAYOUT_SUPPORT_INTERLEAVED_NONUNIFORM_REPETITION),
	      "srocedv_query_device: the layout caps");
	test_matrix_column();
	test_cube_face();
	test_composite_nested_and_ratio();
	test_send_through_lkey();
	test_bad_layouts();
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_dereg_mr(src_mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	printf("%s\n", failures ? "FAILED" : "PASSED");
	return failures ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_bench_column - sending one column of a ROWS x ROWS matrix of 8-byte
 * cells to a contiguous remote buffer, three ways, for `make bench`
 * (scripts/bench/in-vm.sh). Not a test: it asserts nothing about speed.
 *
 *   sroce_bench_column DEV PEER_DEV mw|sge|pack ROWS SECONDS
 *
 * One process holds RC QP A on DEV and QP B on PEER_DEV (two hosts'
 * devices, both visible from init_net). A owns the matrix (one MR of
 * ROWS * ROWS * 8 bytes); B owns a contiguous buffer of ROWS * 8 bytes. Each
 * column goes from A to B by RDMA WRITE:
 *   mw   through a non-contiguous memory window (seed 003, sroce only): the
 *        column bound before the run as an interleaved layout with
 *        IBV_ACCESS_LOCAL_WRITE, so that its key is an lkey; one WRITE with
 *        one SGE {0, ROWS * 8, window key} per column. The bind is timed
 *        (the first, then the median of 9 rebinds: "bind:" line), not
 *        counted in the rate;
 *   sge  one SGE per cell, in as many WRs as the QP's max_send_sge requires
 *        (queried), posted as one chain whose last WR is signaled; the SGE
 *        lists are built once, before the run;
 *   pack a memcpy loop gathers the column into a contiguous registered
 *        buffer (one per column in flight), then one WRITE of it.
 * Every way keeps DEPTH columns in flight, with one signaled WR per column.
 * The column is always the same one (ROWS / 2); the remote buffer is
 * overwritten. Completed columns are counted over the middle of the run
 * (one second of margin at each end, as perftest -D S -f 1). After the run
 * one more column is sent and B's buffer compared with the column.
 *
 * Output (scripts/bench/report.py reads the line after "#rows"):
 *   #rows #columns seconds columns/s us/column MB/s
 * Exit 0, 1 on a failure (setup, post, completion, compare), 3 if the way
 * is not supported by DEV (mw on a device that is not sroce).
 */
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "infiniband/srocedv.h"
#include "progs_common.h"

enum { CELL = 8, DEPTH = 16 };
enum way { WAY_MW, WAY_SGE, WAY_PACK };

static enum way way;
static size_t rows, col;
static struct qp_end A, B;
static uint8_t *matrix, *dst, *pack;
static struct ibv_mr *matrix_mr, *dst_mr, *pack_mr;
static struct ibv_mw *mw;
static uint32_t mw_key;
static unsigned int sge_per_wr, wr_per_col;
static struct ibv_send_wr *chain; /* sge: the column's WRs; mw, pack: one */
static struct ibv_sge *sges;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t cell_value(size_t r, size_t c)
{
	return 0x5c0e000000000000ull ^ ((uint64_t)r << 24) ^ c;
}

static enum ibv_mtu active_mtu(struct ibv_context *ctx)
{
	struct ibv_port_attr pa;

	return ibv_query_port(ctx, 1, &pa) ? IBV_MTU_1024 : pa.active_mtu;
}

static int qp_init(struct qp_end *e, const char *dev, unsigned int send_wr, unsigned int send_sge, int access)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = send_wr, .max_recv_wr = 1, .max_send_sge = send_sge, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = access };

	e->cq = ibv_create_cq(e->ctx, DEPTH * 2 + 8, NULL, NULL, 0);
	if (!e->cq)
		return -1;
	ia.send_cq = ia.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &ia);
	if (!e->qp) {
		fprintf(stderr, "%s: ibv_create_qp (%u WRs, %u SGEs): %s\n", dev, send_wr, send_sge, strerror(errno));
		return -1;
	}
	return ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* One completion of A's, busy-polled, for at most 10 s: 1, or 0 on a
 * timeout or an error status (printed). */
static int wait_one(struct ibv_wc *wc)
{
	double limit = now_s() + 10;

	while (now_s() < limit) {
		int n = ibv_poll_cq(A.cq, 1, wc);

		if (n < 0)
			break;
		if (n == 1) {
			if (wc->status == IBV_WC_SUCCESS)
				return 1;
			fprintf(stderr, "completion (wr_id %llu): %s\n", (unsigned long long)wc->wr_id,
				ibv_wc_status_str(wc->status));
			return 0;
		}
	}
	fprintf(stderr, "no completion within 10 s\n");
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* mw: the column as a layout window on A, bound with LOCAL_WRITE so that
 * its key is an lkey. The first bind on the fresh QP, then REBINDS more of
 * the same window to the same column, each timed from the post to its
 * completion: prints the first and the median of the others (what sending
 * a different column each time would add per column). */
enum { REBINDS = 9 };
static int bind_column(void)
{
	struct srocedv_mw_alloc_attr at = { .type = IBV_MW_TYPE_1, .max_descriptors = (uint32_t)rows };
	struct srocedv_mw_stride stride = { rows * CELL, rows };
	struct srocedv_mw_layout_entry e = { .mem_obj_type = SROCEDV_MW_ENTRY_USE_MR, .mr = matrix_mr,
					     .addr = (uintptr_t)matrix + col * CELL, .length = CELL,
					     .interleaved = { .dimension_count = 1, .dimension = &stride } };
	struct srocedv_mw_layout l = { .type = SROCEDV_MW_LAYOUT_TYPE_INTERLEAVED, .entry_count = 1, .entries = &e };
	struct srocedv_mw_bind b = { .wr_id = ~0ull, .send_flags = IBV_SEND_SIGNALED,
				     .bind_info = { .layout = &l,
						    .mw_access_flags = IBV_ACCESS_LOCAL_WRITE |
								       SROCEDV_ACCESS_BIND_MW_NONCONTIG } };
	struct srocedv_mw_attr attr = { 0 };
	struct ibv_wc wc;
	double t[REBINDS + 1];
	int err;

	mw = srocedv_alloc_mw_ex(A.pd, &at);
	if (!mw) {
		fprintf(stderr, "srocedv_alloc_mw_ex (%zu descriptors): %s\n", rows, strerror(errno));
		return -1;
	}
	for (int i = 0; i <= REBINDS; i++) {
		b.rkey = ibv_inc_rkey(mw->rkey);
		t[i] = now_s();
		err = srocedv_bind_mw(A.qp, mw, &b);
		if (err) {
			fprintf(stderr, "srocedv_bind_mw (bind %d): %s\n", i + 1, strerror(err));
			return -1;
		}
		if (!wait_one(&wc) || wc.opcode != IBV_WC_BIND_MW)
			return -1;
		t[i] = now_s() - t[i];
	}
	qsort(t + 1, REBINDS, sizeof(t[0]), cmp_double);
	err = srocedv_query_mw(mw, &attr);
	if (err) {
		fprintf(stderr, "srocedv_query_mw: %s\n", strerror(err));
		return -1;
	}
	mw_key = attr.lkey;
	printf("bind: %.1f us (srocedv_bind_mw of a %zu-descriptor column, post to completion; "
	       "the first bind on the QP took %.1f us, this is the median of %d rebinds after it)\n",
	       t[1 + REBINDS / 2] * 1e6, rows, t[0] * 1e6, REBINDS);
	return 0;
}

/* The WRs of one column, built once (wr_id set at post). */
static int build(void)
{
	unsigned int n = wr_per_col;

	chain = calloc(n, sizeof(*chain));
	sges = calloc(way == WAY_SGE ? rows : 1, sizeof(*sges));
	if (!chain || !sges)
		return -1;
	for (unsigned int i = 0; i < n; i++) {
		chain[i].opcode = IBV_WR_RDMA_WRITE;
		chain[i].next = i + 1 < n ? &chain[i + 1] : NULL;
		chain[i].send_flags = i + 1 == n ? IBV_SEND_SIGNALED : 0;
		chain[i].wr.rdma.rkey = dst_mr->rkey;
		chain[i].wr.rdma.remote_addr = (uintptr_t)dst + (uint64_t)i * sge_per_wr * CELL;
	}
	switch (way) {
	case WAY_MW:
		sges[0] = (struct ibv_sge){ 0, (uint32_t)(rows * CELL), mw_key };
		chain[0].sg_list = sges;
		chain[0].num_sge = 1;
		break;
	case WAY_SGE:
		for (size_t r = 0; r < rows; r++)
			sges[r] = (struct ibv_sge){ (uintptr_t)matrix + (r * rows + col) * CELL, CELL, matrix_mr->lkey };
		for (unsigned int i = 0; i < n; i++) {
			size_t first = (size_t)i * sge_per_wr;

			chain[i].sg_list = &sges[first];
			chain[i].num_sge = (int)(rows - first < sge_per_wr ? rows - first : sge_per_wr);
		}
		break;
	case WAY_PACK:
		chain[0].sg_list = sges;
		chain[0].num_sge = 1;
		break;
	}
	return 0;
}

/* Posts column number seq (its last WR's wr_id). */
static int post_column(uint64_t seq)
{
	struct ibv_send_wr *bad;
	unsigned int last = wr_per_col - 1;

	if (way == WAY_PACK) {
		uint8_t *slot = pack + (seq % DEPTH) * rows * CELL;
		const uint8_t *from = matrix + col * CELL;

		for (size_t r = 0; r < rows; r++)
			memcpy(slot + r * CELL, from + r * rows * CELL, CELL);
		sges[0] = (struct ibv_sge){ (uintptr_t)slot, (uint32_t)(rows * CELL), pack_mr->lkey };
	}
	chain[last].wr_id = seq;
	return ibv_post_send(A.qp, chain, &bad);
}

static int setup(const char *dev, const char *peer)
{
	struct ibv_device_attr da;
	struct ibv_qp_init_attr qia;
	struct ibv_qp_attr qa;
	unsigned int want_sge = 1, want_wr = DEPTH;
	enum ibv_mtu mtu;
	size_t msize = rows * rows * CELL;

	if (open_with_gid(dev, &A.ctx, &A.pd, &A.gid, &A.gid_idx) ||
	    open_with_gid(peer, &B.ctx, &B.pd, &B.gid, &B.gid_idx))
		return -1;
	if (way == WAY_MW && !srocedv_is_supported(A.ctx)) {
		printf("%s: not a sroce device, no non-contiguous windows\n", dev);
		exit(3);
	}
	if (ibv_query_device(A.ctx, &da)) {
		perror("ibv_query_device");
		return -1;
	}
	if (way == WAY_SGE) {
		want_sge = (unsigned int)(rows < (size_t)da.max_sge ? rows : (size_t)da.max_sge);
		want_wr = DEPTH * (unsigned int)((rows + want_sge - 1) / want_sge);
		if (want_wr > (unsigned int)da.max_qp_wr) {
			fprintf(stderr, "%s: %u WRs in flight needed, max_qp_wr %d\n", dev, want_wr, da.max_qp_wr);
			return -1;
		}
	}
	if (qp_init(&A, dev, want_wr, want_sge, IBV_ACCESS_MW_BIND) ||
	    qp_init(&B, peer, 1, 1, IBV_ACCESS_REMOTE_WRITE))
		return -1;
	/* The SGEs per WR: what the QP got, never more than asked for. */
	if (ibv_query_qp(A.qp, &qa, IBV_QP_CAP, &qia)) {
		perror("ibv_query_qp");
		return -1;
	}
	sge_per_wr = qa.cap.max_send_sge < want_sge ? qa.cap.max_send_sge : want_sge;
	if (!sge_per_wr)
		return -1;
	wr_per_col = way == WAY_SGE ? (unsigned int)((rows + sge_per_wr - 1) / sge_per_wr) : 1;
	mtu = active_mtu(A.ctx) < active_mtu(B.ctx) ? active_mtu(A.ctx) : active_mtu(B.ctx);
	if (qp_to_rts_mtu(A.qp, B.qp->qp_num, &B.gid, A.gid_idx, 1, 14, mtu) ||
	    qp_to_rts_mtu(B.qp, A.qp->qp_num, &A.gid, B.gid_idx, 1, 14, mtu)) {
		perror("connect");
		return -1;
	}

	matrix = aligned_alloc(4096, msize);
	dst = aligned_alloc(4096, (rows * CELL + 4095) & ~(size_t)4095);
	if (!matrix || !dst)
		return -1;
	memset(matrix, 0, msize);
	for (size_t r = 0; r < rows; r++)
		for (size_t c = 0; c < rows; c++) {
			uint64_t v = cell_value(r, c);

			memcpy(matrix + (r * rows + c) * CELL, &v, CELL);
		}
	matrix_mr = ibv_reg_mr(A.pd, matrix, msize,
			       IBV_ACCESS_LOCAL_WRITE | (way == WAY_MW ? IBV_ACCESS_MW_BIND : 0));
	dst_mr = ibv_reg_mr(B.pd, dst, rows * CELL, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!matrix_mr || !dst_mr) {
		perror("ibv_reg_mr");
		return -1;
	}
	if (way == WAY_PACK) {
		pack = aligned_alloc(4096, DEPTH * rows * CELL);
		pack_mr = pack ? ibv_reg_mr(A.pd, pack, DEPTH * rows * CELL, IBV_ACCESS_LOCAL_WRITE) : NULL;
		if (!pack_mr) {
			perror("the pack buffers");
			return -1;
		}
	}
	if (way == WAY_MW && bind_column())
		return -1;
	printf("%s -> %s, way %s, %zu x %zu matrix (%zu MiB), column %zu, %d columns in flight, "
	       "max_sge %d, QP max_send_sge %u: %u SGE(s) per WR, %u WR(s) per column, path MTU %d\n",
	       dev, peer, way == WAY_MW ? "mw" : way == WAY_SGE ? "sge" : "pack", rows, rows, msize >> 20, col,
	       DEPTH, da.max_sge, qa.cap.max_send_sge, sge_per_wr, wr_per_col,
	       128 << mtu);
	return build();
}

/* The last column sent landed, packed, in B's buffer. */
static int landed(void)
{
	for (size_t r = 0; r < rows; r++) {
		uint64_t v;

		memcpy(&v, dst + r * CELL, CELL);
		if (v != cell_value(r, col)) {
			fprintf(stderr, "row %zu: %#llx, want %#llx\n", r, (unsigned long long)v,
				(unsigned long long)cell_value(r, col));
			return 0;
		}
	}
	return 1;
}

int main(int argc, char **argv)
{
	double t0, start, end, seconds;
	uint64_t posted = 0, done = 0, counted = 0;
	struct ibv_wc wc[DEPTH];

	if (argc != 6) {
		fprintf(stderr, "usage: %s DEV PEER_DEV mw|sge|pack ROWS SECONDS\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[3], "mw"))
		way = WAY_MW;
	else if (!strcmp(argv[3], "sge"))
		way = WAY_SGE;
	else if (!strcmp(argv[3], "pack"))
		way = WAY_PACK;
	else
		return 2;
	rows = strtoul(argv[4], NULL, 0);
	seconds = atof(argv[5]);
	if (rows < 2 || rows > 8192 || seconds < 3) {
		fprintf(stderr, "ROWS 2..8192, SECONDS >= 3\n");
		return 2;
	}
	col = rows / 2;
	if (setup(argv[1], argv[2])) {
		CHECK(0, "set up %s -> %s (%s, %zu rows)", argv[1], argv[2], argv[3], rows);
		return 1;
	}
	memset(dst, 0, rows * CELL);
	t0 = now_s();
	start = t0 + 1;
	end = t0 + seconds - 1;
	for (;;) {
		double t = now_s();
		int n;

		if (t >= t0 + seconds)
			break;
		while (posted - done < DEPTH) {
			int err = post_column(posted);

			if (err) {
				CHECK(0, "post column %llu (%s): %s", (unsigned long long)posted, argv[3], strerror(err));
				return 1;
			}
			posted++;
		}
		n = ibv_poll_cq(A.cq, DEPTH, wc);
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				CHECK(0, "completion of column %llu: %s", (unsigned long long)wc[i].wr_id,
				      ibv_wc_status_str(wc[i].status));
				return 1;
			}
			done++;
			if (t >= start && t < end)
				counted++;
		}
	}
	/* Drain, then one more column, compared. */
	while (done < posted) {
		if (!wait_one(wc))
			return 1;
		done++;
	}
	memset(dst, 0, rows * CELL);
	if (post_column(posted) || !wait_one(wc)) {
		CHECK(0, "the last column");
		return 1;
	}
	CHECK(landed(), "the column landed, packed, in the peer's buffer (%zu cells)", rows);
	if (failures)
		return 1;

	double rate = (double)counted / (end - start);

	printf("#rows #columns seconds columns/s us/column MB/s\n");
	printf("%zu %llu %.3f %.2f %.2f %.3f\n", rows, (unsigned long long)counted, end - start, rate,
	       rate > 0 ? 1e6 / rate : 0.0, rate * (double)(rows * CELL) / 1e6);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_atomic_write_peer - IBA 1.5 ATOMIC WRITE from an RC QP on one device
 * to an RC QP on another, posted through the device's own provider:
 *
 *   sroce_atomic_write_peer FROM_DEV TO_DEV N [SEED]
 *
 * 85-rxe-interop runs it from rdma_rxe to sroce where rxe has ATOMIC WRITE
 * (Linux 6.2 on), the direction sroce_wr_ex cannot take: its builders mix opcodes and gathers in batches,
 * which rdma-core 44's librxe mangles (Documentation/extended-verbs.md,
 * "Against rdma_rxe"). ATOMIC WRITE needs neither: its 8 bytes travel in
 * the WQE, and each WR here is a batch of its own (ibv_wr_start,
 * ibv_wr_atomic_write, ibv_wr_complete).
 *
 * Each WR stores a random value at a random 8-byte slot of TO's 64 KiB MR.
 * Checked: every completion (SUCCESS, IBV_WC_ATOMIC_WRITE, its wr_id, one
 * at a time), the slot after each one, the whole MR against a mirror every
 * 256 WRs and at the end (no byte written elsewhere), and no completion at
 * all on TO's side (an ATOMIC WRITE takes no receive WQE).
 */
#include <stdint.h>
#include <time.h>

#include "progs_common.h"
#include "sroce-abi.h"

enum { MR_BYTES = 64 * 1024, SLOTS = MR_BYTES / 8, WHOLE_EVERY = 256, WAIT_S = 20 };

static uint64_t rng = 88172645463325252ull;

/* An RC QP on e's device: with the ATOMIC WRITE builder when `sender`,
 * the remote rights an ATOMIC WRITE target needs otherwise; left in INIT. */
static int end_init(struct qp_end *e, int sender)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = e->pd,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = sender ? 0 : IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC };

	e->cq = ibv_create_cq(e->ctx, 16, NULL, NULL, 0);
	if (!e->cq)
		return -1;
	ia.send_cq = ia.recv_cq = e->cq;
	if (sender) {
		ia.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		ia.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE;
	}
	e->qp = ibv_create_qp_ex(e->ctx, &ia);
	if (!e->qp)
		return -1;
	return ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* The next completion of cq, waiting up to WAIT_S seconds: 1, or 0. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	time_t end = time(NULL) + WAIT_S;

	do {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n)
			return n > 0;
	} while (time(NULL) < end);
	return 0;
}

static int has_atomic_write(const char *name, struct ibv_context *ctx)
{
	struct ibv_device_attr_ex dx;

	if (ibv_query_device_ex(ctx, NULL, &dx))
		return 0;
	CHECK(dx.device_cap_flags_ex & SROCE_DEVICE_CAP_ATOMIC_WRITE, "%s offers ATOMIC WRITE", name);
	return !!(dx.device_cap_flags_ex & SROCE_DEVICE_CAP_ATOMIC_WRITE);
}

int main(int argc, char **argv)
{
	static uint64_t mirror[SLOTS];
	struct qp_end from, to;
	unsigned long n, done = 0, bad = 0;
	struct ibv_qp_ex *qpx;
	struct ibv_mr *mr;
	uint64_t *target;
	struct ibv_wc wc;

	if (argc < 4) {
		fprintf(stderr, "usage: %s FROM_DEV TO_DEV N [SEED]\n", argv[0]);
		return 2;
	}
	n = strtoul(argv[3], NULL, 0);
	if (argc > 4)
		rng = strtoull(argv[4], NULL, 0) | 1;
	if (open_with_gid(argv[1], &from.ctx, &from.pd, &from.gid, &from.gid_idx) ||
	    open_with_gid(argv[2], &to.ctx, &to.pd, &to.gid, &to.gid_idx))
		return 1;
	if (!has_atomic_write(argv[1], from.ctx) || !has_atomic_write(argv[2], to.ctx))
		return 1;
	target = aligned_alloc(4096, MR_BYTES);
	if (!target)
		return 1;
	for (unsigned int i = 0; i < SLOTS; i++)
		target[i] = mirror[i] = xorshift64(&rng);
	mr = ibv_reg_mr(to.pd, target, MR_BYTES,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	if (!mr || end_init(&from, 1) || end_init(&to, 0) ||
	    qp_to_rts(from.qp, to.qp->qp_num, &to.gid, from.gid_idx, 4, 14) ||
	    qp_to_rts(to.qp, from.qp->qp_num, &from.gid, to.gid_idx, 4, 14)) {
		CHECK(0, "set up the RC pair %s -> %s: %s", argv[1], argv[2], strerror(errno));
		return 1;
	}
	qpx = ibv_qp_to_qp_ex(from.qp);
	while (done < n && !bad) {
		unsigned int slot = (unsigned int)(xorshift64(&rng) % SLOTS);
		uint64_t value = xorshift64(&rng);
		int rc;

		ibv_wr_start(qpx);
		qpx->wr_id = done + 1;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_atomic_write(qpx, mr->rkey, (uintptr_t)&target[slot], &value);
		rc = ibv_wr_complete(qpx);
		if (rc) {
			CHECK(0, "ibv_wr_complete of WR %lu: %s", done + 1, strerror(rc));
			bad++;
			break;
		}
		if (!poll_one(from.cq, &wc)) {
			CHECK(0, "WR %lu: no completion within %d s", done + 1, WAIT_S);
			bad++;
			break;
		}
		mirror[slot] = value;
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_ATOMIC_WRITE || wc.wr_id != done + 1) {
			CHECK(0, "WR %lu: status %s, opcode %d, wr_id %llu", done + 1, ibv_wc_status_str(wc.status),
			      wc.opcode, (unsigned long long)wc.wr_id);
			bad++;
		} else if (target[slot] != value) {
			CHECK(0, "WR %lu: slot %u holds %#llx, not %#llx", done + 1, slot,
			      (unsigned long long)target[slot], (unsigned long long)value);
			bad++;
		}
		done++;
		if ((done % WHOLE_EVERY == 0 || done == n) && memcmp(target, mirror, MR_BYTES)) {
			CHECK(0, "after WR %lu: the MR differs from its mirror (a write landed elsewhere)", done);
			bad++;
		}
	}
	CHECK(!bad && done == n, "%s -> %s: %lu ATOMIC WRITEs, one per batch, every completion and byte checked",
	      argv[1], argv[2], done);
	CHECK(ibv_poll_cq(to.cq, 1, &wc) == 0, "%s: no completion on the target's side", argv[2]);

	ibv_destroy_qp(from.qp);
	ibv_destroy_qp(to.qp);
	ibv_destroy_cq(from.cq);
	ibv_destroy_cq(to.cq);
	ibv_dereg_mr(mr);
	free(target);
	ibv_dealloc_pd(from.pd);
	ibv_dealloc_pd(to.pd);
	ibv_close_device(from.ctx);
	ibv_close_device(to.ctx);
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}

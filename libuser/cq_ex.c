// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cq_ex.c - ibv_cq_ex: ibv_create_cq_ex, the polling triple (start_poll,
 * next_poll, end_poll) and the ibv_wc_read_* readers over the same mapped
 * ring as ibv_poll_cq (cq.c), and ibv_query_rt_values_ex.
 *
 * start_poll takes the CQ lock (unless the CQ is single-threaded) and
 * returns with it held only when it found a CQE (libibverbs calls end_poll
 * only then). The readers read the CQE in place; end_poll hands the slots
 * back to the kernel once.
 *
 * Completion timestamps are the kernel's ktime_get_ns() at completion
 * (CLOCK_MONOTONIC, hca_core_clock 1 GHz); the wall-clock reader adds the
 * REALTIME - MONOTONIC offset at the time of reading.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "sroce.h"

/* Every wc_flag sroce fills (SLID and DLID_PATH_BITS are 0 on RoCE, and
 * FLOW_TAG 0: no flow steering). */
#define SROCE_CQ_EX_WC_FLAGS                                                                     \
	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |                   \
	 IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |                        \
	 IBV_WC_EX_WITH_DLID_PATH_BITS | IBV_WC_EX_WITH_FLOW_TAG |                                \
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK |        \
	 SROCEDV_WC_EX_WITH_MP_WR)

static struct sroce_cq *ex_to_scq(struct ibv_cq_ex *ex)
{
	return sroce_container_of(ex, struct sroce_cq, vcq.cq_ex);
}

static const struct sroce_cqe *cur_of(struct ibv_cq_ex *ex)
{
	return ex_to_scq(ex)->cur;
}

/* srocedv.h: a reader libibverbs' ibv_cq_ex has no slot for. */
size_t srocedv_wc_read_mp_wr_offset(struct ibv_cq_ex *ex)
{
	return cur_of(ex)->mp_offset;
}

uint32_t srocedv_wc_read_rss_hash(struct ibv_cq_ex *ex, enum srocedv_rss_hash_type *type)
{
	const struct sroce_cqe *c = cur_of(ex);
	bool hashed = c->flags & SROCE_CQE_WITH_HASH;

	if (type)
		*type = hashed ? (enum srocedv_rss_hash_type)c->hash_type : SROCEDV_RSS_HASH_NONE;
	return hashed ? c->hash_value : 0;
}

/* Points the readers at CQE ring.idx. */
static void cq_ex_load(struct sroce_cq *cq)
{
	const struct sroce_cqe *cqe = sroce_ring_entry(&cq->ring, cq->ring.idx);

	cq->cur = cqe;
	cq->vcq.cq_ex.wr_id = cqe->wr_id;
	cq->vcq.cq_ex.status = cqe->status;
}

static int cq_ex_start_poll(struct ibv_cq_ex *ex, struct ibv_poll_cq_attr *attr)
{
	struct sroce_cq *cq = ex_to_scq(ex);

	if (attr->comp_mask)
		return EINVAL;
	if (!cq->single_threaded)
		sroce_spin_lock(&cq->ring.lock);
	if (!sroce_cq_available(&cq->ring)) {
		if (!cq->single_threaded)
			sroce_spin_unlock(&cq->ring.lock);
		return ENOENT;
	}
	cq_ex_load(cq);
	return 0;
}

static int cq_ex_next_poll(struct ibv_cq_ex *ex)
{
	struct sroce_cq *cq = ex_to_scq(ex);

	if (!cq->cur)
		return ENOENT; /* already past the end */
	cq->ring.idx++;
	if (!sroce_cq_available(&cq->ring)) {
		cq->cur = NULL;
		return ENOENT;
	}
	cq_ex_load(cq);
	return 0;
}

static void cq_ex_end_poll(struct ibv_cq_ex *ex)
{
	struct sroce_cq *cq = ex_to_scq(ex);

	/* The CQE the readers last read is consumed too, unless next_poll
	 * already stepped past the end (a CQE published since is not). */
	if (cq->cur)
		cq->ring.idx++;
	sroce_cq_release(&cq->ring);
	cq->cur = NULL;
	if (!cq->single_threaded)
		sroce_spin_unlock(&cq->ring.lock);
}

static enum ibv_wc_opcode cq_ex_read_opcode(struct ibv_cq_ex *ex)
{
	return (enum ibv_wc_opcode)cur_of(ex)->opcode;
}

static uint32_t cq_ex_read_vendor_err(struct ibv_cq_ex *ex)
{
	return cur_of(ex)->vendor_err;
}

static uint32_t cq_ex_read_byte_len(struct ibv_cq_ex *ex)
{
	return cur_of(ex)->byte_len;
}

static __be32 cq_ex_read_imm_data(struct ibv_cq_ex *ex)
{
	return cur_of(ex)->imm_or_inv;
}

static uint32_t cq_ex_read_qp_num(struct ibv_cq_ex *ex)
{
	return cur_of(ex)->qp_num;
}

static uint32_t cq_ex_read_src_qp(struct ibv_cq_ex *ex)
{
	return cur_of(ex)->src_qp;
}

static unsigned int cq_ex_read_wc_flags(struct ibv_cq_ex *ex)
{
	return sroce_cqe_wc_flags(cur_of(ex));
}

static uint32_t cq_ex_read_zero32(struct ibv_cq_ex *ex)
{
	(void)ex;
	return 0;
}

static uint8_t cq_ex_read_sl(struct ibv_cq_ex *ex)
{
	return sroce_cqe_sl(cur_of(ex));
}

static uint8_t cq_ex_read_dlid_path_bits(struct ibv_cq_ex *ex)
{
	(void)ex;
	return 0;
}

static uint64_t cq_ex_read_completion_ts(struct ibv_cq_ex *ex)
{
	return cur_of(ex)->timestamp;
}

static uint64_t timespec_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return timespec_ns(&t);
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC. A reading of the real clock between two
 * of the monotonic one is paired with their midpoint; the tightest of a few
 * such readings wins, so that a preemption between the calls (tens of ms in
 * a loaded VM) does not end up in the offset. */
static uint64_t realtime_offset(void)
{
	uint64_t best = 0, best_width = UINT64_MAX;

	for (int i = 0; i < 4 && best_width > 2000; i++) {
		uint64_t m1 = clock_ns(CLOCK_MONOTONIC), r = clock_ns(CLOCK_REALTIME);
		uint64_t m2 = clock_ns(CLOCK_MONOTONIC);

		if (m2 - m1 < best_width) {
			best_width = m2 - m1;
			best = r - (m1 + (m2 - m1) / 2);
		}
	}
	return best;
}

static uint64_t cq_ex_read_completion_wallclock_ns(struct ibv_cq_ex *ex)
{
	return cur_of(ex)->timestamp + realtime_offset();
}

void sroce_cq_ex_init(struct sroce_cq *cq, uint64_t wc_flags, bool single_threaded)
{
	struct ibv_cq_ex *ex = &cq->vcq.cq_ex;

	cq->single_threaded = single_threaded;
	cq->wc_flags = wc_flags;

	ex->start_poll = cq_ex_start_poll;
	ex->next_poll = cq_ex_next_poll;
	ex->end_poll = cq_ex_end_poll;
	ex->read_opcode = cq_ex_read_opcode;
	ex->read_vendor_err = cq_ex_read_vendor_err;
	ex->read_wc_flags = cq_ex_read_wc_flags;
	/* The optional readers exist only for the flags asked for, as in
	 * libibverbs' other providers. */
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		ex->read_byte_len = cq_ex_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		ex->read_imm_data = cq_ex_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		ex->read_qp_num = cq_ex_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		ex->read_src_qp = cq_ex_read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		ex->read_slid = cq_ex_read_zero32;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		ex->read_sl = cq_ex_read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		ex->read_dlid_path_bits = cq_ex_read_dlid_path_bits;
	if (wc_flags & IBV_WC_EX_WITH_FLOW_TAG)
		ex->read_flow_tag = cq_ex_read_zero32;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		ex->read_completion_ts = cq_ex_read_completion_ts;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		ex->read_completion_wallclock_ns = cq_ex_read_completion_wallclock_ns;
}

/* What ibv_create_cq_ex may ask for; EOPNOTSUPP for the rest. */
static int cq_ex_check_attr(const struct ibv_cq_init_attr_ex *attr)
{
	if (attr->wc_flags & ~(uint64_t)SROCE_CQ_EX_WC_FLAGS)
		return EOPNOTSUPP;
	if (attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS)
		return EOPNOTSUPP; /* a parent domain's CQ */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))
		return EOPNOTSUPP;
	return 0;
}

struct ibv_cq_ex *sroce_create_cq_ex(struct ibv_context *ibctx, struct ibv_cq_init_attr_ex *attr)
{
	return sroce_create_cq_ex_req(ibctx, attr, NULL);
}

struct ibv_cq_ex *sroce_create_cq_ex_req(struct ibv_context *ibctx, struct ibv_cq_init_attr_ex *attr,
					 const struct sroce_create_cq_req *req)
{
	struct {
		struct ibv_create_cq_ex ibv;
		struct sroce_create_cq_req drv;
	} cmd = { .drv = req ? *req : (struct sroce_create_cq_req){ 0 } };
	struct {
		struct ib_uverbs_ex_create_cq_resp ibv;
		struct sroce_create_cq_resp drv;
	} resp = {};
	struct ibv_cq_init_attr_ex cmd_attr;
	struct sroce_cq *cq;
	int err = cq_ex_check_attr(attr);

	if (err) {
		errno = err;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	/* libibverbs' command refuses wc_flags it does not know (EOPNOTSUPP):
	 * srocedv's are the provider's alone. */
	cmd_attr = *attr;
	cmd_attr.wc_flags &= ~SROCEDV_WC_EX_WITH_MP_WR;
	err = ibv_cmd_create_cq_ex(ibctx, &cmd_attr, &cq->vcq, &cmd.ibv,
				   req ? sizeof(cmd) : sizeof(cmd.ibv), &resp.ibv, sizeof(resp), 0);
	err = sroce_cq_created(cq, ibctx->cmd_fd, err, &resp.drv);
	if (err) {
		errno = err;
		return NULL;
	}
	sroce_cq_ex_init(cq, attr->wc_flags,
			 (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
				 (attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED));
	return &cq->vcq.cq_ex;
}

/* The device clock is CLOCK_MONOTONIC in ns; raw_clock carries the count
 * in tv_nsec (tv_sec 0), as mlx5 reports its cycles. */
int sroce_query_rt_values(struct ibv_context *ibctx, struct ibv_values_ex *values)
{
	uint32_t done = 0;

	(void)ibctx;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)clock_ns(CLOCK_MONOTONIC);
		done |= IBV_VALUES_MASK_RAW_CLOCK;
	}
	values->comp_mask = done;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* common.c - sroce_mp_wr's helpers (mp_wr.h). */
#include <time.h>

#include "mp_wr.h"

struct ibv_context *ctx;
struct ibv_pd *pd;
union ibv_gid gid;
int gid_idx;
struct devset here, peer;

struct ibv_cq_ex *make_cq(bool mp)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 4096,
					 .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM |
						     (mp ? SROCEDV_WC_EX_WITH_MP_WR : 0) };

	/* srocedv's create: libibverbs' ibv_create_cq_ex refuses wc_flags it
	 * does not know. */
	struct ibv_cq_ex *cq = srocedv_create_cq(ctx, &a, NULL);

	if (!cq)
		fprintf(stderr, "create a CQ%s: %s\n", mp ? " for multi-packet queues" : "", strerror(errno));
	return cq;
}

/* An RC/UC/UD QP; mp: its RQ is multi-packet with *mp's sizes (updated). */
struct ibv_qp *make_qp(enum ibv_qp_type t, struct ibv_cq_ex *scq, struct ibv_cq_ex *rcq,
			      struct ibv_srq *srq, struct srocedv_mp_wr_attr *mp)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = t,
		.send_cq = ibv_cq_ex_to_cq(scq),
		.recv_cq = ibv_cq_ex_to_cq(rcq),
		.srq = srq,
		.cap = { .max_send_wr = 1024, .max_recv_wr = srq ? 0 : MAX_RECV, .max_send_sge = 1,
			 .max_recv_sge = 4 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct srocedv_qp_init_attr d = { .comp_mask = mp ? SROCEDV_QP_INIT_ATTR_MP_WR : 0, .mp_wr = mp };
	struct ibv_qp *qp = srocedv_create_qp(ctx, &a, &d);
	int err = errno;
	struct ibv_qp_attr ia = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11,
				  .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE };

	if (qp && ibv_modify_qp(qp, &ia, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					     (t == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS))) {
		fprintf(stderr, "QP %u to INIT: %s\n", qp->qp_num, strerror(errno));
		ibv_destroy_qp(qp);
		return NULL;
	}
	if (!qp)
		fprintf(stderr, "create a QP (type %d%s): %s\n", t, mp ? ", multi-packet" : "", strerror(err));
	errno = err;
	return qp;
}

int connect_pair(struct ibv_qp *a, struct ibv_qp *b)
{
	if (qp_to_rts_mtu(a, b->qp_num, &gid, gid_idx, 1, 14, IBV_MTU_4096) ||
	    qp_to_rts_mtu(b, a->qp_num, &gid, gid_idx, 1, 14, IBV_MTU_4096)) {
		fprintf(stderr, "connecting QPs %u and %u: %s\n", a->qp_num, b->qp_num, strerror(errno));
		return -1;
	}
	return 0;
}

uint8_t *mem;
struct ibv_mr *mr;

void use(const struct devset *d)
{
	ctx = d->ctx;
	pd = d->pd;
	mr = d->mr;
	gid = d->gid;
	gid_idx = d->gid_idx;
}

int post_mp(struct ibv_qp *qp, struct ibv_srq *srq, uint64_t wr_id, size_t off, size_t len)
{
	struct ibv_sge s = { (uintptr_t)mem + off, (uint32_t)len, mr->lkey };
	struct ibv_recv_wr w = { .wr_id = wr_id, .sg_list = &s, .num_sge = 1 }, *bad;

	return srq ? ibv_post_srq_recv(srq, &w, &bad) : ibv_post_recv(qp, &w, &bad);
}

int send_msg(struct ibv_qp *qp, size_t src_off, uint32_t len, uint32_t ud_qpn, struct ibv_ah *ah)
{
	struct ibv_sge s = { (uintptr_t)mem + src_off, len, mr->lkey };
	struct ibv_send_wr w = { .wr_id = len, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	if (ah) {
		w.wr.ud.ah = ah;
		w.wr.ud.remote_qpn = ud_qpn;
		w.wr.ud.remote_qkey = 0x11;
	}
	return ibv_post_send(qp, &w, &bad);
}

uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Polls cq until n completions came (or 10 s): into out, the count. */
size_t poll_mp(struct ibv_cq_ex *cq, struct mpc *out, size_t n)
{
	struct ibv_poll_cq_attr pa = {};
	size_t got = 0;
	uint64_t deadline = now_ns() + 10000000000ull;

	while (got < n && now_ns() < deadline) {
		if (ibv_start_poll(cq, &pa))
			continue;
		do {
			struct mpc *c = &out[got++];

			c->wr_id = cq->wr_id;
			c->status = cq->status;
			c->opcode = ibv_wc_read_opcode(cq);
			c->len = ibv_wc_read_byte_len(cq);
			c->qp_num = ibv_wc_read_qp_num(cq);
			c->flags = ibv_wc_read_wc_flags(cq);
			c->offset = srocedv_wc_read_mp_wr_offset(cq);
			c->hash = srocedv_wc_read_rss_hash(cq, &c->hash_type);
		} while (got < n && ibv_next_poll(cq) == 0);
		ibv_end_poll(cq);
	}
	return got;
}

/* Drains send completions (they are not checked here but for success). */
void drain_sends(struct ibv_cq_ex *cq, size_t n)
{
	static struct mpc c[4096];
	size_t got = poll_mp(cq, c, n), bad = 0;
	enum ibv_wc_status first = IBV_WC_SUCCESS;

	for (size_t i = 0; i < got; i++) {
		if (c[i].status != IBV_WC_SUCCESS && !bad++)
			first = c[i].status;
	}
	CHECK(got == n && !bad, "%zu sends completed, %zu in error (of %zu; the first: %s)", got, bad, n,
	      ibv_wc_status_str(first));
}

/* A sender a and a receiver b of type t on the CQs scq (both of a's, b's
 * send) and rcq (b's receives, multi-packet); b's RQ has *mp's sizes
 * (updated). All four are set, NULL where a create failed. */
bool pair_open(enum ibv_qp_type t, struct srocedv_mp_wr_attr *mp, struct ibv_cq_ex **scq,
		      struct ibv_cq_ex **rcq, struct ibv_qp **a, struct ibv_qp **b)
{
	*scq = make_cq(false);
	*rcq = make_cq(true);
	*a = *scq ? make_qp(t, *scq, *scq, NULL, NULL) : NULL;
	*b = *scq && *rcq ? make_qp(t, *scq, *rcq, NULL, mp) : NULL;
	return *a && *b;
}

void pair_close(struct ibv_qp *a, struct ibv_qp *b, struct ibv_cq_ex *scq, struct ibv_cq_ex *rcq)
{
	if (a)
		ibv_destroy_qp(a);
	if (b)
		ibv_destroy_qp(b);
	if (scq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(scq));
	if (rcq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(rcq));
}

int open_dev(const char *name, struct devset *d)
{
	if (open_with_gid(name, &d->ctx, &d->pd, &d->gid, &d->gid_idx))
		return 1;
	d->mr = ibv_reg_mr(d->pd, mem, MEM, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!d->mr)
		fprintf(stderr, "%s: no MR: %s\n", name, strerror(errno));
	return !d->mr;
}

int common_failures(void)
{
	return failures;
}

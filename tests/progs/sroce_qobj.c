// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_qobj - queue objects through libibverbs and the sroce provider, for
 * the VM tests. Each mode prints what it saw and exits 0 only if every
 * check held. PEER is an IPv4 address reachable from DEV's netdev.
 *
 *   sroce_qobj objects DEV PEER   CQ, SRQ, QP (RC, UC, UD, with and without
 *                                 SRQ) and AH creation against the limits
 *   sroce_qobj modify DEV PEER    the QP state machine: valid paths through
 *                                 RESET->INIT->RTR->RTS->ERR->RESET for RC,
 *                                 UC and UD, invalid transitions, query_qp,
 *                                 posting in states that refuse it, a full RQ
 */
#include <infiniband/verbs.h>
#include <stdint.h>

#include "progs_common.h"

static struct ibv_device_attr dattr;

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq, struct ibv_srq *srq,
			      enum ibv_qp_type type, uint32_t wr, uint32_t sge, uint32_t inl)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.cap = { .max_send_wr = wr, .max_recv_wr = srq ? 0 : wr,
			 .max_send_sge = sge, .max_recv_sge = srq ? 0 : sge,
			 .max_inline_data = inl },
		.qp_type = type,
	};

	return ibv_create_qp(pd, &ia);
}

/* errno of a create that must fail, 0 if it succeeded (and is undone). */
static int qp_create_err(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
	struct ibv_qp *qp = ibv_create_qp(pd, ia);

	if (qp) {
		ibv_destroy_qp(qp);
		return 0;
	}
	return errno;
}

static void cq_checks(struct ibv_context *ctx)
{
	struct ibv_cq *cq;
	int err;

	cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	CHECK(cq && cq->cqe >= 1, "CQ of 1 entry: cqe %d", cq ? cq->cqe : -1);
	if (cq) {
		CHECK(ibv_req_notify_cq(cq, 0) == 0, "req_notify_cq(next)");
		CHECK(ibv_req_notify_cq(cq, 1) == 0, "req_notify_cq(solicited)");
		err = ibv_resize_cq(cq, 300);
		CHECK(!err && cq->cqe >= 300, "resize_cq to 300: %s, cqe %d", strerror(err), cq->cqe);
		err = ibv_resize_cq(cq, 4);
		CHECK(!err && cq->cqe >= 4, "resize_cq down to 4 (empty): %s, cqe %d", strerror(err),
		      cq->cqe);
		CHECK(ibv_resize_cq(cq, dattr.max_cqe + 1) != 0, "resize_cq beyond max_cqe refused");
		CHECK(ibv_destroy_cq(cq) == 0, "destroy_cq");
	}
	cq = ibv_create_cq(ctx, dattr.max_cqe, NULL, NULL, 0);
	CHECK(cq && cq->cqe >= dattr.max_cqe, "CQ of max_cqe %d: cqe %d", dattr.max_cqe,
	      cq ? cq->cqe : -1);
	if (cq)
		ibv_destroy_cq(cq);
	cq = ibv_create_cq(ctx, dattr.max_cqe + 1, NULL, NULL, 0);
	CHECK(!cq && errno == EINVAL, "CQ of max_cqe + 1: %s", cq ? "created" : strerror(errno));
	if (cq)
		ibv_destroy_cq(cq);
	cq = ibv_create_cq(ctx, 0, NULL, NULL, 0);
	CHECK(!cq && errno == EINVAL, "CQ of 0 entries: %s", cq ? "created" : strerror(errno));
	if (cq)
		ibv_destroy_cq(cq);
	cq = ibv_create_cq(ctx, 8, NULL, NULL, ctx->num_comp_vectors);
	CHECK(!cq && errno == EINVAL, "CQ on a vector that does not exist: %s",
	      cq ? "created" : strerror(errno));
	if (cq)
		ibv_destroy_cq(cq);
}

static void srq_checks(struct ibv_pd *pd)
{
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 32, .max_sge = 2 } };
	struct ibv_srq_attr sa;
	struct ibv_srq *srq = ibv_create_srq(pd, &sia);

	CHECK(srq && sia.attr.max_wr >= 32 && sia.attr.max_sge >= 2, "SRQ 32 x 2: max_wr %u",
	      sia.attr.max_wr);
	if (!srq)
		return;
	CHECK(ibv_query_srq(srq, &sa) == 0 && sa.max_wr >= 32 && sa.max_sge >= 2 && sa.srq_limit == 0,
	      "query_srq: max_wr %u max_sge %u limit %u", sa.max_wr, sa.max_sge, sa.srq_limit);
	sa.srq_limit = 8;
	CHECK(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) == 0, "arm the SRQ limit at 8");
	CHECK(ibv_query_srq(srq, &sa) == 0 && sa.srq_limit == 8, "query_srq: limit %u", sa.srq_limit);
	sa.srq_limit = 100000;
	CHECK_ERR(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), EINVAL, "limit above max_wr");
	sa.max_wr = 100000;
	CHECK_ERR(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), EOPNOTSUPP, "growing an SRQ");
	CHECK(ibv_destroy_srq(srq) == 0, "destroy_srq");

	sia.attr.max_wr = dattr.max_srq_wr + 1;
	srq = ibv_create_srq(pd, &sia);
	CHECK(!srq && errno == EINVAL, "SRQ above max_srq_wr: %s", srq ? "created" : strerror(errno));
	if (srq)
		ibv_destroy_srq(srq);
	sia.attr.max_wr = 16;
	sia.attr.max_sge = dattr.max_srq_sge + 1;
	srq = ibv_create_srq(pd, &sia);
	CHECK(!srq && errno == EINVAL, "SRQ above max_srq_sge: %s", srq ? "created" : strerror(errno));
	if (srq)
		ibv_destroy_srq(srq);
}

static void qp_checks(struct ibv_context *ctx, struct ibv_pd *pd)
{
	static const struct { enum ibv_qp_type type; const char *name; } types[] = {
		{ IBV_QPT_RC, "RC" }, { IBV_QPT_UC, "UC" }, { IBV_QPT_UD, "UD" },
	};
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sia);
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;
	int err;

	if (!cq || !srq) {
		CHECK(0, "CQ and SRQ for the QP checks");
		return;
	}
	for (unsigned int t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		for (int with_srq = 0; with_srq < 2; with_srq++) {
			struct ibv_qp_init_attr qa;
			struct ibv_qp_attr at;

			qp = make_qp(pd, cq, with_srq ? srq : NULL, types[t].type, 10, 2, 64);
			CHECK(qp && qp->qp_num > 1 && qp->state == IBV_QPS_RESET,
			      "%s QP%s: qpn %#x", types[t].name, with_srq ? " on an SRQ" : "",
			      qp ? qp->qp_num : 0);
			if (!qp)
				continue;
			err = ibv_query_qp(qp, &at, IBV_QP_STATE | IBV_QP_CAP, &qa);
			CHECK(!err && at.qp_state == IBV_QPS_RESET && qa.cap.max_send_wr >= 10 &&
				      qa.cap.max_send_sge >= 2 && qa.cap.max_inline_data >= 64 &&
				      (with_srq || (qa.cap.max_recv_wr >= 10 && qa.cap.max_recv_sge >= 2)) &&
				      qa.qp_type == types[t].type,
			      "  query_qp: %s, state %d, send %u x %u, recv %u x %u, inline %u",
			      strerror(err), at.qp_state, qa.cap.max_send_wr, qa.cap.max_send_sge,
			      qa.cap.max_recv_wr, qa.cap.max_recv_sge, qa.cap.max_inline_data);
			CHECK(ibv_destroy_qp(qp) == 0, "  destroy_qp");
		}
	}
	/* Send-only and receive-only queues. */
	qp = make_qp(pd, cq, NULL, IBV_QPT_RC, 0, 0, 0);
	CHECK(qp != NULL, "RC QP with no room at all: %s", qp ? "ok" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);

	/* The limits query_device promises, and one past them. */
	qp = make_qp(pd, cq, NULL, IBV_QPT_RC, dattr.max_qp_wr, dattr.max_sge, 0);
	CHECK(qp != NULL, "RC QP at max_qp_wr %d and max_sge %d: %s", dattr.max_qp_wr, dattr.max_sge,
	      qp ? "ok" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	memset(&ia, 0, sizeof(ia));
	ia = (struct ibv_qp_init_attr){ .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = dattr.max_qp_wr + 1, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	CHECK_ERR(qp_create_err(pd, &ia), EINVAL, "max_send_wr above max_qp_wr");
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_wr = dattr.max_qp_wr + 1;
	CHECK_ERR(qp_create_err(pd, &ia), EINVAL, "max_recv_wr above max_qp_wr");
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = dattr.max_sge + 1;
	CHECK_ERR(qp_create_err(pd, &ia), EINVAL, "max_send_sge above max_sge");
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = dattr.max_sge + 1;
	CHECK_ERR(qp_create_err(pd, &ia), EINVAL, "max_recv_sge above max_sge");
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = 1u << 20;
	CHECK_ERR(qp_create_err(pd, &ia), EINVAL, "max_inline_data of 1 MiB");
	ia.cap.max_inline_data = 0;
	ia.qp_type = IBV_QPT_RAW_PACKET;
	CHECK_ERR(qp_create_err(pd, &ia), EOPNOTSUPP, "raw packet QP");
	ia.qp_type = IBV_QPT_RC;

	/* Objects in use cannot go. */
	qp = make_qp(pd, cq, srq, IBV_QPT_RC, 4, 1, 0);
	CHECK(qp != NULL, "RC QP on the SRQ");
	if (qp) {
		CHECK_ERR(ibv_destroy_cq(cq), EBUSY, "destroy_cq while a QP uses it");
		CHECK_ERR(ibv_destroy_srq(srq), EBUSY, "destroy_srq while a QP uses it");
		CHECK(ibv_destroy_qp(qp) == 0, "destroy that QP");
	}
	CHECK(ibv_destroy_srq(srq) == 0, "destroy_srq once unused");
	CHECK(ibv_destroy_cq(cq) == 0, "destroy_cq once unused");
}

static void ah_checks(struct ibv_context *ctx, struct ibv_pd *pd, const char *peer)
{
	struct ibv_ah_attr aa = { .port_num = 1 };
	struct ibv_ah *ah;
	int sgid = ipv4_gid_index(ctx, NULL);

	CHECK(sgid >= 0, "an IPv4 GID at index %d", sgid);
	ah = ibv_create_ah(pd, &aa);
	CHECK(!ah && errno == EINVAL, "AH without a GRH: %s", ah ? "created" : strerror(errno));
	if (ah)
		ibv_destroy_ah(ah);
	aa.is_global = 1;
	aa.grh.sgid_index = sgid;
	aa.grh.hop_limit = 64;
	gid_from_ipv4(peer, &aa.grh.dgid);
	ah = ibv_create_ah(pd, &aa);
	CHECK(ah != NULL, "AH to %s: %s", peer, ah ? "ok" : strerror(errno));
	if (ah)
		CHECK(ibv_destroy_ah(ah) == 0, "destroy_ah");
}

static int mode_objects(struct ibv_context *ctx, const char *peer)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	CHECK(ibv_query_device(ctx, &dattr) == 0, "query_device");
	CHECK(dattr.max_qp > 0 && dattr.max_qp_wr > 0 && dattr.max_sge > 0 && dattr.max_cq > 0 &&
		      dattr.max_cqe > 0 && dattr.max_srq > 0 && dattr.max_srq_wr > 0 && dattr.max_ah > 0,
	      "limits: qp %d x %d wr x %d sge, cq %d x %d, srq %d x %d, ah %d", dattr.max_qp,
	      dattr.max_qp_wr, dattr.max_sge, dattr.max_cq, dattr.max_cqe, dattr.max_srq,
	      dattr.max_srq_wr, dattr.max_ah);
	CHECK(dattr.device_cap_flags & IBV_DEVICE_RC_RNR_NAK_GEN, "RC_RNR_NAK_GEN advertised");
	CHECK(!(dattr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE), "SRQ_RESIZE not advertised");
	CHECK(dattr.atomic_cap == IBV_ATOMIC_HCA, "atomic_cap HCA");
	if (!pd) {
		CHECK(0, "alloc_pd");
		return failures;
	}
	cq_checks(ctx);
	srq_checks(pd);
	qp_checks(ctx, pd);
	ah_checks(ctx, pd, peer);
	CHECK(ibv_dealloc_pd(pd) == 0, "dealloc_pd after everything");
	return failures;
}

/* ---- the state machine ------------------------------------------------- */

static int to_init(struct ibv_qp *qp, int mask_drop)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qkey = 0x11111111,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(qp, &a, mask & ~mask_drop);
}

static int to_rtr(struct ibv_qp *qp, struct ibv_context *ctx, const char *peer, int mask_drop)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = 0x123,
		.rq_psn = 77,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .hop_limit = 64, .sgid_index = ipv4_gid_index(ctx, NULL) } },
	};
	int mask = IBV_QP_STATE;

	gid_from_ipv4(peer, &a.ah_attr.grh.dgid);
	if (qp->qp_type == IBV_QPT_RC)
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	else if (qp->qp_type == IBV_QPT_UC)
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	return ibv_modify_qp(qp, &a, mask & ~mask_drop);
}

static int to_rts(struct ibv_qp *qp, int mask_drop)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.sq_psn = 99,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.max_rd_atomic = 4,
	};
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (qp->qp_type == IBV_QPT_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, mask & ~mask_drop);
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static enum ibv_qp_state query_state(struct ibv_qp *qp, struct ibv_qp_attr *a)
{
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, a, IBV_QP_STATE, &ia))
		return (enum ibv_qp_state)-1;
	return a->qp_state;
}

static void walk(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_cq *cq,
		 enum ibv_qp_type type, const char *name, const char *peer)
{
	struct ibv_qp *qp = make_qp(pd, cq, NULL, type, 8, 1, 0);
	struct ibv_sge sge = { .addr = 0, .length = 0, .lkey = 0 };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad_r = NULL;
	struct ibv_send_wr swr = { .wr_id = 2, .opcode = IBV_WR_SEND }, *bad_s = NULL;
	struct ibv_qp_attr a;
	int n, err;

	if (!qp) {
		CHECK(0, "%s QP: %s", name, strerror(errno));
		return;
	}
	printf("-- %s QP %#x\n", name, qp->qp_num);
	CHECK_ERR(ibv_post_recv(qp, &rwr, &bad_r), EINVAL, "post_recv in RESET");
	CHECK(bad_r == &rwr, "  bad_wr names it");
	CHECK_ERR(ibv_post_send(qp, &swr, &bad_s), EINVAL, "post_send in RESET");
	CHECK_ERR(to_rtr(qp, ctx, peer, 0), EINVAL, "RESET -> RTR");
	CHECK_ERR(to_rts(qp, 0), EINVAL, "RESET -> RTS");
	CHECK_ERR(to_init(qp, IBV_QP_PORT), EINVAL, "RESET -> INIT without the port");
	CHECK(query_state(qp, &a) == IBV_QPS_RESET, "still RESET");
	CHECK(to_init(qp, 0) == 0, "RESET -> INIT");
	CHECK(query_state(qp, &a) == IBV_QPS_INIT && a.port_num == 1 && a.pkey_index == 0,
	      "query: INIT, port %u, pkey_index %u", a.port_num, a.pkey_index);
	if (type == IBV_QPT_UD)
		CHECK(a.qkey == 0x11111111, "  qkey %#x", a.qkey);
	else
		CHECK(a.qp_access_flags == (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ),
		      "  access flags %#x", a.qp_access_flags);
	CHECK_ERR(ibv_post_send(qp, &swr, &bad_s), EINVAL, "post_send in INIT");
	/* The RQ takes receives from INIT on, until it is full. */
	for (n = 0; n < 1 << 20; n++) {
		bad_r = NULL;
		rwr.wr_id = n;
		err = ibv_post_recv(qp, &rwr, &bad_r);
		if (err)
			break;
	}
	CHECK(err == ENOMEM && bad_r == &rwr && n >= 8, "RQ full after %d receives: %s", n,
	      strerror(err));
	CHECK_ERR(to_rts(qp, 0), EINVAL, "INIT -> RTS");
	if (type != IBV_QPT_UD)
		CHECK_ERR(to_rtr(qp, ctx, peer, IBV_QP_DEST_QPN), EINVAL, "INIT -> RTR without dest QPN");
	CHECK(to_rtr(qp, ctx, peer, 0) == 0, "INIT -> RTR");
	CHECK(query_state(qp, &a) == IBV_QPS_RTR, "query: RTR");
	if (type != IBV_QPT_UD) {
		union ibv_gid want;

		gid_from_ipv4(peer, &want);
		CHECK(a.path_mtu == IBV_MTU_1024 && a.dest_qp_num == 0x123 && a.rq_psn == 77,
		      "  mtu %d dest_qpn %#x rq_psn %u", a.path_mtu, a.dest_qp_num, a.rq_psn);
		CHECK(a.ah_attr.is_global && !memcmp(a.ah_attr.grh.dgid.raw, want.raw, 16) &&
			      a.ah_attr.port_num == 1,
		      "  destination is %s on port %u", peer, a.ah_attr.port_num);
		if (type == IBV_QPT_RC)
			CHECK(a.max_dest_rd_atomic == 4 && a.min_rnr_timer == 12,
			      "  max_dest_rd_atomic %u min_rnr_timer %u", a.max_dest_rd_atomic,
			      a.min_rnr_timer);
	}
	CHECK_ERR(ibv_post_send(qp, &swr, &bad_s), EINVAL, "post_send in RTR");
	if (type != IBV_QPT_UD)
		CHECK_ERR(to_rts(qp, IBV_QP_SQ_PSN), EINVAL, "RTR -> RTS without sq_psn");
	CHECK(to_rts(qp, 0) == 0, "RTR -> RTS");
	CHECK(query_state(qp, &a) == IBV_QPS_RTS && a.sq_psn == 99, "query: RTS, sq_psn %u", a.sq_psn);
	if (type == IBV_QPT_RC)
		CHECK(a.timeout == 14 && a.retry_cnt == 7 && a.rnr_retry == 7 && a.max_rd_atomic == 4,
		      "  timeout %u retry %u rnr_retry %u max_rd_atomic %u", a.timeout, a.retry_cnt,
		      a.rnr_retry, a.max_rd_atomic);
	CHECK_ERR(to_init(qp, 0), EINVAL, "RTS -> INIT");
	CHECK(to_state(qp, IBV_QPS_ERR) == 0, "RTS -> ERR");
	CHECK(query_state(qp, &a) == IBV_QPS_ERR, "query: ERR");
	CHECK_ERR(to_state(qp, IBV_QPS_RTS), EINVAL, "ERR -> RTS");
	CHECK(to_state(qp, IBV_QPS_RESET) == 0, "ERR -> RESET");
	CHECK(query_state(qp, &a) == IBV_QPS_RESET, "query: RESET");
	CHECK(to_init(qp, 0) == 0, "RESET -> INIT again");
	CHECK(ibv_destroy_qp(qp) == 0, "destroy");
}

static int mode_modify(struct ibv_context *ctx, const char *peer)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	/* Big enough for every flushed receive of the walks. */
	struct ibv_cq *cq = ibv_create_cq(ctx, 4096, NULL, NULL, 0);

	if (!pd || !cq) {
		CHECK(0, "PD and CQ");
		return failures;
	}
	walk(ctx, pd, cq, IBV_QPT_RC, "RC", peer);
	walk(ctx, pd, cq, IBV_QPT_UC, "UC", peer);
	walk(ctx, pd, cq, IBV_QPT_UD, "UD", peer);
	CHECK(ibv_destroy_cq(cq) == 0, "destroy_cq");
	CHECK(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	return failures;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	int rc;

	if (argc != 4) {
		fprintf(stderr, "usage: %s objects|modify DEV PEER_IPV4\n", argv[0]);
		return 2;
	}
	ctx = open_by_name(argv[2]);
	if (!ctx)
		return 1;
	if (!strcmp(argv[1], "objects"))
		rc = mode_objects(ctx, argv[3]);
	else if (!strcmp(argv[1], "modify"))
		rc = mode_modify(ctx, argv[3]);
	else
		rc = 2;
	CHECK(ibv_close_device(ctx) == 0, "close_device");
	printf("%d failure(s)\n", failures);
	return rc || failures ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_qhostile - a process that abuses its own mapped rings, and one that
 * dies holding queues, for the VM tests. It reaches the rings through the
 * provider's private structs (it links the same libsroce build).
 *
 *   sroce_qhostile scribble DEV PEER   write impossible indices and WQEs
 *                                      (REG_MR, binds and invalidations it
 *                                      may not post among them) into
 *                                      the SQ and CQ rings and ring the
 *                                      doorbell: each case must end in an
 *                                      error completion, an error event or
 *                                      an errored QP, and every object must
 *                                      still be destroyable
 *   sroce_qhostile hold DEV PEER READY create CQs, an SRQ, RC and UD QPs and
 *                                      AHs, touch READY, then post and poll
 *                                      until killed
 */
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "../../libuser/sroce.h"
#include "infiniband/srocedv.h"
#include "progs_common.h"

struct rig {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	struct ibv_mr *mr;
	struct ibv_mw *mw; /* a case's window, if it makes one */
	char buf[4096];
};

static int sgid_index;
static union ibv_gid peer_gid;

static int modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, const char *what)
{
	int err = ibv_modify_qp(qp, a, mask);

	if (err)
		printf("  modify to %s: %s\n", what, strerror(err));
	return err;
}

/* RC to the peer (nobody answers: short timeout, one retry) or UD. */
static int rig_up(struct rig *r, struct ibv_context *ctx, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = type,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x1234,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = peer_gid, .sgid_index = sgid_index, .hop_limit = 64 } };

	memset(r, 0, sizeof(*r));
	r->ctx = ctx;
	r->pd = ibv_alloc_pd(ctx);
	r->cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!r->pd || !r->cq)
		return -1;
	r->mr = ibv_reg_mr(r->pd, r->buf, sizeof(r->buf), IBV_ACCESS_LOCAL_WRITE);
	ia.send_cq = ia.recv_cq = r->cq;
	r->qp = ibv_create_qp(r->pd, &ia);
	if (!r->qp)
		return -1;
	if (modify(r->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				      (type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS), "INIT"))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (type == IBV_QPT_RC) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = 0x4242;
		a.rq_psn = 1;
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = 1;
		a.ah_attr = aa;
	}
	if (modify(r->qp, &a, type == IBV_QPT_RC ? IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER : IBV_QP_STATE, "RTR"))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
	a.timeout = 8;
	a.retry_cnt = 1;
	a.rnr_retry = 1;
	a.max_rd_atomic = 1;
	if (modify(r->qp, &a, type == IBV_QPT_RC ? IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC :
				     IBV_QP_STATE | IBV_QP_SQ_PSN, "RTS"))
		return -1;
	if (type == IBV_QPT_UD && !(r->ah = ibv_create_ah(r->pd, &aa)))
		return -1;
	return 0;
}

static int rig_down(struct rig *r)
{
	int err = 0;

	if (r->mw)
		err |= ibv_dealloc_mw(r->mw);
	if (r->qp)
		err |= ibv_destroy_qp(r->qp);
	if (r->ah)
		err |= ibv_destroy_ah(r->ah);
	if (r->mr)
		err |= ibv_dereg_mr(r->mr);
	if (r->cq)
		err |= ibv_destroy_cq(r->cq);
	if (r->pd)
		err |= ibv_dealloc_pd(r->pd);
	return err;
}

/* The provider's doorbell, without the provider's bookkeeping. */
static int doorbell(struct ibv_qp *qp)
{
	struct ibv_post_send cmd = { 0 };
	struct ib_uverbs_post_send_resp resp;

	cmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.core_payload.response = (uintptr_t)&resp;
	cmd.core_payload.qp_handle = qp->handle;
	cmd.core_payload.wqe_size = sizeof(struct ib_uverbs_send_wr);
	return write(qp->context->cmd_fd, &cmd, sizeof(cmd)) == sizeof(cmd) ? 0 : errno;
}

/* A WQE written straight into the next SQ slot and published. */
static struct sroce_wqe *raw_wqe(struct ibv_qp *qp)
{
	struct sroce_uring *sq = &to_sqp(qp)->sq;
	struct sroce_wqe *w = sroce_ring_entry(sq, sq->idx);

	memset(w, 0, sq->stride);
	return w;
}

static void raw_publish(struct ibv_qp *qp)
{
	struct sroce_uring *sq = &to_sqp(qp)->sq;

	sq->idx++;
	sroce_store_release(&sq->hdr->producer, sq->idx);
}

/* Waits up to `secs` for the damage to show: an error completion, an error
 * event on the QP or CQ, or the QP in ERR. */
static const char *error_surfaced(struct rig *r, int secs)
{
	static char why[96];
	struct pollfd pfd = { .fd = r->ctx->async_fd, .events = POLLIN };

	fcntl(r->ctx->async_fd, F_SETFL, fcntl(r->ctx->async_fd, F_GETFL) | O_NONBLOCK);
	for (int i = 0; i < secs * 10; i++) {
		struct ibv_async_event ev;
		struct ibv_qp_init_attr ia;
		struct ibv_qp_attr qa;
		struct ibv_wc wc;

		while (ibv_poll_cq(r->cq, 1, &wc) > 0) {
			if (wc.status != IBV_WC_SUCCESS) {
				snprintf(why, sizeof(why), "completion %s", ibv_wc_status_str(wc.status));
				return why;
			}
		}
		if (poll(&pfd, 1, 0) > 0 && !ibv_get_async_event(r->ctx, &ev)) {
			enum ibv_event_type t = ev.event_type;

			ibv_ack_async_event(&ev);
			if (t == IBV_EVENT_QP_FATAL || t == IBV_EVENT_QP_REQ_ERR ||
			    t == IBV_EVENT_QP_ACCESS_ERR || t == IBV_EVENT_CQ_ERR) {
				snprintf(why, sizeof(why), "event %s", ibv_event_type_str(t));
				return why;
			}
		}
		if (!ibv_query_qp(r->qp, &qa, IBV_QP_STATE, &ia) && qa.qp_state == IBV_QPS_ERR)
			return "QP in ERR";
		usleep(100000);
	}
	return NULL;
}

typedef void (*scribble_fn)(struct rig *r);

static void sc_producer_beyond(struct rig *r)
{
	struct sroce_uring *sq = &to_sqp(r->qp)->sq;

	sroce_store_release(&sq->hdr->producer, sq->hdr->consumer + sq->mask + 1 + 100);
}

static void sc_many_sges(struct rig *r)
{
	struct sroce_wqe *w = raw_wqe(r->qp);

	w->opcode = IBV_WR_SEND;
	w->flags = SROCE_WQE_SIGNALED;
	w->num_sge = 200; /* more than the slot holds */
	raw_publish(r->qp);
}

static void sc_bad_opcode(struct rig *r)
{
	struct sroce_wqe *w = raw_wqe(r->qp);

	w->opcode = 0x77;
	w->flags = SROCE_WQE_SIGNALED;
	raw_publish(r->qp);
}

static void sc_inline_too_long(struct rig *r)
{
	struct sroce_wqe *w = raw_wqe(r->qp);

	w->opcode = IBV_WR_SEND;
	w->flags = SROCE_WQE_SIGNALED | SROCE_WQE_INLINE;
	w->inline_len = 100000;
	raw_publish(r->qp);
}

static void sc_sge_bad_lkey(struct rig *r)
{
	struct sroce_wqe *w = raw_wqe(r->qp);
	struct sroce_sge *s = (struct sroce_sge *)(w + 1);

	w->opcode = IBV_WR_SEND;
	w->flags = SROCE_WQE_SIGNALED;
	w->num_sge = 1;
	s->addr = (uintptr_t)r->buf;
	s->length = 64;
	s->lkey = 0xbad0bad0;
	raw_publish(r->qp);
}

static void sc_sge_past_mr(struct rig *r)
{
	struct sroce_wqe *w = raw_wqe(r->qp);
	struct sroce_sge *s = (struct sroce_sge *)(w + 1);

	w->opcode = IBV_WR_SEND;
	w->flags = SROCE_WQE_SIGNALED;
	w->num_sge = 1;
	s->addr = (uintptr_t)r->buf + sizeof(r->buf) - 8;
	s->length = 4096;
	s->lkey = r->mr ? r->mr->lkey : 0;
	raw_publish(r->qp);
}

static void sc_bad_ah(struct rig *r)
{
	struct sroce_wqe *w = raw_wqe(r->qp);

	w->opcode = IBV_WR_SEND;
	w->flags = SROCE_WQE_SIGNALED;
	w->ud.ah_handle = 0xdeadbeef;
	w->ud.remote_qpn = 0x4242;
	raw_publish(r->qp);
}

/* Memory-registration work requests a process may not post or that name
 * what is not there (Documentation/memory.md): each fails its QP. */
static void sc_reg_mr(struct rig *r)
{
	struct sroce_wqe *w = raw_wqe(r->qp);

	w->opcode = 0x20; /* IB_WR_REG_MR: ib_core's kernel users only */
	w->flags = SROCE_WQE_SIGNALED;
	w->reg.mr_lkey = r->mr->lkey;
	w->reg.new_key = (r->mr->lkey & ~0xffu) | ((r->mr->lkey + 1) & 0xff);
	w->reg.addr = (uintptr_t)r->buf;
	w->reg.length = sizeof(r->buf);
	w->reg.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	raw_publish(r->qp);
}

static void sc_bind_no_window(struct rig *r)
{
	struct sroce_wqe *w = raw_wqe(r->qp);

	w->opcode = IBV_WR_BIND_MW;
	w->flags = SROCE_WQE_SIGNALED | SROCE_WQE_BIND_TYPE1;
	w->reg.mr_lkey = r->mr->lkey;
	w->reg.new_key = r->mr->lkey + 1; /* the MR's own index: no window */
	w->reg.addr = (uintptr_t)r->buf;
	w->reg.length = 64;
	w->reg.access = IBV_ACCESS_REMOTE_WRITE;
	raw_publish(r->qp);
}

/* A layout bind (seed 003) names a staged layout by handle; a staged layout
 * binds once. Bind one for real, then replay its WQE with the same handle
 * (what a process rewriting its ring could do): the kernel has nothing
 * staged under it any more, and the bind fails. */
static void sc_bind_replayed_layout(struct rig *r)
{
	struct srocedv_mw_alloc_attr at = { .type = IBV_MW_TYPE_1, .max_descriptors = 4 };
	struct srocedv_mw_layout_entry e = { .mem_obj_type = SROCEDV_MW_ENTRY_USE_MR, .length = 64 };
	struct srocedv_mw_layout l = { .type = SROCEDV_MW_LAYOUT_TYPE_COMPOSITE, .entry_count = 1, .entries = &e };
	struct srocedv_mw_bind b = { .wr_id = 1, .bind_info = { .layout = &l,
				     .mw_access_flags = IBV_ACCESS_REMOTE_READ | SROCEDV_ACCESS_BIND_MW_NONCONTIG } };
	struct sroce_wqe *w;
	struct ibv_wc wc;
	int n = 0;

	ibv_dereg_mr(r->mr);
	r->mr = ibv_reg_mr(r->pd, r->buf, sizeof(r->buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	r->mw = srocedv_alloc_mw_ex(r->pd, &at);
	if (!r->mr || !r->mw)
		return;
	e.mr = r->mr;
	e.addr = (uintptr_t)r->buf;
	if (srocedv_bind_mw(r->qp, r->mw, &b))
		return;
	for (int i = 0; i < 100 && !n; i++, usleep(10000))
		n = ibv_poll_cq(r->cq, 1, &wc);
	CHECK(n == 1 && wc.status == IBV_WC_SUCCESS, "  the real layout bind completes");
	w = raw_wqe(r->qp);
	w->opcode = IBV_WR_BIND_MW;
	w->flags = SROCE_WQE_SIGNALED | SROCE_WQE_BIND_TYPE1;
	w->reg.new_key = ibv_inc_rkey(r->mw->rkey);
	w->reg.length = 64;
	w->reg.access = IBV_ACCESS_REMOTE_READ;
	w->reg.layout = 1; /* the first (and consumed) staging's handle */
	raw_publish(r->qp);
}

static void sc_local_inv_mr(struct rig *r)
{
	struct sroce_wqe *w = raw_wqe(r->qp);

	w->opcode = IBV_WR_LOCAL_INV;
	w->flags = SROCE_WQE_SIGNALED;
	w->imm_or_inv = r->mr->lkey; /* a page-list MR cannot be invalidated */
	raw_publish(r->qp);
}

static void run_case(struct ibv_context *ctx, enum ibv_qp_type type, const char *what, scribble_fn fn)
{
	struct rig r;
	const char *why;

	printf("-- %s\n", what);
	if (rig_up(&r, ctx, type)) {
		CHECK(0, "%s: set up (%s)", what, strerror(errno));
		rig_down(&r);
		return;
	}
	fn(&r);
	CHECK(doorbell(r.qp) == 0, "%s: doorbell accepted", what);
	why = error_surfaced(&r, 10);
	CHECK(why != NULL, "%s: error surfaced (%s)", what, why ? why : "nothing in 10 s");
	CHECK(rig_down(&r) == 0, "%s: every object destroyed", what);
}

/* The kernel must never trust the consumer index of a CQ: completions
 * into a CQ whose consumer claims to be ahead of the producer. */
static void cq_consumer_case(struct ibv_context *ctx)
{
	struct sroce_uring *cqr;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_INLINE }, *bad;
	struct rig r;

	printf("-- CQ consumer index ahead of the producer\n");
	if (rig_up(&r, ctx, IBV_QPT_UD)) {
		CHECK(0, "CQ case: set up");
		rig_down(&r);
		return;
	}
	cqr = &to_scq(r.cq)->ring;
	sroce_store_release(&cqr->hdr->consumer, cqr->hdr->producer + 12345);
	/* Inline: no MR needed. */
	sge = (struct ibv_sge){ .addr = (uintptr_t)r.buf, .length = 16 };
	wr.wr.ud.ah = r.ah;
	wr.wr.ud.remote_qpn = 0x4242;
	wr.wr.ud.remote_qkey = 0x1234;
	for (int i = 0; i < 8; i++)
		ibv_post_send(r.qp, &wr, &bad);
	sleep(1);
	/* What the CQ shows now is unspecified; the kernel must be intact. */
	printf("  CQ: %s\n", error_surfaced(&r, 1) ?: "no error reported");
	CHECK(rig_down(&r) == 0, "CQ case: every object destroyed");
}

/* Work requests may only come through the rings: the uverbs commands that
 * carry them are refused for a user QP. */
static void wr_commands_case(struct ibv_context *ctx)
{
	struct {
		struct ibv_post_send cmd;
		struct ib_uverbs_send_wr wr;
	} ps = { 0 };
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_recv cmd;
		struct ib_uverbs_recv_wr wr;
	} pr = { 0 };
	struct ib_uverbs_post_send_resp resp;
	struct rig r;

	printf("-- work requests through uverbs commands\n");
	if (rig_up(&r, ctx, IBV_QPT_RC)) {
		CHECK(0, "WR commands: set up");
		rig_down(&r);
		return;
	}
	ps.cmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	ps.cmd.hdr.in_words = sizeof(ps) / 4;
	ps.cmd.hdr.out_words = sizeof(resp) / 4;
	ps.cmd.core_payload.response = (uintptr_t)&resp;
	ps.cmd.core_payload.qp_handle = r.qp->handle;
	ps.cmd.core_payload.wr_count = 1;
	ps.cmd.core_payload.wqe_size = sizeof(ps.wr);
	ps.wr.opcode = IBV_WR_SEND;
	CHECK(write(ctx->cmd_fd, &ps, sizeof(ps)) < 0 && errno == EINVAL,
	      "a SEND through the post_send command: %s", strerror(errno));
	pr.hdr.command = IB_USER_VERBS_CMD_POST_RECV;
	pr.hdr.in_words = sizeof(pr) / 4;
	pr.hdr.out_words = sizeof(resp) / 4;
	pr.cmd.response = (uintptr_t)&resp;
	pr.cmd.qp_handle = r.qp->handle;
	pr.cmd.wr_count = 1;
	pr.cmd.wqe_size = sizeof(pr.wr);
	CHECK(write(ctx->cmd_fd, &pr, sizeof(pr)) < 0 && errno == EOPNOTSUPP,
	      "the post_recv command: %s", strerror(errno));
	CHECK(rig_down(&r) == 0, "WR commands: every object destroyed");
}

static int mode_scribble(struct ibv_context *ctx)
{
	wr_commands_case(ctx);
	run_case(ctx, IBV_QPT_RC, "SQ producer beyond the ring", sc_producer_beyond);
	run_case(ctx, IBV_QPT_RC, "WQE with 200 SGEs", sc_many_sges);
	run_case(ctx, IBV_QPT_RC, "WQE with an unknown opcode", sc_bad_opcode);
	run_case(ctx, IBV_QPT_RC, "inline length past the slot", sc_inline_too_long);
	run_case(ctx, IBV_QPT_RC, "SGE with an lkey that names no MR", sc_sge_bad_lkey);
	run_case(ctx, IBV_QPT_RC, "SGE past the end of its MR", sc_sge_past_mr);
	run_case(ctx, IBV_QPT_UD, "UD WQE naming no AH", sc_bad_ah);
	run_case(ctx, IBV_QPT_RC, "REG_MR (the kernel's) from a user ring", sc_reg_mr);
	run_case(ctx, IBV_QPT_RC, "BIND_MW naming no window", sc_bind_no_window);
	run_case(ctx, IBV_QPT_RC, "BIND_MW replaying a consumed layout's handle", sc_bind_replayed_layout);
	run_case(ctx, IBV_QPT_RC, "LOCAL_INV of a page-list MR", sc_local_inv_mr);
	run_case(ctx, IBV_QPT_UD, "UD SQ producer beyond the ring", sc_producer_beyond);
	cq_consumer_case(ctx);
	return failures;
}

static int mode_hold(struct ibv_context *ctx, const char *ready)
{
	struct rig rc[4], ud[2];
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 64, .max_sge = 1 } };
	struct ibv_srq *srq;
	int fd;

	for (int i = 0; i < 4; i++)
		if (rig_up(&rc[i], ctx, IBV_QPT_RC))
			return 1;
	for (int i = 0; i < 2; i++)
		if (rig_up(&ud[i], ctx, IBV_QPT_UD))
			return 1;
	srq = ibv_create_srq(rc[0].pd, &sia);
	if (!srq)
		return 1;
	fd = open(ready, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
	printf("holding: 4 RC + 2 UD QPs, 6 CQs, 1 SRQ, 2 AHs\n");
	fflush(stdout);
	for (;;) {
		for (int i = 0; i < 2; i++) {
			/* Inline sends and empty receives: no MR needed. */
			struct ibv_sge sge = { .addr = (uintptr_t)ud[i].buf, .length = 64 };
			struct ibv_recv_wr rwr = { .num_sge = 0 }, *rbad;
			struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .sg_list = &sge, .num_sge = 1,
						  .send_flags = IBV_SEND_INLINE,
						  .wr.ud = { .ah = ud[i].ah, .remote_qpn = 0x4242,
							     .remote_qkey = 0x1234 } }, *bad;
			struct ibv_wc wc[8];

			ibv_post_recv(ud[i].qp, &rwr, &rbad);
			ibv_post_srq_recv(srq, &rwr, &rbad);
			ibv_post_send(ud[i].qp, &wr, &bad);
			ibv_poll_cq(ud[i].cq, 8, wc);
		}
		usleep(1000);
	}
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	int rc = 2;

	if (argc < 4 || gid_from_ipv4(argv[3], &peer_gid)) {
		fprintf(stderr, "usage: %s scribble|hold DEV PEER_IPV4 [READY]\n", argv[0]);
		return 2;
	}
	ctx = open_by_name(argv[2]);
	if (!ctx)
		return 1;
	sgid_index = ipv4_gid_index(ctx, NULL);
	if (sgid_index < 0) {
		fprintf(stderr, "no IPv4 GID on %s\n", argv[2]);
		return 1;
	}
	if (!strcmp(argv[1], "scribble"))
		rc = mode_scribble(ctx);
	else if (!strcmp(argv[1], "hold") && argc == 5)
		rc = mode_hold(ctx, argv[4]);
	CHECK(ibv_close_device(ctx) == 0, "close_device");
	printf("%d failure(s)\n", failures);
	return rc || failures ? 1 : 0;
}

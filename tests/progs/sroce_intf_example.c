// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_intf_example - seed 004's example program, as in
 * Documentation/srocedv.md ("Interface families"): DEV. A QP's message
 * family and its CQ's formatted family; send_message() sends an inline
 * message and takes its completion with a timestamp, without a lock (the
 * tables are single-threaded) and without a system call when the SQ is
 * polled. Here the QP is an RC QP connected to a second QP of DEV, which
 * receives the message; exit status 0 when both completions came.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/srocedv.h>

#include "progs_common.h"

#define SEND_WR_ID 7

struct context {
	struct ibv_context *context;
	struct ibv_qp *qp;
	struct srocedv_qp_ops_msg *msg;

	struct ibv_cq *cq;
	struct srocedv_cq_formatted_ops *formatted;
};

static int create_ctx(struct context *ctx, struct ibv_pd *pd)
{
	struct ibv_cq_init_attr_ex cq_init = { .cqe = 16, .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP };
	struct srocedv_cq_attr cq_attr = { .format_mask = SROCEDV_WC_BASE | SROCEDV_WC_TS };
	struct ibv_qp_init_attr qp_init = { .qp_type = IBV_QPT_RC,
					    .cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
						     .max_recv_sge = 1, .max_inline_data = 64 } };
	struct srocedv_query_intf_params p = { .intf_version = SROCEDV_INTF_VERSION,
					       .flags = SROCEDV_INTF_FLAG_SINGLE_THREADED };

	ctx->cq = ibv_cq_ex_to_cq(ibv_create_cq_ex(ctx->context, &cq_init));
	qp_init.send_cq = qp_init.recv_cq = ctx->cq;
	ctx->qp = ibv_create_qp(pd, &qp_init);
	if (!ctx->cq || !ctx->qp)
		return -1;
	if (srocedv_modify_cq(ctx->cq, &cq_attr, SROCEDV_CQ_FORMAT_MASK))
		return -1;
	p.intf = SROCEDV_INTF_CQ_FORMATTED;
	p.obj = ctx->cq;
	ctx->formatted = srocedv_query_intf(ctx->context, &p);
	return ctx->formatted ? 0 : -1;
}

/* Send an inline message and take its timestamp without taking any locks. */
static int send_message(struct context *ctx)
{
	char my_msg[] = "blah";
	struct {
		struct srocedv_wc_base base;
		struct srocedv_wc_ts ts;
	} my_comp;
	int ret;

	ret = ctx->msg->send_inline(ctx->qp, (uintptr_t)my_msg, sizeof(my_msg), SEND_WR_ID);
	if (ret)
		return -ret;
	while (!(ret = ctx->formatted->poll_formatted(ctx->cq, &my_comp, sizeof(my_comp))))
		;
	if (ret < 0) {
		struct ibv_wc wc;

		/* Poll for the error and bail out. */
		if (ibv_poll_cq(ctx->cq, 1, &wc) == 1)
			fprintf(stderr, "error completion: %s\n", ibv_wc_status_str(wc.status));
		return ret;
	}
	printf("wr_id:%llu timestamp:%llu\n", (unsigned long long)my_comp.base.wr_id,
	       (unsigned long long)my_comp.ts.timestamp);
	return my_comp.base.wr_id == SEND_WR_ID && my_comp.ts.timestamp ? ret : -1;
}

int main(int argc, char **argv)
{
	struct context a = { 0 }, b = { 0 };
	struct ibv_pd *pd;
	union ibv_gid gid;
	int gid_idx;
	struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				    .qp_access_flags = IBV_ACCESS_LOCAL_WRITE };
	char rbuf[64];
	struct ibv_mr *mr;
	struct srocedv_query_intf_params p = { .intf = SROCEDV_INTF_QP_MSG,
					       .intf_version = SROCEDV_INTF_VERSION,
					       .flags = SROCEDV_INTF_FLAG_SINGLE_THREADED };
	struct srocedv_qp_ops_msg *bmsg;
	struct {
		struct srocedv_wc_base base;
		struct srocedv_wc_ts ts;
	} rcomp;
	int ret;

	if (argc != 2 || open_with_gid(argv[1], &a.context, &pd, &gid, &gid_idx))
		return 2;
	b.context = a.context;
	if (create_ctx(&a, pd) || create_ctx(&b, pd)) {
		fprintf(stderr, "create_ctx: %s\n", strerror(errno));
		return 1;
	}
	mr = ibv_reg_mr(pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	if (!mr || ibv_modify_qp(a.qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ||
	    ibv_modify_qp(b.qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return 1;
	p.obj = b.qp;
	p.family_flags = SROCEDV_QP_OPS_RECV;
	bmsg = srocedv_query_intf(b.context, &p);
	if (!bmsg || bmsg->recv(b.qp, (uintptr_t)rbuf, sizeof(rbuf), mr->lkey, 1) ||
	    qp_to_rts(a.qp, b.qp->qp_num, &gid, gid_idx, 1, 14) || qp_to_rts(b.qp, a.qp->qp_num, &gid, gid_idx, 1, 14))
		return 1;
	p.obj = a.qp;
	p.family_flags = 0;
	a.msg = srocedv_query_intf(a.context, &p);
	if (!a.msg)
		return 1;
	ret = send_message(&a);
	if (ret < 0)
		return 1;
	while (!(ret = b.formatted->poll_formatted(b.cq, &rcomp, sizeof(rcomp))))
		;
	CHECK(ret == 1 && rcomp.base.wr_id == 1 && rcomp.base.byte_len == 5 && !strcmp(rbuf, "blah"),
	      "the seed's example: an inline message sent and received through the families");
	srocedv_release_intf(a.context, a.msg);
	srocedv_release_intf(a.context, bmsg);
	srocedv_release_intf(a.context, a.formatted);
	srocedv_release_intf(a.context, b.formatted);
	CHECK(!ibv_destroy_qp(a.qp) && !ibv_destroy_qp(b.qp) && !ibv_destroy_cq(a.cq) && !ibv_destroy_cq(b.cq),
	      "destroyed after the tables were released");
	return failures ? 1 : 0;
}

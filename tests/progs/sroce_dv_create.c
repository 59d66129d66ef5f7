// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_dv_create - the srocedv create-time path (srocedv_create_qp,
 * srocedv_create_cq, srocedv_create_srq; Documentation/srocedv.md).
 *
 *   sroce_dv_create DEV          objects made through it work: an RC SEND
 *                                from a QP to a QP on an SRQ, completions
 *                                read through the CQ and its completion
 *                                channel (the event names the CQ's context);
 *                                unknown comp_mask bits and NULL arguments
 *                                are refused by the provider
 *   sroce_dv_create DEV future   run with the provider built to pass bit 63
 *                                on (build/user/future-mask): the kernel
 *                                gets it and refuses it with EINVAL
 */
#include <poll.h>
#include <stdint.h>

#include "progs_common.h"

#include <infiniband/srocedv.h>

#define FUTURE_BIT (1ull << 63)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_idx;

static struct ibv_cq_ex *dv_cq(uint64_t mask, struct ibv_comp_channel *ch, void *cq_context)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 16, .channel = ch, .cq_context = cq_context,
					 .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM };
	struct srocedv_cq_init_attr d = { .comp_mask = mask };

	return srocedv_create_cq(ctx, &a, &d);
}

static struct ibv_srq *dv_srq(uint64_t mask)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct srocedv_srq_init_attr d = { .comp_mask = mask };

	return srocedv_create_srq(pd, &a, &d);
}

static struct ibv_qp *dv_qp(uint64_t mask, struct ibv_cq_ex *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RC,
		.send_cq = cq ? ibv_cq_ex_to_cq(cq) : NULL,
		.recv_cq = cq ? ibv_cq_ex_to_cq(cq) : NULL,
		.srq = srq,
		.cap = { .max_send_wr = 8, .max_recv_wr = srq ? 0 : 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND,
	};
	struct srocedv_qp_init_attr d = { .comp_mask = mask };

	return srocedv_create_qp(ctx, &a, &d);
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* An RC SEND from a to b (on srq), b's completion through the channel. */
static void traffic(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	int tag = 42;
	struct ibv_cq_ex *cqa = dv_cq(0, NULL, NULL), *cqb = ch ? dv_cq(0, ch, &tag) : NULL;
	struct ibv_srq *srq = dv_srq(0);
	struct ibv_qp *a = cqa ? dv_qp(0, cqa, NULL) : NULL, *b = cqb && srq ? dv_qp(0, cqb, srq) : NULL;
	uint8_t *buf = aligned_alloc(4096, 8192);
	struct ibv_mr *mr = buf ? ibv_reg_mr(pd, buf, 8192, IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_poll_cq_attr pa = {};
	struct ibv_cq *ev_cq = NULL;
	void *ev_ctx = NULL;
	struct pollfd pfd;

	CHECK(a && b && srq && mr, "comp_mask 0: srocedv_create_cq (with a channel), _srq and _qp (%s)",
	      a && b && srq && mr ? "ok" : strerror(errno));
	if (!(a && b && srq && mr))
		goto out;
	CHECK(to_init(a) == 0 && to_init(b) == 0 && qp_to_rts(a, b->qp_num, &gid, gid_idx, 1, 14) == 0 &&
		      qp_to_rts(b, a->qp_num, &gid, gid_idx, 1, 14) == 0,
	      "the QPs connect (RTS)");
	memset(buf, 0, 8192);
	memcpy(buf, "through srocedv", 16);
	{
		struct ibv_sge s = { (uintptr_t)buf + 4096, 64, mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &s, .num_sge = 1 }, *bad;

		CHECK(ibv_post_srq_recv(srq, &wr, &bad) == 0, "a receive on the srocedv SRQ");
	}
	CHECK(ibv_req_notify_cq(ibv_cq_ex_to_cq(cqb), 0) == 0, "B's CQ armed");
	{
		struct ibv_qp_ex *x = ibv_qp_to_qp_ex(a);

		CHECK(x != NULL, "the srocedv QP has the builders it asked for");
		if (!x)
			goto out;
		ibv_wr_start(x);
		x->wr_id = 1;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(x);
		ibv_wr_set_sge(x, mr->lkey, (uintptr_t)buf, 16);
		CHECK(ibv_wr_complete(x) == 0, "A sends 16 bytes");
	}
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	CHECK(poll(&pfd, 1, 10000) == 1 && ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == 0,
	      "a completion event on B's channel");
	CHECK(ev_cq == ibv_cq_ex_to_cq(cqb) && ev_ctx == &tag, "it names B's CQ and its cq_context");
	if (ev_cq)
		ibv_ack_cq_events(ev_cq, 1);
	CHECK(ibv_start_poll(cqb, &pa) == 0, "B's completion is there");
	CHECK(cqb->wr_id == 7 && cqb->status == IBV_WC_SUCCESS && ibv_wc_read_byte_len(cqb) == 16 &&
		      ibv_wc_read_qp_num(cqb) == b->qp_num && !memcmp(buf + 4096, "through srocedv", 16),
	      "B received the 16 bytes through the SRQ: wr_id %llu, %s",
	      (unsigned long long)cqb->wr_id, ibv_wc_status_str(cqb->status));
	ibv_end_poll(cqb);
out:
	if (a)
		ibv_destroy_qp(a);
	if (b)
		ibv_destroy_qp(b);
	if (srq)
		CHECK(ibv_destroy_srq(srq) == 0, "destroy the srocedv SRQ");
	if (cqa)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cqa));
	if (cqb)
		CHECK(ibv_destroy_cq(ibv_cq_ex_to_cq(cqb)) == 0, "destroy the CQ with a channel");
	if (ch)
		CHECK(ibv_destroy_comp_channel(ch) == 0, "destroy the channel: the CQ gave its reference back");
	if (mr)
		ibv_dereg_mr(mr);
	free(buf);
}

/* Every create with `mask` fails with `want`; nothing is left behind. */
static void refused(uint64_t mask, int want, const char *who)
{
	struct ibv_cq_ex *cq = dv_cq(0, NULL, NULL), *bad_cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;

	errno = 0;
	bad_cq = dv_cq(mask, NULL, NULL);
	CHECK(!bad_cq && errno == want, "srocedv_create_cq, comp_mask %#llx: %s (%s wants %s)",
	      (unsigned long long)mask, strerror(errno), who, strerror(want));
	errno = 0;
	srq = dv_srq(mask);
	CHECK(!srq && errno == want, "srocedv_create_srq, comp_mask %#llx: %s", (unsigned long long)mask,
	      strerror(errno));
	errno = 0;
	qp = cq ? dv_qp(mask, cq, NULL) : NULL;
	CHECK(!qp && errno == want, "srocedv_create_qp, comp_mask %#llx: %s", (unsigned long long)mask,
	      strerror(errno));
	if (bad_cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(bad_cq));
	if (srq)
		ibv_destroy_srq(srq);
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
}

int main(int argc, char **argv)
{
	bool future = argc > 2 && !strcmp(argv[2], "future");

	if (argc < 2) {
		fprintf(stderr, "usage: %s DEV [future]\n", argv[0]);
		return 2;
	}
	if (open_with_gid(argv[1], &ctx, &pd, &gid, &gid_idx))
		return 1;
	if (future) {
		/* This provider claims bit 63 and sends it: the kernel refuses. */
		refused(FUTURE_BIT, EINVAL, "the kernel");
	} else {
		traffic();
		refused(FUTURE_BIT, EOPNOTSUPP, "the provider");
		refused(1ull << 1, EOPNOTSUPP, "the provider"); /* bit 0 is multi-packet receive */
		errno = 0;
		CHECK(!srocedv_create_cq(ctx, NULL, NULL) && errno == EINVAL, "NULL cq_attr: %s",
		      strerror(errno));
		errno = 0;
		CHECK(!srocedv_create_qp(NULL, NULL, NULL) && errno == EINVAL, "NULL context: %s",
		      strerror(errno));
		errno = 0;
		CHECK(!srocedv_create_srq(NULL, NULL, NULL) && errno == EINVAL, "NULL pd: %s", strerror(errno));
	}
	CHECK(ibv_dealloc_pd(pd) == 0, "dealloc_pd: nothing left on it");
	CHECK(ibv_close_device(ctx) == 0, "close_device");
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}

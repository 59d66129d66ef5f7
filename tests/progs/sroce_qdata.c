// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_qdata - the provider's data path against one device, QPs talking to
 * each other through the device's own address (the glue loops the packets
 * back through lo). Checks what the completions say, field by field.
 *
 *   sroce_qdata ud DEV   UD SEND with immediate: GRH, IBV_WC_GRH and
 *                        WITH_IMM, src_qp, byte_len; ibv_create_ah_from_wc
 *                        on that completion and a reply through the AH
 *   sroce_qdata rc DEV   RC between two QPs: inline SEND, RDMA WRITE with
 *                        immediate, RDMA READ, fetch-and-add, compare-and-
 *                        swap; a completion channel event; resize_cq with
 *                        completions pending
 */
#include <poll.h>
#include <stdint.h>
#include <unistd.h>

#include "progs_common.h"

#define BUF 8192

struct side {
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_idx;

/* Polls one completion, up to 5 s. */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (int i = 0; i < 5000; i++) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n)
			return n;
		usleep(1000);
	}
	return 0;
}

static int side_init(struct side *s, struct ibv_cq *cq, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x5555,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC };

	s->buf = aligned_alloc(4096, BUF);
	if (!s->buf)
		return -1;
	memset(s->buf, 0, BUF);
	s->mr = ibv_reg_mr(pd, s->buf, BUF, a.qp_access_flags);
	s->qp = ibv_create_qp(pd, &ia);
	if (!s->mr || !s->qp)
		return -1;
	return ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					   (type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
}

static void side_fini(struct side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	free(s->buf);
}

static int post_recv(struct side *s, uint64_t id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf + off, .length = len, .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(s->qp, &wr, &bad);
}

static int mode_ud(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct side a = {}, b = {};
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = gid, .sgid_index = gid_idx, .hop_limit = 64 } };
	struct ibv_ah *ah = NULL, *reply = NULL;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = 7, .opcode = IBV_WR_SEND_WITH_IMM, .sg_list = &sge,
				  .num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htonl(0xc0ffee) }, *bad;
	struct ibv_wc wc, rwc = {};
	int got_send = 0, got_recv = 0;

	if (!cq || side_init(&a, cq, IBV_QPT_UD) || side_init(&b, cq, IBV_QPT_UD) ||
	    qp_to_rts(a.qp, 0, &gid, gid_idx, 4, 14) || qp_to_rts(b.qp, 0, &gid, gid_idx, 4, 14) ||
	    !(ah = ibv_create_ah(pd, &aa))) {
		CHECK(0, "UD set up: %s", strerror(errno));
		goto out;
	}
	CHECK(post_recv(&b, 100, 0, 40 + 256) == 0, "B posts a receive with room for the GRH");
	memcpy(a.buf + 1024, "hello over UD", 14);
	sge = (struct ibv_sge){ .addr = (uintptr_t)a.buf + 1024, .length = 200, .lkey = a.mr->lkey };
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = b.qp->qp_num;
	wr.wr.ud.remote_qkey = 0x5555;
	CHECK(ibv_post_send(a.qp, &wr, &bad) == 0, "A sends 200 bytes with immediate to B");
	for (int i = 0; i < 2 && poll_one(cq, &wc); i++) {
		if (wc.wr_id == 7)
			got_send = wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND;
		else if (wc.wr_id == 100) {
			got_recv = 1;
			rwc = wc;
		}
	}
	CHECK(got_send, "send completion");
	CHECK(got_recv && rwc.status == IBV_WC_SUCCESS && rwc.opcode == IBV_WC_RECV,
	      "receive completion: %s", ibv_wc_status_str(rwc.status));
	CHECK(rwc.byte_len == 240, "byte_len %u = 40 (GRH) + 200", rwc.byte_len);
	CHECK((rwc.wc_flags & IBV_WC_GRH) && (rwc.wc_flags & IBV_WC_WITH_IMM),
	      "wc_flags %#x: GRH and WITH_IMM", rwc.wc_flags);
	CHECK(ntohl(rwc.imm_data) == 0xc0ffee, "imm_data %#x", ntohl(rwc.imm_data));
	CHECK(rwc.src_qp == a.qp->qp_num && rwc.qp_num == b.qp->qp_num, "src_qp %#x (A %#x), qp_num %#x",
	      rwc.src_qp, a.qp->qp_num, rwc.qp_num);
	CHECK(!memcmp(b.buf + 40, "hello over UD", 14), "payload after the GRH");
	if (!got_recv)
		goto out;

	/* The responder's way to answer: an AH from the completion and GRH. */
	reply = ibv_create_ah_from_wc(pd, &rwc, (struct ibv_grh *)b.buf, 1);
	CHECK(reply != NULL, "ibv_create_ah_from_wc: %s", reply ? "ok" : strerror(errno));
	if (!reply)
		goto out;
	CHECK(post_recv(&a, 200, 4096, 40 + 64) == 0, "A posts a receive");
	memcpy(b.buf + 2048, "reply", 6);
	sge = (struct ibv_sge){ .addr = (uintptr_t)b.buf + 2048, .length = 6, .lkey = b.mr->lkey };
	wr.wr_id = 8;
	wr.opcode = IBV_WR_SEND;
	wr.wr.ud.ah = reply;
	wr.wr.ud.remote_qpn = rwc.src_qp;
	CHECK(ibv_post_send(b.qp, &wr, &bad) == 0, "B replies through that AH");
	got_recv = 0;
	for (int i = 0; i < 2 && poll_one(cq, &wc); i++)
		if (wc.wr_id == 200)
			got_recv = wc.status == IBV_WC_SUCCESS && wc.byte_len == 46 &&
				   !memcmp(a.buf + 4096 + 40, "reply", 6);
	CHECK(got_recv, "A received the reply");
out:
	if (reply)
		ibv_destroy_ah(reply);
	if (ah)
		ibv_destroy_ah(ah);
	side_fini(&a);
	side_fini(&b);
	if (cq)
		CHECK(ibv_destroy_cq(cq) == 0, "destroy CQ");
	return failures;
}

/* Posts one send WR on A and waits for its completion. */
static int rc_op(struct side *a, struct ibv_cq *cq, struct ibv_send_wr *wr, struct ibv_wc *wc)
{
	struct ibv_send_wr *bad;

	wr->send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(a->qp, wr, &bad))
		return -1;
	while (poll_one(cq, wc))
		if (wc->wr_id == wr->wr_id)
			return wc->status == IBV_WC_SUCCESS ? 0 : -1;
	return -1;
}

static int mode_rc(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cqa = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	struct ibv_cq *cqb = ch ? ibv_create_cq(ctx, 32, NULL, ch, 0) : NULL;
	struct side a = {}, b = {};
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	struct ibv_wc wc;
	uint64_t *word;

	if (!cqa || !cqb || side_init(&a, cqa, IBV_QPT_RC) || side_init(&b, cqb, IBV_QPT_RC) ||
	    qp_to_rts(a.qp, b.qp->qp_num, &gid, gid_idx, 4, 14) ||
	    qp_to_rts(b.qp, a.qp->qp_num, &gid, gid_idx, 4, 14)) {
		CHECK(0, "RC set up: %s", strerror(errno));
		goto out;
	}
	word = (uint64_t *)(b.buf + 4096);

	/* Inline SEND; B waits for it through the completion channel. */
	CHECK(ibv_req_notify_cq(cqb, 0) == 0, "B arms its CQ");
	CHECK(post_recv(&b, 1, 0, 1024) == 0, "B posts a receive");
	memcpy(a.buf, "inline hello", 13);
	sge = (struct ibv_sge){ .addr = (uintptr_t)a.buf, .length = 13 };
	wr = (struct ibv_send_wr){ .wr_id = 10, .opcode = IBV_WR_SEND, .sg_list = &sge, .num_sge = 1,
				   .send_flags = IBV_SEND_INLINE };
	CHECK(rc_op(&a, cqa, &wr, &wc) == 0, "inline SEND completes: %s", ibv_wc_status_str(wc.status));
	{
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		struct ibv_cq *ev_cq;
		void *ev_ctx;

		CHECK(poll(&pfd, 1, 5000) == 1 && !ibv_get_cq_event(ch, &ev_cq, &ev_ctx) && ev_cq == cqb,
		      "completion event on B's channel");
		ibv_ack_cq_events(cqb, 1);
	}
	CHECK(poll_one(cqb, &wc) && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		      wc.byte_len == 13 && !memcmp(b.buf, "inline hello", 13),
	      "B received it: byte_len %u", wc.byte_len);

	/* RDMA WRITE with immediate: data lands, B's receive carries imm. */
	CHECK(post_recv(&b, 2, 0, 0) == 0, "B posts a receive for the immediate");
	memset(a.buf + 1024, 0xab, 512);
	sge = (struct ibv_sge){ .addr = (uintptr_t)a.buf + 1024, .length = 512, .lkey = a.mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 11, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .sg_list = &sge,
				   .num_sge = 1, .imm_data = htonl(0x1234),
				   .wr.rdma = { .remote_addr = (uintptr_t)b.buf + 2048, .rkey = b.mr->rkey } };
	CHECK(rc_op(&a, cqa, &wr, &wc) == 0 && wc.opcode == IBV_WC_RDMA_WRITE, "WRITE_WITH_IMM completes");
	CHECK(poll_one(cqb, &wc) && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		      (wc.wc_flags & IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == 0x1234 && wc.byte_len == 512,
	      "B: RECV_RDMA_WITH_IMM, imm %#x, byte_len %u", ntohl(wc.imm_data), wc.byte_len);
	CHECK(b.buf[2048] == 0xab && b.buf[2048 + 511] == 0xab && b.buf[2048 + 512] == 0, "written bytes");

	/* RDMA READ back into A. */
	sge = (struct ibv_sge){ .addr = (uintptr_t)a.buf + 3072, .length = 512, .lkey = a.mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 12, .opcode = IBV_WR_RDMA_READ, .sg_list = &sge, .num_sge = 1,
				   .wr.rdma = { .remote_addr = (uintptr_t)b.buf + 2048, .rkey = b.mr->rkey } };
	CHECK(rc_op(&a, cqa, &wr, &wc) == 0 && wc.opcode == IBV_WC_RDMA_READ && wc.byte_len == 512,
	      "READ completes: byte_len %u", wc.byte_len);
	CHECK(!memcmp(a.buf + 3072, b.buf + 2048, 512), "read bytes");

	/* Atomics on B's word. */
	*word = 40;
	sge = (struct ibv_sge){ .addr = (uintptr_t)a.buf + 5008, .length = 8, .lkey = a.mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 13, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .sg_list = &sge,
				   .num_sge = 1,
				   .wr.atomic = { .remote_addr = (uintptr_t)word, .compare_add = 2,
						  .rkey = b.mr->rkey } };
	CHECK(rc_op(&a, cqa, &wr, &wc) == 0 && wc.opcode == IBV_WC_FETCH_ADD && wc.byte_len == 8,
	      "FETCH_AND_ADD completes");
	CHECK(*(uint64_t *)(uintptr_t)sge.addr == 40 && *word == 42, "fetched %llu, now %llu",
	      (unsigned long long)*(uint64_t *)(uintptr_t)sge.addr, (unsigned long long)*word);
	wr = (struct ibv_send_wr){ .wr_id = 14, .opcode = IBV_WR_ATOMIC_CMP_AND_SWP, .sg_list = &sge,
				   .num_sge = 1,
				   .wr.atomic = { .remote_addr = (uintptr_t)word, .compare_add = 42, .swap = 7,
						  .rkey = b.mr->rkey } };
	CHECK(rc_op(&a, cqa, &wr, &wc) == 0 && wc.opcode == IBV_WC_COMP_SWAP, "CMP_AND_SWP completes");
	CHECK(*(uint64_t *)(uintptr_t)sge.addr == 42 && *word == 7, "swapped: old %llu, now %llu",
	      (unsigned long long)*(uint64_t *)(uintptr_t)sge.addr, (unsigned long long)*word);

	/* Completions pending across a resize: they move to the new ring. */
	for (int i = 0; i < 4; i++)
		post_recv(&b, 20 + i, 0, 64);
	for (int i = 0; i < 4; i++) {
		struct ibv_send_wr *bad;

		sge = (struct ibv_sge){ .addr = (uintptr_t)a.buf, .length = 8 };
		wr = (struct ibv_send_wr){ .wr_id = 30 + i, .opcode = IBV_WR_SEND, .sg_list = &sge,
					   .num_sge = 1, .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED };
		ibv_post_send(a.qp, &wr, &bad);
	}
	for (int i = 0; i < 4; i++)
		poll_one(cqa, &wc);
	usleep(200000); /* the receives complete with the sends' ACKs, or soon after */
	CHECK(ibv_resize_cq(cqb, 8) == 0 && cqb->cqe >= 8, "resize B's CQ down to 8 with 4 completions pending");
	CHECK(ibv_resize_cq(cqb, 500) == 0 && cqb->cqe >= 500, "resize B's CQ up: cqe %d", cqb->cqe);
	{
		int seen = 0;

		while (seen < 4 && poll_one(cqb, &wc) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 20u + seen)
			seen++;
		CHECK(seen == 4, "the 4 pending completions, in order, after the resizes (%d)", seen);
	}
out:
	side_fini(&a);
	side_fini(&b);
	if (cqa)
		ibv_destroy_cq(cqa);
	if (cqb)
		CHECK(ibv_destroy_cq(cqb) == 0, "destroy CQs");
	if (ch)
		ibv_destroy_comp_channel(ch);
	return failures;
}

int main(int argc, char **argv)
{
	int rc = 2;

	if (argc != 3) {
		fprintf(stderr, "usage: %s ud|rc DEV\n", argv[0]);
		return 2;
	}
	if (open_with_gid(argv[2], &ctx, &pd, &gid, &gid_idx))
		return 1;
	if (!strcmp(argv[1], "ud"))
		rc = mode_ud();
	else if (!strcmp(argv[1], "rc"))
		rc = mode_rc();
	CHECK(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	CHECK(ibv_close_device(ctx) == 0, "close_device");
	printf("%d failure(s)\n", failures);
	return rc || failures ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_intf.c - the interface families (libuser/intf*.c, seed 004) against
 * ibv_post_send, ibv_post_recv and ibv_poll_cq, on rings in this process's
 * memory: the test plays the kernel.
 *
 * 1. Every QP family function, in both tables (locked, single-threaded) and
 *    every mode, writes the WQE ibv_post_send writes for the same work
 *    request, byte for byte, with the ring wrapping many times.
 * 2. Pending WRs stay unpublished until flush, which publishes them with
 *    one producer update and one doorbell; a plain post rings once.
 * 3. recv_repost posts again exactly the WRs the kernel took, oldest first,
 *    never one it has not taken, and never a slot overwritten since.
 * 4. The query's checks: family, version, flags, QP type and state, SRQ;
 *    EBUSY for other fence/solicited flags and for destroy while a table
 *    is held (a signalled and an unsignalled table of one QP are fine, and
 *    post as ibv_post_send with and without IBV_SEND_SIGNALED); release of
 *    an unknown table is EINVAL.
 * 5. An inline-only QP (max_send_sge 0, inline room) gets its send groups:
 *    the inline functions write what ibv_post_send with IBV_SEND_INLINE
 *    writes, those taking a gather entry are NULL, and READ is refused.
 * 6. A query in destroy's window (its check passed, the QP not yet freed)
 *    is refused with EBUSY and takes no table; a destroy the kernel
 *    refuses leaves the QP to queries again.
 *
 * The formatted CQ: test_intf_cq.c; two posting threads: test_intf_threads.c.
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_qp.h"
#include "intf_fixture.h"

/* The doorbell's system call goes to a pipe: each write() is one ring. */
static int db_pipe[2];

static int doorbells(void)
{
	char buf[4096];
	int n = 0;
	ssize_t r;

	while ((r = read(db_pipe[0], buf, sizeof(buf))) > 0)
		n += (int)(r / (ssize_t)sizeof(struct ibv_post_send));
	return n;
}

/* Destroy's kernel command, in place of libibverbs' (this executable's
 * definition wins): it runs in destroy's window, after the check that no
 * table is held and before the free, so it queries the QP there, then
 * answers destroy_err. */
static int destroy_err;
static const void *raced;
static int raced_errno;

int ibv_cmd_destroy_qp(struct ibv_qp *qp)
{
	errno = 0;
	raced = query(qp, SROCEDV_INTF_QP_MSG, 0, 0);
	raced_errno = errno;
	return destroy_err;
}

/* The bytes of a WQE that mean something (header and its SGEs or inline
 * data): the rest of a slot is stale. */
static size_t wqe_bytes(const struct sroce_wqe *w)
{
	return sizeof(*w) + ((w->flags & SROCE_WQE_INLINE) ? w->inline_len : w->num_sge * sizeof(struct sroce_sge));
}

enum fn { READ, WRITE, WRITE_IMM, WRITE_INLINE, WRITE_PENDING, SEND, SEND_IMM, SEND_INLINE,
	  SEND_PENDING, SEND_INLINE_PENDING, SENDTO, SENDTO_IMM, SENDTO_INLINE, FN_COUNT };

/* Posts one WR of kind fn through the tables, and the same through
 * ibv_post_send on `ref`; the two WQEs must be the same bytes. */
static void same_wqe(struct fake_qp_rq *q, struct fake_qp_rq *ref, const struct srocedv_qp_ops_rdma *rdma,
		     const struct srocedv_qp_ops_msg *msg, enum fn fn, unsigned int send_flags, struct ibv_ah *ah)
{
	struct ibv_qp *qp = ibqp_of(q);
	uint32_t len = fn == WRITE_INLINE || fn == SEND_INLINE || fn == SEND_INLINE_PENDING || fn == SENDTO_INLINE
			       ? (uint32_t)(rnd() % (MAX_INLINE + 1))
			       : (uint32_t)rnd();
	uint64_t addr = fn == WRITE_INLINE || fn == SEND_INLINE || fn == SEND_INLINE_PENDING || fn == SENDTO_INLINE
				? (uintptr_t)payload + rnd() % (sizeof(payload) - MAX_INLINE)
				: rnd();
	uint32_t lkey = (uint32_t)rnd(), rkey = (uint32_t)rnd(), imm = (uint32_t)rnd();
	uint32_t rqpn = (uint32_t)rnd() & 0xffffff, qkey = (uint32_t)rnd();
	uint64_t raddr = rnd(), wr_id = rnd();
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .send_flags = send_flags }, *bad;
	uint32_t at = q->f.qp.sq.idx;
	int err = -1;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	switch (fn) {
	case READ:
		wr.opcode = IBV_WR_RDMA_READ;
		err = rdma->read(qp, addr, len, lkey, raddr, rkey, wr_id);
		break;
	case WRITE:
	case WRITE_PENDING:
		wr.opcode = IBV_WR_RDMA_WRITE;
		err = (fn == WRITE ? rdma->write : rdma->write_pending)(qp, addr, len, lkey, raddr, rkey, wr_id);
		break;
	case WRITE_IMM:
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = imm;
		err = rdma->write_imm(qp, addr, len, lkey, imm, raddr, rkey, wr_id);
		break;
	case WRITE_INLINE:
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags |= IBV_SEND_INLINE;
		err = rdma->write_inline(qp, addr, len, raddr, rkey, wr_id);
		break;
	case SEND:
	case SEND_PENDING:
		wr.opcode = IBV_WR_SEND;
		err = (fn == SEND ? msg->send : msg->send_pending)(qp, addr, len, lkey, wr_id);
		break;
	case SEND_IMM:
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = imm;
		err = msg->send_imm(qp, addr, len, lkey, imm, wr_id);
		break;
	case SEND_INLINE:
	case SEND_INLINE_PENDING:
		wr.opcode = IBV_WR_SEND;
		wr.send_flags |= IBV_SEND_INLINE;
		err = (fn == SEND_INLINE ? msg->send_inline : msg->send_inline_pending)(qp, addr, len, wr_id);
		break;
	case SENDTO:
	case SENDTO_IMM:
	case SENDTO_INLINE:
		memset(&wr.wr, 0, sizeof(wr.wr));
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = rqpn;
		wr.wr.ud.remote_qkey = qkey;
		wr.opcode = fn == SENDTO_IMM ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
		wr.imm_data = fn == SENDTO_IMM ? imm : 0;
		if (fn == SENDTO)
			err = msg->sendto(qp, addr, len, lkey, ah, rqpn, qkey, wr_id);
		else if (fn == SENDTO_IMM)
			err = msg->sendto_imm(qp, addr, len, lkey, imm, ah, rqpn, qkey, wr_id);
		else {
			wr.send_flags |= IBV_SEND_INLINE;
			err = msg->sendto_inline(qp, addr, len, ah, rqpn, qkey, wr_id);
		}
		break;
	default:
		break;
	}
	CHECK(err == 0);
	CHECK(sroce_post_send(ibqp_of(ref), &wr, &bad) == 0);
	CHECK(q->f.qp.sq.idx == at + 1);
	{
		const struct sroce_wqe *a = (const void *)slot(&q->f, at), *b = (const void *)slot(&ref->f, at);

		CHECK(wqe_bytes(a) == wqe_bytes(b) && memcmp(a, b, wqe_bytes(a)) == 0);
	}
}

/* The send flags each mode puts in every WR; SOLICITED only on the MSG
 * family (ibv_post_send takes it on any WR, so the reference does too). */
static unsigned int mode_flags(uint32_t mode)
{
	return ((mode & SROCEDV_QP_OPS_UNSIGNALED) ? 0 : IBV_SEND_SIGNALED) |
	       ((mode & SROCEDV_QP_OPS_FENCE) ? IBV_SEND_FENCE : 0) |
	       ((mode & SROCEDV_QP_OPS_SOLICITED) ? IBV_SEND_SOLICITED : 0);
}

static void test_same_wqes(enum ibv_qp_type type, int rounds)
{
	static struct fake_qp_rq q, ref;
	struct sroce_ah ah = { .handle = 0x4321 };

	for (int r = 0; r < rounds; r++) {
		uint32_t mode = (uint32_t)rnd() & (SROCEDV_QP_OPS_UNSIGNALED | SROCEDV_QP_OPS_FENCE);
		uint32_t msg_mode = mode | ((uint32_t)rnd() & SROCEDV_QP_OPS_SOLICITED);
		uint32_t single = rnd() % 2 ? SROCEDV_INTF_FLAG_SINGLE_THREADED : 0;
		const struct srocedv_qp_ops_rdma *rdma = NULL;
		const struct srocedv_qp_ops_msg *msg;

		qp_init(&q, type);
		qp_init(&ref, type);
		ah.ibv_ah.context = &sctx.vctx.context;
		if (type != IBV_QPT_UD) {
			rdma = query(ibqp_of(&q), SROCEDV_INTF_QP_RDMA, single, mode);
			CHECK(rdma != NULL);
		}
		msg = query(ibqp_of(&q), SROCEDV_INTF_QP_MSG, single, msg_mode);
		CHECK(msg != NULL);
		if (!msg || (type != IBV_QPT_UD && !rdma))
			return;
		/* Four ring lengths of WRs, the kernel consuming as it goes. */
		for (int i = 0; i < (4 << LOG_ENTRIES); i++) {
			enum fn fn;

			if (type == IBV_QPT_UD)
				fn = (enum fn)(SENDTO + rnd() % 3);
			else
				do
					fn = (enum fn)(rnd() % SENDTO);
				while (type == IBV_QPT_UC && fn == READ);
			same_wqe(&q, &ref, rdma, msg, fn,
				 mode_flags(fn >= SEND ? msg_mode : mode), &ah.ibv_ah);
			if (fn == WRITE_PENDING || fn == SEND_PENDING || fn == SEND_INLINE_PENDING) {
				/* Unpublished until flush. */
				CHECK(q.f.hdr.producer + 1 == q.f.qp.sq.idx);
				CHECK((fn == WRITE_PENDING ? rdma->flush : msg->flush)(ibqp_of(&q)) == 0);
			}
			CHECK(q.f.hdr.producer == q.f.qp.sq.idx);
			consume_all(&q.f);
			consume_all(&ref.f);
		}
		if (rdma)
			CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)rdma) == 0);
		CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)msg) == 0);
	}
}

/* Selective signalling: an unsignalled and a signalled table of one QP,
 * used in turn, write what ibv_post_send writes with and without
 * IBV_SEND_SIGNALED. */
static void test_two_tables(void)
{
	static struct fake_qp_rq q, ref;
	const struct srocedv_qp_ops_rdma *quiet, *loud;
	struct ibv_ah *ah = NULL;

	qp_init(&q, IBV_QPT_RC);
	qp_init(&ref, IBV_QPT_RC);
	quiet = query(ibqp_of(&q), SROCEDV_INTF_QP_RDMA, 0, SROCEDV_QP_OPS_UNSIGNALED | SROCEDV_QP_OPS_FENCE);
	loud = query(ibqp_of(&q), SROCEDV_INTF_QP_RDMA, SROCEDV_INTF_FLAG_SINGLE_THREADED, SROCEDV_QP_OPS_FENCE);
	CHECK(quiet && loud);
	if (!quiet || !loud)
		return;
	for (int i = 0; i < (4 << LOG_ENTRIES); i++) {
		bool signaled = i % 16 == 15;

		same_wqe(&q, &ref, signaled ? loud : quiet, NULL, WRITE,
			 IBV_SEND_FENCE | (signaled ? IBV_SEND_SIGNALED : 0), ah);
		consume_all(&q.f);
		consume_all(&ref.f);
	}
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)quiet) == 0);
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)loud) == 0);
}

/* Pending WRs: one publication and one doorbell per flush; inline too long
 * and a full ring fail with nothing written. */
static void test_pending_and_doorbells(void)
{
	static struct fake_qp_rq q;
	const struct srocedv_qp_ops_msg *msg;
	uint32_t size = 1u << LOG_ENTRIES;

	qp_init(&q, IBV_QPT_RC);
	msg = query(ibqp_of(&q), SROCEDV_INTF_QP_MSG, 0, 0);
	CHECK(msg && msg->send && msg->recv && !msg->sendto);
	if (!msg)
		return;
	ctx_page.flags = SROCE_CTX_NEED_WAKEUP;
	sctx.vctx.context.cmd_fd = db_pipe[1];
	doorbells();
	for (int i = 0; i < 5; i++)
		CHECK(msg->send_pending(ibqp_of(&q), (uintptr_t)payload, 8, 1, (uint64_t)i) == 0);
	CHECK(msg->send_inline_pending(ibqp_of(&q), (uintptr_t)payload, 8, 5) == 0);
	CHECK(q.f.hdr.producer == 0 && q.f.qp.sq.idx == 6);
	CHECK(doorbells() == 0);
	CHECK(msg->flush(ibqp_of(&q)) == 0);
	CHECK(q.f.hdr.producer == 6);
	CHECK(doorbells() == 1);
	CHECK(msg->flush(ibqp_of(&q)) == 0); /* nothing pending: no doorbell */
	CHECK(doorbells() == 0);
	CHECK(msg->send(ibqp_of(&q), (uintptr_t)payload, 8, 1, 7) == 0);
	CHECK(doorbells() == 1);
	/* An answer is due (SQ-A1): the doorbell is skipped, as for ibv_post_send. */
	q.f.hdr.kflags = SROCE_SQ_ACK_DUE;
	CHECK(msg->send(ibqp_of(&q), (uintptr_t)payload, 8, 1, 8) == 0);
	CHECK(doorbells() == 0);
	q.f.hdr.kflags = 0;
	CHECK(msg->send_inline(ibqp_of(&q), (uintptr_t)payload, MAX_INLINE + 1, 9) == EINVAL);
	CHECK(q.f.qp.sq.idx == 8 && q.f.hdr.producer == 8);
	/* Full: ENOMEM, and nothing moves. */
	for (uint32_t i = 8; i < size; i++)
		CHECK(msg->send_pending(ibqp_of(&q), (uintptr_t)payload, 8, 1, i) == 0);
	CHECK(msg->send(ibqp_of(&q), (uintptr_t)payload, 8, 1, 99) == ENOMEM);
	CHECK(msg->send_pending(ibqp_of(&q), (uintptr_t)payload, 8, 1, 99) == ENOMEM);
	CHECK(q.f.qp.sq.idx == size && q.f.hdr.producer == 8);
	CHECK(msg->flush(ibqp_of(&q)) == 0 && q.f.hdr.producer == size);
	CHECK(doorbells() == 1);
	/* The queue lock is free after every path above. */
	CHECK(sroce_spin_trylock(&q.f.qp.sq.lock) == 0);
	sroce_spin_unlock(&q.f.qp.sq.lock);
	ctx_page.flags = 0;
	sctx.vctx.context.cmd_fd = -1;
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)msg) == 0);
}

static int qp_recv(void *obj, const void *ops, uint64_t addr, uint32_t length, uint32_t lkey, uint64_t wr_id)
{
	return ((const struct srocedv_qp_ops_msg *)ops)->recv(obj, addr, length, lkey, wr_id);
}

static int qp_repost(void *obj, const void *ops, int num)
{
	return ((const struct srocedv_qp_ops_msg *)ops)->recv_repost(obj, num);
}

/* recv and recv_repost of a QP against the model (intf_fixture.h). */
static void test_recv_repost(void)
{
	static struct fake_qp_rq q;
	const struct srocedv_qp_ops_msg *msg;

	qp_init(&q, IBV_QPT_UD);
	ibqp_of(&q)->state = IBV_QPS_INIT; /* receives need no RTS */
	msg = query(ibqp_of(&q), SROCEDV_INTF_QP_MSG, SROCEDV_INTF_FLAG_SINGLE_THREADED, SROCEDV_QP_OPS_RECV);
	CHECK(msg && msg->recv && msg->recv_repost && !msg->sendto && !msg->send);
	if (!msg)
		return;
	recv_repost_model(&q.f.qp.rq, ibqp_of(&q), msg, qp_recv, qp_repost);
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)msg) == 0);
}

/* What the query refuses, and what it hands out. */
static void test_query_checks(void)
{
	static struct fake_qp_rq rc, uc, ud, srq_qp;
	struct srocedv_query_intf_params p = { .intf = SROCEDV_INTF_QP_MSG, .intf_version = 1 };
	const struct srocedv_qp_ops_msg *msg, *msg2;
	const struct srocedv_qp_ops_rdma *rdma;
	void *bogus = malloc(64);

	qp_init(&rc, IBV_QPT_RC);
	qp_init(&uc, IBV_QPT_UC);
	qp_init(&ud, IBV_QPT_UD);
	qp_init(&srq_qp, IBV_QPT_RC);
	srq_qp.f.qp.rq.map = NULL;
	p.obj = ibqp_of(&rc);

	errno = 0;
	CHECK(srocedv_query_intf(NULL, &p) == NULL && errno == EINVAL);
	p.intf_version = 2;
	CHECK(srocedv_query_intf(&sctx.vctx.context, &p) == NULL && errno == EOPNOTSUPP);
	p.intf_version = 1;
	p.intf = (enum srocedv_intf_family)9;
	CHECK(srocedv_query_intf(&sctx.vctx.context, &p) == NULL && errno == EOPNOTSUPP);
	p.intf = SROCEDV_INTF_QP_MSG;
	p.comp_mask = 1;
	CHECK(srocedv_query_intf(&sctx.vctx.context, &p) == NULL && errno == EOPNOTSUPP);
	p.comp_mask = 0;
	p.flags = 1u << 5;
	CHECK(srocedv_query_intf(&sctx.vctx.context, &p) == NULL && errno == EINVAL);
	p.flags = 0;
	p.family_flags = 1u << 20;
	CHECK(srocedv_query_intf(&sctx.vctx.context, &p) == NULL && errno == EINVAL);

	/* Groups the QP type or its queues refuse. */
	errno = 0;
	CHECK(query(ibqp_of(&rc), SROCEDV_INTF_QP_MSG, 0, SROCEDV_QP_OPS_SENDTO) == NULL && errno == EINVAL);
	CHECK(query(ibqp_of(&uc), SROCEDV_INTF_QP_MSG, 0, SROCEDV_QP_OPS_SENDTO) == NULL && errno == EINVAL);
	CHECK(query(ibqp_of(&ud), SROCEDV_INTF_QP_MSG, 0, SROCEDV_QP_OPS_SEND) == NULL && errno == EINVAL);
	CHECK(query(ibqp_of(&ud), SROCEDV_INTF_QP_RDMA, 0, 0) == NULL && errno == EINVAL);
	CHECK(query(ibqp_of(&uc), SROCEDV_INTF_QP_RDMA, 0, SROCEDV_QP_OPS_READ) == NULL && errno == EINVAL);
	CHECK(query(ibqp_of(&rc), SROCEDV_INTF_QP_RDMA, 0, SROCEDV_QP_OPS_RECV) == NULL && errno == EINVAL);
	CHECK(query(ibqp_of(&srq_qp), SROCEDV_INTF_QP_MSG, 0, SROCEDV_QP_OPS_RECV) == NULL && errno == EINVAL);
	/* States: no sends before RTS, no receives in RESET. */
	ibqp_of(&rc)->state = IBV_QPS_RTR;
	CHECK(query(ibqp_of(&rc), SROCEDV_INTF_QP_MSG, 0, SROCEDV_QP_OPS_SEND) == NULL && errno == EINVAL);
	msg = query(ibqp_of(&rc), SROCEDV_INTF_QP_MSG, 0, SROCEDV_QP_OPS_RECV);
	CHECK(msg && msg->recv && !msg->send && !msg->flush);
	CHECK(msg && srocedv_release_intf(&sctx.vctx.context, (void *)msg) == 0);
	ibqp_of(&rc)->state = IBV_QPS_RESET;
	CHECK(query(ibqp_of(&rc), SROCEDV_INTF_QP_MSG, 0, SROCEDV_QP_OPS_RECV) == NULL && errno == EINVAL);
	ibqp_of(&rc)->state = IBV_QPS_RTS;

	/* The default groups: what the type allows. */
	rdma = query(ibqp_of(&uc), SROCEDV_INTF_QP_RDMA, 0, 0);
	CHECK(rdma && !rdma->read && rdma->write && rdma->flush);
	msg = query(ibqp_of(&ud), SROCEDV_INTF_QP_MSG, 0, 0);
	CHECK(msg && msg->sendto && msg->recv && !msg->send && !msg->send_pending);
	{
		/* No AH: EINVAL, as from ibv_post_send, and nothing is posted. */
		uint32_t idx = ud.f.qp.sq.idx;
		char byte = 0;

		CHECK(msg->sendto(ibqp_of(&ud), (uintptr_t)&byte, 1, 1, NULL, 2, 3, 4) == EINVAL);
		CHECK(msg->sendto_imm(ibqp_of(&ud), (uintptr_t)&byte, 1, 1, 5, NULL, 2, 3, 4) == EINVAL);
		CHECK(msg->sendto_inline(ibqp_of(&ud), (uintptr_t)&byte, 1, NULL, 2, 3, 4) == EINVAL);
		CHECK(ud.f.qp.sq.idx == idx);
	}
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)rdma) == 0);
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)msg) == 0);

	/* Fence and solicited are the family's on the QP; signalling and
	 * locking each table's own; destroy waits for them all. */
	msg = query(ibqp_of(&rc), SROCEDV_INTF_QP_MSG, 0, SROCEDV_QP_OPS_UNSIGNALED);
	CHECK(msg != NULL);
	CHECK(query(ibqp_of(&rc), SROCEDV_INTF_QP_MSG, 0, SROCEDV_QP_OPS_FENCE) == NULL && errno == EBUSY);
	CHECK(query(ibqp_of(&rc), SROCEDV_INTF_QP_MSG, 0, SROCEDV_QP_OPS_SOLICITED) == NULL && errno == EBUSY);
	msg2 = query(ibqp_of(&rc), SROCEDV_INTF_QP_MSG, SROCEDV_INTF_FLAG_SINGLE_THREADED, 0);
	CHECK(msg2 && msg2 != msg && msg2->send != msg->send);
	rdma = query(ibqp_of(&rc), SROCEDV_INTF_QP_RDMA, 0, SROCEDV_QP_OPS_FENCE);
	CHECK(rdma && rdma->read);
	CHECK(sroce_destroy_qp(ibqp_of(&rc)) == EBUSY);
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)msg) == 0);
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)msg) == EINVAL);
	CHECK(srocedv_release_intf(&sctx.vctx.context, bogus) == EINVAL);
	CHECK(srocedv_release_intf(&sctx.vctx.context, NULL) == EINVAL);
	CHECK(sroce_destroy_qp(ibqp_of(&rc)) == EBUSY);
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)msg2) == 0);
	CHECK(sroce_destroy_qp(ibqp_of(&rc)) == EBUSY); /* the RDMA table */
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)rdma) == 0);
	CHECK(rc.f.qp.intf.refs[SROCE_INTF_RDMA] == 0 && rc.f.qp.intf.refs[SROCE_INTF_MSG] == 0);
	/* Now another mode is free to take. */
	msg = query(ibqp_of(&rc), SROCEDV_INTF_QP_MSG, 0, 0);
	CHECK(msg && srocedv_release_intf(&sctx.vctx.context, (void *)msg) == 0);

	/* A QP passed as a CQ's family, or a QP of another context: refused. */
	{
		struct ibv_context other = { .device = (struct ibv_device *)&other };
		struct ibv_context *saved = ibqp_of(&ud)->context;

		ibqp_of(&ud)->context = &other;
		CHECK(query(ibqp_of(&ud), SROCEDV_INTF_QP_MSG, 0, 0) == NULL && errno == EINVAL);
		ibqp_of(&ud)->context = saved;
	}
	free(bogus);
}

/* 5: an inline-only QP posts IBV_SEND_INLINE WRs through ibv_post_send;
 * its tables post them too, and hold nothing that writes a gather entry. */
static void test_inline_only(void)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };
	static const enum fn connected[] = { WRITE_INLINE, SEND_INLINE, SEND_INLINE_PENDING };
	static struct fake_qp_rq q, ref;
	struct sroce_ah ah = { .handle = 0x4321 };

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		bool ud = types[t] == IBV_QPT_UD;
		const struct srocedv_qp_ops_rdma *rdma = NULL;
		const struct srocedv_qp_ops_msg *msg;

		qp_init(&q, types[t]);
		qp_init(&ref, types[t]);
		q.f.qp.max_send_sge = ref.f.qp.max_send_sge = 0;
		ah.ibv_ah.context = &sctx.vctx.context;
		msg = query(ibqp_of(&q), SROCEDV_INTF_QP_MSG, 0, 0);
		CHECK(msg && msg->recv && msg->flush && !msg->send && !msg->send_imm && !msg->send_pending &&
		      !msg->sendto && !msg->sendto_imm);
		CHECK(msg && (ud ? msg->sendto_inline && !msg->send_inline
				 : msg->send_inline && msg->send_inline_pending && !msg->sendto_inline));
		if (!ud) {
			CHECK(query(ibqp_of(&q), SROCEDV_INTF_QP_RDMA, 0, SROCEDV_QP_OPS_READ) == NULL &&
			      errno == EINVAL);
			rdma = query(ibqp_of(&q), SROCEDV_INTF_QP_RDMA, 0, 0);
			CHECK(rdma && rdma->write_inline && rdma->flush && !rdma->read && !rdma->write &&
			      !rdma->write_imm && !rdma->write_pending);
		}
		if (!msg || (!ud && !rdma))
			return;
		for (int i = 0; i < (2 << LOG_ENTRIES); i++) {
			enum fn fn = ud ? SENDTO_INLINE : connected[rnd() % 3];

			same_wqe(&q, &ref, rdma, msg, fn, IBV_SEND_SIGNALED, &ah.ibv_ah);
			if (fn == SEND_INLINE_PENDING)
				CHECK(msg->flush(ibqp_of(&q)) == 0);
			CHECK(q.f.hdr.producer == q.f.qp.sq.idx);
			consume_all(&q.f);
			consume_all(&ref.f);
		}
		if (rdma)
			CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)rdma) == 0);
		CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)msg) == 0);
	}
	/* No gather entry and no inline room: no send group. */
	qp_init(&q, IBV_QPT_RC);
	q.f.qp.max_send_sge = 0;
	q.f.qp.max_inline = 0;
	CHECK(query(ibqp_of(&q), SROCEDV_INTF_QP_MSG, 0, SROCEDV_QP_OPS_SEND) == NULL && errno == EINVAL);
	CHECK(query(ibqp_of(&q), SROCEDV_INTF_QP_RDMA, 0, 0) == NULL && errno == EINVAL);
}

/* 6: destroy racing a query. */
static void test_destroy_race(void)
{
	struct fake_qp *f = malloc(sizeof(*f)); /* destroy frees it */
	const struct srocedv_qp_ops_msg *msg;

	fake_qp_init(f, IBV_QPT_RC, 0); /* no ring mapped: destroy unmaps nothing */
	destroy_err = EIO;
	CHECK(sroce_destroy_qp(&f->qp.vqp.qp) == EIO);
	CHECK(raced == NULL && raced_errno == EBUSY);
	if (raced)
		srocedv_release_intf(&sctx.vctx.context, (void *)raced);
	/* Refused by the kernel: the QP lives on, and takes tables again. */
	msg = query(&f->qp.vqp.qp, SROCEDV_INTF_QP_MSG, 0, 0);
	CHECK(msg && srocedv_release_intf(&sctx.vctx.context, (void *)msg) == 0);
	destroy_err = 0;
	CHECK(sroce_destroy_qp(&f->qp.vqp.qp) == 0);
	/* Freed: no table of it may be live. */
	CHECK(raced == NULL && raced_errno == EBUSY);
}

int main(void)
{
	CHECK(pipe2(db_pipe, O_NONBLOCK) == 0);
	test_same_wqes(IBV_QPT_RC, 300);
	test_same_wqes(IBV_QPT_UC, 200);
	test_same_wqes(IBV_QPT_UD, 200);
	test_two_tables();
	test_pending_and_doorbells();
	test_recv_repost();
	test_query_checks();
	test_inline_only();
	test_destroy_race();
	printf("provider intf: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_vectors DEV NVEC [MOVES] [CQ_VECTOR] [rx]: completion vectors (seed
 * 002-C, Documentation/rss.md). NVEC is the number of vectors DEV must
 * have (the CPUs online when it was added). Checks the handler ids of
 * srocedv_modify_cq_vector/srocedv_query_cq_vector and their bad inputs,
 * and srocedv_modify_qp_rx_cpu's (receive steering, transport.md), then
 * streams SENDs over an RC pair on DEV into a CQ with a completion channel,
 * starting on CQ_VECTOR (default 0), while a thread moves the CQ between
 * vectors MOVES times (default 1000), or with `rx` the receiving QP's
 * receive CPU between the CPUs and its owner's: every message arrives once
 * and in order, and no event is lost (the receiver sleeps on the channel
 * only, so a lost event is a 10 s stall and a failure).
 */
#define _GNU_SOURCE /* sched_setaffinity */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

#include <infiniband/srocedv.h>

#include "progs_common.h"

#define DEPTH 128
#define MSG 64

static struct qp_end snd, rcv;
static struct ibv_comp_channel *chan;
static struct ibv_mr *smr, *rmr;
static char sbuf[DEPTH][MSG], rbuf[DEPTH][MSG];
static unsigned int nvec, moves_wanted = 1000;
static int move_rx_cpu; /* the mover moves the QP's receive CPU, not the CQ */
static atomic_uint moves_done;
static atomic_ulong sent_total;  /* final count, once the sender is done */
static atomic_ulong posted;      /* SENDs posted so far */
static atomic_int sender_done, receiver_done;
static int mover_err, sender_err;

static uint32_t query_hid(struct ibv_cq *cq)
{
	uint32_t hid = 0xdead;
	int err = srocedv_query_cq_vector(cq, &hid);

	return err ? 0xdead : hid;
}

static void check_handler_ids(struct ibv_context *ctx)
{
	struct ibv_cq *cq;
	uint32_t last = nvec - 1, hid;

	CHECK((unsigned int)ctx->num_comp_vectors == nvec, "num_comp_vectors %d, one per CPU (%u)",
	      ctx->num_comp_vectors, nvec);
	errno = 0;
	cq = ibv_create_cq(ctx, 16, NULL, NULL, (int)nvec);
	CHECK(!cq && errno == EINVAL, "ibv_create_cq on vector %u (one past the last): %s", nvec,
	      strerror(errno));
	if (cq)
		ibv_destroy_cq(cq);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, (int)last);
	if (!cq) {
		CHECK(0, "ibv_create_cq on vector %u: %s", last, strerror(errno));
		return;
	}
	CHECK(query_hid(cq) == SROCEDV_CQ_VECTOR(last), "created on vector %u: handler id %u", last,
	      query_hid(cq));
	CHECK(srocedv_modify_cq_vector(cq, SROCEDV_CQ_VECTOR(0)) == 0 && query_hid(cq) == 1,
	      "moved to vector 0: handler id %u", query_hid(cq));
	CHECK(srocedv_modify_cq_vector(cq, SROCEDV_CQ_VECTOR_NO_CHANGE) == 0 && query_hid(cq) == 1,
	      "0 changes nothing: handler id %u", query_hid(cq));
	CHECK(srocedv_modify_cq_vector(cq, SROCEDV_CQ_VECTOR_DEFAULT) == 0 &&
		      query_hid(cq) == SROCEDV_CQ_VECTOR(last),
	      "SROCEDV_CQ_VECTOR_DEFAULT: back to vector %u", SROCEDV_CQ_VECTOR_NUM(query_hid(cq)));
	CHECK_ERR(srocedv_modify_cq_vector(cq, SROCEDV_CQ_VECTOR(nvec)), EINVAL, "a vector past the last");
	CHECK_ERR(srocedv_modify_cq_vector(cq, 0x7fffffffu), EINVAL, "handler id 0x7fffffff");
	CHECK(query_hid(cq) == SROCEDV_CQ_VECTOR(last), "a refused move changes nothing");
	CHECK_ERR(srocedv_query_cq_vector(cq, NULL), EINVAL, "query into NULL");
	CHECK_ERR(srocedv_modify_cq_vector(NULL, 1), EINVAL, "a NULL CQ");
	hid = 0;
	CHECK(srocedv_query_cq_vector(cq, &hid) == 0 && hid, "query: handler id %u", hid);
	ibv_destroy_cq(cq);
}

static int query_rx_cpu(struct ibv_qp *qp)
{
	int cpu = -100;
	int err = srocedv_query_qp_rx_cpu(qp, &cpu);

	return err ? -100 - err : cpu;
}

/* srocedv_modify_qp_rx_cpu on a fresh RC QP and a UD one (the CPUs: NVEC). */
static void check_rx_cpus(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
						.max_recv_sge = 1 } };
	struct ibv_qp *qp = ibv_create_qp(pd, &ia), *ud;

	if (!qp) {
		CHECK(0, "an RC QP: %s", strerror(errno));
		return;
	}
	CHECK(query_rx_cpu(qp) == SROCEDV_QP_RX_CPU_OWNER, "a new QP follows its owner (%d)", query_rx_cpu(qp));
	/* CPU 0: always online (71 runs this with CPU 1 offline). */
	CHECK(srocedv_modify_qp_rx_cpu(qp, 0) == 0 && query_rx_cpu(qp) == 0, "fixed to CPU 0: %d", query_rx_cpu(qp));
	CHECK_ERR(srocedv_modify_qp_rx_cpu(qp, 4096), EINVAL, "CPU 4096");
	CHECK_ERR(srocedv_modify_qp_rx_cpu(qp, -2), EINVAL, "CPU -2");
	CHECK(query_rx_cpu(qp) == 0, "a refused change changes nothing");
	CHECK(srocedv_modify_qp_rx_cpu(qp, SROCEDV_QP_RX_CPU_OWNER) == 0 &&
		      query_rx_cpu(qp) == SROCEDV_QP_RX_CPU_OWNER,
	      "given back to the owner: %d", query_rx_cpu(qp));
	if (nvec >= 2) { /* a process confined by a cpuset keeps its receive work too */
		cpu_set_t all, only0;

		CPU_ZERO(&only0);
		CPU_SET(0, &only0);
		if (!sched_getaffinity(0, sizeof(all), &all) && !sched_setaffinity(0, sizeof(only0), &only0)) {
			CHECK_ERR(srocedv_modify_qp_rx_cpu(qp, 1), EINVAL, "CPU 1 from a process allowed only CPU 0");
			sched_setaffinity(0, sizeof(all), &all);
		}
	}
	CHECK_ERR(srocedv_modify_qp_rx_cpu(NULL, 0), EINVAL, "a NULL QP");
	CHECK_ERR(srocedv_query_qp_rx_cpu(qp, NULL), EINVAL, "query into NULL");
	ibv_destroy_qp(qp);
	ia.qp_type = IBV_QPT_UD;
	ud = ibv_create_qp(pd, &ia);
	if (ud) {
		CHECK_ERR(srocedv_modify_qp_rx_cpu(ud, 0), EOPNOTSUPP, "a UD QP");
		ibv_destroy_qp(ud);
	}
}

static void *mover(void *arg)
{
	unsigned int i;

	(void)arg;
	for (i = 0; i < moves_wanted && !atomic_load(&receiver_done); i++) {
		/* rx: CPU 0, 1, ..., then back to the owner's, round and round. */
		int err = move_rx_cpu ? srocedv_modify_qp_rx_cpu(rcv.qp, (int)(i % (nvec + 1)) - 1)
				      : srocedv_modify_cq_vector(rcv.cq, SROCEDV_CQ_VECTOR(i % nvec));

		if (err) {
			mover_err = err;
			break;
		}
		atomic_store(&moves_done, i + 1);
		usleep(200);
	}
	return NULL;
}

static int post_recv(uint64_t slot)
{
	struct ibv_sge sge = { (uintptr_t)rbuf[slot], MSG, rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(rcv.qp, &wr, &bad);
}

/* SENDs carrying their sequence number until the mover is done (and at
 * least 2,000 of them), DEPTH in flight. */
static void *sender(void *arg)
{
	unsigned long seq = 0, done = 0;
	struct ibv_wc wc[16];

	(void)arg;
	while (seq < 2000 || (atomic_load(&moves_done) < moves_wanted && !mover_err)) {
		while (seq - done < DEPTH) {
			struct ibv_sge sge = { (uintptr_t)sbuf[seq % DEPTH], MSG, smr->lkey };
			struct ibv_send_wr wr = { .wr_id = seq, .sg_list = &sge, .num_sge = 1,
						  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

			memcpy(sbuf[seq % DEPTH], &seq, sizeof(seq));
			if (ibv_post_send(snd.qp, &wr, &bad)) {
				sender_err = errno ? errno : EIO;
				goto out;
			}
			atomic_store(&posted, ++seq);
		}
		int n = ibv_poll_cq(snd.cq, 16, wc);

		for (int i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_SUCCESS) {
				sender_err = EIO;
				goto out;
			}
		done += n > 0 ? (unsigned long)n : 0;
	}
	while (done < seq) { /* the last ones */
		int n = ibv_poll_cq(snd.cq, 16, wc);

		if (n < 0) {
			sender_err = EIO;
			break;
		}
		done += (unsigned long)n;
	}
out:
	atomic_store(&sent_total, seq);
	atomic_store(&sender_done, 1);
	return NULL;
}

static void stream(void)
{
	unsigned long expect = 0, events = 0, dup_or_gap = 0, bad = 0;
	pthread_t mt, st;
	struct ibv_wc wc[16];
	int stalled = 0, idle_ms = 0;

	for (uint64_t i = 0; i < DEPTH; i++)
		post_recv(i);
	ibv_req_notify_cq(rcv.cq, 0);
	pthread_create(&st, NULL, sender, NULL);
	pthread_create(&mt, NULL, mover, NULL);
	while (!atomic_load(&sender_done) || expect < atomic_load(&sent_total)) {
		struct pollfd p = { .fd = chan->fd, .events = POLLIN };
		struct ibv_cq *ev_cq;
		void *ev_ctx;
		int n;

		if (poll(&p, 1, 100) != 1) {
			/* A lost event: 10 s without one while SENDs are out. */
			if (expect < atomic_load(&posted) && (idle_ms += 100) >= 10000) {
				stalled = 1;
				break;
			}
			continue;
		}
		idle_ms = 0;
		if (ibv_get_cq_event(chan, &ev_cq, &ev_ctx))
			break;
		ibv_ack_cq_events(ev_cq, 1);
		events++;
		ibv_req_notify_cq(rcv.cq, 0);
		/* After the arm: what came before it had its event already. */
		while ((n = ibv_poll_cq(rcv.cq, 16, wc)) > 0)
			for (int i = 0; i < n; i++) {
				unsigned long seq;

				if (wc[i].status != IBV_WC_SUCCESS) {
					bad++;
					continue;
				}
				memcpy(&seq, rbuf[wc[i].wr_id], sizeof(seq));
				if (seq != expect)
					dup_or_gap++;
				expect = seq + 1;
				post_recv(wc[i].wr_id);
			}
	}
	atomic_store(&receiver_done, 1);
	pthread_join(mt, NULL);
	pthread_join(st, NULL);
	CHECK(!sender_err && !mover_err, "sender and mover ran without errors (%s, %s)", strerror(sender_err),
	      strerror(mover_err));
	CHECK(atomic_load(&moves_done) == moves_wanted, "%u of %u moves between %u %s during the stream",
	      atomic_load(&moves_done), moves_wanted, nvec, move_rx_cpu ? "receive CPUs" : "vectors");
	CHECK(!stalled, "no event lost: the receiver never waited 10 s");
	CHECK(expect == atomic_load(&sent_total) && !dup_or_gap && !bad,
	      "%lu of %lu messages, once each and in order (%lu out of order, %lu errors), in %lu events", expect,
	      atomic_load(&sent_total), dup_or_gap, bad, events);
}

int main(int argc, char **argv)
{
	unsigned int start = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s DEV NVEC [MOVES] [CQ_VECTOR] [rx]\n", argv[0]);
		return 2;
	}
	nvec = (unsigned int)atoi(argv[2]);
	if (argc > 3)
		moves_wanted = (unsigned int)atoi(argv[3]);
	if (argc > 4)
		start = (unsigned int)atoi(argv[4]);
	move_rx_cpu = argc > 5 && !strcmp(argv[5], "rx");
	if (!nvec || open_with_gid(argv[1], &rcv.ctx, &rcv.pd, &rcv.gid, &rcv.gid_idx))
		return 1;
	snd = rcv;
	check_handler_ids(rcv.ctx);

	chan = ibv_create_comp_channel(rcv.ctx);
	rcv.cq = chan ? ibv_create_cq(rcv.ctx, 2 * DEPTH, NULL, chan, (int)start) : NULL;
	snd.cq = ibv_create_cq(snd.ctx, 2 * DEPTH, NULL, NULL, 0);
	smr = ibv_reg_mr(snd.pd, sbuf, sizeof(sbuf), 0);
	rmr = ibv_reg_mr(rcv.pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	if (!rcv.cq || !snd.cq || !smr || !rmr) {
		fprintf(stderr, "setup: %s\n", strerror(errno));
		return 1;
	}
	check_rx_cpus(rcv.pd, snd.cq);
	struct ibv_qp_init_attr ia = { .send_cq = snd.cq, .recv_cq = rcv.cq, .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	snd.qp = ibv_create_qp(snd.pd, &ia);
	rcv.qp = ibv_create_qp(rcv.pd, &ia);
	if (!snd.qp || !rcv.qp || qp_to_init(snd.qp, 0) || qp_to_init(rcv.qp, IBV_ACCESS_LOCAL_WRITE) ||
	    qp_to_rts(snd.qp, rcv.qp->qp_num, &rcv.gid, rcv.gid_idx, 1, 14) ||
	    qp_to_rts(rcv.qp, snd.qp->qp_num, &snd.gid, snd.gid_idx, 1, 14)) {
		fprintf(stderr, "QPs: %s\n", strerror(errno));
		return 1;
	}
	stream();
	ibv_destroy_qp(snd.qp);
	ibv_destroy_qp(rcv.qp);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	ibv_destroy_cq(snd.cq);
	ibv_destroy_cq(rcv.cq);
	ibv_destroy_comp_channel(chan);
	ibv_dealloc_pd(rcv.pd);
	ibv_close_device(rcv.ctx);
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}

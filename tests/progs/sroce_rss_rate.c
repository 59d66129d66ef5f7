// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_rss_rate - UD receive message rate, one QP against an RSS QP
 * (make bench-rss, scripts/bench/rss-in-vm.sh; Documentation/rss.md):
 *
 *   sroce_rss_rate recv DEV qp|rss SECONDS
 *   sroce_rss_rate send DEV DGID QPN SECONDS NQPS [BYTES]
 *
 * recv: one UD QP (mode qp), or an RSS UD QP over one WQ per completion
 * vector (mode rss: Toeplitz over the IPv4 addresses and UDP ports, WQ w's
 * CQ on vector w). One thread per CQ sleeps on its completion channel,
 * polls what is there, reposts and re-arms. Prints "ready QPN", counts the
 * datagrams of the SECONDS after the first one, and prints
 * "received N in S s: R msg/s".
 * send: NQPS UD QPs (NQPS UDP source ports, so NQPS flows) send datagrams
 * of BYTES (default 64, at most 4096) round robin to QPN at DGID (an IPv4
 * address) for SECONDS, at most 64 in flight per QP.
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "progs_common.h"

enum { MAX_MSG = 4096, SLOT = 40 + MAX_MSG, DEPTH = 1024, MAX_CQ = 16, QKEY = 0x1a2b3c4d };

static const uint8_t key[40] = { 0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
				 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
				 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
				 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa };

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* One receive queue: a QP's own RQ or a WQ, with its CQ and channel. */
struct rxq {
	struct ibv_qp *qp; /* mode qp */
	struct ibv_wq *wq; /* mode rss */
	struct ibv_cq *cq;
	struct ibv_comp_channel *ch;
	struct ibv_mr *mr;
	uint8_t *buf;
	pthread_t thread;
};

static atomic_ulong received;
static atomic_int started, stop;

static int post(struct rxq *q, uint64_t slot)
{
	struct ibv_sge s = { (uintptr_t)(q->buf + slot * SLOT), SLOT, q->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &s, .num_sge = 1 }, *bad;

	return q->wq ? ibv_post_wq_recv(q->wq, &wr, &bad) : ibv_post_recv(q->qp, &wr, &bad);
}

static void *receiver(void *arg)
{
	struct rxq *q = arg;
	struct ibv_wc wc[32];

	ibv_req_notify_cq(q->cq, 0);
	while (!atomic_load(&stop)) {
		struct pollfd p = { .fd = q->ch->fd, .events = POLLIN };
		struct ibv_cq *ev;
		void *ctx;
		int n;

		if (poll(&p, 1, 100) != 1 || ibv_get_cq_event(q->ch, &ev, &ctx))
			continue;
		ibv_ack_cq_events(ev, 1);
		ibv_req_notify_cq(q->cq, 0);
		while ((n = ibv_poll_cq(q->cq, 32, wc)) > 0) {
			atomic_store(&started, 1);
			for (int i = 0; i < n; i++) {
				if (wc[i].status == IBV_WC_SUCCESS)
					atomic_fetch_add(&received, 1);
				post(q, wc[i].wr_id);
			}
		}
	}
	return NULL;
}

static int recv_main(const char *dev, int rss, int secs)
{
	union ibv_gid gid;
	int gid_idx;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct rxq q[MAX_CQ] = { 0 };
	unsigned int nq;
	struct ibv_qp *qp;

	if (open_with_gid(dev, &ctx, &pd, &gid, &gid_idx))
		return 1;
	nq = rss ? (unsigned int)ctx->num_comp_vectors : 1;
	if (nq > MAX_CQ || (nq & (nq - 1)))
		nq = 1; /* a table's size is a power of two */
	for (unsigned int i = 0; i < nq; i++) {
		q[i].ch = ibv_create_comp_channel(ctx);
		q[i].cq = q[i].ch ? ibv_create_cq(ctx, DEPTH, NULL, q[i].ch, (int)i) : NULL;
		q[i].buf = calloc(DEPTH, SLOT);
		q[i].mr = q[i].buf ? ibv_reg_mr(pd, q[i].buf, (size_t)DEPTH * SLOT, IBV_ACCESS_LOCAL_WRITE) : NULL;
		if (!q[i].cq || !q[i].mr) {
			fprintf(stderr, "receive queue %u: %s\n", i, strerror(errno));
			return 1;
		}
	}
	if (rss) {
		struct ibv_wq *wqs[MAX_CQ];
		struct ibv_rwq_ind_table *t;
		struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = (uint32_t)__builtin_ctz(nq), .ind_tbl = wqs };

		for (unsigned int i = 0; i < nq; i++) {
			struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .max_wr = DEPTH, .max_sge = 1, .pd = pd,
						       .cq = q[i].cq };
			struct ibv_wq_attr ma = { .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_RDY };

			wqs[i] = q[i].wq = ibv_create_wq(ctx, &wa);
			if (!wqs[i] || ibv_modify_wq(wqs[i], &ma)) {
				fprintf(stderr, "WQ %u: %s\n", i, strerror(errno));
				return 1;
			}
		}
		t = ibv_create_rwq_ind_table(ctx, &ta);
		struct ibv_qp_init_attr_ex qa = {
			.qp_type = IBV_QPT_UD, .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
							     IBV_QP_INIT_ATTR_RX_HASH,
			.pd = pd, .rwq_ind_tbl = t,
			.rx_hash_conf = { .rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ, .rx_hash_key_len = 40,
					  .rx_hash_key = (uint8_t *)key,
					  .rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 |
								 IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP },
		};
		qp = t ? ibv_create_qp_ex(ctx, &qa) : NULL;
	} else {
		struct ibv_qp_init_attr qa = { .send_cq = q[0].cq, .recv_cq = q[0].cq, .qp_type = IBV_QPT_UD,
					       .cap = { .max_send_wr = 1, .max_recv_wr = DEPTH, .max_send_sge = 1,
							.max_recv_sge = 1 } };

		qp = q[0].qp = ibv_create_qp(pd, &qa);
	}
	if (!qp || ud_qp_rts(qp, QKEY)) {
		fprintf(stderr, "receiving QP: %s\n", strerror(errno));
		return 1;
	}
	for (unsigned int i = 0; i < nq; i++)
		for (uint64_t k = 0; k < DEPTH; k++)
			post(&q[i], k);
	for (unsigned int i = 0; i < nq; i++)
		pthread_create(&q[i].thread, NULL, receiver, &q[i]);
	printf("ready %u\n", qp->qp_num);
	fflush(stdout);
	while (!atomic_load(&started))
		usleep(1000);
	unsigned long n0 = atomic_load(&received);
	double t0 = now();

	sleep((unsigned int)secs);
	unsigned long n = atomic_load(&received) - n0;
	double dt = now() - t0;

	atomic_store(&stop, 1);
	for (unsigned int i = 0; i < nq; i++)
		pthread_join(q[i].thread, NULL);
	printf("received %lu in %.2f s: %.0f msg/s over %u queue(s)\n", n, dt, (double)n / dt, nq);
	return 0;
}

static int send_main(const char *dev, const char *dip, uint32_t qpn, int secs, unsigned int nqps, uint32_t bytes)
{
	union ibv_gid gid, dgid;
	int gid_idx;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	static uint8_t buf[MAX_MSG];
	struct ibv_qp *qps[64];
	unsigned int out[64] = { 0 };

	if (nqps == 0 || nqps > 64 || bytes == 0 || bytes > MAX_MSG || gid_from_ipv4(dip, &dgid) || open_with_gid(dev, &ctx, &pd, &gid, &gid_idx))
		return 2;
	struct ibv_cq *cq = ibv_create_cq(ctx, 4096, NULL, NULL, 0);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), 0);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = dgid, .sgid_index = (uint8_t)gid_idx, .hop_limit = 64 } };
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);

	if (!cq || !mr || !ah)
		return 1;
	for (unsigned int i = 0; i < nqps; i++) {
		struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
					       .cap = { .max_send_wr = 64, .max_recv_wr = 1, .max_send_sge = 1,
							.max_recv_sge = 1 } };

		qps[i] = ibv_create_qp(pd, &qa);
		if (!qps[i] || ud_qp_rts(qps[i], QKEY))
			return 1;
	}
	double end = now() + secs;
	unsigned long sent = 0;
	struct ibv_wc wc[64];

	while (now() < end) {
		for (unsigned int i = 0; i < nqps; i++) {
			struct ibv_sge s = { (uintptr_t)buf, bytes, mr->lkey };
			struct ibv_send_wr wr = { .wr_id = i, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
						  .send_flags = IBV_SEND_SIGNALED,
						  .wr.ud = { .ah = ah, .remote_qpn = qpn, .remote_qkey = QKEY } },
					   *bad;

			if (out[i] < 64 && !ibv_post_send(qps[i], &wr, &bad)) {
				out[i]++;
				sent++;
			}
		}
		int n = ibv_poll_cq(cq, 64, wc);

		for (int k = 0; k < n; k++)
			out[wc[k].wr_id]--;
	}
	printf("sent %lu over %u QPs\n", sent, nqps);
	return 0;
}

int main(int argc, char **argv)
{
	(void)failures; /* a measurement: it checks nothing */
	if (argc == 5 && !strcmp(argv[1], "recv"))
		return recv_main(argv[2], !strcmp(argv[3], "rss"), atoi(argv[4]));
	if ((argc == 7 || argc == 8) && !strcmp(argv[1], "send"))
		return send_main(argv[2], argv[3], (uint32_t)strtoul(argv[4], NULL, 0), atoi(argv[5]),
				 (unsigned int)atoi(argv[6]), argc == 8 ? (uint32_t)atoi(argv[7]) : 64);
	fprintf(stderr, "usage: %s recv DEV qp|rss SECONDS | send DEV DGID QPN SECONDS NQPS [BYTES]\n", argv[0]);
	return 2;
}

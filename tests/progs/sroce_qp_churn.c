// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_qp_churn - creates N RC QPs on DEV (one PD, one CQ, the smallest
 * queues), takes each to INIT, then destroys them all, and prints how long
 * each phase took: the 10,000-QP line of `make bench` (issue 17: tearing
 * QPs down must take seconds, not minutes). Not a test of speed: it
 * asserts only that every create, modify and destroy succeeded.
 *
 *   sroce_qp_churn DEV N
 */
#include <time.h>

#include "progs_common.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp **qps;
	struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	double t0, t1, t2, t3;
	long n, made = 0, inited = 0, gone = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEV N\n", argv[0]);
		return 2;
	}
	n = strtol(argv[2], NULL, 0);
	ctx = open_by_name(argv[1]);
	if (!ctx || n <= 0)
		return 1;
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	qps = calloc((size_t)n, sizeof(*qps));
	if (!pd || !cq || !qps)
		return 1;
	t0 = now_s();
	for (; made < n; made++) {
		struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
					       .cap = { .max_send_wr = 1, .max_recv_wr = 1,
							.max_send_sge = 1, .max_recv_sge = 1 } };

		qps[made] = ibv_create_qp(pd, &ia);
		if (!qps[made])
			break;
	}
	t1 = now_s();
	for (long i = 0; i < made; i++)
		inited += !ibv_modify_qp(qps[i], &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						       IBV_QP_ACCESS_FLAGS);
	t2 = now_s();
	for (long i = 0; i < made; i++)
		gone += !ibv_destroy_qp(qps[i]);
	t3 = now_s();
	CHECK(made == n, "created %ld of %ld RC QPs in %.2f s (%.0f us each)", made, n, t1 - t0,
	      made ? (t1 - t0) / (double)made * 1e6 : 0);
	CHECK(inited == made, "took %ld to INIT in %.2f s", inited, t2 - t1);
	CHECK(gone == made, "destroyed %ld in %.2f s (%.0f us each)", gone, t3 - t2,
	      gone ? (t3 - t2) / (double)gone * 1e6 : 0);
	printf("qp_churn %ld create_s %.3f init_s %.3f destroy_s %.3f\n", made, t1 - t0, t2 - t1, t3 - t2);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return failures ? 1 : 0;
}

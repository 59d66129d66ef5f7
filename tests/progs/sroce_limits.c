// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_limits DEV READY MAX_PAIRS: creates CQs and QPs of the largest size
 * the device reports, one CQ then one QP on it, until a verb refuses. Run
 * inside a memory cgroup far smaller than MAX_PAIRS such pairs (a QP holds
 * about 50 MiB): the rings and the kernel's private copies are charged to
 * this process (Documentation/security.md), so a verb must fail with ENOMEM
 * first; if MAX_PAIRS pairs come, the kernel is holding memory nobody is
 * charged for, and the program fails. Once refused it touches READY and holds every object until
 * SIGUSR1, then destroys them.
 */
#include <signal.h>
#include <unistd.h>

#include "progs_common.h"

#define MAX_OBJS 512

static volatile sig_atomic_t go;
static void on_usr1(int sig) { (void)sig; go = 1; }

int main(int argc, char **argv)
{
	struct ibv_cq *cqs[MAX_OBJS];
	struct ibv_qp *qps[MAX_OBJS];
	struct ibv_device_attr a;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int ncq = 0, nqp = 0, refused = 0, max_pairs;
	const char *what = "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 4) {
		fprintf(stderr, "usage: %s DEV READY MAX_PAIRS\n", argv[0]);
		return 2;
	}
	max_pairs = atoi(argv[3]);
	signal(SIGUSR1, on_usr1);
	ctx = open_by_name(argv[1]);
	if (!ctx || ibv_query_device(ctx, &a) || !(pd = ibv_alloc_pd(ctx))) {
		printf("FAIL: cannot open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	printf("uid %d, max_cqe %d, max_qp_wr %d, max_sge %d\n", (int)getuid(), a.max_cqe, a.max_qp_wr,
	       a.max_sge);
	while (!refused && nqp < max_pairs && nqp < MAX_OBJS) {
		struct ibv_qp_init_attr qa = {
			.qp_type = IBV_QPT_RC,
			.cap = {
				.max_send_wr = a.max_qp_wr,
				.max_recv_wr = a.max_qp_wr,
				.max_send_sge = a.max_sge,
				.max_recv_sge = a.max_sge,
			},
		};

		errno = 0;
		cqs[ncq] = ibv_create_cq(ctx, a.max_cqe, NULL, NULL, 0);
		if (!cqs[ncq]) {
			refused = errno ? errno : -1;
			what = "create_cq";
			break;
		}
		qa.send_cq = qa.recv_cq = cqs[ncq++];
		errno = 0;
		qps[nqp] = ibv_create_qp(pd, &qa);
		if (!qps[nqp]) {
			refused = errno ? errno : -1;
			what = "create_qp";
			break;
		}
		nqp++;
		printf("pair %d\n", nqp);
	}
	printf("%d CQs, %d QPs\n", ncq, nqp);
	if (!refused) {
		printf("FAIL: no verb refused in %s pairs\n", argv[3]);
		return 1;
	}
	printf("refused: %s: %s\n", what, refused > 0 ? strerror(refused) : "no errno");
	CHECK(refused == ENOMEM, "the refusal is ENOMEM");
	fclose(fopen(argv[2], "w"));
	while (!go)
		pause();
	while (nqp > 0)
		CHECK(ibv_destroy_qp(qps[--nqp]) == 0, "destroy_qp");
	while (ncq > 0)
		CHECK(ibv_destroy_cq(cqs[--ncq]) == 0, "destroy_cq");
	CHECK(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	CHECK(ibv_close_device(ctx) == 0, "close_device");
	return failures ? 1 : 0;
}

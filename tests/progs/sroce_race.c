// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_race - a process that rewrites its own mapped rings while the
 * kernel reads them (issue 12, "concurrent ring scribbling").
 *
 *   sroce_race DEV SECONDS
 *
 * Two RC QPs of one device, connected to each other through the device's
 * own IPv4 GID, carry WRITE, READ, SEND and FETCH_ADD traffic from one
 * thread; every other pair's receiver takes its receives from an SRQ. A
 * second thread meanwhile writes random bytes into SQ, RQ, SRQ and CQ
 * slots, moves the SQ, RQ and SRQ producers and the CQ consumer back and
 * far ahead, writes CPU hints no CPU could have (poster_cpu), rings raw
 * doorbells, and deregisters and registers again the MR the traffic
 * targets. The kernel owes this process only errors: error
 * completions, error events, errored QPs. The test passes when the run
 * ends with every object destroyable; the VM test checks the kernel log
 * and that other processes' traffic was unaffected.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "../../libuser/sroce.h"
#include "progs_common.h"

#define BUF (1 << 20)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq[2];
static struct ibv_qp *qp[2];
static struct ibv_srq *srq; /* qp[1]'s receive queue in every other pair */
static struct ibv_mr *lmr;
static struct ibv_mr *volatile tmr; /* the target: re-registered under traffic */
static char *lbuf, *tbuf;
static atomic_int stop;
static atomic_ulong posts, completions, errors, scribbles, reregs, pairs, srq_pairs;
/* Held while qp[] is replaced, and by the scribbler while it uses qp[]. */
static pthread_mutex_t qp_lock = PTHREAD_MUTEX_INITIALIZER;
static int sgid_index;
static union ibv_gid gid;

static int connect_pair(void)
{
	for (int i = 0; i < 2; i++) {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
					 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
							    IBV_ACCESS_REMOTE_ATOMIC };

		if (ibv_modify_qp(qp[i], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
			return -1;
	}
	for (int i = 0; i < 2; i++) {
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = qp[!i]->qp_num,
			.rq_psn = 0, .max_dest_rd_atomic = 4, .min_rnr_timer = 1,
			.ah_attr = { .is_global = 1, .port_num = 1,
				     .grh = { .dgid = gid, .sgid_index = sgid_index, .hop_limit = 64 } },
		};
		struct ibv_qp_attr r = { .qp_state = IBV_QPS_RTS, .timeout = 10, .retry_cnt = 2, .rnr_retry = 2,
					 .sq_psn = 0, .max_rd_atomic = 4 };

		if (ibv_modify_qp(qp[i], &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
						    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) ||
		    ibv_modify_qp(qp[i], &r, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
			return -1;
	}
	return 0;
}

static int create_pair(void)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1,
						.max_recv_sge = 1 } };

	if (atomic_load(&pairs) % 2) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 64, .max_sge = 1 } };

		srq = ibv_create_srq(pd, &sa);
		if (!srq)
			return -1;
		atomic_fetch_add(&srq_pairs, 1);
	}
	for (int i = 0; i < 2; i++) {
		ia.send_cq = ia.recv_cq = cq[i];
		ia.srq = i == 1 ? srq : NULL;
		qp[i] = ibv_create_qp(pd, &ia);
		if (!qp[i])
			return -1;
	}
	atomic_fetch_add(&pairs, 1);
	return connect_pair();
}

/* Once the scribbles have put a QP in error, a new pair takes over, so
 * that the scribbling keeps meeting live QPs. */
static int renew_pair_if_dead(void)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	int dead = 0, err = 0;

	for (int i = 0; i < 2; i++)
		dead |= !ibv_query_qp(qp[i], &a, IBV_QP_STATE, &ia) && a.qp_state == IBV_QPS_ERR;
	if (!dead)
		return 0;
	pthread_mutex_lock(&qp_lock);
	for (int i = 0; i < 2; i++)
		err |= ibv_destroy_qp(qp[i]);
	if (srq) {
		err |= ibv_destroy_srq(srq);
		srq = NULL;
	}
	err |= create_pair();
	pthread_mutex_unlock(&qp_lock);
	return err;
}

static void *traffic(void *arg)
{
	unsigned int seed = 1, n_ops = 0;

	(void)arg;
	while (!atomic_load(&stop)) {
		if (++n_ops % 64 == 0 && renew_pair_if_dead()) {
			printf("FAIL: renewing the QP pair\n");
			failures++;
			break;
		}
		struct ibv_mr *t = tmr;
		struct ibv_sge sge = { .addr = (uintptr_t)lbuf + (rand_r(&seed) % 256) * 8,
				       .length = 1 + rand_r(&seed) % 65536, .lkey = lmr->lkey };
		struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED },
				   *bad;
		struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 }, *rbad;
		struct ibv_wc wc[16];
		int n;

		switch (rand_r(&seed) % 4) {
		case 0: wr.opcode = IBV_WR_SEND; break;
		case 1: wr.opcode = IBV_WR_RDMA_WRITE; break;
		case 2: wr.opcode = IBV_WR_RDMA_READ; break;
		default:
			wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			sge.length = 8;
			wr.wr.atomic.compare_add = 1;
			break;
		}
		wr.wr.rdma.remote_addr = (uintptr_t)tbuf + (rand_r(&seed) % 4096) * 8;
		wr.wr.rdma.rkey = t ? t->rkey : 0;
		if (wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr.wr.atomic.remote_addr = wr.wr.rdma.remote_addr;
			wr.wr.atomic.rkey = wr.wr.rdma.rkey;
		}
		if (srq)
			ibv_post_srq_recv(srq, &rwr, &rbad);
		else
			ibv_post_recv(qp[1], &rwr, &rbad);
		if (!ibv_post_send(qp[0], &wr, &bad))
			atomic_fetch_add(&posts, 1);
		for (int i = 0; i < 2; i++) {
			while ((n = ibv_poll_cq(cq[i], 16, wc)) > 0) {
				atomic_fetch_add(&completions, n);
				for (int k = 0; k < n; k++)
					if (wc[k].status != IBV_WC_SUCCESS)
						atomic_fetch_add(&errors, 1);
			}
		}
	}
	return NULL;
}

static void scribble_ring(struct sroce_uring *r, unsigned int *seed, int own_index)
{
	uint32_t slot = rand_r(seed) & r->mask;
	uint8_t *e = r->entries + (size_t)slot * r->stride;

	/* poster_cpu (CPU + 1, 0 none) as no CPU could be: the sign bit,
	 * beyond nr_cpu_ids, a CPU never online; and the real ones. */
	static const uint32_t cpus[] = { 0, 1, 2, 3, 5, 64, 4097, 0x7fffffff, 0x80000000, 0x80000001, 0xffffffff };

	switch (rand_r(seed) % 6) {
	case 0: /* random bytes over a slot */
		for (uint32_t i = 0; i < r->stride; i++)
			e[i] = (uint8_t)rand_r(seed);
		break;
	case 1: /* the index this process owns, back a little */
		if (own_index)
			sroce_store_release(&r->hdr->producer, r->hdr->producer - 1 - rand_r(seed) % 4);
		else
			sroce_store_release(&r->hdr->consumer, r->hdr->consumer - 1 - rand_r(seed) % 4);
		break;
	case 2: /* ... or far ahead */
		if (own_index)
			sroce_store_release(&r->hdr->producer, r->hdr->producer + r->mask + 2 + rand_r(seed) % 100);
		else
			sroce_store_release(&r->hdr->consumer, (uint32_t)rand_r(seed));
		break;
	case 3: /* the kernel's own index (read-only to the kernel's logic) */
		if (own_index)
			r->hdr->consumer = (uint32_t)rand_r(seed);
		else
			r->hdr->producer = (uint32_t)rand_r(seed);
		break;
	case 4: /* the CPU hint receive steering follows */
		r->hdr->poster_cpu = rand_r(seed) % 4 ? cpus[rand_r(seed) % (sizeof(cpus) / sizeof(cpus[0]))]
						      : (uint32_t)rand_r(seed);
		break;
	default: /* a header field of one WQE */
		e[rand_r(seed) % 32] ^= (uint8_t)(1u << (rand_r(seed) % 8));
		break;
	}
}

static void *scribbler(void *arg)
{
	unsigned int seed = 2;
	struct ibv_post_send cmd = { 0 };
	struct ib_uverbs_post_send_resp resp;

	(void)arg;
	cmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.core_payload.response = (uintptr_t)&resp;
	cmd.core_payload.wqe_size = sizeof(struct ib_uverbs_send_wr);
	while (!atomic_load(&stop)) {
		pthread_mutex_lock(&qp_lock);
		switch (rand_r(&seed) % 6) {
		case 0: scribble_ring(&to_sqp(qp[0])->sq, &seed, 1); break;
		case 1: /* qp[1]'s receives: its RQ, or the SRQ it uses */
			scribble_ring(srq ? &to_ssrq(srq)->ring : &to_sqp(qp[1])->rq, &seed, 1);
			break;
		case 2: scribble_ring(&((struct sroce_cq *)cq[rand_r(&seed) % 2])->ring, &seed, 0); break;
		case 3: /* a raw doorbell on either QP */
			cmd.core_payload.qp_handle = qp[rand_r(&seed) % 2]->handle;
			if (write(ctx->cmd_fd, &cmd, sizeof(cmd)) < 0) {
				/* EINVAL etc. are fine: the point is the kernel's read */
			}
			break;
		case 4: { /* the target MR goes away and comes back, under traffic */
			struct ibv_mr *old = tmr;

			tmr = NULL;
			if (old)
				ibv_dereg_mr(old);
			tmr = ibv_reg_mr(pd, tbuf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
							       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
			atomic_fetch_add(&reregs, 1);
			break;
		}
		default:
			pthread_mutex_unlock(&qp_lock);
			usleep(100);
			continue;
		}
		pthread_mutex_unlock(&qp_lock);
		atomic_fetch_add(&scribbles, 1);
		usleep(rand_r(&seed) % 200);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	int secs;

	if (argc != 3 || (secs = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: %s DEV SECONDS\n", argv[0]);
		return 2;
	}
	ctx = open_by_name(argv[1]);
	if (!ctx)
		return 1;
	sgid_index = ipv4_gid_index(ctx, &gid);
	lbuf = aligned_alloc(4096, BUF);
	tbuf = aligned_alloc(4096, BUF);
	pd = ibv_alloc_pd(ctx);
	if (sgid_index < 0 || !lbuf || !tbuf || !pd)
		return 1;
	memset(lbuf, 0x11, BUF);
	memset(tbuf, 0, BUF);
	lmr = ibv_reg_mr(pd, lbuf, BUF, IBV_ACCESS_LOCAL_WRITE);
	tmr = ibv_reg_mr(pd, tbuf, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
					       IBV_ACCESS_REMOTE_ATOMIC);
	for (int i = 0; i < 2; i++)
		cq[i] = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	CHECK(lmr && tmr && cq[0] && cq[1], "objects created");
	CHECK(cq[0] && cq[1] && create_pair() == 0, "RC pair connected through the own GID");
	if (failures)
		return 1;
	pthread_create(&t[0], NULL, traffic, NULL);
	pthread_create(&t[1], NULL, scribbler, NULL);
	sleep(secs);
	atomic_store(&stop, 1);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	printf("%lu posts, %lu completions (%lu errors), %lu scribbles, %lu re-registrations, %lu QP pairs"
	       " (%lu with an SRQ)\n",
	       atomic_load(&posts), atomic_load(&completions), atomic_load(&errors), atomic_load(&scribbles),
	       atomic_load(&reregs), atomic_load(&pairs), atomic_load(&srq_pairs));
	CHECK(atomic_load(&scribbles) > 100, "the scribbler ran");
	CHECK(atomic_load(&pairs) > 3, "the scribbles errored QP pairs, and new ones took over");
	CHECK(atomic_load(&srq_pairs) > 1, "pairs with an SRQ were scribbled too");
	CHECK(atomic_load(&posts) > 0, "traffic was posted");
	/* Whatever the rings say now, every object goes. */
	for (int i = 0; i < 2; i++) {
		CHECK(ibv_destroy_qp(qp[i]) == 0, "destroy QP %d", i);
		CHECK(ibv_destroy_cq(cq[i]) == 0, "destroy CQ %d", i);
	}
	CHECK(!srq || ibv_destroy_srq(srq) == 0, "destroy the SRQ");
	CHECK(!tmr || ibv_dereg_mr(tmr) == 0, "dereg the target MR");
	CHECK(ibv_dereg_mr(lmr) == 0, "dereg the local MR");
	CHECK(ibv_dealloc_pd(pd) == 0, "dealloc PD");
	CHECK(ibv_close_device(ctx) == 0, "close device");
	printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}

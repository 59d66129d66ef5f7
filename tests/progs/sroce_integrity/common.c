// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* common.c - sroce_integrity's state and the helpers both roles use:
 * the pattern, the registered memory, receives, polling, sends. */
#include <stdarg.h>
#include <time.h>
#include <unistd.h>

#include "integrity.h"

struct rdma_cm_id *id;
struct ibv_pd *pd;
struct ibv_cq *cq;
struct mem m;
struct remote peer;
int failures, wait_s = 60, recv_ready[NRECV * 4], nready, sends_done;
uint32_t recv_len[NRECV];
uint64_t rnd_state;

uint64_t rnd(void)
{
	uint64_t z = (rnd_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void fill(uint8_t *p, uint64_t len, uint64_t seed, uint64_t from)
{
	for (uint64_t j = 0; j < len; j++)
		p[j] = pat(seed, from + j);
}

/* The index of the first wrong byte, or -1. */
int64_t verify(const uint8_t *p, uint64_t len, uint64_t seed, uint64_t from)
{
	for (uint64_t j = 0; j < len; j++)
		if (p[j] != pat(seed, from + j))
			return (int64_t)j;
	return -1;
}

double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int __attribute__((format(printf, 1, 2))) fail_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("FAIL: ");
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failures++;
	return -1;
}

int mem_init(void)
{
	size_t total = REGION * 2 + LOCAL + NRECV * RECVSZ + RECVSZ + 4096;

	m.base = aligned_alloc(4096, total);
	if (!m.base)
		return -1;
	memset(m.base, 0, total);
	m.region = m.base;
	m.shadow = m.region + REGION; /* not accessed remotely, only compared */
	m.local = m.shadow + REGION;
	m.recv = m.local + LOCAL;
	m.send = m.recv + NRECV * RECVSZ;
	m.counter = (uint64_t *)(m.send + RECVSZ);
	m.atomic_ret = m.counter + 1;
	m.finished = m.counter + 2;
	m.mr = ibv_reg_mr(pd, m.base, total, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!m.mr) {
		perror("ibv_reg_mr");
		return -1;
	}
	return 0;
}

int post_recv(int i)
{
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)m.recv + i * RECVSZ, .length = HDR, .lkey = m.mr->lkey },
		{ .addr = (uintptr_t)m.recv + i * RECVSZ + HDR, .length = MIB, .lkey = m.mr->lkey },
	};
	struct ibv_recv_wr wr = { .wr_id = 1000 + i, .sg_list = sge, .num_sge = 2 }, *bad;

	return ibv_post_recv(id->qp, &wr, &bad);
}

/* Polls completions until `cond` holds; every completion must succeed. */
int poll_until(int (*cond)(void *), void *arg)
{
	double end = now() + wait_s;
	struct ibv_wc wc[8];

	while (!cond(arg)) {
		int n = ibv_poll_cq(cq, 8, wc);

		if (n < 0)
			return fail_msg("ibv_poll_cq");
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				printf("FAIL: completion wr_id %" PRIu64 " opcode %d: %s (vendor_err %u)\n",
				       (uint64_t)wc[i].wr_id, wc[i].opcode, ibv_wc_status_str(wc[i].status),
				       wc[i].vendor_err);
				failures++;
				return -1;
			}
			if (wc[i].wr_id >= 1000) {
				recv_ready[nready++] = (int)(wc[i].wr_id - 1000);
				recv_len[wc[i].wr_id - 1000] = wc[i].byte_len;
			} else {
				sends_done++;
			}
		}
		if (n == 0) {
			if (now() > end) {
				printf("FAIL: no completion in %d s (sends done %d, receives ready %d)\n",
				       wait_s, sends_done, nready);
				failures++;
				return -1;
			}
			usleep(100);
		}
	}
	return 0;
}

int have_recv(void *arg) { (void)arg; return nready > 0; }
int sends_reach(void *arg) { return sends_done >= *(int *)arg; }

/* Takes the oldest received message; its buffer is reposted by the caller
 * through recv_done. */
int next_msg(struct msg **out, uint8_t **payload, uint32_t *len)
{
	if (poll_until(have_recv, NULL))
		return -1;
	int i = recv_ready[0];

	memmove(recv_ready, recv_ready + 1, --nready * sizeof(int));
	*out = (struct msg *)(m.recv + i * RECVSZ);
	*payload = m.recv + i * RECVSZ + HDR;
	*len = recv_len[i] < HDR ? 0 : recv_len[i] - HDR;
	if (recv_len[i] < HDR)
		return fail_msg("received %u bytes, less than a header", recv_len[i]);
	return i;
}

/* Splits [0, len) into 1-4 pieces placed in local memory with random gaps;
 * fills sge[] (and the gaps with GUARD when `guard`). Returns the count. */
int scatter(uint64_t len, struct ibv_sge *sge, int guard)
{
	int k = 1 + (int)(rnd() % 4);
	uint64_t cut[5], pos = rnd() % 64;

	if ((uint64_t)k > len)
		k = (int)len;
	cut[0] = 0;
	cut[k] = len;
	for (int i = 1; i < k; i++) /* increasing, distinct cut points */
		cut[i] = cut[i - 1] + 1 + rnd() % (len - cut[i - 1] - (k - i));
	if (guard)
		memset(m.local, GUARD, LOCAL);
	for (int i = 0; i < k; i++) {
		sge[i].addr = (uintptr_t)m.local + pos;
		sge[i].length = (uint32_t)(cut[i + 1] - cut[i]);
		sge[i].lkey = m.mr->lkey;
		pos += sge[i].length + 1 + rnd() % 64;
	}
	return k;
}

int post_send(struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int rc = ibv_post_send(id->qp, wr, &bad);

	if (rc)
		return fail_msg("ibv_post_send opcode %d: %s", wr->opcode, strerror(rc));
	return 0;
}

/* Sends a header, optionally followed by payload SGEs. */
int send_msg(const struct msg *h, struct ibv_sge *payload, int n)
{
	struct ibv_sge sge[5] = { { .addr = (uintptr_t)m.send, .length = HDR, .lkey = m.mr->lkey } };
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_SEND, .sg_list = sge,
				  .num_sge = 1 + n, .send_flags = IBV_SEND_SIGNALED };
	int want = sends_done + 1;

	memcpy(m.send, h, HDR);
	for (int i = 0; i < n; i++)
		sge[1 + i] = payload[i];
	if (post_send(&wr))
		return -1;
	return poll_until(sends_reach, &want);
}

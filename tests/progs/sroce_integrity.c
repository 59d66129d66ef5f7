// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_integrity - a data-integrity check between two hosts over rdma_cm,
 * meant to run across a faulty network (tc netem).
 *
 *   sroce_integrity -s -a BIND_ADDR [-p PORT] [-t ACK_TIMEOUT] [-w SECONDS]
 *   sroce_integrity -c -a SERVER_ADDR [-p PORT] [-n OPS] [-S SEED] [-m MAX]
 *                   [-t ACK_TIMEOUT] [-r RETRY] [-w SECONDS]
 *
 * The client runs OPS operations of sizes 1 B .. MAX (default 1 MiB; the
 * first ones are the edge sizes 1 B and MAX, the rest random, log-spread)
 * at random offsets, each split over 1-4 SGEs scattered in local memory:
 *   WRITE  client -> server target region; then a SEND asks the server to
 *          check the bytes and that nothing else in the region changed (the
 *          server keeps a shadow copy of the whole region);
 *   READ   the server fills a range with a pattern; the client READs it into
 *          scattered pieces and checks them and the guard bytes between;
 *   SEND   header + payload from the client, checked by the server;
 *   PULL   the server SENDs header + payload, checked by the client;
 *   ATOMIC FETCH_ADD on a server counter (the returned value must be the
 *          running sum) and CMP_SWAP (one that matches, one that must not).
 * At the end the server checks the counter against the client's sum. Every
 * completion must be a success. Either side exits non-zero on any mismatch,
 * error completion or timeout (-w, per wait). The QP's local ACK timeout
 * (-t, IB exponent) and retry count (-r) are set through rdma_cm so that
 * loss recovers quickly.
 */
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdarg.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "progs_common.h"

#define MIB (1u << 20)
#define HDR 64u
#define REGION (2 * MIB)          /* the server's remote target */
#define LOCAL (2 * MIB + 4096)    /* scattered local pieces */
#define NRECV 4
#define RECVSZ (HDR + MIB)
#define GUARD 0xee

enum { M_CHECK = 1, M_FILL, M_DATA, M_PULL, M_DONE, M_REPLY };

struct msg {
	uint32_t type, status;
	uint64_t off, len, seed, value;
	uint8_t pad[HDR - 40];
};

struct remote { /* the server's accept private data */
	uint64_t region, counter;
	uint32_t rkey, pad;
};

/* One registered buffer per side, laid out as below. */
struct mem {
	uint8_t *base, *region, *shadow, *local, *recv, *send;
	/* finished: the server sets it once its last send has completed; the
	 * client READs it (at the same offset from the peer's counter). */
	uint64_t *counter, *atomic_ret, *finished;
	struct ibv_mr *mr;
};
#define FINISHED 0x66696e6973686564ull /* "finished" */

static struct rdma_cm_id *id;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct mem m;
static struct remote peer;
static int wait_s = 60, recv_ready[NRECV * 4], nready, sends_done;
static uint32_t recv_len[NRECV];

static uint64_t rnd_state;
static uint64_t rnd(void)
{
	uint64_t z = (rnd_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Byte j of the pattern of `seed`: position-dependent, so a shifted or
 * misplaced chunk does not match. */
static inline uint8_t pat(uint64_t seed, uint64_t j)
{
	uint64_t x = (seed ^ ((j >> 3) * 0x9e3779b97f4a7c15ull)) + j / 8;

	x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return (uint8_t)(x >> ((j & 7) * 8));
}

static void fill(uint8_t *p, uint64_t len, uint64_t seed, uint64_t from)
{
	for (uint64_t j = 0; j < len; j++)
		p[j] = pat(seed, from + j);
}

/* The index of the first wrong byte, or -1. */
static int64_t verify(const uint8_t *p, uint64_t len, uint64_t seed, uint64_t from)
{
	for (uint64_t j = 0; j < len; j++)
		if (p[j] != pat(seed, from + j))
			return (int64_t)j;
	return -1;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int __attribute__((format(printf, 1, 2))) fail_msg(const char *fmt, ...)
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

static int mem_init(void)
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

static int post_recv(int i)
{
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)m.recv + i * RECVSZ, .length = HDR, .lkey = m.mr->lkey },
		{ .addr = (uintptr_t)m.recv + i * RECVSZ + HDR, .length = MIB, .lkey = m.mr->lkey },
	};
	struct ibv_recv_wr wr = { .wr_id = 1000 + i, .sg_list = sge, .num_sge = 2 }, *bad;

	return ibv_post_recv(id->qp, &wr, &bad);
}

/* Polls completions until `cond` holds; every completion must succeed. */
static int poll_until(int (*cond)(void *), void *arg)
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

static int have_recv(void *arg) { (void)arg; return nready > 0; }
static int sends_reach(void *arg) { return sends_done >= *(int *)arg; }

/* Takes the oldest received message; its buffer is reposted by the caller
 * through recv_done. */
static int next_msg(struct msg **out, uint8_t **payload, uint32_t *len)
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
static int scatter(uint64_t len, struct ibv_sge *sge, int guard)
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

static int post_send(struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int rc = ibv_post_send(id->qp, wr, &bad);

	if (rc)
		return fail_msg("ibv_post_send opcode %d: %s", wr->opcode, strerror(rc));
	return 0;
}

/* Sends a header, optionally followed by payload SGEs. */
static int send_msg(const struct msg *h, struct ibv_sge *payload, int n)
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

/* ---- client ---------------------------------------------------------------- */

/* Waits for the server's reply and reposts its buffer. */
static int reply(const char *what, uint64_t len)
{
	struct msg *r;
	uint8_t *p;
	uint32_t n;
	int i = next_msg(&r, &p, &n);

	if (i < 0)
		return -1;
	int st = r->type == M_REPLY ? (int)r->status : -1;
	uint64_t v = r->value;

	if (post_recv(i))
		return fail_msg("post_recv");
	if (st != 0) {
		printf("FAIL: %s of %" PRIu64 " B: server says status %d (byte %" PRIu64 ")\n", what, len, st, v);
		failures++;
		return -1;
	}
	return 0;
}

static int op_write(uint64_t len, uint64_t off, uint64_t seed)
{
	struct ibv_sge sge[4];
	int k = scatter(len, sge, 0), want = sends_done + 1;
	uint64_t from = 0;

	for (int i = 0; i < k; i++) {
		fill((uint8_t *)(uintptr_t)sge[i].addr, sge[i].length, seed, from);
		from += sge[i].length;
	}
	struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_RDMA_WRITE, .sg_list = sge, .num_sge = k,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { .remote_addr = peer.region + off, .rkey = peer.rkey } };
	struct msg h = { .type = M_CHECK, .off = off, .len = len, .seed = seed };

	if (post_send(&wr) || poll_until(sends_reach, &want) || send_msg(&h, NULL, 0))
		return -1;
	return reply("WRITE", len);
}

static int op_read(uint64_t len, uint64_t off, uint64_t seed)
{
	struct msg h = { .type = M_FILL, .off = off, .len = len, .seed = seed };
	struct ibv_sge sge[4];

	if (send_msg(&h, NULL, 0) || reply("FILL", len))
		return -1;
	int k = scatter(len, sge, 1), want = sends_done + 1;
	struct ibv_send_wr wr = { .wr_id = 3, .opcode = IBV_WR_RDMA_READ, .sg_list = sge, .num_sge = k,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { .remote_addr = peer.region + off, .rkey = peer.rkey } };

	if (post_send(&wr) || poll_until(sends_reach, &want))
		return -1;
	/* Every piece holds its part of the pattern; every other byte of the
	 * local area is still the guard. */
	uint64_t from = 0;
	uint8_t *cur = m.local;

	for (int i = 0; i < k; i++) {
		uint8_t *p = (uint8_t *)(uintptr_t)sge[i].addr;
		int64_t bad = verify(p, sge[i].length, seed, from);

		if (bad >= 0)
			return fail_msg("READ of %" PRIu64 " B: byte %" PRIu64 " wrong (SGE %d)", len,
					from + bad, i);
		for (; cur < p; cur++)
			if (*cur != GUARD)
				return fail_msg("READ of %" PRIu64 " B wrote outside its SGEs (local byte %td)",
						len, cur - m.local);
		cur = p + sge[i].length;
		from += sge[i].length;
	}
	for (; cur < m.local + LOCAL; cur++)
		if (*cur != GUARD)
			return fail_msg("READ of %" PRIu64 " B wrote past its SGEs (local byte %td)",
					len, cur - m.local);
	return 0;
}

static int op_send(uint64_t len, uint64_t seed)
{
	struct ibv_sge sge[4];
	int k = scatter(len, sge, 0);
	uint64_t from = 0;
	struct msg h = { .type = M_DATA, .len = len, .seed = seed };

	for (int i = 0; i < k; i++) {
		fill((uint8_t *)(uintptr_t)sge[i].addr, sge[i].length, seed, from);
		from += sge[i].length;
	}
	if (send_msg(&h, sge, k))
		return -1;
	return reply("SEND", len);
}

static int op_pull(uint64_t len, uint64_t seed)
{
	struct msg h = { .type = M_PULL, .len = len, .seed = seed }, *r;
	uint8_t *p;
	uint32_t n;

	if (send_msg(&h, NULL, 0))
		return -1;
	int i = next_msg(&r, &p, &n);

	if (i < 0)
		return -1;
	int64_t bad = r->type != M_DATA || n != len ? -2 : verify(p, len, seed, 0);

	if (post_recv(i))
		return fail_msg("post_recv");
	if (bad == -2)
		return fail_msg("PULL of %" PRIu64 " B: got type %u, %u B", len, r->type, n);
	if (bad >= 0)
		return fail_msg("PULL of %" PRIu64 " B: byte %" PRId64 " wrong", len, bad);
	return 0;
}

static uint64_t counter_sum;

static int atomic(enum ibv_wr_opcode op, uint64_t a, uint64_t b)
{
	struct ibv_sge sge = { .addr = (uintptr_t)m.atomic_ret, .length = 8, .lkey = m.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 4, .opcode = op, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.atomic = { .remote_addr = peer.counter, .compare_add = a, .swap = b,
						 .rkey = peer.rkey } };
	int want = sends_done + 1;

	*m.atomic_ret = 0x5a5a5a5a5a5a5a5aull;
	if (post_send(&wr) || poll_until(sends_reach, &want))
		return -1;
	return 0;
}

static int op_atomic(void)
{
	uint64_t add = rnd();

	if (atomic(IBV_WR_ATOMIC_FETCH_AND_ADD, add, 0))
		return -1;
	if (*m.atomic_ret != counter_sum)
		return fail_msg("FETCH_ADD returned %" PRIx64 ", want %" PRIx64, *m.atomic_ret,
				counter_sum);
	counter_sum += add;
	/* A compare that does not match returns the value and swaps nothing;
	 * one that matches swaps. */
	if (atomic(IBV_WR_ATOMIC_CMP_AND_SWP, counter_sum + 1, 12345))
		return -1;
	if (*m.atomic_ret != counter_sum)
		return fail_msg("CMP_SWAP (no match) returned %" PRIx64 ", want %" PRIx64,
				*m.atomic_ret, counter_sum);
	uint64_t next = rnd();

	if (atomic(IBV_WR_ATOMIC_CMP_AND_SWP, counter_sum, next))
		return -1;
	if (*m.atomic_ret != counter_sum)
		return fail_msg("CMP_SWAP (match) returned %" PRIx64 ", want %" PRIx64, *m.atomic_ret,
				counter_sum);
	counter_sum = next;
	return 0;
}

/*
 * The end of a run, so that no one's last message loses its ACK to a peer
 * that is already gone (an RC QP answers nothing once in the error state,
 * and the sender's retries then end in "retry counter exceeded"):
 *   - the client's M_DONE: the server stays until the client disconnects;
 *   - the server's reply to it: the client stays until it has seen, by RDMA
 *     READ, that the server's last send completed (m.finished), and only
 *     then disconnects. A READ that loses its response is simply asked
 *     again: the server is still there.
 * At loss 10% the old order (the server disconnecting once its reply
 * completed) failed one run in five: M_DONE's ACK was lost, and its
 * retransmissions met a closed QP (82-netem, captured).
 */
static int wait_server_finished(void)
{
	struct ibv_sge sge = { .addr = (uintptr_t)m.atomic_ret, .length = 8, .lkey = m.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 5, .opcode = IBV_WR_RDMA_READ, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { .remote_addr = peer.counter + 2 * sizeof(uint64_t), .rkey = peer.rkey } };
	double end = now() + wait_s;

	for (;;) {
		int want = sends_done + 1;

		*m.atomic_ret = 0;
		if (post_send(&wr) || poll_until(sends_reach, &want))
			return -1;
		if (*m.atomic_ret == FINISHED)
			return 0;
		if (now() > end)
			return fail_msg("the server did not finish in %d s", wait_s);
		usleep(1000);
	}
}

static uint64_t pick_len(int i, uint64_t max)
{
	if (i < 5) /* the edge sizes first, one per operation type */
		return 1;
	if (i < 10)
		return max;
	uint64_t len = 1 + rnd() % (1ull << (rnd() % 21));

	return len > max ? max : len;
}

static int client(int ops, uint64_t max)
{
	static const char *names[] = { "WRITE", "READ", "SEND", "PULL", "ATOMIC" };
	uint64_t bytes[5] = { 0 }, count[5] = { 0 };
	double t0 = now();

	counter_sum = 0;
	for (int i = 0; i < ops && !failures; i++) {
		int t = i < 10 ? i % 5 : (int)(rnd() % 5);
		uint64_t len = pick_len(i, max), off = rnd() % (REGION - len + 1), seed = rnd();
		int rc = 0;

		switch (t) {
		case 0: rc = op_write(len, off, seed); break;
		case 1: rc = op_read(len, off, seed); break;
		case 2: rc = op_send(len, seed); break;
		case 3: rc = op_pull(len, seed); break;
		default: rc = op_atomic(); len = 24; break;
		}
		if (rc)
			break;
		count[t]++;
		bytes[t] += len;
	}
	if (!failures) {
		struct msg h = { .type = M_DONE, .value = counter_sum };

		if (send_msg(&h, NULL, 0) == 0 && reply("DONE (counter check)", 8) == 0)
			wait_server_finished();
	}
	for (int t = 0; t < 5; t++)
		printf("%-6s %4" PRIu64 " ops %10" PRIu64 " B\n", names[t], count[t], bytes[t]);
	printf("%s: %d ops in %.1f s, %d error(s)\n", failures ? "FAIL" : "ok", ops, now() - t0, failures);
	return failures ? 1 : 0;
}

/* ---- server ---------------------------------------------------------------- */

static int server_loop(void)
{
	for (;;) {
		struct msg *h, r = { .type = M_REPLY };
		uint8_t *p;
		uint32_t n;
		int i = next_msg(&h, &p, &n);
		int64_t bad = -1;

		if (i < 0)
			return -1;
		struct msg q = *h;

		if (post_recv(i))
			return fail_msg("post_recv");
		if ((q.type == M_CHECK || q.type == M_FILL) && (q.len > REGION || q.off > REGION - q.len))
			return fail_msg("bad request: off %" PRIu64 " len %" PRIu64, q.off, q.len);
		switch (q.type) {
		case M_CHECK:
			bad = verify(m.region + q.off, q.len, q.seed, 0);
			if (bad < 0) {
				/* Nothing else in the region moved. */
				fill(m.shadow + q.off, q.len, q.seed, 0);
				for (uint64_t j = 0; j < REGION; j++)
					if (m.region[j] != m.shadow[j]) {
						bad = (int64_t)j;
						r.status = 2;
						break;
					}
			} else {
				r.status = 1;
			}
			break;
		case M_FILL:
			fill(m.region + q.off, q.len, q.seed, 0);
			fill(m.shadow + q.off, q.len, q.seed, 0);
			break;
		case M_DATA:
			if (n != q.len)
				r.status = 3, bad = n;
			else if ((bad = verify(p, q.len, q.seed, 0)) >= 0)
				r.status = 1;
			break;
		case M_PULL: {
			struct ibv_sge sge[4];
			int k = scatter(q.len, sge, 0);
			uint64_t from = 0;
			struct msg d = { .type = M_DATA, .len = q.len, .seed = q.seed };

			for (int s = 0; s < k; s++) {
				fill((uint8_t *)(uintptr_t)sge[s].addr, sge[s].length, q.seed, from);
				from += sge[s].length;
			}
			if (send_msg(&d, sge, k))
				return -1;
			continue;
		}
		case M_DONE:
			if (*m.counter != q.value)
				r.status = 4, bad = (int64_t)*m.counter;
			break;
		default:
			r.status = 5;
		}
		if (r.status) {
			printf("FAIL: request type %u of %" PRIu64 " B at %" PRIu64 ": status %u, byte/value %" PRId64
			       "\n", q.type, q.len, q.off, r.status, bad);
			failures++;
		}
		r.value = (uint64_t)bad;
		if (send_msg(&r, NULL, 0))
			return -1;
		if (q.type == M_DONE) {
			/* The reply's send has completed: the client may go (see
			 * wait_server_finished). */
			__atomic_store_n(m.finished, FINISHED, __ATOMIC_RELEASE);
			printf("%s: server checked every request, %d error(s)\n", failures ? "FAIL" : "ok", failures);
			return failures ? -1 : 0;
		}
	}
}

/* ---- connection ------------------------------------------------------------ */

static struct rdma_event_channel *ec;
static int disconnected; /* the peer's DREQ has arrived: nothing to wait for at teardown */

static int wait_event(enum rdma_cm_event_type want, struct rdma_cm_event **out)
{
	struct pollfd pfd = { .fd = ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, wait_s * 1000) != 1) {
		printf("FAIL: no rdma_cm event %s in %d s\n", rdma_event_str(want), wait_s);
		failures++;
		return -1;
	}
	if (rdma_get_cm_event(ec, &ev)) {
		perror("rdma_get_cm_event");
		failures++;
		return -1;
	}
	if (ev->event != want) {
		printf("FAIL: rdma_cm event %s (status %d), want %s\n", rdma_event_str(ev->event), ev->status,
		       rdma_event_str(want));
		rdma_ack_cm_event(ev);
		failures++;
		return -1;
	}
	if (out)
		*out = ev;
	else
		rdma_ack_cm_event(ev);
	return 0;
}

static int resources(struct rdma_cm_id *cid, uint8_t timeout)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = NRECV, .max_send_sge = 5, .max_recv_sge = 2 },
	};

	if (rdma_set_option(cid, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof(timeout))) {
		perror("rdma_set_option(ACK_TIMEOUT)");
		return -1;
	}
	pd = ibv_alloc_pd(cid->verbs);
	cq = pd ? ibv_create_cq(cid->verbs, 64, NULL, NULL, 0) : NULL;
	if (!cq || mem_init())
		return -1;
	ia.send_cq = ia.recv_cq = cq;
	if (rdma_create_qp(cid, pd, &ia)) {
		perror("rdma_create_qp");
		return -1;
	}
	id = cid;
	for (int i = 0; i < NRECV; i++)
		if (post_recv(i))
			return -1;
	return 0;
}

static void teardown(void)
{
	struct rdma_cm_event *ev;

	if (id) {
		rdma_disconnect(id);
		/* The peer may have gone first: any event (or none) ends it. */
		struct pollfd pfd = { .fd = ec->fd, .events = POLLIN };

		if (!disconnected && poll(&pfd, 1, 5000) == 1 && rdma_get_cm_event(ec, &ev) == 0)
			rdma_ack_cm_event(ev);
		rdma_destroy_qp(id);
	}
	if (m.mr)
		ibv_dereg_mr(m.mr);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	free(m.base);
}

static int get_addr(const char *host, const char *port, struct sockaddr_storage *sa)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res;

	if (getaddrinfo(host, port, &hints, &res)) {
		fprintf(stderr, "cannot resolve %s\n", host);
		return -1;
	}
	memcpy(sa, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

int main(int argc, char **argv)
{
	int server = -1, ops = 100, retry = 7, opt, rc = 1;
	const char *addr = NULL, *port = "19700";
	uint64_t seed = 1, max = MIB;
	uint8_t timeout = 16; /* 268 ms: quick recovery, yet tolerant of TCG stalls */
	struct sockaddr_storage sa;
	struct rdma_cm_id *lid = NULL, *cid;
	struct rdma_cm_event *ev;

	while ((opt = getopt(argc, argv, "sca:p:n:S:m:t:r:w:")) != -1) {
		switch (opt) {
		case 's': server = 1; break;
		case 'c': server = 0; break;
		case 'a': addr = optarg; break;
		case 'p': port = optarg; break;
		case 'n': ops = atoi(optarg); break;
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		case 'm': max = strtoull(optarg, NULL, 0); break;
		case 't': timeout = (uint8_t)atoi(optarg); break;
		case 'r': retry = atoi(optarg); break;
		case 'w': wait_s = atoi(optarg); break;
		default: server = -1; addr = NULL;
		}
	}
	if (server < 0 || !addr || max < 1 || max > MIB || ops < 1) {
		fprintf(stderr, "usage: %s -s|-c -a ADDR [-p PORT] [-n OPS] [-S SEED] [-m MAX<=1MiB] "
				"[-t ACK_TIMEOUT] [-r RETRY] [-w SECONDS]\n", argv[0]);
		return 2;
	}
	rnd_state = seed * 2 + (uint64_t)server;
	setvbuf(stdout, NULL, _IOLBF, 0);
	ec = rdma_create_event_channel();
	if (!ec || get_addr(addr, port, &sa))
		return 1;
	if (server) {
		if (rdma_create_id(ec, &lid, NULL, RDMA_PS_TCP) || rdma_bind_addr(lid, (struct sockaddr *)&sa) ||
		    rdma_listen(lid, 1)) {
			perror("rdma listen");
			return 1;
		}
		printf("listening on %s port %s\n", addr, port);
		if (wait_event(RDMA_CM_EVENT_CONNECT_REQUEST, &ev))
			goto out;
		cid = ev->id;
		rdma_ack_cm_event(ev);
		if (resources(cid, timeout))
			goto out;
		/* The target region and the shadow start equal, with random bytes. */
		for (uint64_t j = 0; j < REGION; j++)
			m.region[j] = (uint8_t)rnd();
		memcpy(m.shadow, m.region, REGION);
		struct remote r = { .region = (uintptr_t)m.region, .counter = (uintptr_t)m.counter,
				    .rkey = m.mr->rkey };
		struct rdma_conn_param cp = { .private_data = &r, .private_data_len = sizeof(r),
					      .responder_resources = 4, .initiator_depth = 4,
					      .retry_count = (uint8_t)retry, .rnr_retry_count = 7 };

		if (rdma_accept(cid, &cp)) {
			perror("rdma_accept");
			goto out;
		}
		if (wait_event(RDMA_CM_EVENT_ESTABLISHED, NULL))
			goto out;
		rc = server_loop() ? 1 : 0;
		/* The client disconnects first (wait_server_finished); until then
		 * its retransmissions must find this QP. */
		if (rc == 0 && wait_event(RDMA_CM_EVENT_DISCONNECTED, NULL) == 0)
			disconnected = 1;
	} else {
		if (rdma_create_id(ec, &cid, NULL, RDMA_PS_TCP) ||
		    rdma_resolve_addr(cid, NULL, (struct sockaddr *)&sa, 5000) ||
		    wait_event(RDMA_CM_EVENT_ADDR_RESOLVED, NULL) || rdma_resolve_route(cid, 5000) ||
		    wait_event(RDMA_CM_EVENT_ROUTE_RESOLVED, NULL)) {
			printf("FAIL: address/route resolution of %s\n", addr);
			goto out;
		}
		if (resources(cid, timeout))
			goto out;
		struct rdma_conn_param cp = { .responder_resources = 4, .initiator_depth = 4,
					      .retry_count = (uint8_t)retry, .rnr_retry_count = 7 };

		if (rdma_connect(cid, &cp)) {
			perror("rdma_connect");
			goto out;
		}
		if (wait_event(RDMA_CM_EVENT_ESTABLISHED, &ev))
			goto out;
		if (ev->param.conn.private_data_len < sizeof(peer)) {
			printf("FAIL: accept carried %u bytes of private data\n", ev->param.conn.private_data_len);
			rdma_ack_cm_event(ev);
			goto out;
		}
		memcpy(&peer, ev->param.conn.private_data, sizeof(peer));
		rdma_ack_cm_event(ev);
		printf("connected: seed %" PRIu64 ", %d ops up to %" PRIu64 " B, ack timeout %u, retry %d\n", seed,
		       ops, max, timeout, retry);
		rc = client(ops, max); /* ends once the server has finished */
	}
out:
	teardown();
	if (id)
		rdma_destroy_id(id);
	if (lid)
		rdma_destroy_id(lid);
	rdma_destroy_event_channel(ec);
	if (failures)
		rc = 1;
	return rc;
}

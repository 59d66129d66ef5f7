// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* client.c - sroce_integrity's client: the operations and their checks. */
#include <unistd.h>

#include "integrity.h"

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

int client(int ops, uint64_t max)
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

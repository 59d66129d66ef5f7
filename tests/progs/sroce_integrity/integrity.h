// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * integrity.h - the parts of sroce_integrity (tests/progs/sroce_integrity.c)
 * shared by its files: the message format, the memory layout, the state of
 * the one connection, and the helpers every role uses (common.c). The
 * client's operations are in client.c, the server's loop in server.c, the
 * rdma_cm connection and main() in ../sroce_integrity.c.
 */
#pragma once
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <inttypes.h>
#include <rdma/rdma_cma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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


/* The connection and its state (common.c). */
extern struct rdma_cm_id *id;
extern struct ibv_pd *pd;
extern struct ibv_cq *cq;
extern struct mem m;
extern struct remote peer;
extern int failures, wait_s, recv_ready[NRECV * 4], nready, sends_done;
extern uint32_t recv_len[NRECV];
extern uint64_t rnd_state;

/* Byte j of the pattern of `seed`: position-dependent, so a shifted or
 * misplaced chunk does not match. */
static inline uint8_t pat(uint64_t seed, uint64_t j)
{
	uint64_t x = (seed ^ ((j >> 3) * 0x9e3779b97f4a7c15ull)) + j / 8;

	x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return (uint8_t)(x >> ((j & 7) * 8));
}

uint64_t rnd(void);
void fill(uint8_t *p, uint64_t len, uint64_t seed, uint64_t from);
int64_t verify(const uint8_t *p, uint64_t len, uint64_t seed, uint64_t from);
double now(void);
int __attribute__((format(printf, 1, 2))) fail_msg(const char *fmt, ...);
int mem_init(void);
int post_recv(int i);
int poll_until(int (*cond)(void *), void *arg);
int have_recv(void *arg);
int sends_reach(void *arg);
int next_msg(struct msg **out, uint8_t **payload, uint32_t *len);
int scatter(uint64_t len, struct ibv_sge *sge, int guard);
int post_send(struct ibv_send_wr *wr);
int send_msg(const struct msg *h, struct ibv_sge *payload, int n);

/* The roles: 0 on success (client.c, server.c). */
int client(int ops, uint64_t max);
int server_loop(void);

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mp_wr.h - sroce_mp_wr's shared part: the device in use and its memory,
 * the QP and CQ makers, posting and the MP-WR completion reader
 * (common.c); the reassembly run (reassembly.c); a multi-packet WQ behind
 * an RSS QP (rss_wq.c). The scenarios with
 * asserted offsets are in ../sroce_mp_wr.c.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "../../../libuser/sroce.h"
#include "infiniband/srocedv.h"
#include "../progs_common.h"

/* The device in use: the reassembly between two devices switches these
 * (and mr) from one devset to the other with use(). */
extern struct ibv_context *ctx;
extern struct ibv_pd *pd;
extern union ibv_gid gid;
extern int gid_idx;

struct devset {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	union ibv_gid gid;
	int gid_idx;
};
extern struct devset here, peer;
void use(const struct devset *d);
/* The device and its registration of mem: 0, or 1 with a message. */
int open_dev(const char *name, struct devset *d);

enum { MAX_RECV = 64 };

/* Registered memory: the test's buffers, with a page of canary after. */
extern uint8_t *mem;
extern struct ibv_mr *mr;
enum { MEM = 8 << 20, CANARY = 4096 };

/* A completion as the MP-WR reader sees it. */
struct mpc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t len, qp_num, flags;
	size_t offset;
	uint32_t hash; /* an RSS QP's (srocedv_wc_read_rss_hash) */
	enum srocedv_rss_hash_type hash_type;
};

#define MORE SROCEDV_WC_MP_WR_MORE_IN_MSG
#define CONSUMED SROCEDV_WC_MP_WR_CONSUMED

struct ibv_cq_ex *make_cq(bool mp);
/* An RC/UC/UD QP; mp: its RQ is multi-packet with *mp's sizes (updated). */
struct ibv_qp *make_qp(enum ibv_qp_type t, struct ibv_cq_ex *scq, struct ibv_cq_ex *rcq,
		       struct ibv_srq *srq, struct srocedv_mp_wr_attr *mp);
int connect_pair(struct ibv_qp *a, struct ibv_qp *b);
int post_mp(struct ibv_qp *qp, struct ibv_srq *srq, uint64_t wr_id, size_t off, size_t len);
int send_msg(struct ibv_qp *qp, size_t src_off, uint32_t len, uint32_t ud_qpn, struct ibv_ah *ah);
uint64_t now_ns(void);
/* Polls cq until n completions came (or 10 s): into out, the count. */
size_t poll_mp(struct ibv_cq_ex *cq, struct mpc *out, size_t n);
/* Drains send completions (they are not checked here but for success). */
void drain_sends(struct ibv_cq_ex *cq, size_t n);
/* A sender a and a receiver b of type t on the CQs scq (both of a's, b's
 * send) and rcq (b's receives, multi-packet); b's RQ has *mp's sizes
 * (updated). All four are set, NULL where a create failed. */
bool pair_open(enum ibv_qp_type t, struct srocedv_mp_wr_attr *mp, struct ibv_cq_ex **scq,
	       struct ibv_cq_ex **rcq, struct ibv_qp **a, struct ibv_qp **b);
void pair_close(struct ibv_qp *a, struct ibv_qp *b, struct ibv_cq_ex *scq, struct ibv_cq_ex *rcq);
/* The failed checks of common.c and of reassembly.c (each file counts its own). */
int common_failures(void);
int reassembly(void);
int rss_wq(void);

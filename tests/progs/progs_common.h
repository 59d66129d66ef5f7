/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Helpers shared by the test programs (tests/progs/). */
#ifndef SROCE_PROGS_COMMON_H
#define SROCE_PROGS_COMMON_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (cond) {                                                \
			printf("ok: " __VA_ARGS__);                        \
		} else {                                                   \
			printf("FAIL: " __VA_ARGS__);                      \
			failures++;                                        \
		}                                                          \
		printf("\n");                                              \
		fflush(stdout);                                            \
	} while (0)

/* A verb that must fail with `want` (errno-style return or errno). */
#define CHECK_ERR(got, want, what)                                         \
	CHECK((got) == (want), "%s: %s (want %s)", what, strerror(got), strerror(want))

static inline struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	if (!list) {
		perror("ibv_get_device_list");
		return NULL;
	}
	for (int i = 0; list[i]; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name) == 0) {
			ctx = ibv_open_device(list[i]);
			if (!ctx)
				fprintf(stderr, "ibv_open_device(%s): %s\n", name, strerror(errno));
			break;
		}
	}
	ibv_free_device_list(list);
	if (!ctx)
		fprintf(stderr, "no device %s\n", name);
	return ctx;
}

/* The RoCEv2 GID of an IPv4 address: ::ffff:a.b.c.d. */
static inline int gid_from_ipv4(const char *ip, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	return inet_pton(AF_INET, ip, &gid->raw[12]) == 1 ? 0 : -1;
}

/* The index of the first GID on port 1 whose last four bytes are an IPv4
 * address (::ffff:a.b.c.d); -1 if there is none. */
static inline int ipv4_gid_index(struct ibv_context *ctx, union ibv_gid *out)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(ctx, 1, &pa))
		return -1;
	/* RoCE GIDs are added first: a few entries are enough. */
	for (int i = 0; i < pa.gid_tbl_len && i < 16; i++) {
		union ibv_gid g;
		static const unsigned char v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

		if (ibv_query_gid(ctx, 1, i, &g))
			continue;
		if (!memcmp(g.raw, v4, sizeof(v4))) {
			if (out)
				*out = g;
			return i;
		}
	}
	return -1;
}

/* One side of a test that connects two QPs in one process: the device, a
 * PD, its first IPv4 GID, a CQ and the QP. */
struct qp_end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
	int gid_idx;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

/* xorshift64: the test programs' reproducible random numbers (a seed from
 * the command line; *state must not be 0). */
static inline uint64_t xorshift64(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* Opens the device `name` with a PD and its first IPv4 GID (index in
 * *gid_idx): 0, or -1 with a message. */
static inline int open_with_gid(const char *name, struct ibv_context **ctx, struct ibv_pd **pd,
				union ibv_gid *gid, int *gid_idx)
{
	*ctx = open_by_name(name);
	if (!*ctx)
		return -1;
	*pd = ibv_alloc_pd(*ctx);
	*gid_idx = ipv4_gid_index(*ctx, gid);
	if (!*pd || *gid_idx < 0) {
		fprintf(stderr, "%s: no PD or no IPv4 GID\n", name);
		return -1;
	}
	return 0;
}

/* RESET -> INIT on port 1 with the given access rights (RC, UC): 0 or -1. */
static inline int qp_to_init(struct ibv_qp *qp, unsigned int access)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = access };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* Moves a QP of the device from INIT through RTR to RTS: RC and UC
 * connected to dest_qpn at gid with path MTU mtu, UD through the states
 * only. RC: rd_atomic is max_rd_atomic and max_dest_rd_atomic, timeout the
 * ACK timeout exponent, 7 retries and RNR retries. */
static inline int qp_to_rts_mtu(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *gid,
				int gid_idx, uint8_t rd_atomic, uint8_t timeout, enum ibv_mtu mtu)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = mtu, .dest_qp_num = dest_qpn,
		.max_dest_rd_atomic = rd_atomic, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *gid, .sgid_index = (uint8_t)gid_idx, .hop_limit = 64 } },
	};
	int mask = IBV_QP_STATE;

	if (qp->qp_type == IBV_QPT_RC || qp->qp_type == IBV_QPT_UC)
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (qp->qp_type == IBV_QPT_RC)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	if (ibv_modify_qp(qp, &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = rd_atomic;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (qp->qp_type == IBV_QPT_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, mask);
}

/* A UD QP through INIT (port 1, qkey), RTR and RTS: 0, or -1. */
static inline int ud_qp_rts(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* qp_to_rts_mtu with path MTU 1024. */
static inline int qp_to_rts(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *gid,
			    int gid_idx, uint8_t rd_atomic, uint8_t timeout)
{
	return qp_to_rts_mtu(qp, dest_qpn, gid, gid_idx, rd_atomic, timeout, IBV_MTU_1024);
}

/* UD senders toward dgid from the sender's GID sgid_idx: an AH, a CQ, a
 * 64 KiB registered buffer and n UD QPs (up to 64) in RTS with qkey. 0, or
 * -1 with errno set. */
struct ud_senders {
	struct ibv_ah *ah;
	struct ibv_cq *cq;
	uint8_t *buf;
	struct ibv_mr *mr;
	struct ibv_qp *qp[64];
	unsigned int n;
	uint32_t qkey;
};

static inline int ud_senders_make(struct ud_senders *s, struct ibv_context *ctx, struct ibv_pd *pd,
				  const union ibv_gid *dgid, int sgid_idx, unsigned int n, uint32_t max_send_wr,
				  uint32_t qkey)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = *dgid, .sgid_index = (uint8_t)sgid_idx, .hop_limit = 64 } };

	memset(s, 0, sizeof(*s));
	s->qkey = qkey;
	s->ah = ibv_create_ah(pd, &aa);
	s->cq = ibv_create_cq(ctx, 1024, NULL, NULL, 0);
	s->buf = calloc(1, 65536);
	s->mr = s->buf ? ibv_reg_mr(pd, s->buf, 65536, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!s->ah || !s->cq || !s->mr || n > 64)
		return -1;
	for (s->n = 0; s->n < n; s->n++) {
		struct ibv_qp_init_attr qa = { .send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_UD,
					       .cap = { .max_send_wr = max_send_wr, .max_recv_wr = 1,
							.max_send_sge = 1, .max_recv_sge = 1 } };

		s->qp[s->n] = ibv_create_qp(pd, &qa);
		if (!s->qp[s->n] || ud_qp_rts(s->qp[s->n], qkey))
			return -1;
	}
	return 0;
}

/* A signaled UD SEND of len bytes at p (in s->buf) from sender i to qpn. */
static inline int ud_senders_send(struct ud_senders *s, unsigned int i, uint32_t qpn, void *p, uint32_t len)
{
	struct ibv_sge sg = { .addr = (uintptr_t)p, .length = len, .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
				  .wr = { .ud = { .ah = s->ah, .remote_qpn = qpn, .remote_qkey = s->qkey } } },
			   *bad;

	return ibv_post_send(s->qp[i], &wr, &bad);
}

static inline void ud_senders_free(struct ud_senders *s)
{
	for (unsigned int i = 0; i < 64; i++)
		if (s->qp[i])
			ibv_destroy_qp(s->qp[i]);
	if (s->ah)
		ibv_destroy_ah(s->ah);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	free(s->buf);
}

#endif

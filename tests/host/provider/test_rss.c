// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_rss.c - the provider's side of RSS (libuser/wq.c, cq_ex.c;
 * Documentation/rss.md) on rings in this process's memory:
 *
 * 1. ibv_post_wq_recv posts nothing to a WQ in RESET or ERR (EINVAL,
 *    bad_wr the first WR, the producer unmoved), and posts a list whole in
 *    RDY, each WQE as a receive.
 * 2. srocedv_wc_read_rss_hash gives a hashed completion's value and type,
 *    and 0 / NONE for one without SROCE_CQE_WITH_HASH.
 * 3. An RSS QP's request from ibv_rx_hash_conf: Toeplitz with its key, XOR
 *    without one, payload mode kept; refused: another QP type, no RX_HASH,
 *    an unknown function, a missing or oversized key.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "sroce.h"

enum { LOG_ENTRIES = 4, STRIDE = 64 + 16 };

static struct {
	struct sroce_wq wq;
	struct sroce_ring_header hdr;
	uint8_t entries[STRIDE << LOG_ENTRIES];
} fw;

static void test_post(void)
{
	struct ibv_sge sge = { .addr = 0x1000, .length = 512, .lkey = 3 };
	struct ibv_recv_wr w[2] = { { .wr_id = 11, .sg_list = &sge, .num_sge = 1, .next = &w[1] },
				    { .wr_id = 12, .sg_list = &sge, .num_sge = 1 } };
	struct ibv_recv_wr *bad = NULL;

	fw.wq.ring.hdr = &fw.hdr;
	fw.wq.ring.entries = fw.entries;
	fw.wq.ring.mask = (1u << LOG_ENTRIES) - 1;
	fw.wq.ring.stride = STRIDE;
	fw.wq.max_sge = 1;
	sroce_spin_init(&fw.wq.ring.lock);
	fw.wq.ibv_wq.state = IBV_WQS_RESET;
	CHECK(sroce_post_wq_recv(&fw.wq.ibv_wq, w, &bad) == EINVAL && bad == &w[0]);
	fw.wq.ibv_wq.state = IBV_WQS_ERR;
	bad = NULL;
	CHECK(sroce_post_wq_recv(&fw.wq.ibv_wq, w, &bad) == EINVAL && bad == &w[0]);
	CHECK(fw.hdr.producer == 0 && fw.wq.ring.idx == 0);
	fw.wq.ibv_wq.state = IBV_WQS_RDY;
	bad = NULL;
	CHECK(sroce_post_wq_recv(&fw.wq.ibv_wq, w, &bad) == 0 && bad == NULL);
	CHECK(fw.hdr.producer == 2);
	const struct sroce_wqe *e = (const struct sroce_wqe *)(fw.entries + STRIDE);

	CHECK(e->wr_id == 12 && e->opcode == SROCE_WQE_RECV && e->num_sge == 1);
	CHECK(memcmp(e + 1, &sge, sizeof(sge)) == 0);
	/* Two SGEs where one fits: the first WR posts, the second is refused. */
	w[1].num_sge = 2;
	CHECK(sroce_post_wq_recv(&fw.wq.ibv_wq, w, &bad) == EINVAL && bad == &w[1]);
	CHECK(fw.hdr.producer == 3);
}

static struct {
	struct sroce_cq cq;
	struct sroce_ring_header hdr;
	struct sroce_cqe entries[8];
} fc;

static void test_hash_reader(void)
{
	struct ibv_poll_cq_attr pa = {};
	enum srocedv_rss_hash_type type = SROCEDV_RSS_HASH_IPV6;
	struct ibv_cq_ex *ex = &fc.cq.vcq.cq_ex;

	fc.cq.ring.hdr = &fc.hdr;
	fc.cq.ring.entries = (uint8_t *)fc.entries;
	fc.cq.ring.mask = 7;
	fc.cq.ring.stride = sizeof(struct sroce_cqe);
	sroce_spin_init(&fc.cq.ring.lock);
	sroce_cq_ex_init(&fc.cq, IBV_WC_EX_WITH_BYTE_LEN, false);
	fc.entries[0] = (struct sroce_cqe){ .wr_id = 1, .flags = SROCE_CQE_WITH_HASH | SROCE_CQE_GRH,
					    .hash_value = 0x51ccc178, .hash_type = SROCE_HASH_UDP_IPV4 };
	fc.entries[1] = (struct sroce_cqe){ .wr_id = 2, .hash_value = 0xdead, .hash_type = SROCE_HASH_IPV4 };
	fc.entries[2] = (struct sroce_cqe){ .wr_id = 3, .flags = SROCE_CQE_WITH_HASH, .hash_value = 0,
					    .hash_type = SROCE_HASH_NONE };
	__atomic_store_n(&fc.hdr.producer, 3, __ATOMIC_RELEASE);
	CHECK(ibv_start_poll(ex, &pa) == 0);
	CHECK(srocedv_wc_read_rss_hash(ex, &type) == 0x51ccc178 && type == SROCEDV_RSS_HASH_UDP_IPV4);
	CHECK(srocedv_wc_read_rss_hash(ex, NULL) == 0x51ccc178);
	CHECK(ibv_next_poll(ex) == 0);
	/* Not flagged: whatever the fields hold is not a hash. */
	CHECK(srocedv_wc_read_rss_hash(ex, &type) == 0 && type == SROCEDV_RSS_HASH_NONE);
	CHECK(ibv_next_poll(ex) == 0);
	type = SROCEDV_RSS_HASH_IPV6;
	CHECK(srocedv_wc_read_rss_hash(ex, &type) == 0 && type == SROCEDV_RSS_HASH_NONE);
	ibv_end_poll(ex);
}

static void test_request(void)
{
	uint8_t key[40];
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_UD,
		.comp_mask = IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH,
		.rx_hash_conf = { .rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ, .rx_hash_key_len = 40,
				  .rx_hash_key = key,
				  .rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_PORT_UDP },
	};
	struct sroce_create_qp_req req = { 0 };

	for (int i = 0; i < 40; i++)
		key[i] = (uint8_t)(i * 7 + 1);
	CHECK(sroce_rss_req(&a, &req) == 0);
	CHECK(req.comp_mask == SROCE_CREATE_QP_REQ_RX_HASH);
	CHECK(req.rx_hash_fields == (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_PORT_UDP));
	CHECK(req.rx_hash_function == SROCE_RX_HASH_TOEPLITZ && req.rx_hash_key_len == 40);
	CHECK(memcmp(req.rx_hash_key, key, 40) == 0);
	/* XOR takes no key; payload mode (srocedv's bit) stays in comp_mask. */
	memset(&req, 0, sizeof(req));
	req.comp_mask = SROCE_CREATE_QP_REQ_RSS_PAYLOAD;
	a.rx_hash_conf.rx_hash_function = SROCEDV_RX_HASH_FUNC_XOR;
	a.rx_hash_conf.rx_hash_key = NULL;
	CHECK(sroce_rss_req(&a, &req) == 0);
	CHECK(req.comp_mask == (SROCE_CREATE_QP_REQ_RX_HASH | SROCE_CREATE_QP_REQ_RSS_PAYLOAD));
	CHECK(req.rx_hash_function == SROCE_RX_HASH_XOR && req.rx_hash_key_len == 0);
	/* Refused. */
	a.rx_hash_conf.rx_hash_function = 1 << 5;
	CHECK(sroce_rss_req(&a, &req) == EOPNOTSUPP);
	a.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	CHECK(sroce_rss_req(&a, &req) == EINVAL); /* Toeplitz without a key */
	a.rx_hash_conf.rx_hash_key = key;
	a.rx_hash_conf.rx_hash_key_len = 41;
	CHECK(sroce_rss_req(&a, &req) == EINVAL);
	a.rx_hash_conf.rx_hash_key_len = 40;
	a.qp_type = IBV_QPT_RC;
	CHECK(sroce_rss_req(&a, &req) == EINVAL);
	a.qp_type = IBV_QPT_UD;
	a.comp_mask = IBV_QP_INIT_ATTR_IND_TABLE;
	CHECK(sroce_rss_req(&a, &req) == EINVAL);
}

int main(void)
{
	test_post();
	test_hash_reader();
	test_request();
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_cq_ex.c - the provider's ibv_cq_ex polling and readers
 * (libuser/cq_ex.c) against its ibv_poll_cq (libuser/cq.c), on CQ rings in
 * this process's memory: the test plays the kernel's producer.
 *
 * 1. Random CQEs read through start/next/end_poll and the ibv_wc_read_*
 *    readers give what ibv_poll_cq gives for the same ring, in random
 *    batch lengths, with the ring wrapping many times; the consumer index
 *    the kernel sees ends where ibv_poll_cq's does.
 * 2. A CQE published after next_poll said ENOENT is not consumed by
 *    end_poll; an empty CQ leaves start_poll without the lock held.
 * 3. Timestamps: read_completion_ts is the CQE's stamp; the wall clock is
 *    it plus REALTIME - MONOTONIC; ibv_query_rt_values_ex is monotonic
 *    time. Creation refuses wc_flags and flags sroce cannot fill.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "sroce.h"

enum { LOG_ENTRIES = 5 };

struct fake_cq {
	struct sroce_cq cq;
	struct sroce_ring_header hdr;
	struct sroce_cqe entries[1 << LOG_ENTRIES];
};

static const uint64_t all_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
				  IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
				  IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
				  IBV_WC_EX_WITH_DLID_PATH_BITS | IBV_WC_EX_WITH_FLOW_TAG |
				  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
				  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;

static void fake_cq_init(struct fake_cq *f, bool single_threaded)
{
	memset(f, 0, sizeof(*f));
	f->cq.ring.hdr = &f->hdr;
	f->cq.ring.entries = (uint8_t *)f->entries;
	f->cq.ring.mask = (1u << LOG_ENTRIES) - 1;
	f->cq.ring.stride = sizeof(struct sroce_cqe);
	sroce_spin_init(&f->cq.ring.lock);
	sroce_cq_ex_init(&f->cq, all_flags, single_threaded);
}

/* The kernel's side: one CQE at the producer index, then publication. */
static void produce(struct fake_cq *f, const struct sroce_cqe *cqe)
{
	f->entries[f->hdr.producer & f->cq.ring.mask] = *cqe;
	__atomic_store_n(&f->hdr.producer, f->hdr.producer + 1, __ATOMIC_RELEASE);
}

static void random_cqe(struct sroce_cqe *c)
{
	memset(c, 0, sizeof(*c));
	c->wr_id = rnd();
	c->status = rnd() % 4 ? IBV_WC_SUCCESS : (uint8_t)(rnd() % 22);
	c->opcode = (uint8_t)(rnd() % 2 ? rnd() % 7 : 128 + rnd() % 3);
	c->flags = (uint16_t)(rnd() & (SROCE_CQE_WITH_IMM | SROCE_CQE_WITH_INV | SROCE_CQE_GRH));
	c->byte_len = (uint32_t)rnd();
	c->imm_or_inv = (uint32_t)rnd();
	c->qp_num = (uint32_t)rnd() & 0xffffff;
	c->src_qp = (uint32_t)rnd() & 0xffffff;
	c->pkey_index = 0;
	c->sl = (uint8_t)(rnd() % 16);
	c->network_hdr_type = (uint8_t)(rnd() % 4);
	c->vendor_err = (uint8_t)rnd();
	c->timestamp = rnd();
}

/* What the readers say about the current CQE, as an ibv_wc. */
static void read_ex(struct ibv_cq_ex *ex, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = ex->wr_id;
	wc->status = ex->status;
	wc->opcode = ibv_wc_read_opcode(ex);
	wc->vendor_err = ibv_wc_read_vendor_err(ex);
	wc->byte_len = ibv_wc_read_byte_len(ex);
	wc->imm_data = ibv_wc_read_imm_data(ex);
	wc->qp_num = ibv_wc_read_qp_num(ex);
	wc->src_qp = ibv_wc_read_src_qp(ex);
	wc->wc_flags = ibv_wc_read_wc_flags(ex);
	wc->slid = (uint16_t)ibv_wc_read_slid(ex);
	wc->sl = ibv_wc_read_sl(ex);
	wc->dlid_path_bits = ibv_wc_read_dlid_path_bits(ex);
	CHECK(ibv_wc_read_flow_tag(ex) == 0);
}

static void test_same_completions(void)
{
	static struct fake_cq a, b;
	unsigned int total = 0, differ = 0;

	fake_cq_init(&a, false);
	fake_cq_init(&b, rnd() % 2);
	for (unsigned int round = 0; round < 20000; round++) {
		unsigned int n = (unsigned int)(rnd() % (1u << LOG_ENTRIES)) + 1;
		struct ibv_poll_cq_attr attr = {};
		struct ibv_wc wa[1 << LOG_ENTRIES], wb;
		unsigned int got = 0;
		int na, ret;

		for (unsigned int i = 0; i < n; i++) {
			struct sroce_cqe c;

			random_cqe(&c);
			produce(&a, &c);
			produce(&b, &c);
		}
		/* ibv_poll_cq in one call, the readers in pieces of random size.
		 * (Zeroed first: ibv_poll_cq leaves the padding alone.) */
		memset(wa, 0, sizeof(wa));
		na = sroce_poll_cq(&a.cq.vcq.cq, (int)n, wa);
		CHECK(na == (int)n);
		while (got < n) {
			unsigned int piece = (unsigned int)(rnd() % (n - got)) + 1, k = 0;

			ret = ibv_start_poll(&b.cq.vcq.cq_ex, &attr);
			CHECK(ret == 0);
			if (ret)
				break;
			for (;;) {
				read_ex(&b.cq.vcq.cq_ex, &wb);
				differ += memcmp(&wa[got + k], &wb, sizeof(wb)) != 0;
				CHECK(ibv_wc_read_completion_ts(&b.cq.vcq.cq_ex) ==
				      b.entries[b.cq.ring.idx & b.cq.ring.mask].timestamp);
				k++;
				if (k == piece)
					break;
				ret = ibv_next_poll(&b.cq.vcq.cq_ex);
				CHECK(ret == 0);
				if (ret)
					break;
			}
			ibv_end_poll(&b.cq.vcq.cq_ex);
			got += k;
			CHECK(b.hdr.consumer == a.hdr.consumer - (n - got));
		}
		total += n;
		CHECK(a.hdr.consumer == b.hdr.consumer);
	}
	printf("cq_ex: %u completions, %u differ from ibv_poll_cq\n", total, differ);
	CHECK(differ == 0);
}

static void test_poll_edges(void)
{
	static struct fake_cq f;
	struct ibv_poll_cq_attr attr = {};
	struct ibv_cq_ex *ex = &f.cq.vcq.cq_ex;
	struct sroce_cqe c;

	fake_cq_init(&f, false);
	/* Empty: ENOENT and the lock is free again. */
	CHECK(ibv_start_poll(ex, &attr) == ENOENT);
	CHECK(sroce_spin_trylock(&f.cq.ring.lock) == 0);
	sroce_spin_unlock(&f.cq.ring.lock);

	/* Unknown poll attributes. */
	attr.comp_mask = 1;
	CHECK(ibv_start_poll(ex, &attr) == EINVAL);
	attr.comp_mask = 0;

	/* Two CQEs; next_poll runs off the end; a third arrives before
	 * end_poll: it stays for the next start_poll. */
	random_cqe(&c);
	c.wr_id = 1;
	produce(&f, &c);
	c.wr_id = 2;
	produce(&f, &c);
	CHECK(ibv_start_poll(ex, &attr) == 0);
	CHECK(ex->wr_id == 1);
	CHECK(ibv_next_poll(ex) == 0);
	CHECK(ex->wr_id == 2);
	CHECK(ibv_next_poll(ex) == ENOENT);
	CHECK(ibv_next_poll(ex) == ENOENT); /* again: still nothing skipped */
	c.wr_id = 3;
	produce(&f, &c);
	ibv_end_poll(ex);
	CHECK(f.hdr.consumer == 2);
	CHECK(ibv_start_poll(ex, &attr) == 0);
	CHECK(ex->wr_id == 3);
	ibv_end_poll(ex);
	CHECK(f.hdr.consumer == 3);

	/* A producer index no kernel writes reads as empty. */
	f.hdr.producer = f.hdr.consumer + 1000;
	CHECK(ibv_start_poll(ex, &attr) == ENOENT);
}

static uint64_t now_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void test_clocks(void)
{
	static struct fake_cq f;
	struct ibv_poll_cq_attr attr = {};
	struct ibv_cq_ex *ex = &f.cq.vcq.cq_ex;
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct sroce_cqe c;
	uint64_t before, after, wall;

	fake_cq_init(&f, true);
	before = now_ns(CLOCK_MONOTONIC);
	CHECK(sroce_query_rt_values(NULL, &v) == 0);
	after = now_ns(CLOCK_MONOTONIC);
	CHECK(v.comp_mask == IBV_VALUES_MASK_RAW_CLOCK);
	CHECK(v.raw_clock.tv_sec == 0);
	CHECK((uint64_t)v.raw_clock.tv_nsec >= before && (uint64_t)v.raw_clock.tv_nsec <= after);

	random_cqe(&c);
	c.timestamp = now_ns(CLOCK_MONOTONIC) - 5000000; /* completed 5 ms ago */
	produce(&f, &c);
	CHECK(ibv_start_poll(ex, &attr) == 0);
	CHECK(ibv_wc_read_completion_ts(ex) == c.timestamp);
	before = now_ns(CLOCK_REALTIME);
	wall = ibv_wc_read_completion_wallclock_ns(ex);
	after = now_ns(CLOCK_REALTIME);
	ibv_end_poll(ex);
	/* 5 ms before the wall clock of the read, within the read's time. */
	CHECK(wall + 5000000 >= before - 1000000 && wall + 5000000 <= after + 1000000);
}

/* A UD receive over RoCE v2 reports its packet type in wc.sl, as mlx5 does
 * (UCX 1.13's ud_verbs drops every UD packet otherwise): 0xa for IPv4,
 * 0x9 for IPv6, through ibv_poll_cq and ibv_wc_read_sl alike. A CQE
 * without a GRH keeps its sl. */
static void test_roce_packet_type_in_sl(void)
{
	static const struct {
		uint16_t flags;
		uint8_t net, sl, want;
	} cases[] = {
		{ SROCE_CQE_GRH, 2, 0, 0xa },
		{ SROCE_CQE_GRH | SROCE_CQE_WITH_IMM, 2, 5, 0xa },
		{ SROCE_CQE_GRH, 3, 0, 0x9 },
		{ 0, 2, 0, 0 },
		{ 0, 0, 7, 7 },
		{ SROCE_CQE_WITH_IMM, 3, 3, 3 },
	};
	static struct fake_cq f;

	fake_cq_init(&f, false);
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sroce_cqe c = { .wr_id = i, .opcode = IBV_WC_RECV, .flags = cases[i].flags,
				       .sl = cases[i].sl, .network_hdr_type = cases[i].net };
		struct ibv_poll_cq_attr attr = {};
		struct ibv_wc wc = {};

		produce(&f, &c);
		CHECK(sroce_poll_cq(&f.cq.vcq.cq, 1, &wc) == 1);
		CHECK(wc.sl == cases[i].want);
		produce(&f, &c);
		CHECK(ibv_start_poll(&f.cq.vcq.cq_ex, &attr) == 0);
		CHECK(ibv_wc_read_sl(&f.cq.vcq.cq_ex) == cases[i].want);
		ibv_end_poll(&f.cq.vcq.cq_ex);
	}
}

static void test_create_refusals(void)
{
	struct ibv_cq_init_attr_ex attr = { .cqe = 16 };

	attr.wc_flags = IBV_WC_EX_WITH_CVLAN;
	errno = 0;
	CHECK(sroce_create_cq_ex(NULL, &attr) == NULL && errno == EOPNOTSUPP);
	attr.wc_flags = IBV_WC_EX_WITH_TM_INFO;
	CHECK(sroce_create_cq_ex(NULL, &attr) == NULL && errno == EOPNOTSUPP);
	attr.wc_flags = IBV_WC_EX_WITH_BYTE_LEN;
	attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	attr.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	CHECK(sroce_create_cq_ex(NULL, &attr) == NULL && errno == EOPNOTSUPP);
	attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	attr.flags = 0;
	CHECK(sroce_create_cq_ex(NULL, &attr) == NULL && errno == EOPNOTSUPP);
}

int main(void)
{
	rng_state = 0x243f6a8885a308d3ull;
	test_create_refusals();
	test_poll_edges();
	test_clocks();
	test_roce_packet_type_in_sl();
	test_same_completions();
	printf("provider cq_ex: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}

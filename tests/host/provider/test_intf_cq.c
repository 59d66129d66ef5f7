// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_intf_cq.c - the formatted CQ of the interface families
 * (libuser/intf_cq.c, seed 004) against ibv_poll_cq, on CQ rings in this
 * process's memory: the test plays the kernel's producer.
 *
 * 1. The layout: srocedv_wc_format_size/offset are those of a C struct of
 *    the selected parts.
 * 2. poll_formatted, for all 64 formats and both locking modes, writes what
 *    ibv_poll_cq reads (and the CQE's multi-packet offset), at those offsets, into an unaligned buffer, in
 *    random batches with the ring wrapping; it stops at an error CQE
 *    (-EIO when first, until ibv_poll_cq takes it) and refuses a buffer
 *    too small (-EINVAL); poll_num counts what is ready.
 * 3. srocedv_modify_cq: a format needs BASE, no unknown bit, TS only with
 *    timestamps, MP_WR only with SROCEDV_WC_EX_WITH_MP_WR; no new format (EBUSY), no destroy (EBUSY) while a table
 *    is held; the query needs a format first.
 * 4. A query in destroy's window (its check passed, the CQ not yet freed)
 *    is refused with EBUSY and takes no table; a destroy the kernel
 *    refuses leaves the CQ to queries again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intf_fixture.h"

enum { CQ_LOG = 5 };

struct fake_cq {
	struct sroce_cq cq;
	struct sroce_ring_header hdr;
	struct sroce_cqe entries[1 << CQ_LOG];
};

static void cq_init(struct fake_cq *f, uint64_t wc_flags)
{
	memset(f, 0, sizeof(*f));
	f->cq.vcq.cq.context = &sctx.vctx.context;
	f->cq.ring.hdr = &f->hdr;
	f->cq.ring.entries = (uint8_t *)f->entries;
	f->cq.ring.mask = (1u << CQ_LOG) - 1;
	f->cq.ring.stride = sizeof(struct sroce_cqe);
	f->cq.wc_flags = wc_flags;
	sroce_spin_init(&f->cq.ring.lock);
}

/* Destroy's kernel command, in place of libibverbs' (this executable's
 * definition wins): it runs in destroy's window, after the check that no
 * table is held and before the free, so it queries the CQ there, then
 * answers destroy_err. */
static int destroy_err;
static const void *raced;
static int raced_errno;

int ibv_cmd_destroy_cq(struct ibv_cq *cq)
{
	errno = 0;
	raced = query(cq, SROCEDV_INTF_CQ_FORMATTED, 0, 0);
	raced_errno = errno;
	return destroy_err;
}

static void produce(struct fake_cq *f, uint8_t status)
{
	struct sroce_cqe *c = &f->entries[f->hdr.producer & f->cq.ring.mask];

	memset(c, 0, sizeof(*c));
	c->wr_id = rnd();
	c->status = status;
	c->opcode = rnd() % 3 ? IBV_WC_RECV : SROCE_CQE_OP_RECV_NOP;
	c->flags = (uint16_t)(rnd() & (SROCE_CQE_WITH_IMM | SROCE_CQE_GRH | SROCE_CQE_MP_MORE_IN_MSG |
				       SROCE_CQE_MP_CONSUMED | SROCE_CQE_MP_INCOMPLETE));
	c->mp_offset = (uint32_t)rnd();
	c->byte_len = (uint32_t)rnd();
	c->imm_or_inv = (uint32_t)rnd();
	c->qp_num = (uint32_t)rnd() & 0xffffff;
	c->src_qp = (uint32_t)rnd() & 0xffffff;
	c->sl = (uint8_t)(rnd() % 16);
	c->network_hdr_type = (uint8_t)(rnd() % 4);
	c->timestamp = rnd();
	__atomic_store_n(&f->hdr.producer, f->hdr.producer + 1, __ATOMIC_RELEASE);
}

static void get(const uint8_t *rec, uint64_t fmt, uint64_t part, void *out, size_t n)
{
	memcpy(out, rec + srocedv_wc_format_offset(fmt, part), n);
}

/* One formatted completion against ibv_poll_cq's view of the same CQE. */
static void check_formatted(const uint8_t *rec, uint64_t fmt, const struct ibv_wc *wc,
			    const struct sroce_cqe *cqe)
{
	struct srocedv_wc_base base;

	get(rec, fmt, SROCEDV_WC_BASE, &base, sizeof(base));
	CHECK(base.wr_id == wc->wr_id && base.byte_len == wc->byte_len && base.wc_flags == wc->wc_flags);
	if (fmt & SROCEDV_WC_IMM) {
		uint32_t imm;

		get(rec, fmt, SROCEDV_WC_IMM, &imm, sizeof(imm));
		CHECK(imm == wc->imm_data);
	}
	if (fmt & SROCEDV_WC_DEST) {
		uint32_t qpn;

		get(rec, fmt, SROCEDV_WC_DEST, &qpn, sizeof(qpn));
		CHECK(qpn == wc->qp_num);
	}
	if (fmt & SROCEDV_WC_SOURCE) {
		struct srocedv_wc_source s;

		get(rec, fmt, SROCEDV_WC_SOURCE, &s, sizeof(s));
		CHECK(s.src_qp == wc->src_qp && s.slid == 0);
	}
	if (fmt & SROCEDV_WC_PATH) {
		struct srocedv_wc_path p;

		get(rec, fmt, SROCEDV_WC_PATH, &p, sizeof(p));
		CHECK(p.sl == wc->sl && p.dlid_path_bits == 0);
	}
	if (fmt & SROCEDV_WC_TS) {
		uint64_t t;

		get(rec, fmt, SROCEDV_WC_TS, &t, sizeof(t));
		CHECK(t == cqe->timestamp);
	}
	if (fmt & SROCEDV_WC_MP_WR) {
		struct srocedv_wc_mp_wr mp;

		get(rec, fmt, SROCEDV_WC_MP_WR, &mp, sizeof(mp));
		CHECK(mp.offset == cqe->mp_offset && mp.opcode == wc->opcode);
	}
}

/* The size and offsets are those of a C struct of the selected parts. */
static void test_format_layout(void)
{
	struct all {
		struct srocedv_wc_base base;
		struct srocedv_wc_imm imm;
		struct srocedv_wc_dest dest;
		struct srocedv_wc_source source;
		struct srocedv_wc_path path;
		struct srocedv_wc_ts ts;
	};
	struct base_ts {
		struct srocedv_wc_base base;
		struct srocedv_wc_ts ts;
	};
	struct base_imm_path {
		struct srocedv_wc_base base;
		struct srocedv_wc_imm imm;
		struct srocedv_wc_path path;
	};
	struct all_mp { /* all's size is a multiple of 8, mp's alignment */
		struct all seed_parts;
		struct srocedv_wc_mp_wr mp;
	};
	struct base_path_mp {
		struct srocedv_wc_base base;
		struct srocedv_wc_path path;
		struct srocedv_wc_mp_wr mp;
	};
	const uint64_t path_mp = SROCEDV_WC_BASE | SROCEDV_WC_PATH | SROCEDV_WC_MP_WR;

	CHECK(srocedv_wc_format_size(SROCEDV_WC_FORMAT_ALL) == sizeof(struct all));
	CHECK(srocedv_wc_format_offset(SROCEDV_WC_FORMAT_ALL, SROCEDV_WC_TS) == offsetof(struct all, ts));
	CHECK(srocedv_wc_format_offset(SROCEDV_WC_FORMAT_ALL, SROCEDV_WC_PATH) == offsetof(struct all, path));
	CHECK(srocedv_wc_format_offset(SROCEDV_WC_FORMAT_ALL, SROCEDV_WC_SOURCE) == offsetof(struct all, source));
	CHECK(srocedv_wc_format_size(SROCEDV_WC_BASE | SROCEDV_WC_TS) == sizeof(struct base_ts));
	CHECK(srocedv_wc_format_offset(SROCEDV_WC_BASE | SROCEDV_WC_TS, SROCEDV_WC_TS) == offsetof(struct base_ts, ts));
	CHECK(srocedv_wc_format_size(SROCEDV_WC_BASE | SROCEDV_WC_IMM | SROCEDV_WC_PATH) ==
	      sizeof(struct base_imm_path));
	CHECK(srocedv_wc_format_offset(SROCEDV_WC_BASE | SROCEDV_WC_IMM | SROCEDV_WC_PATH, SROCEDV_WC_PATH) ==
	      offsetof(struct base_imm_path, path));
	CHECK(srocedv_wc_format_size(SROCEDV_WC_BASE) == sizeof(struct srocedv_wc_base));
	CHECK(srocedv_wc_format_size(SROCEDV_WC_FORMAT_ALL_MP) == sizeof(struct all_mp));
	CHECK(srocedv_wc_format_offset(SROCEDV_WC_FORMAT_ALL_MP, SROCEDV_WC_MP_WR) == offsetof(struct all_mp, mp));
	CHECK(srocedv_wc_format_size(path_mp) == sizeof(struct base_path_mp));
	CHECK(srocedv_wc_format_offset(path_mp, SROCEDV_WC_MP_WR) == offsetof(struct base_path_mp, mp));
	CHECK(srocedv_wc_format_size(SROCEDV_WC_IMM) == 0 && srocedv_wc_format_size(1u << 7 | 1) == 0);
}

static void test_formatted(void)
{
	static struct fake_cq f, ref;
	uint8_t buf[8 * 64 + 7];

	for (uint64_t fmt = SROCEDV_WC_BASE; fmt <= SROCEDV_WC_FORMAT_ALL_MP; fmt += 2) {
		size_t size = srocedv_wc_format_size(fmt);
		struct srocedv_cq_attr attr = { .format_mask = fmt };
		uint32_t single = fmt & 2 ? SROCEDV_INTF_FLAG_SINGLE_THREADED : 0;
		const struct srocedv_cq_formatted_ops *ops;

		cq_init(&f, IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | SROCEDV_WC_EX_WITH_MP_WR);
		cq_init(&ref, 0);
		CHECK(srocedv_modify_cq(&f.cq.vcq.cq, &attr, SROCEDV_CQ_FORMAT_MASK) == 0);
		ops = query(&f.cq.vcq.cq, SROCEDV_INTF_CQ_FORMATTED, single, 0);
		CHECK(ops != NULL);
		if (!ops)
			return;
		CHECK(ops->poll_formatted(&f.cq.vcq.cq, buf, sizeof(buf)) == 0);
		CHECK(ops->poll_formatted(&f.cq.vcq.cq, buf, size - 1) == -EINVAL);
		/* Many ring lengths, in random batches, at an unaligned buffer. */
		for (int round = 0; round < 200; round++) {
			int n = (int)(rnd() % 9), got;
			struct ibv_wc wc[9];
			struct sroce_cqe cqe[9];

			for (int i = 0; i < n; i++) {
				produce(&f, IBV_WC_SUCCESS);
				ref.entries[ref.hdr.producer & ref.cq.ring.mask] = f.entries[(f.hdr.producer - 1) & f.cq.ring.mask];
				cqe[i] = f.entries[(f.hdr.producer - 1) & f.cq.ring.mask];
				ref.hdr.producer++;
			}
			CHECK(ops->poll_num(&f.cq.vcq.cq) == n);
			got = ops->poll_formatted(&f.cq.vcq.cq, buf + 1, (size_t)(n ? n : 1) * size + size - 1);
			CHECK(got == n && sroce_poll_cq(&ref.cq.vcq.cq, n, wc) == n);
			for (int i = 0; i < n && got == n; i++)
				check_formatted(buf + 1 + (size_t)i * size, fmt, &wc[i], &cqe[i]);
			CHECK(f.hdr.consumer == f.hdr.producer);
		}
		/* Two good, an error, one good: 2, then -EIO until ibv_poll_cq
		 * takes the error, then the last. */
		produce(&f, IBV_WC_SUCCESS);
		produce(&f, IBV_WC_SUCCESS);
		produce(&f, IBV_WC_REM_ACCESS_ERR);
		produce(&f, IBV_WC_SUCCESS);
		CHECK(ops->poll_formatted(&f.cq.vcq.cq, buf, sizeof(buf)) == 2);
		CHECK(ops->poll_formatted(&f.cq.vcq.cq, buf, sizeof(buf)) == -EIO);
		CHECK(ops->poll_num(&f.cq.vcq.cq) == 2);
		{
			struct ibv_wc wc;

			CHECK(sroce_poll_cq(&f.cq.vcq.cq, 1, &wc) == 1 && wc.status == IBV_WC_REM_ACCESS_ERR);
		}
		CHECK(ops->poll_formatted(&f.cq.vcq.cq, buf, sizeof(buf)) == 1);
		CHECK(sroce_spin_trylock(&f.cq.ring.lock) == 0);
		sroce_spin_unlock(&f.cq.ring.lock);
		/* The format cannot change under the table; the same one can be set. */
		attr.format_mask = fmt == SROCEDV_WC_BASE ? SROCEDV_WC_FORMAT_ALL : SROCEDV_WC_BASE;
		CHECK(srocedv_modify_cq(&f.cq.vcq.cq, &attr, SROCEDV_CQ_FORMAT_MASK) == EBUSY);
		attr.format_mask = fmt;
		CHECK(srocedv_modify_cq(&f.cq.vcq.cq, &attr, SROCEDV_CQ_FORMAT_MASK) == 0);
		CHECK(sroce_destroy_cq(&f.cq.vcq.cq) == EBUSY);
		CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)ops) == 0);
		attr.format_mask = SROCEDV_WC_BASE;
		CHECK(srocedv_modify_cq(&f.cq.vcq.cq, &attr, SROCEDV_CQ_FORMAT_MASK) == 0);
	}
}

/* What the query and srocedv_modify_cq refuse. */
static void test_cq_checks(void)
{
	static struct fake_cq cq;
	struct srocedv_cq_attr attr = { 0 };

	/* A format first, BASE in it, TS only with timestamps. */
	cq_init(&cq, 0);
	CHECK(query(&cq.cq.vcq.cq, SROCEDV_INTF_CQ_FORMATTED, 0, 0) == NULL && errno == EINVAL);
	attr.format_mask = SROCEDV_WC_IMM;
	CHECK(srocedv_modify_cq(&cq.cq.vcq.cq, &attr, SROCEDV_CQ_FORMAT_MASK) == EINVAL);
	attr.format_mask = SROCEDV_WC_BASE | (1u << 7);
	CHECK(srocedv_modify_cq(&cq.cq.vcq.cq, &attr, SROCEDV_CQ_FORMAT_MASK) == EINVAL);
	attr.format_mask = SROCEDV_WC_BASE | SROCEDV_WC_MP_WR;
	CHECK(srocedv_modify_cq(&cq.cq.vcq.cq, &attr, SROCEDV_CQ_FORMAT_MASK) == EINVAL);
	attr.format_mask = SROCEDV_WC_BASE | SROCEDV_WC_TS;
	CHECK(srocedv_modify_cq(&cq.cq.vcq.cq, &attr, SROCEDV_CQ_FORMAT_MASK) == EINVAL);
	CHECK(srocedv_modify_cq(&cq.cq.vcq.cq, &attr, 1 << 4) == EOPNOTSUPP);
	CHECK(srocedv_modify_cq(NULL, &attr, SROCEDV_CQ_FORMAT_MASK) == EINVAL);
	attr.format_mask = SROCEDV_WC_BASE;
	CHECK(srocedv_modify_cq(&cq.cq.vcq.cq, &attr, SROCEDV_CQ_FORMAT_MASK) == 0);
	CHECK(query(&cq.cq.vcq.cq, SROCEDV_INTF_CQ_FORMATTED, 0, 1) == NULL && errno == EINVAL);
}

/* 4: destroy racing a query. */
static void test_destroy_race(void)
{
	struct fake_cq *f = malloc(sizeof(*f)); /* destroy frees it */
	struct srocedv_cq_attr attr = { .format_mask = SROCEDV_WC_BASE };
	const struct srocedv_cq_formatted_ops *ops;

	cq_init(f, 0); /* no ring mapped: destroy unmaps nothing */
	CHECK(srocedv_modify_cq(&f->cq.vcq.cq, &attr, SROCEDV_CQ_FORMAT_MASK) == 0);
	destroy_err = EIO;
	CHECK(sroce_destroy_cq(&f->cq.vcq.cq) == EIO);
	CHECK(raced == NULL && raced_errno == EBUSY);
	if (raced)
		srocedv_release_intf(&sctx.vctx.context, (void *)raced);
	/* Refused by the kernel: the CQ lives on, and takes tables again. */
	ops = query(&f->cq.vcq.cq, SROCEDV_INTF_CQ_FORMATTED, 0, 0);
	CHECK(ops && srocedv_release_intf(&sctx.vctx.context, (void *)ops) == 0);
	destroy_err = 0;
	CHECK(sroce_destroy_cq(&f->cq.vcq.cq) == 0);
	/* Freed: no table of it may be live. */
	CHECK(raced == NULL && raced_errno == EBUSY);
}

int main(void)
{
	test_format_layout();
	test_formatted();
	test_cq_checks();
	test_destroy_race();
	printf("provider intf_cq: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}

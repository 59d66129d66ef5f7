// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * intf_cq.c - the formatted CQ of seed 004 (srocedv_cq_formatted_ops):
 * successful completions written straight into the caller's layout.
 *
 * There is one poll_formatted per format (64: BASE is required, six
 * optional parts) and per locking mode, each the worker below inlined with
 * its format, so the offsets and the completion size are constants and no
 * branch asks which parts to write. srocedv_query_intf picks the one of the
 * CQ's format (intf.c); srocedv_modify_cq refuses a new format while a
 * table is held, since the table would no longer match.
 *
 * The CQ ring and its barriers are cq.c's (CQ-P1, CQ-C1).
 */
#include <errno.h>
#include <string.h>

#include "infiniband/srocedv.h"
#include "sroce.h"

#define INTF_INLINE static inline __attribute__((always_inline))

/* Writes one part at its constant offset (buf may be unaligned). */
#define PUT(dst, fmt, part, value)                                                         \
	do {                                                                               \
		__typeof__(value) v_ = (value);                                            \
		memcpy((uint8_t *)(dst) + srocedv_wc_format_offset(fmt, part), &v_, sizeof(v_)); \
	} while (0)

INTF_INLINE void put_wc(uint8_t *dst, const struct sroce_cqe *cqe, const uint64_t fmt)
{
	const struct srocedv_wc_base base = {
		.wr_id = cqe->wr_id,
		.byte_len = cqe->byte_len,
		.wc_flags = sroce_cqe_wc_flags(cqe),
	};

	PUT(dst, fmt, SROCEDV_WC_BASE, base);
	if (fmt & SROCEDV_WC_IMM)
		PUT(dst, fmt, SROCEDV_WC_IMM, cqe->imm_or_inv);
	if (fmt & SROCEDV_WC_DEST)
		PUT(dst, fmt, SROCEDV_WC_DEST, cqe->qp_num);
	if (fmt & SROCEDV_WC_SOURCE) {
		const struct srocedv_wc_source src = { .src_qp = cqe->src_qp };

		PUT(dst, fmt, SROCEDV_WC_SOURCE, src);
	}
	if (fmt & SROCEDV_WC_PATH) {
		const struct srocedv_wc_path path = { .sl = sroce_cqe_sl(cqe) };

		PUT(dst, fmt, SROCEDV_WC_PATH, path);
	}
	if (fmt & SROCEDV_WC_TS)
		PUT(dst, fmt, SROCEDV_WC_TS, cqe->timestamp);
	if (fmt & SROCEDV_WC_MP_WR) {
		const struct srocedv_wc_mp_wr mp = { .offset = cqe->mp_offset, .opcode = cqe->opcode };

		PUT(dst, fmt, SROCEDV_WC_MP_WR, mp);
	}
}

INTF_INLINE int poll_formatted(struct ibv_cq *ibcq, void *buf, size_t len, const uint64_t fmt,
			       const bool locked)
{
	const size_t size = srocedv_wc_format_size(fmt);
	struct sroce_uring *r = &to_scq(ibcq)->ring;
	size_t room = len / size;
	uint32_t n = 0, avail;

	if (!room)
		return -EINVAL;
	if (locked)
		sroce_spin_lock(&r->lock);
	avail = sroce_cq_available(r);
	if (avail) {
		/* In locals: the stores to buf may alias the ring's fields. */
		const uint8_t *entries = r->entries;
		const uint32_t mask = r->mask, stride = r->stride, idx = r->idx;
		const uint32_t limit = avail < room ? avail : (uint32_t)room;

		do {
			const struct sroce_cqe *cqe =
				(const void *)(entries + (size_t)((idx + n) & mask) * stride);

			if (__builtin_expect(cqe->status != IBV_WC_SUCCESS, 0))
				break;
			put_wc((uint8_t *)buf + n * size, cqe, fmt);
		} while (++n < limit);
		if (n) {
			r->idx = idx + n;
			sroce_cq_release(r);
		}
	}
	if (locked)
		sroce_spin_unlock(&r->lock);
	/* An error completion first in line stays for ibv_poll_cq. */
	return n || !avail ? (int)n : -EIO;
}

INTF_INLINE int poll_num(struct ibv_cq *ibcq, const bool locked)
{
	struct sroce_uring *r = &to_scq(ibcq)->ring;
	uint32_t n;

	if (locked)
		sroce_spin_lock(&r->lock);
	n = sroce_cq_available(r);
	if (locked)
		sroce_spin_unlock(&r->lock);
	return (int)n;
}

static int poll_num_locked(struct ibv_cq *cq)
{
	return poll_num(cq, true);
}

static int poll_num_single(struct ibv_cq *cq)
{
	return poll_num(cq, false);
}

/* The tables of format SROCEDV_WC_BASE | (O << 1), O an octal 00..77: the
 * parts beyond BASE. */
#define FORMAT(O)                                                                          \
	static int poll_locked_##O(struct ibv_cq *cq, void *buf, size_t len)               \
	{                                                                                  \
		return poll_formatted(cq, buf, len, SROCEDV_WC_BASE | (O << 1), true);     \
	}                                                                                  \
	static int poll_single_##O(struct ibv_cq *cq, void *buf, size_t len)               \
	{                                                                                  \
		return poll_formatted(cq, buf, len, SROCEDV_WC_BASE | (O << 1), false);    \
	}
#define FORMAT_ROW(R)                                                                      \
	FORMAT(0##R##0) FORMAT(0##R##1) FORMAT(0##R##2) FORMAT(0##R##3)                     \
	FORMAT(0##R##4) FORMAT(0##R##5) FORMAT(0##R##6) FORMAT(0##R##7)
FORMAT_ROW(0)
FORMAT_ROW(1)
FORMAT_ROW(2)
FORMAT_ROW(3)
FORMAT_ROW(4)
FORMAT_ROW(5)
FORMAT_ROW(6)
FORMAT_ROW(7)

#define TABLE(O) [O] = { .poll_formatted = poll_locked_##O, .poll_num = poll_num_locked },
#define TABLE_SINGLE(O) [O] = { .poll_formatted = poll_single_##O, .poll_num = poll_num_single },
#define TABLE_ROW(T, R) T(0##R##0) T(0##R##1) T(0##R##2) T(0##R##3) T(0##R##4) T(0##R##5) T(0##R##6) T(0##R##7)

#define TABLES(T)                                                                          \
	TABLE_ROW(T, 0) TABLE_ROW(T, 1) TABLE_ROW(T, 2) TABLE_ROW(T, 3) TABLE_ROW(T, 4)     \
	TABLE_ROW(T, 5) TABLE_ROW(T, 6) TABLE_ROW(T, 7)

static const struct srocedv_cq_formatted_ops ops_locked[64] = { TABLES(TABLE) };
static const struct srocedv_cq_formatted_ops ops_single[64] = { TABLES(TABLE_SINGLE) };
_Static_assert(SROCEDV_WC_FORMAT_ALL_MP >> 1 == 63, "a table per format");

const struct srocedv_cq_formatted_ops *sroce_intf_cq_ops(uint64_t format_mask, bool single_threaded)
{
	if (!(format_mask & SROCEDV_WC_BASE) || (format_mask & ~SROCEDV_WC_FORMAT_ALL_MP))
		return NULL;
	return &(single_threaded ? ops_single : ops_locked)[format_mask >> 1];
}

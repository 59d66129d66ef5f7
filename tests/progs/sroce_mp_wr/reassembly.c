// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * reassembly.c - `sroce_mp_wr DEV reassembly [PEER]`: RC messages of 1 B to
 * 1 MiB through 64 KiB buffers, rebuilt from the offsets and flags and
 * compared byte for byte, the buffers reposted as they are released.
 *
 * Each round reads the completions another way: the cq_ex readers
 * (srocedv_wc_read_mp_wr_offset), then the formatted CQ of the interface
 * families with the multi-packet part (SROCEDV_WC_MP_WR: offset and
 * opcode), alone with BASE and then beside every part a CQ without
 * timestamps has.
 */
#include <infiniband/srocedv.h>

#include "mp_wr.h"

static const uint64_t round_format[] = {
	0,
	SROCEDV_WC_BASE | SROCEDV_WC_MP_WR,
	SROCEDV_WC_BASE | SROCEDV_WC_IMM | SROCEDV_WC_DEST | SROCEDV_WC_SOURCE | SROCEDV_WC_PATH |
		SROCEDV_WC_MP_WR,
};

/* The receive CQ's formatted table for fmt (the old one released), or
 * NULL for fmt 0 and on failure (with a message). */
static const struct srocedv_cq_formatted_ops *set_format(struct ibv_cq *cq,
							 const struct srocedv_cq_formatted_ops *old, uint64_t fmt)
{
	struct srocedv_cq_attr attr = { .format_mask = fmt ? fmt : SROCEDV_WC_BASE };
	struct srocedv_query_intf_params p = { .intf = SROCEDV_INTF_CQ_FORMATTED,
					       .intf_version = SROCEDV_INTF_VERSION,
					       .obj = cq };
	const struct srocedv_cq_formatted_ops *ops;

	if (old && srocedv_release_intf(cq->context, (void *)old))
		fprintf(stderr, "srocedv_release_intf failed\n");
	if (!fmt)
		return NULL;
	if (srocedv_modify_cq(cq, &attr, SROCEDV_CQ_FORMAT_MASK)) {
		fprintf(stderr, "srocedv_modify_cq(format %#llx) failed\n", (unsigned long long)fmt);
		return NULL;
	}
	ops = srocedv_query_intf(cq->context, &p);
	if (!ops)
		fprintf(stderr, "srocedv_query_intf(CQ_FORMATTED): %s\n", strerror(errno));
	return ops;
}

/* One completion of cq into *c, through ops in format fmt (or the cq_ex
 * readers when ops is NULL): 1, or 0 after 10 s. An error completion stops
 * poll_formatted (-EIO); the cq_ex readers then take it. */
static size_t poll_one(struct ibv_cq_ex *cq, struct mpc *c, const struct srocedv_cq_formatted_ops *ops,
		       uint64_t fmt)
{
	uint8_t rec[64];
	uint64_t deadline = now_ns() + 10000000000ull;
	struct srocedv_wc_base base;
	struct srocedv_wc_mp_wr mp;
	int n = 0;

	if (!ops)
		return poll_mp(cq, c, 1);
	while (n == 0 && now_ns() < deadline)
		n = ops->poll_formatted(ibv_cq_ex_to_cq(cq), rec, srocedv_wc_format_size(fmt));
	if (n == -EIO)
		return poll_mp(cq, c, 1);
	if (n != 1)
		return 0;
	memcpy(&base, rec, sizeof(base));
	memcpy(&mp, rec + srocedv_wc_format_offset(fmt, SROCEDV_WC_MP_WR), sizeof(mp));
	c->wr_id = base.wr_id;
	c->status = IBV_WC_SUCCESS;
	c->opcode = (enum ibv_wc_opcode)mp.opcode;
	c->len = base.byte_len;
	c->flags = base.wc_flags;
	c->offset = mp.offset;
	c->qp_num = 0;
	if (fmt & SROCEDV_WC_DEST)
		memcpy(&c->qp_num, rec + srocedv_wc_format_offset(fmt, SROCEDV_WC_DEST), sizeof(c->qp_num));
	return 1;
}

int reassembly(void)
{
	struct srocedv_mp_wr_attr mp = { 65536, 512 };
	struct ibv_cq_ex *scq, *rcq;
	struct ibv_qp *a, *b;
	bool up;
	static const uint32_t sizes[] = { 1, 777, 4096, 4097, 12000, 65536, 200000, 1u << 20 };
	enum { SRC = 2 << 20, NBUF = MAX_RECV - 1, ROUNDS = 3 };
	static uint8_t got[1 << 20];
	const struct srocedv_cq_formatted_ops *ops = NULL;
	struct mpc c;
	uint32_t have = 0, done = 0, wrong = 0, sent = 0, foreign = 0, nops = 0;

	/* The sender on `here`, the receiver on `peer` (the same device
	 * when the run names no peer). */
	use(&peer);
	rcq = make_cq(true);
	b = rcq ? make_qp(IBV_QPT_RC, rcq, rcq, NULL, &mp) : NULL;
	use(&here);
	scq = make_cq(false);
	a = scq ? make_qp(IBV_QPT_RC, scq, scq, NULL, NULL) : NULL;
	up = a && b && !qp_to_rts_mtu(a, b->qp_num, &peer.gid, here.gid_idx, 1, 14, IBV_MTU_4096) &&
	     !qp_to_rts_mtu(b, a->qp_num, &here.gid, peer.gid_idx, 1, 14, IBV_MTU_4096);
	CHECK(up, "reassembly: an RC pair, 64 KiB buffers (%s)", up ? "ok" : strerror(errno));
	if (!up) {
		pair_close(a, b, scq, rcq);
		return failures;
	}
	for (size_t i = 0; i < SRC; i++)
		mem[i] = (uint8_t)(i * 13 + 5);
	use(&peer);
	for (int i = 0; i < NBUF; i++)
		post_mp(b, NULL, (uint64_t)i + 1, SRC + (size_t)i * 65536, 65536);
	use(&here);
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t fmt = round_format[r];

		ops = set_format(ibv_cq_ex_to_cq(rcq), ops, fmt);
		if (fmt && !ops) {
			wrong++;
			continue;
		}
		for (int k = 0; k < 8; k++, sent++) {
			uint32_t len = sizes[k];
			size_t off = ((size_t)sent * 4099) % (1u << 20);

			send_msg(a, off, len, 0, NULL);
			drain_sends(scq, 1);
			have = 0;
			for (bool end = false; !end;) {
				if (!poll_one(rcq, &c, ops, fmt))
					break;
				if (c.status != IBV_WC_SUCCESS) {
					wrong++;
					break;
				}
				foreign += (fmt & SROCEDV_WC_DEST) && c.qp_num != b->qp_num;
				if (c.opcode != SROCEDV_WC_RECV_NOP) {
					memcpy(got + have, mem + SRC + (c.wr_id - 1) * 65536 + c.offset, c.len);
					have += c.len;
					end = !(c.flags & MORE);
				} else {
					nops++;
				}
				if (c.flags & CONSUMED) { /* free again: post it anew */
					use(&peer);
					post_mp(b, NULL, c.wr_id, SRC + (c.wr_id - 1) * 65536, 65536);
					use(&here);
				}
			}
			done++;
			wrong += have != len || memcmp(got, mem + off, len);
		}
	}
	set_format(ibv_cq_ex_to_cq(rcq), ops, 0);
	CHECK(done == sent && !wrong && !foreign,
	      "%u messages of 1 B to 1 MiB rebuilt from offsets and flags (cq_ex readers, then the formatted "
	      "CQ's MP_WR part), %u wrong, %u with another qp_num, %u RECV_NOPs",
	      done, wrong, foreign, nops);
	pair_close(a, b, scq, rcq);
	return failures;
}

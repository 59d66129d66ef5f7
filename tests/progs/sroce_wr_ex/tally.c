// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tally.c - sroce_wr_ex's count of work requests per builder: which
 * builders are in use, the least any has posted (SROCE_WR_EX_PER_BUILDER)
 * and the report.
 */
#include <stdio.h>

#include "wr_ex.h"

static const char *const names[] = { [IBV_WR_SEND] = "wr_send", [IBV_WR_SEND_WITH_IMM] = "wr_send_imm",
	[IBV_WR_RDMA_WRITE] = "wr_rdma_write", [IBV_WR_RDMA_WRITE_WITH_IMM] = "wr_rdma_write_imm",
	[IBV_WR_RDMA_READ] = "wr_rdma_read", [IBV_WR_ATOMIC_CMP_AND_SWP] = "wr_atomic_cmp_swp",
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = "wr_atomic_fetch_add", [IBV_WR_ATOMIC_WRITE] = "wr_atomic_write",
	[WR_FLUSH] = "srocedv_wr_flush" };
#define N_NAMES (sizeof(names) / sizeof(names[0]))

bool builder_used(unsigned int i, uint64_t ops, bool flush)
{
	if (i >= N_NAMES || !names[i])
		return false;
	return i == IBV_WR_ATOMIC_WRITE ? !!(ops & IBV_QP_EX_WITH_ATOMIC_WRITE)
	       : i == WR_FLUSH	       ? flush
				       : (ops >> i) & 1;
}

unsigned long fewest_per_builder(const struct tally *t, uint64_t ops, bool flush)
{
	unsigned long m = ~0ul;

	for (unsigned int i = 0; i < N_NAMES; i++)
		if (builder_used(i, ops, flush) && t->op[i] < m)
			m = t->op[i];
	/* The gathers are builders too: every QP type here sends, so all four
	 * are in use (wr_set_ud_addr goes with every UD WR). */
	const unsigned long setters[] = { t->sge, t->sge_list, t->inl, t->inl_list };

	for (unsigned int i = 0; i < 4; i++)
		if (setters[i] < m)
			m = setters[i];
	return m;
}

void print_tally(const struct tally *t, uint64_t ops, bool flush)
{
	for (unsigned int i = 0; i < N_NAMES; i++)
		if (builder_used(i, ops, flush))
			printf("  %s: %lu%s\n", names[i], t->op[i], i == WR_FLUSH ? " (whole MR: see below)" : "");
	if (flush)
		printf("  FLUSH of a whole MR: %lu\n", t->flush_mr);
	printf("  wr_set_sge: %lu, wr_set_sge_list: %lu, wr_set_inline_data: %lu, wr_set_inline_data_list: %lu\n",
	       t->sge, t->sge_list, t->inl, t->inl_list);
}

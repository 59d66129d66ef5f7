// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mr.c - memory regions: one uverbs command each way. The kernel pins the
 * pages and answers with lkey == rkey; nothing of the MR lives in the
 * provider beyond the verbs_mr that libibverbs hands back. FLUSH rights
 * travel in the driver data (struct sroce_reg_mr_req), because Linux 6.1's
 * ib_core refuses them among the access flags.
 */
#include <errno.h>
#include <stdlib.h>

#include "sroce.h"

struct ibv_mr *sroce_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
			    int access)
{
	struct verbs_mr *vmr = calloc(1, sizeof(*vmr));
	const int flush = SROCE_ACCESS_FLUSH_GLOBAL | SROCE_ACCESS_FLUSH_PERSISTENT;
	struct ib_uverbs_reg_mr_resp resp;
	struct {
		struct ibv_reg_mr ibv_cmd;
		struct sroce_reg_mr_req drv;
	} cmd = { .drv = { .comp_mask = SROCE_REG_MR_REQ_FLUSH_ACCESS, .flush_access = access & flush } };
	int err;

	if (!vmr)
		return NULL;
	/* Without a FLUSH right the request carries no driver data, as before. */
	err = ibv_cmd_reg_mr(pd, addr, length, hca_va, access & ~flush, vmr, &cmd.ibv_cmd,
			     (access & flush) ? sizeof(cmd) : sizeof(cmd.ibv_cmd), &resp, sizeof(resp));
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

int sroce_dereg_mr(struct verbs_mr *vmr)
{
	int err = ibv_cmd_dereg_mr(vmr);

	if (err)
		return err;
	free(vmr);
	return 0;
}

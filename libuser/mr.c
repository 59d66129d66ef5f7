// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mr.c - memory regions: one uverbs command each way. The kernel pins the
 * pages and answers with lkey == rkey; nothing of the MR lives in the
 * provider beyond the verbs_mr that libibverbs hands back.
 */
#include <errno.h>
#include <stdlib.h>

#include "sroce.h"

struct ibv_mr *sroce_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
			    int access)
{
	struct verbs_mr *vmr = calloc(1, sizeof(*vmr));
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	int err;

	if (!vmr)
		return NULL;
	err = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd, sizeof(cmd), &resp,
			     sizeof(resp));
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

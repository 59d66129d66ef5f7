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

/* Memory windows: the kernel allocates and frees them; binds are WQEs. */
struct ibv_mw *sroce_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw = calloc(1, sizeof(*mw));

	if (!mw)
		return NULL;
	if (ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp, sizeof(resp))) {
		free(mw);
		return NULL;
	}
	return mw;
}

int sroce_dealloc_mw(struct ibv_mw *mw)
{
	int err = ibv_cmd_dealloc_mw(mw);

	if (!err)
		free(mw);
	return err;
}

/*
 * ibv_bind_mw (type 1 windows): a BIND_MW WQE marked as the verb's, with
 * the next key byte, as librxe does. The key is the window's from the post
 * on (the caller learns of a failed bind from its completion). A bind of
 * length 0 unbinds. Type 1 windows are VA-based.
 */
int sroce_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind)
{
	struct ibv_mw_bind_info *info = &bind->bind_info;
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_send_wr *bad, wr = {
		.wr_id = bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = bind->send_flags,
		.bind_mw = { .mw = mw, .rkey = rkey, .bind_info = *info },
	};
	int err;

	if (mw->type != IBV_MW_TYPE_1 || (info->mw_access_flags & IBV_ACCESS_ZERO_BASED) ||
	    (info->length && !info->mr))
		return EINVAL;
	err = sroce_post_bind_type1(qp, &wr, &bad);
	if (!err)
		mw->rkey = rkey;
	return err;
}

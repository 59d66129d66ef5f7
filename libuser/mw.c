// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mw.c - memory windows. The kernel allocates and frees them; binds are
 * BIND_MW WQEs. A window of srocedv_alloc_mw_ex has room for a layout (seed
 * 003): srocedv_bind_mw hands the layout to the kernel's stage method,
 * which checks and compiles it, then posts a bind naming the staged
 * layout's handle (abi/sroce-abi.h, "Non-contiguous memory windows").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "infiniband/srocedv.h"
#include "sroce.h"

struct sroce_mw {
	struct ibv_mw mw;
	uint32_t max_descriptors;
};

static struct ibv_mw *sroce_mw_alloc(struct ibv_pd *pd, enum ibv_mw_type type, uint32_t max_descriptors)
{
	struct sroce_mw *smw = calloc(1, sizeof(*smw));
	struct {
		struct ibv_alloc_mw ibv_cmd;
		struct sroce_alloc_mw_req drv;
	} cmd = { .drv = { .max_descriptors = max_descriptors } };
	struct {
		struct ib_uverbs_alloc_mw_resp ibv_resp;
		struct sroce_alloc_mw_resp drv;
	} resp;
	int err;

	if (!smw)
		return NULL;
	/* Without descriptors the request carries no driver data, as before. */
	err = ibv_cmd_alloc_mw(pd, type, &smw->mw, &cmd.ibv_cmd, max_descriptors ? sizeof(cmd) : sizeof(cmd.ibv_cmd),
			       &resp.ibv_resp, max_descriptors ? sizeof(resp) : sizeof(resp.ibv_resp));
	if (err) {
		free(smw);
		errno = err;
		return NULL;
	}
	smw->max_descriptors = max_descriptors;
	return &smw->mw;
}

struct ibv_mw *sroce_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	return sroce_mw_alloc(pd, type, 0);
}

int sroce_dealloc_mw(struct ibv_mw *mw)
{
	int err = ibv_cmd_dealloc_mw(mw);

	if (!err)
		free(sroce_container_of(mw, struct sroce_mw, mw));
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
	err = sroce_post_bind(qp, &wr, &bad, 0);
	if (!err)
		mw->rkey = rkey;
	return err;
}

struct ibv_mw *srocedv_alloc_mw_ex(struct ibv_pd *pd, const struct srocedv_mw_alloc_attr *attr)
{
	if (!pd || !attr || attr->comp_mask || attr->max_descriptors > SROCE_MW_LAYOUT_MAX_DESCRIPTORS ||
	    (attr->type != IBV_MW_TYPE_1 && attr->type != IBV_MW_TYPE_2)) {
		errno = EINVAL;
		return NULL;
	}
	if (!sroce_is_sroce_context(pd->context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return sroce_mw_alloc(pd, attr->type, attr->max_descriptors);
}

int srocedv_query_mw(struct ibv_mw *mw, struct srocedv_mw_attr *attr)
{
	if (!mw || !attr)
		return EINVAL;
	if (!sroce_is_sroce_context(mw->context))
		return EOPNOTSUPP;
	attr->comp_mask = 0;
	attr->max_descriptors = sroce_container_of(mw, struct sroce_mw, mw)->max_descriptors;
	attr->lkey = mw->rkey;
	return 0;
}

/* The layout in the ABI's form: keys instead of objects, the dimensions of
 * every entry in one list. */
struct sroce_layout_msg {
	struct sroce_mw_layout_req req;
	struct sroce_mw_layout_entry entries[SROCE_MW_LAYOUT_MAX_ENTRIES];
	struct sroce_mw_layout_dim dims[SROCE_MW_LAYOUT_MAX_ENTRIES * SROCE_MW_LAYOUT_MAX_DIMS];
	uint32_t num_dims;
};

static int sroce_layout_encode(const struct srocedv_mw_layout *l, int access, struct sroce_layout_msg *m)
{
	if (l->comp_mask || l->type > SROCEDV_MW_LAYOUT_TYPE_INTERLEAVED || !l->entry_count || !l->entries)
		return EINVAL;
	if (l->entry_count > SROCE_MW_LAYOUT_MAX_ENTRIES)
		return E2BIG;
	m->req = (struct sroce_mw_layout_req){ .type = l->type, .num_entries = l->entry_count,
					       .access = (uint32_t)access };
	m->num_dims = 0;
	for (uint32_t i = 0; i < l->entry_count; i++) {
		const struct srocedv_mw_layout_entry *e = &l->entries[i];
		struct sroce_mw_layout_entry *o = &m->entries[i];
		bool mr = e->mem_obj_type == SROCEDV_MW_ENTRY_USE_MR;

		if (e->comp_mask || e->mem_obj_type > SROCEDV_MW_ENTRY_USE_MW || !(mr ? (void *)e->mr : (void *)e->mw) ||
		    e->interleaved.repeat_count > UINT32_MAX ||
		    (e->interleaved.dimension_count && !e->interleaved.dimension))
			return EINVAL;
		if (e->interleaved.dimension_count > SROCE_MW_LAYOUT_MAX_DIMS)
			return E2BIG;
		*o = (struct sroce_mw_layout_entry){
			.addr = e->addr,
			.length = e->length,
			.kind = mr ? SROCE_MW_ENTRY_MR : SROCE_MW_ENTRY_MW,
			.key = mr ? e->mr->lkey : e->mw->rkey,
			.repeat = (uint32_t)e->interleaved.repeat_count,
			.num_dims = e->interleaved.dimension_count,
		};
		for (uint32_t d = 0; d < e->interleaved.dimension_count; d++)
			m->dims[m->num_dims++] = (struct sroce_mw_layout_dim){ e->interleaved.dimension[d].stride,
									       e->interleaved.dimension[d].count };
	}
	return 0;
}

/* The stage method on the window (abi/sroce-abi.h), as a plain ioctl. */
static int sroce_layout_stage(struct ibv_mw *mw, const struct sroce_layout_msg *m, struct sroce_mw_layout_resp *resp)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attrs[5];
	} cmd = {
		.hdr = { .object_id = UVERBS_OBJECT_MW, .method_id = SROCE_METHOD_MW_STAGE_LAYOUT },
		.attrs = {
			{ .attr_id = SROCE_ATTR_MW_LAYOUT_MW, .flags = UVERBS_ATTR_F_MANDATORY, .data = mw->handle },
			{ .attr_id = SROCE_ATTR_MW_LAYOUT_REQ, .len = sizeof(m->req), .flags = UVERBS_ATTR_F_MANDATORY,
			  .data = (uintptr_t)&m->req },
			{ .attr_id = SROCE_ATTR_MW_LAYOUT_ENTRIES,
			  .len = (uint16_t)(m->req.num_entries * sizeof(m->entries[0])),
			  .flags = UVERBS_ATTR_F_MANDATORY, .data = (uintptr_t)m->entries },
			{ .attr_id = SROCE_ATTR_MW_LAYOUT_RESP, .len = sizeof(*resp), .flags = UVERBS_ATTR_F_MANDATORY,
			  .data = (uintptr_t)resp },
			{ .attr_id = SROCE_ATTR_MW_LAYOUT_DIMS, .len = (uint16_t)(m->num_dims * sizeof(m->dims[0])),
			  .data = (uintptr_t)m->dims },
		},
	};
	unsigned int n = m->num_dims ? 5 : 4;

	cmd.hdr.num_attrs = (uint16_t)n;
	cmd.hdr.length = (uint16_t)(sizeof(cmd.hdr) + n * sizeof(cmd.attrs[0]));
	return sroce_method_ioctl(mw->context, &cmd);
}

int srocedv_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct srocedv_mw_bind *bind)
{
	const struct srocedv_mw_bind_info *info;
	struct sroce_mw_layout_resp resp = { 0 };
	struct sroce_layout_msg msg;
	struct ibv_send_wr *bad, wr;
	uint32_t rkey;
	int access, err;

	if (!qp || !mw || !bind || qp->context != mw->context)
		return EINVAL;
	if (!sroce_is_sroce_context(mw->context))
		return EOPNOTSUPP;
	info = &bind->bind_info;
	access = info->mw_access_flags & ~SROCEDV_ACCESS_BIND_MW_NONCONTIG;
	rkey = mw->type == IBV_MW_TYPE_1 ? ibv_inc_rkey(mw->rkey) : bind->rkey;
	wr = (struct ibv_send_wr){
		.wr_id = bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = bind->send_flags,
		.bind_mw = { .mw = mw, .rkey = rkey, .bind_info = { .mw_access_flags = access } },
	};
	if (info->mw_access_flags & SROCEDV_ACCESS_BIND_MW_NONCONTIG) {
		if (!info->layout)
			return EINVAL;
		err = sroce_layout_encode(info->layout, access, &msg);
		if (!err)
			err = sroce_layout_stage(mw, &msg, &resp);
		if (err)
			return err;
		wr.bind_mw.bind_info.length = resp.length;
	} else {
		if ((mw->type == IBV_MW_TYPE_1 && (access & IBV_ACCESS_ZERO_BASED)) || (info->length && !info->mr))
			return EINVAL;
		wr.bind_mw.bind_info.mr = info->mr;
		wr.bind_mw.bind_info.addr = info->addr;
		wr.bind_mw.bind_info.length = info->length;
	}
	err = sroce_post_bind(qp, &wr, &bad, resp.handle);
	if (!err)
		mw->rkey = rkey;
	return err;
}

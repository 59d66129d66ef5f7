// SPDX-License-Identifier: GPL-2.0
/*
 * mw.c - memory windows (kmod/core/mw.h): ib_core allocates struct sroce_mw
 * and checked the type (1 or 2); binds are work requests the core executes.
 * alloc_mw's driver data asks for room for a layout (seed 003,
 * srocedv_alloc_mw_ex), and the driver method SROCE_METHOD_MW_STAGE_LAYOUT
 * hands the core a layout to compile for the window's next bind
 * (abi/sroce-abi.h, "Non-contiguous memory windows").
 */
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#define UVERBS_MODULE_NAME sroce_ib
#include <rdma/uverbs_ioctl.h>
#include <rdma/uverbs_named_ioctl.h>

#include "sroce.h"

int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct sroce_mw *mw = container_of(ibmw, struct sroce_mw, ibmw);
	struct sroce_alloc_mw_req req = {};
	struct sroce_alloc_mw_resp resp = {};
	int err;

	/* Old providers send no driver data: a window without layouts. */
	if (udata && udata->inlen) {
		err = ib_copy_from_udata(&req, udata, min(udata->inlen, sizeof(req)));
		if (err)
			return err;
		if (req.reserved || (udata->inlen > sizeof(req) &&
				     !ib_is_udata_cleared(udata, sizeof(req), udata->inlen - sizeof(req))))
			return -EINVAL;
	}
	err = sroce_core_mw_create(to_spd(ibmw->pd)->core, ibmw->type, udata != NULL, req.max_descriptors, &mw->core);
	if (err)
		return err;
	ibmw->rkey = sroce_core_mw_rkey(mw->core);
	resp.max_descriptors = req.max_descriptors;
	if (udata && udata->outlen) {
		err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
		if (err) {
			sroce_core_mw_destroy(mw->core);
			return err;
		}
	}
	return 0;
}

/* -EBUSY while a bound layout includes the window: uverbs then keeps the
 * object, and at process exit retries after the other windows are gone. */
int sroce_dealloc_mw(struct ib_mw *ibmw)
{
	return sroce_core_mw_destroy(container_of(ibmw, struct sroce_mw, ibmw)->core);
}

static int UVERBS_HANDLER(SROCE_METHOD_MW_STAGE_LAYOUT)(struct uverbs_attr_bundle *attrs)
{
	struct ib_mw *ibmw = uverbs_attr_get_obj(attrs, SROCE_ATTR_MW_LAYOUT_MW);
	struct sroce_mw *mw = container_of(ibmw, struct sroce_mw, ibmw);
	struct sroce_mw_layout_entry *entries = NULL;
	struct sroce_mw_layout_dim *dims = NULL;
	struct sroce_mw_layout_resp resp = {};
	struct sroce_mw_layout_req req;
	int n_entries, n_dims = 0;
	int err;

	err = uverbs_copy_from(&req, attrs, SROCE_ATTR_MW_LAYOUT_REQ);
	if (err)
		return err;
	n_entries = uverbs_attr_ptr_get_array_size(attrs, SROCE_ATTR_MW_LAYOUT_ENTRIES, sizeof(*entries));
	if (n_entries < 0)
		return n_entries;
	if (n_entries != req.num_entries)
		return -EINVAL;
	if (n_entries > SROCE_MW_LAYOUT_MAX_ENTRIES)
		return -E2BIG;
	if (uverbs_attr_is_valid(attrs, SROCE_ATTR_MW_LAYOUT_DIMS)) {
		n_dims = uverbs_attr_ptr_get_array_size(attrs, SROCE_ATTR_MW_LAYOUT_DIMS, sizeof(*dims));
		if (n_dims < 0)
			return n_dims;
		if (n_dims > SROCE_MW_LAYOUT_MAX_ENTRIES * SROCE_MW_LAYOUT_MAX_DIMS)
			return -E2BIG;
	}
	/* Both lists are small (the limits above): copied whole, so the core
	 * reads memory user space can no longer change. */
	entries = kcalloc(max(n_entries, 1), sizeof(*entries), GFP_KERNEL);
	dims = kcalloc(max(n_dims, 1), sizeof(*dims), GFP_KERNEL);
	err = -ENOMEM;
	if (!entries || !dims)
		goto out;
	/* uverbs_copy_from would copy one element: the whole arrays. */
	err = _uverbs_copy_from(entries, attrs, SROCE_ATTR_MW_LAYOUT_ENTRIES, n_entries * sizeof(*entries));
	if (!err && n_dims)
		err = _uverbs_copy_from(dims, attrs, SROCE_ATTR_MW_LAYOUT_DIMS, n_dims * sizeof(*dims));
	if (!err)
		err = sroce_core_mw_stage_layout(mw->core, &req, entries, dims, n_dims, &resp);
	if (!err)
		err = uverbs_copy_to(attrs, SROCE_ATTR_MW_LAYOUT_RESP, &resp, sizeof(resp));
out:
	kfree(entries);
	kfree(dims);
	return err;
}

DECLARE_UVERBS_NAMED_METHOD(
	SROCE_METHOD_MW_STAGE_LAYOUT,
	UVERBS_ATTR_IDR(SROCE_ATTR_MW_LAYOUT_MW, UVERBS_OBJECT_MW, UVERBS_ACCESS_WRITE, UA_MANDATORY),
	UVERBS_ATTR_PTR_IN(SROCE_ATTR_MW_LAYOUT_REQ, UVERBS_ATTR_STRUCT(struct sroce_mw_layout_req, reserved),
			   UA_MANDATORY),
	UVERBS_ATTR_PTR_IN(SROCE_ATTR_MW_LAYOUT_ENTRIES, UVERBS_ATTR_MIN_SIZE(sizeof(struct sroce_mw_layout_entry)),
			   UA_MANDATORY),
	UVERBS_ATTR_PTR_IN(SROCE_ATTR_MW_LAYOUT_DIMS, UVERBS_ATTR_MIN_SIZE(sizeof(struct sroce_mw_layout_dim)),
			   UA_OPTIONAL),
	UVERBS_ATTR_PTR_OUT(SROCE_ATTR_MW_LAYOUT_RESP, UVERBS_ATTR_STRUCT(struct sroce_mw_layout_resp, descriptors),
			    UA_MANDATORY));

DECLARE_UVERBS_GLOBAL_METHODS(UVERBS_OBJECT_MW, &UVERBS_METHOD(SROCE_METHOD_MW_STAGE_LAYOUT));

const struct uapi_definition sroce_mw_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE_NAMED(UVERBS_OBJECT_MW),
	{},
};

// SPDX-License-Identifier: GPL-2.0
/*
 * ah.c - address handles for UD and GSI sends. The glue resolves the route
 * (path.c); the core keeps it under a handle that UD WQEs name, so user
 * space never hands the kernel an address to trust.
 */
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"

/* RoCEv2 addresses are GIDs: an address without a GRH means nothing here. */
int sroce_check_roce_ah_attr(const struct rdma_ah_attr *ah_attr)
{
	if (ah_attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(ah_attr) & IB_AH_GRH))
		return -EINVAL;
	if (rdma_ah_get_port_num(ah_attr) != 1)
		return -EINVAL;
	return 0;
}

/*
 * May run in atomic context (RDMA_CREATE_AH_SLEEPABLE clear: ib_cm creates
 * AHs under a spinlock), so nothing here sleeps.
 */
static int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
			   struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	struct sroce_ah *ah = to_sah(ibah);
	struct sroce_create_ah_resp resp = {};
	struct sroce_core_path_info info = {};
	struct sroce_env_path *path;
	int err;

	err = sroce_check_roce_ah_attr(init->ah_attr);
	if (err)
		return err;
	/* The handle is the only way a UD WQE can name the AH. */
	err = sroce_check_udata(udata, sizeof(resp));
	if (err)
		return err;
	path = sroce_path_create(sdev, init->ah_attr, &info, init->flags & RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(path))
		return PTR_ERR(path);
	/* The core takes over the path reference, also on failure. */
	err = sroce_core_ah_create(to_spd(ibah->pd)->core, path, &info, &ah->core);
	if (err)
		return err;
	if (udata) {
		resp.ah_handle = sroce_core_ah_handle(ah->core);
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err) {
			sroce_core_ah_destroy(ah->core);
			return err;
		}
	}
	return 0;
}

static int sroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	/* Not an event owner: no RCU wait, and none is allowed when
	 * RDMA_DESTROY_AH_SLEEPABLE is clear. WQEs still naming the handle
	 * fail their lookup in the core. */
	sroce_core_ah_destroy(to_sah(ibah)->core);
	return 0;
}

const struct ib_device_ops sroce_ah_ops = {
	.create_ah = sroce_create_ah,
	/* 6.1 sends user AHs (ibv_create_ah) to a separate op. */
	.create_user_ah = sroce_create_ah,
	.destroy_ah = sroce_destroy_ah,

	INIT_RDMA_OBJ_SIZE(ib_ah, sroce_ah, ibah),
};

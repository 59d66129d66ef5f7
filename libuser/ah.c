// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ah.c - address handles. The kernel resolves the route and returns a
 * handle that UD WQEs name; the provider keeps nothing else (no MAC
 * resolution here).
 */
#include <errno.h>
#include <stdlib.h>

#include "sroce.h"

struct ibv_ah *sroce_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct {
		struct ib_uverbs_create_ah_resp ibv;
		struct sroce_create_ah_resp drv;
	} resp = {};
	struct sroce_ah *ah;
	int err;

	/* RoCE addresses are GIDs. */
	if (!attr->is_global) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	err = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv, sizeof(resp));
	if (err) {
		free(ah);
		errno = err;
		return NULL;
	}
	ah->handle = resp.drv.ah_handle;
	return &ah->ibv_ah;
}

int sroce_destroy_ah(struct ibv_ah *ibah)
{
	int err = ibv_cmd_destroy_ah(ibah);

	if (err)
		return err;
	free(to_sah(ibah));
	return 0;
}

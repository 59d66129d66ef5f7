// SPDX-License-Identifier: GPL-2.0
/*
 * unsupported.c - verbs that ib_core requires every device to have but that
 * sroce does not implement yet (memory regions arrive with their own
 * milestone). Each fails with EOPNOTSUPP, which kernel users and uverbs pass
 * on as "operation not supported": nothing is half-done.
 */
#include "sroce.h"

static struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length, u64 virt,
				       int access, struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	return 0; /* never created */
}

const struct ib_device_ops sroce_unsupported_ops = {
	.dereg_mr = sroce_dereg_mr,
	.get_dma_mr = sroce_get_dma_mr,
	.reg_user_mr = sroce_reg_user_mr,
};

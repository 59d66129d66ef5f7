// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* For the provider's host tests, in place of sroce.c (which registers the
 * driver with libibverbs): the tests' contexts have no device, and only
 * they count as sroce's. */
#include "sroce.h"

int sroce_is_sroce_context(struct ibv_context *ibctx)
{
	return ibctx->device == NULL;
}

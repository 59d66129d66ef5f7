// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* For the provider's host tests, in place of sroce.c (which registers the
 * driver with libibverbs): the tests' contexts have no device, and only
 * they count as sroce's. */
#include <errno.h>

#include "sroce.h"

int sroce_is_sroce_context(struct ibv_context *ibctx)
{
	return ibctx->device == NULL;
}

/* No device of the tests' is sroce's: srocedv_open_device refuses them. */
int sroce_is_sroce_device(struct ibv_device *ibdev)
{
	return 0;
}

/* Driver methods reach no kernel here: a test that calls one sets this
 * hook to see the command and answer it. */
int (*fake_method_ioctl)(struct ibv_context *ctx, void *cmd);

int sroce_method_ioctl(struct ibv_context *ctx, void *cmd)
{
	return fake_method_ioctl ? fake_method_ioctl(ctx, cmd) : EOPNOTSUPP;
}

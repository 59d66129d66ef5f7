// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce.c - provider registration, device matching and context life cycle.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/rdma_user_ioctl_cmds.h>

#include "infiniband/srocedv.h"
#include "sroce.h"

static const struct verbs_device_ops sroce_dev_ops;

/*
 * The kernel reports RDMA_DRIVER_UNKNOWN for sroce, and users pick device
 * names freely, so neither the driver id nor a name prefix identifies a
 * sroce device. The module's own sysfs attribute does.
 */
static bool sroce_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char path[IBV_SYSFS_PATH_MAX + 32];

	if (sysfs_dev->driver_id != RDMA_DRIVER_UNKNOWN)
		return false;
	if (snprintf(path, sizeof(path), "%s/sroce_abi_version", sysfs_dev->ibdev_path) >=
	    (int)sizeof(path))
		return false;
	return access(path, R_OK) == 0;
}

static struct verbs_device *sroce_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct sroce_device *dev = calloc(1, sizeof(*dev));

	return dev ? &dev->vdev : NULL;
}

static void sroce_uninit_device(struct verbs_device *vdev)
{
	free(sroce_container_of(vdev, struct sroce_device, vdev));
}

void sroce_free_context(struct ibv_context *ibctx)
{
	struct sroce_context *ctx = to_sctx(ibctx);

	if (ctx->ctx_page)
		munmap((void *)ctx->ctx_page, ctx->ctx_page_size);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

/* Maps and checks the context page: a kernel that answered with another
 * layout must not be trusted further. */
static int sroce_map_ctx_page(struct sroce_context *ctx, int cmd_fd,
			      const struct sroce_alloc_ucontext_resp *resp)
{
	const struct sroce_context_page *page;

	if (resp->ctx_page_size < sizeof(struct sroce_context_page))
		return EPROTO;
	page = mmap(NULL, resp->ctx_page_size, PROT_READ, MAP_SHARED, cmd_fd,
		    resp->ctx_page_offset);
	if (page == MAP_FAILED)
		return errno;
	ctx->ctx_page = page;
	ctx->ctx_page_size = resp->ctx_page_size;
	if (page->magic != SROCE_CTX_PAGE_MAGIC || page->abi_version != SROCE_PROVIDER_ABI_VERSION)
		return EPROTO;
	return 0;
}

/* Doorbell-only mode: SROCE_NO_SQ_POLL set to anything but "" or "0", or
 * srocedv_open_device with SROCEDV_CONTEXT_FLAG_NO_SQ_POLL (private_data,
 * checked there). */
static uint32_t sroce_ucontext_req_flags(const void *private_data)
{
	const struct srocedv_context_attr *attr = private_data;
	const char *env = getenv("SROCE_NO_SQ_POLL");

	if (env && env[0] && strcmp(env, "0"))
		return SROCE_UCTX_REQ_NO_SQ_POLL;
	if (attr && (attr->flags & SROCEDV_CONTEXT_FLAG_NO_SQ_POLL))
		return SROCE_UCTX_REQ_NO_SQ_POLL;
	return 0;
}

static struct verbs_context *sroce_alloc_context(struct ibv_device *ibdev, int cmd_fd,
						 void *private_data)
{
	struct {
		struct ibv_get_context ibv;
		struct sroce_alloc_ucontext_req drv;
	} cmd = {
		.drv.abi_version = SROCE_PROVIDER_ABI_VERSION,
	};
	struct {
		struct ib_uverbs_get_context_resp ibv;
		struct sroce_alloc_ucontext_resp drv;
	} resp = {};
	struct sroce_context *ctx;
	const char *env;
	int err;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, vctx, RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;
	cmd.drv.flags = sroce_ucontext_req_flags(private_data);

	err = ibv_cmd_get_context(&ctx->vctx, &cmd.ibv, sizeof(cmd), &resp.ibv, sizeof(resp));
	if (err) {
		if (err == EPROTO)
			fprintf(stderr,
				"sroce: %s: the kernel module speaks another sroce ABI than this provider (%u); install matching versions\n",
				ibv_get_device_name(ibdev), SROCE_PROVIDER_ABI_VERSION);
		goto fail;
	}
	if (resp.drv.abi_version != SROCE_PROVIDER_ABI_VERSION) {
		err = EPROTO;
		goto fail;
	}
	ctx->caps = resp.drv.caps;
	/* SROCE_RING_EVERY_POST (anything but "" or "0"): every post in
	 * doorbell mode rings, ACK-clocked skipping off (comparisons, tests). */
	env = getenv("SROCE_RING_EVERY_POST");
	ctx->ring_every_post = env && env[0] && strcmp(env, "0");
	err = sroce_map_ctx_page(ctx, cmd_fd, &resp.drv);
	if (err)
		goto fail;

	verbs_set_ops(&ctx->vctx, &sroce_ctx_ops);
	return &ctx->vctx;

fail:
	if (ctx->ctx_page)
		munmap((void *)ctx->ctx_page, ctx->ctx_page_size);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	errno = err;
	return NULL;
}

int sroce_is_sroce_context(struct ibv_context *ibctx)
{
	return sroce_is_sroce_device(ibctx->device);
}

int sroce_is_sroce_device(struct ibv_device *ibdev)
{
	return verbs_get_device(ibdev)->ops == &sroce_dev_ops;
}

int sroce_method_ioctl(struct ibv_context *ctx, void *cmd)
{
	if (ioctl(ctx->cmd_fd, RDMA_VERBS_IOCTL, cmd))
		/* uverbs: EPROTONOSUPPORT for a method this kernel lacks. */
		return errno == EPROTONOSUPPORT ? EOPNOTSUPP : errno;
	return 0;
}


/* Empty but present: libibverbs walks match_table without a NULL check
 * whenever a device reports a driver id (e.g. rxe), and match_device then
 * decides. */
static const struct verbs_match_ent sroce_match_table[] = {
	{},
};

static const struct verbs_device_ops sroce_dev_ops = {
	.name = "sroce",
	.match_table = sroce_match_table,
	.match_min_abi_version = SROCE_UVERBS_ABI_VERSION,
	.match_max_abi_version = SROCE_UVERBS_ABI_VERSION,
	.match_device = sroce_match_device,
	.alloc_device = sroce_alloc_device,
	.uninit_device = sroce_uninit_device,
	.alloc_context = sroce_alloc_context,
};

VERBS_PABI34_PROVIDER_DRIVER(sroce, sroce_dev_ops);

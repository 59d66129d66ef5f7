// SPDX-License-Identifier: GPL-2.0
/*
 * ring.c - memory of the shared rings (CQ, SQ, RQ, SRQ) and their user
 * mappings. The core decides sizes (sroce_core_ring_size) and works in the
 * memory; the glue owns allocation and lifetime.
 */
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"

/* Zeroed, page-rounded memory for `entries` entries of `stride` bytes. It is
 * vmalloc_user() memory for kernel rings too, so that every ring can be
 * mapped the same way. */
int sroce_ring_alloc(struct sroce_ring *ring, unsigned int entries, unsigned int max_entries,
		     unsigned int stride)
{
	int err;

	memset(ring, 0, sizeof(*ring));
	err = sroce_core_ring_size(entries, max_entries, stride, &ring->log_size, &ring->bytes);
	if (err)
		return err;
	/* The ABI carries the size as __u32. */
	if (ring->bytes > U32_MAX)
		return -EINVAL;
	ring->vaddr = vmalloc_user(ring->bytes);
	if (!ring->vaddr)
		return -ENOMEM;
	ring->stride = stride;
	return 0;
}

/* Makes a user object's ring mappable; from here the mmap entry owns the
 * memory. info is filled for the response. */
int sroce_ring_map(struct sroce_ring *ring, struct ib_udata *udata, struct sroce_ring_info *info)
{
	struct sroce_ucontext *uc =
		rdma_udata_to_drv_context(udata, struct sroce_ucontext, ibuc);
	struct rdma_user_mmap_entry *entry;
	u64 offset;

	entry = sroce_mmap_insert(uc, ring->vaddr, ring->bytes, true, &offset);
	if (IS_ERR(entry))
		return PTR_ERR(entry);
	ring->entry = entry;
	memset(info, 0, sizeof(*info));
	info->offset = offset;
	info->bytes = ring->bytes;
	info->log_size = ring->log_size;
	info->stride = ring->stride;
	return 0;
}

/* Called after the core object that used the ring is destroyed. A mapped
 * ring lives on until the process unmaps it. */
void sroce_ring_free(struct sroce_ring *ring)
{
	if (ring->entry)
		rdma_user_mmap_entry_remove(ring->entry);
	else
		vfree(ring->vaddr);
	ring->entry = NULL;
	ring->vaddr = NULL;
}

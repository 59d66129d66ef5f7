// SPDX-License-Identifier: GPL-2.0
/*
 * ring.c - memory of the shared rings (CQ, SQ, RQ, SRQ) and their user
 * mappings. The core decides sizes (sroce_core_ring_size) and works in the
 * memory; the glue owns allocation and lifetime.
 */
#include <linux/mm.h>
#include <linux/version.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"

/*
 * Zeroed, page-aligned vmalloc memory that a user process makes the kernel
 * hold (its rings, its context page), charged to that process's memory
 * cgroup: without __GFP_ACCOUNT a process could make the kernel hold far
 * more than its own limit. vmalloc_user() cannot take the flag, so these
 * are mapped page by page (sroce_remap_vmalloc), not through VM_USERMAP.
 * Called in the process's own verb.
 */
void *sroce_vmalloc_user_account(unsigned long bytes)
{
	/* Past the memcg's limit: ENOMEM for the verb, not its OOM killer. */
	return __vmalloc(PAGE_ALIGN(bytes),
			 GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
}

/* Maps the whole of vma to the vmalloc memory at vaddr (as
 * remap_vmalloc_range does, without its VM_USERMAP check). The caller has
 * checked that vma is no larger than the memory. */
int sroce_remap_vmalloc(struct vm_area_struct *vma, void *vaddr)
{
	unsigned long uaddr;
	int err;

	for (uaddr = vma->vm_start; uaddr < vma->vm_end; uaddr += PAGE_SIZE, vaddr += PAGE_SIZE) {
		err = vm_insert_page(vma, uaddr, vmalloc_to_page(vaddr));
		if (err)
			return err;
	}
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
#else
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
#endif
	return 0;
}

/* Zeroed, page-rounded memory for `entries` entries of `stride` bytes.
 * Kernel rings are vmalloc memory too, so that every ring can be mapped the
 * same way; a user object's ring is charged to its process. */
int sroce_ring_alloc(struct sroce_ring *ring, unsigned int entries, unsigned int max_entries,
		     unsigned int stride, bool user)
{
	int err;

	memset(ring, 0, sizeof(*ring));
	err = sroce_core_ring_size(entries, max_entries, stride, &ring->log_size, &ring->bytes);
	if (err)
		return err;
	/* The ABI carries the size as __u32. */
	if (ring->bytes > U32_MAX)
		return -EINVAL;
	ring->vaddr = user ? sroce_vmalloc_user_account(ring->bytes) : vmalloc_user(ring->bytes);
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

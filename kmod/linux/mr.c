// SPDX-License-Identifier: GPL-2.0
/*
 * mr.c - memory regions. User MRs are pinned with ib_umem and handed to the
 * core page by page (kernel virtual addresses); the DMA MR is what
 * ib_alloc_pd asks for to give kernel consumers their local_dma_lkey. The
 * device is registered without a dma_device, so kernel consumers use
 * virtual DMA (ib_uses_virt_dma): their "DMA addresses" are kernel virtual
 * addresses, which is what a DMA MR addresses.
 */
#include <linux/capability.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/version.h>
#include <linux/workqueue.h>
#include <net/sock.h>
#include <rdma/ib_umem.h>

#include "sroce.h"

/* What an MR can be registered with; the IB_ACCESS_OPTIONAL bits (relaxed
 * ordering) are hints a device may ignore. FLUSH to global visibility (abi),
 * not to persistence. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
static_assert(SROCE_ACCESS_FLUSH_GLOBAL == IB_ACCESS_FLUSH_GLOBAL);
static_assert(SROCE_ACCESS_FLUSH_PERSISTENT == IB_ACCESS_FLUSH_PERSISTENT);
#endif
#define SROCE_MR_ACCESS                                                                   \
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |         \
	 IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_MW_BIND | SROCE_ACCESS_FLUSH_GLOBAL)
#define SROCE_ACCESS_FLUSH (SROCE_ACCESS_FLUSH_GLOBAL | SROCE_ACCESS_FLUSH_PERSISTENT)

struct sroce_mr {
	struct ib_mr ibmr;
	struct sroce_core_mr *core;
	unsigned int nstaged;        /* fast registration: pages staged by map_mr_sg */
};

/*
 * Pinned user memory. Once the core MR exists it owns this and calls
 * sroce_umem_release when its last reference is gone: inside dereg_mr
 * normally, or later from the transport (possibly in softirq) if a packet
 * in flight still used the MR, so pages are never unpinned under it.
 */
struct sroce_umem {
	struct ib_umem *umem;        /* NULL until pinned */
	struct ib_device *ibdev;     /* memory reference: umem release reads it */
	struct work_struct work;
};

static struct workqueue_struct *sroce_mr_wq;

static struct sroce_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct sroce_mr, ibmr);
}

static struct sroce_core_pd *core_pd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibpd)->core;
}

static void sroce_umem_free(struct sroce_umem *u)
{
	ib_umem_release(u->umem); /* NULL-safe */
	put_device(&u->ibdev->dev);
	kfree(u);
}

static void sroce_umem_work(struct work_struct *work)
{
	sroce_umem_free(container_of(work, struct sroce_umem, work));
}

static void sroce_umem_release(void *owner, int may_sleep)
{
	struct sroce_umem *u = owner;

	if (may_sleep) {
		sroce_umem_free(u);
		return;
	}
	/* Unpinning may sleep (page locks for dirtying). */
	INIT_WORK(&u->work, sroce_umem_work);
	queue_work(sroce_mr_wq, &u->work);
}

static struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length, u64 iova,
				       int access, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_reg_mr_req req;
	struct sroce_core_mr_init init = {
		.pd = core_pd(ibpd),
		.iova = iova,
		.length = length,
		.page_shift = PAGE_SHIFT,
		.user = 1,
		.zero_copy = 1, /* pinned pages in the linear map (page_address) */
		.release = sroce_umem_release,
	};
	struct sg_page_iter it;
	struct sroce_umem *u;
	struct sroce_mr *mr;
	unsigned long i = 0;
	u64 span;
	int err;

	/* The FLUSH rights of the driver data (abi: 6.1's ib_core refuses
	 * them among the access flags). */
	err = sroce_create_udata(udata, &req, sizeof(req), SROCE_REG_MR_REQ_MASK, 0);
	if (err)
		return ERR_PTR(err);
	if (req.reserved || (req.flush_access & ~SROCE_ACCESS_FLUSH) ||
	    (req.flush_access && !(req.comp_mask & SROCE_REG_MR_REQ_FLUSH_ACCESS)))
		return ERR_PTR(-EINVAL);
	access |= req.flush_access;
	init.access = access & ~IB_ACCESS_OPTIONAL;
	/* ib_check_mr_access already refused remote write/atomic without
	 * local write (EINVAL); what is left that we cannot do is EOPNOTSUPP
	 * (zero-based, hugetlb, on-demand paging and FLUSH to persistence),
	 * as rxe does. */
	if (access & ~(SROCE_MR_ACCESS | IB_ACCESS_OPTIONAL))
		return ERR_PTR(-EOPNOTSUPP);
	/* pages[0] must hold iova at the same page offset as start. */
	if ((start ^ iova) & ~PAGE_MASK)
		return ERR_PTR(-EINVAL);
	/* The core checks length and npages before anything is pinned. */
	if (check_add_overflow(length, (u64)offset_in_page(iova) + PAGE_SIZE - 1, &span))
		return ERR_PTR(-EINVAL);
	init.npages = span >> PAGE_SHIFT;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!mr || !u) {
		err = -ENOMEM;
		goto err_free;
	}
	u->ibdev = ibpd->device;
	get_device(&u->ibdev->dev);
	init.owner = u;
	err = sroce_core_mr_create(sdev->core, &init, &mr->core);
	if (err) {
		put_device(&u->ibdev->dev);
		goto err_free;
	}
	/* From here u belongs to the core MR: destroying it frees u. */

	u->umem = ib_umem_get(ibpd->device, start, length, init.access);
	if (IS_ERR(u->umem)) {
		err = PTR_ERR(u->umem);
		u->umem = NULL;
		goto err_core;
	}
	err = -EINVAL;
	if (WARN_ON_ONCE(ib_umem_num_pages(u->umem) != init.npages))
		goto err_core;
	for_each_sgtable_page(&u->umem->sgt_append.sgt, &it, 0) {
		void *kva = page_address(sg_page_iter_page(&it));

		if (WARN_ON_ONCE(!kva || i >= init.npages))
			goto err_core;
		sroce_core_mr_set_page(mr->core, i++, kva);
	}
	err = sroce_core_mr_enable(mr->core);
	if (err)
		goto err_core;
	mr->ibmr.lkey = sroce_core_mr_lkey(mr->core);
	mr->ibmr.rkey = sroce_core_mr_rkey(mr->core);
	return &mr->ibmr;

err_core:
	sroce_core_mr_destroy(mr->core);
	kfree(mr);
	return ERR_PTR(err);
err_free:
	kfree(u);
	kfree(mr);
	return ERR_PTR(err);
}

/* A kernel MR without pinned pages (DMA or fast registration): the core
 * MR, enabled unless it is a fast-registration one (its key waits for
 * REG_MR). */
static struct ib_mr *sroce_kernel_mr(struct ib_pd *ibpd, const struct sroce_core_mr_init *init)
{
	struct sroce_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	int err;

	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = sroce_core_mr_create(to_sdev(ibpd->device)->core, init, &mr->core);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	err = init->fast_reg ? 0 : sroce_core_mr_enable(mr->core);
	if (err) {
		sroce_core_mr_destroy(mr->core);
		kfree(mr);
		return ERR_PTR(err);
	}
	mr->ibmr.lkey = sroce_core_mr_lkey(mr->core);
	mr->ibmr.rkey = sroce_core_mr_rkey(mr->core);
	return &mr->ibmr;
}

static struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct sroce_core_mr_init init = {
		.pd = core_pd(ibpd),
		.access = access,
		.dma = 1,
	};

	if (access & ~SROCE_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	return sroce_kernel_mr(ibpd, &init);
}

/*
 * Fast registration (FRWR) for kernel users: room for max_num_sg pages.
 * map_mr_sg stages a page list in the core, and the IB_WR_REG_MR posted
 * after it registers that list with its rights and key byte (core.h).
 */
static struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type, u32 max_num_sg)
{
	struct sroce_core_mr_init init = {
		.pd = core_pd(ibpd),
		.page_shift = PAGE_SHIFT,
		.npages = max_num_sg,
		.fast_reg = 1,
	};

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EINVAL);
	return sroce_kernel_mr(ibpd, &init);
}

/* ib_sg_to_pages' callback: one page's "DMA" address, which under virtual
 * DMA (this file's head) is its kernel virtual address. */
static int sroce_stage_page(struct ib_mr *ibmr, u64 addr)
{
	struct sroce_mr *mr = to_smr(ibmr);
	int err = sroce_core_mr_stage_page(mr->core, mr->nstaged, (void *)(uintptr_t)addr);

	if (!err)
		mr->nstaged++;
	return err;
}

/* Pages of ibmr->page_size other than PAGE_SIZE are refused (-EINVAL):
 * the core's page table has one page size. Every storage ULP maps with
 * PAGE_SIZE or 4 KiB. */
static int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
			   unsigned int *sg_offset)
{
	struct sroce_mr *mr = to_smr(ibmr);
	int n, err;

	if (ibmr->page_size != PAGE_SIZE)
		return -EINVAL;
	mr->nstaged = 0;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, sroce_stage_page);
	if (n <= 0)
		return n;
	err = sroce_core_mr_stage_map(mr->core, mr->nstaged, ibmr->iova, ibmr->length, PAGE_SHIFT);
	return err ? err : n;
}

static int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct sroce_mr *mr = to_smr(ibmr);

	/* The keys stop working here; the pages are unpinned here too unless
	 * a packet in flight still holds the MR (see sroce_umem_release).
	 * -EBUSY while memory windows are bound to it: ib_uverbs' cleanup
	 * destroys the windows and then comes back. */
	int err = sroce_core_mr_destroy(mr->core);

	if (err)
		return err;
	kfree(mr);
	return 0;
}

/*
 * ib_core (nldev.c fill_res_mr_entry) puts rkey and lkey only for callers
 * with CAP_NET_ADMIN, judged by netlink_capable() on the request, and then
 * calls this for every caller without telling us the verdict. We get the
 * reply: a dump's reply skb is owned by the requesting socket, so
 * sk_capable() makes the same test (the socket's opener and the current
 * task); a single-object reply has no socket yet, and is built in the
 * requesting task, so capable() is what is left.
 */
static bool sroce_res_may_see_keys(struct sk_buff *msg)
{
	if (msg->sk)
		return sk_capable(msg->sk, CAP_NET_ADMIN);
	return capable(CAP_NET_ADMIN);
}

static int sroce_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	return sroce_fill_res_mr_view(msg, to_smr(ibmr)->core, sroce_res_may_see_keys(msg));
}

const struct ib_device_ops sroce_mr_ops = {
	.alloc_mr = sroce_alloc_mr,
	.alloc_mw = sroce_alloc_mw,
	.dealloc_mw = sroce_dealloc_mw,
	.dereg_mr = sroce_dereg_mr,
	.fill_res_mr_entry = sroce_fill_res_mr_entry,
	.get_dma_mr = sroce_get_dma_mr,
	.map_mr_sg = sroce_map_mr_sg,
	.reg_user_mr = sroce_reg_user_mr,
	INIT_RDMA_OBJ_SIZE(ib_mw, sroce_mw, ibmw),
};

int sroce_mr_init(void)
{
	sroce_mr_wq = alloc_workqueue("sroce_mr", WQ_UNBOUND, 0);
	return sroce_mr_wq ? 0 : -ENOMEM;
}

/* After every device is gone: waits for deferred unpinning. */
void sroce_mr_exit(void)
{
	destroy_workqueue(sroce_mr_wq);
}

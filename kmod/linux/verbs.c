// SPDX-License-Identifier: GPL-2.0
/*
 * verbs.c - the ib_device_ops of a sroce device: queries, user contexts and
 * their mappings, protection domains. Each call translates ib_core objects
 * to core.h calls.
 */
#include <linux/mm.h>
#include <linux/sched/task.h>
#include <linux/version.h>
#include <linux/vmalloc.h>
#include <rdma/ib_mad.h> /* IB_DEFAULT_PKEY_FULL */
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"

/*
 * The full RoCEv2 set, MAD and CM included: ib_mad opens QP1 (a GSI QP of
 * the core) on the port, and ib_cm/rdma_cm connect over it.
 */
#define SROCE_PORT_CORE_CAPS RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP

/* Capabilities backed by code that exists today; the list grows with it.
 * The responder sends RNR NAKs. (No SRQ_RESIZE: modify_srq cannot grow an
 * SRQ.) */
/* IBA 1.5 ATOMIC WRITE and FLUSH to global visibility (abi): uverbs hands
 * all 64 bits of device_cap_flags to user space on 6.1 too, where the
 * headers do not name the bits yet. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
static_assert(SROCE_DEVICE_CAP_ATOMIC_WRITE == IB_UVERBS_DEVICE_ATOMIC_WRITE);
static_assert(SROCE_WQE_ATOMIC_WRITE == IB_UVERBS_WR_ATOMIC_WRITE);
static_assert(SROCE_DEVICE_CAP_FLUSH_GLOBAL == IB_UVERBS_DEVICE_FLUSH_GLOBAL);
static_assert(SROCE_DEVICE_CAP_FLUSH_PERSISTENT == IB_UVERBS_DEVICE_FLUSH_PERSISTENT);
static_assert(SROCE_WQE_FLUSH == IB_UVERBS_WR_FLUSH);
#endif
#define SROCE_DEVICE_CAP_FLAGS                                                               \
	(IB_DEVICE_PORT_ACTIVE_EVENT | IB_DEVICE_SYS_IMAGE_GUID | IB_DEVICE_RC_RNR_NAK_GEN | \
	 IB_DEVICE_XRC | IB_DEVICE_MEM_MGT_EXTENSIONS | IB_DEVICE_MEM_WINDOW |                \
	 IB_DEVICE_MEM_WINDOW_TYPE_2B | SROCE_DEVICE_CAP_ATOMIC_WRITE |                       \
	 SROCE_DEVICE_CAP_FLUSH_GLOBAL)

/* Straight from param.h: the core enforces the same values. */
static int sroce_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
			      struct ib_udata *uhw)
{
	if (uhw && (uhw->inlen || uhw->outlen))
		return -EINVAL;
	attr->fw_ver = SROCE_FW_VER;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = SROCE_MAX_MR_SIZE;
	attr->page_size_cap = 1ull << SROCE_PAGE_SHIFT;
	attr->vendor_id = SROCE_VENDOR_ID;
	attr->vendor_part_id = SROCE_VENDOR_PART_ID;
	attr->hw_ver = SROCE_HW_VER;
	attr->max_qp = SROCE_MAX_QP;
	attr->max_qp_wr = SROCE_MAX_QP_WR;
	attr->device_cap_flags = SROCE_DEVICE_CAP_FLAGS;
	/* `rdma link delete` is refused by ib_core without this. */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	attr->max_send_sge = SROCE_MAX_SGE;
	attr->max_recv_sge = SROCE_MAX_SGE;
	attr->max_sge_rd = SROCE_MAX_SGE_RD;
	attr->max_cq = SROCE_MAX_CQ;
	attr->max_cqe = SROCE_MAX_CQE;
	attr->cq_caps.max_cq_moderation_count = SROCE_MAX_CQ_MODERATION_COUNT;
	attr->cq_caps.max_cq_moderation_period = SROCE_MAX_CQ_MODERATION_PERIOD;
	attr->max_mr = SROCE_MAX_MR;
	attr->max_mw = SROCE_LIMIT(SROCE_HAVE_MW, SROCE_MAX_MW);
	attr->max_pd = SROCE_MAX_PD;
	attr->max_qp_rd_atom = SROCE_MAX_QP_RD_ATOM;
	attr->max_qp_init_rd_atom = SROCE_MAX_QP_RD_ATOM;
	attr->max_res_rd_atom = SROCE_MAX_RES_RD_ATOM;
	attr->max_srq = SROCE_MAX_SRQ;
	attr->max_srq_wr = SROCE_MAX_SRQ_WR;
	attr->max_srq_sge = SROCE_MAX_SRQ_SGE;
	attr->max_ah = SROCE_MAX_AH;
	/* RSS (wq.c): UD QPs spread over WQs; tables of up to 2^8 entries. */
	attr->max_wq_type_rq = SROCE_LIMIT(SROCE_HAVE_WQ, SROCE_MAX_WQ);
	attr->rss_caps.supported_qpts = SROCE_LIMIT(SROCE_HAVE_WQ, 1u << IB_QPT_UD);
	attr->rss_caps.max_rwq_indirection_tables = SROCE_LIMIT(SROCE_HAVE_WQ, SROCE_MAX_RWQ_IND_TABLE);
	attr->rss_caps.max_rwq_indirection_table_size = SROCE_LIMIT(SROCE_HAVE_WQ, 1u << SROCE_MAX_RWQ_IND_TABLE_LOG);
	attr->max_pkeys = SROCE_MAX_PKEYS;
	attr->local_ca_ack_delay = SROCE_LOCAL_CA_ACK_DELAY;
	attr->max_fast_reg_page_list_len = SROCE_LIMIT(SROCE_HAVE_FAST_REG, SROCE_MAX_FAST_REG_PAGE_LIST_LEN);
	/* Atomics are atomic among this device's operations, not against
	 * CPU accesses to the same memory. */
	attr->atomic_cap = IB_ATOMIC_HCA;
	/* Completion timestamps: ktime_get_ns(), a 64-bit clock of 1 GHz. */
	attr->timestamp_mask = ~0ull;
	attr->hca_core_clock = SROCE_HCA_CORE_CLOCK_KHZ;
	return 0;
}

static int sroce_query_port(struct ib_device *ibdev, u32 port_num, struct ib_port_attr *attr)
{
	struct sroce_core_port_attr a;

	sroce_core_query_port(to_sdev(ibdev)->core, &a);
	/* *attr was zeroed by ib_core. */
	attr->state = a.state;
	attr->phys_state = a.phys_state;
	attr->max_mtu = a.max_mtu;
	attr->active_mtu = a.active_mtu;
	attr->gid_tbl_len = SROCE_GID_TABLE_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->pkey_tbl_len = SROCE_PKEY_TABLE_LEN;
	attr->max_msg_sz = SROCE_MAX_MSG_SZ;
	/* The netdev may already be gone while the device is unregistering:
	 * the port attributes are still valid, with the slowest speed. */
	if (ib_get_eth_speed(ibdev, port_num, &attr->active_speed, &attr->active_width)) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

static int sroce_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index, u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int sroce_get_port_immutable(struct ib_device *ibdev, u32 port_num,
				    struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = SROCE_PORT_CORE_CAPS;
	immutable->pkey_tbl_len = SROCE_PKEY_TABLE_LEN;
	immutable->gid_tbl_len = SROCE_GID_TABLE_LEN;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer sroce_get_link_layer(struct ib_device *ibdev, u32 port_num)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int sroce_enable_driver(struct ib_device *ibdev)
{
	/* Netdev events before registration completed were not delivered. */
	sroce_dev_sync_port(to_sdev(ibdev));
	sroce_dev_sync_netdev(to_sdev(ibdev));
	sroce_debugfs_add_dev(to_sdev(ibdev));
	return 0;
}

/* ---- user contexts and mappings ---------------------------------------- */

/* On success the entry owns vaddr: mmap_free vfree()s it once the entry is
 * removed and its last mapping is gone. */
struct rdma_user_mmap_entry *sroce_mmap_insert(struct sroce_ucontext *uc, void *vaddr, size_t size,
					       bool writable, u64 *offset)
{
	struct sroce_mmap_entry *e = kzalloc(sizeof(*e), GFP_KERNEL);
	int err;

	if (!e)
		return ERR_PTR(-ENOMEM);
	e->vaddr = vaddr;
	e->writable = writable;
	err = rdma_user_mmap_entry_insert(&uc->ibuc, &e->rdma, size);
	if (err) {
		kfree(e);
		return ERR_PTR(err);
	}
	*offset = rdma_user_mmap_get_offset(&e->rdma);
	return &e->rdma;
}

static int sroce_init_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct sroce_ucontext *uc = container_of(ibuc, struct sroce_ucontext, ibuc);
	struct sroce_alloc_ucontext_req req = {};
	struct sroce_alloc_ucontext_resp resp;
	void *page;
	int err;

	/* A newer provider may send a longer request: only zeros are safe to
	 * ignore. */
	if (udata->inlen > sizeof(req) &&
	    !ib_is_udata_cleared(udata, sizeof(req), udata->inlen - sizeof(req)))
		return -EOPNOTSUPP;
	err = ib_copy_from_udata(&req, udata, min(udata->inlen, sizeof(req)));
	if (err)
		return err;
	err = sroce_core_ucontext_create(to_sdev(ibuc->device)->core, &req, udata->inlen, &resp,
					 &uc->core);
	if (err)
		return err;

	page = sroce_vmalloc_user_account(PAGE_SIZE);
	if (!page) {
		err = -ENOMEM;
		goto err_core;
	}
	sroce_core_ucontext_fill_page(uc->core, page);
	/* From here the page belongs to the entry: mmap_free releases it. */
	uc->ctx_page = sroce_mmap_insert(uc, page, PAGE_SIZE, false, &resp.ctx_page_offset);
	if (IS_ERR(uc->ctx_page)) {
		err = PTR_ERR(uc->ctx_page);
		/* The SQ poller may write the page until the core lets go. */
		sroce_core_ucontext_destroy(uc->core);
		vfree(page);
		return err;
	}
	err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
	if (err)
		goto err_entry;
	return 0;

err_entry:
	/* The core (its SQ poller) stops writing the page before the entry
	 * can free it. */
	sroce_core_ucontext_destroy(uc->core);
	rdma_user_mmap_entry_remove(uc->ctx_page);
	return err;
err_core:
	sroce_core_ucontext_destroy(uc->core);
	return err;
}

/*
 * A refused context must not keep its caller's task. ib_alloc_ucontext()
 * attached the task to the context's restrack entry (a reference), and
 * Linux's ioctl GET_CONTEXT (6.1 and 6.12; UVERBS_METHOD_GET_CONTEXT, the path
 * libibverbs takes) frees a context whose alloc_ucontext failed with a bare
 * kfree: the task_struct, its creds and its signal struct leaked, one set
 * per refusal, which any user can repeat (make test-debug's kmemleak, in
 * 30-bad-input's mismatched provider). So the reference is dropped here and
 * the pointer cleared; the write path's rdma_restrack_put() then finds no
 * task and puts nothing twice. The entry was never added: nothing else
 * reads it.
 */
static int sroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	int err = sroce_init_ucontext(ibuc, udata);

	if (err && ibuc->res.task) {
		put_task_struct(ibuc->res.task);
		ibuc->res.task = NULL;
	}
	return err;
}

static void sroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct sroce_ucontext *uc = container_of(ibuc, struct sroce_ucontext, ibuc);

	/* The SQ poller stops writing the page first; the page itself then
	 * lives until the last mapping of it is gone. */
	sroce_core_ucontext_destroy(uc->core);
	rdma_user_mmap_entry_remove(uc->ctx_page);
}

static void sroce_disassociate_ucontext(struct ib_ucontext *ibuc)
{
	/* Nothing of ours runs for the context any more: ib_core has zapped its
	 * mappings and will call dealloc_ucontext. Having this op lets a device
	 * be removed (rmmod, netdev gone) while processes still hold it open;
	 * they then see EIO. */
}

static int sroce_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry = rdma_user_mmap_entry_get(ibuc, vma);
	struct sroce_mmap_entry *e;
	int err;

	if (!rdma_entry)
		return -EINVAL;
	e = container_of(rdma_entry, struct sroce_mmap_entry, rdma);
	/* The context page is kernel-written state: read-only for the user.
	 * Rings are shared both ways; the kernel trusts nothing in them. */
	if (!e->writable) {
		if (vma->vm_flags & VM_WRITE) {
			err = -EPERM;
			goto out;
		}
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
		vm_flags_clear(vma, VM_MAYWRITE); /* mprotect cannot make it writable */
#else
		vma->vm_flags &= ~VM_MAYWRITE; /* mprotect cannot make it writable */
#endif
	}
	if (vma->vm_end - vma->vm_start != rdma_entry->npages << PAGE_SHIFT) {
		err = -EINVAL;
		goto out;
	}
	err = sroce_remap_vmalloc(vma, e->vaddr);
out:
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

static void sroce_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct sroce_mmap_entry *e = container_of(rdma_entry, struct sroce_mmap_entry, rdma);

	vfree(e->vaddr);
	kfree(e);
}

/* ---- protection domains ------------------------------------------------- */

static int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_pd *pd = container_of(ibpd, struct sroce_pd, ibpd);
	struct sroce_alloc_pd_resp resp = {};
	int err = sroce_check_empty_req(udata);

	if (err)
		return err;
	err = sroce_core_pd_create(to_sdev(ibpd->device)->core, &pd->core);
	if (err)
		return err;
	if (udata) {
		resp.pdn = sroce_core_pd_number(pd->core);
		err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
		if (err) {
			sroce_core_pd_destroy(pd->core);
			return err;
		}
	}
	return 0;
}

static int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	sroce_core_pd_destroy(container_of(ibpd, struct sroce_pd, ibpd)->core);
	return 0;
}

/* ---- sysfs -------------------------------------------------------------- */

static ssize_t parent_show(struct device *device, struct device_attribute *attr, char *buf)
{
	struct sroce_dev *sdev = rdma_device_to_drv_device(device, struct sroce_dev, ibdev);

	return sysfs_emit(buf, "%s\n", sdev->parent);
}
static DEVICE_ATTR_RO(parent);

/* The provider's match_device looks for this file: it identifies a sroce
 * device whatever its name, and tells the ABI it speaks. */
static ssize_t sroce_abi_version_show(struct device *device, struct device_attribute *attr,
				      char *buf)
{
	return sysfs_emit(buf, "%u\n", SROCE_ABI_VERSION);
}
static DEVICE_ATTR_RO(sroce_abi_version);

static struct attribute *sroce_dev_attributes[] = {
	&dev_attr_parent.attr,
	&dev_attr_sroce_abi_version.attr,
	NULL,
};

static const struct attribute_group sroce_attr_group = {
	.attrs = sroce_dev_attributes,
};

const struct ib_device_ops sroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SROCE_UVERBS_ABI_VERSION,

	.alloc_pd = sroce_alloc_pd,
	.alloc_ucontext = sroce_alloc_ucontext,
	.dealloc_driver = sroce_dev_dealloc,
	.dealloc_pd = sroce_dealloc_pd,
	.dealloc_ucontext = sroce_dealloc_ucontext,
	.device_group = &sroce_attr_group,
	.disassociate_ucontext = sroce_disassociate_ucontext,
	.enable_driver = sroce_enable_driver,
	.get_link_layer = sroce_get_link_layer,
	.get_port_immutable = sroce_get_port_immutable,
	.mmap = sroce_mmap,
	.mmap_free = sroce_mmap_free,
	.query_device = sroce_query_device,
	.query_pkey = sroce_query_pkey,
	.query_port = sroce_query_port,

	INIT_RDMA_OBJ_SIZE(ib_pd, sroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, sroce_ucontext, ibuc),
};

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * verbs_pabi34.h - the slice of the libibverbs *private* provider ABI
 * (symbol version IBVERBS_PRIVATE_34, i.e. rdma-core 44.x as shipped by
 * Debian 12) that the sroce user-space provider relies on.
 *
 * Debian does not install rdma-core's driver.h, so the sroce project keeps
 * its own declarations here.  They were written for this project and are
 * checked (static_asserts at the bottom of this file, plus a throwaway test
 * against the v44.0 sources) to have the same memory layout as libibverbs
 * 44.0 on LP64 targets.
 *
 * This ABI is private: libibverbs renames the symbol version whenever any
 * of these layouts change.  If the installed library no longer exports
 * IBVERBS_PRIVATE_34 this header must be re-audited, not just recompiled.
 *
 * C only (uses <stdatomic.h>, statement expressions and __typeof__).
 */
#ifndef SROCE_VERBS_PABI34_H
#define SROCE_VERBS_PABI34_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>		/* dev_t */
#include <time.h>		/* struct timespec */

#include <infiniband/verbs.h>	/* ibv_*, struct verbs_context, enum rdma_driver_id */
#include <rdma/ib_user_verbs.h>	/* ib_uverbs_* kernel ABI structs */

/* Private ABI generation this header describes. */
#define SROCE_VERBS_PABI_VERSION 34
/*
 * For a "driver <name>" line in a /etc/libibverbs.d/<x>.driver file,
 * libibverbs dlopen()s "<name>" SROCE_VERBS_PROVIDER_SUFFIX when <name>
 * starts with '/', else first
 * "/usr/lib/<triplet>/libibverbs/lib<name>" SROCE_VERBS_PROVIDER_SUFFIX
 * and then plain "lib<name>" SROCE_VERBS_PROVIDER_SUFFIX (ld.so path).
 */
#define SROCE_VERBS_PROVIDER_SUFFIX "-rdmav34.so"

/* ------------------------------------------------------------------------
 * Device matching
 * ------------------------------------------------------------------------ */

/* Values for verbs_match_ent.kind; a zeroed entry terminates a table. */
enum {
	VERBS_MATCH_SENTINEL	= 0,
	VERBS_MATCH_PCI		= 1,	/* vendor/device against device/modalias */
	VERBS_MATCH_MODALIAS	= 2,	/* fnmatch() pattern in u.modalias */
	VERBS_MATCH_DRIVER_ID	= 3,	/* u.driver_id == kernel's rdma_driver_id */
};

/* One row of verbs_device_ops.match_table. */
struct verbs_match_ent {
	void *driver_data;		/* opaque, handed back via sysfs_dev->match */
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;			/* VERBS_MATCH_* */
};

/* Match on the driver id reported by the kernel over RDMA netlink. */
#define VERBS_DRIVER_ID(_id) \
	{ .u.driver_id = (_id), .kind = VERBS_MATCH_DRIVER_ID }

/*
 * Match on the IB device name prefix.  libibverbs builds the string
 * "rdma_device:N<ibdev_name>" and fnmatch()es it against the pattern.
 * Upstream discourages this, but it is the fallback for drivers whose
 * kernel side reports RDMA_DRIVER_UNKNOWN.
 */
#define VERBS_NAME_MATCH(_prefix, _data)				\
	{ .driver_data = (void *)(_data),				\
	  .u.modalias = "rdma_device:*N" _prefix "*",			\
	  .kind = VERBS_MATCH_MODALIAS }

/* Bits in verbs_sysfs_dev.flags: which lazily-read fields are valid. */
enum {
	VSYSFS_READ_MODALIAS	= 1 << 0,
	VSYSFS_READ_NODE_GUID	= 1 << 1,
};

/* Two-pointer list link (same shape as ccan's struct list_node). */
struct verbs_pabi_list_node {
	struct verbs_pabi_list_node *next;
	struct verbs_pabi_list_node *prev;
};

/*
 * A uverbs device found by libibverbs (netlink first, sysfs fallback).
 * Allocated and owned by libibverbs; a provider only reads it (and may set
 * provider_data).  Passed to match_device() and alloc_device().
 */
struct verbs_sysfs_dev {
	struct verbs_pabi_list_node entry;	/* libibverbs internal */
	void *provider_data;			/* free for the provider */
	const struct verbs_match_ent *match;	/* table row that matched, or NULL */
	unsigned int flags;			/* VSYSFS_READ_* */
	char sysfs_name[IBV_SYSFS_NAME_MAX];	/* uverbs char dev name, "uverbs0" */
	dev_t sysfs_cdev;			/* its major:minor */
	char ibdev_name[IBV_SYSFS_NAME_MAX];	/* IB device name, e.g. "sroce0" */
	char ibdev_path[IBV_SYSFS_PATH_MAX];	/* "<sysfs>/class/infiniband/<ibdev_name>" */
	char modalias[512];			/* valid if VSYSFS_READ_MODALIAS */
	uint64_t node_guid;			/* valid if VSYSFS_READ_NODE_GUID */
	uint32_t driver_id;			/* enum rdma_driver_id, 0 = unknown */
	enum ibv_node_type node_type;
	int ibdev_idx;				/* netlink index, -1 if from sysfs */
	uint32_t num_ports;			/* netlink only, else 0 */
	uint32_t abi_ver;			/* ib_device ops.uverbs_abi_ver */
	struct timespec time_created;
};

/* ------------------------------------------------------------------------
 * Device / provider registration
 * ------------------------------------------------------------------------ */

struct verbs_device;

/* Static description of a provider, registered once per process. */
struct verbs_device_ops {
	const char *name;

	/* Inclusive range accepted for verbs_sysfs_dev.abi_ver. */
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;

	const struct verbs_match_ent *match_table;	/* sentinel-terminated */
	const struct verbs_device_ops **static_providers; /* static builds only */

	/*
	 * Optional.  When set it is called after the table match and has the
	 * final say (sysfs_dev->match holds the table result or NULL).
	 */
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);

	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);

	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	/* Required: libibverbs calls it without a NULL check on one path. */
	void (*uninit_device)(struct verbs_device *device);
};

/* Per-device object allocated by alloc_device(); embed it in your own. */
struct verbs_device {
	struct ibv_device device;		/* must stay first */
	const struct verbs_device_ops *ops;	/* filled in by libibverbs */
	atomic_int refcount;			/* libibverbs internal */
	struct verbs_pabi_list_node entry;	/* libibverbs internal */
	struct verbs_sysfs_dev *sysfs;		/* owned by libibverbs */
	uint64_t core_support;
};

static inline struct verbs_device *
verbs_get_device(const struct ibv_device *dev)
{
	return (struct verbs_device *)((uintptr_t)dev -
				       offsetof(struct verbs_device, device));
}

/* ------------------------------------------------------------------------
 * Context operations
 *
 * struct verbs_context itself is public and comes from <infiniband/verbs.h>.
 * The table below is copied by verbs_set_ops(); NULL members keep the
 * libibverbs default (which returns EOPNOTSUPP / does nothing).
 * Order is alphabetical and ABI-relevant: do not reorder or add members.
 * ------------------------------------------------------------------------ */

/* How an MR was made (libibverbs fills it in ibv_cmd_reg_mr). */
enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

/* The provider's MR: allocated by the provider, filled by ibv_cmd_reg_mr,
 * handed back to dereg_mr. */
struct verbs_mr {
	struct ibv_mr ibv_mr;		/* must stay first */
	enum ibv_mr_type mr_type;
	int access;
};

static inline struct verbs_mr *verbs_get_mr(struct ibv_mr *mr)
{
	return (struct verbs_mr *)((uintptr_t)mr - offsetof(struct verbs_mr, ibv_mr));
}

/* The provider's QP: ibv_qp, or ibv_qp_ex when the provider installs the
 * work-request builders. libibverbs' ibv_qp_to_qp_ex() returns &qp_ex only
 * if the provider set VERBS_QP_EX in comp_mask. */
enum verbs_qp_mask {
	VERBS_QP_XRCD	= 1 << 0,
	VERBS_QP_EX	= 1 << 1,
};

/* The provider's XRC domain: libibverbs fills it in ibv_cmd_open_xrcd. */
enum verbs_xrcd_mask {
	VERBS_XRCD_HANDLE	= 1 << 0,
};

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;			/* VERBS_XRCD_* */
	uint32_t handle;
};

/* The provider's SRQ: ibv_cmd_create_srq_ex records the type, domain, CQ
 * and number of an XRC SRQ here (ibv_get_srq_num). */
struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;		/* qp_ex.qp_base is qp */
	};
	uint32_t comp_mask;			/* VERBS_QP_* */
	struct verbs_xrcd *xrcd;		/* with VERBS_QP_XRCD */
};

/* The provider's CQ: ibv_cq, or ibv_cq_ex when made by create_cq_ex. */
struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *ctx,
				   struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *ctx,
				struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);
	struct ibv_td *(*alloc_td)(struct ibv_context *ctx,
				   struct ibv_td_init_attr *attr);
	void (*async_event)(struct ibv_context *ctx,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(struct ibv_context *ctx,
				struct ibv_counters_init_attr *attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *ctx, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *ctx,
					  struct ibv_cq_init_attr_ex *attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *attr);
	struct ibv_flow_action *(*create_flow_action_esp)(struct ibv_context *ctx,
				struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *ctx,
				       struct ibv_qp_init_attr_ex *attr);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(struct ibv_context *ctx,
				struct ibv_rwq_ind_table_init_attr *attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *ctx,
					 struct ibv_srq_init_attr_ex *attr);
	struct ibv_wq *(*create_wq)(struct ibv_context *ctx,
				    struct ibv_wq_init_attr *attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *ctx);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *ctx, uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *ctx, uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *ctx,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *ctx,
				      struct ibv_xrcd_init_attr *attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
	int (*query_device_ex)(struct ibv_context *ctx,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *ctx, uint8_t port_num,
			  struct ibv_port_attr *attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *ctx,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);
	int (*read_counters)(struct ibv_counters *counters, uint64_t *values,
			     uint32_t ncounters, uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/* The command buffers and the functions libibverbs exports to providers. */
#include "verbs_pabi34_calls.h"

/* ------------------------------------------------------------------------
 * Layout checks.  Expected values were measured by compiling rdma-core
 * v44.0's own libibverbs/driver.h and kern-abi.h on x86_64 (LP64).
 * ------------------------------------------------------------------------ */
#if __SIZEOF_POINTER__ == 8 && __SIZEOF_LONG__ == 8
#define SROCE_PABI_CHECK(expr) _Static_assert(expr, #expr)

SROCE_PABI_CHECK(IBV_SYSFS_NAME_MAX == 64);
SROCE_PABI_CHECK(IBV_SYSFS_PATH_MAX == 256);

SROCE_PABI_CHECK(sizeof(struct verbs_match_ent) == 24);
SROCE_PABI_CHECK(offsetof(struct verbs_match_ent, u) == 8);
SROCE_PABI_CHECK(offsetof(struct verbs_match_ent, vendor) == 16);
SROCE_PABI_CHECK(offsetof(struct verbs_match_ent, kind) == 20);

SROCE_PABI_CHECK(sizeof(struct verbs_sysfs_dev) == 992);
SROCE_PABI_CHECK(offsetof(struct verbs_sysfs_dev, provider_data) == 16);
SROCE_PABI_CHECK(offsetof(struct verbs_sysfs_dev, match) == 24);
SROCE_PABI_CHECK(offsetof(struct verbs_sysfs_dev, flags) == 32);
SROCE_PABI_CHECK(offsetof(struct verbs_sysfs_dev, sysfs_name) == 36);
SROCE_PABI_CHECK(offsetof(struct verbs_sysfs_dev, sysfs_cdev) == 104);
SROCE_PABI_CHECK(offsetof(struct verbs_sysfs_dev, ibdev_name) == 112);
SROCE_PABI_CHECK(offsetof(struct verbs_sysfs_dev, ibdev_path) == 176);
SROCE_PABI_CHECK(offsetof(struct verbs_sysfs_dev, modalias) == 432);
SROCE_PABI_CHECK(offsetof(struct verbs_sysfs_dev, node_guid) == 944);
SROCE_PABI_CHECK(offsetof(struct verbs_sysfs_dev, driver_id) == 952);
SROCE_PABI_CHECK(offsetof(struct verbs_sysfs_dev, node_type) == 956);
SROCE_PABI_CHECK(offsetof(struct verbs_sysfs_dev, ibdev_idx) == 960);
SROCE_PABI_CHECK(offsetof(struct verbs_sysfs_dev, num_ports) == 964);
SROCE_PABI_CHECK(offsetof(struct verbs_sysfs_dev, abi_ver) == 968);
SROCE_PABI_CHECK(offsetof(struct verbs_sysfs_dev, time_created) == 976);

SROCE_PABI_CHECK(sizeof(struct verbs_device_ops) == 72);
SROCE_PABI_CHECK(offsetof(struct verbs_device_ops, match_table) == 16);
SROCE_PABI_CHECK(offsetof(struct verbs_device_ops, match_device) == 32);
SROCE_PABI_CHECK(offsetof(struct verbs_device_ops, alloc_context) == 40);
SROCE_PABI_CHECK(offsetof(struct verbs_device_ops, import_context) == 48);
SROCE_PABI_CHECK(offsetof(struct verbs_device_ops, alloc_device) == 56);
SROCE_PABI_CHECK(offsetof(struct verbs_device_ops, uninit_device) == 64);

SROCE_PABI_CHECK(sizeof(struct ibv_device) == 664);
SROCE_PABI_CHECK(sizeof(struct verbs_device) == 712);
SROCE_PABI_CHECK(offsetof(struct verbs_device, ops) == 664);
SROCE_PABI_CHECK(offsetof(struct verbs_device, refcount) == 672);
SROCE_PABI_CHECK(offsetof(struct verbs_device, entry) == 680);
SROCE_PABI_CHECK(offsetof(struct verbs_device, sysfs) == 696);
SROCE_PABI_CHECK(offsetof(struct verbs_device, core_support) == 704);

SROCE_PABI_CHECK(sizeof(struct verbs_context_ops) == 76 * sizeof(void *));
SROCE_PABI_CHECK(offsetof(struct verbs_context_ops, alloc_pd) == 40);
SROCE_PABI_CHECK(offsetof(struct verbs_context_ops, dealloc_pd) == 208);
SROCE_PABI_CHECK(offsetof(struct verbs_context_ops, dereg_mr) == 224);
SROCE_PABI_CHECK(offsetof(struct verbs_context_ops, free_context) == 312);
SROCE_PABI_CHECK(offsetof(struct verbs_context_ops, query_device_ex) == 464);
SROCE_PABI_CHECK(offsetof(struct verbs_context_ops, query_port) == 480);
SROCE_PABI_CHECK(offsetof(struct verbs_context_ops, reg_mr) == 544);
SROCE_PABI_CHECK(offsetof(struct verbs_context_ops, unimport_pd) == 600);

/* From the public header, but the provider depends on it too. */
SROCE_PABI_CHECK(sizeof(struct ibv_context) == 328);
SROCE_PABI_CHECK(sizeof(struct verbs_context) == 648);
SROCE_PABI_CHECK(offsetof(struct verbs_context, priv) == 208);
SROCE_PABI_CHECK(offsetof(struct verbs_context, sz) == 312);
SROCE_PABI_CHECK(offsetof(struct verbs_context, context) == 320);

SROCE_PABI_CHECK(sizeof(struct ibv_get_context) == 16);
SROCE_PABI_CHECK(sizeof(struct ibv_query_port) == 24);
SROCE_PABI_CHECK(offsetof(struct ibv_query_port, port_num) == 16);
SROCE_PABI_CHECK(sizeof(struct ibv_alloc_pd) == 16);
SROCE_PABI_CHECK(sizeof(struct ib_uverbs_get_context_resp) == 8);
SROCE_PABI_CHECK(sizeof(struct ib_uverbs_alloc_pd_resp) == 4);
SROCE_PABI_CHECK(sizeof(struct ibv_reg_mr) == 48);
SROCE_PABI_CHECK(offsetof(struct ibv_reg_mr, pd_handle) == 40);
SROCE_PABI_CHECK(sizeof(struct ib_uverbs_reg_mr_resp) == 12);
SROCE_PABI_CHECK(sizeof(struct verbs_mr) == 56);
SROCE_PABI_CHECK(offsetof(struct verbs_mr, mr_type) == 48);
SROCE_PABI_CHECK(offsetof(struct ibv_qp_ex, qp_base) == 0);
SROCE_PABI_CHECK(sizeof(struct ibv_qp_ex) == 352);
SROCE_PABI_CHECK(offsetof(struct ibv_qp_ex, wr_id) == 168);
SROCE_PABI_CHECK(offsetof(struct ibv_qp_ex, wr_atomic_write) == 344);
SROCE_PABI_CHECK(sizeof(struct verbs_qp) == 368);
SROCE_PABI_CHECK(offsetof(struct verbs_qp, comp_mask) == 352);
SROCE_PABI_CHECK(offsetof(struct verbs_qp, xrcd) == 360);
SROCE_PABI_CHECK(sizeof(struct ibv_cq_ex) == 288);
SROCE_PABI_CHECK(sizeof(struct verbs_xrcd) == 16);
SROCE_PABI_CHECK(offsetof(struct verbs_xrcd, handle) == 12);
SROCE_PABI_CHECK(sizeof(struct ibv_srq) == 128);
SROCE_PABI_CHECK(offsetof(struct verbs_srq, srq_type) == 128);
SROCE_PABI_CHECK(offsetof(struct verbs_srq, xrcd) == 136);
SROCE_PABI_CHECK(offsetof(struct verbs_srq, cq) == 144);
SROCE_PABI_CHECK(offsetof(struct verbs_srq, srq_num) == 152);
SROCE_PABI_CHECK(sizeof(struct verbs_srq) == 160);
SROCE_PABI_CHECK(sizeof(struct verbs_cq) == 288);

/* Queue commands: header + the uverbs request (sizes of the uapi structs,
 * which the kernel checks too). */
SROCE_PABI_CHECK(sizeof(struct ibv_alloc_mw) == 8 + 16);
SROCE_PABI_CHECK(sizeof(struct ibv_create_cq) == 8 + 32);
SROCE_PABI_CHECK(sizeof(struct ibv_resize_cq) == 8 + 16);
SROCE_PABI_CHECK(sizeof(struct ibv_create_qp) == 8 + 56);
SROCE_PABI_CHECK(sizeof(struct ibv_modify_qp) == 8 + 112);
SROCE_PABI_CHECK(sizeof(struct ibv_query_qp) == 8 + 16);
SROCE_PABI_CHECK(sizeof(struct ibv_create_srq) == 8 + 32);
SROCE_PABI_CHECK(sizeof(struct ibv_create_xsrq) == 8 + 48);
SROCE_PABI_CHECK(sizeof(struct ibv_open_xrcd) == 8 + 16);
SROCE_PABI_CHECK(sizeof(struct ib_uverbs_open_xrcd_resp) == 4);
SROCE_PABI_CHECK(sizeof(struct ibv_open_qp) == 8 + 32);
SROCE_PABI_CHECK(sizeof(struct ibv_modify_srq) == 8 + 16);
SROCE_PABI_CHECK(sizeof(struct ibv_query_srq) == 8 + 16);
SROCE_PABI_CHECK(sizeof(struct ibv_post_send) == 8 + 24);
SROCE_PABI_CHECK(sizeof(struct ibv_create_cq_ex) == 24 + 32);
SROCE_PABI_CHECK(sizeof(struct ibv_modify_cq) == 24 + 16);
SROCE_PABI_CHECK(sizeof(struct ib_uverbs_ex_create_cq_resp) == 16);
SROCE_PABI_CHECK(sizeof(struct ib_uverbs_create_cq_resp) == 8);
SROCE_PABI_CHECK(sizeof(struct ib_uverbs_resize_cq_resp) == 8);
SROCE_PABI_CHECK(sizeof(struct ib_uverbs_create_qp_resp) == 32);
SROCE_PABI_CHECK(sizeof(struct ib_uverbs_create_srq_resp) == 16);
SROCE_PABI_CHECK(sizeof(struct ib_uverbs_create_ah_resp) == 4);

#undef SROCE_PABI_CHECK
#endif /* LP64 */

#endif /* SROCE_VERBS_PABI34_H */

/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * sroce-abi-methods.h - the driver methods of the sroce ABI (uverbs ioctl
 * methods in the driver's ID space, 1 << UVERBS_ID_NS_SHIFT) and the
 * structs their attributes carry: the kernel-owned XRC receive QP,
 * non-contiguous memory windows, completion vectors. Part of sroce-abi.h,
 * which includes it (its rules hold here too; SROCE_ABI_VERSION covers
 * both); include sroce-abi.h, not this file. See Documentation/abi.md.
 */
#ifndef SROCE_ABI_METHODS_H
#define SROCE_ABI_METHODS_H

#ifndef SROCE_ABI_H
#error "include sroce-abi.h"
#endif

/* ---------------------------------------------------------------------- */
/* The seed's kernel-owned XRC receive QP (srocedv_alloc_xrc_rcv_qp,
 * Documentation/xrc.md): a driver method on an XRC domain object
 * (UVERBS_OBJECT_XRCD), in the driver's ID space (1 << UVERBS_ID_NS_SHIFT).
 * Its attributes: the domain's handle (read access), the request, and the
 * QP number out. The kernel makes an XRC target in its own PD and takes it
 * RESET -> INIT -> RTR; it lives until the domain's last user is gone. */
enum sroce_uverbs_methods { /* enumerators: uverbs' macros paste the names */
	SROCE_METHOD_XRC_RCV_QP_ALLOC = (1u << 12),
};
enum sroce_xrc_rcv_qp_attrs {
	SROCE_ATTR_XRC_RCV_QP_XRCD = (1u << 12),
	SROCE_ATTR_XRC_RCV_QP_REQ,
	SROCE_ATTR_XRC_RCV_QP_QPN, /* __u32 out */
};

/* attr_mask: IB_QP_* (= IBV_QP_*) bits of the fields given. Required:
 * ACCESS_FLAGS, PKEY_INDEX and PORT (RESET -> INIT); AV, PATH_MTU,
 * DEST_QPN, RQ_PSN and MIN_RNR_TIMER (INIT -> RTR). Optional:
 * MAX_DEST_RD_ATOMIC (0 without it: SENDs only). Any other bit: EINVAL.
 * The AV is RoCE's: the destination GID, the source GID's index, and the
 * GRH's hop limit, traffic class and flow label. */
struct sroce_xrc_rcv_qp_req {
	__u64 comp_mask;        /* 0: nothing beyond these fields yet */
	__u32 attr_mask;
	__u32 qp_access_flags;
	__u32 dest_qp_num;
	__u32 rq_psn;
	__u32 flow_label;
	__u16 pkey_index;
	__u8 port_num;
	__u8 path_mtu;          /* enum ib_mtu */
	__u8 max_dest_rd_atomic;
	__u8 min_rnr_timer;
	__u8 sgid_index;
	__u8 hop_limit;
	__u8 traffic_class;
	__u8 reserved[3];
	__u8 dgid[16];
};
/* The attributes a request may name (IB_QP_* values). */
#define SROCE_XRC_RCV_QP_REQUIRED                                                             \
	((1u << 3) | (1u << 4) | (1u << 5) /* ACCESS_FLAGS, PKEY_INDEX, PORT */ |             \
	 (1u << 7) | (1u << 8) | (1u << 12) | (1u << 15) | (1u << 20) /* AV, PATH_MTU, RQ_PSN, \
									 MIN_RNR_TIMER, DEST_QPN */)
#define SROCE_XRC_RCV_QP_OPTIONAL (1u << 17) /* MAX_DEST_RD_ATOMIC */

/* ---------------------------------------------------------------------- */
/* Non-contiguous memory windows (seed 003; Documentation/memory.md,
 * "Layouts"). A layout is staged on a window by a driver method on the MW
 * object (UVERBS_OBJECT_MW), which resolves and checks it and compiles it
 * into a flat walk; a BIND_MW WQE then names the staged layout by its handle
 * (sroce_wqe.reg.layout, with reg.length the layout's length) and installs
 * it in the order of the QP's work, as IB_WR_REG_MR does with a page list
 * staged by ib_map_mr_sg. A layout window is zero-based: remote addresses
 * (and local ones, through its lkey = rkey when bound with LOCAL_WRITE) are
 * offsets 0..length-1 in the order the layout lists its bytes. */
enum sroce_mw_methods { /* an enumerator: uverbs' macros paste the name */
	SROCE_METHOD_MW_STAGE_LAYOUT = (1u << 12),
};
enum sroce_mw_stage_layout_attrs {
	SROCE_ATTR_MW_LAYOUT_MW = (1u << 12), /* the window (write access) */
	SROCE_ATTR_MW_LAYOUT_REQ,             /* struct sroce_mw_layout_req */
	SROCE_ATTR_MW_LAYOUT_ENTRIES,         /* struct sroce_mw_layout_entry[] */
	SROCE_ATTR_MW_LAYOUT_DIMS,            /* struct sroce_mw_layout_dim[] (optional) */
	SROCE_ATTR_MW_LAYOUT_RESP,            /* struct sroce_mw_layout_resp out */
};

/* The limits, also srocedv_query_device's (struct srocedv_mw_layout_caps). */
#define SROCE_MW_LAYOUT_MAX_ENTRIES 16        /* entries of one layout */
#define SROCE_MW_LAYOUT_MAX_DIMS 4            /* stride dimensions of one entry */
#define SROCE_MW_LAYOUT_MAX_DEPTH 3           /* a layout of layouts of layouts */
#define SROCE_MW_LAYOUT_MAX_DESCRIPTORS 65536 /* compiled pieces of one window */
#define SROCE_MW_LAYOUT_MAX_ITEMS (1u << 22)  /* items one layout may list */

enum sroce_mw_layout_type {
	SROCE_MW_LAYOUT_COMPOSITE = 0,   /* entries' ranges one after another */
	SROCE_MW_LAYOUT_INTERLEAVED = 1, /* rounds of items from every entry */
};
enum sroce_mw_entry_kind {
	SROCE_MW_ENTRY_MR = 0, /* key is an MR's lkey; addr in the MR's addresses */
	SROCE_MW_ENTRY_MW = 1, /* key is a bound window's rkey; addr in its addresses */
};

struct sroce_mw_layout_req {
	__u64 comp_mask;        /* 0 */
	__u32 type;             /* enum sroce_mw_layout_type */
	__u32 num_entries;      /* 1..SROCE_MW_LAYOUT_MAX_ENTRIES */
	__u32 access;           /* the bind's: IB_ACCESS_REMOTE_*, LOCAL_WRITE (the lkey) */
	__u32 reserved;         /* 0 */
};

/* Composite: the entry's bytes are [addr, addr + length). Interleaved: the
 * entry lists items of `length` bytes at addr + sum(i_d * stride_d) for
 * every index vector i (dimension 0 varies fastest; no dimensions: one
 * item); each round of the layout takes `repeat` items (0 means 1) from
 * each entry in entry order, and every entry must run out in the same
 * round. num_dims of {stride, count} are taken from DIMS in entry order. */
struct sroce_mw_layout_entry {
	__u64 addr;
	__u64 length;
	__u32 kind;             /* enum sroce_mw_entry_kind */
	__u32 key;
	__u32 repeat;           /* interleaved only */
	__u32 num_dims;         /* interleaved only: 0..SROCE_MW_LAYOUT_MAX_DIMS */
};
struct sroce_mw_layout_dim {
	__u64 stride;           /* bytes between items along this dimension */
	__u64 count;            /* items along it, >= 1 */
};
struct sroce_mw_layout_resp {
	__u64 length;           /* bytes the layout lists: the bind's reg.length */
	__u32 handle;           /* the bind's reg.layout (never 0) */
	__u32 descriptors;      /* compiled pieces */
};

/* alloc_mw's driver data (srocedv_alloc_mw_ex); without it a window takes
 * no layout. max_descriptors: 0..SROCE_MW_LAYOUT_MAX_DESCRIPTORS. */
struct sroce_alloc_mw_req {
	__u32 max_descriptors;
	__u32 reserved;
};
struct sroce_alloc_mw_resp {
	__u32 max_descriptors;
	__u32 reserved;
};

/* ---------------------------------------------------------------------- */
/* Completion vectors (seed 002-C, srocedv_modify_cq_vector): a driver method
 * on a CQ (UVERBS_OBJECT_CQ). A device has one vector per CPU online when it
 * was added; a CQ's completion events run on its vector's CPU. The method
 * takes a handler id in the seed's encoding and returns the CQ's current
 * one: 0 changes nothing (a query), SROCE_CQ_HID_DEFAULT goes back to the
 * vector the CQ was created with, and vector v is v + 1. A vector the
 * device lacks is EINVAL. */
enum sroce_cq_methods { /* an enumerator: uverbs' macros paste the name */
	SROCE_METHOD_CQ_VECTOR = (1u << 12),
};
enum sroce_cq_vector_attrs {
	SROCE_ATTR_CQ_VECTOR_CQ = (1u << 12), /* the CQ (read access) */
	SROCE_ATTR_CQ_VECTOR_HID,             /* __u32 in (optional: 0) */
	SROCE_ATTR_CQ_VECTOR_CUR,             /* __u32 out: the handler id now */
};
#define SROCE_CQ_HID_NO_CHANGE 0u
#define SROCE_CQ_HID_DEFAULT 0xffffffffu

/* Receive steering (issue 17, srocedv_modify_qp_rx_cpu): a driver method on
 * a user RC or UC QP (UVERBS_OBJECT_QP). By default the QP's packets are
 * received on the CPU its owner last posted from (transport.md, "Receive
 * steering"); the method fixes that CPU, or gives it back to the owner's
 * moves, and returns the choice now in force. The same encoding as the CQ
 * vector's: 0 changes nothing (a query), SROCE_QP_RX_CPU_OWNER follows the
 * owner, and CPU c is c + 1. A CPU not online, or one the caller may not
 * run on, is EINVAL; another QP type EOPNOTSUPP. */
enum sroce_qp_methods {
	SROCE_METHOD_QP_RX_CPU = (1u << 12),
};
enum sroce_qp_rx_cpu_attrs {
	SROCE_ATTR_QP_RX_CPU_QP = (1u << 12), /* the QP (write access) */
	SROCE_ATTR_QP_RX_CPU_IN,              /* __u32 in (optional: 0) */
	SROCE_ATTR_QP_RX_CPU_CUR,             /* __u32 out: the choice now */
};
#define SROCE_QP_RX_CPU_NO_CHANGE 0u
#define SROCE_QP_RX_CPU_OWNER 0xffffffffu

#endif /* SROCE_ABI_METHODS_H */

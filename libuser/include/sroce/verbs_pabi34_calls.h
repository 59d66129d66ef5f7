/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * verbs_pabi34_calls.h - the calls into libibverbs of its private provider
 * ABI (IBVERBS_PRIVATE_34): the legacy write() command buffers and the
 * functions the provider calls. Included by verbs_pabi34.h, which holds the
 * types they use and checks every layout at its end; not for direct use.
 */
#ifndef SROCE_VERBS_PABI34_CALLS_H
#define SROCE_VERBS_PABI34_CALLS_H

#ifndef SROCE_VERBS_PABI34_H
#error "include sroce/verbs_pabi34.h instead"
#endif

/* ------------------------------------------------------------------------
 * Legacy write() command buffers used by the ibv_cmd_* helpers.
 *
 * Each is the 8-byte uverbs header followed by the fixed part of the kernel
 * request.  A provider that passes private data to its kernel driver wraps
 * one of these as the first member of a larger struct and passes the larger
 * size as cmd_size; libibverbs sends the bytes after the core part as the
 * driver payload.  Likewise for responses (core resp struct from
 * <rdma/ib_user_verbs.h> first, driver part after it).
 * ------------------------------------------------------------------------ */

struct ibv_get_context {			/* IB_USER_VERBS_CMD_GET_CONTEXT */
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
};

struct ibv_query_port {				/* IB_USER_VERBS_CMD_QUERY_PORT */
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u8 port_num;
	__u8 reserved[7];
};

struct ibv_alloc_pd {				/* IB_USER_VERBS_CMD_ALLOC_PD */
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
};

struct ibv_reg_mr {				/* IB_USER_VERBS_CMD_REG_MR */
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__aligned_u64 start;
	__aligned_u64 length;
	__aligned_u64 hca_va;
	__u32 pd_handle;
	__u32 access_flags;
};
/*
 * The queue commands.  In libibverbs each of these is the header followed by
 * the kernel's request struct "loose" inside a union; a struct holding the
 * request struct as its one member has the same layout, and that is how
 * they are written here (fields are reached through core_payload).
 */
#define SROCE_PABI_CMD(_name, _kabi)					     \
	struct _name {							     \
		struct ib_uverbs_cmd_hdr hdr;				     \
		struct _kabi core_payload;				     \
	}

SROCE_PABI_CMD(ibv_alloc_mw, ib_uverbs_alloc_mw);	/* ALLOC_MW */
SROCE_PABI_CMD(ibv_create_cq, ib_uverbs_create_cq);	/* CREATE_CQ */
SROCE_PABI_CMD(ibv_resize_cq, ib_uverbs_resize_cq);	/* RESIZE_CQ */
SROCE_PABI_CMD(ibv_create_qp, ib_uverbs_create_qp);	/* CREATE_QP */
SROCE_PABI_CMD(ibv_modify_qp, ib_uverbs_modify_qp);	/* MODIFY_QP */
SROCE_PABI_CMD(ibv_query_qp, ib_uverbs_query_qp);	/* QUERY_QP */
SROCE_PABI_CMD(ibv_create_srq, ib_uverbs_create_srq);	/* CREATE_SRQ */
SROCE_PABI_CMD(ibv_create_xsrq, ib_uverbs_create_xsrq);	/* CREATE_XSRQ */
SROCE_PABI_CMD(ibv_open_xrcd, ib_uverbs_open_xrcd);	/* OPEN_XRCD */
SROCE_PABI_CMD(ibv_open_qp, ib_uverbs_open_qp);		/* OPEN_QP */
SROCE_PABI_CMD(ibv_modify_srq, ib_uverbs_modify_srq);	/* MODIFY_SRQ */
SROCE_PABI_CMD(ibv_query_srq, ib_uverbs_query_srq);	/* QUERY_SRQ */
SROCE_PABI_CMD(ibv_post_send, ib_uverbs_post_send);	/* POST_SEND */

/* The extended commands: the ex header, then the request. */
struct ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

#define SROCE_PABI_CMD_EX(_name, _kabi)					     \
	struct _name {							     \
		struct ex_hdr hdr;					     \
		struct _kabi core_payload;				     \
	}

SROCE_PABI_CMD_EX(ibv_create_cq_ex, ib_uverbs_ex_create_cq);	/* EX CREATE_CQ */
SROCE_PABI_CMD_EX(ibv_modify_cq, ib_uverbs_ex_modify_cq);	/* EX MODIFY_CQ */
SROCE_PABI_CMD_EX(ibv_create_qp_ex, ib_uverbs_ex_create_qp);	/* EX CREATE_QP (RSS QPs) */
SROCE_PABI_CMD_EX(ibv_create_wq, ib_uverbs_ex_create_wq);	/* EX CREATE_WQ */
SROCE_PABI_CMD_EX(ibv_modify_wq, ib_uverbs_ex_modify_wq);	/* EX MODIFY_WQ */

/* ------------------------------------------------------------------------
 * Functions exported by libibverbs.so.1 under IBVERBS_PRIVATE_34
 * ------------------------------------------------------------------------ */

/* Register a provider; call once, from a constructor (see macro below). */
void verbs_register_driver_34(const struct verbs_device_ops *ops);

/* ibv_open_device with private data handed to the provider's
 * alloc_context (rdma-core v44.0 libibverbs/device.c, as mlx5dv_open_device
 * uses it). */
struct ibv_context *verbs_open_device(struct ibv_device *device, void *private_data);

/*
 * calloc(alloc_size) a provider context and initialise the verbs_context
 * found context_offset bytes into it (the pointer value IS the offset).
 * Takes ownership of cmd_fd (closed on failure).  Returns NULL + errno.
 */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);

/* Undo the init half of the above (closes fds, drops the device ref);
 * the caller still free()s its own allocation. */
void verbs_uninit_context(struct verbs_context *context);

/* Install the non-NULL members of ops on the context. */
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

/* GET_CONTEXT (ioctl, falls back to write()).  Always pass real, writable
 * cmd/resp buffers with cmd_size >= sizeof(*cmd), resp_size >= sizeof(*resp). */
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);

/* QUERY_DEVICE / EX_QUERY_DEVICE.  resp may be NULL; otherwise *resp_size
 * is its size on entry and the kernel's response_length on return. */
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);

/* QUERY_PORT (ioctl, falls back to write() which fills in *cmd). */
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);

/* ALLOC_PD (write() only); fills pd->handle and pd->context. */
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);

/* DEALLOC_PD; does not free pd. */
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);

/* ALLOC_MW (write() only); fills mw's context, pd, rkey, handle and type.
 * DEALLOC_MW does not free mw. */
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type, struct ibv_mw *mw,
		     struct ibv_alloc_mw *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_mw_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);

/* REG_MR (write() only). Fills cmd from the arguments; on success fills
 * vmr->ibv_mr (handle, lkey, rkey, context), mr_type and access. addr,
 * length, pd are set by libibverbs after reg_mr returns. Returns an errno. */
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access,
		   struct verbs_mr *vmr, struct ibv_reg_mr *cmd,
		   size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);

/* DEREG_MR (ioctl, falls back to write()); does not free vmr. */
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
/*
 * Queue objects.  Each create fills the libibverbs object it is given
 * (handle, context, ...; the provider allocates it), sends the core request
 * plus the bytes of *cmd past the core part as driver data (the sroce
 * requests have none), and receives the driver's response after the core
 * response: resp_size covers both.  Destroys do not free the object.
 */
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
/* The same from extended attributes (wc_flags with a timestamp ask the
 * kernel for IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION); cmd_flags 0. */
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size, struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
/* What libibverbs does to a CQ after the provider's create_cq_ex (context,
 * channel and its reference, cq_context, counters, mutex and cond); a
 * provider that creates a CQ outside ibv_create_cq_ex calls it. */
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);
/* EX MODIFY_CQ (write() only): EINVAL for attr_mask bits libibverbs does
 * not know; fills *cmd itself. */
int ibv_cmd_modify_cq(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr,
		      struct ibv_modify_cq *cmd, size_t cmd_size);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);

/* On success attr->cap holds the kernel's (rounded-up) capacities and the
 * QP starts in RESET; ibv_cmd_modify_qp keeps qp->state current. */
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr, struct ibv_create_qp *cmd,
		      size_t cmd_size, struct ib_uverbs_create_qp_resp *resp,
		      size_t resp_size);
/* The same for a verbs_qp from init attributes (PD, XRCD or SEND_OPS_FLAGS
 * in comp_mask; the last is the provider's business only). */
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd, size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);

int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr, struct ibv_create_srq *cmd,
		       size_t cmd_size, struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
/* XRC SRQs too (IBV_SRQ_INIT_ATTR_XRCD and _CQ); fills the verbs_srq. */
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex, struct ibv_create_xsrq *cmd,
			  size_t cmd_size, struct ib_uverbs_create_srq_resp *resp, size_t resp_size);

/* An RSS QP (IBV_QP_INIT_ATTR_IND_TABLE): uverbs' extended create_qp,
 * which carries the table's handle; the driver data follows the core
 * request and response as with ibv_cmd_create_qp_ex. */
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr, struct ibv_create_qp_ex *cmd,
			  size_t cmd_size, struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size);

/* Receive work queues and RSS indirection tables. create_wq fills the
 * ibv_wq's context, handle and number; modify_wq keeps wq->state current;
 * create_rwq_ind_table builds its own request from attr->ind_tbl's handles
 * and fills the table's handle and number. */
int ibv_cmd_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *wq_init_attr,
		      struct ibv_wq *wq, struct ibv_create_wq *cmd, size_t cmd_size,
		      struct ib_uverbs_ex_create_wq_resp *resp, size_t resp_size);
int ibv_cmd_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr, struct ibv_modify_wq *cmd,
		      size_t cmd_size);
int ibv_cmd_destroy_wq(struct ibv_wq *wq);
int ibv_cmd_create_rwq_ind_table(struct ibv_context *context,
				 struct ibv_rwq_ind_table_init_attr *init_attr,
				 struct ibv_rwq_ind_table *rwq_ind_table,
				 struct ib_uverbs_ex_create_rwq_ind_table_resp *resp,
				 size_t resp_size);
int ibv_cmd_destroy_rwq_ind_table(struct ibv_rwq_ind_table *rwq_ind_table);

/* XRC: domains shared through an inode, and opening a target QP another
 * process made (no rings: the opener only modifies, queries, destroys). */
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd, int vxrcd_size,
		      struct ibv_xrcd_init_attr *attr, struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp, int vqp_sz,
		    struct ibv_qp_open_attr *attr, struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size);

/* write() only; the request is built from attr inside. */
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);

/* ------------------------------------------------------------------------
 * Convenience macros
 * ------------------------------------------------------------------------ */

/*
 * drv_ctx_ptr: a (possibly uninitialised) pointer variable of the provider's
 * context type; ctx_memb: name of its struct verbs_context member.
 * Evaluates to a pointer of that type, or NULL.
 */
#define verbs_init_and_alloc_context(ibdev, cmd_fd, drv_ctx_ptr, ctx_memb,   \
				     driver_id)				     \
	({								     \
		_Static_assert(__builtin_types_compatible_p(		     \
			__typeof__(((__typeof__(drv_ctx_ptr))0)->ctx_memb),  \
			struct verbs_context),				     \
			"ctx_memb must be a struct verbs_context");	     \
		(__typeof__(drv_ctx_ptr))_verbs_init_and_alloc_context(	     \
			(ibdev), (cmd_fd), sizeof(*(drv_ctx_ptr)),	     \
			(struct verbs_context *)(uintptr_t)offsetof(	     \
				__typeof__(*(drv_ctx_ptr)), ctx_memb),	     \
			(driver_id));					     \
	})

/*
 * Register a struct verbs_device_ops from a load-time constructor, which is
 * what libibverbs expects after it dlopen()s the provider.  (Upstream's
 * PROVIDER_DRIVER also exports a verbs_provider_<name> alias used only for
 * static linking; not needed for a dlopen'ed provider.)
 */
#define VERBS_PABI34_PROVIDER_DRIVER(_name, _ops)			     \
	static void __attribute__((constructor))			     \
	_name##_verbs_pabi34_register(void)				     \
	{								     \
		verbs_register_driver_34(&(_ops));			     \
	}

#ifndef PROVIDER_DRIVER
#define PROVIDER_DRIVER(_name, _ops) VERBS_PABI34_PROVIDER_DRIVER(_name, _ops)
#endif

#endif /* SROCE_VERBS_PABI34_CALLS_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Private header of the sroce provider. */
#ifndef SROCE_PROVIDER_H
#define SROCE_PROVIDER_H

#include <infiniband/verbs.h>
#include <stddef.h>

#include "sroce-abi.h"
#include "sroce/verbs_pabi34.h"

/* The ABI this provider speaks. Overridden only by the build of the
 * deliberately mismatched provider used in tests. */
#ifndef SROCE_PROVIDER_ABI_VERSION
#define SROCE_PROVIDER_ABI_VERSION SROCE_ABI_VERSION
#endif

#define sroce_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

struct sroce_device {
	struct verbs_device vdev;
};

struct sroce_context {
	struct verbs_context vctx;
	const volatile struct sroce_context_page *ctx_page; /* read-only mapping */
	size_t ctx_page_size;
	uint64_t caps;              /* enum sroce_ucontext_resp_caps */
};

struct sroce_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
};

static inline struct sroce_context *to_sctx(struct ibv_context *ibctx)
{
	return sroce_container_of(ibctx, struct sroce_context, vctx.context);
}

/* True if ibctx was opened by this provider. */
int sroce_is_sroce_context(struct ibv_context *ibctx);

/* sroce.c, verbs.c */
void sroce_free_context(struct ibv_context *ibctx);
extern const struct verbs_context_ops sroce_ctx_ops;

/* mr.c */
struct ibv_mr *sroce_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
			    int access);
int sroce_dereg_mr(struct verbs_mr *vmr);

#endif /* SROCE_PROVIDER_H */

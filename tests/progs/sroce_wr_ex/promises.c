// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * promises.c - what sroce promises in ibv_query_device_ex and ibv_reg_mr
 * for the extended verbs, checked once before sroce_wr_ex's traffic (not on
 * a peer device): the completion clock, ATOMIC WRITE, and FLUSH to global
 * visibility but never to persistence, with the FLUSH right registered on
 * every kernel (6.1's ib_core refuses it among the access flags: the
 * provider passes it as driver data).
 */
#include <infiniband/srocedv.h>

#include "../progs_common.h"
#include "sroce-abi.h"
#include "wr_ex.h"

int check_device_promises(const struct ibv_device_attr_ex *dx, struct ibv_pd *pd)
{
	uint8_t page[64];
	struct ibv_mr *mr;

	CHECK(dx->completion_timestamp_mask == ~0ull && dx->hca_core_clock == 1000000,
	      "query_device_ex: completion_timestamp_mask %#llx, hca_core_clock %llu kHz",
	      (unsigned long long)dx->completion_timestamp_mask, (unsigned long long)dx->hca_core_clock);
	CHECK(dx->device_cap_flags_ex & SROCE_DEVICE_CAP_ATOMIC_WRITE,
	      "query_device_ex: ATOMIC WRITE in device_cap_flags_ex (%#llx)",
	      (unsigned long long)dx->device_cap_flags_ex);
	CHECK((dx->device_cap_flags_ex & SROCEDV_DEVICE_FLUSH_GLOBAL) &&
		      !(dx->device_cap_flags_ex & SROCEDV_DEVICE_FLUSH_PERSISTENT),
	      "query_device_ex: FLUSH to global visibility, not to persistence (%#llx)",
	      (unsigned long long)dx->device_cap_flags_ex);
	mr = ibv_reg_mr(pd, page, sizeof(page), IBV_ACCESS_LOCAL_WRITE | SROCEDV_ACCESS_FLUSH_GLOBAL);
	CHECK(mr != NULL, "ibv_reg_mr with SROCEDV_ACCESS_FLUSH_GLOBAL: %s", mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_mr(pd, page, sizeof(page), IBV_ACCESS_LOCAL_WRITE | SROCEDV_ACCESS_FLUSH_PERSISTENT);
	CHECK(!mr && errno == EOPNOTSUPP, "ibv_reg_mr with SROCEDV_ACCESS_FLUSH_PERSISTENT: %s",
	      mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	return failures;
}

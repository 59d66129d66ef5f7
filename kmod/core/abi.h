// The shared ABI as seen from the freestanding core, with layout checks that
// fail the build if the structs drift.
#pragma once
#define SROCE_FREESTANDING 1
#include "sroce-abi.h" // -I abi/

static_assert(sizeof(sroce_alloc_ucontext_req) == 16);
static_assert(sizeof(sroce_alloc_ucontext_resp) == 40);
static_assert(sizeof(sroce_context_page) == SROCE_PAGE_SIZE);
static_assert(sizeof(sroce_ring_header) == 3 * SROCE_CACHELINE);
static_assert(sizeof(sroce_sge) == 16);
static_assert(sizeof(sroce_wqe) == 64);
static_assert(sizeof(sroce_cqe) == 64);
static_assert(sizeof(sroce_ring_info) == 24);
static_assert(sizeof(sroce_create_qp_resp) == 64);
static_assert(sizeof(sroce_create_qp_req) == 88 && sizeof(sroce_create_srq_req) == 16);
static_assert(sizeof(sroce_create_wq_req) == 16 && sizeof(sroce_create_wq_resp) == 40);
static_assert(sizeof(sroce_create_srq_resp) == 40);

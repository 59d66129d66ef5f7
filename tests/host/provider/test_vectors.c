// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_vectors.c - srocedv_modify_cq_vector and srocedv_query_cq_vector
 * (libuser/cq.c, Documentation/rss.md) against a fake of the driver
 * method: the command names the CQ method with the CQ's handle, the handler
 * id goes in as given (0 for a query), the kernel's answer comes back, its
 * errno too; NULL arguments are EINVAL and a CQ of another provider is
 * EOPNOTSUPP, both without a system call.
 */
#include <errno.h>
#include <string.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "check.h"
#include "infiniband/srocedv.h"
#include "sroce.h"

extern int (*fake_method_ioctl)(struct ibv_context *ctx, void *cmd);

struct vector_cmd {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[3];
};

static struct vector_cmd seen;
static int calls, answer_err;
static uint32_t answer_hid;

static int fake_vector_method(struct ibv_context *ctx, void *cmd)
{
	const struct vector_cmd *c = cmd;

	calls++;
	memcpy(&seen, c, sizeof(seen));
	if (answer_err)
		return answer_err;
	for (unsigned int i = 0; i < c->hdr.num_attrs; i++)
		if (c->attrs[i].attr_id == SROCE_ATTR_CQ_VECTOR_CUR)
			memcpy((void *)(uintptr_t)c->attrs[i].data, &answer_hid, sizeof(answer_hid));
	return 0;
}

/* The attribute attr_id of the last command, or NULL. */
static const struct ib_uverbs_attr *attr_of(uint16_t attr_id)
{
	for (unsigned int i = 0; i < seen.hdr.num_attrs && i < 3; i++)
		if (seen.attrs[i].attr_id == attr_id)
			return &seen.attrs[i];
	return NULL;
}

int main(void)
{
	struct ibv_context ctx = { 0 }, other = { .device = (struct ibv_device *)&other };
	struct ibv_cq cq = { .context = &ctx, .handle = 77 }, foreign = { .context = &other };
	const struct ib_uverbs_attr *a;
	uint32_t hid = 0;

	fake_method_ioctl = fake_vector_method;

	/* A move: the CQ method on the CQ's handle, the handler id as given. */
	answer_hid = SROCEDV_CQ_VECTOR(3);
	CHECK(srocedv_modify_cq_vector(&cq, SROCEDV_CQ_VECTOR(3)) == 0);
	CHECK(calls == 1);
	CHECK(seen.hdr.object_id == UVERBS_OBJECT_CQ && seen.hdr.method_id == SROCE_METHOD_CQ_VECTOR);
	CHECK(seen.hdr.length == sizeof(seen) && seen.hdr.num_attrs == 3);
	a = attr_of(SROCE_ATTR_CQ_VECTOR_CQ);
	CHECK(a && a->data == 77 && (a->flags & UVERBS_ATTR_F_MANDATORY));
	a = attr_of(SROCE_ATTR_CQ_VECTOR_HID);
	CHECK(a && a->len == sizeof(uint32_t) && a->data == 4);
	a = attr_of(SROCE_ATTR_CQ_VECTOR_CUR);
	CHECK(a && a->len == sizeof(uint32_t) && (a->flags & UVERBS_ATTR_F_MANDATORY));

	/* The default and "no change" go through as the seed encodes them. */
	CHECK(srocedv_modify_cq_vector(&cq, SROCEDV_CQ_VECTOR_DEFAULT) == 0);
	a = attr_of(SROCE_ATTR_CQ_VECTOR_HID);
	CHECK(a && a->data == SROCE_CQ_HID_DEFAULT);

	/* A query sends 0 and returns the kernel's answer. */
	answer_hid = SROCEDV_CQ_VECTOR(1);
	CHECK(srocedv_query_cq_vector(&cq, &hid) == 0 && hid == 2 && SROCEDV_CQ_VECTOR_NUM(hid) == 1);
	a = attr_of(SROCE_ATTR_CQ_VECTOR_HID);
	CHECK(a && a->data == SROCEDV_CQ_VECTOR_NO_CHANGE);

	/* The kernel's refusal is the caller's errno value. */
	answer_err = EINVAL;
	CHECK(srocedv_modify_cq_vector(&cq, SROCEDV_CQ_VECTOR(99)) == EINVAL);
	answer_err = EOPNOTSUPP; /* a kernel without the method */
	CHECK(srocedv_query_cq_vector(&cq, &hid) == EOPNOTSUPP);
	answer_err = 0;

	/* Refused before any system call. */
	calls = 0;
	CHECK(srocedv_modify_cq_vector(NULL, 1) == EINVAL);
	CHECK(srocedv_query_cq_vector(&cq, NULL) == EINVAL);
	CHECK(srocedv_query_cq_vector(NULL, &hid) == EINVAL);
	CHECK(srocedv_modify_cq_vector(&foreign, 1) == EOPNOTSUPP);
	CHECK(srocedv_query_cq_vector(&foreign, &hid) == EOPNOTSUPP);
	CHECK(calls == 0);

	printf("test_vectors: %d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}

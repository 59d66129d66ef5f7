// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_intf_threads.c - two threads posting SENDs through one locked
 * message table of one QP (libuser/intf_qp.c) while the test plays the
 * kernel's consumer: every WR arrives exactly once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "intf_fixture.h"

/* Two threads post through one locked table while a third consumes. */
struct post_args {
	struct fake_qp_rq *q;
	const struct srocedv_qp_ops_msg *msg;
	uint64_t base;
	int n;
};

static void *poster(void *arg)
{
	struct post_args *a = arg;

	for (int i = 0; i < a->n;) {
		int err = a->msg->send(ibqp_of(a->q), (uintptr_t)payload, 8, 1, a->base + (uint64_t)i);

		if (!err)
			i++;
		else if (err != ENOMEM)
			return (void *)1;
	}
	return NULL;
}

static void test_threads(void)
{
	static struct fake_qp_rq q;
	static uint8_t seen[2][20000];
	const struct srocedv_qp_ops_msg *msg;
	struct post_args a[2];
	pthread_t t[2];
	uint32_t done = 0;
	int total = 2 * 20000;

	qp_init(&q, IBV_QPT_RC);
	msg = query(ibqp_of(&q), SROCEDV_INTF_QP_MSG, 0, 0);
	CHECK(msg != NULL);
	if (!msg)
		return;
	for (int i = 0; i < 2; i++) {
		a[i] = (struct post_args){ .q = &q, .msg = msg, .base = (uint64_t)i << 32, .n = 20000 };
		pthread_create(&t[i], NULL, poster, &a[i]);
	}
	/* The kernel's side: read each published WQE, then free its slot. */
	while ((int)done < total) {
		uint32_t prod = __atomic_load_n(&q.f.hdr.producer, __ATOMIC_ACQUIRE);

		for (; done != prod; done++) {
			const struct sroce_wqe *w = (const void *)slot(&q.f, done);
			uint64_t who = w->wr_id >> 32, i = w->wr_id & 0xffffffff;

			if (who < 2 && i < 20000)
				seen[who][i]++;
		}
		__atomic_store_n(&q.f.hdr.consumer, done, __ATOMIC_RELEASE);
	}
	for (int i = 0; i < 2; i++) {
		void *rc;

		pthread_join(t[i], &rc);
		CHECK(rc == NULL);
	}
	for (int i = 0; i < 20000; i++)
		CHECK(seen[0][i] == 1 && seen[1][i] == 1);
	CHECK(srocedv_release_intf(&sctx.vctx.context, (void *)msg) == 0);
}

int main(void)
{
	test_threads();
	printf("provider intf_threads: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}

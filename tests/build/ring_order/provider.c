// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The provider's side for kernel.cpp: post_send's steps (sroce_wq_next,
 * sroce_wq_publish from libuser/ring.c) and sroce_poll_cq (libuser/cq.c)
 * on rings kernel.cpp serves from another thread. Returns the number of
 * completions that came back wrong.
 */
#include <sched.h>
#include <string.h>

#include "sroce.h"

static void ring_at(struct sroce_uring *r, void *mem, uint32_t log_size, uint32_t stride)
{
	memset(r, 0, sizeof(*r));
	r->hdr = mem;
	r->entries = (uint8_t *)mem + SROCE_RING_ENTRIES_OFFSET;
	r->mask = (1u << log_size) - 1;
	r->stride = stride;
	sroce_spin_init(&r->lock);
}

int provider_run(void *wq_mem, void *cq_mem, uint32_t log_size, uint32_t count)
{
	struct sroce_uring wq;
	struct sroce_cq cq;
	uint32_t polled = 0;
	int errors = 0;

	ring_at(&wq, wq_mem, log_size, sizeof(struct sroce_wqe));
	memset(&cq, 0, sizeof(cq));
	ring_at(&cq.ring, cq_mem, log_size, sizeof(struct sroce_cqe));
	while (polled < count) {
		struct sroce_wqe *wqe = wq.idx < count ? sroce_wq_next(&wq) : NULL;
		struct ibv_wc wc[4];
		int n;

		if (wqe) {
			*wqe = (struct sroce_wqe){ .wr_id = wq.idx, .opcode = IBV_WR_SEND };
			wq.idx++;
			sroce_wq_publish(&wq);
			continue;
		}
		n = sroce_poll_cq(&cq.vcq.cq, 4, wc);
		if (!n)
			sched_yield();
		for (int i = 0; i < n; i++, polled++)
			if (wc[i].wr_id != polled || wc[i].byte_len != polled)
				errors++;
	}
	return errors;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* server.c - sroce_integrity's server: answers and checks each request. */
#include "integrity.h"

int server_loop(void)
{
	for (;;) {
		struct msg *h, r = { .type = M_REPLY };
		uint8_t *p;
		uint32_t n;
		int i = next_msg(&h, &p, &n);
		int64_t bad = -1;

		if (i < 0)
			return -1;
		struct msg q = *h;

		if (post_recv(i))
			return fail_msg("post_recv");
		if ((q.type == M_CHECK || q.type == M_FILL) && (q.len > REGION || q.off > REGION - q.len))
			return fail_msg("bad request: off %" PRIu64 " len %" PRIu64, q.off, q.len);
		switch (q.type) {
		case M_CHECK:
			bad = verify(m.region + q.off, q.len, q.seed, 0);
			if (bad < 0) {
				/* Nothing else in the region moved. */
				fill(m.shadow + q.off, q.len, q.seed, 0);
				for (uint64_t j = 0; j < REGION; j++)
					if (m.region[j] != m.shadow[j]) {
						bad = (int64_t)j;
						r.status = 2;
						break;
					}
			} else {
				r.status = 1;
			}
			break;
		case M_FILL:
			fill(m.region + q.off, q.len, q.seed, 0);
			fill(m.shadow + q.off, q.len, q.seed, 0);
			break;
		case M_DATA:
			if (n != q.len)
				r.status = 3, bad = n;
			else if ((bad = verify(p, q.len, q.seed, 0)) >= 0)
				r.status = 1;
			break;
		case M_PULL: {
			struct ibv_sge sge[4];
			int k = scatter(q.len, sge, 0);
			uint64_t from = 0;
			struct msg d = { .type = M_DATA, .len = q.len, .seed = q.seed };

			for (int s = 0; s < k; s++) {
				fill((uint8_t *)(uintptr_t)sge[s].addr, sge[s].length, q.seed, from);
				from += sge[s].length;
			}
			if (send_msg(&d, sge, k))
				return -1;
			continue;
		}
		case M_DONE:
			if (*m.counter != q.value)
				r.status = 4, bad = (int64_t)*m.counter;
			break;
		default:
			r.status = 5;
		}
		if (r.status) {
			printf("FAIL: request type %u of %" PRIu64 " B at %" PRIu64 ": status %u, byte/value %" PRId64
			       "\n", q.type, q.len, q.off, r.status, bad);
			failures++;
		}
		r.value = (uint64_t)bad;
		if (send_msg(&r, NULL, 0))
			return -1;
		if (q.type == M_DONE) {
			/* The reply's send has completed: the client may go (see
			 * wait_server_finished). */
			__atomic_store_n(m.finished, FINISHED, __ATOMIC_RELEASE);
			printf("%s: server checked every request, %d error(s)\n", failures ? "FAIL" : "ok", failures);
			return failures ? -1 : 0;
		}
	}
}

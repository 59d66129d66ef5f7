/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the files of sroce_selftest.ko (see main.c). */
#ifndef SROCE_SELFTEST_H
#define SROCE_SELFTEST_H

#include <linux/seq_file.h>
#include <linux/types.h>

/* A run of the glue's tests: one line per check into m. */
struct st_ctx {
	struct seq_file *m;
	int passed;
	int failed;
};

#define ST_CHECK(ctx, name, cond, fmt, ...)                                              \
	do {                                                                             \
		if (cond) {                                                              \
			seq_printf((ctx)->m, "ok %s\n", name);                           \
			(ctx)->passed++;                                                 \
		} else {                                                                 \
			seq_printf((ctx)->m, "FAIL %s: " fmt "\n", name, ##__VA_ARGS__); \
			(ctx)->failed++;                                                 \
		}                                                                        \
	} while (0)

/* glue.c: the tests of sroce.ko's packets, batches, timers, work and CRC;
 * st_fill writes the byte pattern they compare against. */
void st_glue(struct st_ctx *ctx);
void st_fill(u8 *p, unsigned int len, unsigned int start);

/* zero_copy.c: zero-copy send's fragments (kmod/linux/pkt.c). */
void st_zero_copy(struct st_ctx *ctx);

/* train.c: packet trains (kmod/linux/train.c) against the kernel's GSO. */
void st_train(struct st_ctx *ctx);

/* ud.c: the arguments written to ud_send (IBDEV first), to ud_drain (IBDEV). */
int st_ud_send(const char *args);
int st_ud_drain(const char *args);

#endif /* SROCE_SELFTEST_H */

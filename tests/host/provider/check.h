/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* CHECK for the provider's host tests: counts, prints each failure, and
 * main returns `failures ? 1 : 0`. */
#ifndef SROCE_PROVIDER_TEST_CHECK_H
#define SROCE_PROVIDER_TEST_CHECK_H

#include <stdio.h>

static int failures, checks;

#define CHECK(cond)                                                                    \
	do {                                                                           \
		checks++;                                                              \
		if (!(cond)) {                                                         \
			failures++;                                                    \
			fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                      \
	} while (0)

#endif

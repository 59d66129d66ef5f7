/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* For the provider's host tests: CHECK counts and prints each failure (main
 * returns `failures ? 1 : 0`), rnd() draws inputs. */
#ifndef SROCE_PROVIDER_TEST_CHECK_H
#define SROCE_PROVIDER_TEST_CHECK_H

#include <stdint.h>
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

/* xorshift64: reproducible random inputs. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static inline uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

#endif

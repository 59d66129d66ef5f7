// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_spinlock.c - the provider's ring lock (sroce_spinlock, sroce.h):
 * trylock's contract is pthread_spin_trylock's (0 taken, EBUSY held), and
 * four threads, started together, incrementing a counter in two steps
 * under it lose no increment and never find another thread inside.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "check.h"
#include "sroce.h"

enum { THREADS = 4, ROUNDS = 200000 };

static struct sroce_spinlock lock;
static uint64_t counter;      /* read and written in two steps: only the lock makes it whole */
static int inside;            /* threads in the critical section */
static int overlaps;
static pthread_barrier_t start;

static void *worker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	for (int i = 0; i < ROUNDS; i++) {
		sroce_spin_lock(&lock);
		if (__atomic_fetch_add(&inside, 1, __ATOMIC_RELAXED))
			__atomic_fetch_add(&overlaps, 1, __ATOMIC_RELAXED);
		/* A read, a pause, a write: a window for a second thread. */
		uint64_t v = __atomic_load_n(&counter, __ATOMIC_RELAXED);
		for (volatile int k = 0; k < 8; k++)
			;
		__atomic_store_n(&counter, v + 1, __ATOMIC_RELAXED);
		__atomic_fetch_sub(&inside, 1, __ATOMIC_RELAXED);
		sroce_spin_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];

	sroce_spin_init(&lock);
	CHECK(sroce_spin_trylock(&lock) == 0);
	CHECK(sroce_spin_trylock(&lock) == EBUSY);
	sroce_spin_unlock(&lock);
	CHECK(sroce_spin_trylock(&lock) == 0);
	sroce_spin_unlock(&lock);

	pthread_barrier_init(&start, NULL, THREADS);
	for (int i = 0; i < THREADS; i++)
		CHECK(pthread_create(&t[i], NULL, worker, NULL) == 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK(counter == (uint64_t)THREADS * ROUNDS);
	CHECK(overlaps == 0);
	CHECK(sroce_spin_trylock(&lock) == 0);

	printf("spinlock: %d checks, %d failures (%llu increments)\n", checks, failures,
	       (unsigned long long)counter);
	return failures ? 1 : 0;
}

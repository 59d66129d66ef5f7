/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * env.h - the only way out of the sroce core to the operating system.
 *
 * The core (kmod/core, freestanding C++) calls nothing but these functions.
 * They are implemented twice: by the kernel glue (kmod/linux/env.c) and by the
 * user-space test host (tests/host/env_host.cpp). The build checks, with
 * `nm -u` on the core objects, that nothing else is referenced.
 *
 * Plain C, no includes: both sides see the same declarations.
 */
#ifndef SROCE_ENV_H
#define SROCE_ENV_H

#ifdef __cplusplus
extern "C" {
#endif

/* Memory. sroce_env_zalloc returns zeroed memory or NULL. `atomic` must be
 * non-zero when called from a context that may not sleep (softirq, under a
 * spinlock). */
void *sroce_env_zalloc(unsigned long size, int atomic);
void sroce_env_free(void *ptr);

/* Spinlocks, safe in any context (they disable interrupts): the receive path
 * runs in softirq and shares state with process context. lock() returns the
 * saved interrupt state that unlock() restores. */
struct sroce_env_spinlock;
struct sroce_env_spinlock *sroce_env_spin_create(void);
void sroce_env_spin_destroy(struct sroce_env_spinlock *lock);
unsigned long sroce_env_spin_lock(struct sroce_env_spinlock *lock);
void sroce_env_spin_unlock(struct sroce_env_spinlock *lock, unsigned long flags);

/* Monotonic time in nanoseconds. */
unsigned long long sroce_env_now_ns(void);

/* Log levels follow the kernel's (KERN_ERR = 3 ... KERN_DEBUG = 7). */
enum sroce_env_log_level {
	SROCE_LOG_ERR = 3,
	SROCE_LOG_WARNING = 4,
	SROCE_LOG_INFO = 6,
	SROCE_LOG_DEBUG = 7,
};
/* Rate-limited: bad input from the wire or from user space must never flood
 * the log. */
void sroce_env_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An internal invariant broke (a core bug, never bad input). The kernel glue
 * WARNs once per call site; the host aborts the test. */
void sroce_env_warn(const char *file, int line, const char *what);

/* CRC-32 exactly as the kernel's crc32_le: reflected IEEE polynomial
 * (0xEDB88320), no inversion inside; the ICRC seeds and inverts itself. */
unsigned int sroce_env_crc32_le(unsigned int crc, const void *p, unsigned long len);

#ifdef __cplusplus
}
#endif

#endif /* SROCE_ENV_H */

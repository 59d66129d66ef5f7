// SPDX-License-Identifier: GPL-2.0
/*
 * env.c - the kernel implementation of core/env.h: the only OS services the
 * C++ core uses.
 */
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/printk.h>
#include <linux/ratelimit.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "env.h"

void *sroce_env_zalloc(unsigned long size, int atomic)
{
	/* kvzalloc may sleep; atomic callers get slab memory only. */
	return atomic ? kzalloc(size, GFP_ATOMIC) : kvzalloc(size, GFP_KERNEL);
}

void sroce_env_free(void *ptr)
{
	kvfree(ptr);
}

struct sroce_env_spinlock {
	spinlock_t lock;
};

struct sroce_env_spinlock *sroce_env_spin_create(void)
{
	struct sroce_env_spinlock *l = kzalloc(sizeof(*l), GFP_KERNEL);

	if (l)
		spin_lock_init(&l->lock);
	return l;
}

void sroce_env_spin_destroy(struct sroce_env_spinlock *l)
{
	kfree(l);
}

unsigned long sroce_env_spin_lock(struct sroce_env_spinlock *l)
{
	unsigned long flags;

	spin_lock_irqsave(&l->lock, flags);
	return flags;
}

void sroce_env_spin_unlock(struct sroce_env_spinlock *l, unsigned long flags)
{
	spin_unlock_irqrestore(&l->lock, flags);
}

unsigned long long sroce_env_now_ns(void)
{
	return ktime_get_ns();
}

void sroce_env_log(int level, const char *fmt, ...)
{
	static DEFINE_RATELIMIT_STATE(rs, 5 * HZ, 10);
	struct va_format vaf;
	va_list args;

	if (!__ratelimit(&rs))
		return;
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	switch (level) {
	case SROCE_LOG_ERR:
		pr_err("sroce: %pV\n", &vaf);
		break;
	case SROCE_LOG_WARNING:
		pr_warn("sroce: %pV\n", &vaf);
		break;
	case SROCE_LOG_INFO:
		pr_info("sroce: %pV\n", &vaf);
		break;
	default:
		pr_debug("sroce: %pV\n", &vaf);
		break;
	}
	va_end(args);
}

void sroce_env_warn(const char *file, int line, const char *what)
{
	/* A core invariant broke: one WARNING with a backtrace, then errors. */
	WARN_ONCE(1, "sroce: %s:%d: %s\n", file, line, what);
	pr_err_ratelimited("sroce: %s:%d: %s\n", file, line, what);
}


// SPDX-License-Identifier: GPL-2.0
/*
 * env.c - the kernel implementation of core/env.h: the only OS services the
 * C++ core uses.
 */
#include <linux/ktime.h>
#include <linux/llist.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/printk.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/ratelimit.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "env.h"
#include "sroce.h"

void *sroce_env_zalloc(unsigned long size, int atomic)
{
	/* kvzalloc may sleep; atomic callers get slab memory only. */
	return atomic ? kzalloc(size, GFP_ATOMIC) : kvzalloc(size, GFP_KERNEL);
}

/* Called in the user's own verb, so the charge lands on its memcg. Past
 * its limit the verb fails with ENOMEM: RETRY_MAYFAIL keeps the memcg (and
 * the page allocator) from OOM-killing instead, NOWARN the log quiet. */
void *sroce_env_zalloc_user(unsigned long size)
{
	return kvzalloc(size, GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
}

/* vfree may sleep (unmapping, purging lazy areas) unless in_interrupt(): a
 * spinlock held with interrupts off in process context is not enough. */
void sroce_env_free(void *ptr)
{
	kvfree(ptr);
}

struct sroce_env_rcu_free {
	struct rcu_head rcu;
	void *ptr;
};
static_assert(sizeof(struct sroce_env_rcu_free) <= sizeof(struct sroce_env_rcu_head));

/* Softirq (RCU callbacks): vfree defers a vmalloc block by itself there. */
static void sroce_env_rcu_free_cb(struct rcu_head *rcu)
{
	kvfree(container_of(rcu, struct sroce_env_rcu_free, rcu)->ptr);
}

void sroce_env_free_rcu(void *ptr, struct sroce_env_rcu_head *head)
{
	struct sroce_env_rcu_free *f = (struct sroce_env_rcu_free *)head;

	f->ptr = ptr;
	call_rcu(&f->rcu, sroce_env_rcu_free_cb);
}

/* vmalloc'ed blocks whose free came where sleeping is not allowed. 6.1
 * does not export vfree_atomic, so the block carries its own list node
 * (it is at least a page) until the work frees it. */
static LLIST_HEAD(sroce_env_free_list);

static void sroce_env_free_work_fn(struct work_struct *work)
{
	struct llist_node *n, *next;

	llist_for_each_safe(n, next, llist_del_all(&sroce_env_free_list))
		vfree(n);
}

static DECLARE_WORK(sroce_env_free_work, sroce_env_free_work_fn);

void sroce_env_free_deferred(void *ptr)
{
	if (!ptr)
		return;
	if (!is_vmalloc_addr(ptr)) {
		kfree(ptr); /* slab frees never sleep */
		return;
	}
	if (llist_add(ptr, &sroce_env_free_list))
		schedule_work(&sroce_env_free_work);
}

/* Module exit, after every device is gone: nothing may still be queued. */
void sroce_env_exit(void)
{
	rcu_barrier(); /* sroce_env_free_rcu's callbacks are module code */
	flush_work(&sroce_env_free_work);
}

/* The key byte of memory keys, as rxe draws it. */
unsigned int sroce_env_random_u32(void)
{
	return get_random_u32();
}

unsigned int sroce_env_cpu(void)
{
	return raw_smp_processor_id();
}

unsigned int sroce_env_nr_cpus(void)
{
	return nr_cpu_ids;
}

struct sroce_env_spinlock {
	spinlock_t lock;
};

/*
 * One lockdep class per lock kind: every core lock is initialised here, so
 * without this they would all share spin_lock_init's one class, nested core
 * locks (QP -> CQ) would look like recursive locking and real inversions
 * between kinds would be invisible. The order itself is env.h's enum.
 */
static struct lock_class_key sroce_env_lock_keys[SROCE_LOCK_KINDS];
static const char *const sroce_env_lock_names[SROCE_LOCK_KINDS] = {
	[SROCE_LOCK_SQ_POLLER] = "sroce_sq_poller",
	[SROCE_LOCK_QP] = "sroce_qp",
	[SROCE_LOCK_SRQ] = "sroce_srq",
	[SROCE_LOCK_WQ] = "sroce_wq",
	[SROCE_LOCK_CQ] = "sroce_cq",
	[SROCE_LOCK_KEY_TABLE] = "sroce_key_table",
	[SROCE_LOCK_OBJECT_TABLE] = "sroce_object_table",
	[SROCE_LOCK_ID_ALLOC] = "sroce_id_alloc",
	[SROCE_LOCK_PORT] = "sroce_port",
	[SROCE_LOCK_TEST] = "sroce_test",
};

struct sroce_env_spinlock *sroce_env_spin_create(enum sroce_env_lock_kind kind)
{
	struct sroce_env_spinlock *l;

	if (WARN_ON_ONCE((unsigned int)kind >= SROCE_LOCK_KINDS))
		return NULL;
	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return NULL;
	spin_lock_init(&l->lock);
	lockdep_set_class_and_name(&l->lock, &sroce_env_lock_keys[kind], sroce_env_lock_names[kind]);
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


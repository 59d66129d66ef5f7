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
/* Like sroce_env_zalloc(size, 0) (may sleep), for memory a user process
 * makes the core hold (a user QP's private SQ copy, a user CQ's arrays):
 * charged to that process's memory cgroup (__GFP_ACCOUNT), so the kernel
 * memory a user can pin through sroce counts against its limit. Call it
 * in the process's own context (its verb). */
void *sroce_env_zalloc_user(unsigned long size);
/* Frees memory from either allocator. Blocks larger than a page may come
 * from vmalloc, whose free may sleep: call this in process context with no
 * spinlock held. */
void sroce_env_free(void *ptr);
/* Frees in any context (under a spinlock, softirq): memory vfree would have
 * to release is handed to a work item instead. For objects whose last
 * reference may drop anywhere (an Mr held by a packet in flight). */
void sroce_env_free_deferred(void *ptr);

/* Storage for sroce_env_free_rcu, inside the block it frees. */
struct sroce_env_rcu_head {
	void *opaque[3];
};
/* Frees ptr (sroce_env_zalloc memory) after an RCU grace period: a reader
 * inside an RCU read-side section (every batch is one, see below) that
 * found ptr without a lock may still read it until its section ends. head
 * lies in ptr's block; nothing touches the block after this call. Any
 * context. Module exit waits for the pending ones (sroce_env_exit). */
void sroce_env_free_rcu(void *ptr, struct sroce_env_rcu_head *head);

/* Random bits from the kernel's generator (get_random_u32): keys that a
 * peer or another process must not predict. Any context. The host's stream
 * is seeded, so a simulator run replays. */
unsigned int sroce_env_random_u32(void);

/* The CPU the caller runs on (raw_smp_processor_id), in [0, sroce_env_nr_cpus()):
 * which per-CPU shard to count in. A hint: the caller may move at once, so
 * what it indexes must stay correct from any CPU. Any context. */
unsigned int sroce_env_cpu(void);
/* The number of CPU ids (nr_cpu_ids, possible CPUs): fixed after boot. */
unsigned int sroce_env_nr_cpus(void);

/* Lock kinds, in lock order: holding a lock of one kind, the core takes
 * only locks of a later kind (a larger value), and never a second lock of
 * the same kind. This enum is the one statement of the order
 * (Documentation/architecture.md, "Lock order", explains each edge). The
 * kernel gives each kind its own lockdep class; the host build checks the
 * order on every acquisition and fails the test on an inversion. */
enum sroce_env_lock_kind {
	SROCE_LOCK_SQ_POLLER = 0, /* SqPoller: its list of polled QPs */
	SROCE_LOCK_QP,            /* Qp: queue and transport state */
	SROCE_LOCK_SRQ,           /* Srq: its receive ring */
	SROCE_LOCK_WQ,            /* Wq: its receive ring and state */
	SROCE_LOCK_CQ,            /* CompletionQueue: its ring and owners */
	SROCE_LOCK_KEY_TABLE,     /* MemoryKeyTable: the key entries */
	SROCE_LOCK_OBJECT_TABLE,  /* ObjectTable<T>: number -> object slots */
	SROCE_LOCK_ID_ALLOC,      /* IdAllocator: its bitmap */
	SROCE_LOCK_PORT,          /* Device: the port state */
	SROCE_LOCK_TEST,          /* host tests of ktl locks only */
	SROCE_LOCK_KINDS
};

/* Spinlocks, safe in any context (they disable interrupts): the receive path
 * runs in softirq and shares state with process context. lock() returns the
 * saved interrupt state that unlock() restores. */
struct sroce_env_spinlock;
struct sroce_env_spinlock *sroce_env_spin_create(enum sroce_env_lock_kind kind);
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

/* The kernel's crc32_le: reflected IEEE polynomial 0xEDB88320, no pre- or
 * post-inversion inside (the caller seeds with ~0 and inverts the result). */
unsigned int sroce_env_crc32_le(unsigned int crc, const void *p, unsigned long len);


/* ---------------------------------------------------------------------- */
/* Data path services (transport). See Documentation/transport.md.
 *
 * Every core entry point that can send packets or raise events takes a
 * batch from its caller. The core never transmits or calls an event handler
 * itself: it queues packets and events on the batch under its own locks,
 * and the caller flushes the batch after the core call has returned, with
 * no core lock held. The glue flushes inside an RCU read-side section, so a
 * destroy that waits for RCU after the core object is dead knows no event
 * for it is still on its way. */
struct sroce_env_batch;

/* A packet buffer (an skb in the kernel). Offsets count from the first byte
 * of the IP header. */
struct sroce_env_pkt;

/* A cached route to a peer: the glue's resolved dst/neighbour plus the L3
 * addressing the core writes into headers (struct sroce_core_path_info in
 * core.h). Reference-counted by the glue; the core drops its reference with
 * sroce_env_path_put. */
struct sroce_env_path;
void sroce_env_path_put(struct sroce_env_path *path);

/* Allocates a packet with `len` writable linear bytes for the IP header
 * onwards (link-layer headroom is the glue's business). *data receives the
 * buffer. Usable in atomic context; NULL when out of memory. */
struct sroce_env_pkt *sroce_env_pkt_alloc(struct sroce_env_path *path, unsigned int len,
					  unsigned char **data);
void sroce_env_pkt_free(struct sroce_env_pkt *pkt);
/* Hands pkt over for transmission on path, no later than when the batch is
 * flushed. Consumes pkt and takes its own route reference. The packets of
 * one path leave in the order they were handed over, whichever batches
 * they went on: a batch may also send what another handed over, so a
 * QP's packets never pass each other between two contexts' flushes. */
void sroce_env_pkt_send(struct sroce_env_batch *b, struct sroce_env_path *path,
			struct sroce_env_pkt *pkt);
/* A received packet: its length and its linear head (at least the first
 * *linear bytes are readable at the returned pointer; may be fewer than the
 * total). */
const unsigned char *sroce_env_pkt_head(const struct sroce_env_pkt *pkt, unsigned int *linear,
					unsigned int *total);
/* Copies [off, off + len) of a packet, across fragments; -EFAULT if out of
 * range. */
int sroce_env_pkt_read(const struct sroce_env_pkt *pkt, unsigned int off, void *dst,
		       unsigned int len);
/* crc32_le (same convention as sroce_env_crc32_le) continued over
 * [off, off + len) of a packet, across fragments. */
unsigned int sroce_env_pkt_crc32(const struct sroce_env_pkt *pkt, unsigned int off,
				 unsigned int len, unsigned int crc);

/* Zero-copy send (transport.md, "Zero-copy send"). A packet whose linear
 * part holds only its headers takes its payload as page fragments:
 * sroce_env_pkt_add_frag appends the len bytes at kva, which lie inside one
 * page of a zero-copy MR (sroce_core_mr_init.zero_copy), and holds a
 * reference on that page until the packet is freed. The bytes are read
 * when the packet leaves, and the page stays allocated even if the MR is
 * released before that. At most SROCE_ENV_PKT_FRAGS fragments: -ENOSPC
 * beyond; -EINVAL when kva and len are not inside one such page. Then
 * sroce_env_pkt_add_tail appends the packet's last len bytes (pad and
 * ICRC, at most 8) in memory of the env's and returns where to write them;
 * NULL: no memory (free the packet). Usable in atomic context. */
#define SROCE_ENV_PKT_FRAGS 16
int sroce_env_pkt_add_frag(struct sroce_env_pkt *pkt, const void *kva, unsigned int len);
unsigned char *sroce_env_pkt_add_tail(struct sroce_env_pkt *pkt, unsigned int len);

/* Raises an event when the batch is flushed. owner is the opaque pointer
 * the glue gave when it created the object (ib_cq, ib_qp, ib_srq). kind is
 * SROCE_ENV_EVENT_COMP (the CQ's completion handler) or an enum
 * ib_event_type value (IB_EVENT_CQ_ERR, IB_EVENT_QP_FATAL, ...). */
#define SROCE_ENV_EVENT_COMP (-1)
void sroce_env_event(struct sroce_env_batch *b, void *owner, int kind);
/* A batch holds this many distinct (owner, kind) events; repeats of one
 * are free. More is a core bug (the glue warns once and drops the event).
 * The core guarantees it by acting on at most one QP per batch: every
 * entry point (a doorbell, a modify, one received packet, a QP's timer or
 * work, one target of an SQ poller pass) raises at most the events of one
 * QP, its two CQs and its SRQ, fewer than a dozen kinds. A loop over many
 * QPs flushes a batch per QP (SqPoller::poll_once). */
#define SROCE_ENV_BATCH_EVENTS 32

/* Receive steering (Documentation/rss.md, "Completion vectors"): a received
 * packet whose receive completes in the CQ cq_owner (the owner the glue gave
 * the CQ) may be received on the CPU of that CQ's completion vector rather
 * than here. Nonzero: the env took pkt and hands it back through
 * sroce_core_rx_steered on that CPU (the core has only parsed its headers and
 * counted it: its ICRC is checked there). 0: the core receives it here.
 * Asked for the requests of RSS QPs, outside core locks. */
int sroce_env_rx_steer(struct sroce_env_pkt *pkt, void *cq_owner);

/* Receive steering of a connected user QP (transport.md, "Receive
 * steering"): pkt, a packet for the QP token stands for, may be received on
 * cpu rather than here. Nonzero: the env took pkt and hands it back, with
 * token, exactly once: through sroce_core_rx_steered on cpu (or where cpu's
 * queue runs, were it offlined), or through sroce_core_rx_steer_drop when
 * cpu's queue is full. 0: the core receives it here; the env returns 0 only
 * when must_queue is 0 and cpu is this CPU or no CPU online, or when the
 * device is going away, or cpu is not in allowed (the CPUs the owner may
 * run on, as sroce_core_qp_owner_seen gave them; NULL: none). must_queue: earlier packets of the QP wait in cpu's
 * queue, so this one must follow them even when cpu is this CPU (unless
 * cpu went offline). Asked outside core locks, in the packet's softirq. */
int sroce_env_rx_steer_qp(struct sroce_env_pkt *pkt, int cpu, int must_queue, void *token, const void *allowed);

/* One-shot timers. The callback runs in atomic context with a fresh batch
 * that the glue flushes after it returns. arm() re-arms a pending timer.
 * cancel() waits for a running callback (process context only). */
struct sroce_env_timer;
typedef void (*sroce_env_callback)(void *arg, struct sroce_env_batch *b);
struct sroce_env_timer *sroce_env_timer_create(sroce_env_callback fn, void *arg);
void sroce_env_timer_arm(struct sroce_env_timer *t, unsigned long long delay_ns);
void sroce_env_timer_cancel(struct sroce_env_timer *t);
void sroce_env_timer_destroy(struct sroce_env_timer *t); /* cancels first */

/* Deferred work: fn runs once, soon, in process context, with a fresh
 * batch. Queueing work that is already pending is a no-op; queueing it
 * while it runs makes it run once more. Used for kernel-consumer posts
 * (which may come in atomic context) and for long requester runs. */
struct sroce_env_work;
struct sroce_env_work *sroce_env_work_create(sroce_env_callback fn, void *arg);
void sroce_env_work_queue(struct sroce_env_work *w);
void sroce_env_work_cancel(struct sroce_env_work *w); /* waits; process context */
void sroce_env_work_destroy(struct sroce_env_work *w); /* cancels first */


/* ---------------------------------------------------------------------- */
/* Threads: the SQ poller (Documentation/sq-poller.md). The glue owns the
 * thread (a kthread), the core owns its loop. The sleep protocol is the
 * kernel's own:
 *
 *	sroce_env_thread_prepare_sleep(self);  // set_current_state(): a full
 *	                                       // barrier follows the store
 *	if (work or should_stop)
 *		sroce_env_thread_cancel_sleep(self);
 *	else
 *		sroce_env_thread_sleep(self);
 *
 * A waker that publishes work and then calls sroce_env_thread_wake never
 * loses the wake-up: a wake after prepare_sleep makes sleep return at once. */
struct sroce_env_thread;
typedef void (*sroce_env_thread_fn)(void *arg, struct sroce_env_thread *self);
/* Starts fn(arg, self) on a new thread (may sleep; NULL on failure). fn
 * returns once sroce_env_thread_should_stop says so. name is at most 15
 * characters (the task's comm). cpu >= 0: the thread runs on that CPU
 * (while it is online); -1: the glue confines it to the CPUs the module
 * parameter sq_poll_cpus allows. */
struct sroce_env_thread *sroce_env_thread_create(sroce_env_thread_fn fn, void *arg, const char *name, int cpu);
/* Makes should_stop true, wakes the thread, waits for fn to return and
 * frees the thread. Process context; never from the thread itself. */
void sroce_env_thread_stop(struct sroce_env_thread *t);
/* Called by the thread itself. */
int sroce_env_thread_should_stop(struct sroce_env_thread *self);
void sroce_env_thread_prepare_sleep(struct sroce_env_thread *self);
void sroce_env_thread_cancel_sleep(struct sroce_env_thread *self);
void sroce_env_thread_sleep(struct sroce_env_thread *self);
/* Busy-poll pause: lets the scheduler run others (cond_resched, cpu_relax). */
void sroce_env_thread_relax(struct sroce_env_thread *self);
/* Nonzero when other tasks wait for the calling thread's CPU (need_resched,
 * or more than one runnable task there): a thread polling without work
 * should sleep rather than spin. A hint; it may change at once. */
int sroce_env_thread_contended(struct sroce_env_thread *self);
/* Sleeps about ns (a timer, no wake-up by sroce_env_thread_wake): hands
 * the CPU to the other tasks there for that long. Any thread in process
 * context may nap (self may be NULL): SqPoller::sync waits so. */
void sroce_env_thread_nap(struct sroce_env_thread *self, unsigned long long ns);
/* Any context: wakes t if it sleeps or is about to (see above). */
void sroce_env_thread_wake(struct sroce_env_thread *t);
/* Runs fn(arg, b) in the calling thread (process context) with a fresh
 * batch and flushes it afterwards: how a core thread sends. fn must not
 * sleep. */
void sroce_env_run_batched(sroce_env_callback fn, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* SROCE_ENV_H */

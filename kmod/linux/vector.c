// SPDX-License-Identifier: GPL-2.0
/*
 * vector.c - completion vectors (seed 002-C): vector v of a device belongs
 * to the v-th CPU online when the device was added (its home). A CQ's
 * completion event runs on its vector's CPU: at once when the completion
 * was made there, else as the CQ's work on that CPU. The driver method
 * SROCE_METHOD_CQ_VECTOR (srocedv_modify_cq_vector) moves a CQ between
 * vectors; CPU hotplug moves the vectors of a CPU going offline to another
 * and back when it returns. The receives of an RSS QP's WQs are steered to
 * the CPU of the WQ's CQ (sroce_env_rx_steer), and the packets of a user
 * RC/UC QP to its owner's CPU (sroce_env_rx_steer_qp): a per-CPU queue
 * drained by that CPU's work. Documentation/rss.md, "Completion vectors";
 * Documentation/transport.md, "Receive steering".
 */
#define UVERBS_MODULE_NAME sroce_ib
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/uverbs_named_ioctl.h>

#include "sroce.h"

struct sroce_vector {
	int home;               /* the CPU the vector belongs to */
	int cpu;                /* where its events run: home unless it is offline */
	atomic_long_t events;   /* completion events delivered */
	atomic_long_t deferred; /* of them, queued from another CPU */
};

struct sroce_vectors {
	struct list_head node;  /* sroce_vector_sets, under sroce_vector_lock */
	unsigned int n;
	struct sroce_vector v[];
};

/* Every device's vectors, for hotplug. Taken inside cpus_read_lock or the
 * hotplug callbacks' own hold of the hotplug lock, never the other way. */
static LIST_HEAD(sroce_vector_sets);
static DEFINE_MUTEX(sroce_vector_lock);
static struct workqueue_struct *sroce_comp_wq;
static enum cpuhp_state sroce_cpuhp_state;

/* Steered packets waiting for their CPU, and what each CPU received. */
#define SROCE_STEER_QLEN 1024 /* about a veth's backlog, as local_q */
#define SROCE_STEER_BUDGET 64 /* packets per run, then requeue */
struct sroce_steer {
	struct sk_buff_head q;
	struct work_struct work;
	atomic_long_t rx_here;  /* RSS receives that stayed on this CPU */
	atomic_long_t qp_here;  /* a user QP's packets that arrived on its owner's CPU */
	atomic_long_t qp_in;    /* a user QP's, steered here from another */
	atomic_long_t qp_out;   /* a user QP's, steered from here to another */
	atomic_long_t rx_in;    /* steered here from another */
	atomic_long_t rx_out;   /* steered from here to another */
	atomic_long_t rx_full;  /* dropped: this CPU's queue was full */
};
static DEFINE_PER_CPU(struct sroce_steer, sroce_steers);

/* Off by default: under TCG it paid at 64 KiB and cost at 4 KiB
 * (Documentation/benchmarks.md, "Receive steering and packet trains"). */
static bool sroce_rx_steer;
module_param_named(rx_steer, sroce_rx_steer, bool, 0644);
MODULE_PARM_DESC(rx_steer, "Receive the packets of a user RC/UC QP on the CPU its owner posts from, not on the one they arrive on (default: N)");

/* The vectors on cpu, which is going offline, move to the next online CPU. */
static int sroce_cpu_offline(unsigned int cpu)
{
	struct sroce_vectors *vs;
	unsigned int i, to;

	to = cpumask_next(cpu, cpu_online_mask);
	if (to >= nr_cpu_ids)
		to = cpumask_first(cpu_online_mask);
	if (to == cpu || to >= nr_cpu_ids) /* the last CPU is never offlined */
		return 0;
	mutex_lock(&sroce_vector_lock);
	list_for_each_entry(vs, &sroce_vector_sets, node)
		for (i = 0; i < vs->n; i++)
			if (vs->v[i].cpu == cpu)
				WRITE_ONCE(vs->v[i].cpu, to);
	mutex_unlock(&sroce_vector_lock);
	return 0;
}

/* cpu is back: its own vectors return to it. */
static int sroce_cpu_online(unsigned int cpu)
{
	struct sroce_vectors *vs;
	unsigned int i;

	mutex_lock(&sroce_vector_lock);
	list_for_each_entry(vs, &sroce_vector_sets, node)
		for (i = 0; i < vs->n; i++)
			if (vs->v[i].home == cpu)
				WRITE_ONCE(vs->v[i].cpu, cpu);
	mutex_unlock(&sroce_vector_lock);
	return 0;
}

static void sroce_steer_work(struct work_struct *work);

int sroce_vectors_module_init(void)
{
	int ret, cpu;

	for_each_possible_cpu(cpu) {
		struct sroce_steer *s = per_cpu_ptr(&sroce_steers, cpu);

		skb_queue_head_init(&s->q);
		INIT_WORK(&s->work, sroce_steer_work);
	}

	/* Bound and per CPU: queue_work_on runs the event on that CPU. */
	sroce_comp_wq = alloc_workqueue("sroce_comp", WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	if (!sroce_comp_wq)
		return -ENOMEM;
	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "infiniband/sroce:online", sroce_cpu_online,
					sroce_cpu_offline);
	if (ret < 0) {
		destroy_workqueue(sroce_comp_wq);
		return ret;
	}
	sroce_cpuhp_state = ret;
	return 0;
}

/* After every device is gone: each steered packet held one, so the queues
 * are empty and their work done. */
void sroce_vectors_module_exit(void)
{
	cpuhp_remove_state_nocalls(sroce_cpuhp_state);
	destroy_workqueue(sroce_comp_wq);
}

int sroce_vectors_init(struct sroce_dev *sdev)
{
	struct sroce_vectors *vs;
	unsigned int n = 0;
	int cpu;

	cpus_read_lock();
	vs = kzalloc(struct_size(vs, v, num_online_cpus()), GFP_KERNEL);
	if (!vs) {
		cpus_read_unlock();
		return -ENOMEM;
	}
	for_each_online_cpu(cpu) {
		vs->v[n].home = cpu;
		vs->v[n].cpu = cpu;
		n++;
	}
	vs->n = n;
	mutex_lock(&sroce_vector_lock);
	list_add(&vs->node, &sroce_vector_sets);
	mutex_unlock(&sroce_vector_lock);
	cpus_read_unlock();
	sdev->vectors = vs;
	sdev->ibdev.num_comp_vectors = n;
	return 0;
}
SROCE_EXPORT_FOR_TESTS(sroce_vectors_init);

/* dealloc_driver: every CQ is gone, so no event reads the vectors. */
void sroce_vectors_free(struct sroce_dev *sdev)
{
	if (!sdev->vectors)
		return;
	mutex_lock(&sroce_vector_lock);
	list_del(&sdev->vectors->node);
	mutex_unlock(&sroce_vector_lock);
	kfree(sdev->vectors);
	sdev->vectors = NULL;
}
SROCE_EXPORT_FOR_TESTS(sroce_vectors_free);

static struct sroce_vector *sroce_cq_vector(struct sroce_cq *cq)
{
	struct sroce_vectors *vs = to_sdev(cq->ibcq.device)->vectors;

	/* vector < n: create_cq and the method check it. */
	return &vs->v[READ_ONCE(cq->vec.vector)];
}

static void sroce_cq_deliver(struct sroce_cq *cq)
{
	atomic_long_inc(&sroce_cq_vector(cq)->events);
	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

static void sroce_cq_comp_work(struct work_struct *work)
{
	struct sroce_cq *cq = container_of(work, struct sroce_cq, vec.work);

	/* Handlers run in softirq elsewhere (batch flushes): keep them there. */
	local_bh_disable();
	sroce_cq_deliver(cq);
	local_bh_enable();
}

void sroce_cq_vec_init(struct sroce_cq *cq, u32 vector)
{
	cq->vec.vector = vector;
	cq->vec.created = vector;
	INIT_WORK(&cq->vec.work, sroce_cq_comp_work);
}
SROCE_EXPORT_FOR_TESTS(sroce_cq_vec_init);

void sroce_cq_vec_cancel(struct sroce_cq *cq)
{
	cancel_work_sync(&cq->vec.work);
}

/* One event per arm (the core disarms as it raises one), so a work still
 * pending when the next comes needs no second run: the handler polls. */
void sroce_cq_comp_event(struct sroce_cq *cq)
{
	struct sroce_vector *v = sroce_cq_vector(cq);
	int cpu = READ_ONCE(v->cpu);

	/* raw_: in process context a migration at worst defers needlessly. */
	if (cpu == raw_smp_processor_id()) {
		sroce_cq_deliver(cq);
		return;
	}
	atomic_long_inc(&v->deferred);
	queue_work_on(cpu, sroce_comp_wq, &cq->vec.work);
}

/* Softirq (a received packet), outside core locks: the skb goes to cpu's
 * queue, holding a reference on its device until that CPU has received it.
 * false when the queue is full: the caller drops it. */
static bool sroce_steer_queue(struct sk_buff *skb, int cpu, void *token)
{
	/* The device the packet arrived on (pkt.c), whose reference the
	 * steered-to CPU drops (sroce_steer_work); the caller took it. */
	struct sroce_steer *s = per_cpu_ptr(&sroce_steers, cpu), *here;
	unsigned long flags;
	bool queued = false;

	/* It leaves its receive softirq: a noref route is valid only there,
	 * and nothing later reads the route, conntrack or the netdev (not
	 * held; an answer is built from the QP's own path). */
	skb_dst_drop(skb);
	nf_reset_ct(skb);
	skb->dev = NULL;
	sroce_skb_cb(skb)->steer_token = token;
	spin_lock_irqsave(&s->q.lock, flags);
	if (skb_queue_len(&s->q) < SROCE_STEER_QLEN) {
		__skb_queue_tail(&s->q, skb);
		queued = true;
	}
	spin_unlock_irqrestore(&s->q.lock, flags);
	if (!queued) {
		atomic_long_inc(&s->rx_full);
		return false;
	}
	here = per_cpu_ptr(&sroce_steers, raw_smp_processor_id());
	atomic_long_inc(token ? &here->qp_out : &here->rx_out);
	queue_work_on(cpu, sroce_comp_wq, &s->work); /* cpu's own work drains cpu's queue */
	return true;
}

int sroce_env_rx_steer(struct sroce_env_pkt *pkt, void *cq_owner)
{
	struct sk_buff *skb = (struct sk_buff *)pkt; /* pkt.c: a packet is its skb */
	struct sroce_dev *sdev = sroce_skb_cb(skb)->sdev;
	int here = raw_smp_processor_id(), cpu = READ_ONCE(sroce_cq_vector(to_scq(cq_owner))->cpu);

	if (cpu == here || !ib_device_try_get(&sdev->ibdev)) {
		atomic_long_inc(&per_cpu_ptr(&sroce_steers, here)->rx_here);
		return 0;
	}
	if (!sroce_steer_queue(skb, cpu, NULL)) { /* UD: a message the receiver could not take is dropped */
		ib_device_put(&sdev->ibdev);
		sroce_env_pkt_free(pkt);
	}
	return 1;
}

int sroce_env_rx_steer_qp(struct sroce_env_pkt *pkt, int cpu, int must_queue, void *token, const void *allowed)
{
	struct sk_buff *skb = (struct sk_buff *)pkt;
	struct sroce_dev *sdev = sroce_skb_cb(skb)->sdev;

	/* The CPU is the owner's word (a ring hint, srocedv): any value is
	 * checked, against the CPUs online and those the owner may run on.
	 * One that fails is received here, even behind others waiting (only
	 * when a CPU goes offline, or the owner's CPUs change, under it). */
	if ((unsigned int)cpu >= nr_cpu_ids || !cpu_online(cpu) || !allowed ||
	    !cpumask_test_cpu(cpu, (const struct cpumask *)allowed))
		return 0;
	/* Once some wait, the rest follow them whatever changed since. */
	if (!must_queue && cpu == raw_smp_processor_id()) {
		atomic_long_inc(&per_cpu_ptr(&sroce_steers, cpu)->qp_here);
		return 0;
	}
	/* Unregistering: nothing may reach the core later; received here. */
	if (!ib_device_try_get(&sdev->ibdev))
		return 0;
	if (!sroce_steer_queue(skb, cpu, token)) {
		ib_device_put(&sdev->ibdev);
		sroce_core_rx_steer_drop(sdev->core, pkt, token);
	}
	return 1;
}

/* On the steered-to CPU (or, were it offlined since, wherever the workqueue
 * runs it: the packets are received all the same). */
static void sroce_steer_work(struct work_struct *work)
{
	struct sroce_steer *s = container_of(work, struct sroce_steer, work);
	struct sroce_env_batch b;
	struct sk_buff *skb;
	unsigned int n;

	for (n = 0; n < SROCE_STEER_BUDGET; n++) {
		struct sroce_dev *sdev;

		/* Bottom halves off from the dequeue, as in a received packet's
		 * softirq: none received here meanwhile can pass this one. */
		local_bh_disable();
		skb = skb_dequeue(&s->q);
		if (!skb) {
			local_bh_enable();
			break;
		}
		sdev = sroce_skb_cb(skb)->sdev;
		atomic_long_inc(sroce_skb_cb(skb)->steer_token ? &s->qp_in : &s->rx_in);
		sroce_batch_init(&b);
		sroce_core_rx_steered(sdev->core, (struct sroce_env_pkt *)skb, sroce_skb_cb(skb)->steer_token, &b);
		sroce_batch_flush(sdev, &b);
		local_bh_enable();
		ib_device_put(&sdev->ibdev);
	}
	if (!skb_queue_empty(&s->q))
		queue_work(sroce_comp_wq, work); /* stays on this CPU's pool */
}

/* <debugfs>/sroce/rx_cpus: per CPU, where steered receives ran: RSS's
 * (rss_here, steered_in/out, dropped_full, which counts both) and user
 * QPs' (qp_here, qp_in/out). */
int sroce_rx_cpus_show(struct seq_file *m, void *unused)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct sroce_steer *s = per_cpu_ptr(&sroce_steers, cpu);

		seq_printf(m, "cpu %d rss_here %ld steered_in %ld steered_out %ld dropped_full %ld qp_here %ld qp_in %ld qp_out %ld\n",
			   cpu, atomic_long_read(&s->rx_here), atomic_long_read(&s->rx_in), atomic_long_read(&s->rx_out),
			   atomic_long_read(&s->rx_full), atomic_long_read(&s->qp_here), atomic_long_read(&s->qp_in),
			   atomic_long_read(&s->qp_out));
	}
	return 0;
}

const struct cpumask *sroce_get_vector_affinity(struct ib_device *ibdev, int comp_vector)
{
	struct sroce_vectors *vs = to_sdev(ibdev)->vectors;

	if (comp_vector < 0 || comp_vector >= vs->n)
		return NULL;
	return cpumask_of(READ_ONCE(vs->v[comp_vector].cpu));
}

/* <debugfs>/sroce/<ibdev>/vectors: one line per vector. */
int sroce_vectors_show(struct seq_file *m, struct sroce_dev *sdev)
{
	struct sroce_vectors *vs = sdev->vectors;
	unsigned int i;

	for (i = 0; i < vs->n; i++)
		seq_printf(m, "vector %u cpu %d home %d events %ld deferred %ld\n", i, READ_ONCE(vs->v[i].cpu),
			   vs->v[i].home, atomic_long_read(&vs->v[i].events),
			   atomic_long_read(&vs->v[i].deferred));
	return 0;
}

static int UVERBS_HANDLER(SROCE_METHOD_CQ_VECTOR)(struct uverbs_attr_bundle *attrs)
{
	struct ib_cq *ibcq = uverbs_attr_get_obj(attrs, SROCE_ATTR_CQ_VECTOR_CQ);
	struct sroce_cq *cq = to_scq(ibcq);
	u32 hid = SROCE_CQ_HID_NO_CHANGE, cur;
	int err;

	if (uverbs_attr_is_valid(attrs, SROCE_ATTR_CQ_VECTOR_HID)) {
		err = uverbs_copy_from(&hid, attrs, SROCE_ATTR_CQ_VECTOR_HID);
		if (err)
			return err;
	}
	if (hid == SROCE_CQ_HID_DEFAULT)
		WRITE_ONCE(cq->vec.vector, cq->vec.created);
	else if (hid != SROCE_CQ_HID_NO_CHANGE && hid - 1 < ibcq->device->num_comp_vectors)
		/* An event already queued runs where it was sent: none is lost. */
		WRITE_ONCE(cq->vec.vector, hid - 1);
	else if (hid != SROCE_CQ_HID_NO_CHANGE)
		return -EINVAL;
	cur = READ_ONCE(cq->vec.vector) + 1;
	return uverbs_copy_to(attrs, SROCE_ATTR_CQ_VECTOR_CUR, &cur, sizeof(cur));
}

DECLARE_UVERBS_NAMED_METHOD(
	SROCE_METHOD_CQ_VECTOR,
	UVERBS_ATTR_IDR(SROCE_ATTR_CQ_VECTOR_CQ, UVERBS_OBJECT_CQ, UVERBS_ACCESS_READ, UA_MANDATORY),
	UVERBS_ATTR_PTR_IN(SROCE_ATTR_CQ_VECTOR_HID, UVERBS_ATTR_TYPE(u32), UA_OPTIONAL),
	UVERBS_ATTR_PTR_OUT(SROCE_ATTR_CQ_VECTOR_CUR, UVERBS_ATTR_TYPE(u32), UA_MANDATORY));

DECLARE_UVERBS_GLOBAL_METHODS(UVERBS_OBJECT_CQ, &UVERBS_METHOD(SROCE_METHOD_CQ_VECTOR));

/* modify_qp, in the owner's process: where it runs, the CPUs it may run on,
 * and whether rx_steer is on (read here: it applies to QPs modified after
 * a change), for the QP's receive steering. */
void sroce_qp_owner_seen(struct sroce_qp *qp)
{
	bool on = READ_ONCE(sroce_rx_steer);

	sroce_core_qp_owner_seen(qp->core, raw_smp_processor_id(), on ? cpumask_bits(current->cpus_ptr) : NULL,
				 cpumask_size());
}

/* The receive CPU method on a QP (abi: SROCE_METHOD_QP_RX_CPU). */
static int UVERBS_HANDLER(SROCE_METHOD_QP_RX_CPU)(struct uverbs_attr_bundle *attrs)
{
	struct ib_qp *ibqp = uverbs_attr_get_obj(attrs, SROCE_ATTR_QP_RX_CPU_QP);
	struct sroce_qp *qp;
	u32 in = SROCE_QP_RX_CPU_NO_CHANGE, cur;
	int err, pinned;

	/* The type first: an XRC target's handle is ib_core's bare ib_qp
	 * (__ib_open_qp), not in a sroce_qp. */
	if (ibqp->qp_type != IB_QPT_RC && ibqp->qp_type != IB_QPT_UC)
		return -EOPNOTSUPP;
	qp = to_sqp(ibqp);
	if (!qp->user)
		return -EOPNOTSUPP;
	if (uverbs_attr_is_valid(attrs, SROCE_ATTR_QP_RX_CPU_IN)) {
		err = uverbs_copy_from(&in, attrs, SROCE_ATTR_QP_RX_CPU_IN);
		if (err)
			return err;
	}
	if (in == SROCE_QP_RX_CPU_OWNER)
		sroce_core_qp_pin_rx_cpu(qp->core, -1);
	/* An online CPU the caller may run on: a cpuset keeps its receive work too. */
	else if (in != SROCE_QP_RX_CPU_NO_CHANGE && in - 1 < nr_cpu_ids && cpu_online(in - 1) &&
		 cpumask_test_cpu(in - 1, current->cpus_ptr))
		sroce_core_qp_pin_rx_cpu(qp->core, in - 1);
	else if (in != SROCE_QP_RX_CPU_NO_CHANGE)
		return -EINVAL;
	pinned = sroce_core_qp_pinned_rx_cpu(qp->core);
	cur = pinned < 0 ? SROCE_QP_RX_CPU_OWNER : pinned + 1;
	return uverbs_copy_to(attrs, SROCE_ATTR_QP_RX_CPU_CUR, &cur, sizeof(cur));
}

DECLARE_UVERBS_NAMED_METHOD(
	SROCE_METHOD_QP_RX_CPU,
	UVERBS_ATTR_IDR(SROCE_ATTR_QP_RX_CPU_QP, UVERBS_OBJECT_QP, UVERBS_ACCESS_WRITE, UA_MANDATORY),
	UVERBS_ATTR_PTR_IN(SROCE_ATTR_QP_RX_CPU_IN, UVERBS_ATTR_TYPE(u32), UA_OPTIONAL),
	UVERBS_ATTR_PTR_OUT(SROCE_ATTR_QP_RX_CPU_CUR, UVERBS_ATTR_TYPE(u32), UA_MANDATORY));

DECLARE_UVERBS_GLOBAL_METHODS(UVERBS_OBJECT_QP, &UVERBS_METHOD(SROCE_METHOD_QP_RX_CPU));

const struct uapi_definition sroce_cq_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE_NAMED(UVERBS_OBJECT_CQ),
	UAPI_DEF_CHAIN_OBJ_TREE_NAMED(UVERBS_OBJECT_QP),
	{},
};

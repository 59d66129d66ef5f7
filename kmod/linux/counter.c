// SPDX-License-Identifier: GPL-2.0
/*
 * counter.c - per-QP counters behind `rdma statistic qp` (ib_core's
 * rdma_counter: `rdma statistic qp set link DEV/1 auto type on`, or
 * `... bind link DEV/1 lqpn N`).
 *
 * The core keeps a counter block per QP (core/counters.h). An ib_core
 * counter counts what its QPs did while bound to it, so binding takes a
 * snapshot of the QP's block as a base, unbinding adds what the QP did since
 * to the counter's own sum, and a read is that sum plus what every QP still
 * bound did since its base. ib_core calls bind, unbind and update with
 * counter->lock held, and unbinds a QP before destroying it.
 *
 * ib_core treats counters as separate counter sets (as in mlx5): `rdma
 * statistic show link` adds every counter's value, running or released,
 * to the port's. The core's device block counts everything, so the port's
 * value (stats.c) is the device's minus what counters counted:
 * sroce_counter_counted().
 */
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_counter.h>

#include "sroce.h"

/* The driver side of one rdma_counter (it has no private pointer: the
 * device keeps a list, counters are few). */
struct sroce_counter {
	struct list_head node;          /* sdev->counters */
	struct rdma_counter *counter;
	struct list_head qps;           /* struct sroce_qp.counter_node */
	unsigned long long sum[SROCE_CNT_MAX]; /* from QPs no longer bound */
};

static struct sroce_counter *sroce_counter_find(struct sroce_dev *sdev, struct rdma_counter *counter)
{
	struct sroce_counter *c;

	lockdep_assert_held(&sdev->counters_lock);
	list_for_each_entry(c, &sdev->counters, node)
		if (c->counter == counter)
			return c;
	return NULL;
}

/* The driver side is made at the first bind, not here: when ib_core fails
 * after this call (e.g. a manual bind while the port is in auto mode), it
 * frees the counter without counter_dealloc. */
static struct rdma_hw_stats *sroce_counter_alloc_stats(struct rdma_counter *counter)
{
	return sroce_stats_alloc();
}

static int sroce_counter_dealloc(struct rdma_counter *counter)
{
	struct sroce_dev *sdev = to_sdev(counter->device);
	struct sroce_counter *c;
	unsigned int i;

	mutex_lock(&sdev->counters_lock);
	c = sroce_counter_find(sdev, counter);
	if (c) {
		WARN_ON(!list_empty(&c->qps)); /* ib_core unbinds every QP first */
		list_del(&c->node);
		/* ib_core keeps its final value in the port's history. */
		for (i = 0; i < SROCE_CNT_MAX; i++)
			sdev->counters_retired[i] += c->sum[i];
	}
	mutex_unlock(&sdev->counters_lock);
	kfree(c);
	return 0;
}

static int sroce_counter_bind_qp(struct rdma_counter *counter, struct ib_qp *ibqp)
{
	struct sroce_dev *sdev = to_sdev(counter->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_counter *c;
	int err = -EINVAL;

	mutex_lock(&sdev->counters_lock);
	if (qp->counter_bound)
		goto out; /* ib_core checks ibqp->counter first */
	c = sroce_counter_find(sdev, counter);
	if (!c) {
		c = kzalloc(sizeof(*c), GFP_KERNEL);
		if (!c) {
			err = -ENOMEM;
			goto out;
		}
		c->counter = counter;
		INIT_LIST_HEAD(&c->qps);
		list_add(&c->node, &sdev->counters);
	}
	sroce_core_qp_read_counters(qp->core, qp->counter_base, SROCE_CNT_MAX);
	list_add(&qp->counter_node, &c->qps);
	qp->counter_bound = true;
	ibqp->counter = counter;
	err = 0;
out:
	mutex_unlock(&sdev->counters_lock);
	return err;
}

/* Adds what qp did since it was bound to out[]. */
static void sroce_counter_add_qp(struct sroce_qp *qp, unsigned long long *out)
{
	unsigned long long now[SROCE_CNT_MAX];
	unsigned int i, n;

	n = sroce_core_qp_read_counters(qp->core, now, SROCE_CNT_MAX);
	for (i = 0; i < n; i++)
		out[i] += now[i] - qp->counter_base[i];
}

static int sroce_counter_unbind_qp(struct ib_qp *ibqp)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_counter *c;

	if (!ibqp->counter)
		return -EINVAL;
	mutex_lock(&sdev->counters_lock);
	c = sroce_counter_find(sdev, ibqp->counter);
	if (c && qp->counter_bound) {
		sroce_counter_add_qp(qp, c->sum);
		list_del(&qp->counter_node);
		qp->counter_bound = false;
	}
	mutex_unlock(&sdev->counters_lock);
	ibqp->counter = NULL;
	return 0;
}

static int sroce_counter_update_stats(struct rdma_counter *counter)
{
	struct sroce_dev *sdev = to_sdev(counter->device);
	unsigned long long v[SROCE_CNT_MAX];
	struct sroce_counter *c;
	struct sroce_qp *qp;
	unsigned int i;

	memset(v, 0, sizeof(v));
	mutex_lock(&sdev->counters_lock);
	c = sroce_counter_find(sdev, counter); /* none before its first bind */
	if (c) {
		memcpy(v, c->sum, sizeof(v));
		list_for_each_entry(qp, &c->qps, counter_node)
			sroce_counter_add_qp(qp, v);
	}
	mutex_unlock(&sdev->counters_lock);
	for (i = 0; i < min_t(unsigned int, counter->stats->num_counters, SROCE_CNT_MAX); i++)
		counter->stats->value[i] = v[i];
	return 0;
}

/* What all counters of sdev counted, released ones included. */
void sroce_counter_counted(struct sroce_dev *sdev, unsigned long long *out)
{
	struct sroce_counter *c;
	struct sroce_qp *qp;
	unsigned int i;

	mutex_lock(&sdev->counters_lock);
	memcpy(out, sdev->counters_retired, sizeof(sdev->counters_retired));
	list_for_each_entry(c, &sdev->counters, node) {
		for (i = 0; i < SROCE_CNT_MAX; i++)
			out[i] += c->sum[i];
		list_for_each_entry(qp, &c->qps, counter_node)
			sroce_counter_add_qp(qp, out);
	}
	mutex_unlock(&sdev->counters_lock);
}

const struct ib_device_ops sroce_counter_ops = {
	.counter_alloc_stats = sroce_counter_alloc_stats,
	.counter_dealloc = sroce_counter_dealloc,
	.counter_bind_qp = sroce_counter_bind_qp,
	.counter_unbind_qp = sroce_counter_unbind_qp,
	.counter_update_stats = sroce_counter_update_stats,
};

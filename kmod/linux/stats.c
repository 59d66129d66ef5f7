// SPDX-License-Identifier: GPL-2.0
/*
 * stats.c - observability glue: the core's device counters as ib_core hw
 * stats (`rdma statistic show link`), and driver details of QPs, CQs and
 * MRs for `rdma res show ... -dd`. The core snapshots; this only formats.
 *
 * ib_core 6.1 has no reset for hw stats (they are read-only in sysfs and
 * netlink); `rdma statistic` users take differences. Per-QP counters
 * (`rdma statistic qp`) are in counter.c.
 */
#include <rdma/ib_verbs.h>
#include <rdma/restrack.h>
#include <uapi/rdma/rdma_netlink.h>

#include "sroce.h"

static struct rdma_stat_desc sroce_stat_descs[SROCE_CNT_MAX];

/* Names come from the core (one list); called once at module load. */
void sroce_stats_init(void)
{
	unsigned int i;

	for (i = 0; i < SROCE_CNT_MAX; i++)
		sroce_stat_descs[i].name = sroce_core_counter_name(i);
}

/* The counter set of a port and of every rdma_counter (counter.c). */
struct rdma_hw_stats *sroce_stats_alloc(void)
{
	return rdma_alloc_hw_stats_struct(sroce_stat_descs, SROCE_CNT_MAX, RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev, u32 port)
{
	return sroce_stats_alloc();
}

/* The port's own counter set: what no rdma_counter counted (ib_core adds
 * the counters' values back, counter.c). Counted first, so that the device
 * total read after it is never below it. */
static int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats, u32 port, int index)
{
	unsigned long long v[SROCE_CNT_MAX], counted[SROCE_CNT_MAX];
	unsigned int i, n;

	if (!port || !stats)
		return -EINVAL;
	sroce_counter_counted(to_sdev(ibdev), counted);
	n = sroce_core_dev_read_counters(to_sdev(ibdev)->core, v, min_t(unsigned int, stats->num_counters,
									SROCE_CNT_MAX));
	for (i = 0; i < n; i++)
		stats->value[i] = v[i] - counted[i];
	return n;
}

/* The fields a core view table names (core.h), read from the snapshot;
 * rows with a flag in `skip` are left out. */
static int sroce_put_view(struct sk_buff *msg, const struct sroce_core_view_field *f, unsigned int n,
			  const void *view, unsigned int skip)
{
	struct nlattr *nest = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	unsigned int i;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		u64 v = sroce_view_value(view, &f[i]);
		bool hex = f[i].flags & SROCE_VIEW_HEX;
		int err;

		if (f[i].flags & skip)
			continue;
		if (f[i].size == sizeof(u64))
			err = hex ? rdma_nl_put_driver_u64_hex(msg, f[i].name, v) :
				    rdma_nl_put_driver_u64(msg, f[i].name, v);
		else
			err = hex ? rdma_nl_put_driver_u32_hex(msg, f[i].name, v) :
				    rdma_nl_put_driver_u32(msg, f[i].name, v);
		if (err) {
			nla_nest_cancel(msg, nest);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(msg, nest);
	return 0;
}

static int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct sroce_core_qp_view v;

	sroce_core_qp_snapshot(to_sqp(ibqp)->core, &v);
	return sroce_put_view(msg, sroce_core_qp_view_fields, sroce_core_qp_view_nfields, &v, 0);
}

static int sroce_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct sroce_core_cq_view v;

	sroce_core_cq_snapshot(to_scq(ibcq)->core, &v);
	return sroce_put_view(msg, sroce_core_cq_view_fields, sroce_core_cq_view_nfields, &v, 0);
}

/* Keys (and the iova that goes with them) only for readers ib_core shows
 * keys to; a DMA MR has no user memory to describe. */
int sroce_fill_res_mr_view(struct sk_buff *msg, struct sroce_core_mr *mr, bool keys)
{
	struct sroce_core_mr_view v;

	if (!mr)
		return 0;
	sroce_core_mr_snapshot(mr, &v);
	return sroce_put_view(msg, sroce_core_mr_view_fields, sroce_core_mr_view_nfields, &v,
			      (keys ? 0 : SROCE_VIEW_KEY) | (v.dma ? SROCE_VIEW_USER_MEM : 0));
}

const struct ib_device_ops sroce_stats_ops = {
	.alloc_hw_port_stats = sroce_alloc_hw_port_stats,
	.get_hw_stats = sroce_get_hw_stats,
	.fill_res_qp_entry = sroce_fill_res_qp_entry,
	.fill_res_cq_entry = sroce_fill_res_cq_entry,
};

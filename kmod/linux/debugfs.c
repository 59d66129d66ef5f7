// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs.c - debug counts, one "name value" per line, for leak checks and
 * tests:
 *   <debugfs>/sroce/counts          module-wide counts of the glue
 *   <debugfs>/sroce/<ibdev>/counts  the core's object counts and the glue's
 *                                   packet and path counts of one device
 *   <debugfs>/sroce/<ibdev>/xrc_rcv_qps  the kernel-owned XRC receive QPs
 * The directory keeps the name the device had when it was registered.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "sroce.h"
#include "wq.h"

static struct dentry *sroce_debugfs_root;

static int sroce_module_counts_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "rx_no_device %ld\n", atomic_long_read(&sroce_rx_no_dev));
	seq_printf(m, "rx_loopback %ld\n", atomic_long_read(&sroce_rx_loopback));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sroce_module_counts);

/* The glue's counts, in struct sroce_glue_counts' order. */
static const char *const sroce_glue_count_names[] = {
	"glue_pkts_in_flight", "paths", "tx_pkts", "tx_no_route", "tx_errors", "rx_pkts",
	"rx_short", "tx_local", "rx_local", "rx_local_full", "rx_loopback", "tx_trains", "tx_train_pkts",
};
static_assert(ARRAY_SIZE(sroce_glue_count_names) * sizeof(long) == sizeof(struct sroce_glue_counts));

long sroce_counts_sum_at(struct sroce_dev *sdev, size_t offset)
{
	long sum = 0;
	int cpu;

	if (!sdev->counts) /* the add failed before allocating them */
		return 0;
	for_each_possible_cpu(cpu)
		sum += READ_ONCE(*(const long *)((const char *)per_cpu_ptr(sdev->counts, cpu) + offset));
	return sum;
}

static void sroce_seq_view(struct seq_file *m, const struct sroce_core_view_field *f, unsigned int n,
			   const void *view)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		seq_printf(m, "%s %llu\n", f[i].name, sroce_view_value(view, &f[i]));
}

static int sroce_dev_counts_show(struct seq_file *m, void *unused)
{
	struct sroce_dev *sdev = m->private;
	struct sroce_core_counts c = {};
	struct sroce_core_rx_counts rx = {};
	unsigned int i;

	sroce_core_dev_counts(sdev->core, &c);
	sroce_core_dev_rx_counts(sdev->core, &rx);
	sroce_seq_view(m, sroce_core_counts_fields, sroce_core_counts_nfields, &c);
	for (i = 0; i < ARRAY_SIZE(sroce_glue_count_names); i++)
		seq_printf(m, "%s %ld\n", sroce_glue_count_names[i], sroce_counts_sum_at(sdev, i * sizeof(long)));
	sroce_seq_view(m, sroce_core_rx_counts_fields, sroce_core_rx_counts_nfields, &rx);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sroce_dev_counts);

/* The SQ poller of the device (Documentation/sq-poller.md). */
static int sroce_dev_sq_poll_show(struct seq_file *m, void *unused)
{
	struct sroce_dev *sdev = m->private;
	struct sroce_core_sq_poll_stats s = {};

	sroce_core_dev_sq_poll(sdev->core, &s);
	seq_printf(m, "running %d\n", s.running);
	seq_printf(m, "asleep %d\n", s.asleep);
	seq_printf(m, "sleeps %llu\n", s.sleeps);
	seq_printf(m, "wakeups %llu\n", s.wakeups);
	seq_printf(m, "drains %llu\n", s.drains);
	seq_printf(m, "rechecks %llu\n", s.rechecks);
	seq_printf(m, "dozes %llu\n", s.dozes);
	seq_printf(m, "held %llu\n", s.held);
	seq_printf(m, "naps %llu\n", s.naps);
	seq_printf(m, "max_walk %llu\n", s.max_walk);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sroce_dev_sq_poll);

static int sroce_dev_xrc_rcv_show(struct seq_file *m, void *unused)
{
	return sroce_xrc_rcv_show(m, m->private);
}
DEFINE_SHOW_ATTRIBUTE(sroce_dev_xrc_rcv);

static int sroce_dev_wqs_show(struct seq_file *m, void *unused)
{
	return sroce_wqs_show(m, m->private);
}
DEFINE_SHOW_ATTRIBUTE(sroce_dev_wqs);

static int sroce_dev_vectors_show(struct seq_file *m, void *unused)
{
	return sroce_vectors_show(m, m->private);
}
DEFINE_SHOW_ATTRIBUTE(sroce_dev_vectors);

static int sroce_icrc_show(struct seq_file *m, void *unused)
{
	return sroce_crc_show(m, unused);
}
DEFINE_SHOW_ATTRIBUTE(sroce_icrc);
DEFINE_SHOW_ATTRIBUTE(sroce_rx_cpus);

void sroce_debugfs_init(void)
{
	sroce_debugfs_root = debugfs_create_dir("sroce", NULL);
	debugfs_create_file("counts", 0444, sroce_debugfs_root, NULL, &sroce_module_counts_fops);
	debugfs_create_file("icrc", 0444, sroce_debugfs_root, NULL, &sroce_icrc_fops);
	debugfs_create_file("rx_cpus", 0444, sroce_debugfs_root, NULL, &sroce_rx_cpus_fops);
}

void sroce_debugfs_exit(void)
{
	debugfs_remove_recursive(sroce_debugfs_root);
	sroce_debugfs_root = NULL;
}

/* From enable_driver: the device has its final name and a core. Again
 * after every move to another namespace (rdma_dev_change_netns), which
 * keeps the directory: a second one would fail, and the first would be
 * left behind, naming the device after it is freed. */
void sroce_debugfs_add_dev(struct sroce_dev *sdev)
{
	if (sdev->debugfs)
		return;
	sdev->debugfs = debugfs_create_dir(dev_name(&sdev->ibdev.dev), sroce_debugfs_root);
	/* debugfs' proxy makes removal wait for a read in progress. */
	debugfs_create_file("counts", 0444, sdev->debugfs, sdev, &sroce_dev_counts_fops);
	debugfs_create_file("sq_poll", 0444, sdev->debugfs, sdev, &sroce_dev_sq_poll_fops);
	debugfs_create_file("xrc_rcv_qps", 0444, sdev->debugfs, sdev, &sroce_dev_xrc_rcv_fops);
	debugfs_create_file("vectors", 0444, sdev->debugfs, sdev, &sroce_dev_vectors_fops);
	debugfs_create_file("wqs", 0444, sdev->debugfs, sdev, &sroce_dev_wqs_fops);
}

/* From dealloc_driver, before the core goes; safe if never added. */
void sroce_debugfs_remove_dev(struct sroce_dev *sdev)
{
	debugfs_remove_recursive(sdev->debugfs);
	sdev->debugfs = NULL;
}

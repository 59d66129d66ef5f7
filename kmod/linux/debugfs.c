// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs.c - read-only diagnostics under /sys/kernel/debug/sroce/<ibdev>/:
 * `counts` lists the core's live objects (sroce_core_dev_counts), which the
 * tests use to see that nothing leaks or stays pinned.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "sroce.h"

static struct dentry *sroce_debugfs_root;

static int sroce_counts_show(struct seq_file *s, void *unused)
{
	struct sroce_dev *sdev = s->private;
	struct sroce_core_counts c;

	sroce_core_dev_counts(sdev->core, &c);
	seq_printf(s, "qps %llu\ncqs %llu\nsrqs %llu\nmrs %llu\nahs %llu\npinned_pages %llu\npkts_in_flight %llu\n",
		   c.qps, c.cqs, c.srqs, c.mrs, c.ahs, c.pinned_pages, c.pkts_in_flight);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sroce_counts);

/* Called once the device is registered under its final name. Failures
 * are not errors: debugfs is optional. */
void sroce_debugfs_add_dev(struct sroce_dev *sdev)
{
	sdev->debugfs = debugfs_create_dir(dev_name(&sdev->ibdev.dev), sroce_debugfs_root);
	debugfs_create_file("counts", 0444, sdev->debugfs, sdev, &sroce_counts_fops);
}

/* Before the core device goes: waits for readers in progress. */
void sroce_debugfs_remove_dev(struct sroce_dev *sdev)
{
	debugfs_remove_recursive(sdev->debugfs);
	sdev->debugfs = NULL;
}

void sroce_debugfs_init(void)
{
	sroce_debugfs_root = debugfs_create_dir("sroce", NULL);
}

void sroce_debugfs_exit(void)
{
	debugfs_remove_recursive(sroce_debugfs_root);
}

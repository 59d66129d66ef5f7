// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_selftest.ko - in-kernel tests of sroce.ko's data-path glue, for the
 * VM tests only (tests/vm/70-glue-datapath.sh loads it next to sroce.ko).
 * `make kmod` builds it in build/kmod-selftest-$KVER; `make install` never
 * installs it, and sroce.ko works the same without it.
 *
 *   <debugfs>/sroce_selftest/glue      read: runs the tests of the glue's
 *                                      packets, batches, timers, work and
 *                                      CRC-32 (glue.c) and packet trains
 *                                      (train.c), one "ok NAME" or
 *                                      "FAIL NAME: why" line each, then
 *                                      "passed N failed N"
 *   <debugfs>/sroce_selftest/ud_send   write "IBDEV SRC DST COUNT DESTQP
 *                                      [PAYLOAD TCLASS HOPLIMIT FLOWLABEL]":
 *                                      a kernel UD QP of IBDEV sends COUNT
 *                                      SENDs over an AH from the GID of SRC
 *                                      to DST (ud.c)
 *   <debugfs>/sroce_selftest/ud_drain  write "IBDEV": ib_drain_qp of a
 *                                      kernel UD QP of IBDEV (ud.c)
 *
 * A write fails with the errno of the step that failed.
 *
 * glue.c calls the glue's services that sroce.ko exports for this module
 * alone (namespace SROCE_SELFTEST, see kmod/linux/sroce.h). ud.c uses only
 * ib_core's kernel verbs: sroce's core writes every packet it sends, with
 * its own codec.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/uaccess.h>

#include "selftest.h"

static struct dentry *st_root;

static int st_glue_show(struct seq_file *m, void *unused)
{
	struct st_ctx ctx = { .m = m };

	st_glue(&ctx);
	seq_printf(m, "passed %d failed %d\n", ctx.passed, ctx.failed);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(st_glue);

/* The written line, NUL-terminated, to fn (the file's private data). */
static ssize_t st_args_write(struct file *file, const char __user *ubuf, size_t count, loff_t *ppos)
{
	int (*fn)(const char *args) = file->private_data;
	char buf[256];
	int err;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = 0;
	err = fn(buf);
	return err ?: count;
}

static const struct file_operations st_args_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = st_args_write,
};

static int __init st_init(void)
{
	st_root = debugfs_create_dir("sroce_selftest", NULL);
	debugfs_create_file("glue", 0400, st_root, NULL, &st_glue_fops);
	debugfs_create_file("ud_send", 0200, st_root, st_ud_send, &st_args_fops);
	debugfs_create_file("ud_drain", 0200, st_root, st_ud_drain, &st_args_fops);
	return 0;
}

static void __exit st_exit(void)
{
	debugfs_remove_recursive(st_root);
}

module_init(st_init);
module_exit(st_exit);

MODULE_IMPORT_NS(SROCE_SELFTEST);
MODULE_DESCRIPTION("sroce: in-kernel tests of the data-path glue (tests only)");
MODULE_LICENSE("GPL");

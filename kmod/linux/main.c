// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - module entry: module parameters, the `rdma link` type and the
 * netdev notifier.
 */
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/sysfs.h>
#include <linux/workqueue.h>
#include <rdma/rdma_netlink.h>

#include "sroce.h"

bool sroce_ipv6 = true;
module_param_named(ipv6, sroce_ipv6, bool, 0444);
MODULE_PARM_DESC(ipv6, "Open an IPv6 UDP 4791 socket next to the IPv4 one (default: Y)");

/* The SQ poller (Documentation/sq-poller.md). Read when a device is
 * created: a change applies to devices added afterwards. */
/* auto by default: a poller only where it gets a CPU of its own
 * (sroce::sq_poll_auto); Y and N as the bool it once was. */
int sroce_sq_poll = SROCE_SQ_POLL_AUTO;

static int sroce_sq_poll_set(const char *val, const struct kernel_param *kp)
{
	bool on;

	if (!val) /* a bare "sq_poll", as for the bool it was */
		val = "1";
	if (sysfs_streq(val, "auto")) {
		WRITE_ONCE(sroce_sq_poll, SROCE_SQ_POLL_AUTO);
		return 0;
	}
	if (kstrtobool(val, &on))
		return -EINVAL;
	WRITE_ONCE(sroce_sq_poll, on ? SROCE_SQ_POLL_ON : SROCE_SQ_POLL_OFF);
	return 0;
}

static int sroce_sq_poll_get(char *buf, const struct kernel_param *kp)
{
	int mode = READ_ONCE(sroce_sq_poll);

	return sysfs_emit(buf, "%s\n", mode == SROCE_SQ_POLL_AUTO ? "auto" : mode ? "Y" : "N");
}

static const struct kernel_param_ops sroce_sq_poll_ops = {
	.flags = KERNEL_PARAM_OPS_FL_NOARG,
	.set = sroce_sq_poll_set,
	.get = sroce_sq_poll_get,
};
module_param_cb(sq_poll, &sroce_sq_poll_ops, NULL, 0644);
MODULE_PARM_DESC(sq_poll, "Shared kernel threads poll user send queues, so posts need no system call: Y, N or auto, a poller only where it gets a CPU of its own: one per CPU named in sq_poll_cpus, or one per poller and two more online (default: auto)");

unsigned int sroce_sq_idle_us = 2000;
module_param_named(sq_idle_us, sroce_sq_idle_us, uint, 0644);
MODULE_PARM_DESC(sq_idle_us, "Microseconds an SQ poller polls without work before it sleeps, and a doze on a contended CPU holds (default: 2000)");

unsigned int sroce_sq_yield_us = 500;
module_param_named(sq_yield_us, sroce_sq_yield_us, uint, 0644);
MODULE_PARM_DESC(sq_yield_us, "Microseconds an SQ poller naps while other tasks want its CPU before it dozes; 0: at once; at most sq_idle_us/2 (default: 500)");

/* Zero-copy send (Documentation/transport.md). Read when a device is
 * created. */
unsigned int sroce_zero_copy_min = 1024;
module_param_named(zero_copy_min, sroce_zero_copy_min, uint, 0644);
MODULE_PARM_DESC(zero_copy_min, "User RC/XRC request payloads of at least this many bytes leave from the registered pages as fragments, not copied; 0: always copy. Read when a device is added (default: 1024)");

char *sroce_sq_poll_cpus = "";
module_param_named(sq_poll_cpus, sroce_sq_poll_cpus, charp, 0444);
MODULE_PARM_DESC(sq_poll_cpus, "CPUs the SQ pollers may run on, as a cpulist such as 0-1,3 (default: any)");

static int sroce_newlink(const char *ibdev_name, struct net_device *ndev)
{
	return sroce_dev_add(ibdev_name, ndev);
}

static struct rdma_link_ops sroce_link_ops = {
	.type = "sroce",
	.newlink = sroce_newlink,
};

static int sroce_netdev_event(struct notifier_block *nb, unsigned long event, void *arg)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(arg);
	struct sroce_dev *sdev = sroce_dev_get_by_netdev(ndev);

	if (!sdev)
		return NOTIFY_DONE;
	sroce_dev_netdev_event(sdev, event);
	ib_device_put(&sdev->ibdev);
	return NOTIFY_OK;
}

static struct notifier_block sroce_netdev_notifier = {
	.notifier_call = sroce_netdev_event,
};

static int __init sroce_init(void)
{
	int err;

	err = sroce_mr_init();
	if (err)
		return err;
	err = sroce_vectors_module_init();
	if (err)
		goto err_vectors;
	sroce_dp_wq = alloc_workqueue("sroce_dp", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	err = -ENOMEM;
	if (!sroce_dp_wq)
		goto err_wq;
	sroce_crc_init();
	sroce_debugfs_init();
	sroce_stats_init();
	err = sroce_net_init();
	if (err)
		goto err_net;
	err = register_netdevice_notifier(&sroce_netdev_notifier);
	if (err)
		goto err_notifier;
	rdma_link_register(&sroce_link_ops);
	pr_info("sroce: loaded (ABI %u)\n", SROCE_ABI_VERSION);
	return 0;

err_notifier:
	sroce_net_exit();
err_net:
	sroce_debugfs_exit();
	sroce_crc_exit();
	destroy_workqueue(sroce_dp_wq);
err_wq:
	sroce_vectors_module_exit();
err_vectors:
	sroce_mr_exit();
	sroce_env_exit();
	return err;
}

static void __exit sroce_exit(void)
{
	/* Waits for newlink calls in flight; no device can be added after. */
	rdma_link_unregister(&sroce_link_ops);
	/* Unregisters every device, disassociating open user contexts. */
	sroce_dev_remove_all();
	unregister_netdevice_notifier(&sroce_netdev_notifier);
	sroce_net_exit();
	sroce_debugfs_exit();
	sroce_crc_exit();
	/* The core destroyed every timer and work item with its objects. */
	destroy_workqueue(sroce_dp_wq);
	sroce_vectors_module_exit(); /* every CQ, so every event, is gone */
	sroce_mr_exit(); /* unpinning deferred by in-flight packets */
	sroce_env_exit(); /* frees deferred out of atomic context */
	pr_info("sroce: unloaded\n");
}

module_init(sroce_init);
module_exit(sroce_exit);

MODULE_ALIAS_RDMA_LINK("sroce");
MODULE_DESCRIPTION("sroce: soft RoCEv2 device");
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: GPL-2.0
/*
 * device.c - sroce device life cycle: creation by `rdma link add`, netdev
 * events, and removal on `rdma link delete`, netdev unregister or rmmod.
 */
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/hashtable.h>
#include <linux/if_vlan.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <net/addrconf.h>

#include "sroce.h"
#include "wq.h"

/* Every sroce device from allocation to dealloc_driver. The mutex is never
 * held across a call that takes rtnl or waits for ib_core. Readers in the
 * receive path look a device up in sroce_dev_by_ndev under RCU: ib_core
 * frees a device with kfree_rcu after dealloc_driver unlinked it. */
static LIST_HEAD(sroce_devices);
static DEFINE_MUTEX(sroce_devices_lock);
/* The same devices by netdev, for the receive path's look-up per packet (a
 * walk of the list cost one step per device: one per namespace). */
static DEFINE_HASHTABLE(sroce_dev_by_ndev, 6);

/* For tests only: a pause before registering, in the window from claiming
 * the netdev where its events cannot reach the device (tests/vm/40). */
static unsigned int sroce_test_add_delay_ms;
module_param_named(test_add_delay_ms, sroce_test_add_delay_ms, uint, 0644);
MODULE_PARM_DESC(test_add_delay_ms, "for tests: pause rdma link add this long before registering (default 0)");
static bool sroce_netdev_up(struct net_device *ndev)
{
	return netif_running(ndev) && netif_carrier_ok(ndev);
}

/* The sroce device that claimed ndev (at most one does), registered or not. */
static struct sroce_dev *sroce_dev_find_locked(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	lockdep_assert_held(&sroce_devices_lock);
	hash_for_each_possible(sroce_dev_by_ndev, sdev, ndev_node, (unsigned long)ndev)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/* Takes an ib_device reference; NULL if ndev has no registered sroce device. */
struct sroce_dev *sroce_dev_get_by_netdev(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	mutex_lock(&sroce_devices_lock);
	sdev = sroce_dev_find_locked(ndev);
	if (sdev && !ib_device_try_get(&sdev->ibdev))
		sdev = NULL; /* not yet, or no longer, registered */
	mutex_unlock(&sroce_devices_lock);
	return sdev;
}

/* The same from the receive path, under rcu_read_lock(). */
struct sroce_dev *sroce_dev_get_by_netdev_rcu(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	hash_for_each_possible_rcu(sroce_dev_by_ndev, sdev, ndev_node, (unsigned long)ndev)
		if (sdev->ndev == ndev)
			return ib_device_try_get(&sdev->ibdev) ? sdev : NULL;
	return NULL;
}

static void sroce_dispatch_port_event(struct sroce_dev *sdev, enum sroce_core_port_event ev)
{
	struct ib_event event = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
	};

	if (ev == SROCE_EVENT_NONE)
		return;
	event.event = ev == SROCE_EVENT_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR;
	ib_dispatch_event(&event);
}

void sroce_dev_sync_port(struct sroce_dev *sdev)
{
	struct net_device *ndev = sdev->ndev;

	sroce_dispatch_port_event(sdev, sroce_core_netdev_changed(sdev->core, sroce_netdev_up(ndev),
								  READ_ONCE(ndev->mtu)));
}

/*
 * From enable_driver, once the netdev notifier reaches the device (ib_core
 * set its refcount): a NETDEV_UNREGISTER before that was lost (rdma link
 * add takes no rtnl). The device would keep the netdev held for good, and
 * unregister_netdevice wait for it. Unregistering sets reg_state, and a
 * namespace move changes dev_net, before the notifier runs: either seen
 * here, the device goes as the notifier would have sent it; neither seen,
 * the notifier comes later and finds it.
 */
void sroce_dev_sync_netdev(struct sroce_dev *sdev)
{
	struct net_device *ndev = sdev->ndev;

	smp_mb(); /* the refcount ib_core set, before the reads below */
	if (READ_ONCE(ndev->reg_state) != NETREG_REGISTERED || !sroce_net_of(sdev->sn, ndev))
		sroce_net_queue_unregister(sdev);
}

void sroce_dev_netdev_event(struct sroce_dev *sdev, unsigned long event)
{
	switch (event) {
	case NETDEV_UNREGISTER:
		/* ib_unregister_device may not run under rtnl. */
		sroce_net_queue_unregister(sdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		sroce_dev_sync_port(sdev);
		break;
	case NETDEV_CHANGENAME:
		strscpy(sdev->parent, netdev_name(sdev->ndev), sizeof(sdev->parent));
		break;
	default:
		break;
	}
}

/*
 * ib_device_ops.dealloc_driver. On 6.1 ib_dealloc_device() calls it too, so
 * it is the one teardown for every path: the end of an unregistration and
 * each failure of sroce_dev_add(), where the device may be half built.
 */
void sroce_dev_dealloc(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	mutex_lock(&sroce_devices_lock);
	if (!list_empty(&sdev->list)) { /* claimed */
		list_del_rcu(&sdev->list);
		hash_del_rcu(&sdev->ndev_node);
	}
	mutex_unlock(&sroce_devices_lock);
	/* Same-host packets queued for us (before the core goes: a running
	 * drain holds a device reference, so none runs now). */
	sroce_local_exit(sdev);
	/* Waits for readers of counts, which ask the core. */
	sroce_debugfs_remove_dev(sdev);
	sroce_vectors_free(sdev);
	sroce_core_dev_destroy(sdev->core);
	sroce_sq_poller_leave(sdev->sq_poller);
	sdev->sq_poller = NULL;
	/* The core has released every path and packet with its objects: what
	 * is left would be used after this device is freed. */
	WARN_ON(sroce_count_sum(sdev, paths) ||
		sroce_count_sum(sdev, pkts_in_flight));
	free_percpu(sdev->counts);
	sdev->counts = NULL;
	sdev->core = NULL;
	if (sdev->sn)
		sroce_net_put(sdev->sn);
	sdev->sn = NULL;
}

/* Claims ndev for sdev; false if another sroce device has it. */
static bool sroce_claim_netdev(struct sroce_dev *sdev, struct net_device *ndev)
{
	bool claimed;

	mutex_lock(&sroce_devices_lock);
	claimed = !sroce_dev_find_locked(ndev);
	if (claimed) {
		sdev->ndev = ndev;
		list_add_tail_rcu(&sdev->list, &sroce_devices);
		hash_add_rcu(sroce_dev_by_ndev, &sdev->ndev_node, (unsigned long)ndev);
	}
	mutex_unlock(&sroce_devices_lock);
	return claimed;
}

/* What sq_poll=auto chose and why: a machine's mode should not have to be
 * guessed from benchmarks. cpu: the joined poller's (-1: any CPU;
 * SROCE_NO_POLLER: none), taken at the join. */
#define SROCE_NO_POLLER INT_MIN
static void sroce_dev_note_sq_poll(struct sroce_dev *sdev, int mode, unsigned int threads, int cpu)
{
	cpumask_var_t named;
	unsigned int n = 0;
	char what[48];

	if (mode != SROCE_SQ_POLL_AUTO)
		return;
	if (zalloc_cpumask_var(&named, GFP_KERNEL)) {
		if (sroce_sq_poll_cpus_named(named))
			n = cpumask_weight(named);
		free_cpumask_var(named);
	}
	if (cpu >= 0)
		snprintf(what, sizeof(what), "the shared SQ poller of CPU %d", cpu);
	else
		strscpy(what, cpu == -1 ? "the shared SQ poller" : "doorbell mode", sizeof(what));
	pr_info("sroce: %s: sq_poll=auto: %s (%u CPUs online, %u named by sq_poll_cpus, %u poller threads before)\n",
		sdev->parent, what, num_online_cpus(), n, threads);
}

int sroce_dev_add(const char *ibdev_name, struct net_device *ndev)
{
	struct sroce_core_dev_init init = {
		.netdev_mtu = READ_ONCE(ndev->mtu),
		.netdev_up = sroce_netdev_up(ndev),
	};
	struct sroce_net *sn;
	unsigned int threads;
	struct sroce_dev *sdev;
	int err, mode, poll_cpu = SROCE_NO_POLLER;

	if (is_vlan_dev(ndev) || ndev->type != ARPHRD_ETHER || ndev->addr_len != ETH_ALEN) {
		netdev_warn(ndev, "sroce: needs a plain Ethernet device\n");
		return -EPERM;
	}
	/* The SQ poller is shared (sqpoll.c): the device never starts one
	 * of its own. */
	init.sq_poll = SROCE_SQ_POLL_OFF;
	init.zero_copy_min = READ_ONCE(sroce_zero_copy_min);

	sdev = ib_alloc_device(sroce_dev, ibdev);
	if (!sdev)
		return -ENOMEM;
	INIT_LIST_HEAD(&sdev->list);
	INIT_LIST_HEAD(&sdev->counters);
	mutex_init(&sdev->counters_lock);
	INIT_LIST_HEAD(&sdev->xrc_rcv);
	mutex_init(&sdev->xrc_rcv_lock);
	INIT_LIST_HEAD(&sdev->wqs);
	mutex_init(&sdev->wqs_lock);
	sroce_net_init_unregister_work(sdev);
	sroce_local_init(sdev);
	strscpy(sdev->parent, netdev_name(ndev), sizeof(sdev->parent));
	/* The write() commands ib_core leaves off by default that the provider
	 * uses: the SQ doorbell (an empty POST_SEND) and arming a CQ. */
	sdev->ibdev.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				       BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(&sdev->ibdev, &sroce_dev_ops);
	ib_set_device_ops(&sdev->ibdev, &sroce_mr_ops);
	ib_set_device_ops(&sdev->ibdev, &sroce_cq_ops);
	ib_set_device_ops(&sdev->ibdev, &sroce_srq_ops);
	ib_set_device_ops(&sdev->ibdev, &sroce_wq_ops);
	ib_set_device_ops(&sdev->ibdev, &sroce_xrcd_ops);
	sdev->ibdev.driver_def = sroce_uapi_defs;
	ib_set_device_ops(&sdev->ibdev, &sroce_qp_ops);
	ib_set_device_ops(&sdev->ibdev, &sroce_ah_ops);
	ib_set_device_ops(&sdev->ibdev, &sroce_stats_ops);
	ib_set_device_ops(&sdev->ibdev, &sroce_counter_ops);
	/* From here (dealloc_driver is set) every failure ends in
	 * ib_dealloc_device -> dealloc. */
	err = -ENOMEM;
	sdev->counts = alloc_percpu(struct sroce_glue_counts);
	if (!sdev->counts)
		goto err;

	/* Claim the netdev before registering, so that two concurrent adds
	 * cannot both succeed. */
	err = -EEXIST;
	if (!sroce_claim_netdev(sdev, ndev))
		goto err;
	mode = READ_ONCE(sroce_sq_poll);
	sdev->sq_poller = sroce_sq_poller_join(mode, &threads); /* dealloc leaves it */
	poll_cpu = sdev->sq_poller ? sroce_sq_poller_cpu(sdev->sq_poller) : SROCE_NO_POLLER;
	init.sq_poller = sroce_sq_poller_core(sdev->sq_poller);
	err = sroce_core_dev_create(&init, &sdev->core);
	if (err)
		goto err;
	sn = sroce_net_get(dev_net(ndev));
	if (IS_ERR(sn)) {
		err = PTR_ERR(sn);
		goto err;
	}
	sdev->sn = sn;
	err = sroce_vectors_init(sdev); /* num_comp_vectors */
	if (err)
		goto err;

	strscpy(sdev->ibdev.node_desc, "sroce", sizeof(sdev->ibdev.node_desc));
	sdev->ibdev.node_type = RDMA_NODE_IB_CA;
	sdev->ibdev.phys_port_cnt = 1;
	sdev->ibdev.node_guid = sroce_core_guid_from_mac(ndev->dev_addr);
	err = ib_device_set_netdev(&sdev->ibdev, ndev, 1);
	if (err)
		goto err;
	if (READ_ONCE(sroce_test_add_delay_ms))
		msleep(READ_ONCE(sroce_test_add_delay_ms));
	/* Before registering: from then on an unregistration (rdma link
	 * delete, the netdev going) may free sdev at any time. */
	sroce_dev_note_sq_poll(sdev, mode, threads, poll_cpu);
	/* On failure ib_register_device leaves the device to us. */
	err = ib_register_device(&sdev->ibdev, ibdev_name, NULL);
	if (err)
		goto err;
	return 0;

err:
	ib_dealloc_device(&sdev->ibdev);
	return err;
}

/* Module exit: unregister every device, including those whose netdev
 * unregistration queued work that has not run yet. */
void sroce_dev_remove_all(void)
{
	struct sroce_dev *sdev;

	for (;;) {
		mutex_lock(&sroce_devices_lock);
		sdev = list_first_entry_or_null(&sroce_devices, struct sroce_dev, list);
		if (sdev)
			get_device(&sdev->ibdev.dev); /* keeps the memory, not the registration */
		mutex_unlock(&sroce_devices_lock);
		if (!sdev)
			break;
		/* Waits for a concurrent unregistration; dealloc_driver unlinks. */
		ib_unregister_device(&sdev->ibdev);
		put_device(&sdev->ibdev.dev);
	}
}

// SPDX-License-Identifier: GPL-2.0
/*
 * device.c - sroce device life cycle: creation by `rdma link add`, netdev
 * events, and removal on `rdma link delete`, netdev unregister or rmmod.
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/mutex.h>
#include <net/addrconf.h>

#include "sroce.h"

/* Every sroce device from allocation to dealloc_driver. The mutex is never
 * held across a call that takes rtnl or waits for ib_core. */
static LIST_HEAD(sroce_devices);
static DEFINE_MUTEX(sroce_devices_lock);

static bool sroce_netdev_up(struct net_device *ndev)
{
	return netif_running(ndev) && netif_carrier_ok(ndev);
}

/* Takes an ib_device reference; NULL if ndev has no registered sroce device. */
struct sroce_dev *sroce_dev_get_by_netdev(struct net_device *ndev)
{
	struct sroce_dev *sdev, *found = NULL;

	mutex_lock(&sroce_devices_lock);
	list_for_each_entry(sdev, &sroce_devices, list) {
		if (sdev->ndev == ndev && ib_device_try_get(&sdev->ibdev)) {
			found = sdev;
			break;
		}
	}
	mutex_unlock(&sroce_devices_lock);
	return found;
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

/* ib_device_ops.dealloc_driver: the last step of every unregistration. */
void sroce_dev_dealloc(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	mutex_lock(&sroce_devices_lock);
	list_del(&sdev->list);
	mutex_unlock(&sroce_devices_lock);
	sroce_core_dev_destroy(sdev->core);
	sroce_net_put(sdev->sn);
}

static bool sroce_netdev_claimed(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	lockdep_assert_held(&sroce_devices_lock);
	list_for_each_entry(sdev, &sroce_devices, list)
		if (sdev->ndev == ndev)
			return true;
	return false;
}

int sroce_dev_add(const char *ibdev_name, struct net_device *ndev)
{
	struct sroce_core_dev_init init = {
		.netdev_mtu = READ_ONCE(ndev->mtu),
		.netdev_up = sroce_netdev_up(ndev),
	};
	struct sroce_dev *sdev;
	int err;

	if (is_vlan_dev(ndev) || ndev->type != ARPHRD_ETHER || ndev->addr_len != ETH_ALEN) {
		netdev_warn(ndev, "sroce: needs a plain Ethernet device\n");
		return -EPERM;
	}
	ether_addr_copy(init.mac, ndev->dev_addr);

	sdev = ib_alloc_device(sroce_dev, ibdev);
	if (!sdev)
		return -ENOMEM;
	sdev->ndev = ndev;
	strscpy(sdev->parent, netdev_name(ndev), sizeof(sdev->parent));
	INIT_LIST_HEAD(&sdev->list);
	sroce_net_init_unregister_work(sdev);

	err = sroce_core_dev_create(&init, &sdev->core);
	if (err)
		goto err_free;
	sdev->sn = sroce_net_get(dev_net(ndev));
	if (IS_ERR(sdev->sn)) {
		err = PTR_ERR(sdev->sn);
		goto err_core;
	}

	/* Claim the netdev before registering, so that two concurrent adds
	 * cannot both succeed. */
	mutex_lock(&sroce_devices_lock);
	if (sroce_netdev_claimed(ndev)) {
		mutex_unlock(&sroce_devices_lock);
		err = -EEXIST;
		goto err_net;
	}
	list_add_tail(&sdev->list, &sroce_devices);
	mutex_unlock(&sroce_devices_lock);

	strscpy(sdev->ibdev.node_desc, "sroce", sizeof(sdev->ibdev.node_desc));
	sdev->ibdev.node_type = RDMA_NODE_IB_CA;
	sdev->ibdev.phys_port_cnt = 1;
	sdev->ibdev.num_comp_vectors = 1;
	sdev->ibdev.node_guid = sroce_core_guid_from_mac(init.mac);
	ib_set_device_ops(&sdev->ibdev, &sroce_dev_ops);
	ib_set_device_ops(&sdev->ibdev, &sroce_unsupported_ops);
	err = ib_device_set_netdev(&sdev->ibdev, ndev, 1);
	if (err)
		goto err_unclaim;
	/* On failure ib_register_device does not call dealloc_driver: the
	 * cleanup below is ours. */
	err = ib_register_device(&sdev->ibdev, ibdev_name, NULL);
	if (err)
		goto err_unclaim;
	return 0;

err_unclaim:
	mutex_lock(&sroce_devices_lock);
	list_del(&sdev->list);
	mutex_unlock(&sroce_devices_lock);
err_net:
	sroce_net_put(sdev->sn);
err_core:
	sroce_core_dev_destroy(sdev->core);
err_free:
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

// SPDX-License-Identifier: GPL-2.0
/*
 * net.c - the RoCEv2 UDP sockets, one set per network namespace that has a
 * sroce device, and the deferred device unregistration that namespace and
 * netdev teardown need.
 *
 * rdma_rxe holds UDP 4791 in init_net only; opening our sockets lazily in the
 * device's own namespace lets sroce and rxe run side by side in one kernel.
 */
#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <linux/mutex.h>
#include <linux/udp.h>
#include <linux/workqueue.h>
#include <net/addrconf.h>
#include <net/ipv6_stubs.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/udp_tunnel.h>

#include "sroce.h"

struct sroce_net {
	struct mutex lock;
	unsigned int users;  /* devices in this namespace, under lock */
	struct socket *sk4;  /* under lock */
	struct socket *sk6;  /* under lock; NULL with ipv6=N or no IPv6 */
};

static unsigned int sroce_net_id;
static struct workqueue_struct *sroce_wq;

atomic_long_t sroce_rx_no_dev;
atomic_long_t sroce_rx_loopback;

/* The BTH: the least the core looks at in every packet. */
#define SROCE_BTH_BYTES 12

/*
 * The netdev that owns the destination address of a packet (data or network
 * header at its IP header) in net: a VLAN upper counts as its real device,
 * whose GIDs these are too. RCU.
 */
static struct net_device *sroce_addr_netdev(struct net *net, struct sk_buff *skb)
{
	struct net_device *ndev = NULL;

	if (skb->protocol == htons(ETH_P_IP)) {
		ndev = __ip_dev_find(net, ip_hdr(skb)->daddr, false);
	} else if (IS_ENABLED(CONFIG_IPV6) && skb->protocol == htons(ETH_P_IPV6)) {
		ndev = ipv6_stub->ipv6_dev_find(net, &ipv6_hdr(skb)->daddr, NULL);
		if (IS_ERR(ndev))
			ndev = NULL;
	}
	if (ndev && is_vlan_dev(ndev))
		ndev = vlan_dev_real_dev(ndev);
	return ndev;
}

/* The device owning a packet's destination address, with an ib_device
 * reference; NULL if none. */
static struct sroce_dev *sroce_addr_dev(struct net *net, struct sk_buff *skb)
{
	struct sroce_dev *sdev = NULL;
	struct net_device *ndev;

	rcu_read_lock();
	ndev = sroce_addr_netdev(net, skb);
	if (ndev)
		sdev = sroce_dev_get_by_netdev_rcu(ndev);
	rcu_read_unlock();
	return sdev;
}

/* The device of the receiving netdev, with an ib_device reference; NULL if
 * none. */
static struct sroce_dev *sroce_rx_dev(struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;
	struct sroce_dev *sdev;

	rcu_read_lock();
	if (is_vlan_dev(ndev)) /* GIDs of VLAN uppers are the port's too */
		ndev = vlan_dev_real_dev(ndev);
	sdev = sroce_dev_get_by_netdev_rcu(ndev);
	rcu_read_unlock();
	return sdev;
}

/*
 * A datagram on lo was sent by a local socket: sroce's own same-host
 * packets never go through the IP stack (sroce_local_xmit). Trusting lo
 * would let any local user, with a plain UDP socket, feed a QP packets
 * that look as if they came from the wire: drop, and count where the
 * address owner's admin looks (and module-wide, for addresses of no
 * device such as 127.0.0.1).
 */
static void sroce_rx_loopback_drop(struct sk_buff *skb)
{
	struct sroce_dev *sdev = sroce_addr_dev(dev_net(skb->dev), skb);

	atomic_long_inc(&sroce_rx_loopback);
	if (sdev) {
		sroce_count_inc(sdev, rx_loopback);
		ib_device_put(&sdev->ibdev);
	}
	kfree_skb(skb);
}

/*
 * UDP has checked the checksum and trimmed the skb to the datagram; data is
 * at the UDP header. Softirq. The ib_device reference keeps the device
 * registered (ib_unregister_device waits for it) until the batch is flushed.
 */
static int sroce_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct sroce_env_batch b;
	struct sroce_dev *sdev;

	/* A broadcast or multicast datagram this host sent comes back on the
	 * real netdev as PACKET_LOOPBACK: a local user's, as on lo (it reached
	 * QP1 and UD QPs). Other hosts' broadcast or multicast ones address no
	 * device (sroce has no multicast). */
	if ((skb->dev->flags & IFF_LOOPBACK) || skb->pkt_type == PACKET_LOOPBACK) {
		sroce_rx_loopback_drop(skb);
		return 0;
	}
	if (skb->pkt_type != PACKET_HOST) {
		atomic_long_inc(&sroce_rx_no_dev);
		kfree_skb(skb);
		return 0;
	}
	sdev = sroce_rx_dev(skb);
	if (!sdev) {
		atomic_long_inc(&sroce_rx_no_dev);
		kfree_skb(skb);
		return 0;
	}
	/* The core's offsets count from the IP header, which the IP layer
	 * pulled but left in place; it needs the headers up to the BTH in the
	 * linear part, not the payload. */
	if (!pskb_may_pull(skb, skb_transport_offset(skb) + sizeof(struct udphdr) + SROCE_BTH_BYTES)) {
		sroce_count_inc(sdev, rx_short);
		kfree_skb(skb);
		goto out;
	}
	__skb_push(skb, -skb_network_offset(skb));
	sroce_count_inc(sdev, rx_pkts);
	sroce_batch_init(&b);
	sroce_core_rx(sdev->core, sroce_pkt_from_rx(sdev, skb), &b);
	sroce_batch_flush(sdev, &b);
out:
	ib_device_put(&sdev->ibdev);
	return 0;
}

/* ---- same-host delivery ----------------------------------------------------
 *
 * A packet for an address of this host goes straight to the receive path of
 * the device owning that address, as rdma_rxe does (its loopback), never
 * through lo. Not inline: the sender is flushing a batch, and the receiver's
 * batch would send again (ACKs, READ responses), without bound. Each device
 * has a bounded queue drained by a tasklet, in softirq as a wire packet
 * would be, a batch per packet; order per device is kept (a tasklet never
 * runs on two CPUs at once). Queued skbs hold no device reference: the
 * sender holds one while it queues, the tasklet takes one to drain (and
 * purges when it cannot), and dealloc kills the tasklet and purges.
 */
#define SROCE_LOCAL_QLEN 1024  /* about a veth's backlog (netdev_max_backlog) */
#define SROCE_LOCAL_BUDGET 64  /* packets per tasklet run, then reschedule */

bool sroce_local_xmit(struct net *net, struct sk_buff *skb)
{
	struct sroce_dev *to = sroce_addr_dev(net, skb);
	unsigned long flags;
	bool queued = false;

	if (!to) { /* a local address without a sroce device: as on the wire */
		atomic_long_inc(&sroce_rx_no_dev);
		kfree_skb(skb);
		return false;
	}
	skb->dev = NULL; /* nothing below reads it; the netdev is not held */
	spin_lock_irqsave(&to->local_q.lock, flags);
	if (skb_queue_len(&to->local_q) < SROCE_LOCAL_QLEN) {
		__skb_queue_tail(&to->local_q, skb);
		queued = true;
	}
	spin_unlock_irqrestore(&to->local_q.lock, flags);
	if (queued) {
		tasklet_schedule(&to->local_rx);
	} else {
		sroce_count_inc(to, rx_local_full);
		kfree_skb(skb);
	}
	ib_device_put(&to->ibdev);
	return queued;
}

static void sroce_local_rx(struct tasklet_struct *t)
{
	struct sroce_dev *sdev = from_tasklet(sdev, t, local_rx);
	struct sroce_env_batch b;
	struct sk_buff *skb;
	unsigned int n;

	/* Unregistration has begun: nothing may reach the core any more. */
	if (!ib_device_try_get(&sdev->ibdev)) {
		skb_queue_purge(&sdev->local_q);
		return;
	}
	for (n = 0; n < SROCE_LOCAL_BUDGET && (skb = skb_dequeue(&sdev->local_q)); n++) {
		sroce_count_inc(sdev, rx_pkts);
		sroce_count_inc(sdev, rx_local);
		sroce_batch_init(&b);
		sroce_core_rx(sdev->core, sroce_pkt_from_rx(sdev, skb), &b);
		sroce_batch_flush(sdev, &b);
	}
	if (!skb_queue_empty(&sdev->local_q))
		tasklet_schedule(t);
	ib_device_put(&sdev->ibdev);
}

void sroce_local_init(struct sroce_dev *sdev)
{
	skb_queue_head_init(&sdev->local_q);
	tasklet_setup(&sdev->local_rx, sroce_local_rx);
}

/* dealloc_driver: unregistered, so nobody queues any more. */
void sroce_local_exit(struct sroce_dev *sdev)
{
	tasklet_kill(&sdev->local_rx);
	skb_queue_purge(&sdev->local_q);
}

static struct socket *sroce_udp_open(struct net *net, bool ipv6)
{
	struct udp_port_cfg udp_cfg = {
		.family = ipv6 ? AF_INET6 : AF_INET,
		.ipv6_v6only = ipv6,
		.local_udp_port = htons(SROCE_UDP_PORT),
	};
	struct udp_tunnel_sock_cfg tnl_cfg = {
		.encap_type = 1,
		.encap_rcv = sroce_udp_encap_recv,
	};
	struct socket *sock;
	int err;

	err = udp_sock_create(net, &udp_cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(net, sock, &tnl_cfg);
	return sock;
}

static void sroce_udp_close_locked(struct sroce_net *sn)
{
	if (sn->sk6)
		udp_tunnel_sock_release(sn->sk6);
	if (sn->sk4)
		udp_tunnel_sock_release(sn->sk4);
	sn->sk4 = sn->sk6 = NULL;
}

/* A reference on the namespace's sockets for one device, opening them for
 * the first. */
struct sroce_net *sroce_net_get(struct net *net)
{
	struct sroce_net *sn = net_generic(net, sroce_net_id);
	struct socket *sock;
	int err = 0;

	mutex_lock(&sn->lock);
	if (sn->users++)
		goto out;
	sock = sroce_udp_open(net, false);
	if (IS_ERR(sock)) {
		err = PTR_ERR(sock);
		pr_warn_ratelimited("sroce: cannot open UDP port %d (%d): is another RoCE driver using it in this namespace?\n",
				    SROCE_UDP_PORT, err);
		goto fail;
	}
	sn->sk4 = sock;
	if (sroce_ipv6 && IS_ENABLED(CONFIG_IPV6)) {
		sock = sroce_udp_open(net, true);
		/* No IPv6 in this namespace is fine; a taken port is not. */
		if (IS_ERR(sock) && PTR_ERR(sock) != -EAFNOSUPPORT) {
			err = PTR_ERR(sock);
			goto fail;
		}
		sn->sk6 = IS_ERR(sock) ? NULL : sock;
	}
out:
	mutex_unlock(&sn->lock);
	return sn;
fail:
	sroce_udp_close_locked(sn);
	sn->users--;
	mutex_unlock(&sn->lock);
	return ERR_PTR(err);
}

void sroce_net_put(struct sroce_net *sn)
{
	mutex_lock(&sn->lock);
	if (!WARN_ON(!sn->users) && !--sn->users)
		sroce_udp_close_locked(sn);
	mutex_unlock(&sn->lock);
}

/* sn is ndev's namespace's (ndev held: its namespace stays while we look). */
bool sroce_net_of(struct sroce_net *sn, struct net_device *ndev)
{
	bool same;

	rcu_read_lock();
	same = net_generic(dev_net(ndev), sroce_net_id) == sn;
	rcu_read_unlock();
	return same;
}

static void sroce_unregister_fn(struct work_struct *work)
{
	struct sroce_dev *sdev = container_of(work, struct sroce_dev, unregister_work);

	ib_unregister_device(&sdev->ibdev);
	put_device(&sdev->ibdev.dev);
}

/* From the netdev notifier, under rtnl, where ib_unregister_device cannot
 * run. The queued work holds the device memory (not its registration):
 * ib_core tolerates a second unregistration, e.g. by rmmod, of the same
 * device. Our own queue, unlike ib_core's, can be flushed at namespace exit. */
void sroce_net_queue_unregister(struct sroce_dev *sdev)
{
	get_device(&sdev->ibdev.dev);
	if (!queue_work(sroce_wq, &sdev->unregister_work))
		put_device(&sdev->ibdev.dev); /* already queued */
}

void sroce_net_init_unregister_work(struct sroce_dev *sdev)
{
	INIT_WORK(&sdev->unregister_work, sroce_unregister_fn);
}

static int __net_init sroce_pernet_init(struct net *net)
{
	struct sroce_net *sn = net_generic(net, sroce_net_id);

	mutex_init(&sn->lock);
	return 0;
}

static void __net_exit sroce_pernet_exit(struct net *net)
{
	struct sroce_net *sn = net_generic(net, sroce_net_id);

	/* The namespace's netdevs are gone (device pernet ops exit first) and
	 * their devices' unregistrations are queued: let them finish, which
	 * drops every socket reference. */
	flush_workqueue(sroce_wq);
	mutex_lock(&sn->lock);
	if (sn->users) {
		pr_err("sroce: namespace exit with %u devices left\n", sn->users);
		sroce_udp_close_locked(sn);
	}
	mutex_unlock(&sn->lock);
}

static struct pernet_operations sroce_net_ops = {
	.init = sroce_pernet_init,
	.exit = sroce_pernet_exit,
	.id = &sroce_net_id,
	.size = sizeof(struct sroce_net),
};

int sroce_net_init(void)
{
	int err;

	sroce_wq = alloc_workqueue("sroce", WQ_UNBOUND, 0);
	if (!sroce_wq)
		return -ENOMEM;
	err = register_pernet_subsys(&sroce_net_ops);
	if (err)
		destroy_workqueue(sroce_wq);
	return err;
}

void sroce_net_exit(void)
{
	/* Pernet exit flushes sroce_wq, so the queue must outlive it. */
	unregister_pernet_subsys(&sroce_net_ops);
	destroy_workqueue(sroce_wq); /* runs queued unregistrations first */
}

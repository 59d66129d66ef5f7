// SPDX-License-Identifier: GPL-2.0
/*
 * net.c - the RoCEv2 UDP sockets, one set per network namespace that has a
 * sroce device, and the deferred device unregistration that namespace and
 * netdev teardown need.
 *
 * rdma_rxe holds UDP 4791 in init_net only; opening our sockets lazily in the
 * device's own namespace lets sroce and rxe run side by side in one kernel.
 */
#include <linux/mutex.h>
#include <linux/workqueue.h>
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

static int sroce_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	/* The transport arrives with the next milestone; until then nothing
	 * is accepted and nothing leaks. */
	kfree_skb(skb);
	return 0;
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

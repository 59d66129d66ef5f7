// SPDX-License-Identifier: GPL-2.0
/*
 * path.c - the paths of env.h: the route to a RoCEv2 peer, from an
 * rdma_ah_attr (modify_qp with IB_QP_AV, create_ah).
 *
 * A path keeps the source GID and the route looked up in its netdev's
 * namespace, bound to that netdev. It never holds the netdev: deleting a
 * VLAN whose GID a QP uses must not wait for the QP (unregister_netdevice
 * would hang until the user let go). The GID's netdev is looked up again,
 * under RCU, whenever the route is; a GID that went away, or a netdev that
 * left the namespace, means no route. The cached route is checked before
 * use (dst_check) and looked up again when the routing changed. Link-layer
 * addresses are the neighbour layer's business when the packet goes out;
 * a destination on this host (a QP talking to its own device's address)
 * gets a local route; pkt.c then hands its packets to the device that owns
 * the address (net.c), not to lo.
 */
#include <linux/kref.h>
#include <linux/spinlock.h>
#include <net/addrconf.h>
#include <net/dst.h>
#include <net/ip6_fib.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <rdma/ib_cache.h>

#include "sroce.h"

struct sroce_env_path {
	struct kref ref;
	struct sroce_dev *sdev;       /* outlives its paths: the core drops them first */
	const struct ib_gid_attr *sgid_attr; /* held; its netdev is not */
	int ifindex;                  /* the GID's netdev at creation */
	unsigned int headroom;        /* its link-layer headroom (LL_RESERVED_SPACE) */
	possible_net_t net;           /* its namespace at creation, not held */
	bool ipv6;
	struct in6_addr saddr;        /* IPv4: v4-mapped, as in the GID */
	struct in6_addr daddr;
	__be32 flowinfo;              /* IPv6 traffic class and flow label */
	spinlock_t lock;              /* dst, cookie */
	struct dst_entry *dst;        /* one reference, NULL after it went stale */
	u32 cookie;                   /* IPv6 route validity (dst_check) */
	/* Transmit order (below): the packets the core handed over, in its
	 * order; the batch that sends them (cmpxchg, NULL: none), and the
	 * link in that batch's list. */
	struct sk_buff_head txq;
	struct sroce_env_batch *tx_owner;
	struct sroce_env_path *tx_next;
};

struct sroce_dev *sroce_path_dev(const struct sroce_env_path *path)
{
	return path->sdev;
}

unsigned int sroce_path_headroom(const struct sroce_env_path *path)
{
	return path->headroom;
}

struct sroce_env_path *sroce_path_get(struct sroce_env_path *path)
{
	kref_get(&path->ref);
	return path;
}

static void sroce_path_release(struct kref *ref)
{
	struct sroce_env_path *p = container_of(ref, struct sroce_env_path, ref);

	/* Every queued packet and every batch owning it holds a reference. */
	WARN_ON_ONCE(!skb_queue_empty(&p->txq) || p->tx_owner);
	skb_queue_purge(&p->txq);
	dst_release(p->dst);
	rdma_put_gid_attr(p->sgid_attr); /* any context: ib_core frees the entry from a work */
	sroce_count_dec(p->sdev, paths);
	kfree(p);
}

/* Any context: the core may drop a path under its locks. */
void sroce_env_path_put(struct sroce_env_path *path)
{
	if (path)
		kref_put(&path->ref, sroce_path_release);
}

/*
 * Transmit order. The core hands packets over under its QP lock, in the
 * QP's order, but the batches they go on are flushed after the lock is
 * dropped, by whichever context made them: a doorbell, the SQ poller, a
 * received ACK, a timer. Two batches of one QP flushed at once would
 * interleave on the wire (the debug kernel showed UC and UD messages
 * landing in each other's receive buffers, 2026-11-28). So a packet goes
 * on its path's queue, and one batch at a time owns the path and sends
 * the whole queue: its own packets and those of any batch that queued
 * behind it. The owner gives the path up after sending, then looks again:
 * a packet queued meanwhile by a batch that saw it still owning is sent
 * by it, or by the batch that takes the path over.
 */
void sroce_path_tx_queue(struct sroce_env_path *path, struct sk_buff *skb, struct sroce_env_batch *b)
{
	skb_queue_tail(&path->txq, skb);
	/* Full barrier (cmpxchg) after the queueing: pairs with the owner's
	 * xchg before it looks at the queue again. */
	if (READ_ONCE(path->tx_owner) == b || cmpxchg(&path->tx_owner, NULL, b))
		return;
	path->tx_next = b->paths;
	b->paths = sroce_path_get(path);
}

void sroce_path_tx_flush(struct sroce_dev *sdev, struct sroce_env_batch *b)
{
	struct sroce_env_path *p;
	struct sk_buff_head q;
	unsigned long flags;

	__skb_queue_head_init(&q);
	while ((p = b->paths)) {
		b->paths = p->tx_next;
		do {
			spin_lock_irqsave(&p->txq.lock, flags);
			skb_queue_splice_tail_init(&p->txq, &q);
			spin_unlock_irqrestore(&p->txq.lock, flags);
			sroce_pkts_xmit(sdev, &q);
			/* Given up after sending, so nobody sends a later
			 * packet of the path before these. */
			xchg(&p->tx_owner, NULL);
		} while (!skb_queue_empty_lockless(&p->txq) && !cmpxchg(&p->tx_owner, NULL, b));
		sroce_env_path_put(p);
	}
}

static struct dst_entry *sroce_route4(struct sroce_env_path *p, struct net *net)
{
	struct flowi4 fl4 = {
		.flowi4_oif = p->ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.saddr = p->saddr.s6_addr32[3],
		.daddr = p->daddr.s6_addr32[3],
		.fl4_dport = htons(SROCE_UDP_PORT),
	};
	struct rtable *rt = ip_route_output_key(net, &fl4);

	return IS_ERR(rt) ? ERR_CAST(rt) : &rt->dst;
}

static struct dst_entry *sroce_route6(struct sroce_env_path *p, struct net *net, u32 *cookie)
{
#if IS_ENABLED(CONFIG_IPV6)
	struct flowi6 fl6 = {
		.flowi6_oif = p->ifindex,
		.flowi6_proto = IPPROTO_UDP,
		.saddr = p->saddr,
		.daddr = p->daddr,
		.flowlabel = p->flowinfo,
		.fl6_dport = htons(SROCE_UDP_PORT),
	};
	struct dst_entry *dst;

	/* Through the stub: IPv6 may be disabled at boot. */
	dst = ipv6_stub->ipv6_dst_lookup_flow(net, NULL, &fl6, NULL);
	if (IS_ERR(dst))
		return dst;
	if (dst->error) {
		int err = dst->error;

		dst_release(dst);
		return ERR_PTR(err);
	}
	*cookie = rt6_get_cookie((struct rt6_info *)dst);
	return dst;
#else
	return ERR_PTR(-EAFNOSUPPORT);
#endif
}

static struct dst_entry *sroce_route(struct sroce_env_path *p, struct net *net, u32 *cookie)
{
	*cookie = 0;
	return p->ipv6 ? sroce_route6(p, net, cookie) : sroce_route4(p, net);
}

/*
 * The GID is still there, on the netdev the path was made for, in the
 * path's namespace: a GID of a deleted or moved netdev reads as gone. The
 * caller is an RCU reader (bottom halves off, sroce_pkts_xmit): the netdev
 * seen here cannot finish unregistering, so its namespace cannot go, until
 * the packets are sent.
 */
static bool sroce_path_gid_live(struct sroce_env_path *p)
{
	struct net_device *ndev;

	RCU_LOCKDEP_WARN(!rcu_read_lock_any_held(), "sroce: path route outside an RCU reader");
	ndev = rdma_read_gid_attr_ndev_rcu(p->sgid_attr);
	return !IS_ERR(ndev) && ndev->ifindex == p->ifindex && net_eq(dev_net(ndev), read_pnet(&p->net));
}

struct dst_entry *sroce_path_dst(struct sroce_env_path *p, struct net **netp)
{
	struct dst_entry *dst, *stale = NULL;
	u32 cookie;

	/* A cached route is dropped (dst_check) when its netdev goes or
	 * leaves the namespace, so only a new lookup checks the GID. */
	*netp = read_pnet(&p->net);
	spin_lock_bh(&p->lock);
	dst = p->dst;
	if (dst && !dst_check(dst, p->cookie)) {
		stale = dst;
		p->dst = dst = NULL;
	}
	if (dst)
		dst_hold(dst);
	spin_unlock_bh(&p->lock);
	dst_release(stale);
	if (dst)
		return dst;

	if (!sroce_path_gid_live(p))
		return NULL;
	dst = sroce_route(p, *netp, &cookie);
	if (IS_ERR(dst))
		return NULL;
	spin_lock_bh(&p->lock);
	if (!p->dst) {
		p->dst = dst_clone(dst);
		p->cookie = cookie;
	}
	spin_unlock_bh(&p->lock);
	return dst;
}

struct sroce_env_path *sroce_path_create(struct sroce_dev *sdev, const struct rdma_ah_attr *ah_attr,
					 struct sroce_core_path_info *info, bool sleepable)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;
	enum rdma_network_type type;
	struct sroce_env_path *p;
	struct net_device *ndev;
	struct dst_entry *dst;
	bool dst_v4;

	/* RoCEv2 only: a GRH with a source GID of this device, and a
	 * destination of the same IP family. */
	if (ah_attr->type != RDMA_AH_ATTR_TYPE_ROCE || !(rdma_ah_get_ah_flags(ah_attr) & IB_AH_GRH))
		return ERR_PTR(-EINVAL);
	grh = rdma_ah_read_grh(ah_attr);
	sgid_attr = grh->sgid_attr;
	if (!sgid_attr || sgid_attr->device != &sdev->ibdev)
		return ERR_PTR(-EINVAL);
	type = rdma_gid_attr_network_type(sgid_attr);
	if (type != RDMA_NETWORK_IPV4 && type != RDMA_NETWORK_IPV6)
		return ERR_PTR(-EINVAL);
	dst_v4 = ipv6_addr_v4mapped((const struct in6_addr *)grh->dgid.raw);
	if (dst_v4 != (type == RDMA_NETWORK_IPV4))
		return ERR_PTR(-EINVAL);

	/* create_ah may come in atomic context. */
	p = kzalloc(sizeof(*p), GFP_ATOMIC);
	if (!p)
		return ERR_PTR(-ENOMEM);
	skb_queue_head_init(&p->txq);
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(sgid_attr);
	if (IS_ERR(ndev)) {
		rcu_read_unlock();
		kfree(p);
		return ERR_CAST(ndev);
	}
	write_pnet(&p->net, dev_net(ndev));
	p->ifindex = ndev->ifindex;
	p->headroom = LL_RESERVED_SPACE(ndev);
	rcu_read_unlock();
	rdma_hold_gid_attr(sgid_attr);
	p->sgid_attr = sgid_attr;

	kref_init(&p->ref);
	spin_lock_init(&p->lock);
	p->sdev = sdev;
	p->ipv6 = type == RDMA_NETWORK_IPV6;
	memcpy(&p->saddr, &sgid_attr->gid, sizeof(p->saddr));
	memcpy(&p->daddr, &grh->dgid, sizeof(p->daddr));
	p->flowinfo = ip6_make_flowinfo(grh->traffic_class, htonl(grh->flow_label & IB_GRH_FLOWLABEL_MASK));
	sroce_count_inc(sdev, paths);

	/* Fail now rather than drop every packet: no route, no path. Not
	 * where create_ah may not sleep: ib_cm creates its AHs under a
	 * spinlock with interrupts off, and the route lookup may take
	 * rcu_read_lock_bh (IPv6 optimistic DAD), whose unlock must not run
	 * with interrupts off (lockdep's first report on the debug kernel).
	 * The first packet looks the route up then (sroce_path_dst). */
	if (sleepable) {
		rcu_read_lock(); /* as for sroce_path_gid_live's other caller */
		dst = sroce_path_gid_live(p) ? sroce_route(p, read_pnet(&p->net), &p->cookie) :
					       ERR_PTR(-ENODEV);
		rcu_read_unlock();
		if (IS_ERR(dst)) {
			sroce_env_path_put(p);
			return ERR_CAST(dst);
		}
		p->dst = dst;
	}

	memset(info, 0, sizeof(*info));
	info->ipv6 = p->ipv6;
	info->tclass = grh->traffic_class;
	info->hop_limit = grh->hop_limit;
	info->flow_label = grh->flow_label & IB_GRH_FLOWLABEL_MASK;
	memcpy(info->src, &sgid_attr->gid, sizeof(info->src));
	memcpy(info->dst, &grh->dgid, sizeof(info->dst));
	return p;
}

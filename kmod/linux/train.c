// SPDX-License-Identifier: GPL-2.0
/*
 * train.c - packet trains (issue 17): consecutive packets of one path with
 * equal UDP payloads (the last may be shorter) leave as one skb with UDP
 * GSO (SKB_GSO_UDP_L4), so route, netfilter, neighbour, qdisc and veth are
 * crossed once per train, not once per packet.
 *
 * Segmentation gives every segment the first packet's headers except the
 * IPv4 ID (the first's + k), the IP and UDP lengths and the checksums, in
 * the sender's validate_xmit_skb (a device without UDP segmentation) as in
 * the receiving host's UDP layer before encap_rcv (veth carries the train
 * whole). Documentation/research/udp-gso-trains.md has the 6.1 code paths.
 * The core numbers IPv4 IDs by PSN (tx.cpp), so a train is made only of
 * packets that segmentation rebuilds byte for byte, each ICRC included
 * (the ICRC covers the ID and the lengths): sroce_train_fits checks every
 * packet against the first before it joins.
 *
 * A capture on the sending or receiving veth (tcpdump, sroce-dump -i)
 * sees the train as one frame; trains=N sends single packets.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/dst.h>
#include <net/ip6_checksum.h>
#include <net/udp.h>
#include <asm/unaligned.h>

#include "sroce.h"
#include "train.h"

/* Off by default: under TCG they measured no gain (Documentation/benchmarks.md,
 * "Receive steering and packet trains"). */
bool sroce_trains;
module_param_named(trains, sroce_trains, bool, 0644);
MODULE_PARM_DESC(trains, "Send consecutive equal-size packets of a QP as one UDP GSO skb where the stack segments it in software (veth, devices without UDP segmentation offload) (default: N)");

/* Packets per train at most: a train of 1 KiB packets stays under 64 KiB. */
#define SROCE_TRAIN_MAX 32

/* Where the stack, not a NIC, segments the train: how a NIC's UDP
 * segmentation offload numbers IPv4 IDs is documented nowhere (the kernel's
 * segmentation-offloads.rst states the rule for TCP only), and its
 * segments' ICRCs depend on it. Only the first device is seen: a veth
 * bridged, routed or redirected (tc) on to such a NIC hands it the train.
 * Resent packets never travel in trains (tx.cpp), so such a path slows a
 * QP down but cannot stall it; trains=N avoids it (transport.md, "Packet
 * trains"). */
static bool sroce_train_dev_ok(const struct net_device *dev)
{
	if (!(dev->features & NETIF_F_GSO_UDP_L4))
		return true; /* validate_xmit_skb segments it */
	return dev->rtnl_link_ops && !strcmp(dev->rtnl_link_ops->kind, "veth");
}

#define SROCE_TRAIN_BTH 12 /* bytes of the BTH compared */

/* The IP + UDP header length of a packet the core built for this family
 * (no IPv4 options, no IPv6 extension headers; its BTH linear), 0 if it is
 * not one. A zero-copy packet (its payload in fragments, pkt.c) is not:
 * a train copies its packets' payloads into pages of its own, which would
 * undo what zero-copy saved, so such packets leave one by one. */
static unsigned int sroce_train_hlen(const struct sk_buff *skb, bool v6)
{
	unsigned int hlen = (v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) + sizeof(struct udphdr);

	if (skb_is_nonlinear(skb) || skb_headlen(skb) < hlen + SROCE_TRAIN_BTH)
		return 0;
	if (v6)
		return ipv6_hdr(skb)->nexthdr == IPPROTO_UDP ? hlen : 0;
	return ip_hdr(skb)->ihl == 5 && ip_hdr(skb)->protocol == IPPROTO_UDP ? hlen : 0;
}

/* The BTH's PSN (bytes 9-11). */
static u32 sroce_train_psn(const u8 *bth)
{
	return get_unaligned_be32(bth + 8) & 0xffffff;
}

/*
 * Whether next, the k-th packet after first, is what segment k of a train
 * starting with first would be: the same addresses, ports, traffic class,
 * flow label, TTL and flags, the IPv4 ID first's + k, a UDP payload of
 * first's length or (ending the train) shorter. And a train is one QP's
 * run of PSNs: the same P_Key and destination QP, the PSN first's + k
 * (which sroce-dump's split relies on; repeated ACKs never join).
 */
static bool sroce_train_fits(const struct sk_buff *first, const struct sk_buff *next, unsigned int k,
			     unsigned int hlen, bool v6, bool *last)
{
	const struct udphdr *u0 = (const void *)(first->data + hlen - sizeof(struct udphdr));
	const struct udphdr *u1 = (const void *)(next->data + hlen - sizeof(struct udphdr));
	const u8 *b0 = first->data + hlen, *b1 = next->data + hlen;

	if (sroce_train_hlen(next, v6) != hlen || u0->source != u1->source || u0->dest != u1->dest ||
	    next->len > first->len)
		return false;
	/* P_Key (bytes 2-3) and destination QP (5-7); the PSN */
	if (memcmp(b0 + 2, b1 + 2, 2) || memcmp(b0 + 5, b1 + 5, 3) ||
	    sroce_train_psn(b1) != ((sroce_train_psn(b0) + k) & 0xffffff))
		return false;
	*last = next->len < first->len;
	if (v6) {
		const struct ipv6hdr *a = ipv6_hdr(first), *b = ipv6_hdr(next);

		/* version, traffic class, flow label; then next header, hop
		 * limit and both addresses */
		return !memcmp(a, b, 4) && !memcmp(&a->nexthdr, &b->nexthdr, 2 + 32);
	} else {
		const struct iphdr *a = ip_hdr(first), *b = ip_hdr(next);

		return a->tos == b->tos && a->frag_off == b->frag_off && a->ttl == b->ttl &&
		       a->saddr == b->saddr && a->daddr == b->daddr &&
		       ntohs(b->id) == (u16)(ntohs(a->id) + k);
	}
}

/*
 * How many packets, first and those queued right after it on pkts with the
 * same path, form a train for dev (1: none): each fits, at most
 * SROCE_TRAIN_MAX and dev's GSO segments, 64 KiB in all.
 */
unsigned int sroce_train_len(const struct sk_buff *first, const struct sk_buff_head *pkts, const void *path,
			     const struct net_device *dev, bool v6)
{
	unsigned int hlen = sroce_train_hlen(first, v6), n = 1, len, limit, max_n;
	bool last = false;
	struct sk_buff *next;

	if (!hlen)
		return 1;
	/* IP lengths are 16 bits; past the device's GSO limits (its size
	 * counts the link-layer header, and is reached at equality) the stack
	 * would segment at the sender anyway. */
	limit = min_t(unsigned int, dev->gso_max_size - dev->hard_header_len - 1, U16_MAX);
	max_n = min_t(unsigned int, SROCE_TRAIN_MAX, dev->gso_max_segs);
	len = first->len;
	for (next = skb_peek(pkts); next && !last && n < max_n; next = skb_peek_next(next, pkts)) {
		if (sroce_skb_cb(next)->path != path || !sroce_train_fits(first, next, n, hlen, v6, &last) ||
		    len + (next->len - hlen) > limit)
			break;
		len += next->len - hlen;
		n++;
	}
	return n;
}
SROCE_EXPORT_FOR_TESTS(sroce_train_len);

/* The train's skb for first and the n - 1 packets at the head of pkts
 * (which stay there): first's headers in the linear part, then every
 * packet's UDP payload (BTH to ICRC) in page fragments (no high-order
 * allocation in softirq), the UDP and IP lengths of the whole, the UDP
 * checksum seeded for CHECKSUM_PARTIAL, GSO fields set. NULL: no memory. */
struct sk_buff *sroce_train_build(const struct sk_buff *first, const struct sk_buff_head *pkts, unsigned int n,
				  const struct net_device *dev, bool v6)
{
	unsigned int hlen = sroce_train_hlen(first, v6), seg = first->len - hlen, total = 0, at = hlen, ulen, i;
	const struct sk_buff *p;
	struct sk_buff *skb;
	struct udphdr *uh;
	int err;

	for (i = 0, p = first; i < n; i++, p = i == 1 ? skb_peek(pkts) : skb_peek_next((struct sk_buff *)p, pkts))
		total += p->len - hlen;
	/* A failure falls back to single packets: no warning for it. */
	skb = alloc_skb_with_frags(LL_RESERVED_SPACE(dev) + hlen, total, 0, &err, GFP_ATOMIC | __GFP_NOWARN);
	if (!skb)
		return NULL;
	skb_reserve(skb, LL_RESERVED_SPACE(dev));
	skb_reset_network_header(skb);
	skb_put_data(skb, first->data, hlen);
	skb->data_len = total;
	skb->len += total;
	for (i = 0, p = first; i < n; i++, p = i == 1 ? skb_peek(pkts) : skb_peek_next((struct sk_buff *)p, pkts)) {
		unsigned int len = p->len - hlen;

		/* The core's packets are linear (sroce_env_pkt_alloc). */
		if (skb_headlen(p) != p->len || skb_store_bits(skb, at, p->data + hlen, len)) {
			kfree_skb(skb);
			return NULL;
		}
		at += len;
	}
	skb_set_transport_header(skb, hlen - sizeof(struct udphdr));
	uh = udp_hdr(skb);
	ulen = skb->len - skb_transport_offset(skb);
	uh->len = htons(ulen); /* the whole: segmentation subtracts it */
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_transport_header(skb) - skb->head;
	skb->csum_offset = offsetof(struct udphdr, check);
	if (v6) {
		struct ipv6hdr *ip6h = ipv6_hdr(skb);

		skb->protocol = htons(ETH_P_IPV6);
		ip6h->payload_len = htons(ulen);
		uh->check = ~csum_ipv6_magic(&ip6h->saddr, &ip6h->daddr, ulen, IPPROTO_UDP, 0);
	} else {
		struct iphdr *iph = ip_hdr(skb);

		skb->protocol = htons(ETH_P_IP);
		iph->tot_len = htons(skb->len);
		ip_send_check(iph);
		uh->check = ~csum_tcpudp_magic(iph->saddr, iph->daddr, ulen, IPPROTO_UDP, 0);
	}
	skb_shinfo(skb)->gso_size = seg;
	skb_shinfo(skb)->gso_type = SKB_GSO_UDP_L4;
	skb_shinfo(skb)->gso_segs = n;
	return skb;
}
SROCE_EXPORT_FOR_TESTS(sroce_train_build);

/*
 * first (prepared for dst, not same-host) and the packets queued right
 * after it on the same path as one train, when at least two fit: the
 * train's skb, with first and the n - 1 followers taken off pkts, their
 * path references and in-flight counts dropped, and freed. NULL: send
 * first alone (pkts untouched).
 */
struct sk_buff *sroce_train_collect(struct sk_buff *first, struct sk_buff_head *pkts, struct dst_entry *dst,
				    struct sroce_env_path *path, unsigned int *count)
{
	bool v6 = dst->ops->family == AF_INET6;
	struct sk_buff *skb, *next;
	unsigned int n, i;

	/* IPsec, and an IPv6 route that fragments every GSO skb (allfrag,
	 * which drops one larger than the MTU): single packets only. */
	if (!READ_ONCE(sroce_trains) || !sroce_train_dev_ok(dst->dev) || dst_xfrm(dst) || dst_allfrag(dst))
		return NULL;
	n = sroce_train_len(first, pkts, path, dst->dev, v6);
	if (n < 2)
		return NULL;
	skb = sroce_train_build(first, pkts, n, dst->dev, v6);
	if (!skb)
		return NULL; /* no memory: the packets go one by one */
	consume_skb(first);
	for (i = 1; i < n; i++) {
		next = __skb_dequeue(pkts);
		sroce_pkt_uncount(next);
		sroce_env_path_put(sroce_skb_cb(next)->path);
		consume_skb(next);
	}
	*count = n;
	return skb;
}

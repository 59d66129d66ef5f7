// SPDX-License-Identifier: GPL-2.0
/*
 * pkt.c - the packets of env.h. A struct sroce_env_pkt is an sk_buff whose
 * data starts at the IP header: the core writes (sends) or reads (receives)
 * everything from there on, the glue owns the link layer and the route.
 *
 * Per-packet work that needs no core lock (route, UDP checksum, the IP
 * output path) happens in sroce_pkts_xmit at flush time, not in
 * sroce_env_pkt_send, which the core calls under its own locks.
 */
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/dst.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ip6_fib.h>
#include <net/route.h>
#include <net/ipv6.h>

#include "sroce.h"
#include "train.h"

static inline struct sk_buff *to_skb(const struct sroce_env_pkt *pkt)
{
	return (struct sk_buff *)pkt;
}

static void sroce_pkt_count(struct sk_buff *skb, struct sroce_dev *sdev)
{
	struct sroce_skb_cb *cb = sroce_skb_cb(skb);

	cb->sdev = sdev;
	cb->path = NULL;
	sroce_count_inc(sdev, pkts_in_flight);
}

void sroce_pkt_uncount(struct sk_buff *skb)
{
	struct sroce_skb_cb *cb = sroce_skb_cb(skb);

	if (cb->sdev)
		sroce_count_dec(cb->sdev, pkts_in_flight);
	cb->sdev = NULL;
}

struct sroce_env_pkt *sroce_env_pkt_alloc(struct sroce_env_path *path, unsigned int len,
					  unsigned char **data)
{
	unsigned int room = sroce_path_headroom(path);
	struct sk_buff *skb;

	if (WARN_ON_ONCE(len > U16_MAX)) /* no IP packet is that long: a core bug */
		return NULL;
	skb = alloc_skb(room + len, GFP_ATOMIC);
	if (unlikely(!skb))
		return NULL;
	skb_reserve(skb, room);
	skb_reset_network_header(skb);
	*data = skb_put(skb, len);
	sroce_pkt_count(skb, sroce_path_dev(path));
	return (struct sroce_env_pkt *)skb;
}

struct sroce_env_pkt *sroce_pkt_from_rx(struct sroce_dev *sdev, struct sk_buff *skb)
{
	/* The IP and UDP layers are done with the cb. */
	sroce_pkt_count(skb, sdev);
	return (struct sroce_env_pkt *)skb;
}

void sroce_env_pkt_free(struct sroce_env_pkt *pkt)
{
	struct sk_buff *skb = to_skb(pkt);

	if (!skb)
		return;
	sroce_pkt_uncount(skb);
	/* The core may free under a lock with interrupts off. */
	dev_consume_skb_any(skb);
}
SROCE_EXPORT_FOR_TESTS(sroce_env_pkt_free);

void sroce_env_pkt_send(struct sroce_env_batch *b, struct sroce_env_path *path,
			struct sroce_env_pkt *pkt)
{
	struct sk_buff *skb = to_skb(pkt);

	if (WARN_ON_ONCE(!path)) {
		sroce_env_pkt_free(pkt);
		return;
	}
	sroce_skb_cb(skb)->path = sroce_path_get(path);
	sroce_path_tx_queue(path, skb, b);
}

const unsigned char *sroce_env_pkt_head(const struct sroce_env_pkt *pkt, unsigned int *linear,
					unsigned int *total)
{
	const struct sk_buff *skb = to_skb(pkt);

	*linear = skb_headlen(skb);
	*total = skb->len;
	return skb->data;
}
SROCE_EXPORT_FOR_TESTS(sroce_env_pkt_head);

int sroce_env_pkt_read(const struct sroce_env_pkt *pkt, unsigned int off, void *dst,
		       unsigned int len)
{
	const struct sk_buff *skb = to_skb(pkt);

	if (off > skb->len || len > skb->len - off)
		return -EFAULT;
	return skb_copy_bits(skb, off, dst, len);
}
SROCE_EXPORT_FOR_TESTS(sroce_env_pkt_read);

unsigned int sroce_env_pkt_crc32(const struct sroce_env_pkt *pkt, unsigned int off,
				 unsigned int len, unsigned int crc)
{
	struct sk_buff *skb = to_skb(pkt);
	struct skb_seq_state st;
	unsigned int done = 0;

	/* The core checks lengths before it sums: a range outside the
	 * packet is its bug. */
	if (WARN_ON_ONCE(off > skb->len || len > skb->len - off))
		return crc;
	/* Fragment by fragment, without linearizing the payload. */
	skb_prepare_seq_read(skb, off, off + len, &st);
	while (done < len) {
		const u8 *data;
		unsigned int n = skb_seq_read(done, &data, &st);

		if (!n)
			break;
		n = min(n, len - done); /* blocks are not cut at the upper bound */
		crc = sroce_env_crc32_le(crc, data, n);
		done += n;
	}
	skb_abort_seq_read(&st);
	return crc;
}
SROCE_EXPORT_FOR_TESTS(sroce_env_pkt_crc32);

/*
 * Zero-copy send: a page of a user MR as a fragment, with its own page
 * reference, so that deregistration or process exit while the packet waits
 * in a queue frees nothing under it. The user may rewrite the bytes before
 * they leave (as with MSG_ZEROCOPY): SKBFL_SHARED_FRAG tells the stack, and
 * the peer's ICRC check drops such a packet.
 */
int sroce_env_pkt_add_frag(struct sroce_env_pkt *pkt, const void *kva, unsigned int len)
{
	struct sk_buff *skb = to_skb(pkt);
	struct skb_shared_info *si = skb_shinfo(skb);

	BUILD_BUG_ON(SROCE_ENV_PKT_FRAGS + 1 > MAX_SKB_FRAGS);
	if (!len || offset_in_page(kva) + len > PAGE_SIZE || !virt_addr_valid(kva))
		return -EINVAL;
	if (si->nr_frags >= SROCE_ENV_PKT_FRAGS)
		return -ENOSPC;
	get_page(virt_to_page(kva));
	skb_fill_page_desc(skb, si->nr_frags, virt_to_page(kva), offset_in_page(kva), len);
	si->flags |= SKBFL_SHARED_FRAG;
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
	return 0;
}
SROCE_EXPORT_FOR_TESTS(sroce_env_pkt_add_frag);

/* The pad and ICRC after the fragments, in a page fragment of its own. */
unsigned char *sroce_env_pkt_add_tail(struct sroce_env_pkt *pkt, unsigned int len)
{
	struct sk_buff *skb = to_skb(pkt);
	struct page *page;
	void *p;

	if (WARN_ON_ONCE(len > 8 || skb_shinfo(skb)->nr_frags >= MAX_SKB_FRAGS))
		return NULL;
	p = netdev_alloc_frag(len);
	if (unlikely(!p))
		return NULL;
	page = virt_to_head_page(p);
	skb_fill_page_desc(skb, skb_shinfo(skb)->nr_frags, page, p - page_address(page), len);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += SKB_DATA_ALIGN(len);
	return p;
}
SROCE_EXPORT_FOR_TESTS(sroce_env_pkt_add_tail);

/* ---- transmission (flush) ------------------------------------------------ */

/*
 * RoCEv2 over IPv6 needs a UDP checksum (a zero one is invalid there), which
 * the core leaves zero: it is not part of the ICRC. The route's device
 * computes it when it can; otherwise it is computed here.
 */
static void sroce_udp6_csum(struct sk_buff *skb, struct dst_entry *dst)
{
	const struct ipv6hdr *ip6h = ipv6_hdr(skb);
	struct udphdr *uh = udp_hdr(skb);
	unsigned int len = skb->len - skb_transport_offset(skb);

	uh->check = 0;
	if (can_checksum_protocol(dst->dev->features, htons(ETH_P_IPV6))) {
		skb->ip_summed = CHECKSUM_PARTIAL;
		skb->csum_start = skb_transport_header(skb) - skb->head;
		skb->csum_offset = offsetof(struct udphdr, check);
		uh->check = ~csum_ipv6_magic(&ip6h->saddr, &ip6h->daddr, len, IPPROTO_UDP, 0);
		return;
	}
	skb->ip_summed = CHECKSUM_NONE;
	uh->check = csum_ipv6_magic(&ip6h->saddr, &ip6h->daddr, len, IPPROTO_UDP,
				    skb_checksum(skb, skb_transport_offset(skb), len, 0));
	if (!uh->check)
		uh->check = CSUM_MANGLED_0;
}

/*
 * Sets what the IP output path reads from the headers the core wrote: the
 * protocol, the transport header and the checksum state. false if the
 * headers are not IP/UDP of the route's family (a core bug).
 */
static bool sroce_pkt_prepare(struct sk_buff *skb, struct dst_entry *dst, bool local)
{
	unsigned int hlen = skb_headlen(skb);
	unsigned int thoff;

	if (dst->ops->family == AF_INET) {
		const struct iphdr *iph = ip_hdr(skb);

		if (hlen < sizeof(*iph) || iph->version != 4)
			return false;
		thoff = iph->ihl * 4;
		if (thoff < sizeof(*iph) || iph->protocol != IPPROTO_UDP ||
		    hlen < thoff + sizeof(struct udphdr))
			return false;
		skb->protocol = htons(ETH_P_IP);
		skb_set_transport_header(skb, thoff);
		skb->ip_summed = CHECKSUM_NONE; /* a zero UDP checksum is valid over IPv4 */
		return true;
	}
	if (dst->ops->family == AF_INET6) {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		if (hlen < sizeof(*ip6h) + sizeof(struct udphdr) || ip6h->version != 6 ||
		    ip6h->nexthdr != IPPROTO_UDP)
			return false;
		skb->protocol = htons(ETH_P_IPV6);
		skb_set_transport_header(skb, sizeof(*ip6h));
		/* No IP stack on the way to a local device: nothing checks it. */
		if (local)
			skb->ip_summed = CHECKSUM_UNNECESSARY;
		else
			sroce_udp6_csum(skb, dst);
		return true;
	}
	return false;
}

/* The route of the last path seen: consecutive packets of one path (a
 * message's packets, a burst of ACKs) check it once. */
struct sroce_xmit_cache {
	struct sroce_env_path *path; /* one reference */
	struct dst_entry *dst;       /* one reference, NULL: no route */
	struct net *net;
};

static void sroce_xmit_cache_drop(struct sroce_xmit_cache *c)
{
	dst_release(c->dst); /* NULL-safe */
	sroce_env_path_put(c->path);
	c->dst = NULL;
	c->path = NULL;
}

/* A route to an address of this host (of any device, in the path's
 * namespace): the packet would loop through lo (or a VRF device). */
static bool sroce_dst_local(struct dst_entry *dst)
{
	if (dst->dev->flags & IFF_LOOPBACK)
		return true;
	if (dst->ops->family == AF_INET)
		return ((struct rtable *)dst)->rt_type == RTN_LOCAL;
#if IS_ENABLED(CONFIG_IPV6)
	if (dst->ops->family == AF_INET6)
		return ((struct rt6_info *)dst)->rt6i_flags & RTF_LOCAL;
#endif
	return false;
}

static void sroce_pkt_xmit(struct sroce_dev *sdev, struct sk_buff *skb, struct sk_buff_head *pkts,
			   struct sroce_xmit_cache *c)
{
	struct sroce_env_path *path = sroce_skb_cb(skb)->path;
	struct sroce_dev *owner = sroce_path_dev(path);
	unsigned int n = 1;
	struct sk_buff *train;
	struct dst_entry *dst;
	bool local;
	int err;

	/* A core call on one device sends only on that device's paths. */
	WARN_ON_ONCE(sdev && owner != sdev);
	if (path == c->path) {
		sroce_env_path_put(path); /* the cache holds one */
	} else {
		sroce_xmit_cache_drop(c);
		c->path = path; /* takes over the packet's reference */
		c->dst = sroce_path_dst(path, &c->net);
	}
	sroce_pkt_uncount(skb);
	memset(skb->cb, 0, sizeof(skb->cb)); /* IPCB/IP6CB from here */
	if (unlikely(!c->dst)) {
		sroce_count_inc(owner, tx_no_route);
		kfree_skb(skb);
		return;
	}
	dst = c->dst;
	local = sroce_dst_local(dst);
	if (WARN_ON_ONCE(!sroce_pkt_prepare(skb, dst, local))) {
		sroce_count_inc(owner, tx_errors);
		kfree_skb(skb);
		return;
	}
	/* Same host: straight to the owning device's receive path, never
	 * through lo, whose packets any local user can forge (net.c drops
	 * every one). */
	if (local) {
		if (sroce_local_xmit(c->net, skb)) {
			sroce_count_inc(owner, tx_pkts);
			sroce_count_inc(owner, tx_local);
		}
		return;
	}
	/* The packets after it on this path may go with it (train.c). */
	train = sroce_train_collect(skb, pkts, dst, path, &n);
	if (train)
		skb = train;
	skb->dev = dst->dev;
	skb_dst_set(skb, dst_clone(dst));
	/* The neighbour layer resolves the link-layer destination, in the
	 * route's namespace. */
	if (dst->ops->family == AF_INET6)
		err = ip6_local_out(c->net, NULL, skb);
	else
		err = ip_local_out(c->net, NULL, skb);
	if (unlikely(net_xmit_eval(err))) {
		sroce_count_add(owner, tx_errors, n);
		return;
	}
	sroce_count_add(owner, tx_pkts, n);
	if (train) {
		sroce_count_inc(owner, tx_trains);
		sroce_count_add(owner, tx_train_pkts, n);
	}
}

/*
 * ip_local_out has no "more to come" flag; sending the whole batch with
 * bottom halves off at least lets a veth or loopback peer take the burst in
 * one softirq run, after the last packet.
 */
void sroce_pkts_xmit(struct sroce_dev *sdev, struct sk_buff_head *pkts)
{
	struct sroce_xmit_cache c = {};
	struct sk_buff *skb;

	local_bh_disable();
	while ((skb = __skb_dequeue(pkts)))
		sroce_pkt_xmit(sdev, skb, pkts, &c);
	sroce_xmit_cache_drop(&c);
	local_bh_enable();
}

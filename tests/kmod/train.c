// SPDX-License-Identifier: GPL-2.0
/*
 * train.c - tests of packet trains (kmod/linux/train.c): which queued
 * packets join a train, and that the kernel's own GSO (skb_gso_segment, as
 * the sender's validate_xmit_skb and the receiving UDP layer run it) turns
 * a train back into the very packets it was made of, every byte but the
 * UDP checksum (outside the ICRC). IPv4 across the 16-bit ID wrap, IPv6.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/net_namespace.h>
#include <asm/unaligned.h>

#include "sroce.h"
#include "train.h"
#include "selftest.h"

#define ST_PATH ((struct sroce_env_path *)0x5a5a0000ul) /* compared, never followed */
#define ST_MAX 40

/* Packet k of a flow as the core builds it: IP (IPv4 ID id0 + k, DF), UDP
 * to 4791 from sport, a BTH (P_Key 0xffff, QP 0x11, PSN id0 + k) and the
 * rest of payload bytes a pattern of k. */
static struct sk_buff *st_pkt(bool v6, unsigned int k, unsigned int payload, u16 id0, u16 sport, void *path)
{
	unsigned int hlen = (v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) + sizeof(struct udphdr);
	/* Tailroom for the test that makes a packet longer (skb_put_zero). */
	struct sk_buff *skb = alloc_skb(LL_MAX_HEADER + hlen + payload + 256, GFP_KERNEL);
	struct udphdr *uh;
	unsigned int i;
	u8 *p;

	if (!skb)
		return NULL;
	skb_reserve(skb, LL_MAX_HEADER);
	skb_reset_network_header(skb);
	p = skb_put_zero(skb, hlen + payload);
	if (v6) {
		struct ipv6hdr *h = (void *)p;

		*(__be32 *)h = htonl(0x60000000 | 0x68 << 20 | 0x12345);
		h->payload_len = htons(sizeof(*uh) + payload);
		h->nexthdr = IPPROTO_UDP;
		h->hop_limit = 64;
		h->saddr.s6_addr[0] = h->daddr.s6_addr[0] = 0xfd;
		h->saddr.s6_addr[15] = 1;
		h->daddr.s6_addr[15] = 2;
	} else {
		struct iphdr *h = (void *)p;

		h->version = 4;
		h->ihl = 5;
		h->tos = 0x68;
		h->tot_len = htons(hlen + payload);
		h->id = htons((u16)(id0 + k));
		h->frag_off = htons(IP_DF);
		h->ttl = 64;
		h->protocol = IPPROTO_UDP;
		h->saddr = htonl(0x0a000001);
		h->daddr = htonl(0x0a000002);
		ip_send_check(h);
	}
	uh = (void *)(p + hlen - sizeof(*uh));
	uh->source = htons(sport);
	uh->dest = htons(4791);
	uh->len = htons(sizeof(*uh) + payload);
	for (i = 0; i < payload; i++)
		p[hlen + i] = (u8)(k * 31 + i * 7 + 1);
	if (payload >= 12) {
		p[hlen] = 0x01; /* RC SEND MIDDLE */
		put_unaligned_be16(0xffff, p + hlen + 2);
		put_unaligned_be32(0x11, p + hlen + 4);
		put_unaligned_be32((id0 + k) & 0xffffff, p + hlen + 8);
	}
	sroce_skb_cb(skb)->sdev = NULL;
	sroce_skb_cb(skb)->path = path;
	return skb;
}

/* pkts: n packets of payload bytes each but the last (last bytes). */
static bool st_queue(struct sk_buff_head *q, bool v6, unsigned int n, unsigned int payload, unsigned int last,
		     u16 id0)
{
	unsigned int k;

	__skb_queue_head_init(q);
	for (k = 0; k < n; k++) {
		struct sk_buff *skb = st_pkt(v6, k, k + 1 < n ? payload : last, id0, 49153, ST_PATH);

		if (!skb)
			return false;
		__skb_queue_tail(q, skb);
	}
	return true;
}

/* How many packets join the train of q's first one. */
static unsigned int st_len(struct sk_buff_head *q, bool v6)
{
	struct sk_buff *first = __skb_dequeue(q);
	unsigned int n = sroce_train_len(first, q, ST_PATH, init_net.loopback_dev, v6);

	__skb_queue_head(q, first);
	return n;
}

/* The train of q's n packets, segmented by the kernel's GSO with features
 * (0: copies, as a device without offloads; NETIF_F_SG: the payload pages
 * shared, as the receiving UDP layer segments): true if it gives n
 * segments equal to the packets but for the UDP checksum. */
static bool st_roundtrip(struct st_ctx *ctx, const char *name, struct sk_buff_head *q, unsigned int n, bool v6,
			 netdev_features_t features)
{
	unsigned int hlen = (v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) + sizeof(struct udphdr);
	unsigned int csum_at = hlen - 2, k = 0, bad = 0;
	struct sk_buff *first = __skb_dequeue(q), *train, *segs, *seg, *want;
	u8 *buf = kmalloc(U16_MAX, GFP_KERNEL);

	train = buf ? sroce_train_build(first, q, n, init_net.loopback_dev, v6) : NULL;
	__skb_queue_head(q, first);
	if (!train) {
		kfree(buf);
		ST_CHECK(ctx, name, false, "no memory");
		return false;
	}
	segs = skb_gso_segment(train, features);
	if (IS_ERR_OR_NULL(segs)) {
		ST_CHECK(ctx, name, false, "skb_gso_segment: %ld", PTR_ERR(segs));
		kfree_skb(train);
		kfree(buf);
		return false;
	}
	want = skb_peek(q);
	for (seg = segs; seg; seg = seg->next, k++) {
		unsigned int len = seg->len - skb_network_offset(seg);

		if (!want || len != want->len || skb_copy_bits(seg, skb_network_offset(seg), buf, len) ||
		    memcmp(buf, want->data, csum_at) || memcmp(buf + csum_at + 2, want->data + csum_at + 2,
							       len - csum_at - 2))
			bad++;
		want = want ? skb_peek_next(want, q) : NULL;
	}
	ST_CHECK(ctx, name, k == n && !bad, "%u segments of %u, %u differ", k, n, bad);
	kfree_skb_list(segs);
	consume_skb(train);
	kfree(buf);
	return k == n && !bad;
}

/* n packets queued as a flow sends them: all of them a train, which GSO
 * segments back into them. */
static void st_whole(struct st_ctx *ctx, const char *name, bool v6, unsigned int n, unsigned int payload,
		     unsigned int last, u16 id0)
{
	struct sk_buff_head q;
	unsigned int got;
	char nm[64];

	if (st_queue(&q, v6, n, payload, last, id0)) {
		got = st_len(&q, v6);
		ST_CHECK(ctx, name, got == n, "%u packets of %u in the train", got, n);
		if (got == n) {
			snprintf(nm, sizeof(nm), "%s_segments_are_the_packets", name);
			st_roundtrip(ctx, nm, &q, n, v6, 0);
			snprintf(nm, sizeof(nm), "%s_segments_are_the_packets_sg", name);
			st_roundtrip(ctx, nm, &q, n, v6, NETIF_F_SG);
		}
	}
	__skb_queue_purge(&q);
}

void st_train(struct st_ctx *ctx)
{
	struct sk_buff_head q;
	struct sk_buff *skb;

	/* IPv4: five packets, the IDs wrapping 16 bits, the last shorter;
	 * IPv6: three equal packets, and four with the last shorter; 16
	 * packets of 4 KiB in 16 pages, almost the 64 KiB a train may take. */
	st_whole(ctx, "train_v4", false, 5, 1000, 600, 0xfffe);
	st_whole(ctx, "train_v6", true, 3, 256, 256, 0);
	st_whole(ctx, "train_v6_last_shorter", true, 4, 1024, 100, 9);
	st_whole(ctx, "train_v4_64k", false, 16, 3900, 2000, 100);
	/* An IPv4 ID, or a PSN, out of sequence ends the train before it;
	 * so does another destination QP. */
	if (st_queue(&q, false, 5, 500, 500, 7)) {
		skb = skb_peek_next(skb_peek_next(skb_peek_next(skb_peek(&q), &q), &q), &q);
		ip_hdr(skb)->id = htons(7 + 2);
		ST_CHECK(ctx, "train_ends_at_an_id_out_of_sequence", st_len(&q, false) == 3, "%u", st_len(&q, false));
		ip_hdr(skb)->id = htons(7 + 3);
		put_unaligned_be32(7 + 2, skb->data + sizeof(struct iphdr) + sizeof(struct udphdr) + 8);
		ST_CHECK(ctx, "train_ends_at_a_repeated_psn", st_len(&q, false) == 3, "%u", st_len(&q, false));
		put_unaligned_be32(7 + 3, skb->data + sizeof(struct iphdr) + sizeof(struct udphdr) + 8);
		ST_CHECK(ctx, "train_whole_again", st_len(&q, false) == 5, "%u", st_len(&q, false));
		put_unaligned_be32(0x12, skb->data + sizeof(struct iphdr) + sizeof(struct udphdr) + 4);
		ST_CHECK(ctx, "train_ends_at_another_qp", st_len(&q, false) == 3, "%u", st_len(&q, false));
	}
	__skb_queue_purge(&q);
	/* A shorter packet ends the train after it; a longer one before it;
	 * another path or port before it. */
	if (st_queue(&q, false, 4, 500, 500, 0)) {
		skb = skb_peek_next(skb_peek(&q), &q);
		skb_trim(skb, skb->len - 100);
		ST_CHECK(ctx, "train_ends_after_a_shorter_packet", st_len(&q, false) == 2, "%u", st_len(&q, false));
		skb_put_zero(skb, 200);
		ST_CHECK(ctx, "train_ends_before_a_longer_packet", st_len(&q, false) == 1, "%u", st_len(&q, false));
		skb_trim(skb, skb->len - 100);
		sroce_skb_cb(skb)->path = NULL;
		ST_CHECK(ctx, "train_ends_before_another_path", st_len(&q, false) == 1, "%u", st_len(&q, false));
		sroce_skb_cb(skb)->path = ST_PATH;
		((struct udphdr *)(skb->data + sizeof(struct iphdr)))->source = htons(49154);
		ST_CHECK(ctx, "train_ends_before_another_port", st_len(&q, false) == 1, "%u", st_len(&q, false));
	}
	__skb_queue_purge(&q);
	/* At most 32 packets. */
	if (st_queue(&q, false, ST_MAX, 64, 64, 0))
		ST_CHECK(ctx, "train_at_most_32_packets", st_len(&q, false) == 32, "%u", st_len(&q, false));
	__skb_queue_purge(&q);
}

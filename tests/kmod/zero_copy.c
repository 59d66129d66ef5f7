// SPDX-License-Identifier: GPL-2.0
/*
 * zero_copy.c - tests of zero-copy send's packet fragments
 * (kmod/linux/pkt.c: sroce_env_pkt_add_frag, sroce_env_pkt_add_tail).
 */
#include <linux/mm.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "sroce.h"
#include "selftest.h"

/* Zero-copy fragments (pkt.c): each holds a reference on its page until the
 * packet is freed; a piece outside one linear-map page, or past
 * SROCE_ENV_PKT_FRAGS, is refused; the tail comes last and the bytes read
 * back in order. */
void st_zero_copy(struct st_ctx *ctx)
{
	struct sroce_env_pkt *pkt;
	struct page *page = alloc_page(GFP_KERNEL);
	struct sk_buff *skb = alloc_skb(64, GFP_KERNEL);
	u8 *flat = kmalloc(64 + 1000 + 15 * 16 + 6, GFP_KERNEL), *got = kmalloc(64 + 1000 + 15 * 16 + 6, GFP_KERNEL);
	void *vbuf = vmalloc(PAGE_SIZE);
	unsigned int i, total = 64 + 1000 + 15 * 16 + 6;
	int refs, full, tail_ok;
	u8 *kva, *tail;

	if (!page || !skb || !flat || !got || !vbuf) {
		ST_CHECK(ctx, "zero_copy", false, "no memory");
		goto out;
	}
	pkt = (struct sroce_env_pkt *)skb;
	kva = page_address(page);
	st_fill(kva, PAGE_SIZE, 3);
	st_fill(skb_put(skb, 64), 64, 0);
	refs = page_ref_count(page);
	ST_CHECK(ctx, "zero_copy_frag", sroce_env_pkt_add_frag(pkt, kva + 100, 1000) == 0 &&
		 page_ref_count(page) == refs + 1 && skb->len == 64 + 1000 && skb->data_len == 1000 &&
		 (skb_shinfo(skb)->flags & SKBFL_SHARED_FRAG), "refs %d -> %d, len %u", refs, page_ref_count(page),
		 skb->len);
	ST_CHECK(ctx, "zero_copy_refused", sroce_env_pkt_add_frag(pkt, kva + 4000, 200) == -EINVAL &&
		 sroce_env_pkt_add_frag(pkt, vbuf, 64) == -EINVAL && sroce_env_pkt_add_frag(pkt, kva, 0) == -EINVAL &&
		 skb_shinfo(skb)->nr_frags == 1, "a piece across a page, of vmalloc memory or empty was taken");
	for (i = 0, full = 0; i < 15; i++)
		full |= sroce_env_pkt_add_frag(pkt, kva + 2000 + 16 * i, 16);
	ST_CHECK(ctx, "zero_copy_full", !full && sroce_env_pkt_add_frag(pkt, kva, 16) == -ENOSPC &&
		 page_ref_count(page) == refs + SROCE_ENV_PKT_FRAGS, "frags %u, refs %d",
		 skb_shinfo(skb)->nr_frags, page_ref_count(page) - refs);
	tail = sroce_env_pkt_add_tail(pkt, 6);
	tail_ok = tail != NULL;
	if (tail)
		memcpy(tail, "\1\2\3\4\5\6", 6);
	memcpy(flat, skb->data, 64);
	memcpy(flat + 64, kva + 100, 1000);
	for (i = 0; i < 15; i++)
		memcpy(flat + 1064 + 16 * i, kva + 2000 + 16 * i, 16);
	memcpy(flat + total - 6, "\1\2\3\4\5\6", 6);
	ST_CHECK(ctx, "zero_copy_read", tail_ok && skb->len == total && !sroce_env_pkt_read(pkt, 0, got, total) &&
		 !memcmp(got, flat, total), "len %u of %u", skb->len, total);
	sroce_env_pkt_free(pkt);
	skb = NULL;
	ST_CHECK(ctx, "zero_copy_put", page_ref_count(page) == refs, "refs %d after the free, %d before",
		 page_ref_count(page), refs);
out:
	kfree_skb(skb);
	if (page)
		__free_page(page);
	kfree(flat);
	kfree(got);
	vfree(vbuf);
}

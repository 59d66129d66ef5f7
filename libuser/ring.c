// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ring.c - the provider's side of the shared rings: mapping, and the work
 * queue slot / publication steps that post_send, post_recv and
 * post_srq_recv share. See Documentation/abi.md for the layout and the
 * barrier pairs.
 */
#define _GNU_SOURCE /* sched_getcpu */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>

#include "sroce.h"

/* ibv_sge and sroce_sge are the same 16 bytes: SGE lists are copied as
 * they are. */
_Static_assert(sizeof(struct ibv_sge) == sizeof(struct sroce_sge), "sge size");
_Static_assert(offsetof(struct ibv_sge, addr) == offsetof(struct sroce_sge, addr), "sge addr");
_Static_assert(offsetof(struct ibv_sge, length) == offsetof(struct sroce_sge, length), "sge length");
_Static_assert(offsetof(struct ibv_sge, lkey) == offsetof(struct sroce_sge, lkey), "sge lkey");

/* Maps a ring the kernel described. The description is checked so that no
 * entry this provider addresses can lie outside the mapping. Leaves the
 * indices and the lock to the caller. */
int sroce_ring_map(struct sroce_uring *r, int cmd_fd, const struct sroce_ring_info *info,
		   uint32_t min_stride)
{
	void *map;

	if (info->log_size > 24 || info->stride < min_stride || info->stride % 8 ||
	    (uint64_t)SROCE_RING_ENTRIES_OFFSET + ((uint64_t)info->stride << info->log_size) >
		    info->bytes)
		return EPROTO;
	map = mmap(NULL, info->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd, info->offset);
	if (map == MAP_FAILED)
		return errno;
	r->map = map;
	r->bytes = info->bytes;
	r->hdr = map;
	r->entries = (uint8_t *)map + SROCE_RING_ENTRIES_OFFSET;
	r->mask = (1u << info->log_size) - 1;
	r->stride = info->stride;
	return 0;
}

void sroce_ring_unmap(struct sroce_uring *r)
{
	if (r->map)
		munmap(r->map, r->bytes);
	r->map = NULL;
}

void *sroce_wq_next(struct sroce_uring *r)
{
	if (r->idx - r->peer > r->mask) {
		/* Looks full: see how far the kernel got. Pairs with the
		 * kernel's store_release of the consumer index once it has
		 * copied the WQE out (WQ-C1), so the slot is free to reuse. */
		r->peer = sroce_load_acquire(&r->hdr->consumer);
		if (r->idx - r->peer > r->mask)
			return NULL;
	}
	return sroce_ring_entry(r, r->idx);
}

void sroce_wq_publish(struct sroce_uring *r)
{
	/* Where the poster runs, for the kernel's receive steering: a hint,
	 * stored before the producer and only when it changed (glibc reads
	 * the CPU from the thread's rseq area: no system call). */
	int cpu = sched_getcpu();

	if (cpu >= 0 && r->hdr->poster_cpu != (uint32_t)cpu + 1)
		__atomic_store_n(&r->hdr->poster_cpu, (uint32_t)cpu + 1, __ATOMIC_RELAXED);
	/* Pairs with the kernel's load_acquire of the producer index before
	 * it reads WQEs (WQ-P1): the WQEs written above are complete. */
	sroce_store_release(&r->hdr->producer, r->idx);
}

/* A multi-packet queue's WR is exactly its buffer size (num_sge already
 * bounded by max_sge). */
static bool mp_size_ok(const struct sroce_uring *r, const struct ibv_recv_wr *wr)
{
	uint64_t n = 0;

	for (int i = 0; i < wr->num_sge; i++)
		n += wr->sg_list[i].length;
	return n == r->mp_size;
}

int sroce_post_recv_list(struct sroce_uring *r, uint32_t max_sge, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr)
{
	uint32_t start;
	int err = 0;

	sroce_spin_lock(&r->lock);
	start = r->idx;
	for (; wr; wr = wr->next) {
		err = sroce_post_one_recv(r, max_sge, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	if (r->idx != start)
		sroce_wq_publish(r);
	sroce_spin_unlock(&r->lock);
	return err;
}

int sroce_post_one_recv(struct sroce_uring *r, uint32_t max_sge, const struct ibv_recv_wr *wr)
{
	struct sroce_wqe *wqe;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge || (r->mp_size && !mp_size_ok(r, wr)))
		return EINVAL;
	wqe = sroce_wq_next(r);
	if (!wqe)
		return ENOMEM;
	*wqe = (struct sroce_wqe){
		.wr_id = wr->wr_id,
		.opcode = SROCE_WQE_RECV,
		.num_sge = (uint8_t)wr->num_sge,
	};
	memcpy(wqe + 1, wr->sg_list, (size_t)wr->num_sge * sizeof(struct sroce_sge));
	r->idx++;
	return 0;
}

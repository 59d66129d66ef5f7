// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_mr - memory registration through libibverbs, for the VM tests.
 * Pinning is measured with VmPin (/proc/self/status), which ib_umem_get
 * charges page by page.
 *
 *   sroce_mr matrix DEV        print the outcome of every access-flag
 *                              combination and of the error cases, one line
 *                              each, to compare devices (rxe and sroce)
 *   sroce_mr check DEV         sizes up to 64 MiB, unaligned buffers, keys,
 *                              exact pinning, flags sroce refuses
 *   sroce_mr cycle DEV N       N reg/dereg of 1 MiB; each dereg unpins at once
 *   sroce_mr leak DEV N        register N MRs and exit without deregistering
 *   sroce_mr hold DEV READY    register, touch READY, wait for SIGUSR1 (the
 *                              device is removed meanwhile), then clean up
 *   sroce_mr driverdata DEV    REG_MR written to the command file by hand,
 *                              with the driver data (struct sroce_reg_mr_req)
 *                              a buggy or hostile provider could send: each
 *                              variant gets its errno
 */
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "progs_common.h"
#include "sroce-abi.h"

#define PAGE 4096ul
#define MiB (1024ul * 1024)

/* VmPin in kB: what ib_umem_get has pinned for this process. */
static long vm_pin_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static void *map(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

static const char *outcome(struct ibv_mr *mr)
{
	static char buf[32];

	if (mr) {
		ibv_dereg_mr(mr);
		return "ok";
	}
	switch (errno) {
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOMEM: return "ENOMEM";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	default:
		snprintf(buf, sizeof(buf), "errno %d", errno);
		return buf;
	}
}

static void mode_matrix(struct ibv_pd *pd)
{
	const size_t len = 64 * 1024;
	char *buf = map(len, PROT_READ | PROT_WRITE);
	char *ro = map(len, PROT_READ);
	char *gone = map(len, PROT_READ | PROT_WRITE);
	const int basic = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND;

	munmap(gone, len);
	for (int a = 0; a <= basic; a++)
		printf("access %#04x: %s\n", a, outcome(ibv_reg_mr(pd, buf, len, a)));
	printf("unaligned access %#04x: %s\n", basic,
	       outcome(ibv_reg_mr(pd, buf + 3, len - 7, basic)));
	printf("length 0: %s\n", outcome(ibv_reg_mr(pd, buf, 0, 0)));
	printf("unmapped: %s\n", outcome(ibv_reg_mr(pd, gone, len, 0)));
	printf("read-only mapping, no write: %s\n",
	       outcome(ibv_reg_mr(pd, ro, len, IBV_ACCESS_REMOTE_READ)));
	printf("read-only mapping, local write: %s\n",
	       outcome(ibv_reg_mr(pd, ro, len, IBV_ACCESS_LOCAL_WRITE)));
	printf("iova at another page offset: %s\n",
	       outcome(ibv_reg_mr_iova(pd, buf, len, 0x10000 + 5, 0)));
	printf("iova at the same page offset: %s\n",
	       outcome(ibv_reg_mr_iova(pd, buf + 5, len - 5, 0x10000 + 5, 0)));
	printf("on-demand paging: %s\n", outcome(ibv_reg_mr(pd, buf, len, IBV_ACCESS_ON_DEMAND)));
	printf("relaxed ordering (optional): %s\n",
	       outcome(ibv_reg_mr(pd, buf, len, IBV_ACCESS_RELAXED_ORDERING)));
	munmap(buf, len);
	munmap(ro, len);
}

/* Registers len bytes at off into a fresh mapping and checks what the
 * kernel pinned: exactly the pages the range touches. */
static void check_size(struct ibv_pd *pd, size_t len, size_t off)
{
	size_t pages = (off % PAGE + len + PAGE - 1) / PAGE;
	char *buf = map(len + off + PAGE, PROT_READ | PROT_WRITE);
	long before = vm_pin_kb(), during;
	struct ibv_mr *mr;

	mr = ibv_reg_mr(pd, buf + off, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	during = vm_pin_kb();
	CHECK(mr && mr->addr == buf + off && mr->length == len && mr->lkey == mr->rkey,
	      "len %zu at offset %zu: lkey %#x rkey %#x", len, off, mr ? mr->lkey : 0,
	      mr ? mr->rkey : 0);
	CHECK(during - before == (long)(pages * PAGE / 1024), "len %zu at offset %zu pins %zu pages (%ld kB)",
	      len, off, pages, during - before);
	CHECK(mr && ibv_dereg_mr(mr) == 0 && vm_pin_kb() == before, "len %zu: dereg unpins", len);
	munmap(buf, len + off + PAGE);
}

static void mode_check(struct ibv_pd *pd)
{
	const size_t sizes[] = {1, PAGE - 1, PAGE, PAGE + 1, MiB, 64 * MiB};
	struct ibv_mr *mrs[16];
	char *buf = map(MiB, PROT_READ | PROT_WRITE);
	long base = vm_pin_kb();
	uint32_t old;
	int distinct = 1;

	CHECK(base >= 0, "VmPin readable (%ld kB)", base);
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		check_size(pd, sizes[i], 0);
		check_size(pd, sizes[i], 123); /* an unaligned buffer */
	}
	check_size(pd, PAGE, PAGE - 1); /* one page of data over two pages */

	/* Live MRs on the same buffer have distinct keys; a key is not handed
	 * out again right after deregistration. */
	for (int i = 0; i < 16; i++)
		mrs[i] = ibv_reg_mr(pd, buf, MiB, IBV_ACCESS_LOCAL_WRITE);
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < i; j++)
			if (!mrs[i] || !mrs[j] || mrs[i]->lkey == mrs[j]->lkey)
				distinct = 0;
	CHECK(distinct, "16 MRs over one buffer have distinct keys");
	old = mrs[0] ? mrs[0]->lkey : 0;
	for (int i = 0; i < 16; i++)
		if (mrs[i])
			ibv_dereg_mr(mrs[i]);
	mrs[0] = ibv_reg_mr(pd, buf, MiB, 0);
	CHECK(mrs[0] && mrs[0]->lkey != old, "re-registration gets a new key (%#x, was %#x)",
	      mrs[0] ? mrs[0]->lkey : 0, old);
	if (mrs[0])
		ibv_dereg_mr(mrs[0]);

	/* Flags sroce cannot honour are refused rather than ignored. */
	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, MiB, IBV_ACCESS_ZERO_BASED) && errno == EOPNOTSUPP,
	      "zero-based: %s", strerror(errno));
	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, MiB, IBV_ACCESS_HUGETLB | IBV_ACCESS_LOCAL_WRITE) && errno == EOPNOTSUPP,
	      "hugetlb: %s", strerror(errno));
	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, MiB, IBV_ACCESS_REMOTE_WRITE) && errno == EINVAL,
	      "remote write without local write: %s", strerror(errno));
	CHECK(vm_pin_kb() == base, "nothing left pinned");
	munmap(buf, MiB);
}

static void mode_cycle(struct ibv_pd *pd, int n)
{
	char *buf = map(MiB, PROT_READ | PROT_WRITE);
	long base = vm_pin_kb();
	int bad = 0;

	for (int i = 0; i < n; i++) {
		struct ibv_mr *mr = ibv_reg_mr(pd, buf, MiB, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);

		if (!mr || vm_pin_kb() != base + (long)(MiB / 1024) || ibv_dereg_mr(mr) ||
		    vm_pin_kb() != base) {
			if (!bad)
				printf("cycle %d: %s, VmPin %ld kB\n", i, mr ? "pin mismatch" : strerror(errno),
				       vm_pin_kb());
			bad++;
		}
	}
	CHECK(bad == 0, "%d reg/dereg cycles of 1 MiB, each unpinned by dereg (%d bad)", n, bad);
	munmap(buf, MiB);
}

static void touch(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY, 0644);

	if (fd >= 0)
		close(fd);
}

static volatile sig_atomic_t go;
static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static void mode_hold(struct ibv_context *ctx, struct ibv_pd *pd, const char *ready)
{
	char *buf = map(MiB, PROT_READ | PROT_WRITE);
	struct ibv_mr *a = ibv_reg_mr(pd, buf, MiB, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *b = ibv_reg_mr(pd, buf + 1, PAGE, 0);

	CHECK(a && b, "two MRs before removal");
	signal(SIGUSR1, on_usr1);
	touch(ready);
	while (!go)
		pause();
	/* The device is gone; ib_core has already released the MRs. */
	CHECK(!a || ibv_dereg_mr(a) == 0, "dereg after removal");
	CHECK(!b || ibv_dereg_mr(b) == 0, "second dereg after removal");
	CHECK(ibv_dealloc_pd(pd) == 0, "dealloc_pd after removal");
	CHECK(vm_pin_kb() == 0, "nothing pinned after removal");
	CHECK(ibv_close_device(ctx) == 0, "close_device after removal");
	exit(failures ? 1 : 0);
}

/* Four one-page MRs: their keys on one line, then held until SIGUSR1 so
 * that `rdma res show mr` can be read meanwhile. */
static void mode_keys(struct ibv_pd *pd, const char *ready)
{
	char *buf = map(4 * PAGE, PROT_READ | PROT_WRITE);
	struct ibv_mr *mr[4];

	printf("keys");
	for (int i = 0; i < 4; i++) {
		mr[i] = ibv_reg_mr(pd, buf + i * PAGE, PAGE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
		if (!mr[i]) {
			printf("\nFAIL: reg_mr %d: %s\n", i, strerror(errno));
			exit(1);
		}
		printf(" 0x%x", mr[i]->rkey);
	}
	printf("\n");
	signal(SIGUSR1, on_usr1);
	touch(ready);
	while (!go)
		pause();
	for (int i = 0; i < 4; i++)
		CHECK(ibv_dereg_mr(mr[i]) == 0, "dereg %d", i);
}

struct raw_reg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_reg_mr core;
	unsigned char drv[32]; /* driver data, of length drv_len */
};

/* REG_MR through write() on the context's command file, with drv_len bytes
 * of driver data: 0 (the MR deregistered again) or the errno. */
static int raw_reg_mr(struct ibv_pd *pd, void *buf, const void *drv, size_t drv_len)
{
	struct ib_uverbs_reg_mr_resp resp = {0};
	struct raw_reg_mr cmd = {
		.core = { .response = (uintptr_t)&resp, .start = (uintptr_t)buf, .length = PAGE,
			  .hca_va = (uintptr_t)buf, .pd_handle = pd->handle,
			  .access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE },
	};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_dereg_mr core;
	} dereg = { .hdr = { .command = IB_USER_VERBS_CMD_DEREG_MR, .in_words = sizeof(dereg) / 4 } };
	size_t len = sizeof(cmd.hdr) + sizeof(cmd.core) + drv_len;
	int fd = pd->context->cmd_fd;

	cmd.hdr.command = IB_USER_VERBS_CMD_REG_MR;
	cmd.hdr.in_words = len / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	memcpy(cmd.drv, drv, drv_len);
	if (write(fd, &cmd, len) != (ssize_t)len)
		return errno;
	dereg.core.mr_handle = resp.mr_handle;
	if (write(fd, &dereg, sizeof(dereg)) != (ssize_t)sizeof(dereg))
		CHECK(0, "DEREG_MR of handle %u: %s", resp.mr_handle, strerror(errno));
	return 0;
}

/* The kernel's checks of reg_mr's driver data (kmod/linux/mr.c), which the
 * provider never lets through. */
static void mode_driverdata(struct ibv_pd *pd)
{
	const struct sroce_reg_mr_req good = { .comp_mask = SROCE_REG_MR_REQ_FLUSH_ACCESS,
					       .flush_access = SROCE_ACCESS_FLUSH_GLOBAL };
	const unsigned char zeros[8] = { 0 }, junk[8] = { 0, 0, 1 };
	unsigned char drv[sizeof(good) + 8];
	char *buf = map(PAGE, PROT_READ | PROT_WRITE);
	struct sroce_reg_mr_req r;
	struct ibv_mr *mr;
	int err;

#define TRY(req, want, what)                                                    \
	do {                                                                    \
		r = (req);                                                      \
		err = raw_reg_mr(pd, buf, &r, sizeof(r));                       \
		CHECK_ERR(err, want, what);                                     \
	} while (0)
	TRY(good, 0, "the FLUSH right to global visibility");
	CHECK_ERR(raw_reg_mr(pd, buf, NULL, 0), 0, "no driver data");
	TRY(((struct sroce_reg_mr_req){ 0 }), 0, "driver data of zeros");
	TRY(((struct sroce_reg_mr_req){ .comp_mask = 1ull << 1 }), EINVAL, "an unknown comp_mask bit");
	TRY(((struct sroce_reg_mr_req){ .comp_mask = 1ull << 63 }), EINVAL, "comp_mask bit 63");
	r = good;
	r.reserved = 1;
	TRY(r, EINVAL, "the reserved field set");
	TRY(((struct sroce_reg_mr_req){ .comp_mask = SROCE_REG_MR_REQ_FLUSH_ACCESS,
					.flush_access = SROCE_ACCESS_FLUSH_GLOBAL | (1u << 10) }),
	    EINVAL, "an access bit that is no FLUSH right");
	TRY(((struct sroce_reg_mr_req){ .comp_mask = SROCE_REG_MR_REQ_FLUSH_ACCESS,
					.flush_access = IBV_ACCESS_REMOTE_READ }),
	    EINVAL, "an ordinary right passed as a FLUSH right");
	TRY(((struct sroce_reg_mr_req){ .flush_access = SROCE_ACCESS_FLUSH_GLOBAL }), EINVAL,
	    "a FLUSH right without its comp_mask bit");
	TRY(((struct sroce_reg_mr_req){ .comp_mask = SROCE_REG_MR_REQ_FLUSH_ACCESS,
					.flush_access = SROCE_ACCESS_FLUSH_PERSISTENT }),
	    EOPNOTSUPP, "the FLUSH right to persistence (sroce has none)");
#undef TRY
	memcpy(drv, &good, sizeof(good));
	memcpy(drv + sizeof(good), zeros, sizeof(zeros));
	CHECK_ERR(raw_reg_mr(pd, buf, drv, sizeof(drv)), 0, "a longer request with a tail of zeros");
	memcpy(drv + sizeof(good), junk, sizeof(junk));
	CHECK_ERR(raw_reg_mr(pd, buf, drv, sizeof(drv)), EOPNOTSUPP, "a longer request with a non-zero tail");
	mr = ibv_reg_mr(pd, buf, PAGE, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr && ibv_dereg_mr(mr) == 0, "the PD still registers through libibverbs");
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		fprintf(stderr, "usage: %s matrix|check|cycle|leak|hold|keys|driverdata DEV [N|READY]\n", argv[0]);
		return 2;
	}
	ctx = open_by_name(argv[2]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd) {
		printf("FAIL: cannot open %s and allocate a PD: %s\n", argv[2], strerror(errno));
		return 1;
	}
	if (strcmp(argv[1], "matrix") == 0) {
		mode_matrix(pd);
	} else if (strcmp(argv[1], "check") == 0) {
		mode_check(pd);
	} else if (strcmp(argv[1], "cycle") == 0 && argc == 4) {
		mode_cycle(pd, atoi(argv[3]));
	} else if (strcmp(argv[1], "leak") == 0 && argc == 4) {
		char *buf = map(MiB, PROT_READ | PROT_WRITE);
		int n = atoi(argv[3]), got = 0;

		for (int i = 0; i < n; i++)
			got += ibv_reg_mr(pd, buf, MiB, IBV_ACCESS_LOCAL_WRITE) != NULL;
		CHECK(got == n, "registered %d MRs, exiting without deregistering", got);
		return failures ? 1 : 0; /* the kernel cleans up */
	} else if (strcmp(argv[1], "hold") == 0 && argc == 4) {
		mode_hold(ctx, pd, argv[3]);
	} else if (strcmp(argv[1], "driverdata") == 0) {
		mode_driverdata(pd);
	} else if (strcmp(argv[1], "keys") == 0 && argc == 4) {
		mode_keys(pd, argv[3]);
	} else {
		fprintf(stderr, "unknown mode %s\n", argv[1]);
		return 2;
	}
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return failures ? 1 : 0;
}

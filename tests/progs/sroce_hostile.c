// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sroce_hostile - speaks raw uverbs to a sroce device, as a buggy or hostile
 * program would, bypassing libibverbs: malformed GET_CONTEXT udata, bad
 * response pointers, and mmap requests the kernel must refuse. Every case
 * must fail with its documented errno and leave the device usable.
 *
 *   sroce_hostile DEV
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <rdma/ib_user_verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sroce-abi.h"

static int failures;
static char uverbs_path[300];

#define EXPECT(cond, ...)                                                  \
	do {                                                               \
		printf("%s: ", (cond) ? "ok" : "FAIL");                    \
		printf(__VA_ARGS__);                                       \
		printf("\n");                                              \
		if (!(cond))                                               \
			failures++;                                        \
	} while (0)

/* /dev/infiniband/uverbsN of the IB device called name. */
static int find_uverbs(const char *name)
{
	DIR *d = opendir("/sys/class/infiniband_verbs");
	struct dirent *e;
	char path[512 + 256], ibdev[64];
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		FILE *f;

		if (strncmp(e->d_name, "uverbs", 6))
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband_verbs/%s/ibdev", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%63s", ibdev) == 1 && !strcmp(ibdev, name)) {
			snprintf(uverbs_path, sizeof(uverbs_path), "/dev/infiniband/%s", e->d_name);
			found = 1;
		}
		fclose(f);
	}
	closedir(d);
	return found;
}

struct get_context_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_get_context core;
	unsigned char drv[64]; /* driver udata, of length drv_len */
};

struct get_context_resp {
	struct ib_uverbs_get_context_resp core;
	struct sroce_alloc_ucontext_resp drv;
};

/* One GET_CONTEXT through write(); returns 0 or errno. */
static int get_context(int fd, const void *drv, size_t drv_len, void *resp_ptr)
{
	struct get_context_cmd cmd = {0};
	size_t len = sizeof(cmd.hdr) + sizeof(cmd.core) + drv_len;

	cmd.hdr.command = IB_USER_VERBS_CMD_GET_CONTEXT;
	cmd.hdr.in_words = len / 4;
	cmd.hdr.out_words = sizeof(struct get_context_resp) / 4;
	cmd.core.response = (uintptr_t)resp_ptr;
	memcpy(cmd.drv, drv, drv_len);
	return write(fd, &cmd, len) == (ssize_t)len ? 0 : errno;
}

static int fresh_fd(void)
{
	int fd = open(uverbs_path, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		perror(uverbs_path);
		exit(1);
	}
	return fd;
}

/* A request variant on a fresh file: returns the errno of GET_CONTEXT. */
static int try_request(const struct sroce_alloc_ucontext_req *req, size_t len, const void *tail,
		       size_t tail_len)
{
	unsigned char drv[64] = {0};
	struct get_context_resp resp;
	int fd = fresh_fd(), err;

	memcpy(drv, req, len < sizeof(*req) ? len : sizeof(*req));
	if (tail_len)
		memcpy(drv + sizeof(*req), tail, tail_len);
	err = get_context(fd, drv, len + tail_len, &resp);
	close(fd);
	return err;
}

static void check_requests(void)
{
	const struct sroce_alloc_ucontext_req good = { .abi_version = SROCE_ABI_VERSION };
	struct sroce_alloc_ucontext_req r;
	const unsigned char zeros[8] = {0}, junk[8] = {0, 0, 0, 1};
	int err;

	r = good;
	r.abi_version = SROCE_ABI_VERSION + 7;
	EXPECT((err = try_request(&r, sizeof(r), NULL, 0)) == EPROTO, "another ABI version: %s", strerror(err));
	r = good;
	r.comp_mask = 1;
	EXPECT((err = try_request(&r, sizeof(r), NULL, 0)) == EOPNOTSUPP, "unknown comp_mask: %s", strerror(err));
	r = good;
	r.flags = 0x80000000u;
	EXPECT((err = try_request(&r, sizeof(r), NULL, 0)) == EINVAL, "unknown flag: %s", strerror(err));
	r = good;
	r.reserved = 1;
	EXPECT((err = try_request(&r, sizeof(r), NULL, 0)) == EINVAL, "reserved field set: %s", strerror(err));
	EXPECT((err = try_request(&good, 2, NULL, 0)) == EINVAL, "request shorter than the version: %s",
	       strerror(err));
	EXPECT((err = try_request(&good, 0, NULL, 0)) == EINVAL, "no driver request at all: %s", strerror(err));
	EXPECT((err = try_request(&good, sizeof(good), junk, sizeof(junk))) == EOPNOTSUPP,
	       "longer request with non-zero tail: %s", strerror(err));
	EXPECT((err = try_request(&good, sizeof(good), zeros, sizeof(zeros))) == 0,
	       "longer request with zero tail accepted: %s", strerror(err));
	r = good;
	r.flags = SROCE_UCTX_REQ_NO_SQ_POLL;
	EXPECT((err = try_request(&r, sizeof(r), NULL, 0)) == 0, "NO_SQ_POLL accepted: %s", strerror(err));
}

/* One ALLOC_PD through write() with drv_len (at most 8) driver bytes. */
static int alloc_pd(int fd, const void *drv, size_t drv_len)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_alloc_pd core;
		unsigned char drv[8];
	} cmd = {0};
	struct {
		struct ib_uverbs_alloc_pd_resp core;
		struct sroce_alloc_pd_resp drv;
	} resp;
	size_t len = sizeof(cmd.hdr) + sizeof(cmd.core) + drv_len;

	cmd.hdr.command = IB_USER_VERBS_CMD_ALLOC_PD;
	cmd.hdr.in_words = len / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.core.response = (uintptr_t)&resp;
	memcpy(cmd.drv, drv, drv_len);
	return write(fd, &cmd, len) == (ssize_t)len ? 0 : errno;
}

/* ALLOC_PD carries no driver data yet: a newer provider's bytes are taken
 * only if they are zero, as for every other verb (abi.md). */
static void check_alloc_pd_request(void)
{
	const struct sroce_alloc_ucontext_req good = { .abi_version = SROCE_ABI_VERSION };
	const unsigned char zeros[8] = {0}, junk[8] = {0, 0, 0, 1};
	struct get_context_resp resp;
	int fd = fresh_fd(), err;

	err = get_context(fd, &good, sizeof(good), &resp);
	EXPECT(err == 0, "a context for ALLOC_PD: %s", strerror(err));
	EXPECT((err = alloc_pd(fd, junk, sizeof(junk))) == EOPNOTSUPP, "ALLOC_PD with non-zero driver bytes: %s",
	       strerror(err));
	EXPECT((err = alloc_pd(fd, zeros, sizeof(zeros))) == 0, "ALLOC_PD with zero driver bytes: %s",
	       strerror(err));
	EXPECT((err = alloc_pd(fd, NULL, 0)) == 0, "ALLOC_PD without driver bytes: %s", strerror(err));
	close(fd); /* the PDs go with the file */
}

static void check_bad_response_then_good(void)
{
	const struct sroce_alloc_ucontext_req good = { .abi_version = SROCE_ABI_VERSION };
	struct get_context_resp resp;
	int fd = fresh_fd(), err;

	/* The kernel cannot write the response: the whole call fails and
	 * leaves nothing behind, so the same file can still open a context. */
	err = get_context(fd, &good, sizeof(good), (void *)16);
	EXPECT(err == EFAULT, "unwritable response: %s", strerror(err));
	err = get_context(fd, &good, sizeof(good), &resp);
	EXPECT(err == 0, "same file opens a context afterwards: %s", strerror(err));
	err = get_context(fd, &good, sizeof(good), &resp);
	EXPECT(err == EINVAL, "a second context on one file: %s", strerror(err));
	close(fd);
}

static void check_mmap(void)
{
	const struct sroce_alloc_ucontext_req good = { .abi_version = SROCE_ABI_VERSION };
	struct get_context_resp resp = {0};
	const struct sroce_context_page *page;
	size_t size;
	off_t off;
	void *p;
	int fd = fresh_fd(), err;

	err = get_context(fd, &good, sizeof(good), &resp);
	EXPECT(err == 0 && resp.drv.abi_version == SROCE_ABI_VERSION, "context: %s", strerror(err));
	size = resp.drv.ctx_page_size;
	off = (off_t)resp.drv.ctx_page_offset;
	EXPECT(size == SROCE_PAGE_SIZE, "context page size %zu", size);

	page = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, off);
	EXPECT(page != MAP_FAILED, "read-only mapping of the context page");
	if (page != MAP_FAILED) {
		EXPECT(page->magic == SROCE_CTX_PAGE_MAGIC && page->abi_version == SROCE_ABI_VERSION,
		       "context page magic %#x version %u", page->magic, page->abi_version);
		EXPECT(mprotect((void *)page, size, PROT_READ | PROT_WRITE) && errno == EACCES,
		       "mprotect to writable refused: %s", strerror(errno));
		munmap((void *)page, size);
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	EXPECT(p == MAP_FAILED && errno == EPERM, "writable mapping refused: %s", strerror(errno));
	p = mmap(NULL, 2 * size, PROT_READ, MAP_SHARED, fd, off);
	EXPECT(p == MAP_FAILED && errno == EINVAL, "oversized mapping refused: %s", strerror(errno));
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, off + 4096 * 64);
	EXPECT(p == MAP_FAILED && errno == EINVAL, "unknown offset refused: %s", strerror(errno));

	/* A mapping may outlive the file: the page stays valid until munmap. */
	page = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, off);
	close(fd);
	EXPECT(page != MAP_FAILED && page->magic == SROCE_CTX_PAGE_MAGIC,
	       "mapping readable after the file is closed");
	if (page != MAP_FAILED)
		munmap((void *)page, size);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 2) {
		fprintf(stderr, "usage: %s DEV\n", argv[0]);
		return 2;
	}
	if (!find_uverbs(argv[1])) {
		printf("FAIL: no uverbs device for %s\n", argv[1]);
		return 1;
	}
	check_requests();
	check_alloc_pd_request();
	check_bad_response_then_good();
	check_mmap();
	return failures ? 1 : 0;
}

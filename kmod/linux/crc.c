// SPDX-License-Identifier: GPL-2.0
/*
 * crc.c - the CRC-32 behind every ICRC (sroce_env_crc32_le, core/env.h).
 *
 * Linux 6.1's crc32_le is a table (slice-by-8) algorithm on every
 * architecture. The crypto API's "crc32" may be backed by a faster
 * implementation (crc32-pclmul on x86 with PCLMULQDQ), with the same
 * convention: the running value is the shash context, no inversion. Which
 * one is faster depends on the machine (and, under an emulator, on how it
 * emulates PCLMULQDQ and the FPU save/restore), so at load time the module
 * times both over a 4 KiB buffer and keeps the faster: the module parameter
 * icrc=auto. icrc=table and icrc=accel force one (tests, comparisons).
 * <debugfs>/sroce/icrc shows the choice and the timings, with memcpy's
 * over the same 4 KiB and the bandwidth they allow: each payload byte is
 * copied and CRCed once by the sender and once by the receiver, so one CPU
 * doing both moves at most 4 KiB per 2 * (copy + CRC), and two CPUs
 * splitting them twice that (make bench prints it beside its results).
 */
#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/debugfs.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "sroce.h"

static char *sroce_icrc = "auto";
module_param_named(icrc, sroce_icrc, charp, 0444);
MODULE_PARM_DESC(icrc, "CRC-32 for the ICRC: auto (the faster at load time), table (crc32_le) or accel (the crypto API's crc32) (default: auto)");

/* Below this length the crypto driver falls back to the table itself. */
#define SROCE_CRC_ACCEL_MIN 64
#define SROCE_CRC_BENCH_LEN 4096
#define SROCE_CRC_BENCH_ROUNDS 64

/* Set once at load, before any device exists; read-only afterwards. */
static struct crypto_shash *sroce_crc_tfm;
static u64 sroce_crc_ns_table, sroce_crc_ns_accel, sroce_copy_ns; /* per 4 KiB, best of 3 */

static u32 sroce_crc_accel(struct crypto_shash *tfm, u32 crc, const void *p, unsigned long len)
{
	SHASH_DESC_ON_STACK(desc, tfm);

	desc->tfm = tfm;
	*(u32 *)shash_desc_ctx(desc) = crc;
	/* crc32's update cannot fail; on a failure the packet's ICRC is wrong
	 * and the peer drops it, which the transport recovers from. */
	if (crypto_shash_update(desc, p, len))
		return crc32_le(crc, p, len);
	return *(u32 *)shash_desc_ctx(desc);
}

unsigned int sroce_env_crc32_le(unsigned int crc, const void *p, unsigned long len)
{
	struct crypto_shash *tfm = READ_ONCE(sroce_crc_tfm);

	if (tfm && len >= SROCE_CRC_ACCEL_MIN)
		return sroce_crc_accel(tfm, crc, p, len);
	return crc32_le(crc, p, len);
}
SROCE_EXPORT_FOR_TESTS(sroce_env_crc32_le);

/* Nanoseconds per 4 KiB, the best of three timed runs: the CRC (tfm's, or
 * crc32_le without one) or, with dst, memcpy from buf to dst. */
static u64 sroce_crc_time(struct crypto_shash *tfm, const u8 *buf, u8 *dst, u32 *out)
{
	u64 best = U64_MAX;
	int run, i;

	for (run = 0; run < 3; run++) {
		u64 t0 = ktime_get_ns();
		u32 crc = ~0u;

		for (i = 0; i < SROCE_CRC_BENCH_ROUNDS; i++) {
			if (dst) {
				memcpy(dst, buf, SROCE_CRC_BENCH_LEN);
				crc ^= dst[i];
			} else {
				crc = tfm ? sroce_crc_accel(tfm, crc, buf, SROCE_CRC_BENCH_LEN) :
					    crc32_le(crc, buf, SROCE_CRC_BENCH_LEN);
			}
		}
		best = min(best, ktime_get_ns() - t0);
		*out = crc;
		cond_resched();
	}
	return div_u64(best, SROCE_CRC_BENCH_ROUNDS);
}

void sroce_crc_init(void)
{
	struct crypto_shash *tfm;
	u32 want, got;
	u8 *buf;
	int i;

	buf = kmalloc(2 * SROCE_CRC_BENCH_LEN, GFP_KERNEL);
	if (!buf)
		return;
	for (i = 0; i < SROCE_CRC_BENCH_LEN; i++)
		buf[i] = (u8)(i * 131 + 7);
	sroce_copy_ns = sroce_crc_time(NULL, buf, buf + SROCE_CRC_BENCH_LEN, &got);
	sroce_crc_ns_table = sroce_crc_time(NULL, buf, NULL, &want);
	tfm = strcmp(sroce_icrc, "table") ? crypto_alloc_shash("crc32", 0, 0) : NULL;
	if (IS_ERR_OR_NULL(tfm)) {
		if (tfm)
			pr_info("sroce: icrc: no crypto crc32 (%ld), using crc32_le\n", PTR_ERR(tfm));
		kfree(buf);
		return;
	}
	sroce_crc_ns_accel = sroce_crc_time(tfm, buf, NULL, &got);
	kfree(buf);
	if (got != want) {
		/* Never trust an implementation that disagrees with the table. */
		pr_warn("sroce: icrc: %s disagrees with crc32_le (%08x, %08x), not used\n",
			crypto_shash_driver_name(tfm), got, want);
		crypto_free_shash(tfm);
		return;
	}
	if (!strcmp(sroce_icrc, "accel") || sroce_crc_ns_accel < sroce_crc_ns_table) {
		WRITE_ONCE(sroce_crc_tfm, tfm);
	} else {
		crypto_free_shash(tfm);
	}
	pr_info("sroce: icrc: %s (4 KiB: crc32_le %llu ns, crypto crc32 %llu ns)\n", sroce_crc_name(),
		sroce_crc_ns_table, sroce_crc_ns_accel);
}

void sroce_crc_exit(void)
{
	if (sroce_crc_tfm)
		crypto_free_shash(sroce_crc_tfm);
	sroce_crc_tfm = NULL;
}

const char *sroce_crc_name(void)
{
	return sroce_crc_tfm ? crypto_shash_driver_name(sroce_crc_tfm) : "crc32_le";
}

/* <debugfs>/sroce/icrc */
int sroce_crc_show(struct seq_file *m, void *unused)
{
	u64 crc;

	seq_printf(m, "impl %s\n", sroce_crc_name());
	seq_printf(m, "ns_per_4k_table %llu\n", sroce_crc_ns_table);
	seq_printf(m, "ns_per_4k_accel %llu\n", sroce_crc_ns_accel);
	seq_printf(m, "ns_per_4k_memcpy %llu\n", sroce_copy_ns);
	crc = sroce_crc_tfm ? sroce_crc_ns_accel : sroce_crc_ns_table;
	/* bytes per ns * 1000 = MB/s (10^6 bytes) */
	if (sroce_copy_ns + crc) {
		seq_printf(m, "limit_mb_s_one_cpu %llu\n", div64_u64(SROCE_CRC_BENCH_LEN * 1000ull, 2 * (sroce_copy_ns + crc)));
		seq_printf(m, "limit_mb_s_two_cpus %llu\n", div64_u64(SROCE_CRC_BENCH_LEN * 1000ull, sroce_copy_ns + crc));
	}
	return 0;
}

// Host micro-benchmark of the core's packet path (not a test: it asserts
// nothing about speed and is not registered with ctest; `make bench-host`
// runs it). One core, 4 KiB payloads, against plain memcpy of the same size:
//
//   send: write_ip_udp + write_ib_headers (RC WRITE ONLY), copy the payload
//         into the packet, icrc_fill - what Qp::tx_begin / send_packet_locked
//         / tx_finish do per packet, without the allocator;
//   recv: parse_ip_udp + parse_ib + icrc_check over the packet + copy the
//         payload to its destination - what rx_packet and the responder do
//         per packet, without the skb access helpers.
//
// The CRC is the env's sroce_env_crc32_le: on the host a slice-by-8 table
// (libuser/dump/crc32_sw.h), the same algorithm as Linux 6.1's generic
// crc32_le (lib/crc32.c, CRC_LE_BITS 64), which is what the module calls.
// For reference it also times zlib's crc32 (same polynomial) and the CRC
// alone, so the report says where the time goes.
//
// Packets rotate over a working set (default 64 packets, ~270 KB, the L2
// size class) so neither side runs entirely out of L1.
//
//   bench_packet [--bytes N] [--ms MS] [--rounds N] [--set N] [--tsv]
#include <chrono>
#include <immintrin.h>
#include <initializer_list>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <zlib.h>

#include "crc32_sw.h"
#include "env.h"
#include "icrc.h"
#include "opcode.h"
#include "packet.h"

using namespace sroce;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
	unsigned bytes = 4096;
	unsigned ms = 50;     // per measurement
	unsigned rounds = 9; // best of
	unsigned set = 64;
	bool tsv = false;
};

volatile uint32_t sink;

// CRC-32 (crc32_le convention) by carry-less multiplication: four 128-bit
// lanes folded 64 bytes at a time, then into one lane, whose 16 bytes are
// a message with the same CRC; the tail goes through the table. This is
// the technique of the kernel's crc32-pclmul (the crypto API's "crc32"
// when that module is loaded), written here only to measure what the
// packet path would reach with it. The fold constants are x^(512+-32)
// and x^(128+-32) mod P, bit-reflected (Intel's CRC folding paper).
__attribute__((target("pclmul,sse4.1"))) inline __m128i fold(__m128i x, __m128i k, __m128i d) {
	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), d);
}

// With dst, the bytes are also copied there in the same pass.
__attribute__((target("pclmul,sse4.1"))) uint32_t crc32_clmul(uint32_t crc, const void *data, size_t len,
							       u8 *dst = nullptr) {
	const u8 *p = static_cast<const u8 *>(data);
	if (len < 64) {
		if (dst)
			memcpy(dst, p, len);
		return crc32_sw::crc32_le(crc, p, len);
	}
	const __m128i k512 = _mm_set_epi64x(0x1c6e41596ll, 0x154442bd4ll);
	const __m128i k128 = _mm_set_epi64x(0x0ccaa009ell, 0x1751997d0ll);
	u8 *d = dst;
	auto ld = [&d](const u8 *q) {
		__m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(q));
		if (d) {
			_mm_storeu_si128(reinterpret_cast<__m128i *>(d), v);
			d += 16;
		}
		return v;
	};
	__m128i x0 = ld(p), x1 = ld(p + 16), x2 = ld(p + 32), x3 = ld(p + 48);
	x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128(int(crc)));
	p += 64;
	len -= 64;
	for (; len >= 64; p += 64, len -= 64) {
		x0 = fold(x0, k512, ld(p));
		x1 = fold(x1, k512, ld(p + 16));
		x2 = fold(x2, k512, ld(p + 32));
		x3 = fold(x3, k512, ld(p + 48));
	}
	x0 = fold(fold(fold(x0, k128, x1), k128, x2), k128, x3);
	for (; len >= 16; p += 16, len -= 16)
		x0 = fold(x0, k128, ld(p));
	if (d)
		memcpy(d, p, len);
	u8 b[16];
	_mm_storeu_si128(reinterpret_cast<__m128i *>(b), x0);
	return crc32_sw::crc32_le(crc32_sw::crc32_le(0, b, 16), p, len);
}

bool have_pclmul() { return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1"); }

// Runs fn(i) for about ms milliseconds (after a warm-up) and returns MB/s
// of `bytes` per call (MB = 10^6 bytes, as perftest reports).
template <class F> double rate_once(unsigned ms, unsigned bytes, F &fn) {
	unsigned long n = 0;
	auto t0 = Clock::now();
	auto until = t0 + std::chrono::milliseconds(ms);
	Clock::time_point t;
	do {
		for (unsigned k = 0; k < 64; k++, n++)
			fn(unsigned(n));
		t = Clock::now();
	} while (t < until);
	double s = std::chrono::duration<double>(t - t0).count();
	return double(n) * bytes / s / 1e6;
}

ib::IpUdp addr() {
	ib::IpUdp ip;
	const u8 a[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 8, 1};
	const u8 b[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 8, 2};
	memcpy(ip.src, a, 16);
	memcpy(ip.dst, b, 16);
	ip.sport = 0xc000;
	return ip;
}

// Builds one RC RDMA WRITE ONLY packet into out (room for it); returns its
// length, 0 on a codec error.
// pclmul_zc: zero-copy send (tx.cpp's tx_attach): the payload stays where
// it is (the kernel attaches its pages as fragments) and only the CRC reads
// it; the packet buffer gets the headers and the ICRC.
enum class Crc { env, fused, pclmul, pclmul_fused, pclmul_zc };

unsigned build(u8 *out, unsigned room, const u8 *payload, unsigned n, u32 psn, Crc mode) {
	ib::IpUdp ip = addr();
	ib::Headers h;
	h.bth.opcode = ib::op::rc | ib::op::write_only;
	h.bth.dest_qpn = 0x11;
	h.bth.psn = psn & ib::psn_mask;
	h.bth.pad = ib::pad_for(n);
	h.reth.va = 0x1000;
	h.reth.rkey = 0x1234;
	h.reth.length = n;
	u32 ib_len = ib::ib_length(h.bth.opcode, n);
	u32 l3 = ib::ip_udp_len(4);
	if (l3 + ib_len > room)
		return 0;
	ktl::Span<u8> all(out, l3 + ib_len), ibs;
	if (ib::write_ip_udp(ip, ib_len, all).is_error() || !all.subspan(l3, ib_len, &ibs))
		return 0;
	auto w = ib::write_ib_headers(h, ibs);
	if (w.is_error())
		return 0;
	u8 *pl = out + l3 + w.value();
	u32 len = l3 + ib_len;
	for (u32 i = n; i < ib_len - w.value() - ib::len::icrc; i++)
		pl[i] = 0;
	if (mode == Crc::env) {
		memcpy(pl, payload, n);
		if (ib::icrc_fill(ktl::Span<u8>(out, len)).is_error())
			return 0;
		return len;
	}
	if (mode == Crc::pclmul || mode == Crc::pclmul_fused || mode == Crc::pclmul_zc) {
		auto c = ib::icrc_begin(ktl::Span<const u8>(out, len));
		if (c.is_error())
			return 0;
		u32 crc = ib::icrc_update(c.value(), out + l3 + ib::len::bth, w.value() - ib::len::bth);
		if (mode == Crc::pclmul) {
			memcpy(pl, payload, n);
			crc = crc32_clmul(crc, pl, n);
		} else if (mode == Crc::pclmul_zc) {
			crc = crc32_clmul(crc, payload, n);
		} else {
			crc = crc32_clmul(crc, payload, n, pl);
		}
		crc = ib::icrc_update(crc, pl + n, ib_len - w.value() - ib::len::icrc - n);
		ib::icrc_store(out + len - ib::len::icrc, ib::icrc_finish(crc));
		return len;
	}
	// Copy and CRC in one pass over the payload (8 bytes at a time): the
	// variant the issue asks to measure against copy-then-CRC.
	auto c = ib::icrc_begin(ktl::Span<const u8>(out, len));
	if (c.is_error())
		return 0;
	u32 crc = c.value();
	crc = ib::icrc_update(crc, out + l3 + ib::len::bth, w.value() - ib::len::bth);
	const auto &t = crc32_sw::tables.t;
	const u8 *p = payload;
	u8 *d = pl;
	unsigned left = n;
	while (left >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		memcpy(d, &v, 8);
		uint32_t lo = crc ^ uint32_t(v);
		uint32_t hi = uint32_t(v >> 32);
		crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
		      t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
		p += 8;
		d += 8;
		left -= 8;
	}
	while (left--) {
		*d = *p++;
		crc = (crc >> 8) ^ t[0][(crc ^ *d++) & 0xff];
	}
	crc = ib::icrc_update(crc, pl + n, ib_len - w.value() - ib::len::icrc - n);
	ib::icrc_store(out + len - ib::len::icrc, ib::icrc_finish(crc));
	return len;
}

// Receive: parse, check, place. false on any error.
bool receive(const u8 *pkt, unsigned len, u8 *dst, unsigned room) {
	ktl::Span<const u8> s(pkt, len);
	auto ip = ib::parse_ip_udp(s);
	if (ip.is_error())
		return false;
	ktl::Span<const u8> ibs;
	if (!s.subspan(ip.value().bth_offset, ip.value().ib_len, &ibs))
		return false;
	auto pi = ib::parse_ib(ibs);
	if (pi.is_error() || ib::icrc_check(s).is_error() || pi.value().payload_len > room)
		return false;
	memcpy(dst, ibs.data() + pi.value().payload_offset, pi.value().payload_len);
	return true;
}

} // namespace

int main(int argc, char **argv) {
	Args a;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--bytes") && i + 1 < argc)
			a.bytes = unsigned(atoi(argv[++i]));
		else if (!strcmp(argv[i], "--ms") && i + 1 < argc)
			a.ms = unsigned(atoi(argv[++i]));
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			a.rounds = unsigned(atoi(argv[++i]));
		else if (!strcmp(argv[i], "--set") && i + 1 < argc)
			a.set = unsigned(atoi(argv[++i]));
		else if (!strcmp(argv[i], "--tsv"))
			a.tsv = true;
		else {
			fprintf(stderr, "usage: %s [--bytes N] [--ms MS] [--rounds N] [--set N] [--tsv]\n", argv[0]);
			return 2;
		}
	}
	if (a.bytes == 0 || a.bytes > 8192 || a.set == 0 || a.rounds == 0) {
		fprintf(stderr, "bench_packet: --bytes 1..8192, --set and --rounds >= 1\n");
		return 2;
	}
	const unsigned room = a.bytes + 128, set = a.set;
	std::vector<u8> src(size_t(set) * a.bytes), pkts(size_t(set) * room), dst(size_t(set) * a.bytes);
	for (size_t i = 0; i < src.size(); i++)
		src[i] = u8(i * 131 + 7);
	auto S = [&](unsigned i) { return &src[size_t(i % set) * a.bytes]; };
	auto P = [&](unsigned i) { return &pkts[size_t(i % set) * room]; };
	auto D = [&](unsigned i) { return &dst[size_t(i % set) * a.bytes]; };

	// Correctness first: both send variants produce the same packet, and it
	// parses, checks and places back to the payload.
	std::vector<u8> p1(room), p2(room);
	unsigned l1 = build(p1.data(), room, S(0), a.bytes, 5, Crc::env);
	unsigned l2 = build(p2.data(), room, S(0), a.bytes, 5, Crc::fused);
	std::vector<u8> p3(room);
	bool clmul = have_pclmul();
	std::vector<u8> p4(room);
	unsigned l3 = clmul ? build(p3.data(), room, S(0), a.bytes, 5, Crc::pclmul) : l1;
	unsigned l4 = clmul ? build(p4.data(), room, S(0), a.bytes, 5, Crc::pclmul_fused) : l1;
	// Zero-copy leaves the payload out of the buffer: the same ICRC.
	std::vector<u8> p5(room);
	unsigned l5 = clmul ? build(p5.data(), room, S(0), a.bytes, 5, Crc::pclmul_zc) : l1;
	if (clmul && (l5 != l1 || memcmp(p5.data() + l5 - ib::len::icrc, p1.data() + l1 - ib::len::icrc, ib::len::icrc)))
		l3 = 0;
	if (clmul)
		for (unsigned n = 0; n <= 300; n++) // every tail length and lane count
			if (crc32_clmul(~0u, S(0), n) != crc32_sw::crc32_le(~0u, S(0), n))
				l3 = 0;
	if (!l1 || l1 != l2 || l1 != l3 || l1 != l4 || memcmp(p1.data(), p2.data(), l1) ||
	    (clmul && (memcmp(p1.data(), p3.data(), l1) || memcmp(p1.data(), p4.data(), l1))) || !receive(p1.data(), l1, D(0), a.bytes) ||
	    memcmp(D(0), S(0), a.bytes)) {
		fprintf(stderr, "bench_packet: the packet path produced a wrong packet\n");
		return 1;
	}
	unsigned plen = l1;
	for (unsigned i = 0; i < set; i++)
		build(P(i), room, S(i), a.bytes, i, Crc::env);

	// Interleaved rounds, best of each: the build machine is shared, and a
	// round that lost the CPU says nothing about the code.
	auto f_memcpy = [&](unsigned i) { memcpy(D(i), S(i), a.bytes); sink = D(i)[0]; };
	auto f_crc = [&](unsigned i) { sink = sroce_env_crc32_le(~0u, S(i), a.bytes); };
	auto f_zlib = [&](unsigned i) { sink = uint32_t(crc32(0, S(i), a.bytes)); };
	auto f_send = [&](unsigned i) { sink = build(P(i), room, S(i), a.bytes, i, Crc::env); };
	auto f_fused = [&](unsigned i) { sink = build(P(i), room, S(i), a.bytes, 0, Crc::fused); };
	auto f_clmul_crc = [&](unsigned i) { sink = crc32_clmul(~0u, S(i), a.bytes); };
	auto f_clmul_send = [&](unsigned i) { sink = build(P(i), room, S(i), a.bytes, 0, Crc::pclmul); };
	auto f_clmul_fused = [&](unsigned i) { sink = build(P(i), room, S(i), a.bytes, 0, Crc::pclmul_fused); };
	auto f_clmul_zc = [&](unsigned i) { sink = build(P(i), room, S(i), a.bytes, 0, Crc::pclmul_zc); };
	auto f_recv = [&](unsigned i) { sink = receive(P(i), plen, D(i), a.bytes); };
	double memcpy_r = 0, crc_r = 0, zlib_r = 0, send_r = 0, fused_r = 0, recv_r = 0, clmul_r = 0, clsend_r = 0,
	       clfused_r = 0, clzc_r = 0;
	auto best = [](double &b, double r) { b = r > b ? r : b; };
	for (unsigned round = 0; round < a.rounds; round++) {
		best(memcpy_r, rate_once(a.ms, a.bytes, f_memcpy));
		best(crc_r, rate_once(a.ms, a.bytes, f_crc));
		best(zlib_r, rate_once(a.ms, a.bytes, f_zlib));
		best(fused_r, rate_once(a.ms, a.bytes, f_fused));
		if (clmul) {
			best(clmul_r, rate_once(a.ms, a.bytes, f_clmul_crc));
			best(clsend_r, rate_once(a.ms, a.bytes, f_clmul_send));
			best(clfused_r, rate_once(a.ms, a.bytes, f_clmul_fused));
			best(clzc_r, rate_once(a.ms, a.bytes, f_clmul_zc));
		}
		best(send_r, rate_once(a.ms, a.bytes, f_send)); // leaves P(i) valid for recv
		best(recv_r, rate_once(a.ms, a.bytes, f_recv));
	}

	struct Row {
		const char *name, *what;
		double r;
	} rows[] = {
		{"memcpy", "plain memcpy of the payload", memcpy_r},
		{"crc32_le", "sroce_env_crc32_le alone (slice-by-8, as Linux 6.1's crc32_le)", crc_r},
		{"zlib_crc32", "zlib crc32 alone (reference)", zlib_r},
		{"send", "headers + copy + icrc_fill (the core's path)", send_r},
		{"send_fused", "headers + copy fused with the CRC", fused_r},
		{"recv", "parse + icrc_check + place", recv_r},
		{"crc32_pclmul", "CRC alone by PCLMUL folding (as the kernel's crc32-pclmul)", clmul_r},
		{"send_pclmul", "headers + copy + ICRC by PCLMUL", clsend_r},
		{"send_pclmul_fused", "headers + copy fused with the PCLMUL CRC", clfused_r},
		{"send_pclmul_zc", "zero-copy: headers + ICRC by PCLMUL over the payload in place", clzc_r},
	};
	if (a.tsv) {
		printf("name\tbytes\tMBps\tratio_to_memcpy\n");
		for (auto &r : rows)
			if (r.r > 0)
				printf("%s\t%u\t%.0f\t%.3f\n", r.name, a.bytes, r.r, r.r / memcpy_r);
		return 0;
	}
	printf("sroce host packet path, %u-byte payload, %u-packet working set, one core\n", a.bytes, set);
	for (auto &r : rows)
		if (r.r > 0)
			printf("  %-17s %9.0f MB/s  %5.1f%% of memcpy  %s\n", r.name, r.r, 100.0 * r.r / memcpy_r, r.what);
	return 0;
}

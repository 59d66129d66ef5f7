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
unsigned build(u8 *out, unsigned room, const u8 *payload, unsigned n, u32 psn, bool fused) {
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
	if (!fused) {
		memcpy(pl, payload, n);
		if (ib::icrc_fill(ktl::Span<u8>(out, len)).is_error())
			return 0;
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
	unsigned l1 = build(p1.data(), room, S(0), a.bytes, 5, false);
	unsigned l2 = build(p2.data(), room, S(0), a.bytes, 5, true);
	if (!l1 || l1 != l2 || memcmp(p1.data(), p2.data(), l1) || !receive(p1.data(), l1, D(0), a.bytes) ||
	    memcmp(D(0), S(0), a.bytes)) {
		fprintf(stderr, "bench_packet: the packet path produced a wrong packet\n");
		return 1;
	}
	unsigned plen = l1;
	for (unsigned i = 0; i < set; i++)
		build(P(i), room, S(i), a.bytes, i, false);

	// Interleaved rounds, best of each: the build machine is shared, and a
	// round that lost the CPU says nothing about the code.
	auto f_memcpy = [&](unsigned i) { memcpy(D(i), S(i), a.bytes); sink = D(i)[0]; };
	auto f_crc = [&](unsigned i) { sink = sroce_env_crc32_le(~0u, S(i), a.bytes); };
	auto f_zlib = [&](unsigned i) { sink = uint32_t(crc32(0, S(i), a.bytes)); };
	auto f_send = [&](unsigned i) { sink = build(P(i), room, S(i), a.bytes, i, false); };
	auto f_fused = [&](unsigned i) { sink = build(P(i), room, S(i), a.bytes, 0, true); };
	auto f_recv = [&](unsigned i) { sink = receive(P(i), plen, D(i), a.bytes); };
	double memcpy_r = 0, crc_r = 0, zlib_r = 0, send_r = 0, fused_r = 0, recv_r = 0;
	auto best = [](double &b, double r) { b = r > b ? r : b; };
	for (unsigned round = 0; round < a.rounds; round++) {
		best(memcpy_r, rate_once(a.ms, a.bytes, f_memcpy));
		best(crc_r, rate_once(a.ms, a.bytes, f_crc));
		best(zlib_r, rate_once(a.ms, a.bytes, f_zlib));
		best(fused_r, rate_once(a.ms, a.bytes, f_fused));
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
	};
	if (a.tsv) {
		printf("name\tbytes\tMBps\tratio_to_memcpy\n");
		for (auto &r : rows)
			printf("%s\t%u\t%.0f\t%.3f\n", r.name, a.bytes, r.r, r.r / memcpy_r);
		return 0;
	}
	printf("sroce host packet path, %u-byte payload, %u-packet working set, one core\n", a.bytes, set);
	for (auto &r : rows)
		printf("  %-11s %9.0f MB/s  %5.1f%% of memcpy  %s\n", r.name, r.r, 100.0 * r.r / memcpy_r, r.what);
	return 0;
}

// Crafts the sroce-dump test capture with the core's own writers and ICRC:
// good packets of many opcodes (some VLAN-tagged), a retransmission, one
// packet for each kind of damage, then response and UD flows for --flows.
// Prints a manifest line per frame: "N KIND OPCODE". CORPUS_DIR receives
// each frame as fuzzer seeds.
// Usage: mkpcap [--trains | --sll] OUT.pcap [CORPUS_DIR]
#include <pcap/pcap.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "icrc.h"
#include "opcode.h"
#include "packet.h"

using namespace sroce::ib;

namespace {

struct Frame {
	std::vector<uint8_t> bytes;
	uint32_t wirelen;
	std::string kind;
	std::string what;
};

std::vector<Frame> frames;

IpUdp path(int v, int a, int b) {
	IpUdp p;
	p.ip_version = uint8_t(v);
	if (v == 4) {
		const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
		memcpy(p.src, pre, 12);
		memcpy(p.dst, pre, 12);
		uint8_t s[4] = {10, 0, 0, uint8_t(a)}, d[4] = {10, 0, 0, uint8_t(b)};
		memcpy(p.src + 12, s, 4);
		memcpy(p.dst + 12, d, 4);
	} else {
		p.src[0] = p.dst[0] = 0xfd;
		p.src[15] = uint8_t(a);
		p.dst[15] = uint8_t(b);
		p.flow_label = 0x12345;
	}
	p.sport = uint16_t(49152 + a);
	p.tclass = 0x68;
	return p;
}

// Ethernet + IP/UDP + headers + payload + pad + ICRC, all valid.
std::vector<uint8_t> packet(const IpUdp &p, Headers h, uint32_t payload) {
	h.bth.pad = pad_for(payload);
	uint32_t ib = ib_length(h.bth.opcode, payload);
	uint32_t hl = ip_udp_len(p.ip_version);
	std::vector<uint8_t> f(14 + hl + ib, 0);
	const uint8_t eth[14] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00};
	memcpy(f.data(), eth, 14);
	if (p.ip_version == 6) {
		f[12] = 0x86;
		f[13] = 0xdd;
	}
	uint8_t *ip = f.data() + 14;
	if (write_ip_udp(p, ib, {ip, hl}).is_error())
		abort();
	uint32_t n = write_ib_headers(h, {ip + hl, ib}).value();
	for (uint32_t i = 0; i < payload; i++)
		ip[hl + n + i] = uint8_t(i * 7 + 1);
	if (icrc_fill({ip, hl + ib}).is_error())
		abort();
	return f;
}

void add(std::vector<uint8_t> b, const char *kind, const std::string &what, uint32_t wire = 0) {
	uint32_t w = wire ? wire : uint32_t(b.size());
	frames.push_back({std::move(b), w, kind, what});
}

Headers hdr(uint8_t opcode, uint32_t qpn, uint32_t psn) {
	Headers h;
	h.bth.opcode = opcode;
	h.bth.dest_qpn = qpn;
	h.bth.psn = psn;
	return h;
}

// The frame with VLAN tags (TPIDs, outermost first) after its MAC
// addresses; the ICRC does not cover them.
std::vector<uint8_t> tagged(std::vector<uint8_t> f, std::vector<uint16_t> tpids) {
	uint16_t vid = 100;
	for (auto it = tpids.rbegin(); it != tpids.rend(); ++it, vid++) {
		const uint8_t tag[4] = {uint8_t(*it >> 8), uint8_t(*it), uint8_t(vid >> 8), uint8_t(vid)};
		f.insert(f.begin() + 12, tag, tag + 4);
	}
	return f;
}

// Recomputes the ICRC after an edit to a frame's IP part.
void refill(std::vector<uint8_t> &f) {
	if (icrc_fill({f.data() + 14, f.size() - 14}).is_error())
		abort();
}

// A packet train as a capture on veth sees it (kmod/linux/train.c): the
// first packet's Ethernet, IP and UDP headers with the lengths of the
// whole, then every packet's IB part. SEND_MIDDLEs of `seg` bytes and a
// SEND_LAST of `last`, PSNs from psn, IPv4 IDs the PSNs' low bits (tx.cpp).
// bump_psn moves the second packet's PSN off by one: no longer a train.
std::vector<uint8_t> train(IpUdp p, uint32_t qpn, uint32_t psn, uint32_t n, uint32_t seg, uint32_t last,
			   bool bump_psn = false) {
	std::vector<uint8_t> out;
	uint32_t hl = ip_udp_len(p.ip_version);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t kpsn = psn + k + (bump_psn && k == 1);
		p.ip_id = uint16_t(kpsn);
		auto h = hdr(op::rc + (k + 1 < n ? op::send_middle : op::send_last), qpn, kpsn);
		auto f = packet(p, h, k + 1 < n ? seg : last);
		if (k == 0)
			out = f;
		else
			out.insert(out.end(), f.begin() + 14 + hl, f.end());
	}
	uint8_t *ip = out.data() + 14;
	uint32_t ip_len = uint32_t(out.size()) - 14, udp_len = ip_len - (hl - udp_header_len);
	if (p.ip_version == 4) {
		ktl::put_be16(ip + 2, uint16_t(ip_len));
		ktl::put_be16(ip + 10, 0);
		ktl::put_be16(ip + 10, ipv4_checksum(ip, 20));
	} else {
		ktl::put_be16(ip + 4, uint16_t(udp_len));
	}
	ktl::put_be16(ip + hl - udp_header_len + 4, uint16_t(udp_len));
	return out;
}

int write_pcap(const char *out, const char *corpus, int linktype, const char *prefix);

// mkpcap --trains OUT.pcap: trains, a frame that only looks like one, and
// a plain packet; the manifest says how many lines each frame makes.
int trains(const char *out, const char *corpus) {
	IpUdp ab = path(4, 1, 2);
	add(train(ab, 0x11, 0xfffe, 5, 1024, 512), "train", "5"); // IDs and PSNs across 16 bits
	add(train(path(6, 1, 2), 0x12, 40, 3, 256, 256), "train", "3");
	add(train(ab, 0x13, 7, 3, 64, 64, true), "nottrain", "1");
	add(packet(ab, hdr(op::rc + op::send_only, 0x11, 9), 100), "good", "1");
	return write_pcap(out, corpus, DLT_EN10MB, "train-");
}

// mkpcap --sll OUT.pcap: a Linux cooked capture (-i any), where libpcap
// puts a VLAN tag the kernel stripped at the protocol field: untagged,
// tagged and QinQ RoCEv2 frames (IPv4 and IPv6), and a tagged one to
// another UDP port.
int sll(const char *out, const char *corpus) {
	IpUdp ab = path(4, 1, 2), cb = path(4, 3, 2);
	add(packet(ab, hdr(op::rc + op::send_only, 0x61, 1), 20), "good", "RC_SEND_ONLY");
	add(tagged(packet(cb, hdr(op::rc + op::send_only, 0x61, 2), 20), {0x8100}), "good", "RC_SEND_ONLY");
	Headers h = hdr(op::rc + op::write_only, 0x61, 3);
	h.reth = {0x1000, 0x5, 24};
	add(tagged(packet(ab, h, 24), {0x88a8, 0x8100}), "good", "RC_RDMA_WRITE_ONLY");
	IpUdp cb6 = path(6, 3, 2);
	add(tagged(packet(cb6, hdr(op::rc + op::send_only, 0x62, 1), 20), {0x8100}), "good", "RC_SEND_ONLY");
	add(tagged(packet(cb6, hdr(op::rc + op::send_only, 0x62, 2), 20), {0x88a8, 0x8100}), "good",
	    "RC_SEND_ONLY");
	auto f = tagged(packet(cb, hdr(op::rc + op::send_only, 0x61, 4), 20), {0x8100});
	f[18 + 20 + 3] = 0xbc; // the UDP dst port's low byte: 4796
	add(f, "notroce", "-");
	return write_pcap(out, corpus, DLT_LINUX_SLL, "sll-");
}

} // namespace

int main(int argc, char **argv) {
	if (argc >= 3 && argc <= 4 && !strcmp(argv[1], "--trains"))
		return trains(argv[2], argc > 3 ? argv[3] : nullptr);
	if (argc >= 3 && argc <= 4 && !strcmp(argv[1], "--sll"))
		return sll(argv[2], argc > 3 ? argv[3] : nullptr);
	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: mkpcap [--trains | --sll] OUT.pcap [CORPUS_DIR]\n");
		return 2;
	}
	IpUdp ab = path(4, 1, 2), ba = path(4, 2, 1);

	// A requester on 10.0.0.1 talking to QP 0x11 on 10.0.0.2, responses to 0x22.
	Headers h = hdr(op::rc + op::send_first, 0x11, 100);
	add(packet(ab, h, 256), "good", "RC_SEND_FIRST");
	h = hdr(op::rc + op::write_only, 0x11, 101);
	h.bth.ack_req = true;
	h.reth = {0x7f0012345000ull, 0x1234, 100};
	add(packet(ab, h, 100), "good", "RC_RDMA_WRITE_ONLY");
	add(packet(ab, h, 100), "good", "RC_RDMA_WRITE_ONLY"); // retransmitted PSN 101
	h = hdr(op::rc + op::read_request, 0x11, 102);
	h.reth = {0x7f0000001000ull, 0xabcd, 2048};
	add(packet(ab, h, 0), "good", "RC_RDMA_READ_REQUEST");
	h = hdr(op::rc + op::read_response_first, 0x22, 102);
	h.aeth = {Aeth::ack_syndrome(31), 2};
	add(packet(ba, h, 1024), "good", "RC_RDMA_READ_RESPONSE_FIRST");
	h = hdr(op::rc + op::read_response_last, 0x22, 103);
	h.aeth = {Aeth::ack_syndrome(31), 3};
	add(packet(ba, h, 1024), "good", "RC_RDMA_READ_RESPONSE_LAST");
	h = hdr(op::rc + op::compare_swap, 0x11, 104);
	h.atomic_eth = {0x7f0000002000ull, 0x77, 5, 4};
	add(packet(ab, h, 0), "good", "RC_COMPARE_SWAP");
	h = hdr(op::rc + op::atomic_acknowledge, 0x22, 104);
	h.aeth = {Aeth::ack_syndrome(31), 4};
	h.atomic_ack_eth.orig = 4;
	add(packet(ba, h, 0), "good", "RC_ATOMIC_ACKNOWLEDGE");
	// IBA 1.5 FLUSH, to another QP (the flows of 0x11 stay as counted):
	// FETH (global visibility, whole MR) before RETH, no payload.
	h = hdr(op::rc + op::flush, 0x33, 300);
	h.bth.ack_req = true;
	h.feth = {flush::global, flush::level_region};
	h.reth = {0x7f0000003000ull, 0x88, 64};
	add(packet(ab, h, 0), "good", "RC_FLUSH");
	h = hdr(op::rc + op::acknowledge, 0x22, 104);
	h.aeth = {Aeth::nak_syndrome(NakCode::psn_seq_err), 4};
	add(packet(ba, h, 0), "good", "RC_ACKNOWLEDGE");
	h = hdr(op::rc + op::acknowledge, 0x22, 105);
	h.aeth = {Aeth::rnr_syndrome(14), 4};
	add(packet(ba, h, 0), "good", "RC_ACKNOWLEDGE");
	h = hdr(op::rc + op::send_last_inv, 0x11, 105);
	h.ieth.rkey = 0x5566;
	add(packet(ab, h, 33), "good", "RC_SEND_LAST_WITH_INVALIDATE");
	h = hdr(op::rc + op::write_only_imm, 0x11, 106);
	h.reth = {0x1000, 0x99, 8};
	h.immdt.imm = 0xcafef00d;
	add(packet(ab, h, 8), "good", "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
	h = hdr(op::ud + op::send_only_imm, 0x33, 7);
	h.deth = {0x11111111, 0x44};
	h.immdt.imm = 1;
	add(packet(ab, h, 40), "good", "UD_SEND_ONLY_WITH_IMMEDIATE");
	h = hdr(op::xrc + op::send_only, 0x55, 9);
	h.xrceth.srqn = 0x66;
	add(packet(ab, h, 12), "good", "XRC_SEND_ONLY");
	// The XRCETH comes right after the BTH, before a RETH (IBA 9.2, A14).
	h = hdr(op::xrc + op::write_only, 0x55, 10);
	h.xrceth.srqn = 0xabcdef;
	h.reth = {0x7f0000004000ull, 0x1234, 16};
	add(packet(ab, h, 16), "good", "XRC_RDMA_WRITE_ONLY");
	h = hdr(op::xrc + op::read_request, 0x55, 11);
	h.xrceth.srqn = 0x67;
	h.reth = {0x7f0000005000ull, 0x4321, 8192};
	add(packet(ab, h, 0), "good", "XRC_RDMA_READ_REQUEST");
	h = hdr(op::uc + op::write_first, 0x12, 1);
	h.reth = {0x2000, 0x3, 2048};
	add(packet(ab, h, 1024), "good", "UC_RDMA_WRITE_FIRST");
	h = hdr(op::rc + op::send_only, 0x77, 1);
	add(packet(path(6, 1, 2), h, 5), "good", "RC_SEND_ONLY");
	h = hdr(op::cnp, 0x11, 0);
	h.bth.becn = true;
	add(packet(ba, h, 0), "good", "CNP");
	{
		// A CNP captured from a ConnectX-4 Lx (scapy's RoCE tests): the
		// hardware's own ICRC, 0x82fd002a.
		const uint8_t cx4[] = {
			0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32, 0x08, 0x00,
			0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61, 0x0a, 0x00,
			0x11, 0x01, 0x0a, 0x00, 0x12, 0x01, 0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,
			0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
			0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			0x82, 0xfd, 0x00, 0x2a};
		add(std::vector<uint8_t>(cx4, cx4 + sizeof(cx4)), "kat", "CNP");
	}

	// Damage, one kind per frame.
	h = hdr(op::rc + op::send_middle, 0x11, 107);
	auto f = packet(ab, h, 64);
	f[14 + 28 + 12 + 10] ^= 0x04; // a payload bit
	add(f, "badicrc", "RC_SEND_MIDDLE");

	// UDP payload of 8 bytes: no room for BTH.
	f = packet(ab, hdr(op::rc + op::send_only, 0x11, 109), 0);
	f.resize(14 + 28 + 8);
	f[14 + 3] = 28 + 8;  // IP total length
	f[14 + 25] = 8 + 8;  // UDP length
	f[14 + 10] = f[14 + 11] = 0;
	{
		uint16_t c = ipv4_checksum(f.data() + 14, 20);
		f[14 + 10] = uint8_t(c >> 8);
		f[14 + 11] = uint8_t(c);
	}
	add(f, "truncbth", "-");

	f = packet(ab, hdr(op::rc + op::send_only, 0x11, 110), 16);
	f[14 + 28] = 0x18; // reserved opcode; ICRC recomputed so only the opcode is wrong
	refill(f);
	add(f, "reserved", "RESERVED");

	f = packet(ab, hdr(op::rc + op::send_only, 0x11, 111), 16);
	f[14 + 25] += 40; // UDP length beyond the frame
	add(f, "udplen", "-");

	// RDMA_WRITE_FIRST whose IB part ends 8 bytes into the RETH (+ ICRC).
	h = hdr(op::rc + op::write_first, 0x11, 112);
	h.reth = {0x3000, 0x4, 4096};
	f = packet(ab, h, 0);
	{
		uint32_t ib = 12 + 8 + 4;
		f.resize(14 + 28 + ib);
		f[14 + 3] = uint8_t(28 + ib);
		f[14 + 25] = uint8_t(8 + ib);
		f[14 + 10] = f[14 + 11] = 0;
		uint16_t c = ipv4_checksum(f.data() + 14, 20);
		f[14 + 10] = uint8_t(c >> 8);
		f[14 + 11] = uint8_t(c);
		refill(f);
	}
	add(f, "cutreth", "RC_RDMA_WRITE_FIRST");

	// Captured with snaplen 96 out of a 1024-byte payload.
	h = hdr(op::rc + op::write_middle, 0x11, 108);
	f = packet(ab, h, 1024);
	uint32_t wire = uint32_t(f.size());
	f.resize(96);
	add(f, "snaplen", "RC_RDMA_WRITE_MIDDLE", wire);

	// 802.1Q over IPv4 and IPv6, and QinQ (802.1ad outside) from another
	// host, to QP 0x88.
	h = hdr(op::rc + op::send_only, 0x88, 1);
	add(tagged(packet(ab, h, 20), {0x8100}), "good", "RC_SEND_ONLY");
	h = hdr(op::rc + op::send_only, 0x88, 2);
	add(tagged(packet(path(6, 1, 2), h, 20), {0x8100}), "good", "RC_SEND_ONLY");
	h = hdr(op::rc + op::send_only, 0x88, 3);
	add(tagged(packet(path(4, 4, 2), h, 20), {0x88a8, 0x8100}), "good", "RC_SEND_ONLY");

	// A responder's stream to QP 0x23: READ responses and ACKs share the
	// requests' PSNs; ACK 14 answers 13 and 14 (coalesced), then again (a
	// duplicate request). No gap, no retransmission.
	IpUdp cd = path(4, 3, 1);
	uint32_t msn = 1;
	for (uint32_t psn : {10u, 11u, 12u, 14u, 14u, 15u}) {
		bool ack = psn == 11 || psn == 14;
		h = hdr(op::rc + (ack ? op::acknowledge : op::read_response_only), 0x23, psn);
		h.aeth = {Aeth::ack_syndrome(31), msn++};
		add(packet(cd, h, ack ? 0 : 64), "good", ack ? "RC_ACKNOWLEDGE" : "RC_RDMA_READ_RESPONSE_ONLY");
	}
	// To QP 0x24: a READ response missing its MIDDLE (a gap), and the
	// missing part sent again for a new READ (a retransmission).
	h = hdr(op::rc + op::read_response_first, 0x24, 20);
	h.aeth = {Aeth::ack_syndrome(31), 1};
	add(packet(cd, h, 256), "good", "RC_RDMA_READ_RESPONSE_FIRST");
	h = hdr(op::rc + op::read_response_last, 0x24, 22);
	h.aeth = {Aeth::ack_syndrome(31), 1};
	add(packet(cd, h, 256), "good", "RC_RDMA_READ_RESPONSE_LAST");
	h = hdr(op::rc + op::read_response_only, 0x24, 21);
	h.aeth = {Aeth::ack_syndrome(31), 2};
	add(packet(cd, h, 256), "good", "RC_RDMA_READ_RESPONSE_ONLY");

	// UD to QP 0x34 from two QPs of one host, each with its own PSNs.
	for (auto [src_qp, psn] : {std::pair{0x44u, 0u}, {0x45u, 500u}, {0x44u, 1u}}) {
		h = hdr(op::ud + op::send_only, 0x34, psn);
		h.deth = {0x11111111, src_qp};
		add(packet(ab, h, 32), "good", "UD_SEND_ONLY");
	}
	return write_pcap(argv[1], argc > 2 ? argv[2] : nullptr, DLT_EN10MB, "");
}

namespace {

// An Ethernet frame (with up to two VLAN tags) under another link-layer
// header: fuzz_decode.cpp's selectors 1 (raw IP), 2 (Linux cooked: the
// tags stay, at its protocol field, as libpcap puts them), 3 (Linux cooked
// v2, untagged) and 4/5 (IPv4/IPv6 by the version).
std::vector<uint8_t> relink(const std::vector<uint8_t> &e, int sel) {
	if (e.size() < 14)
		return e;
	auto be16 = [&](size_t at) { return uint16_t(e[at] << 8 | e[at + 1]); };
	size_t ip = 14;
	for (int tags = 0; tags < 2 && ip + 4 <= e.size() && (be16(ip - 2) == 0x8100 || be16(ip - 2) == 0x88a8); tags++)
		ip += 4;
	std::vector<uint8_t> f;
	if (sel == 2) {
		const uint8_t sll[14] = {0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 2, 0, 0}; // to us, ARPHRD_ETHER
		f.assign(sll, sll + 14);
		f.insert(f.end(), e.begin() + 12, e.end());
	} else if (sel == 3) {
		const uint8_t sll2[20] = {e[ip - 2], e[ip - 1], 0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 2, 0, 0, 0, 0, 2, 0, 0};
		f.assign(sll2, sll2 + 20);
		f.insert(f.end(), e.begin() + long(ip), e.end());
	} else {
		f.assign(e.begin() + long(ip), e.end());
	}
	return f;
}

// A fuzzer seed: [linktype selector][wire extra][frame].
void seed(const std::string &name, int sel, uint32_t extra, const std::vector<uint8_t> &f) {
	if (FILE *c = fopen(name.c_str(), "wb")) {
		fputc(sel, c);
		fputc(int(extra > 255 ? 255 : extra), c);
		fwrite(f.data(), 1, f.size(), c);
		fclose(c);
	}
}

// The frames (built as Ethernet) as a pcap of linktype DLT_EN10MB or
// DLT_LINUX_SLL, and each, under every link-layer header the decoder
// reads, into the corpus.
int write_pcap(const char *out, const char *corpus, int linktype, const char *prefix) {
	pcap_t *dead = pcap_open_dead(linktype, 65535);
	pcap_dumper_t *d = pcap_dump_open(dead, out);
	if (!d) {
		fprintf(stderr, "mkpcap: %s\n", pcap_geterr(dead));
		return 1;
	}
	for (size_t i = 0; i < frames.size(); i++) {
		const Frame &fr = frames[i];
		uint32_t extra = fr.wirelen - uint32_t(fr.bytes.size());
		std::vector<uint8_t> b = linktype == DLT_LINUX_SLL ? relink(fr.bytes, 2) : fr.bytes;
		struct pcap_pkthdr ph = {};
		ph.ts.tv_sec = 1700000000 + long(i);
		ph.ts.tv_usec = long(i) * 1000;
		ph.caplen = uint32_t(b.size());
		ph.len = ph.caplen + extra;
		pcap_dump(reinterpret_cast<u_char *>(d), &ph, b.data());
		printf("%zu %s %s\n", i + 1, fr.kind.c_str(), fr.what.c_str());
		if (corpus) {
			std::string name = std::string(corpus) + "/" + prefix + "frame" + std::to_string(i + 1);
			seed(name, 0, extra, fr.bytes);
			for (int sel = 1; sel <= 3; sel++)
				seed(name + "-" + std::to_string(sel), sel, extra, relink(fr.bytes, sel));
			auto ip = relink(fr.bytes, 1);
			if (!ip.empty() && ip[0] >> 4 == 6)
				seed(name + "-5", 5, extra, ip);
			else
				seed(name + "-4", 4, extra, ip);
		}
	}
	pcap_dump_close(d);
	pcap_close(dead);
	return 0;
}

} // namespace

// sroce-dump: print RoCEv2 packets one per line, with ICRC verdicts, from a
// live interface, an RDMA device's netdev, or a pcap/pcapng file.
// See Documentation/sroce-dump.md and sroce-dump(8).
#include <getopt.h>
#include <pcap/pcap.h>
#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "decode.h"
#include "flows.h"
#include "rdma_dev.h"

using namespace sroce_dump;

namespace {

pcap_t *g_pcap;
volatile sig_atomic_t g_stopped; // by SIGINT/SIGTERM, not by -c or the end of a file

void on_signal(int) {
	g_stopped = 1;
	if (g_pcap)
		pcap_breakloop(g_pcap);
}

struct Options {
	std::string device, iface, read_file, write_file, filter;
	bool json = false, flows = false, epoch = false, print = false;
	long long qpn = -1;
	int opcode = -1;
	long long count = -1;
	int snaplen = 262144;
	// The kernel's capture ring: large, so that a slow reader (a busy or
	// emulated CPU) loses nothing; losses are reported at exit.
	long long buffer_kib = 32768;
};

struct State {
	Options opt;
	pcap_dumper_t *dumper = nullptr;
	Flows flows;
	long long seen = 0;
	int linktype = 0;
	// A Linux cooked capture with an expression: the expression, checked
	// on an untagged copy of each VLAN-tagged frame (capture_filter).
	struct bpf_program untagged = {};
	bool have_untagged = false;
};

void usage(FILE *f) {
	fprintf(f,
		"usage: sroce-dump [-d RDMA_DEV | -i IFACE | -r FILE] [-w FILE] [--json] [--flows]\n"
		"                  [--qpn N] [--opcode NAME|NUM] [-c COUNT] [-s SNAPLEN] [-B KIB] [--tt]\n"
		"                  [--print] [BPF EXPRESSION...]\n"
		"Prints RoCEv2 packets (udp dst port 4791, narrowed by the expression), one per\n"
		"line, each ending with its ICRC verdict: ok, BAD, unverifiable or -.\n");
}

bool parse_number(const char *s, long long *out) {
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 0);
	if (errno || *end || end == s || v < 0)
		return false;
	*out = v;
	return true;
}

// A RoCEv2 frame of a Linux cooked capture with n VLAN tags before the
// protocol field, by raw offsets: IP at 16 + 4n, IPv4 of any header
// length and not a later fragment (as libpcap's "udp dst port"), or IPv6.
std::string sll_tagged(int n) {
	char b[512];
	std::string s = "(";
	for (int k = 0; k < n; k++) {
		snprintf(b, sizeof(b), "(link[%d:2] = 0x8100 or link[%d:2] = 0x88a8) and ", 14 + 4 * k, 14 + 4 * k);
		s += b;
	}
	int ip = 16 + 4 * n;
	snprintf(b, sizeof(b),
		 "((link[%d:2] = 0x0800 and link[%d] = 17 and link[%d:2] & 0x1fff = 0 and "
		 "link[%d + ((link[%d] & 0xf) << 2) + 2:2] = 4791) or "
		 "(link[%d:2] = 0x86dd and link[%d] = 17 and link[%d:2] = 4791)))",
		 ip - 2, ip + 9, ip + 6, ip, ip, ip - 2, ip + 6, ip + 42);
	return s + b;
}

// udp dst port 4791 and the expression, also under up to two VLAN tags (as
// the decoder reads them). On Ethernet, "vlan" moves the offsets of all
// that follows it by a tag, so the match is repeated after each. libpcap
// has no "vlan" for Linux cooked captures (-i any), where it re-inserts a
// tag the kernel stripped at the protocol field (offset 14): raw offsets
// match such frames in a file (the kernel's filter sees them untagged), and
// the expression, compiled for IP at offset 16, is checked on an untagged
// copy of them (untagged_passes).
std::string capture_filter(int linktype, const std::string &user) {
	std::string f0 = "udp dst port 4791";
	if (!user.empty())
		f0 += " and (" + user + ")";
	if (linktype == DLT_EN10MB)
		return "(" + f0 + ") or (vlan and ((" + f0 + ") or (vlan and (" + f0 + "))))";
	if (linktype == DLT_LINUX_SLL)
		return "(" + f0 + ") or " + sll_tagged(1) + " or " + sll_tagged(2);
	return f0;
}

// A VLAN-tagged frame of a Linux cooked capture passes the expression when
// its copy without the tags does: the protocol field and what follows the
// tags, after the rest of the cooked header.
bool untagged_passes(const State *st, const Decoded &d, const struct pcap_pkthdr *h, const u_char *data) {
	if (!st->have_untagged || !d.ip || d.ip_offset <= 16)
		return true;
	uint32_t tags = d.ip_offset - 16;
	std::vector<u_char> f(data, data + 14);
	f.insert(f.end(), data + d.ip_offset - 2, data + h->caplen);
	struct pcap_pkthdr uh = *h;
	uh.caplen -= tags;
	uh.len -= tags;
	return pcap_offline_filter(&st->untagged, &uh, f.data()) != 0;
}

// Output that could not be written (a full disk, /dev/full, a closed
// descriptor): reported, and the exit status is 1.
bool write_failed(FILE *f, const char *what) {
	errno = 0;
	if (fflush(f) == 0 && !ferror(f))
		return false;
	fprintf(stderr, "sroce-dump: %s: %s\n", what, errno ? strerror(errno) : "write error");
	return true;
}

// One packet: filtered (false: it did not pass), printed, counted in the
// flows. The caller writes the frame (-w).
bool on_decoded(State *st, const Decoded &d, const struct pcap_pkthdr *h) {
	const Options &o = st->opt;
	if (o.qpn >= 0 && !(d.ib_ok && d.pkt.hdr.bth.dest_qpn == o.qpn))
		return false;
	if (o.opcode >= 0 && !(d.have_bth && d.opcode == o.opcode))
		return false;
	if (!st->dumper || o.print) {
		std::string line = o.json ? format_json(d, h->ts) : format_text(d, h->ts, {o.epoch});
		fputs(line.c_str(), stdout);
		fputc('\n', stdout);
	}
	if (o.flows)
		st->flows.add(d);
	return true;
}

// -c: true once the count is reached (the loop then stops).
bool counted(State *st) {
	if (st->opt.count > 0 && ++st->seen >= st->opt.count) {
		if (g_pcap)
			pcap_breakloop(g_pcap);
		return true;
	}
	return false;
}

// A packet train (sroce's UDP GSO, captured before segmentation; tried only
// for a frame whose ICRC fails as one packet) is shown as the packets it
// segments into, each marked "train k/n"; -w writes the frame once if any
// of them passed the filters.
void on_packet(u_char *arg, const struct pcap_pkthdr *h, const u_char *data) {
	State *st = reinterpret_cast<State *>(arg);
	Decoded d = decode_frame(st->linktype, data, h->caplen, h->len);
	if (!untagged_passes(st, d, h, data))
		return;
	std::vector<std::vector<uint8_t>> segs;
	if (d.icrc == IcrcVerdict::bad)
		segs = split_train(st->linktype, data, h->caplen, h->len);
	bool passed = false, done = false;
	if (segs.empty()) {
		passed = on_decoded(st, d, h);
		done = passed && counted(st);
	}
	for (uint32_t k = 0; k < segs.size() && !done; k++) {
		const auto &f = segs[k];
		Decoded s = decode_frame(st->linktype, f.data(), uint32_t(f.size()), uint32_t(f.size()));
		s.train_seg = k + 1;
		s.train_len = uint32_t(segs.size());
		if (on_decoded(st, s, h)) {
			passed = true;
			done = counted(st);
		}
	}
	if (passed && st->dumper)
		pcap_dump(reinterpret_cast<u_char *>(st->dumper), h, data);
	// Output that fails (a full disk) ends the capture; main reports it.
	if (ferror(stdout) || (st->dumper && ferror(pcap_dump_file(st->dumper))))
		pcap_breakloop(g_pcap);
}

pcap_t *open_live(const std::string &iface, int snaplen, long long buffer_kib, char *errbuf) {
	pcap_t *p = pcap_create(iface.c_str(), errbuf);
	if (!p)
		return nullptr;
	pcap_set_snaplen(p, snaplen);
	pcap_set_buffer_size(p, int(buffer_kib * 1024));
	// No immediate mode: libpcap then uses a TPACKET_V2 ring of
	// snaplen-sized slots on offloading netdevs (veth), a few frames per
	// MiB, and bursts overflow it. TPACKET_V3 packs frames into blocks,
	// handed over at the latest after the 100 ms timeout.
	pcap_set_timeout(p, 100);
	int rc = pcap_activate(p);
	if (rc < 0) {
		snprintf(errbuf, PCAP_ERRBUF_SIZE, "%s: %s", iface.c_str(), pcap_geterr(p));
		pcap_close(p);
		return nullptr;
	}
	return p;
}

} // namespace

int main(int argc, char **argv) {
	State st;
	Options &o = st.opt;
	enum { opt_json = 256, opt_flows, opt_qpn, opt_opcode, opt_tt, opt_print };
	static const struct option longopts[] = {
		{"device", required_argument, nullptr, 'd'},
		{"interface", required_argument, nullptr, 'i'},
		{"read", required_argument, nullptr, 'r'},
		{"write", required_argument, nullptr, 'w'},
		{"count", required_argument, nullptr, 'c'},
		{"snaplen", required_argument, nullptr, 's'},
		{"buffer-size", required_argument, nullptr, 'B'},
		{"json", no_argument, nullptr, opt_json},
		{"flows", no_argument, nullptr, opt_flows},
		{"qpn", required_argument, nullptr, opt_qpn},
		{"opcode", required_argument, nullptr, opt_opcode},
		{"tt", no_argument, nullptr, opt_tt},
		{"print", no_argument, nullptr, opt_print},
		{"help", no_argument, nullptr, 'h'},
		{nullptr, 0, nullptr, 0},
	};
	int c;
	long long n;
	while ((c = getopt_long(argc, argv, "+d:i:r:w:c:s:B:h", longopts, nullptr)) != -1) {
		switch (c) {
		case 'd':
			o.device = optarg;
			break;
		case 'i':
			o.iface = optarg;
			break;
		case 'r':
			o.read_file = optarg;
			break;
		case 'w':
			o.write_file = optarg;
			break;
		case 'c':
			if (!parse_number(optarg, &o.count) || o.count == 0) {
				fprintf(stderr, "sroce-dump: bad count %s\n", optarg);
				return 2;
			}
			break;
		case 's':
			if (!parse_number(optarg, &n) || n < 1 || n > 262144) {
				fprintf(stderr, "sroce-dump: bad snaplen %s\n", optarg);
				return 2;
			}
			o.snaplen = int(n);
			break;
		case 'B':
			if (!parse_number(optarg, &o.buffer_kib) || o.buffer_kib < 64 || o.buffer_kib > 1048576) {
				fprintf(stderr, "sroce-dump: bad buffer size %s (KiB, 64 to 1048576)\n", optarg);
				return 2;
			}
			break;
		case opt_json:
			o.json = true;
			break;
		case opt_flows:
			o.flows = true;
			break;
		case opt_qpn:
			if (!parse_number(optarg, &o.qpn) || o.qpn > 0xffffff) {
				fprintf(stderr, "sroce-dump: bad QPN %s\n", optarg);
				return 2;
			}
			break;
		case opt_opcode:
			o.opcode = sroce::ib::opcode_by_name(optarg);
			if (o.opcode < 0 && parse_number(optarg, &n) && n < 256)
				o.opcode = int(n);
			if (o.opcode < 0) {
				fprintf(stderr, "sroce-dump: unknown opcode %s (names as RC_SEND_ONLY)\n", optarg);
				return 2;
			}
			break;
		case opt_tt:
			o.epoch = true;
			break;
		case opt_print:
			o.print = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	for (int i = optind; i < argc; i++)
		o.filter += (o.filter.empty() ? "" : " ") + std::string(argv[i]);
	if (!o.device.empty() + !o.iface.empty() + !o.read_file.empty() != 1) {
		fprintf(stderr, "sroce-dump: give exactly one of -d, -i, -r\n");
		usage(stderr);
		return 2;
	}

	char errbuf[PCAP_ERRBUF_SIZE] = "";
	if (!o.device.empty()) {
		RdmaNetdev nd;
		std::string err;
		if (resolve_rdma_netdev(o.device, &nd, &err) < 0) {
			fprintf(stderr, "sroce-dump: %s\n", err.c_str());
			return 1;
		}
		fprintf(stderr, "sroce-dump: %s is on %s%s%s\n", o.device.c_str(), nd.netdev.c_str(),
			nd.netns.empty() ? "" : " in namespace ", nd.netns.c_str());
		o.iface = nd.netdev;
	}
	if (!o.read_file.empty())
		g_pcap = pcap_open_offline(o.read_file.c_str(), errbuf);
	else
		g_pcap = open_live(o.iface, o.snaplen, o.buffer_kib, errbuf);
	if (!g_pcap) {
		fprintf(stderr, "sroce-dump: %s\n", errbuf);
		return 1;
	}
	st.linktype = pcap_datalink(g_pcap);

	std::string expr = capture_filter(st.linktype, o.filter);
	struct bpf_program prog;
	if (pcap_compile(g_pcap, &prog, expr.c_str(), 1, PCAP_NETMASK_UNKNOWN) < 0 ||
	    pcap_setfilter(g_pcap, &prog) < 0) {
		fprintf(stderr, "sroce-dump: filter \"%s\": %s\n", expr.c_str(), pcap_geterr(g_pcap));
		return 2;
	}
	pcap_freecode(&prog);
	if (st.linktype == DLT_LINUX_SLL && !o.filter.empty()) {
		// For untagged_passes; the capture filter, which holds the
		// same expression, compiled.
		std::string untagged = "udp dst port 4791 and (" + o.filter + ")";
		if (pcap_compile(g_pcap, &st.untagged, untagged.c_str(), 1, PCAP_NETMASK_UNKNOWN) < 0) {
			fprintf(stderr, "sroce-dump: filter \"%s\": %s\n", untagged.c_str(), pcap_geterr(g_pcap));
			return 2;
		}
		st.have_untagged = true;
	}

	if (!o.write_file.empty()) {
		st.dumper = pcap_dump_open(g_pcap, o.write_file.c_str());
		if (!st.dumper) {
			fprintf(stderr, "sroce-dump: %s\n", pcap_geterr(g_pcap));
			return 1;
		}
	}
	if (o.read_file.empty())
		setvbuf(stdout, nullptr, _IOLBF, 0);
	struct sigaction sa = {};
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, nullptr);
	sigaction(SIGTERM, &sa, nullptr);

	int rc = pcap_loop(g_pcap, -1, on_packet, reinterpret_cast<u_char *>(&st));
	int status = 0;
	if (rc == PCAP_ERROR) {
		fprintf(stderr, "sroce-dump: %s\n", pcap_geterr(g_pcap));
		status = 1;
	}
	struct pcap_stat ps = {};
	bool live = o.read_file.empty();
	if (live && g_stopped && rc == PCAP_ERROR_BREAK) {
		// Stopped by a signal: what the ring already holds was captured,
		// so it is read too rather than lost.
		pcap_setnonblock(g_pcap, 1, errbuf);
		while (pcap_dispatch(g_pcap, -1, on_packet, reinterpret_cast<u_char *>(&st)) > 0)
			;
	}
	if (live && pcap_stats(g_pcap, &ps) == 0) {
		fprintf(stderr, "sroce-dump: %u packets received by filter, %u dropped by kernel\n", ps.ps_recv,
			ps.ps_drop);
		st.flows.set_dropped(ps.ps_drop);
	}
	if (st.dumper) {
		if (write_failed(pcap_dump_file(st.dumper), o.write_file.c_str()))
			status = 1;
		pcap_dump_close(st.dumper);
	}
	if (o.flows)
		fputs(st.flows.report(o.json).c_str(), stdout);
	if (write_failed(stdout, "standard output"))
		status = 1;
	if (st.have_untagged)
		pcap_freecode(&st.untagged);
	pcap_close(g_pcap);
	return status;
}

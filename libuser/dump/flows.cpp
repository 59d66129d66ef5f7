#include "flows.h"

#include <arpa/inet.h>

#include <cinttypes>
#include <cstdio>

namespace sroce_dump {

using namespace sroce::ib;

namespace {

std::string addr(const IpUdp &a, bool src) {
	const uint8_t *x = src ? a.src : a.dst;
	char buf[INET6_ADDRSTRLEN];
	inet_ntop(a.ip_version == 4 ? AF_INET : AF_INET6, a.ip_version == 4 ? x + 12 : x, buf,
		  sizeof(buf));
	return buf;
}

// Signed distance a - b in 24-bit PSN space.
int32_t psn_diff(uint32_t a, uint32_t b) {
	return int32_t((a - b) << 8) >> 8;
}

const char *nak_keys[5] = {"psn_seq_err", "invalid_request", "remote_access", "remote_op",
			   "invalid_rd_request"};

} // namespace

void Flows::add(const Decoded &d) {
	// Only packets whose BTH parsed belong to a QP.
	if (!d.ip_ok || !d.ib_ok)
		return;
	const Bth &b = d.pkt.hdr.bth;
	FlowStats &f = flows_[Key(addr(d.net.addr, true), addr(d.net.addr, false), b.dest_qpn)];
	f.packets++;
	f.bytes += d.wirelen;
	if (d.icrc == IcrcVerdict::bad)
		f.icrc_errors++;
	u32 fl = d.pkt.flags;
	if (fl & op_aeth) {
		const Aeth &a = d.pkt.hdr.aeth;
		if (a.is_ack())
			f.acks++;
		else if (a.is_rnr_nak())
			f.rnr_naks++;
		else if (a.is_nak() && a.value() < 5)
			f.naks[a.value()]++;
		else
			f.naks_other++;
	}
	// ACKs echo request PSNs; the sequence is the requests' (and the READ
	// responses', which number their own packets).
	bool sequenced = (fl & op_request) || ((fl & op_response) && (fl & op_read));
	if (!sequenced)
		return;
	// A READ request consumes one PSN per response packet: up to
	// ceil(length / 256) at the smallest MTU. A jump within that is no gap.
	uint32_t allowance = f.read_psns;
	f.read_psns = 0;
	if ((fl & op_request) && (fl & op_read) && d.pkt.hdr.reth.length)
		f.read_psns = (d.pkt.hdr.reth.length - 1) / 256;
	if (!f.have_psn) {
		f.have_psn = true;
		f.first_psn = b.psn;
		f.next_psn = (b.psn + 1) & psn_mask;
		return;
	}
	int32_t dist = psn_diff(b.psn, f.next_psn);
	if (dist > 0 && uint32_t(dist) <= allowance)
		dist = 0;
	if (dist == 0) {
		f.next_psn = (b.psn + 1) & psn_mask;
	} else if (dist > 0) {
		f.gaps++;
		f.missing_psns += uint64_t(dist);
		f.next_psn = (b.psn + 1) & psn_mask;
	} else {
		f.retransmitted++;
	}
}

const FlowStats *Flows::find(const std::string &src, const std::string &dst, uint32_t qpn) const {
	auto it = flows_.find(Key(src, dst, qpn));
	return it == flows_.end() ? nullptr : &it->second;
}

std::string Flows::report(bool json) const {
	std::string out;
	char buf[1024];
	for (const auto &[k, f] : flows_) {
		const auto &[src, dst, qpn] = k;
		uint32_t last = (f.next_psn - 1) & psn_mask;
		if (json) {
			std::string naks;
			for (int i = 0; i < 5; i++) {
				snprintf(buf, sizeof(buf), "%s\"%s\":%" PRIu64, i ? "," : "", nak_keys[i],
					 f.naks[i]);
				naks += buf;
			}
			snprintf(buf, sizeof(buf), ",\"other\":%" PRIu64, f.naks_other);
			naks += buf;
			std::string psn = f.have_psn ? "{\"first\":" + std::to_string(f.first_psn) +
							       ",\"last\":" + std::to_string(last) + "}"
						     : "null";
			snprintf(buf, sizeof(buf),
				 "{\"flow\":true,\"src\":\"%s\",\"dst\":\"%s\",\"dest_qpn\":%u,"
				 "\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"psn\":%s,"
				 "\"gaps\":%" PRIu64 ",\"missing_psns\":%" PRIu64
				 ",\"retransmitted\":%" PRIu64 ",\"acks\":%" PRIu64
				 ",\"rnr_naks\":%" PRIu64 ",\"naks\":{%s},\"icrc_errors\":%" PRIu64 "}\n",
				 src.c_str(), dst.c_str(), qpn, f.packets, f.bytes, psn.c_str(), f.gaps,
				 f.missing_psns, f.retransmitted, f.acks, f.rnr_naks, naks.c_str(),
				 f.icrc_errors);
		} else {
			std::string psn = f.have_psn ? std::to_string(f.first_psn) + ".." + std::to_string(last)
						     : "-";
			uint64_t nak_total = f.naks_other;
			for (uint64_t n : f.naks)
				nak_total += n;
			snprintf(buf, sizeof(buf),
				 "flow %s > %s qp 0x%06x: packets %" PRIu64 " bytes %" PRIu64
				 " psn %s gaps %" PRIu64 " (missing %" PRIu64 ") retransmitted %" PRIu64
				 " acks %" PRIu64 " rnr_naks %" PRIu64 " naks %" PRIu64
				 " (seq %" PRIu64 " inv_req %" PRIu64 " access %" PRIu64 " op %" PRIu64
				 " inv_rd %" PRIu64 " other %" PRIu64 ") icrc_errors %" PRIu64 "\n",
				 src.c_str(), dst.c_str(), qpn, f.packets, f.bytes, psn.c_str(), f.gaps,
				 f.missing_psns, f.retransmitted, f.acks, f.rnr_naks, nak_total, f.naks[0],
				 f.naks[1], f.naks[2], f.naks[3], f.naks[4], f.naks_other, f.icrc_errors);
		}
		out += buf;
	}
	if (have_dropped_) {
		snprintf(buf, sizeof(buf),
			 json ? "{\"capture\":true,\"dropped_by_kernel\":%" PRIu64 "}\n"
			      : "capture: %" PRIu64 " packets dropped by kernel\n",
			 dropped_);
		out += buf;
	}
	return out;
}

} // namespace sroce_dump

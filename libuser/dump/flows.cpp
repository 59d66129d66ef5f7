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

// The first PSN of a sequence; next is one past the PSNs it consumes.
bool start(PsnSeq &s, uint32_t psn, uint32_t next) {
	if (s.have)
		return false;
	s.have = true;
	s.first = s.last = psn;
	s.next = next;
	return true;
}

void add_request(FlowStats &f, u32 fl, const Headers &h) {
	const Bth &b = h.bth;
	PsnSeq &s = f.requests;
	// A READ request consumes one PSN per response packet: up to
	// ceil(length / 256) at the smallest MTU. A jump within that is no gap.
	uint32_t allowance = f.read_psns;
	f.read_psns = 0;
	if ((fl & op_read) && h.reth.length)
		f.read_psns = (h.reth.length - 1) / 256;
	if (start(s, b.psn, (b.psn + 1) & psn_mask))
		return;
	int32_t dist = psn_diff(b.psn, s.next);
	if (dist > 0 && uint32_t(dist) <= allowance)
		dist = 0;
	if (dist < 0) {
		f.retransmitted++;
		return;
	}
	if (dist > 0) {
		f.gaps++;
		f.missing_psns += uint64_t(dist);
	}
	s.last = b.psn;
	s.next = (b.psn + 1) & psn_mask;
}

// The responder's sequence. An ACK or atomic ACK echoes the PSN of the
// request it answers, and may answer several (coalesced) or one again (a
// duplicate request): ACKs are neither gaps nor retransmissions. A NAK
// names the PSN the responder expects, which it does not consume. A READ
// response may follow requests that got no response packet of their own,
// but its MIDDLE and LAST packets follow the one before; a READ response
// behind what was already answered is a retransmission.
void add_response(FlowStats &f, u32 fl, const Headers &h) {
	const Bth &b = h.bth;
	PsnSeq &s = f.responses;
	bool read = fl & op_read;
	bool nak = !read && (fl & op_aeth) && !h.aeth.is_ack();
	uint32_t next = nak ? b.psn : (b.psn + 1) & psn_mask;
	if (start(s, b.psn, next))
		return;
	int32_t dist = psn_diff(b.psn, s.next);
	if (psn_diff(b.psn, s.last) > 0)
		s.last = b.psn;
	if (read && dist < 0) {
		f.retransmitted++;
		return;
	}
	if (read && (fl & (op_middle | op_last)) && dist > 0) {
		f.gaps++;
		f.missing_psns += uint64_t(dist);
	}
	if (psn_diff(next, s.next) > 0)
		s.next = next;
}

} // namespace

void Flows::add(const Decoded &d) {
	// Only packets whose BTH parsed belong to a QP.
	if (!d.ip_ok || !d.ib_ok)
		return;
	const Bth &b = d.pkt.hdr.bth;
	u32 fl = d.pkt.flags;
	// UD: each sender's QP numbers its own PSNs.
	int64_t src_qp = (fl & op_deth) ? int64_t(d.pkt.hdr.deth.src_qp) : -1;
	FlowStats &f = flows_[Key(addr(d.net.addr, true), addr(d.net.addr, false), b.dest_qpn, src_qp)];
	f.packets++;
	f.bytes += d.wirelen;
	if (d.icrc == IcrcVerdict::bad)
		f.icrc_errors++;
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
	if (fl & op_request)
		add_request(f, fl, d.pkt.hdr);
	else if (fl & op_response)
		add_response(f, fl, d.pkt.hdr);
}

const FlowStats *Flows::find(const std::string &src, const std::string &dst, uint32_t qpn,
			     int64_t src_qp) const {
	auto it = flows_.find(Key(src, dst, qpn, src_qp));
	return it == flows_.end() ? nullptr : &it->second;
}

std::string Flows::report(bool json) const {
	std::string out;
	char buf[1024];
	for (const auto &[k, f] : flows_) {
		const auto &[src, dst, qpn, src_qp] = k;
		// The requests' range; a flow of responses only shows theirs.
		const PsnSeq &seq = f.requests.have ? f.requests : f.responses;
		std::string sqp;
		if (src_qp >= 0) {
			snprintf(buf, sizeof(buf), json ? ",\"src_qp\":%u" : " src_qp 0x%06x", uint32_t(src_qp));
			sqp = buf;
		}
		if (json) {
			std::string naks;
			for (int i = 0; i < 5; i++) {
				snprintf(buf, sizeof(buf), "%s\"%s\":%" PRIu64, i ? "," : "", nak_keys[i],
					 f.naks[i]);
				naks += buf;
			}
			snprintf(buf, sizeof(buf), ",\"other\":%" PRIu64, f.naks_other);
			naks += buf;
			std::string psn = seq.have ? "{\"first\":" + std::to_string(seq.first) +
							     ",\"last\":" + std::to_string(seq.last) + "}"
						   : "null";
			snprintf(buf, sizeof(buf),
				 "{\"flow\":true,\"src\":\"%s\",\"dst\":\"%s\",\"dest_qpn\":%u%s,"
				 "\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"psn\":%s,"
				 "\"gaps\":%" PRIu64 ",\"missing_psns\":%" PRIu64
				 ",\"retransmitted\":%" PRIu64 ",\"acks\":%" PRIu64
				 ",\"rnr_naks\":%" PRIu64 ",\"naks\":{%s},\"icrc_errors\":%" PRIu64 "}\n",
				 src.c_str(), dst.c_str(), qpn, sqp.c_str(), f.packets, f.bytes, psn.c_str(),
				 f.gaps, f.missing_psns, f.retransmitted, f.acks, f.rnr_naks, naks.c_str(),
				 f.icrc_errors);
		} else {
			std::string psn = seq.have ? std::to_string(seq.first) + ".." + std::to_string(seq.last) : "-";
			uint64_t nak_total = f.naks_other;
			for (uint64_t n : f.naks)
				nak_total += n;
			snprintf(buf, sizeof(buf),
				 "flow %s > %s qp 0x%06x%s: packets %" PRIu64 " bytes %" PRIu64
				 " psn %s gaps %" PRIu64 " (missing %" PRIu64 ") retransmitted %" PRIu64
				 " acks %" PRIu64 " rnr_naks %" PRIu64 " naks %" PRIu64
				 " (seq %" PRIu64 " inv_req %" PRIu64 " access %" PRIu64 " op %" PRIu64
				 " inv_rd %" PRIu64 " other %" PRIu64 ") icrc_errors %" PRIu64 "\n",
				 src.c_str(), dst.c_str(), qpn, sqp.c_str(), f.packets, f.bytes, psn.c_str(), f.gaps,
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

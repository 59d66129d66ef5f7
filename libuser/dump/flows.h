// sroce-dump --flows: per-QP counters. A flow is the packets sent to one
// destination QP between one pair of addresses (and, for UD, from one
// source QP); its requests and its responses each carry a PSN sequence,
// which is checked for gaps and retransmissions.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "decode.h"

namespace sroce_dump {

// One PSN sequence (24-bit): a requester's requests, or a responder's
// READ responses, ACKs and atomic ACKs, numbered in the requests' space.
struct PsnSeq {
	bool have = false;
	uint32_t first = 0;
	uint32_t last = 0; // the highest PSN seen
	uint32_t next = 0; // one past the highest PSN consumed
};

struct FlowStats {
	uint64_t packets = 0;
	uint64_t bytes = 0; // wire length of the frames
	PsnSeq requests, responses;
	uint32_t read_psns = 0; // extra PSNs the last READ request may consume
	// Of both sequences:
	uint64_t gaps = 0;        // forward jumps in the PSN sequence
	uint64_t missing_psns = 0; // PSNs skipped by those jumps
	uint64_t retransmitted = 0; // PSNs seen again (or going backwards)
	uint64_t acks = 0;
	uint64_t rnr_naks = 0;
	uint64_t naks[5] = {}; // by NakCode: seq, invalid req, access, op, invalid RD
	uint64_t naks_other = 0;
	uint64_t icrc_errors = 0;
};

class Flows {
public:
	void add(const Decoded &d);
	// Text lines, or JSON objects with "flow": true, in key order.
	std::string report(bool json) const;
	// src_qp: the DETH's source QP, -1 for packets without one.
	const FlowStats *find(const std::string &src, const std::string &dst, uint32_t qpn,
			      int64_t src_qp = -1) const;
	// A live capture's kernel drops (pcap_stats): the report then ends with
	// them, since a flow missing packets the kernel dropped shows false gaps.
	void set_dropped(uint64_t n) {
		dropped_ = n;
		have_dropped_ = true;
	}

private:
	uint64_t dropped_ = 0;
	bool have_dropped_ = false;
	using Key = std::tuple<std::string, std::string, uint32_t, int64_t>;
	std::map<Key, FlowStats> flows_;
};

} // namespace sroce_dump

// sroce-dump's decoder: one captured frame to the fields of its RoCEv2
// packet, using the kernel core's own codec (kmod/core packet/icrc), plus the
// text and JSON renderings. No pcap here, so the fuzzer drives it directly.
#pragma once
#include <sys/time.h>

#include <cstdint>
#include <string>
#include <vector>

#include "icrc.h"
#include "opcode.h"
#include "packet.h"

namespace sroce_dump {

// ok/bad: checked. unverifiable: the capture was cut (snaplen) before the
// ICRC. none: no ICRC to check (IP/UDP malformed, or the UDP payload is
// shorter than BTH + ICRC).
enum class IcrcVerdict { none, ok, bad, unverifiable };
const char *icrc_verdict_name(IcrcVerdict v); // "-", "ok", "BAD", "unverifiable"

struct Decoded {
	bool ip = false;         // an IPv4/IPv6 frame (else nothing else is set)
	bool ip_ok = false;      // IP + UDP parsed
	bool ib_ok = false;      // BTH and extension headers parsed
	std::string error;       // why it is malformed; empty when not
	sroce::ib::IpUdpInfo net;
	sroce::ib::PacketInfo pkt;
	uint8_t opcode = 0;      // valid when the BTH was present
	bool have_bth = false;
	IcrcVerdict icrc = IcrcVerdict::none;
	uint32_t icrc_wire = 0;  // IBTA numeric form, when verified
	uint32_t icrc_calc = 0;
	uint32_t caplen = 0, wirelen = 0;
	uint32_t ip_offset = 0; // link-layer header length
	// Segment train_seg (from 1) of train_len when the frame was a packet
	// train (split_train); 0 otherwise.
	uint32_t train_seg = 0, train_len = 0;

	bool malformed() const { return !error.empty(); }
};

// linktype is a pcap DLT_/LINKTYPE_ value: Ethernet and Linux cooked v1
// (each with up to two VLAN tags), Linux cooked v2, raw IP. Reads only
// [data, data + caplen).
Decoded decode_frame(int linktype, const uint8_t *data, uint32_t caplen, uint32_t wirelen);

// A packet train (kmod/linux/train.c): one UDP datagram carrying n
// equal-size RoCE packets (the last may be shorter), which a capture on
// veth sees before UDP GSO segments it. Returns the frames segmentation
// makes of it, in order: the link-layer header, the IP header with the
// IPv4 ID + k and the lengths of segment k (checksums recomputed for IPv4,
// UDP's zero), and the packet. Empty when the frame is not a whole train:
// cut by the snaplen, its ICRC right as one packet, or no split point
// where the next BTH continues the first (same QP and P_Key, PSN + 1) and
// the first segment's ICRC checks.
std::vector<std::vector<uint8_t>> split_train(int linktype, const uint8_t *data, uint32_t caplen,
					      uint32_t wirelen);

struct FormatOptions {
	bool epoch_time = false; // seconds.usec instead of local time of day
};
std::string format_text(const Decoded &d, const timeval &ts, const FormatOptions &o = {});
std::string format_json(const Decoded &d, const timeval &ts);

} // namespace sroce_dump

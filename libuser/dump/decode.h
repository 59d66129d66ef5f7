// sroce-dump's decoder: one captured frame to the fields of its RoCEv2
// packet, using the kernel core's own codec (kmod/core packet/icrc), plus the
// text and JSON renderings. No pcap here, so the fuzzer drives it directly.
#pragma once
#include <sys/time.h>

#include <cstdint>
#include <string>

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

	bool malformed() const { return !error.empty(); }
};

// linktype is a pcap DLT_/LINKTYPE_ value: Ethernet (with up to two VLAN
// tags), Linux cooked v1/v2, raw IP. Reads only [data, data + caplen).
Decoded decode_frame(int linktype, const uint8_t *data, uint32_t caplen, uint32_t wirelen);

struct FormatOptions {
	bool epoch_time = false; // seconds.usec instead of local time of day
};
std::string format_text(const Decoded &d, const timeval &ts, const FormatOptions &o = {});
std::string format_json(const Decoded &d, const timeval &ts);

} // namespace sroce_dump

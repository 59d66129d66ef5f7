// libFuzzer target: arbitrary frames through the decoder, both renderings
// and the flow table. Input: [link selector][extra wire bytes][frame...].
#include <cstddef>
#include <cstdint>

#include "decode.h"
#include "flows.h"

using namespace sroce_dump;

// A train's segments are frames of their own, each a whole packet.
static void check_train(int link, const uint8_t *frame, uint32_t caplen, uint32_t wirelen) {
	for (const auto &f : split_train(link, frame, caplen, wirelen)) {
		Decoded s = decode_frame(link, f.data(), uint32_t(f.size()), uint32_t(f.size()));
		if (s.icrc == IcrcVerdict::unverifiable || !s.ip_ok)
			__builtin_trap();
	}
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	if (size < 2)
		return 0;
	static const int links[] = {1, 12, 113, 276, 228, 229, 101, 0};
	int link = links[data[0] & 7];
	uint32_t extra = data[1];
	const uint8_t *frame = data + 2;
	uint32_t caplen = uint32_t(size - 2);
	// An exact-size heap copy so that ASan catches any read past caplen.
	uint8_t *copy = new uint8_t[caplen ? caplen : 1];
	for (uint32_t i = 0; i < caplen; i++)
		copy[i] = frame[i];
	Decoded d = decode_frame(link, copy, caplen, caplen + extra);
	timeval ts = {1, 2};
	std::string t = format_text(d, ts);
	std::string j = format_json(d, ts);
	// Invariants: a verdict needs the whole IP packet captured (link padding
	// may be cut); a parsed IB part fills the UDP payload exactly.
	bool verdict = d.icrc == IcrcVerdict::ok || d.icrc == IcrcVerdict::bad;
	if (verdict && !(d.ip_ok && caplen - d.ip_offset >= d.net.ip_len))
		__builtin_trap();
	if (d.icrc == IcrcVerdict::unverifiable && caplen - d.ip_offset >= d.net.ip_len)
		__builtin_trap();
	if (d.ib_ok && d.pkt.payload_offset + d.pkt.payload_len + d.pkt.pad + 4 != d.net.ib_len)
		__builtin_trap();
	if (t.empty() || j.empty() || j.front() != '{' || j.back() != '}')
		__builtin_trap();
	// split_train refuses a frame cut by the snaplen, as most inputs say
	// theirs was (extra): the frame whole too, or a split is rarely reached.
	check_train(link, copy, caplen, caplen + extra);
	if (extra)
		check_train(link, copy, caplen, caplen);
	static Flows flows;
	flows.add(d);
	delete[] copy;
	return 0;
}

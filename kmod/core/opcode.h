// The IBTA transport opcodes as data (rxe_opcode.c style): one entry per
// 8-bit BTH opcode with its name, transport, flags and the length of the
// headers from BTH through the last extension header. Reserved opcodes are
// entries without op_valid, so a lookup never fails and never reads past.
#pragma once
#include "ktl/types.h"

namespace sroce::ib {

enum class Transport : u8 { rc, uc, rd, ud, cnp, xrc, none };

// Header sizes on the wire, in bytes.
namespace len {
constexpr u32 bth = 12;
constexpr u32 rdeth = 4;
constexpr u32 deth = 8;
constexpr u32 xrceth = 4;
constexpr u32 feth = 4;
constexpr u32 reth = 16;
constexpr u32 atomic_eth = 28;
constexpr u32 aeth = 4;
constexpr u32 atomic_ack_eth = 8;
constexpr u32 immdt = 4;
constexpr u32 ieth = 4;
constexpr u32 icrc = 4;
constexpr u32 max_headers = 52; // longest BTH..extension headers (RD atomic request)
// The largest payload of any packet: the largest IB MTU (IBTA 9.7.5.1.1;
// a UD message is one packet, IBTA 10.2.3). Only IP fragments or jumbo
// frames reassembled before the UDP socket carry more.
constexpr u32 max_payload = 4096;
} // namespace len

enum OpFlag : u32 {
	op_valid = 1u << 0,
	op_request = 1u << 1,
	op_response = 1u << 2,
	// Position in a message. ONLY sets op_first and op_last too, so that
	// `flags & op_first` means "starts a message".
	op_first = 1u << 3,
	op_middle = 1u << 4,
	op_last = 1u << 5,
	op_only = 1u << 6,
	op_payload = 1u << 7,
	// Extension headers, in their wire order after BTH.
	op_rdeth = 1u << 8,
	op_deth = 1u << 9,
	op_xrceth = 1u << 10,
	op_reth = 1u << 11,
	op_atomic_eth = 1u << 12,
	op_aeth = 1u << 13,
	op_atomic_ack_eth = 1u << 14,
	op_immdt = 1u << 15,
	op_ieth = 1u << 16,
	// Operation kinds. Read responses have op_read, atomic ACKs op_atomic;
	// a plain ACKNOWLEDGE has op_ack only.
	op_send = 1u << 17,
	op_write = 1u << 18,
	op_read = 1u << 19,
	op_atomic = 1u << 20,
	op_ack = 1u << 21,
	op_cnp = 1u << 22,
	op_resync = 1u << 23,
	op_atomic_write = 1u << 24, // IBA 1.5: RETH + 8 bytes, answered like a READ
	op_feth = 1u << 25,	    // IBA 1.5 FLUSH extended transport header
	op_flush = 1u << 26,	    // IBA 1.5: FETH + RETH, no payload, answered like a READ
};

// Requests a responder answers from a replay slot (IBTA 9.7.5.1.3), not
// with an ACK: READ, ATOMIC, ATOMIC WRITE and FLUSH.
constexpr u32 op_slot_request = op_read | op_atomic | op_atomic_write | op_flush;

constexpr u32 op_ext_mask = op_rdeth | op_deth | op_xrceth | op_feth | op_reth | op_atomic_eth | op_aeth |
			    op_atomic_ack_eth | op_immdt | op_ieth;

struct OpcodeInfo {
	const char *name; // "RC_SEND_FIRST"; nullptr when invalid
	u32 flags;
	Transport transport;
	u8 length; // BTH + extension headers, bytes (0 when invalid)
};

// Opcodes by name: transport base + operation.
namespace op {
enum : u8 {
	rc = 0x00,
	uc = 0x20,
	rd = 0x40,
	ud = 0x60,
	cnp_base = 0x80,
	xrc = 0xa0,

	send_first = 0x00,
	send_middle = 0x01,
	send_last = 0x02,
	send_last_imm = 0x03,
	send_only = 0x04,
	send_only_imm = 0x05,
	write_first = 0x06,
	write_middle = 0x07,
	write_last = 0x08,
	write_last_imm = 0x09,
	write_only = 0x0a,
	write_only_imm = 0x0b,
	read_request = 0x0c,
	read_response_first = 0x0d,
	read_response_middle = 0x0e,
	read_response_last = 0x0f,
	read_response_only = 0x10,
	acknowledge = 0x11,
	atomic_acknowledge = 0x12,
	compare_swap = 0x13,
	fetch_add = 0x14,
	resync = 0x15, // RD only
	send_last_inv = 0x16,
	send_only_inv = 0x17,
	flush = 0x1c,	     // IBA 1.5, RC and XRC
	atomic_write = 0x1d, // IBA 1.5, RC and XRC

	cnp = 0x81,
};
} // namespace op

// Never fails: reserved opcodes give an entry whose flags lack op_valid.
const OpcodeInfo &opcode_info(u8 opcode);

inline bool opcode_valid(u8 opcode) { return opcode_info(opcode).flags & op_valid; }

// Name for printing: the table name, or "RESERVED" for an invalid opcode.
const char *opcode_name(u8 opcode);

// Offset from the start of BTH of one extension header (a single op_* header
// flag) for this opcode; 0 when the opcode has no such header.
u32 ext_offset(u8 opcode, u32 header_flag);

// Opcode by its table name (exact, case-sensitive); -1 when unknown.
int opcode_by_name(const char *name);

const char *transport_name(Transport t);

} // namespace sroce::ib

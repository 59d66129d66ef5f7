// The IBTA opcode table and its static_asserts (opcode.h).
#include "opcode.h"

namespace sroce::ib {
namespace {

struct Def {
	u8 code; // operation within its transport (0x00..0x17, 0x1c, 0x1d)
	const char *name;
	u32 flags;
};

constexpr u32 req = op_valid | op_request;
constexpr u32 resp = op_valid | op_response;
constexpr u32 only = op_first | op_last | op_only;

// The operations common to RC, UC, RD and XRC; the transport adds its own
// headers (RDETH/DETH/XRCETH) and drops what it does not support.
#define SROCE_IB_OPS(P)                                                                            \
	Def{op::send_first, P "SEND_FIRST", req | op_first | op_payload | op_send},                \
	Def{op::send_middle, P "SEND_MIDDLE", req | op_middle | op_payload | op_send},             \
	Def{op::send_last, P "SEND_LAST", req | op_last | op_payload | op_send},                   \
	Def{op::send_last_imm, P "SEND_LAST_WITH_IMMEDIATE",                                       \
	    req | op_last | op_payload | op_send | op_immdt},                                      \
	Def{op::send_only, P "SEND_ONLY", req | only | op_payload | op_send},                      \
	Def{op::send_only_imm, P "SEND_ONLY_WITH_IMMEDIATE",                                       \
	    req | only | op_payload | op_send | op_immdt},                                         \
	Def{op::write_first, P "RDMA_WRITE_FIRST", req | op_first | op_payload | op_write | op_reth}, \
	Def{op::write_middle, P "RDMA_WRITE_MIDDLE", req | op_middle | op_payload | op_write},     \
	Def{op::write_last, P "RDMA_WRITE_LAST", req | op_last | op_payload | op_write},           \
	Def{op::write_last_imm, P "RDMA_WRITE_LAST_WITH_IMMEDIATE",                                \
	    req | op_last | op_payload | op_write | op_immdt},                                     \
	Def{op::write_only, P "RDMA_WRITE_ONLY", req | only | op_payload | op_write | op_reth},    \
	Def{op::write_only_imm, P "RDMA_WRITE_ONLY_WITH_IMMEDIATE",                                \
	    req | only | op_payload | op_write | op_reth | op_immdt},                              \
	Def{op::read_request, P "RDMA_READ_REQUEST", req | only | op_read | op_reth},              \
	Def{op::read_response_first, P "RDMA_READ_RESPONSE_FIRST",                                 \
	    resp | op_first | op_payload | op_read | op_aeth},                                     \
	Def{op::read_response_middle, P "RDMA_READ_RESPONSE_MIDDLE",                               \
	    resp | op_middle | op_payload | op_read},                                              \
	Def{op::read_response_last, P "RDMA_READ_RESPONSE_LAST",                                   \
	    resp | op_last | op_payload | op_read | op_aeth},                                      \
	Def{op::read_response_only, P "RDMA_READ_RESPONSE_ONLY",                                   \
	    resp | only | op_payload | op_read | op_aeth},                                         \
	Def{op::acknowledge, P "ACKNOWLEDGE", resp | only | op_ack | op_aeth},                     \
	Def{op::atomic_acknowledge, P "ATOMIC_ACKNOWLEDGE",                                        \
	    resp | only | op_atomic | op_aeth | op_atomic_ack_eth},                                \
	Def{op::compare_swap, P "COMPARE_SWAP", req | only | op_atomic | op_atomic_eth},           \
	Def{op::fetch_add, P "FETCH_ADD", req | only | op_atomic | op_atomic_eth},                 \
	Def{op::resync, P "RESYNC", req | only | op_resync},                                       \
	Def{op::send_last_inv, P "SEND_LAST_WITH_INVALIDATE",                                      \
	    req | op_last | op_payload | op_send | op_ieth},                                       \
	Def{op::send_only_inv, P "SEND_ONLY_WITH_INVALIDATE",                                      \
	    req | only | op_payload | op_send | op_ieth},                                          \
	Def{op::flush, P "FLUSH", req | only | op_feth | op_reth | op_flush},                        \
	Def{op::atomic_write, P "ATOMIC_WRITE", req | only | op_payload | op_reth | op_atomic_write}

constexpr Def rc_defs[] = {SROCE_IB_OPS("RC_")};
constexpr Def uc_defs[] = {SROCE_IB_OPS("UC_")};
constexpr Def rd_defs[] = {SROCE_IB_OPS("RD_")};
constexpr Def ud_defs[] = {SROCE_IB_OPS("UD_")};
constexpr Def xrc_defs[] = {SROCE_IB_OPS("XRC_")};
#undef SROCE_IB_OPS

// Which operations each transport has (IBTA 9.2, table 35; XRC 9.2 of annex A14).
constexpr bool supports(Transport t, u8 code) {
	switch (t) {
	case Transport::rc:
	case Transport::xrc:
		return code != op::resync;
	case Transport::uc:
		return code <= op::write_only_imm;
	case Transport::rd:
		return code <= op::resync;
	case Transport::ud:
		return code == op::send_only || code == op::send_only_imm;
	default:
		return false;
	}
}

// Transport-specific headers: RD carries RDETH on every packet and DETH on
// requests; UD carries DETH; XRC requests carry XRCETH.
constexpr u32 transport_headers(Transport t, u32 flags) {
	switch (t) {
	case Transport::rd:
		return u32(op_rdeth) | (flags & op_request ? u32(op_deth) : 0u);
	case Transport::ud:
		return op_deth;
	case Transport::xrc:
		return flags & op_request ? u32(op_xrceth) : 0u;
	default:
		return 0;
	}
}

// Extension headers in wire order with their sizes.
struct ExtLen {
	u32 flag;
	u32 bytes;
};
constexpr ExtLen ext_order[] = {
	{op_rdeth, len::rdeth},	    {op_deth, len::deth},	{op_xrceth, len::xrceth},
	{op_feth, len::feth},	    {op_reth, len::reth},	    {op_atomic_eth, len::atomic_eth}, {op_aeth, len::aeth},
	{op_atomic_ack_eth, len::atomic_ack_eth}, {op_immdt, len::immdt}, {op_ieth, len::ieth},
};

constexpr u32 headers_length(u32 flags) {
	u32 n = len::bth;
	for (const ExtLen &e : ext_order)
		if (flags & e.flag)
			n += e.bytes;
	return n;
}

// The CNP carries 16 reserved bytes after BTH (RoCEv2 annex A17.9.3);
// they count as header so that a CNP has no payload.
constexpr u32 cnp_reserved = 16;

struct Table {
	OpcodeInfo e[256];
};

template <usize N> constexpr void add(Table &t, Transport tr, u8 base, const Def (&defs)[N]) {
	for (const Def &d : defs) {
		if (!supports(tr, d.code))
			continue;
		u32 flags = d.flags | transport_headers(tr, d.flags);
		t.e[base + d.code] = OpcodeInfo{d.name, flags, tr, u8(headers_length(flags))};
	}
}

constexpr Table build() {
	Table t{};
	for (OpcodeInfo &e : t.e)
		e = OpcodeInfo{nullptr, 0, Transport::none, 0};
	add(t, Transport::rc, op::rc, rc_defs);
	add(t, Transport::uc, op::uc, uc_defs);
	add(t, Transport::rd, op::rd, rd_defs);
	add(t, Transport::ud, op::ud, ud_defs);
	add(t, Transport::xrc, op::xrc, xrc_defs);
	t.e[op::cnp] = OpcodeInfo{"CNP", op_valid | op_cnp, Transport::cnp, u8(len::bth + cnp_reserved)};
	return t;
}

constexpr Table table = build();

static_assert(table.e[op::rc + op::send_first].length == 12);
static_assert(table.e[op::rd + op::compare_swap].length == 12 + 4 + 8 + 28);
static_assert(table.e[op::rd + op::atomic_acknowledge].length == 12 + 4 + 4 + 8);
static_assert(table.e[op::ud + op::send_only_imm].length == 12 + 8 + 4);
static_assert(table.e[op::xrc + op::write_only_imm].length == 12 + 4 + 16 + 4);
static_assert(table.e[op::xrc + op::acknowledge].length == 12 + 4);
static_assert(!(table.e[op::uc + op::read_request].flags & op_valid));
static_assert(!(table.e[op::rc + op::resync].flags & op_valid));
static_assert(table.e[op::cnp].length == 28);
// ATOMIC WRITE: RC and XRC only (IBA 1.5 table 35), BTH + RETH before its 8 bytes.
static_assert(table.e[op::rc + op::atomic_write].length == 12 + 16);
static_assert(table.e[op::xrc + op::atomic_write].length == 12 + 4 + 16);
static_assert(!(table.e[op::uc + op::atomic_write].flags & op_valid));
static_assert(!(table.e[op::rd + op::atomic_write].flags & op_valid));
// FLUSH: RC and XRC only (IBA 1.5 table 35), FETH before RETH, no payload.
static_assert(table.e[op::rc + op::flush].length == 12 + 4 + 16);
static_assert(table.e[op::xrc + op::flush].length == 12 + 4 + 4 + 16);
static_assert(!(table.e[op::rc + op::flush].flags & op_payload));
static_assert(!(table.e[op::uc + op::flush].flags & op_valid));
static_assert(!(table.e[op::rd + op::flush].flags & op_valid));
static_assert(!(table.e[op::rc + 0x1e].flags & op_valid));

bool str_eq(const char *a, const char *b) {
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

} // namespace

const OpcodeInfo &opcode_info(u8 opcode) { return table.e[opcode]; }

const char *opcode_name(u8 opcode) {
	const char *n = table.e[opcode].name;
	return n ? n : "RESERVED";
}

u32 ext_offset(u8 opcode, u32 header_flag) {
	u32 flags = table.e[opcode].flags;
	if (!(flags & op_valid) || !(flags & header_flag))
		return 0;
	u32 off = len::bth;
	for (const ExtLen &e : ext_order) {
		if (e.flag == header_flag)
			return off;
		if (flags & e.flag)
			off += e.bytes;
	}
	return 0;
}

int opcode_by_name(const char *name) {
	if (!name)
		return -1;
	for (int i = 0; i < 256; i++)
		if (table.e[i].name && str_eq(table.e[i].name, name))
			return i;
	return -1;
}

const char *transport_name(Transport t) {
	switch (t) {
	case Transport::rc:
		return "RC";
	case Transport::uc:
		return "UC";
	case Transport::rd:
		return "RD";
	case Transport::ud:
		return "UD";
	case Transport::cnp:
		return "CNP";
	case Transport::xrc:
		return "XRC";
	default:
		return "none";
	}
}

} // namespace sroce::ib

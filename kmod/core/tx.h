// Tx: one outgoing packet while it is built (tx.cpp). Qp::tx_begin
// allocates it and writes the headers; the caller copies the payload in at
// payload_off, or attaches it in place (Qp::tx_attach: zero-copy); then
// Qp::tx_finish writes the ICRC and hands it to the env, or Qp::tx_abort
// frees it.
#pragma once
#include "ktl/types.h"

struct sroce_env_pkt;

namespace sroce {

struct Tx {
	sroce_env_pkt *pkt = nullptr;
	u8 *data = nullptr;  // at the IP header
	u32 ib_off = 0;      // BTH offset
	u32 payload_off = 0; // payload offset from the IP header
	u32 len = 0;         // IP .. ICRC
	// Zero-copy: data holds the headers only; the payload is attached as
	// fragments, and the ICRC runs along.
	bool zero_copy = false;
	u32 payload = 0;  // bytes the headers announce
	u32 attached = 0; // of them, attached so far
	u32 crc = 0;      // the ICRC's state up to the last attached byte
};

} // namespace sroce

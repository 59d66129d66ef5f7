// MpRecv: multi-packet receive (seed 000, Documentation/mp-wr.md). A
// receive queue created with a buffer size and a packet alignment lends
// each receive WQE's buffer to many packets: every packet starts at the
// next alignment boundary of the current buffer and completes on its own
// with its offset. The buffer is released (CONSUMED) when it is exactly
// full, or, holding no new data, as a RECV_NOP when the next packet does
// not fit in what is left. Packets of different QPs share an SRQ's buffer.
//
// The kernel keeps its own offset per queue and copies each WQE out of the
// ring once: nothing the poster rewrites later moves a byte. A WQE whose
// SGEs do not add up to the buffer size completes in error.
//
// MpRecv is the state of one queue (a QP's own RQ or an SRQ) under its
// owner's lock; place() does one packet from reservation to completion
// under that lock, so that a buffer's CONSUMED completion is its last.
#pragma once
#include "abi.h"
#include "ib_enums.h"
#include "recv_queue.h"

namespace sroce {

// A completion of a multi-packet queue, for the receiving QP to post.
struct MpCompletion {
	u64 wr_id = 0;
	u32 offset = 0;      // of the data in the buffer
	u32 len = 0;         // bytes of the buffer this packet took
	u8 status = ib::wc_success;
	bool consumed = false; // the buffer is released
	bool nop = false;      // a release without data (SROCE_CQE_OP_RECV_NOP)
};

// The receiving side of one placement (the QP's responder) is a Sink:
//   ktl::Result<void> write(const RecvWqe &w, u32 offset)
//     writes the packet's bytes at offset of w's buffer;
//   void complete(const MpCompletion &c)
//     posts a completion: the packet's (after write), a release without
//     data, or a refused WQE's.

class MpRecv {
public:
	// The sizes a request gets, in place: the alignment rounded up to a
	// power of two of at least SROCE_MP_WR_MIN_ALIGN, the buffer up to a
	// multiple of it and to at least SROCE_MP_WR_MIN_BUFFER. -EINVAL for a
	// zero buffer size, or either above its cap.
	static ktl::Result<void> round(u32 *buf_sz, u32 *align);
	// What round() gives back unchanged: the sizes a queue is created with.
	static bool valid_sizes(u32 buf_sz, u32 align) {
		u32 b = buf_sz, a = align;
		return !round(&b, &a).is_error() && b == buf_sz && a == align;
	}

	void configure(u32 buf_sz, u32 align) {
		buf_sz_ = buf_sz;
		align_ = align;
	}
	bool enabled() const { return buf_sz_ != 0; }
	u32 buffer_size() const { return buf_sz_; }
	u32 align() const { return align_; }
	// The buffer in use, if any (its WQE left the ring).
	bool held(u64 *wr_id) const {
		if (held_)
			*wr_id = cur_.wr_id;
		return held_;
	}
	// Forgets the buffer in use (the queue's error state flushes it).
	void drop() { held_ = false; }

	// Places one packet of len buffer bytes (len <= SROCE_MP_WR_MIN_BUFFER,
	// 0 for an immediate without data): releases a current buffer with
	// less than len left, takes the next WQE with take(RecvWqe &) when
	// none is current (a malformed WQE or one of the wrong size completes
	// in error), writes through the sink and completes. Errors: -EAGAIN no
	// WQE posted (nothing completed), what take() fails with, -EINVAL a
	// malformed WQE or one of the wrong size (completed in error), or the
	// sink's write error (the
	// buffer then completes in error, released).
	template <typename Take, typename Sink>
	ktl::Result<void> place(u32 len, Take &&take, Sink &sink, u32 byte_len) {
		if (held_ && len > buf_sz_ - offset_) {
			held_ = false;
			MpCompletion c;
			c.wr_id = cur_.wr_id;
			c.offset = offset_;
			c.consumed = c.nop = true;
			sink.complete(c);
		}
		if (!held_) {
			auto t = take(cur_);
			if (t.is_error()) {
				// -EINVAL: take consumed a malformed WQE (its owner
				// rewrote the ring); it completes in error, as the
				// ordinary receive path's does, and the owner fails.
				if (t.error().errno_value() == ktl::err::inval)
					complete_taken(sink, ib::wc_loc_qp_op_err);
				return t.error();
			}
			if (buffer_bytes(cur_) != buf_sz_) {
				complete_taken(sink, ib::wc_loc_len_err);
				return ktl::Error::from_errno(ktl::err::inval);
			}
			held_ = true;
			offset_ = 0;
		}
		MpCompletion c;
		c.wr_id = cur_.wr_id;
		c.offset = offset_;
		c.len = byte_len;
		auto w = sink.write(cur_, offset_);
		if (w.is_error()) {
			held_ = false;
			c.status = ib::wc_loc_prot_err;
			c.consumed = true;
			sink.complete(c);
			return w.error();
		}
		offset_ = advance(offset_, len);
		c.consumed = offset_ >= buf_sz_;
		held_ = !c.consumed;
		sink.complete(c);
		return {};
	}

private:
	static u64 buffer_bytes(const RecvWqe &w);
	// A WQE just taken and refused (malformed, or of the wrong size):
	// released with an error completion, never held.
	template <typename Sink> void complete_taken(Sink &sink, u8 status) {
		MpCompletion c;
		c.wr_id = cur_.wr_id;
		c.status = status;
		c.consumed = true;
		sink.complete(c);
	}
	u32 advance(u32 at, u32 len) const {
		u64 end = u64(at) + len + align_ - 1;
		return u32(end & ~u64(align_ - 1));
	}

	u32 buf_sz_ = 0; // 0: an ordinary queue
	u32 align_ = 0;
	bool held_ = false; // cur_ is the buffer in use
	u32 offset_ = 0;    // its next free byte (aligned)
	RecvWqe cur_;
};

} // namespace sroce

// Two (or more) simulated nodes with kernel-owned PDs, CQs, QPs and page-list
// MRs, driven through the core's C API exactly as the glue drives it.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "sim.h"
#include "ib_enums.h"
#include "packet.h"

extern "C" {
#include "abi.h"
}

namespace tfx {

// Every right an MR or a QP may grant (IB_ACCESS_*).
constexpr unsigned int all_access = sroce::ib::access::local_write | sroce::ib::access::remote_write |
				    sroce::ib::access::remote_read | sroce::ib::access::remote_atomic;

// Page-aligned memory with guard regions on both sides, registered as a
// page-list MR (as the glue registers pinned user pages).
struct Buffer {
	unsigned char *base = nullptr; // guard | data | guard
	unsigned char *data = nullptr;
	size_t len = 0;
	size_t guard = 4096;
	sroce_core_mr *mr = nullptr;
	Buffer() = default;
	Buffer(const Buffer &) = delete;
	~Buffer();
	bool guards_intact() const;
};

struct Ring {
	void *mem = nullptr;
	unsigned int log_size = 0;
	~Ring() { std::free(mem); }
};

struct Node {
	int id = -1;
	sroce_core_dev *dev = nullptr;
	sroce_core_pd *pd = nullptr;
	sroce_core_cq *cq = nullptr; // send and receive
	Ring cq_ring;
	std::vector<std::unique_ptr<Buffer>> bufs;
	int cq_owner = 0; // its address is the CQ's owner
};

struct Qp {
	Node *node = nullptr;
	sroce_core_qp *qp = nullptr;
	unsigned int qpn = 0;
	unsigned int type = 0;
	Ring sq, rq;
	unsigned int sq_stride = 0, rq_stride = 0;
	int owner = 0;
};

class Fixture {
public:
	// zero_copy_min: the devices' (sroce_core_dev_init).
	explicit Fixture(uint64_t seed, unsigned int mtu = 9000, unsigned int zero_copy_min = 0);
	~Fixture();

	sim::Sim &sim() { return sim_; }
	// Prints every packet on the wire (opcode, PSN, AETH) when
	// SROCE_PACKET_TRACE is set: for replaying a failing seed.
	void trace_from_env();
	Node &node(int i) { return *nodes_[i]; }
	Node &add_node(unsigned int netdev_mtu, unsigned int zero_copy_min = 0);
	// Makes the node's CQ again, with completion timestamps (before any QP
	// uses it).
	void timestamp_cq(Node &n);

	// access: IB_ACCESS_* bits. Contents filled with a pattern. zero_copy:
	// the MR's pages may be sent in place (as the glue's user MRs).
	Buffer &buffer(Node &n, size_t len, unsigned int access, bool zero_copy = true);
	void dereg(Buffer &b);
	unsigned int lkey(const Buffer &b) const;

	Qp &qp(Node &n, unsigned int type, unsigned int depth = 256);
	// A QP whose RQ is multi-packet (sizes as sroce_core_mp_wr_round gives
	// them), or (sizes 0) one that takes its receives from srq.
	Qp &qp_mp(Node &n, unsigned int type, unsigned int mp_buf, unsigned int mp_align, unsigned int depth = 256,
		  sroce_core_srq *srq = nullptr);
	// RESET -> INIT -> RTR -> RTS against the peer (RC/UC), or for UD.
	void connect(Qp &a, Qp &b, unsigned int path_mtu, unsigned int psn_a = 0, unsigned int psn_b = 0,
		     unsigned int timeout = 10, unsigned int retry = 7, unsigned int rnr_retry = 7,
		     unsigned int rd_atomic = 16);
	void to_ud_rts(Qp &q, unsigned int qkey);
	// a and b of one type to RTS: connected (MTU 1024), or for UD with
	// Q_Key ud_qkey and the AH from a's node to b's, which it returns.
	static constexpr unsigned int ud_qkey = 0x1234;
	sroce_core_ah *join(Qp &a, Qp &b);
	int modify_state(Qp &q, unsigned int state);
	// The QP's attributes as sroce_core_qp_query gives them.
	static sroce_core_qp_attr query(Qp &q);
	// RTS -> RTS with new IB_ACCESS_* rights.
	int modify_access(Qp &q, unsigned int access);
	sroce_core_ah *ah(Node &from, Node &to);
	void destroy_qp(Qp &q);

	int post_send(Qp &q, const sroce_wqe &w, const std::vector<sroce_sge> &sges);
	int post_recv(Qp &q, uint64_t wr_id, const std::vector<sroce_sge> &sges);
	// Polls everything the node's CQ has.
	std::vector<sroce_cqe> poll(Node &n);
	// Runs until `count` CQEs arrived at n (collected into out).
	bool wait_cqes(Node &n, size_t count, std::vector<sroce_cqe> &out, uint64_t timeout_ns = 2000000000ull);

private:
	sim::Sim sim_;
	std::vector<std::unique_ptr<Node>> nodes_;
	std::vector<std::unique_ptr<Qp>> qps_;
	std::vector<sroce_core_ah *> ahs_;
};

// A buffer's MR iova: buffers are registered at 0x10000000 + 1 MiB * their
// index on the node.
uint64_t iova_of(const Node &n, const Buffer &b);
// One of the node's device-wide counters (what sroce-dump shows).
unsigned long long device_counter(const Node &n, sroce_core_counter id);
// One SGE over b[off, off + len).
sroce_sge sge_of(Fixture &f, const Node &n, const Buffer &b, size_t off, unsigned int len);

// A valid RoCEv2 packet (IPv4, ICRC filled unless fix_icrc is false) for QP
// qpn, from node 0's address to node 1's, built with the core's codec;
// `addr` replaces the IP/UDP fields (addresses, ports) when given.
std::vector<unsigned char> make_packet(Fixture &f, unsigned int qpn, const sroce::ib::Headers &h,
				       unsigned int payload, bool fix_icrc = true,
				       const sroce::ib::IpUdp *addr = nullptr);

// Names every packet node `from` puts on the wire ("OPCODE AETH-KIND", the
// kind where the opcode has an AETH) into `seen`, every node's when from is
// -1; replaces the sim's tap.
void tap_names(Fixture &f, int from, std::vector<std::string> &seen);

// A crafted request with headers h and `payload` bytes, from node 0 to QP
// `to` on node 1: what node 1 sends in the millisecond after (tap_names).
std::vector<std::string> answers_to(Fixture &f, const Qp &to, const sroce::ib::Headers &h, unsigned int payload);

// Zeroed, page-aligned memory for a ring of `entries` (at most max) of
// `stride` bytes, as sroce_core_ring_size sizes it; free() it.
void *alloc_ring(unsigned int entries, unsigned int max, unsigned int stride, unsigned int *log_size);

// A WQE builder.
sroce_wqe wqe(uint64_t wr_id, unsigned char opcode, unsigned int num_sge, unsigned short flags = SROCE_WQE_SIGNALED);
// Addresses a UD WQE to QP qpn behind ah, with its Q_Key.
void address_ud(sroce_wqe &w, sroce_core_ah *ah, unsigned int qpn, unsigned int qkey);
// An RDMA READ or WRITE of one SGE to va through rkey.
sroce_wqe rdma_wqe(uint64_t wr_id, unsigned char opcode, uint64_t va, unsigned int rkey);
// Posts w on q and returns its completion (the only one q's node gets).
sroce_cqe complete_one(Fixture &f, Qp &q, const sroce_wqe &w, const std::vector<sroce_sge> &sges = {});
// Clears the event log, posts one signaled SEND of sg from q to QP
// to_qpn (behind ah when q is UD, else ah is null) and runs 50 ms.
void send_one_and_run(Fixture &f, Qp &q, sroce_core_ah *ah, unsigned int to_qpn, const sroce_sge &sg);

} // namespace tfx

// A randomized packet fuzzer on the simulated wire (issue 12). Packets of a
// live RC transfer are captured, mutated (header bytes, opcodes switched
// mid-message, PSNs around the window and the wrap, RETH/AtomicETH
// rkey/va/length edges, truncation) and replayed, with valid ICRCs, both
// from the peer's own address and from a third host, while the transfer
// runs. ASan/UBSan watch every access; the test checks that every work
// request completes (with success or an error status, never hangs), that
// every guard byte around every buffer holds, and that the third host's
// packets change nothing. A fixed seed runs in the default suite;
// SROCE_FUZZ_ROUNDS makes it longer.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "icrc.h"
#include "ib_enums.h"
#include "transport_fixture.h"

using namespace tfx;
namespace ib = sroce::ib;

namespace {

struct Mutator {
	std::mt19937_64 rng;
	u64 pick(u64 n) { return rng() % n; }

	// Edge values of a 32-bit length or key.
	u32 edge32() {
		static const u32 v[] = {0, 1, 8, 1023, 1024, 1025, 0x7fffffff, 0x80000000, 0x80000001, 0xffffffff};
		return v[pick(sizeof(v) / sizeof(v[0]))];
	}
	// Edge values of a va around the registered buffers and the 64-bit wrap.
	u64 edge_va(u64 base, u64 len) {
		const u64 v[] = {base, base + len - 1, base + len, base + len - 8, base + 3, base - 1,
				 ~0ull, ~0ull - 7, 0, base + (rng() % len)};
		return v[pick(sizeof(v) / sizeof(v[0]))];
	}

	// Mutates a copy of a captured packet in place; false if it cannot.
	bool mutate(std::vector<unsigned char> &p, u64 base, u64 len) {
		auto ip = ib::parse_ip_udp(ktl::Span<const u8>(p.data(), p.size()));
		if (ip.is_error())
			return false;
		u32 bth = ip.value().bth_offset;
		auto pi = ib::parse_ib(ktl::Span<const u8>(p.data() + bth, ip.value().ib_len));
		if (pi.is_error())
			return false;
		ib::Headers h = pi.value().hdr;
		u32 payload = pi.value().payload_len;
		bool rewrite = true;
		switch (pick(8)) {
		case 0: // another opcode of the same transport, possibly mid-message
			h.bth.opcode = u8((h.bth.opcode & 0xe0) | pick(0x18));
			break;
		case 1: // PSN around the window and the wrap
			h.bth.psn = u32(h.bth.psn + (pick(2) ? pick(8) : -s64(pick(8)))) & ib::psn_mask;
			if (pick(4) == 0)
				h.bth.psn = ib::psn_mask - u32(pick(3));
			break;
		case 2:
			h.reth.length = edge32();
			h.reth.va = edge_va(base, len);
			break;
		case 3:
			h.reth.rkey = pick(2) ? edge32() : h.reth.rkey ^ u32(1u << pick(32));
			break;
		case 4:
			h.atomic_eth.va = edge_va(base, len) | pick(8);
			h.atomic_eth.rkey = pick(4) ? h.atomic_eth.rkey : edge32();
			break;
		case 5:
			h.aeth.syndrome = u8(rng());
			h.aeth.msn = u32(rng()) & ib::psn_mask;
			break;
		case 6: { // a random header byte (BTH and extension headers)
			u32 at = bth + u32(pick(pi.value().header_len));
			p[at] ^= u8(1u << pick(8));
			rewrite = false;
			break;
		}
		default: // truncated or lengthened UDP payload
			if (pick(2))
				p.resize(p.size() - 1 - pick(ktl::min<u64>(p.size() - 29, 64)));
			else
				p.resize(p.size() + 1 + pick(64), 0x77);
			rewrite = false;
			break;
		}
		if (rewrite) {
			u32 ib_len = ib::ib_length(h.bth.opcode, payload);
			if (!ib::opcode_valid(h.bth.opcode) || ib_len == 0)
				return false;
			h.bth.pad = ib::pad_for(payload);
			std::vector<unsigned char> q(bth + ib_len, 0x5a);
			if (ib::write_ip_udp(ip.value().addr, ib_len, ktl::Span<u8>(q.data(), q.size())).is_error() ||
			    ib::write_ib_headers(h, ktl::Span<u8>(q.data() + bth, ib_len)).is_error())
				return false;
			// The original payload where it fits.
			u32 hl = ib::opcode_info(h.bth.opcode).length;
			u32 n = ktl::min<u32>(payload, u32(p.size()) - (bth + pi.value().payload_offset));
			n = ktl::min<u32>(n, ib_len - hl - 4);
			std::memcpy(q.data() + bth + hl, p.data() + bth + pi.value().payload_offset, n);
			p.swap(q);
		}
		// Mostly a valid ICRC, so the packet reaches the transport.
		if (pick(8) != 0 && p.size() > bth + 16)
			(void)ib::icrc_fill(ktl::Span<u8>(p.data(), p.size()));
		return true;
	}
};
} // namespace

TEST_CASE("transport fuzz: mutated replays during a live transfer", "[transport][hostile][fuzz]") {
	const char *env = std::getenv("SROCE_FUZZ_ROUNDS");
	const int rounds = env ? std::atoi(env) : 60;
	const u64 seed = 0x5eed1200;
	Mutator m{std::mt19937_64(seed)};
	Fixture f(seed);
	Node &a = f.node(0), &b = f.node(1);
	Node &evil = f.add_node(9000);
	Buffer &la = f.buffer(a, 65536, all_access);
	Buffer &rb = f.buffer(b, 65536, all_access);
	Buffer &other = f.buffer(b, 8192, ib::access::local_write); // no remote access at all
	std::vector<unsigned char> other_before(other.data, other.data + other.len);
	std::vector<std::vector<unsigned char>> corpus;
	std::vector<int> corpus_from;
	f.sim().set_tap([&](const sim::WirePacket &p) {
		if (corpus.size() < 400 && (p.from == a.id || p.from == b.id)) {
			corpus.emplace_back(p.data, p.data + p.len);
			corpus_from.push_back(p.from);
		}
	});
	unsigned long posted = 0, completed = 0, errors = 0, injected = 0;
	for (int round = 0; round < rounds; round++) {
		Qp &qa = f.qp(a, ib::qpt_rc, 64), &qb = f.qp(b, ib::qpt_rc, 64);
		f.connect(qa, qb, ib::mtu_1024, u32(m.rng()) & ib::psn_mask, u32(m.rng()) & ib::psn_mask, 8, 7, 7, 4);
		for (int i = 0; i < 8; i++)
			REQUIRE(f.post_recv(qb, 100 + i, {sge_of(f, b, rb, 32768, 8192)}) == 0);
		unsigned long want = 0;
		for (int op = 0; op < 6; op++) {
			static const u8 ops[] = {ib::wr_send, ib::wr_rdma_write, ib::wr_rdma_read, ib::wr_atomic_fetch_add,
						 ib::wr_rdma_write_imm, ib::wr_atomic_cmp_swp};
			u8 opc = ops[m.pick(6)];
			u32 len = ib::wr_atomic_fetch_add == opc || ib::wr_atomic_cmp_swp == opc ? 8 : u32(1 + m.pick(6000));
			auto w = wqe(op, opc, 1);
			w.rdma.remote_addr = iova_of(b, rb) + (opc == ib::wr_atomic_fetch_add || opc == ib::wr_atomic_cmp_swp
								       ? 8 * m.pick(64)
								       : m.pick(16384));
			w.rdma.rkey = f.lkey(rb);
			if (f.post_send(qa, w, {sge_of(f, a, la, 8 * m.pick(512), len)}) == 0)
				want++;
		}
		posted += want;
		// Replay mutants while the transfer runs.
		for (int k = 0; k < 40 && !corpus.empty(); k++) {
			size_t i = m.pick(corpus.size());
			auto p = corpus[i];
			if (!m.mutate(p, iova_of(b, rb), rb.len))
				continue;
			int from = corpus_from[i], to = from == a.id ? b.id : a.id;
			// Current QPNs: a replay of an older round's packet at a
			// live QP is the interesting case.
			if (p.size() > 36) {
				auto ip = ib::parse_ip_udp(ktl::Span<const u8>(p.data(), p.size()));
				if (!ip.is_error() && ip.value().bth_offset + 8 <= p.size()) {
					u32 q = to == b.id ? qb.qpn : qa.qpn;
					u8 *d = p.data() + ip.value().bth_offset + 5;
					d[0] = u8(q >> 16), d[1] = u8(q >> 8), d[2] = u8(q);
					// Near the PSN the receiver expects now: the
					// responder's next request, the requester's
					// outstanding ones.
					if (m.pick(4) != 0) {
						sroce_core_qp_attr at{};
						sroce_core_qp_query(to == b.id ? qb.qp : qa.qp, &at);
						u32 psn = (to == b.id ? at.rq_psn : at.sq_psn - 1 - u32(m.pick(4))) +
							  u32(m.pick(3)) - 1;
						psn &= ib::psn_mask;
						d[4] = u8(psn >> 16), d[5] = u8(psn >> 8), d[6] = u8(psn);
					}
					(void)ib::icrc_fill(ktl::Span<u8>(p.data(), p.size()));
				}
			}
			f.sim().inject(m.pick(4) == 0 ? evil.id : from, to, p.data(), (unsigned)p.size());
			injected++;
			f.sim().run_for(m.pick(30000));
		}
		// Every WR completes: success, or an error once the fuzz broke the
		// connection (then the QP flushes the rest). Nothing hangs.
		std::vector<sroce_cqe> ca;
		bool all = f.wait_cqes(a, want, ca, 60000000000ull);
		INFO("round " << round << ": " << ca.size() << " of " << want << " completions");
		CHECK(all);
		for (auto &c : ca)
			errors += c.status != ib::wc_success;
		completed += ca.size();
		f.destroy_qp(qa);
		f.destroy_qp(qb);
		f.poll(b);
		f.poll(a);
	}
	INFO(posted << " posted, " << completed << " completed, " << errors << " with errors, " << injected
		    << " mutants");
	std::printf("fuzz: %lu posted, %lu completed, %lu with errors, %lu mutants\n", posted, completed, errors, injected);
	CHECK(completed == posted);
	CHECK(injected > 0);
	CHECK(la.guards_intact());
	CHECK(rb.guards_intact());
	CHECK(other.guards_intact());
	CHECK(std::memcmp(other_before.data(), other.data, other.len) == 0);
}

// The debug views' field tables (core.h): the glue prints exactly these
// rows, by name, from the snapshot struct. A row that names one member and
// reads another, or a name printed twice, would be a wrong `rdma res -dd`.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <set>
#include <string>

#include "core.h"

namespace {
template <typename View>
std::map<std::string, unsigned long long> read_view(const sroce_core_view_field *f, unsigned int n, const View &v) {
	std::map<std::string, unsigned long long> out;
	for (unsigned int i = 0; i < n; i++) {
		REQUIRE((f[i].size == 4 || f[i].size == 8));
		REQUIRE(f[i].offset + f[i].size <= sizeof(View));
		unsigned long long x = 0;
		if (f[i].size == 8) {
			std::memcpy(&x, reinterpret_cast<const char *>(&v) + f[i].offset, 8);
		} else {
			unsigned int y;
			std::memcpy(&y, reinterpret_cast<const char *>(&v) + f[i].offset, 4);
			x = y;
		}
		CHECK(out.count(f[i].name) == 0);
		out[f[i].name] = x;
	}
	return out;
}
} // namespace

TEST_CASE("QP view table: each name reads its own member", "[views]") {
	sroce_core_qp_view v{};
	v.state = 1001, v.type = 1002, v.dest_qpn = 1003;
	v.sq_psn = 1, v.sq_unacked_psn = 2, v.rq_psn = 3, v.msn = 4, v.sq_wqes = 5, v.rd_atomic_out = 6;
	v.rd_atomic_max = 7, v.responses_pending = 8, v.retries_left = 9, v.rnr_retries_left = 10;
	v.retry_cnt = 11, v.rnr_retry = 12, v.timeout = 13, v.rnr_wait = 14, v.timer_armed = 15;
	v.retrans_pkts = 1ull << 40, v.retrans_timeouts = (1ull << 41) + 1, v.window = 16, v.window_limit = 17;
	v.xrcd = (1ull << 42) + 3, v.srtt_us = 18, v.rttvar_us = 19;
	auto m = read_view(sroce_core_qp_view_fields, sroce_core_qp_view_nfields, v);
	std::map<std::string, unsigned long long> want = {
		{"sq_psn", 1}, {"sq_unacked_psn", 2}, {"rq_psn", 3}, {"msn", 4}, {"sq_wqes", 5},
		{"rd_atomic_out", 6}, {"rd_atomic_max", 7}, {"responses_pending", 8}, {"retries_left", 9},
		{"rnr_retries_left", 10}, {"retry_cnt", 11}, {"rnr_retry", 12}, {"timeout", 13},
		{"rnr_wait", 14}, {"timer_armed", 15}, {"retrans_pkts", 1ull << 40},
		{"retrans_timeouts", (1ull << 41) + 1}, {"window", 16}, {"window_limit", 17},
		{"xrcd", (1ull << 42) + 3}, {"srtt_us", 18}, {"rttvar_us", 19},
	};
	CHECK(m == want); // state, type and dest_qpn are ib_core's to print
}

TEST_CASE("CQ view table: each name reads its own member", "[views]") {
	sroce_core_cq_view v{};
	v.entries = 64, v.fill = 3, v.armed = 2, v.error = 1, v.user = 7;
	auto m = read_view(sroce_core_cq_view_fields, sroce_core_cq_view_nfields, v);
	std::map<std::string, unsigned long long> want = {
		{"entries", 64}, {"fill", 3}, {"armed", 2}, {"overflow", 1}, {"user", 7},
	};
	CHECK(m == want);
}

TEST_CASE("MR view table: each name reads its own member, with its flags", "[views]") {
	sroce_core_mr_view v{};
	v.lkey = 0x101, v.rkey = 0x102, v.access = 7, v.page_shift = 12;
	v.iova = 1ull << 40, v.length = (1ull << 33) + 5, v.npages = 3, v.dma = 0, v.fast_reg = 1, v.windows = 9;
	auto m = read_view(sroce_core_mr_view_fields, sroce_core_mr_view_nfields, v);
	std::map<std::string, unsigned long long> want = {
		{"lkey", 0x101}, {"rkey", 0x102}, {"access", 7}, {"page_shift", 12},
		{"iova", 1ull << 40}, {"length", (1ull << 33) + 5}, {"npages", 3}, {"dma", 0},
		{"fast_reg", 1}, {"windows", 9},
	};
	CHECK(m == want);
	// What an unprivileged reader and a DMA MR leave out (stats.c's skip).
	std::set<std::string> keys, user_mem;
	for (unsigned int i = 0; i < sroce_core_mr_view_nfields; i++) {
		if (sroce_core_mr_view_fields[i].flags & SROCE_VIEW_KEY)
			keys.insert(sroce_core_mr_view_fields[i].name);
		if (sroce_core_mr_view_fields[i].flags & SROCE_VIEW_USER_MEM)
			user_mem.insert(sroce_core_mr_view_fields[i].name);
	}
	CHECK(keys == std::set<std::string>{"lkey", "rkey", "iova"});
	CHECK(user_mem == std::set<std::string>{"iova", "length", "npages", "page_shift"});
}

TEST_CASE("count tables: each name reads its own member", "[views]") {
	sroce_core_counts c{};
	c.qps = 1, c.cqs = 2, c.srqs = 3, c.mrs = 4, c.mws = 8, c.ahs = 5, c.pinned_pages = 1ull << 40, c.pkts_in_flight = 7;
	CHECK(read_view(sroce_core_counts_fields, sroce_core_counts_nfields, c) ==
	      std::map<std::string, unsigned long long>{{"qps", 1}, {"cqs", 2}, {"srqs", 3}, {"mrs", 4}, {"mws", 8}, {"ahs", 5},
							{"pinned_pages", 1ull << 40}, {"pkts_in_flight", 7}});
	sroce_core_rx_counts rx{};
	rx.packets = 10, rx.bad_header = 11, rx.icrc_errors = 12, rx.bad_qpn = 13;
	CHECK(read_view(sroce_core_rx_counts_fields, sroce_core_rx_counts_nfields, rx) ==
	      std::map<std::string, unsigned long long>{
		      {"rx_core_pkts", 10}, {"rx_bad_header", 11}, {"rx_icrc_errors", 12}, {"rx_bad_qpn", 13}});
}

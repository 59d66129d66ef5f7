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
	v.retrans_pkts = 1ull << 40, v.retrans_timeouts = (1ull << 41) + 1;
	auto m = read_view(sroce_core_qp_view_fields, sroce_core_qp_view_nfields, v);
	std::map<std::string, unsigned long long> want = {
		{"sq_psn", 1}, {"sq_unacked_psn", 2}, {"rq_psn", 3}, {"msn", 4}, {"sq_wqes", 5},
		{"rd_atomic_out", 6}, {"rd_atomic_max", 7}, {"responses_pending", 8}, {"retries_left", 9},
		{"rnr_retries_left", 10}, {"retry_cnt", 11}, {"rnr_retry", 12}, {"timeout", 13},
		{"rnr_wait", 14}, {"timer_armed", 15}, {"retrans_pkts", 1ull << 40},
		{"retrans_timeouts", (1ull << 41) + 1},
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

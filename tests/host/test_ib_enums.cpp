// The core restates ib_verbs encodings (kmod/core/ib_enums.h) and passes
// them through core.h unchanged. libibverbs' user-space values equal the
// kernel's for everything checked here, so a drift fails this build.
#include <catch2/catch.hpp>
#include <infiniband/verbs.h>

#include "ib_enums.h"
#include "rss.h"

using namespace sroce;

#define SAME(a, b) static_assert((long)(a) == (long)(b), #a " != " #b)
SAME(ib::qpt_rc, IBV_QPT_RC);
SAME(ib::qpt_uc, IBV_QPT_UC);
SAME(ib::qpt_ud, IBV_QPT_UD);
SAME(ib::qpt_xrc_ini, IBV_QPT_XRC_SEND);
SAME(ib::qpt_xrc_tgt, IBV_QPT_XRC_RECV);
SAME(ib::qps_reset, IBV_QPS_RESET);
SAME(ib::qps_sqe, IBV_QPS_SQE);
SAME(ib::qps_err, IBV_QPS_ERR);
SAME(ib::attr_state, IBV_QP_STATE);
SAME(ib::attr_av, IBV_QP_AV);
SAME(ib::attr_min_rnr_timer, IBV_QP_MIN_RNR_TIMER);
SAME(ib::attr_max_dest_rd_atomic, IBV_QP_MAX_DEST_RD_ATOMIC);
SAME(ib::attr_dest_qpn, IBV_QP_DEST_QPN);
SAME(ib::attr_rate_limit, IBV_QP_RATE_LIMIT);
SAME(ib::access::local_write, IBV_ACCESS_LOCAL_WRITE);
SAME(ib::access::remote_atomic, IBV_ACCESS_REMOTE_ATOMIC);
SAME(ib::access::mw_bind, IBV_ACCESS_MW_BIND);
SAME(ib::access::zero_based, IBV_ACCESS_ZERO_BASED);
SAME(ib::mtu_4096, IBV_MTU_4096);
SAME(ib::wqs_reset, IBV_WQS_RESET);
SAME(ib::wqs_rdy, IBV_WQS_RDY);
SAME(ib::wqs_err, IBV_WQS_ERR);
SAME(ib::ev_wq_fatal, IBV_EVENT_WQ_FATAL);
SAME(rss::field::src_ipv4, IBV_RX_HASH_SRC_IPV4);
SAME(rss::field::dst_ipv4, IBV_RX_HASH_DST_IPV4);
SAME(rss::field::src_ipv6, IBV_RX_HASH_SRC_IPV6);
SAME(rss::field::dst_ipv6, IBV_RX_HASH_DST_IPV6);
SAME(rss::field::src_port_tcp, IBV_RX_HASH_SRC_PORT_TCP);
SAME(rss::field::dst_port_tcp, IBV_RX_HASH_DST_PORT_TCP);
SAME(rss::field::src_port_udp, IBV_RX_HASH_SRC_PORT_UDP);
SAME(rss::field::dst_port_udp, IBV_RX_HASH_DST_PORT_UDP);
static_assert(!(rss::field::supported & (IBV_RX_HASH_IPSEC_SPI | IBV_RX_HASH_INNER)));
SAME(ib::wr_rdma_write, IBV_WR_RDMA_WRITE);
SAME(ib::wr_atomic_fetch_add, IBV_WR_ATOMIC_FETCH_AND_ADD);
SAME(ib::wr_local_inv, IBV_WR_LOCAL_INV);
SAME(ib::wr_send_inv, IBV_WR_SEND_WITH_INV);
SAME(ib::wc_loc_prot_err, IBV_WC_LOC_PROT_ERR);
SAME(ib::wc_retry_exc_err, IBV_WC_RETRY_EXC_ERR);
SAME(ib::wc_rnr_retry_exc_err, IBV_WC_RNR_RETRY_EXC_ERR);
SAME(ib::wc_general_err, IBV_WC_GENERAL_ERR);
SAME(ib::wc_fetch_add, IBV_WC_FETCH_ADD);
SAME(ib::wc_local_inv, IBV_WC_LOCAL_INV);
SAME(ib::wc_recv, IBV_WC_RECV);
SAME(ib::wc_recv_rdma_imm, IBV_WC_RECV_RDMA_WITH_IMM);
SAME(ib::ev_cq_err, IBV_EVENT_CQ_ERR);
SAME(ib::ev_comm_est, IBV_EVENT_COMM_EST);
SAME(ib::ev_srq_limit_reached, IBV_EVENT_SRQ_LIMIT_REACHED);
SAME(ib::ev_qp_last_wqe_reached, IBV_EVENT_QP_LAST_WQE_REACHED);

TEST_CASE("ib_enums: MTU enum to bytes", "[ib_enums]") {
	CHECK(ib::mtu_bytes(ib::mtu_256) == 256);
	CHECK(ib::mtu_bytes(ib::mtu_1024) == 1024);
	CHECK(ib::mtu_bytes(ib::mtu_4096) == 4096);
	CHECK(ib::mtu_bytes(0) == 0);
	CHECK(ib::mtu_bytes(6) == 0);
}

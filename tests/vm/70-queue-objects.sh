#!/usr/bin/env bash
# Queue objects through the provider: CQ, SRQ, QP (RC, UC, UD, on an SRQ or
# not) and AH creation against the limits query_device reports, objects in
# use refusing destruction, and the QP state machine with query_qp and the
# states that refuse posts. Nothing may be left behind.
. "$(dirname "$0")/lib.sh"

make_veth veth0 veth1
modprobe sroce
rdma link add sroce0 type sroce netdev veth0
check "the IPv4 GID appears" wait_until 10 gid_index sroce0 10.0.1.1
check "create/destroy within and beyond the limits" "$PROGS/sroce_qobj" objects sroce0 10.0.1.2
check "QP state machine" "$PROGS/sroce_qobj" modify sroce0 10.0.1.2
check "nothing left alive" wait_until 10 counts_zero sroce0
check "context page and limits through sroce_ctx" "$PROGS/sroce_ctx" check sroce0
rdma link delete sroce0
ip link del veth0
check "rmmod" rmmod sroce
finish

#!/usr/bin/env bash
# The provider's data path on one device, QPs addressing the device's own
# GID (packets loop through lo): every completion field the verbs promise,
# ibv_create_ah_from_wc, RDMA WRITE with immediate, READ, atomics, a
# completion channel and resize_cq with completions pending.
. "$(dirname "$0")/lib.sh"

make_veth veth0 veth1
modprobe sroce
rdma link add sroce0 type sroce netdev veth0
check "the IPv4 GID appears" wait_until 10 gid_index sroce0 10.0.1.1
check "UD: completion fields and a reply through ibv_create_ah_from_wc" "$PROGS/sroce_qdata" ud sroce0
check "RC: SEND, WRITE_WITH_IMM, READ, atomics, events, resize" "$PROGS/sroce_qdata" rc sroce0
check "nothing left alive" wait_until 10 counts_zero sroce0
rdma link delete sroce0
ip link del veth0
check "rmmod" rmmod sroce
finish

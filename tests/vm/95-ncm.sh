#!/usr/bin/env bash
# Non-contiguous memory windows (seed 003) through the provider and the
# kernel: a matrix column, a cube face, a composite of three MRs, a layout
# of layouts, 2:1 interleaving, a SEND out of a layout through its lkey,
# invalidation, what a bound layout pins, and bad layouts with their errno
# (tests/progs/sroce_ncm.c). Then nothing is left and the module unloads.
. "$(dirname "$0")/lib.sh"

make_veth veth0 veth1
modprobe sroce
rdma link add sroce0 type sroce netdev veth0
check "the IPv4 GID appears" wait_until 10 gid_index sroce0 10.0.1.1
check "layouts written, read and sent through one key; bad ones refused" "$PROGS/sroce_ncm" sroce0
check "nothing left alive" wait_until 10 counts_zero sroce0
rdma link delete sroce0
ip link del veth0
check "rmmod" rmmod sroce
finish

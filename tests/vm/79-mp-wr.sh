#!/usr/bin/env bash
# Multi-packet receive work requests (seed 000, Documentation/mp-wr.md):
# sroce_mp_wr on one device (netdev MTU 9000, path MTU 4096): the seed's
# Examples A and B with every offset, length and flag asserted; UC out of
# buffers within a message; UD; an SRQ shared by 4 RC QPs whose messages
# are rebuilt from the offsets and flags; the bad inputs (another length,
# sizes above the caps, the attribute with an SRQ, a CQ without the flag, a
# posted descriptor rewritten in the ring); then RC messages of 1 B to 1 MiB
# rebuilt from offsets and flags. Then the kernel is whole: no
# QP left, sroce unloads.
# vm-timeout: 600
. "$(dirname "$0")/lib.sh"

modprobe sroce
make_veth veth0 veth1
rdma link add sroce0 type sroce netdev veth0
check "sroce0's IPv4 GID" wait_until 10 gid_index sroce0 10.0.1.1
check_prog "sroce_mp_wr: Examples A and B, UC, UD, a shared SRQ, bad inputs" \
	timeout 300 "$PROGS/sroce_mp_wr" sroce0
# (Both QPs are sroce0's: their packets never reach a netdev, so netem
# cannot touch them here; loss, duplication and reordering are the
# simulator's, tests/host/test_mp_wr.cpp.)
check_prog "RC messages of 1 B to 1 MiB rebuilt from offsets and flags" \
	timeout 300 "$PROGS/sroce_mp_wr" sroce0 reassembly
check "no QP left behind" sh -c "! rdma res show qp | grep -q 'type RC'"
rdma link delete sroce0
check "sroce unloads" modprobe -r sroce
finish

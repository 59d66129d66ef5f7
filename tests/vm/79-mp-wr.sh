#!/usr/bin/env bash
# Multi-packet receive work requests (seed 000, Documentation/mp-wr.md):
# sroce_mp_wr on one device (netdev MTU 9000, path MTU 4096): the seed's
# Examples A and B with every offset, length and flag asserted; UC out of
# buffers within a message; UD; an SRQ shared by 4 RC QPs whose messages
# are rebuilt from the offsets and flags; the bad inputs (another length,
# sizes above the caps, the attribute with an SRQ, a CQ without the flag, a
# posted descriptor rewritten in the ring); then RC messages of 1 B to 1 MiB
# rebuilt from offsets and flags, on one device and between two across a
# veth with netem loss, duplication and reordering. Then the kernel is whole: no
# QP left, sroce unloads.
# vm-timeout: 600
. "$(dirname "$0")/lib.sh"

modprobe sroce
make_veth veth0 veth1
rdma link add sroce0 type sroce netdev veth0
check "sroce0's IPv4 GID" wait_until 10 gid_index sroce0 10.0.1.1
check_prog "sroce_mp_wr: Examples A and B, UC, UD, a shared SRQ, bad inputs" \
	timeout 300 "$PROGS/sroce_mp_wr" sroce0
check_prog "RC messages of 1 B to 1 MiB rebuilt from offsets and flags (one device)" \
	timeout 300 "$PROGS/sroce_mp_wr" sroce0 reassembly
# Across a veth, sroce0 to sroce2 in h2, through netem: RC must deliver
# every message whole while packets are lost, duplicated and reordered.
ip netns add h2 && ip link add veth-r type veth peer name veth-s netns h2
ip link set veth-r mtu 9000 up && ip addr add 10.0.9.1/24 dev veth-r
ip -n h2 link set lo up && ip -n h2 link set veth-s mtu 9000 up && ip -n h2 addr add 10.0.9.2/24 dev veth-s
rdma link add sroce1 type sroce netdev veth-r && ip netns exec h2 rdma link add sroce2 type sroce netdev veth-s
check "sroce1's IPv4 GID" wait_until 10 gid_index sroce1 10.0.9.1
check "sroce2's IPv4 GID" wait_until 10 gid_index sroce2 10.0.9.2
tc qdisc add dev veth-r root netem loss 1% duplicate 1% delay 1ms reorder 10%
check_prog "RC messages of 1 B to 1 MiB under netem (loss, duplication, reordering), rebuilt whole" \
	timeout 600 "$PROGS/sroce_mp_wr" sroce1 reassembly sroce2
check "  netem did drop packets on the way" sh -c "tc -s qdisc show dev veth-r | grep -qE 'dropped [1-9]'"
tc -s qdisc show dev veth-r | grep -E 'Sent' | head -1 | sed 's/^/  /'
tc qdisc del dev veth-r root
ip netns exec h2 rdma link delete sroce2
rdma link delete sroce1
ip netns del h2
check "no QP left behind" sh -c "! rdma res show qp | grep -q 'type RC'"
rdma link delete sroce0
ip link del veth0 # later tests make their own
check "sroce unloads" modprobe -r sroce
finish

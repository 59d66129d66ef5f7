#!/usr/bin/env bash
# RSS over work queues (issue 18, Documentation/rss.md): sroce_rss on one
# device, then with its 64 senders on another device in namespace h2: the
# caps, every datagram's hash checked against the Toeplitz (outer IP/UDP
# headers) and XOR (IPoIB-style payload headers) hashes the program
# computes, its WQ against the hash's low bits, an unmatched datagram in
# slot 0, the WQ states, EBUSY for objects in use, the bad creations; and
# sroce_rss_qps, the seed's consecutive-QPN form, the same two ways. Then
# the kernel is whole: no QP left, sroce unloads.
# vm-timeout: 300
. "$(dirname "$0")/lib.sh"

modprobe sroce
make_veth veth0 veth1
rdma link add sroce0 type sroce netdev veth0
check "sroce0's IPv4 GID" wait_until 10 gid_index sroce0 10.0.1.1
check_prog "sroce_rss: senders on the same device" timeout 120 "$PROGS/sroce_rss" sroce0
check_prog "sroce_rss_qps: the consecutive-QPN form, senders on the same device" \
	timeout 120 "$PROGS/sroce_rss_qps" sroce0
ip netns add h2 && ip link add veth-r type veth peer name veth-s netns h2
ip link set veth-r up && ip addr add 10.0.9.1/24 dev veth-r
ip -n h2 link set lo up && ip -n h2 link set veth-s up && ip -n h2 addr add 10.0.9.2/24 dev veth-s
rdma link add sroce1 type sroce netdev veth-r && ip netns exec h2 rdma link add sroce2 type sroce netdev veth-s
check "sroce1's IPv4 GID" wait_until 10 gid_index sroce1 10.0.9.1
check "sroce2's IPv4 GID" wait_until 10 gid_index sroce2 10.0.9.2
check_prog "sroce_rss: 64 senders in namespace h2, across a veth" timeout 120 "$PROGS/sroce_rss" sroce1 sroce2
check_prog "sroce_rss_qps: 32 senders in namespace h2, across a veth" \
	timeout 120 "$PROGS/sroce_rss_qps" sroce1 sroce2
# The WQs' CQs are on both CPUs' vectors: each CPU received some (here,
# or steered to it from the CPU the packet arrived on).
sed 's/^/    /' /sys/kernel/debug/sroce/rx_cpus
check "RSS receives ran on more than one CPU (debugfs rx_cpus)" \
	test "$(awk '$4 + $6 > 0' /sys/kernel/debug/sroce/rx_cpus | wc -l)" -ge 2
check "no steered packet found its CPU's queue full" \
	test "$(awk '$10 > 0' /sys/kernel/debug/sroce/rx_cpus | wc -l)" -eq 0
ip netns exec h2 rdma link delete sroce2
rdma link delete sroce1
ip netns del h2
check "no UD QP left behind" sh -c "! rdma res show qp | grep -q 'type UD'"
rdma link delete sroce0
ip link del veth0 # later tests make their own
check "sroce unloads" modprobe -r sroce
finish

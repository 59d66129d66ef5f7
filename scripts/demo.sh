#!/usr/bin/env bash
# `make demo` runs this inside a test VM: two hosts (network namespaces h1
# and h2 joined by a veth pair), a sroce device on each, what libibverbs
# sees of them, then RDMA between them: rping -v over rdma_cm and
# ib_write_bw, with the packets and bytes that crossed the veth.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
say() { printf '\n### %s\n' "$*"; }

say "two hosts: h1 (10.0.0.1, fd00::1) and h2 (10.0.0.2, fd00::2) on a veth pair, MTU 9000"
ip netns add h1
ip netns add h2
ip link add veth-h1 netns h1 type veth peer name veth-h2 netns h2
for h in 1 2; do
	ip -n h$h link set lo up
	ip -n h$h link set veth-h$h mtu 9000 up
	ip -n h$h addr add 10.0.0.$h/24 dev veth-h$h
	ip -n h$h -6 addr add fd00::$h/64 dev veth-h$h nodad
done

say "modprobe sroce; rdma link add sroce-hN type sroce netdev veth-hN (inside each host)"
modprobe sroce
ip netns exec h1 rdma link add sroce-h1 type sroce netdev veth-h1
ip netns exec h2 rdma link add sroce-h2 type sroce netdev veth-h2
rdma link show
say "each host has its own RoCEv2 socket (UDP 4791)"
for h in 1 2; do echo "h$h: $(ip netns exec h$h ss -Huln | grep ':4791 ' | awk '{print $4}' | tr '\n' ' ')"; done
sleep 1 # ib_core fills the GID tables from the addresses in the background

for h in 1 2; do
	say "h$h: ibv_devinfo -v -d sroce-h$h (through the sroce provider)"
	ip netns exec h$h ibv_devinfo -v -d sroce-h$h | grep -E 'hca_id|transport|node_guid|vendor_part_id|max_pd:|port:|state:|max_mtu|active_mtu|link_layer|GID\['
done

say "h1 -> h2 over RDMA: rping -v -C 10 (rdma_cm, data verified by rping)"
modprobe rdma_ucm
ip netns exec h1 rping -s -a 10.0.0.1 -C 10 -v >/dev/null &
sleep 1
ip netns exec h2 rping -c -a 10.0.0.1 -C 10 -v | tail -3
wait

say "ib_write_bw, 64 KiB writes for 3 s (perftest; sroce-h2 writes into h1)"
rx0=$(ip netns exec h1 cat /sys/class/net/veth-h1/statistics/rx_bytes)
ip netns exec h1 ib_write_bw -d sroce-h1 -x 1 -F -D 3 -s 65536 >/dev/null 2>&1 &
sleep 1
ip netns exec h2 ib_write_bw -d sroce-h2 -x 1 -F -D 3 -s 65536 10.0.0.1 | grep -A2 '#bytes'
wait
rx1=$(ip netns exec h1 cat /sys/class/net/veth-h1/statistics/rx_bytes)
echo "veth-h1 received $(( (rx1 - rx0) / 1048576 )) MiB of RoCEv2 packets during the run"
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
for h in 1 2; do echo "sroce-h$h: $(grep -E '^(tx_pkts|rx_pkts) ' /sys/kernel/debug/sroce/sroce-h$h/counts | tr '\n' ' ')"; done

say "deleting the veth pair (from h2) removes both devices"
ip -n h2 link del veth-h2
sleep 1
rdma link show
rmmod rdma_ucm rdma_cm iw_cm ib_cm 2>/dev/null || true
rmmod sroce
say "done: sroce unloaded, kernel log clean"

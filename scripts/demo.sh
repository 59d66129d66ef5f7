#!/usr/bin/env bash
# `make demo` runs this inside a test VM: two hosts (network namespaces h1
# and h2 joined by a veth pair), a sroce device on each, and what libibverbs
# sees of them. Later milestones run RDMA traffic between the two here.
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

say "h1: a context, 64 PDs and srocedv_query_device through the provider"
ip netns exec h1 "$top/build/progs/sroce_ctx" check sroce-h1 | grep -v '^ok: round'

say "deleting the veth pair (from h2) removes both devices"
ip -n h2 link del veth-h2
sleep 1
rdma link show
rmmod sroce
say "done: sroce unloaded, kernel log clean"

#!/usr/bin/env bash
# Two hosts (namespaces h1 and h2 on a veth pair), a sroce device on each:
# rdma-core's RC, UC, UD and SRQ ping-pong programs between them.
. "$(dirname "$0")/lib.sh"

ip netns add h1
ip netns add h2
ip link add veth-h1 netns h1 type veth peer name veth-h2 netns h2
for h in 1 2; do
	ip -n h$h link set lo up
	ip -n h$h link set veth-h$h mtu 9000 up
	ip -n h$h addr add 10.0.9.$h/24 dev veth-h$h
done
modprobe sroce
ip netns exec h1 rdma link add sroce1 type sroce netdev veth-h1
ip netns exec h2 rdma link add sroce2 type sroce netdev veth-h2
check "h1's IPv4 GID" wait_until 10 gid_index sroce1 10.0.9.1
check "h2's IPv4 GID" wait_until 10 gid_index sroce2 10.0.9.2
g1=$(gid_index sroce1 10.0.9.1)
g2=$(gid_index sroce2 10.0.9.2)

# pingpong NAME PROG ARGS...: server in h1, client in h2, both must exit 0.
port=18515
pingpong() {
	local what=$1 prog=$2 spid rc1 rc2
	shift 2
	port=$((port + 1))
	ip netns exec h1 timeout 120 "$prog" -d sroce1 -g "$g1" -p $port "$@" >/tmp/pp.server 2>&1 &
	spid=$!
	sleep 1
	ip netns exec h2 timeout 120 "$prog" -d sroce2 -g "$g2" -p $port "$@" 10.0.9.1 >/tmp/pp.client 2>&1
	rc2=$?
	wait $spid
	rc1=$?
	if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ]; then
		ok "$what: $(grep -m1 'iters in' /tmp/pp.client)"
	else
		fail "$what (server $rc1, client $rc2)"
		sed 's/^/    server: /' /tmp/pp.server | tail -5
		sed 's/^/    client: /' /tmp/pp.client | tail -5
	fi
}

pingpong "ibv_rc_pingpong 4 KiB" ibv_rc_pingpong -n 200 -s 4096
pingpong "ibv_rc_pingpong 64 KiB (multi-packet)" ibv_rc_pingpong -n 50 -s 65536
pingpong "ibv_rc_pingpong with events" ibv_rc_pingpong -n 100 -s 1024 -e
pingpong "ibv_uc_pingpong 1 KiB" ibv_uc_pingpong -n 200 -s 1024
pingpong "ibv_ud_pingpong 1 KiB" ibv_ud_pingpong -n 200 -s 1024
pingpong "ibv_srq_pingpong 4 QPs" ibv_srq_pingpong -n 100 -q 4 -s 1024
check "h1: nothing left alive" wait_until 20 counts_zero sroce1
check "h2: nothing left alive" wait_until 20 counts_zero sroce2

ip netns del h1
ip netns del h2
check "devices gone with their namespaces" wait_until 20 sh -c '! rdma link show | grep -q sroce'
check "rmmod" rmmod sroce
finish

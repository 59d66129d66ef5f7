#!/usr/bin/env bash
# rdma_cm between two hosts (namespaces on a veth pair). It needs QP1 and the
# MAD/CM port capabilities: with them, rping (RC, RDMA READ/WRITE), ucmatose
# (RC) and udaddy (UD) must run; without them (until the port advertises
# RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP), rdma_cm must refuse cleanly and fast.
. "$(dirname "$0")/lib.sh"

modprobe rdma_ucm
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

# pair NAME SERVER-CMD -- CLIENT-CMD: both ends must exit 0.
pair() {
	local what=$1 spid rc1 rc2 server=() client=()
	shift
	while [ "$1" != -- ]; do server+=("$1"); shift; done
	shift
	client=("$@")
	ip netns exec h1 timeout 90 "${server[@]}" >/tmp/cm.server 2>&1 &
	spid=$!
	sleep 2
	ip netns exec h2 timeout 90 "${client[@]}" >/tmp/cm.client 2>&1
	rc2=$?
	wait $spid
	rc1=$?
	if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ]; then
		ok "$what"
	else
		fail "$what (server $rc1, client $rc2)"
		tail -3 /tmp/cm.server | sed 's/^/    server: /'
		tail -3 /tmp/cm.client | sed 's/^/    client: /'
	fi
}

# ib_mad opens QP1 on a port with the MAD capability (ib_core's GSI QP).
if [ "$(count_of sroce1 qps)" = 1 ]; then
	ok "ib_mad created QP1 on sroce1"
	pair "rping: 10 RC ping-pongs with RDMA READ and WRITE" \
		rping -s -a 10.0.9.1 -C 10 -- rping -c -a 10.0.9.1 -C 10
	pair "ucmatose: RC connect, send, disconnect" ucmatose -- ucmatose -s 10.0.9.1
	pair "udaddy: UD resolution and datagrams" udaddy -- udaddy -s 10.0.9.1
else
	ok "no MAD capability on the port yet: no QP1"
	start=$(date +%s)
	check_fails "rdma_cm refuses without QP1" "." \
		ip netns exec h2 timeout 60 rping -c -a 10.0.9.1 -C 1
	if [ $(( $(date +%s) - start )) -lt 30 ]; then ok "refused in $(( $(date +%s) - start )) s"; else fail "rping took $(( $(date +%s) - start )) s to fail"; fi
fi

ip netns del h1
ip netns del h2
check "devices gone with their namespaces" wait_until 20 sh -c '! rdma link show | grep -q sroce'
check "rmmod" rmmod sroce
finish

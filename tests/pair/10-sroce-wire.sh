#!/usr/bin/env bash
# RDMA between two kernels over the virtio-net wire (1500 MTU) with sroce.
# First the wire and the port: each guest has its name, MAC, MTU and
# address and pings the other; its sroce device on the wire NIC shows
# PORT_ACTIVE, active_mtu 1024 and the GID of its IPv4 address, which the
# guests swap. Then sroce in both guests (ibv_rc_pingpong --chk, then rping
# -v over rdma_cm), then sroce in vm-a against rdma_rxe in vm-b (the same
# two programs), so sroce speaks the wire with rxe across real NICs.
if [ "${1:-}" != guest ]; then
	. "$(dirname "$0")/lib.sh"
	pair_run --timeout $((600 * scale)) -- bash "$0" guest ::: bash "$0" guest
	exit
fi

. "$(dirname "$0")/../vm/lib.sh"

# Each round: the device on this guest, then the two programs, vm-a serving.
round() { # round NAME DEV
	local name=$1 dev=$2 idx rc
	check "$name: $dev has GID ::ffff:$VM_IP" wait_until 20 gid_index "$dev" "$VM_IP"
	idx=$(gid_index "$dev" "$VM_IP")
	if [ "$VM_NAME" = a ]; then
		ibv_rc_pingpong -d "$dev" -g "$idx" --chk -n 50 -s 5000 >/tmp/pp.log 2>&1 &
		local pid=$!
		check "$name: pingpong server listening" wait_until 30 sh -c "ss -Hltn 'sport = :18515' | grep -q ."
		vm-pair-signal "$name-pp"
		wait "$pid"
		rc=$?
		sed 's/^/  server: /' /tmp/pp.log | tail -2
		check "$name: ibv_rc_pingpong --chk server" test "$rc" -eq 0
		rping -s -a "$VM_IP" -C 100 -v >/tmp/rping.log 2>&1 &
		pid=$!
		sleep 2
		vm-pair-signal "$name-rping"
		wait "$pid"
		check "$name: rping -v server" test $? -eq 0
		vm-pair-wait "$name-done" 300 >/dev/null
	else
		vm-pair-wait "$name-pp" 300 >/dev/null
		ibv_rc_pingpong -d "$dev" -g "$idx" --chk -n 50 -s 5000 "$VM_PEER_IP" >/tmp/pp.log 2>&1
		rc=$?
		sed 's/^/  client: /' /tmp/pp.log | tail -2
		check "$name: ibv_rc_pingpong --chk client" test "$rc" -eq 0
		vm-pair-wait "$name-rping" 300 >/dev/null
		rping -c -a "$VM_PEER_IP" -C 100 -v >/tmp/rping.log 2>&1
		rc=$?
		tail -1 /tmp/rping.log | sed 's/^/  client: /'
		check "$name: rping -v client" test "$rc" -eq 0
		vm-pair-signal "$name-done"
	fi
}

[ "$VM_NAME" = a ] && me=1 peer=2 || me=2 peer=1
check "hostname vm-$VM_NAME" test "$(hostname)" = "vm-$VM_NAME"
check "$VM_IF has MAC 52:54:00:77:00:0$me" grep -qx "52:54:00:77:00:0$me" "/sys/class/net/$VM_IF/address"
check "$VM_IF has MTU 1500" grep -qx 1500 "/sys/class/net/$VM_IF/mtu"
check "$VM_IF is up with $VM_IP/24" sh -c "ip -4 -o addr show dev $VM_IF up | grep -q ' $VM_IP/24 '"
check "vm-$VM_PEER_NAME answers ping" vm-pair-wait-peer 120
check "ping vm-$VM_PEER_NAME by name" busybox ping -c 3 -W 5 "vm-$VM_PEER_NAME"
check "the peer's MAC 52:54:00:77:00:0$peer in the neighbour table" \
	sh -c "ip neigh show $VM_PEER_IP | grep -q 'lladdr 52:54:00:77:00:0$peer'"

modprobe rdma_ucm
check "modprobe sroce" modprobe sroce
check "sroce0 on $VM_IF" rdma link add sroce0 type sroce netdev "$VM_IF"
check "GID ::ffff:$VM_IP" wait_until 20 gid_index sroce0 "$VM_IP"
out=$(ibv_devinfo -v -d sroce0 2>&1)
check "sroce0 is PORT_ACTIVE" grep -q 'state:.*PORT_ACTIVE' <<<"$out"
check "active_mtu 1024 on the 1500-MTU wire" grep -q 'active_mtu:.*1024' <<<"$out"
# Both devices exist at once: each publishes its GID, reads the peer's.
gid=$(grep -oE "::ffff:$VM_IP([^0-9]|\$)" <<<"$out" | head -n 1 | tr -d ', ')
vm-pair-signal "gid-$VM_NAME" "$gid"
peer_gid=$(vm-pair-wait "gid-$VM_PEER_NAME" 120)
check "peer's sroce0 has GID ::ffff:$VM_PEER_IP (got '$peer_gid')" test "$peer_gid" = "::ffff:$VM_PEER_IP"
check "ping still works with both sroce devices up" busybox ping -c 2 -W 5 "$VM_PEER_IP"
round sroce-sroce sroce0

# Second round: vm-b switches to rxe (the UDP port is one per namespace).
if [ "$VM_NAME" = b ]; then
	check "vm-b: sroce0 deleted" rdma link delete sroce0
	modprobe crc32_generic
	check "vm-b: rxe0 on $VM_IF" sh -c "modprobe rdma_rxe && rdma link add rxe0 type rxe netdev $VM_IF"
	round sroce-rxe rxe0
	rdma link delete rxe0
else
	round sroce-rxe sroce0
	check "vm-a: nothing left alive" wait_until 20 counts_zero sroce0
	rdma link delete sroce0
fi
finish

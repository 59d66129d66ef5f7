#!/usr/bin/env bash
# RDMA between two kernels over the virtio-net wire (1500 MTU) with sroce:
# first sroce in both guests (ibv_rc_pingpong --chk, then rping -v over
# rdma_cm), then sroce in vm-a against rdma_rxe in vm-b (the same two
# programs), so sroce speaks the wire with rxe across real NICs.
if [ "${1:-}" != guest ]; then
	. "$(dirname "$0")/lib.sh"
	pair_run --timeout 600 -- bash "$0" guest ::: bash "$0" guest
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

modprobe rdma_ucm
check "modprobe sroce" modprobe sroce
check "sroce0 on $VM_IF" rdma link add sroce0 type sroce netdev "$VM_IF"
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

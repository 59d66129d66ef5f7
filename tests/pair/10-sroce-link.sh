#!/usr/bin/env bash
# Two guests on one 1500-MTU wire: each gets its name, MAC and address, pings
# the other, and adds a sroce device on its wire NIC, which shows PORT_ACTIVE,
# active_mtu 1024 and the GID of its own IPv4 address. The guests swap their
# GIDs through the shared folder, and IP traffic still flows with both devices
# up. RDMA data between the two sroce devices comes with the transport: not
# tested here (20-rxe-pingpong tests the wire with rdma_rxe).
if [ "${1:-}" != guest ]; then
	. "$(dirname "$0")/lib.sh"
	pair_run --timeout 300 -- bash "$0" guest ::: bash "$0" guest
	exit
fi

. "$(dirname "$0")/../vm/lib.sh"
[ "$VM_NAME" = a ] && me=1 peer=2 || me=2 peer=1

check "hostname vm-$VM_NAME" test "$(hostname)" = "vm-$VM_NAME"
check "$VM_IF has MAC 52:54:00:77:00:0$me" grep -qx "52:54:00:77:00:0$me" "/sys/class/net/$VM_IF/address"
check "$VM_IF has MTU 1500" grep -qx 1500 "/sys/class/net/$VM_IF/mtu"
check "$VM_IF is up with $VM_IP/24" sh -c "ip -4 -o addr show dev $VM_IF up | grep -q ' $VM_IP/24 '"
check "vm-$VM_PEER_NAME answers ping" vm-pair-wait-peer 120
check "ping vm-$VM_PEER_NAME by name" busybox ping -c 3 -W 5 "vm-$VM_PEER_NAME"
check "the peer's MAC 52:54:00:77:00:0$peer in the neighbour table" \
	sh -c "ip neigh show $VM_PEER_IP | grep -q 'lladdr 52:54:00:77:00:0$peer'"

check "modprobe sroce" modprobe sroce
check "rdma link add sroce0 type sroce netdev $VM_IF" rdma link add sroce0 type sroce netdev "$VM_IF"
check "rdma link show: sroce0 on $VM_IF" sh -c "rdma link show | grep -qE 'sroce0/1 .*netdev $VM_IF'"
info() { ibv_devinfo -v -d sroce0 2>&1; }
# ib_core fills the GID table from the addresses asynchronously.
has_gid() { info | grep -qE "GID\[.*\]:[[:space:]]*::ffff:$VM_IP([^0-9]|\$)"; }
check "GID ::ffff:$VM_IP" wait_until 20 has_gid
out=$(info)
log "$out" | grep -E 'hca_id|state:|active_mtu|GID\['
check "sroce0 is PORT_ACTIVE" grep -q 'state:.*PORT_ACTIVE' <<<"$out"
check "active_mtu 1024 on the 1500-MTU wire" grep -q 'active_mtu:.*1024' <<<"$out"

# Both devices exist at once: each publishes its GID, reads the peer's.
gid=$(grep -oE "::ffff:$VM_IP([^0-9]|\$)" <<<"$out" | head -n 1 | tr -d ', ')
vm-pair-signal "gid-$VM_NAME" "$gid"
peer_gid=$(vm-pair-wait "gid-$VM_PEER_NAME" 120)
check "peer's sroce0 has GID ::ffff:$VM_PEER_IP (got '$peer_gid')" test "$peer_gid" = "::ffff:$VM_PEER_IP"
check "ping still works with both sroce devices up" busybox ping -c 2 -W 5 "$VM_PEER_IP"
# Neither removes its device while the other still checks.
vm-pair-signal "done-$VM_NAME"
check "vm-$VM_PEER_NAME finished its checks" vm-pair-wait "done-$VM_PEER_NAME" 120

check "rdma link delete sroce0" rdma link delete sroce0
check "rmmod sroce" rmmod sroce
finish

#!/usr/bin/env bash
# RDMA between two kernels over the wire (1500 MTU): rdma_rxe in both guests,
# ibv_rc_pingpong server in vm-a, client in vm-b, on the GID of each guest's
# IPv4 address, with --chk validating every received buffer. 4 KiB messages
# at path MTU 1024 are four packets each.
if [ "${1:-}" != guest ]; then
	. "$(dirname "$0")/lib.sh"
	pair_run --timeout 300 -- bash "$0" guest ::: bash "$0" guest
	exit
fi

. "$(dirname "$0")/../vm/lib.sh"
iters=100

# rxe's ICRC needs a crc32 implementation that works under TCG (FACTS.md).
modprobe crc32_generic
check "modprobe rdma_rxe" modprobe rdma_rxe
check "rdma link add rxe0 type rxe netdev $VM_IF" rdma link add rxe0 type rxe netdev "$VM_IF"

# The index of the GID ::ffff:VM_IP, as sysfs writes it.
IFS=. read -r o1 o2 o3 o4 <<<"$VM_IP"
want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$o1" "$o2" "$o3" "$o4")
gid_index() {
	local i g
	for i in 0 1 2 3 4 5 6 7; do
		read -r g <"/sys/class/infiniband/rxe0/ports/1/gids/$i" 2>/dev/null || continue
		[ "$g" = "$want" ] && echo "$i" && return 0
	done
	return 1
}
check "rxe0 has GID ::ffff:$VM_IP" wait_until 20 gid_index
idx=$(gid_index)
log "  GID index $idx"
check "rxe0 PORT_ACTIVE, active_mtu 1024" sh -c \
	'ibv_devinfo -d rxe0 | grep -q "state:.*PORT_ACTIVE" && ibv_devinfo -d rxe0 | grep -q "active_mtu:.*1024"'

pp=(ibv_rc_pingpong -d rxe0 -g "$idx" --chk -n "$iters")
if [ "$VM_NAME" = a ]; then
	"${pp[@]}" >/tmp/pp.log 2>&1 &
	pid=$!
	check "server listening on TCP 18515" wait_until 30 sh -c "ss -Hltn 'sport = :18515' | grep -q ."
	vm-pair-signal server-ready
	wait "$pid"
	rc=$?
	sed 's/^/  server: /' /tmp/pp.log
	check "server: exit 0" test "$rc" -eq 0
	check "server: $iters iterations" grep -q "^$iters iters in" /tmp/pp.log
	check "server: the client's GID is ::ffff:$VM_PEER_IP" grep -q "remote address:.*GID ::ffff:$VM_PEER_IP\$" /tmp/pp.log
else
	check "server is ready" vm-pair-wait server-ready 120
	"${pp[@]}" "$VM_PEER_IP" >/tmp/pp.log 2>&1
	rc=$?
	sed 's/^/  client: /' /tmp/pp.log
	check "client: exit 0" test "$rc" -eq 0
	check "client: $iters iterations" grep -q "^$iters iters in" /tmp/pp.log
	check "client: the server's GID is ::ffff:$VM_PEER_IP" grep -q "remote address:.*GID ::ffff:$VM_PEER_IP\$" /tmp/pp.log
fi

check "rdma link delete rxe0" rdma link delete rxe0
rmmod rdma_rxe
finish

#!/usr/bin/env bash
# NVMe over Fabrics across the virtio-net wire (1500 MTU, path MTU 1024):
# the kernel's nvmet-rdma target and nvme-rdma host in two guests, so the
# host's fast registrations, the target's READs and WRITEs into them and
# its SEND with invalidate cross a real NIC. Three rounds, fio with crc32c
# verification at depth 1 and 32 in each:
#   1. sroce target (vm-a), sroce host (vm-b);
#   2. sroce target (vm-a), rdma_rxe host (vm-b): rxe takes sroce's SEND
#      with invalidate;
#   3. rdma_rxe target (vm-b), sroce host (vm-a): sroce takes rxe's, and
#      counts the invalidations.
# Each ends with disconnect and target teardown; vm-a ends with rdma link
# delete and rmmod.
if [ "${1:-}" != guest ]; then
	. "$(dirname "$0")/lib.sh"
	pair_run --timeout $((1500 * scale)) -- bash "$0" guest ::: bash "$0" guest
	exit
fi

. "$(dirname "$0")/../vm/lib.sh"

mb=${NVMEOF_WIRE_MB:-16}
hostnqn=nqn.2014-08.org.nvmexpress:uuid:20202020-0000-4000-8000-00000000000$VM_NAME

# serve ROUND: this guest's target, until the peer's host is done.
serve() {
	local nqn=nqn.2026-11.io.sroce:pair-$1
	check "$1: nvmet-rdma target on $VM_IP" nvmet_up "$nqn" "$VM_IP" "$mb"
	vm-pair-signal "$1-target"
	vm-pair-wait "$1-host-done" $((900 * vm_scale)) >/dev/null
	check "$1: target teardown" nvmet_down "$nqn"
}

# use ROUND DEV: this guest's host through DEV, against the peer's target.
use() {
	local round=$1 dev=$2 nqn=nqn.2026-11.io.sroce:pair-$1 ns spec
	vm-pair-wait "$round-target" $((300 * vm_scale)) >/dev/null
	modprobe nvme-rdma
	check "$round: nvme connect -t rdma to $VM_PEER_IP through $dev" \
		nvme connect -t rdma -a "$VM_PEER_IP" -s 4420 -n "$nqn" --hostnqn="$hostnqn"
	check "$round: the namespace appears" wait_until 30 nvme_ns_dev "$nqn"
	ns=$(nvme_ns_dev "$nqn")
	for spec in "seq-qd1 write 64k 1" "rand-qd32 randwrite 64k 32"; do
		set -- $spec
		check "$round: fio $1, ${mb} MiB $2 bs $3 depth $4, verified on read" \
			nvme_fio "$round-$1" "$ns" "$mb" "$2" "$3" "$4"
		nvme_fio_rates "$round-$1"
	done
	check "$round: nvme disconnect" nvme disconnect -n "$nqn"
	check "$round: the controller is gone" wait_until 30 nvme_no_ctrl "$nqn"
	modprobe -r nvme-rdma
	vm-pair-signal "$round-host-done"
}

link_stat() { rdma statistic show link "$1/1" | grep -o " $2 [0-9]*" | awk '{ print $2 }'; }

modprobe rdma_ucm
modprobe crc32_generic # rxe's ICRC under TCG (FACTS.md)
check "modprobe sroce" modprobe sroce
check "sroce0 on $VM_IF" rdma link add sroce0 type sroce netdev "$VM_IF"
check "GID ::ffff:$VM_IP" wait_until 20 gid_index sroce0 "$VM_IP"
check "vm-$VM_PEER_NAME answers ping" vm-pair-wait-peer 120

if [ "$VM_NAME" = a ]; then
	serve sroce-sroce
	serve rxe-host
	before=$(link_stat sroce0 remote_invs)
	use rxe-target sroce0
	regs=$(link_stat sroce0 fast_regs) rinv=$(link_stat sroce0 remote_invs)
	log "    sroce0: fast_regs $regs, remote_invs $((rinv - before)) from rxe"
	check "rxe-target: rxe's SEND with invalidate ended sroce's registrations" \
		test $((rinv - before)) -gt $((2 * mb * 8))
	check "vm-a: nothing of the rounds left on sroce0 (but pool CQs)" wait_until 20 counts_zero_but_cqs sroce0
	check "vm-a: rdma link delete sroce0" rdma link delete sroce0
	check "vm-a: rmmod sroce" wait_until 20 rmmod sroce
else
	use sroce-sroce sroce0
	regs=$(link_stat sroce0 fast_regs) rinv=$(link_stat sroce0 remote_invs)
	log "    sroce0: fast_regs $regs remote_invs $rinv"
	check "sroce-sroce: every registration ended by the target's SEND with invalidate" \
		test "${regs:-0}" -gt $((2 * mb * 8)) -a "${rinv:-0}" = "${regs:-x}"
	check "vm-b: sroce0 deleted" rdma link delete sroce0
	check "vm-b: rxe0 on $VM_IF" sh -c "modprobe rdma_rxe && rdma link add rxe0 type rxe netdev $VM_IF"
	check "vm-b: rxe0 has GID ::ffff:$VM_IP" wait_until 20 gid_index rxe0 "$VM_IP"
	use rxe-host rxe0
	serve rxe-target
	rdma link delete rxe0
fi
check "kernel log clean (no WARNING, BUG or splat)" sh -c '! dmesg | grep -Eq "WARNING:|BUG:|UBSAN|KASAN|Oops"'
finish

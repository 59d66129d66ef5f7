#!/usr/bin/env bash
# NVMe over Fabrics on sroce: the kernel's nvmet-rdma target, configured
# through configfs on a memory-backed null_blk, and the kernel's nvme-rdma
# host connecting with nvme-cli. Both are in init_net (the kernel's
# rdma_cm users live there) on one sroce device, so the queues run through
# the device's same-host path. The host registers each I/O's pages with
# IB_WR_REG_MR, the target READs and WRITEs them and answers with SEND
# with invalidate, and the host invalidates locally what it must: fio with
# crc32c verification at queue depths 1 and 32, writing and reading. Then
# disconnect, target teardown, rdma link delete and rmmod, all clean.
# NVMEOF_MB sets the MiB per fio run (default 64, 16 on a debug kernel;
# make test-slow: 1024, tests/vm/slow/93-nvmeof-full.sh).
# vm-timeout: 900
. "$(dirname "$0")/lib.sh"

mb=${NVMEOF_MB:-$((vm_scale > 1 ? 16 : 64))}
nqn=nqn.2026-11.io.sroce:test93
ip link add veth-n1 type veth peer name veth-n2
ip link set veth-n1 up
ip link set veth-n2 up
ip addr add 10.0.93.1/24 dev veth-n1
modprobe sroce
check "sroce1 on veth-n1" rdma link add sroce1 type sroce netdev veth-n1
check "sroce1's IPv4 GID" wait_until 10 gid_index sroce1 10.0.93.1
check "sroce1 reports MEM_MGT_EXTENSIONS" sh -c 'ibv_devinfo -v -d sroce1 | grep -q MEM_MGT_EXTENSIONS'

# The target: a memory-backed null_blk of the run size (rounded up to GiB).
check "nvmet-rdma target: subsystem, null_blk namespace, RDMA port (configfs)" \
	nvmet_up "$nqn" 10.0.93.1 "$mb"
check "the target listens through rdma_cm" wait_until 10 sh -c 'rdma res show cm_id | grep -q "src-addr 10.0.93.1:4420"'

check "nvme-rdma" modprobe nvme-rdma
hostnqn=nqn.2014-08.org.nvmexpress:uuid:93939393-0000-4000-8000-000000000093
check "nvme connect -t rdma" nvme connect -t rdma -a 10.0.93.1 -s 4420 -n "$nqn" --hostnqn="$hostnqn"
check "the controller appears, transport rdma" wait_until 30 nvme_ctrl "$nqn"
check "its namespace appears" wait_until 30 nvme_ns_dev "$nqn"
dev=$(nvme_ns_dev "$nqn")
check "$dev is a block device of $mb MiB or more" sh -c "[ -b $dev ] && [ \$(blockdev --getsize64 $dev) -ge $((mb * 1048576)) ]"

# fio: write with crc32c in every block, read it all back and verify;
# sequential at depth 1, random at depth 32 (64 KiB blocks: 16 pages per
# registration, and in-capsule data is only for small writes).
for spec in "seq-qd1 write 4k 1" "rand-qd32 randwrite 64k 32" "seq-qd32 write 128k 32" "rand-qd1 randwrite 16k 1"; do
	set -- $spec
	check "fio $1: ${mb} MiB $2 bs $3 depth $4, every block verified on read" nvme_fio "$1" "$dev" "$mb" "$2" "$3" "$4"
	nvme_fio_rates "$1"
done
# Each I/O's pages were registered by work request, and ended by the
# target's SEND with invalidate (or by the host's LOCAL_INV).
link_stat() { rdma statistic show link sroce1/1 | grep -o " $1 [0-9]*" | awk '{ print $2 }'; }
regs=$(link_stat fast_regs) rinv=$(link_stat remote_invs) linv=$(link_stat local_invs)
log "    fast_regs $regs remote_invs $rinv local_invs $linv"
check "REG_MR per I/O: at least one per 128 KiB read" test "${regs:-0}" -ge $((4 * mb * 8))
check "every registration invalidated, most by the target" \
	test $((${rinv:-0} + ${linv:-0})) -ge "${regs:-1}" -a "${rinv:-0}" -gt 0

check "nvme disconnect" nvme disconnect -n "$nqn"
check "the controller is gone" wait_until 30 nvme_no_ctrl "$nqn"
check "modprobe -r nvme-rdma" modprobe -r nvme-rdma
check "target teardown: configfs, nvmet-rdma, null_blk" nvmet_down "$nqn"
# nvmet-rdma's CQs come from ib_core's pool, kept until the device goes.
check "no QP, MR, SRQ, AH or packet of theirs left on sroce1" wait_until 20 counts_zero_but_cqs sroce1
log "    $(sroce_counts sroce1 | head -9 | paste -sd' ')"
check "rdma link delete sroce1" rdma link delete sroce1
check "rmmod sroce" wait_until 20 rmmod sroce
ip link del veth-n1
check "kernel log clean (no WARNING, BUG or splat)" sh -c '! dmesg | grep -Eq "WARNING:|BUG:|UBSAN|KASAN|Oops"'
finish

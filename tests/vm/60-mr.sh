#!/usr/bin/env bash
# Memory regions: registration of every size and access combination through
# libibverbs, exact pinning and unpinning (VmPin and the device's debugfs
# counts), cleanup by process exit and by device removal, the DMA MR a
# kernel consumer (ib_srp) gets from ib_alloc_pd, and the same outcomes as
# rdma_rxe for every flag combination and error case.
. "$(dirname "$0")/lib.sh"

dbg=/sys/kernel/debug/sroce/sroce0/counts
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
count_is() { grep -qx "$1 $2" "$dbg"; }
# ib_mad's PD holds one DMA MR on every device (no pages).
nothing_held() { count_is mrs 1 && count_is pinned_pages 0; }

make_veth veth0 veth1
modprobe sroce
rdma link add sroce0 type sroce netdev veth0
check "debugfs counts: only ib_mad's DMA MR, nothing pinned" wait_until 5 nothing_held
check "query_device reports MR limits" sh -c 'ibv_devinfo -v -d sroce0 | grep -qE "max_mr:[[:space:]]+65536"'
check "sizes to 64 MiB, unaligned buffers, keys, exact pinning" "$PROGS/sroce_mr" check sroce0
check "reg_mr driver data: FLUSH rights taken, bad variants get their errno" "$PROGS/sroce_mr" driverdata sroce0
check "1000 reg/dereg cycles" "$PROGS/sroce_mr" cycle sroce0 1000
check "nothing registered or pinned after the cycles" nothing_held
check "a process exits with 50 MRs registered" "$PROGS/sroce_mr" leak sroce0 50
check "its MRs were released and unpinned" wait_until 5 nothing_held
"$PROGS/sroce_mr" matrix sroce0 >/tmp/mr-sroce.txt
sed 's/^/    sroce0 /' /tmp/mr-sroce.txt
check "every access combination answered" test "$(grep -c '^access' /tmp/mr-sroce.txt)" -eq 32
check "REMOTE_WRITE without LOCAL_WRITE is EINVAL" grep -qx 'access 0x02: EINVAL' /tmp/mr-sroce.txt
check "REMOTE_ATOMIC without LOCAL_WRITE is EINVAL" grep -qx 'access 0x08: EINVAL' /tmp/mr-sroce.txt
check "all rights is ok" grep -qx 'access 0x1f: ok' /tmp/mr-sroce.txt

# A kernel consumer: ib_srp allocates a PD with an unsafe global rkey on
# every device, which ib_alloc_pd gets from get_dma_mr.
if modprobe ib_srp 2>/dev/null; then
	check "ib_srp's PD has a DMA MR (no pages)" wait_until 5 sh -c "grep -qx 'mrs 2' $dbg && grep -qx 'pinned_pages 0' $dbg"
	check "rmmod ib_srp" rmmod ib_srp
	check "its DMA MR is gone" nothing_held
else
	fail "modprobe ib_srp"
fi

# Removal while a process holds MRs: ib_core deregisters them for it.
rm -f /tmp/mr.ready
"$PROGS/sroce_mr" hold sroce0 /tmp/mr.ready &
pid=$!
if wait_until 20 test -e /tmp/mr.ready; then
	check "two MRs are pinned" count_is mrs 3
	check "rdma link delete with MRs registered" rdma link delete sroce0
	check "sroce0 gone" wait_until 20 sh -c '! rdma link show | grep -q sroce0'
	kill -USR1 "$pid"
	wait "$pid"
	check "the holder cleaned up after removal" test $? -eq 0
else
	fail "MR holder did not start"
	kill "$pid"
	rdma link delete sroce0
fi
check "rmmod sroce" rmmod sroce

# rdma_rxe on the same veth (sroce is gone: rxe needs UDP 4791) must give
# the same outcome for every combination and error case.
modprobe crc32_generic 2>/dev/null
modprobe rdma_rxe
rdma link add rxe0 type rxe netdev veth0
"$PROGS/sroce_mr" matrix rxe0 >/tmp/mr-rxe.txt
if diff -u /tmp/mr-rxe.txt /tmp/mr-sroce.txt; then
	ok "sroce and rxe agree on $(wc -l </tmp/mr-rxe.txt) registrations"
else
	fail "sroce and rxe differ (diff above: - rxe, + sroce)"
fi
rdma link delete rxe0
rmmod rdma_rxe 2>/dev/null
ip link del veth0
finish

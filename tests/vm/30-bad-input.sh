#!/usr/bin/env bash
# Bad input from the administrator and from a mismatched provider: each gets
# a clear error, and nothing is left half-done.
. "$(dirname "$0")/lib.sh"

make_veth veth0 veth1
check "modprobe sroce" modprobe sroce
check_fails "netdev that does not exist" "nosuch0|No such device|not found|Wrong" \
	rdma link add sroceX type sroce netdev nosuch0
check_fails "loopback is not an Ethernet device (EPERM)" "not permitted" \
	rdma link add sroceL type sroce netdev lo
check "add sroce0 on veth0" rdma link add sroce0 type sroce netdev veth0
check_fails "same netdev twice is EEXIST" "exists" rdma link add sroce1 type sroce netdev veth0
# ib_core's name allocator answers ENFILE for a taken name.
check_fails "a device name already in use is refused" "exists|in system" \
	rdma link add sroce0 type sroce netdev veth1
check "veth1 is still free for a device after the failures" rdma link add sroce1 type sroce netdev veth1
check "only sroce0 and sroce1 exist" sh -c '[ "$(rdma link show | grep -c sroce)" = 2 ]'
check "delete sroce1" rdma link delete sroce1
check_fails "deleting twice fails" "." rdma link delete sroce1

# Concurrent adds on one netdev: exactly one wins, the rest get EEXIST.
for i in 1 2 3 4 5 6; do rdma link add "race$i" type sroce netdev veth1 2>/dev/null & done
wait
check "six racing adds on veth1 made exactly one device" \
	sh -c '[ "$(rdma link show | grep -c "netdev veth1")" = 1 ]'
rdma link show | awk '/netdev veth1/ {split($2, a, "/"); print a[1]}' | xargs -r -n1 rdma link delete

# Add/delete cycles: a leaked reference would hang a later delete or rmmod.
cycles=0
for i in $(seq 10); do
	rdma link add cyc0 type sroce netdev veth1 && rdma link delete cyc0 && cycles=$((cycles + 1))
done
check "10 add/delete cycles" test "$cycles" -eq 10

# A provider built for another sroce ABI: the kernel refuses the context
# with EPROTO and the provider says why.
drv=/etc/libibverbs.d/sroce.driver
cp "$drv" /tmp/sroce.driver.saved
echo "driver $TOP/build/user/abi-mismatch/libsroce" > "$drv"
# ibv_devinfo, unlike sroce_ctx, does not link libsroce: the .driver file
# decides which provider it loads.
check_fails "mismatched provider cannot open the device, and says why" \
	"another sroce ABI" ibv_devinfo -d sroce0
# The versions from the ABI header: the mismatch provider claims one more.
abi=$(sed -n 's/^#define SROCE_ABI_VERSION \([0-9]*\).*/\1/p' "$TOP/abi/sroce-abi.h")
check "the ABI header names a version" test -n "$abi"
check "kernel logs the two versions" \
	sh -c "dmesg | grep -q 'provider ABI $((abi + 1)), kernel ABI $abi'"
# A refused context keeps nothing of its caller: Linux's ioctl GET_CONTEXT
# frees it without dropping the task reference the restrack entry holds,
# and every refusal leaked a task_struct (kmod/linux/verbs.c,
# sroce_alloc_ucontext). 100 refused opens; the slab's count of task_structs
# must come back near where it was (SLUB's count is approximate).
tasks() { awk '$1 == "task_struct" { print $2 }' /proc/slabinfo; }
tasks_back() { [ "$(tasks)" -le $((before + 40)) ]; }
before=$(tasks)
for i in $(seq 100); do ibv_devinfo -d sroce0 >/dev/null 2>&1; done
check "100 refused contexts leave no task_struct behind ($before before)" wait_until 10 tasks_back
log "  task_structs: $before before, $(tasks) after"
cp /tmp/sroce.driver.saved "$drv"
check "the matching provider opens it again" "$PROGS/sroce_ctx" open sroce0

check "rmmod sroce" rmmod sroce
ip link del veth0
finish

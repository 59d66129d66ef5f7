#!/usr/bin/env bash
# Kernel memory is charged to its user (Documentation/security.md): an
# unprivileged process in a 128 MiB memory cgroup creates the largest CQs
# and QPs the device reports until a verb refuses, which must be a clean
# ENOMEM (no OOM kill, no kernel warning) well before 10 QPs (about 500 MiB
# of kernel memory: uncharged, they would all come).
# While it still holds everything, root runs rdma_cm traffic (rping with
# data verification) between two namespaces on the same devices.
# vm-timeout: 900
. "$(dirname "$0")/lib.sh"

cg=/sys/fs/cgroup
mountpoint -q $cg || mount -t cgroup2 none $cg
two_hosts 9 1500
modprobe sroce
modprobe rdma_ucm
check "sroce1 in h1, sroce2 in h2" sroce_on_hosts 9
chmod 666 /dev/infiniband/uverbs*

check "the memory controller is available" sh -c "echo +memory > $cg/cgroup.subtree_control"
mkdir -p $cg/sroce-user
echo 128M >$cg/sroce-user/memory.max
echo 0 >$cg/sroce-user/memory.swap.max 2>/dev/null

rm -f /tmp/limits.ready
# Into the cgroup first: ip netns exec mounts a sysfs of its own over /sys.
sh -c "echo \$\$ > $cg/sroce-user/cgroup.procs && exec ip netns exec h1 \
	setpriv --reuid=65534 --regid=65534 --clear-groups $PROGS/sroce_limits sroce1 /tmp/limits.ready 10" \
	>/tmp/limits.out 2>&1 &
holder=$!
wait_until 400 sh -c "test -e /tmp/limits.ready || ! kill -0 $holder"
if test -e /tmp/limits.ready; then
	ok "the user's objects were refused"
else
	fail "no refusal"
	kill -9 $holder 2>/dev/null
fi
sed 's/^/    /' /tmp/limits.out | grep -v '^    ok:' | head -8
check "the refusal was ENOMEM" grep -qE '^refused: create_(cq|qp): Cannot allocate memory' /tmp/limits.out
check "it came from the memory cgroup" sh -c "awk '\$1 == \"max\" && \$2 > 0 { f = 1 } END { exit !f }' $cg/sroce-user/memory.events"
check "no OOM kill" sh -c "grep -qx 'oom_kill 0' $cg/sroce-user/memory.events"
log "  charged: $(($(cat $cg/sroce-user/memory.current) >> 20)) MiB, kernel $(awk '$1 == "kernel" || $1 == "vmalloc" { printf "%s %d MiB ", $1, $2 / 1048576 }' $cg/sroce-user/memory.stat)"

# Root, outside that cgroup, while the user holds its objects.
l0=$(cm_listeners)
ip netns exec h1 timeout 120 rping -s -a 10.0.9.1 -C 20 -V >/tmp/rping.server 2>&1 &
spid=$!
wait_until 30 cm_listening "$l0"
check "root's rping -V over rdma_cm while the user holds its objects" \
	ip netns exec h2 timeout 120 rping -c -a 10.0.9.1 -C 20 -V
wait $spid
check "rping server" test $? -eq 0
check "the user still holds its objects" kill -0 $holder

kill -USR1 $holder
wait $holder
check "the user's objects destroyed cleanly" test $? -eq 0
check "sroce1 back to ib_mad's objects" wait_until 10 counts_zero sroce1
rmdir $cg/sroce-user
ip netns exec h1 rdma link delete sroce1
ip netns exec h2 rdma link delete sroce2
ip netns del h1
ip netns del h2
cleanup_sroce
finish

#!/usr/bin/env bash
# Removal while a process holds a context: rmmod, `rdma link delete` and
# deleting the netdev all disassociate the context; the process sees errors
# and a DEVICE_FATAL event, cleans up, and the kernel stays clean.
. "$(dirname "$0")/lib.sh"

# hold_then REMOVAL-CMD...: start a context holder, run the removal, then
# let the holder check what it sees.
hold_then() {
	local what=$1 ready=/tmp/ctx.ready pid rc
	shift
	rm -f "$ready"
	"$PROGS/sroce_ctx" hold sroce0 "$ready" &
	pid=$!
	if ! wait_until 20 test -e "$ready"; then
		fail "$what: holder did not start"
		kill "$pid"
		return
	fi
	check "$what: removal succeeds with a context open" "$@"
	check "$what: device gone" wait_until 20 sh -c '! rdma link show | grep -q sroce0'
	kill -USR1 "$pid"
	wait "$pid"
	rc=$?
	if [ $rc -eq 0 ]; then ok "$what: the process saw errors and cleaned up"; else fail "$what: holder exit $rc"; fi
}

make_veth veth0 veth1
# With the pollers (sq_poll=Y: auto starts none on 2 vCPUs), so that a
# removal also takes the open contexts off their device's poller.
modprobe sroce sq_poll=Y
rdma link add sroce0 type sroce netdev veth0
hold_then "rmmod" rmmod sroce
check "module unloaded" sh -c '! grep -q "^sroce " /proc/modules'

modprobe sroce sq_poll=Y
rdma link add sroce0 type sroce netdev veth0
hold_then "rdma link delete" rdma link delete sroce0

rdma link add sroce0 type sroce netdev veth0
hold_then "netdev deleted" ip link del veth0
check "rmmod after netdev removal" rmmod sroce

# Several devices and contexts, then rmmod at once.
make_veth veth0 veth1
make_veth veth2 veth3
modprobe sroce sq_poll=Y
rdma link add sroce0 type sroce netdev veth0
rdma link add sroce1 type sroce netdev veth2
check "rmmod with two devices attached" rmmod sroce
check "both devices gone" sh -c '! rdma link show | grep -q sroce'
ip link del veth0
ip link del veth2
finish

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

# A path never holds its GID's netdev: deleting a VLAN whose GID an AH
# uses completes while the AH lives (it hung until the AH was destroyed).
make_veth veth0 veth1
modprobe sroce
modprobe 8021q
ip link add link veth0 name veth0.10 type vlan id 10
ip addr add 10.10.0.1/24 dev veth0.10
ip link set veth0.10 up
rdma link add sroce0 type sroce netdev veth0
ready=/tmp/ah.ready
rm -f "$ready"
gidx=""
wait_until 20 gid_index sroce0 10.10.0.1 && gidx=$(gid_index sroce0 10.10.0.1)
if [ -z "$gidx" ]; then
	fail "VLAN: no GID for 10.10.0.1"
else
	"$PROGS/sroce_ctx" ah sroce0 "$ready" "$gidx" &
	ahpid=$!
	if wait_until 20 test -e "$ready"; then
		ip link del veth0.10 &
		delpid=$!
		check "VLAN: deleted while an AH uses its GID" wait_until 20 sh -c "! kill -0 $delpid"
		kill -USR1 "$ahpid"
		wait "$delpid"
		check "VLAN: the AH is destroyed after its netdev went" wait "$ahpid"
	else
		fail "VLAN: AH holder did not start"
		kill "$ahpid"
	fi
fi
check "VLAN: no netdev waits for a reference" sh -c '! dmesg | grep -q "waiting for veth0.10 to become free"'
rdma link delete sroce0

# Moving the device to another namespace and back (exclusive mode) runs
# enable_driver again: one debugfs directory, gone with the device (a
# second one failed and left the first behind, naming the freed device).
rdma system set netns exclusive
rdma link add sroce0 type sroce netdev veth0
ip netns add moved
check "netns: device moved" rdma dev set sroce0 netns moved
check "netns: device gone from init_net" sh -c '! rdma dev show sroce0'
ip netns del moved # its devices come back to init_net
check "netns: device back in init_net" wait_until 20 rdma dev show sroce0
check "netns: debugfs directory kept" test -e /sys/kernel/debug/sroce/sroce0/counts
check "netns: no second debugfs directory" sh -c '! dmesg | grep -q "sroce0.*already present"'
rdma link delete sroce0
check "netns: debugfs directory gone with the device" sh -c '! test -e /sys/kernel/debug/sroce/sroce0'
rdma system set netns shared
ip link del veth0
rmmod sroce

# A netdev deleted, or moved to another namespace, while `rdma link add`
# registers its device (no rtnl is held there; test_add_delay_ms holds the
# add in that window): the netdev's event could not reach the device. A
# deletion is announced again until the netdev is let go, but a move is
# not: the device stayed, bound to a netdev of another namespace. Now it
# goes once registered, as for an event that reached it.
modprobe sroce test_add_delay_ms=$(scaled_secs 2)000
ip netns add raced
for how in "del" "set netns raced"; do
	ip link add vrace0 type veth peer name vrace1
	ip link set vrace0 up
	rdma link add srace0 type sroce netdev vrace0 &
	addpid=$!
	sleep "$(scaled_secs 1)"
	ip link $how vrace0 &
	ippid=$!
	wait "$addpid"
	check "ip link $how during rdma link add: the netdev is let go" wait_until 30 sh -c "! kill -0 $ippid"
	check "ip link $how during rdma link add: the device went" \
		wait_until 20 sh -c '! rdma link show | grep -q srace0'
	rdma link delete srace0 2>/dev/null # on failure: lets the netdev go
	wait "$ippid"
	ip link del vrace1 2>/dev/null
done
ip netns del raced
echo 0 > /sys/module/sroce/parameters/test_add_delay_ms
rmmod sroce

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

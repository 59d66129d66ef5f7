#!/usr/bin/env bash
# Hostile packets on the wire: from namespace h2, a plain UDP socket on port
# 4791 (tests/vm/hostile_wire.py) plays the peer of unmodified
# ibv_rc_pingpong / ibv_ud_pingpong servers on sroce1 in h1 and sends
# crafted RoCEv2 packets at their live QPs: bad ICRC, truncated BTH,
# reserved opcode, unknown QPN, a PSN far out of window, a READ response
# without a request, an ACK of a PSN never sent, a payload beyond the path
# MTU, a zero-length WRITE and a WRITE with an invalid rkey to a QP without
# remote access, a 2 GiB READ request, UD with a wrong Q_Key, a UD datagram
# above every IB MTU (5000 bytes in a jumbo frame). The victim's answers are
# checked against the spec, drops against the debugfs counts. Afterwards a
# legitimate ping-pong works on the same device, nothing is left alive and
# the kernel log is clean.
# vm-timeout: 300
. "$(dirname "$0")/lib.sh"

two_hosts 10 9000
modprobe sroce
ip netns exec h1 rdma link add sroce1 type sroce netdev veth-h1
check "h1's IPv4 GID" wait_until 10 gid_index sroce1 10.0.10.1
g1=$(gid_index sroce1 10.0.10.1)
# `ip netns exec` mounts its own /sys: the attacker reads the counts here.
mkdir -p /tmp/dbg
mountpoint -q /tmp/dbg || mount -t debugfs none /tmp/dbg
counts=/tmp/dbg/sroce/sroce1/counts
check "debugfs counts readable" test -r $counts

port=19900
attack() { # attack MODE VICTIM_PROG ARGS...
	local mode=$1 vpid rc
	shift
	port=$((port + 1))
	ip netns exec h1 timeout 60 "$@" -d sroce1 -g "$g1" -p $port >/tmp/h.victim 2>&1 &
	vpid=$!
	ip netns exec h2 timeout 60 /usr/bin/python3 "$TOP/tests/vm/hostile_wire.py" "$mode" 10.0.10.1 $port \
		10.0.10.2 $counts >/tmp/h.attack 2>&1
	rc=$?
	sed 's/^/    /' /tmp/h.attack
	if [ $rc -eq 0 ]; then ok "$mode: every crafted packet handled as specified"; else fail "$mode (exit $rc)"; fi
	kill $vpid 2>/dev/null
	wait $vpid 2>/dev/null
	sed 's/^/    victim: /' /tmp/h.victim | grep -v address | tail -3
}

before=$(count_of sroce1 rx_pkts)
attack rc1 ibv_rc_pingpong -m 1024 -s 64 -n 2
attack rc2 ibv_rc_pingpong -m 1024 -s 64 -n 2
attack rc3 ibv_rc_pingpong -m 1024 -s 64 -n 2
attack rc4 ibv_rc_pingpong -m 1024 -s 64 -n 2
attack ud ibv_ud_pingpong -s 64 -n 2
after=$(count_of sroce1 rx_pkts)
check "the device received the crafted packets ($((after - before)))" test $((after - before)) -ge 15
sroce_counts sroce1 | grep '^rx_' | tr '\n' ' '
log ""
check "h1: no victim QP left alive" wait_until 20 counts_zero sroce1
check "kernel log: at most a few rate-limited sroce lines" \
	sh -c "[ \$(dmesg | grep -c sroce) -lt 20 ]"

# The same device still moves data with a legitimate peer.
ip netns exec h2 rdma link add sroce2 type sroce netdev veth-h2
check "h2's IPv4 GID" wait_until 10 gid_index sroce2 10.0.10.2
g2=$(gid_index sroce2 10.0.10.2)
port=$((port + 1))
ip netns exec h1 timeout 60 ibv_rc_pingpong -d sroce1 -g "$g1" -p $port --chk -n 100 -s 4000 >/tmp/h.srv 2>&1 &
spid=$!
wait_until 20 sh -c "ip netns exec h1 ss -Hltn 'sport = :$port' | grep -q ."
check "legitimate rc_pingpong --chk after the attacks" \
	ip netns exec h2 timeout 60 ibv_rc_pingpong -d sroce2 -g "$g2" -p $port --chk -n 100 -s 4000 10.0.10.1
check "its server exits 0" wait $spid
check "h1: nothing left alive" wait_until 20 counts_zero sroce1
check "h2: nothing left alive" wait_until 20 counts_zero sroce2
umount /tmp/dbg
ip netns del h1
ip netns del h2
check "devices gone with their namespaces" wait_until 20 sh -c '! rdma link show | grep -q sroce'
check "rmmod sroce" wait_until 20 rmmod sroce
finish

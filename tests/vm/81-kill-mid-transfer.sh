#!/usr/bin/env bash
# Both ends of a transfer killed with SIGKILL mid-run (two namespaces, a
# sroce device each): every QP, CQ, MR, pinned page and packet in flight
# goes with them, the devices delete and sroce unloads. Rounds: WRITEs on 4
# QPs with the QPs exchanged over TCP, READs through rdma_cm, SENDs.
# vm-timeout: 300
. "$(dirname "$0")/lib.sh"

two_hosts 9 1500
modprobe sroce
modprobe rdma_ucm
check "sroce1 in h1, sroce2 in h2" sroce_on_hosts 9

port=19900
sent() { echo $(($(count_of sroce1 tx_pkts) + $(count_of sroce2 tx_pkts))); }
mid_transfer() { # mid_transfer TX: both ends pin memory, more than TX packets sent
	[ "$(count_of sroce1 pinned_pages)" -gt 0 ] && [ "$(count_of sroce2 pinned_pages)" -gt 0 ] &&
		[ "$(sent)" -gt "$1" ]
}
round() { # round NAME TOOL ARGS: start both ends, kill both mid-transfer
	local what=$1 tool=$2 spid cpid tx0 l0
	shift 2
	port=$((port + 1))
	l0=$(cm_listeners)
	ip netns exec h1 $tool -d sroce1 -x "$g1" -F -u 18 -p $port -D 60 "$@" >/tmp/k.server 2>&1 &
	spid=$!
	if [[ " $* " == *" -R "* ]]; then
		wait_until 30 cm_listening "$l0"
	else
		wait_until 30 sh -c "ip netns exec h1 ss -Hltn 'sport = :$port' | grep -q ."
	fi
	tx0=$(sent)
	ip netns exec h2 $tool -d sroce2 -x "$g2" -F -u 18 -p $port -D 60 "$@" 10.0.9.1 >/tmp/k.client 2>&1 &
	cpid=$!
	# Mid-transfer: memory pinned on both ends and packets moving.
	if wait_until 60 mid_transfer $((tx0 + 2000)); then
		ok "$what: transferring ($(count_of sroce1 pinned_pages) + $(count_of sroce2 pinned_pages) pages pinned, $(($(sent) - tx0)) packets sent)"
	else
		fail "$what: no transfer under way"
		tail -3 /tmp/k.server /tmp/k.client
	fi
	kill -9 $spid $cpid
	wait $spid $cpid 2>/dev/null
	check "$what: both killed, h1 has nothing left" wait_until 30 counts_zero sroce1
	check "$what: h2 has nothing left" wait_until 30 counts_zero sroce2
}

round "ib_write_bw, 4 QPs" ib_write_bw -q 4 -s 65536
round "ib_read_bw -R" ib_read_bw -R -s 65536
round "ib_send_bw" ib_send_bw -s 8192

check "rdma link delete sroce1" ip netns exec h1 rdma link delete sroce1
check "rdma link delete sroce2" ip netns exec h2 rdma link delete sroce2
ip netns del h1
ip netns del h2
check "rmmod sroce" wait_until 20 rmmod sroce
finish

#!/usr/bin/env bash
# Loopback trust (Documentation/transport.md, "Same-host packets"): sroce
# never sends through lo, so a UDP 4791 datagram arriving on lo came from a
# local socket and must not reach a QP. An unprivileged process
# (uid 65534) plays an ibv_rc_pingpong client whose GID is the server's own
# address, so the victim's QP is aimed at its own host, then sends a valid
# RC SEND (good ICRC, the expected PSN) to that QP: to the host's own
# address and to 127.0.0.1 / ::1, over IPv4 and IPv6. Each must be dropped
# and counted (rx_loopback) and the QP's expected PSN must not move.
# Then sroce's own same-host traffic still works: ibv_rc_pingpong --chk and
# rping between two QPs of one device in one namespace, IPv4 and IPv6, all
# through the device's local queue (tx_local/rx_local), none dropped. A
# local user's UD SEND to the broadcast and a multicast address (looped
# back on the netdev, not lo) is dropped too.
# vm-timeout: 300
. "$(dirname "$0")/lib.sh"

two_hosts 89 9000
ip -n h1 -6 addr add fd00:89::1/64 dev veth-h1 nodad
ip -n h2 -6 addr add fd00:89::2/64 dev veth-h2 nodad
modprobe sroce
check "sroce1 in h1" ip netns exec h1 rdma link add sroce1 type sroce netdev veth-h1
gid_index6() { # gid_index6 IBDEV IPV6
	local want f
	want=$(python3 -c 'import ipaddress, sys; print(ipaddress.ip_address(sys.argv[1]).exploded)' "$2")
	for f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		[ "$(cat "$f" 2>/dev/null)" = "$want" ] && basename "$f" && return 0
	done
	return 1
}
check "IPv4 GID" wait_until 10 gid_index sroce1 10.0.89.1
check "IPv6 GID" wait_until 10 gid_index6 sroce1 fd00:89::1
g4=$(gid_index sroce1 10.0.89.1)
g6=$(gid_index6 sroce1 fd00:89::1)
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
D=/sys/kernel/debug/sroce
cnt() { awk -v n="$2" '$1 == n { print $2 }' "$D/$1/counts"; }
mcnt() { awk -v n="$1" '$1 == n { print $2 }' "$D/counts"; }

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
FORGE=("${NOBODY[@]}" /usr/bin/python3 "$TOP/tests/vm/roce_forge.py")
check "the attacker is unprivileged" sh -c "[ \$(ip netns exec h1 ${NOBODY[*]} id -u) = 65534 ]"

# rq_psn QPN: the expected PSN of sroce1's QP QPN (rdma res show -dd).
rq_psn() {
	ip netns exec h1 rdma res show qp link sroce1 -dd |
		awk -v q="$1" '{ for (i = 1; i < NF; i++) { if ($i == "lqpn") l = $(i + 1); if ($i == "drv_rq_psn") p = $(i + 1) } if (l == q) print p }'
}

port=19890
# victim OWN_ADDR GID_INDEX LOOPBACK_ADDR: a pingpong server whose peer is
# its own address; forged SENDs at it to OWN_ADDR and to LOOPBACK_ADDR.
victim() {
	local own=$1 gidx=$2 lo=$3 vpid qpn psn p0 n0 m0 r0 to
	port=$((port + 1))
	# The victim must outlive every step; on the debug kernel timeout(1)
	# scales by itself (tests/vm/scaled/timeout).
	ip netns exec h1 timeout 60 ibv_rc_pingpong -d sroce1 -g "$gidx" -p $port -n 1 -s 64 >/tmp/lb.victim 2>&1 &
	vpid=$!
	read -r qpn psn < <(ip netns exec h1 "${FORGE[@]}" exchange 127.0.0.1 $port "$own")
	qpn=$((16#${qpn:-0}))
	if ! wait_until 10 sh -c "[ -n \"\$(ip netns exec h1 rdma res show qp link sroce1 -dd | grep \"lqpn $qpn .*drv_rq_psn 256 \")\" ]"; then
		fail "$own: victim QP $qpn not ready"
		kill $vpid 2>/dev/null
		wait $vpid 2>/dev/null
		return
	fi
	ok "$own: victim QP $qpn expects PSN $(rq_psn $qpn), its peer is its own address"
	for to in "$lo" "$own"; do
		p0=$(rq_psn $qpn)
		n0=$(cnt sroce1 rx_loopback)
		m0=$(mcnt rx_loopback)
		r0=$(cnt sroce1 rx_core_pkts)
		check "uid 65534 sends a valid RC SEND ($own > $to, PSN $p0) to QP $qpn" \
			ip netns exec h1 "${FORGE[@]}" send "$to" "$to" $qpn "$p0" send
		# The source must be the QP's peer for the core to take it: send
		# from the own address to the loopback address too.
		[ "$to" = "$lo" ] && ip netns exec h1 "${FORGE[@]}" send "$own" "$to" $qpn "$p0" send
		sleep 1
		check "$to: the victim is still running" kill -0 $vpid
		check "$to: the QP did not take it (expected PSN still $p0)" test "$(rq_psn $qpn)" = "$p0"
		check "$to: the core never saw it (rx_core_pkts unchanged)" test "$(cnt sroce1 rx_core_pkts)" = "$r0"
		if [ "$to" = "$own" ]; then
			check "$to: dropped on lo, counted as sroce1's rx_loopback" test "$(cnt sroce1 rx_loopback)" = $((n0 + 1))
			check "$to: and module-wide" test "$(mcnt rx_loopback)" = $((m0 + 1))
		else
			check "$to: dropped on lo, counted module-wide (rx_loopback +$(($(mcnt rx_loopback) - m0)))" test "$(mcnt rx_loopback)" -ge $((m0 + 1))
		fi
	done
	kill $vpid 2>/dev/null
	wait $vpid 2>/dev/null
}
victim 10.0.89.1 "$g4" 127.0.0.1
victim fd00:89::1 "$g6" ::1

# A datagram to a broadcast or multicast address loops back on the real
# netdev (PACKET_LOOPBACK), not lo: it reached QP1 (the connection
# manager's MADs) and UD QPs, which check no destination address.
for to in 10.0.89.255 224.0.0.1; do
	r0=$(cnt sroce1 rx_core_pkts)
	m0=$(mcnt rx_loopback)
	check "uid 65534 sends a UD SEND to QP1 with the GSI Q_Key, to $to" \
		ip netns exec h1 "${FORGE[@]}" send 10.0.89.1 "$to" 1 0 ud qkey=0x80010000
	sleep 1
	check "$to: the core never saw it (rx_core_pkts unchanged)" test "$(cnt sroce1 rx_core_pkts)" = "$r0"
	check "$to: dropped, counted module-wide as rx_loopback" test "$(mcnt rx_loopback)" -ge $((m0 + 1))
done

# sroce's own same-host traffic: two QPs of sroce1 talking through its own
# GID, and rdma_cm to its own address.
lb0=$(cnt sroce1 rx_loopback)
tl0=$(cnt sroce1 tx_local)
rl0=$(cnt sroce1 rx_local)
pp() { # pp GID_INDEX: ibv_rc_pingpong --chk, both ends on sroce1
	port=$((port + 1))
	ip netns exec h1 timeout 60 ibv_rc_pingpong -d sroce1 -g "$1" -p $port --chk -n 50 -s 4000 >/tmp/lb.srv 2>&1 &
	local spid=$! rc
	wait_until 20 sh -c "ip netns exec h1 ss -Hltn 'sport = :$port' | grep -q ."
	ip netns exec h1 timeout 60 ibv_rc_pingpong -d sroce1 -g "$1" -p $port --chk -n 50 -s 4000 127.0.0.1 >/tmp/lb.cli 2>&1
	rc=$?
	wait $spid && [ $rc -eq 0 ]
}
rp() { # rp ADDR: rping to sroce1's own address
	local l0 spid rc src
	l0=$(cm_listeners)
	ip netns exec h1 timeout 60 rping -s -a "$1" -C 10 >/tmp/lb.rs 2>&1 &
	spid=$!
	# A fixed second was not always enough on the debug kernel: a client
	# before the listener fails at once and leaves the server waiting.
	wait_until 30 cm_listening "$l0"
	ip netns exec h1 timeout 60 rping -c -a "$1" -C 10 -V >/tmp/lb.rc 2>&1
	rc=$?
	wait $spid
	src=$?
	[ $src -eq 0 ] && [ $rc -eq 0 ] && return 0
	echo "    server $src, client $rc"
	tail -4 /tmp/lb.rs | sed 's/^/    server: /'
	tail -4 /tmp/lb.rc | sed 's/^/    client: /'
	return 1
}
check "same host, IPv4 GID: ibv_rc_pingpong --chk" pp "$g4"
check "same host, IPv6 GID: ibv_rc_pingpong --chk" pp "$g6"
check "same host: rping -V to 10.0.89.1" rp 10.0.89.1
check "same host: rping -V to fd00:89::1" rp fd00:89::1
log "  tx_local +$(($(cnt sroce1 tx_local) - tl0)) rx_local +$(($(cnt sroce1 rx_local) - rl0))"
check "all of it through the local queue (tx_local = rx_local, > 400)" \
	sh -c "[ $(($(cnt sroce1 tx_local) - tl0)) -eq $(($(cnt sroce1 rx_local) - rl0)) ] && [ $(($(cnt sroce1 tx_local) - tl0)) -gt 400 ]"
check "none of it dropped as loopback" test "$(cnt sroce1 rx_loopback)" = "$lb0"
check "no local queue overflow" test "$(cnt sroce1 rx_local_full)" = 0
check "h1: nothing left alive" wait_until 20 counts_zero sroce1
ip netns del h1
ip netns del h2
check "device gone with its namespace" wait_until 20 sh -c '! rdma link show | grep -q sroce'
check "rmmod sroce" wait_until 20 rmmod sroce
finish

#!/usr/bin/env bash
# Per-QP counters through ib_core's rdma_counter (`rdma statistic qp`,
# kmod/linux/counter.c) between namespaces h1 and h2:
#  - auto mode binds each new RC QP of sroce2 to a counter: while a
#    ping-pong runs, its counter names its QP and its packets grow;
#  - manual mode: bind a running QP by number, read, unbind;
#  - ib_core adds every counter's value to `rdma statistic show link`, so
#    the port must not count them twice: on a clean veth what sroce2's link
#    counters say it sent equals what sroce1's say it received, and the
#    other way round.
. "$(dirname "$0")/lib.sh"

two_hosts 77 1500
modprobe sroce
check "sroce1 in h1, sroce2 in h2, with their IPv4 GIDs" sroce_on_hosts 77

# link_ctr DEV NAME: one counter of `rdma statistic show link DEV/1`.
link_ctr() {
	rdma statistic show link "$1/1" | tr ' ' '\n' | awk -v n="$2" 'p == n { print; exit } { p = $0 }'
}
# qp_ctr NAME: that counter of sroce2's (first) rdma_counter.
qp_ctr() {
	rdma statistic qp show link sroce2/1 | grep -m1 cntn | tr ' ' '\n' |
		awk -v n="$1" 'p == n { print; exit } { p = $0 }'
}
# pingpong PORT: a long ibv_rc_pingpong, server in h1, client in h2 (pids
# in $spid, $cpid); returns once the client's QP is in RTS.
pingpong() {
	ip netns exec h1 timeout 120 ibv_rc_pingpong -d sroce1 -g "$g1" -p "$1" -n 1000000 -s 64 >/dev/null 2>&1 &
	spid=$!
	wait_until 30 sh -c "ip netns exec h1 ss -Hltn 'sport = :$1' | grep -q ."
	ip netns exec h2 timeout 120 ibv_rc_pingpong -d sroce2 -g "$g2" -p "$1" -n 1000000 -s 64 10.0.77.1 \
		>/dev/null 2>&1 &
	cpid=$!
	wait_until 30 sh -c "rdma res show qp link sroce2/1 | grep -q 'type RC state RTS'"
}
stop_pingpong() {
	kill $cpid $spid 2>/dev/null
	wait $cpid $spid 2>/dev/null
	wait_until 20 counts_zero sroce2
}
rc_qpn() { rdma res show qp link sroce2/1 | awk '/type RC/ { for (i = 1; i < NF; i++) if ($i == "lqpn") print $(i + 1) }' | head -1; }

declare -A before after
for d in sroce1 sroce2; do
	for n in tx_pkts rx_pkts tx_bytes rx_bytes; do before[$d.$n]=$(link_ctr $d $n); done
done

# ---- auto mode ----
check "rdma statistic qp set link sroce2/1 auto type on" rdma statistic qp set link sroce2/1 auto type on
mode=$(rdma statistic qp mode link sroce2/1)
check "mode: auto ($mode)" grep -qw auto <<<"$mode"
pingpong 19771
qpn=$(rc_qpn)
sleep 1
out=$(rdma statistic qp show link sroce2/1)
log "  $out"
check "an RC counter for the ping-pong's QP $qpn" grep -qE "qp-type RC .*LQPN: <$qpn>" <<<"${out//$'\n'/ }"
t1=$(qp_ctr tx_pkts)
sleep 1
t2=$(qp_ctr tx_pkts)
l2=$(($(link_ctr sroce2 tx_pkts) - before[sroce2.tx_pkts]))
check "its tx_pkts grow ($t1 -> $t2)" test "${t1:-0}" -gt 0 -a "${t2:-0}" -gt "${t1:-0}"
check "and stay within the link's ($t2 <= $l2)" test "$t2" -le "$l2"
check "its rx_pkts too ($(qp_ctr rx_pkts))" test "$(qp_ctr rx_pkts)" -gt 0
# ib_core allocates a counter, then refuses the manual bind in auto mode.
check_fails "a manual bind in auto mode is refused" "." rdma statistic qp bind link sroce2/1 lqpn "$qpn"
stop_pingpong
check "the counter went with its QP" sh -c "! rdma statistic qp show link sroce2/1 | grep -q cntn"
check "auto mode off" rdma statistic qp set link sroce2/1 auto off

# ---- manual mode ----
pingpong 19772
qpn=$(rc_qpn)
check "bind QP $qpn by number" rdma statistic qp bind link sroce2/1 lqpn "$qpn"
cntn=$(rdma statistic qp show link sroce2/1 | grep -m1 cntn | awk '{ for (i = 1; i < NF; i++) if ($i == "cntn") print $(i + 1) }')
sleep 1
m1=$(qp_ctr tx_pkts)
check "the bound QP counts (tx_pkts $m1)" test "${m1:-0}" -gt 0
check "unbind it (counter $cntn)" rdma statistic qp unbind link sroce2/1 cntn "$cntn" lqpn "$qpn"
check "no counter left" sh -c "! rdma statistic qp show link sroce2/1 | grep -q cntn"
stop_pingpong

# ---- the link counts each packet once ----
sleep 0.1 # ib_core caches hw stats for 10 ms
for d in sroce1 sroce2; do
	for n in tx_pkts rx_pkts tx_bytes rx_bytes; do after[$d.$n]=$(($(link_ctr $d $n) - before[$d.$n])); done
done
log "  sroce2 sent ${after[sroce2.tx_pkts]} packets, sroce1 received ${after[sroce1.rx_pkts]}; sroce1 sent ${after[sroce1.tx_pkts]}, sroce2 received ${after[sroce2.rx_pkts]}"
check "sroce2's link tx_pkts == sroce1's rx_pkts" test "${after[sroce2.tx_pkts]}" -eq "${after[sroce1.rx_pkts]}"
check "sroce2's link rx_pkts == sroce1's tx_pkts" test "${after[sroce2.rx_pkts]}" -eq "${after[sroce1.tx_pkts]}"
check "sroce2's link tx_bytes == sroce1's rx_bytes" test "${after[sroce2.tx_bytes]}" -eq "${after[sroce1.rx_bytes]}"
check "and they include the counted QPs' ($t2 <= ${after[sroce2.tx_pkts]})" test "$t2" -le "${after[sroce2.tx_pkts]}"

ip netns del h1
ip netns del h2
check "devices gone with their namespaces" wait_until 20 sh -c '! rdma link show | grep -q sroce'
check "rmmod sroce" wait_until 20 rmmod sroce
finish

#!/usr/bin/env bash
# The transport on a faulty network: tc netem on both ends of the veth
# between namespaces h1 and h2 (so both directions suffer), one fault at a
# time: loss 1%, 10%, duplicate 5%, reorder 25%, corrupt 1%. Under each:
# rping with data validation over rdma_cm, ib_read_bw (64 KiB READs) and
# sroce_integrity (WRITE, READ, SEND both ways and atomics of random sizes
# over several SGEs, every byte and every atomic result checked on both
# sides). Corrupted packets must be dropped (by the ICRC, or by UDP's
# checksum before it) and recovered; the kernel log stays clean and nothing
# is left alive afterwards. Last, the ACK of each side's last message is dropped.
# The faults spare QP1 (the CM's MADs): see netem() below.
# NETEM_FULL=1 (tests/vm/slow/82-netem-full.sh, make test-vm-slow) adds
# loss 5% and all faults mixed, ib_write_bw, more operations and messages
# up to 1 MiB. NETEM_FAULTS="loss1 ..." picks faults of the default run.
# vm-timeout: 600
. "$(dirname "$0")/lib.sh"
full=${NETEM_FULL:-0}

two_hosts 9 1500
# Neighbours are permanent: netem drops ARP too, and rdma_cm's address
# resolution gave up once at loss 10% (rping: ADDR_ERROR -110), a failure of
# the test's network, not of the transport.
for h in 1 2; do
	o=$((3 - h))
	ip -n h$h neigh replace 10.0.9.$o dev veth-h$h nud permanent \
		lladdr "$(ip -n h$o -br link show veth-h$o | awk '{ print $3 }')"
done
modprobe sroce
modprobe rdma_ucm
modprobe -a sch_netem sch_prio cls_u32
check "sroce1 in h1, sroce2 in h2, with their IPv4 GIDs" sroce_on_hosts 9

# stuck_dump: what the test programs still alive are blocked on.
stuck_dump() {
	local p
	for p in $(pgrep -f 'rping|ib_read_bw|ib_write_bw|sroce_integrity'); do
		log "    stuck: $p $(tr '\0' ' ' </proc/$p/cmdline) state $(awk '/^State/ { print $2 }' /proc/$p/status)"
		sed 's/^/      /' /proc/$p/stack
	done
	sroce_counts sroce1 | tr '\n' ' '
	log ""
	dmesg | tail -15 | sed 's/^/    dmesg: /'
}

# pair NAME SERVER_CMD -- CLIENT_CMD: server in h1, client in h2; both exit 0
# within 150 s (a process that does not is dumped and killed).
pair() {
	local what=$1 spid cpid rc1 rc2 srv=() cli=() t0 i l0
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	t0=$(date +%s)
	l0=$(cm_listeners)
	dev_stats >/tmp/n.stats0
	ip netns exec h1 "${srv[@]}" >/tmp/n.server 2>&1 &
	spid=$!
	# perftest's server listens on TCP first; the rest with rdma_cm.
	if [[ ${srv[0]} == ib_* ]]; then
		wait_until 30 sh -c "ip netns exec h1 ss -Hltn 'sport = :$port' | grep -q ."
	else
		wait_until 30 cm_listening "$l0"
	fi
	ip netns exec h2 "${cli[@]}" >/tmp/n.client 2>&1 &
	cpid=$!
	for i in $(seq 750); do
		kill -0 $cpid 2>/dev/null || kill -0 $spid 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 $cpid 2>/dev/null || kill -0 $spid 2>/dev/null; then
		log "  $what: still running after 150 s"
		stuck_dump
		kill -9 $spid $cpid 2>/dev/null
	fi
	wait $cpid
	rc2=$?
	wait $spid
	rc1=$?
	if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ]; then
		ok "$what ($(($(date +%s) - t0)) s): $(grep -E '^ok:|^ *[0-9]+ +[0-9]+ ' /tmp/n.client | tail -1 | tr -s ' ')"
	else
		fail "$what (server $rc1, client $rc2, $(($(date +%s) - t0)) s)"
		grep -ihE 'error|fail|status' /tmp/n.server /tmp/n.client | head -6 | sed 's/^/    /'
		sed 's/^/    server: /' /tmp/n.server | tail -8
		sed 's/^/    client: /' /tmp/n.client | tail -8
		# What the transport did meanwhile: every device counter that moved.
		dev_stats | awk 'NR == FNR { was[$1] = $2; next } $2 != was[$1] { d = d " " $1 " +" $2 - was[$1] }
			END { print "    counters moved:" d }' /tmp/n.stats0 -
	fi
}

dev_stats() { # "sroceN.counter value" lines of both devices
	local d
	for d in sroce1 sroce2; do
		rdma statistic show link $d/1 | awk -v d=$d '{ for (i = 3; i < NF; i += 2) print d "." $i, $(i + 1) }'
	done
}

# The faults hit the RC data path, not the connection manager's MADs (QP1):
# see netem_dev in lib.sh.
netem() { # netem SPEC...: the same netem qdisc on both ends ("" removes it)
	local h
	for h in 1 2; do
		netem_dev h$h veth-h$h "$@" || return 1
	done
}

qdisc_stat() { # the netem qdisc's "dropped N" on both ends, summed
	local h n=0 d
	for h in 1 2; do
		d=$(tc -n h$h -s qdisc show dev veth-h$h |
			awk '/^qdisc netem/ { f = 1 } f && /dropped/ { sub(/.*dropped /, ""); sub(/,.*/, ""); print; exit }')
		n=$((n + ${d:-0}))
	done
	echo $n
}

# Corrupted packets that reach the host are dropped by IP (header
# checksum), by UDP (checksum) or by the ICRC; these sum all three.
rx_drops() {
	local ns=$1 dev=$2 icrc udp ip
	icrc=$(count_of "$dev" rx_icrc_errors)
	udp=$(ip netns exec "$ns" awk '/^Udp:/ { if (h) print $8; h = 1 }' /proc/net/snmp)
	ip=$(ip netns exec "$ns" awk '/^Ip:/ { if (h) print $5; h = 1 }' /proc/net/snmp)
	echo "$icrc $udp $ip"
}

port=19500
run_all() { # run_all LABEL MAX_SIZE: the programs under the current qdisc
	local l=$1 max=$2
	port=$((port + 1))
	pair "$l: rping -V -C $pings" rping -s -a 10.0.9.1 -p $port -C $pings -V -- \
		rping -c -a 10.0.9.1 -p $port -C $pings -V
	port=$((port + 1))
	pair "$l: ib_read_bw 64 KiB" ib_read_bw -d sroce1 -x "$g1" -F -u 16 -p $port -s 65536 -n $iters -- \
		ib_read_bw -d sroce2 -x "$g2" -F -u 16 -p $port -s 65536 -n $iters 10.0.9.1
	if [ "$full" = 1 ]; then
		port=$((port + 1))
		pair "$l: ib_write_bw 64 KiB" ib_write_bw -d sroce1 -x "$g1" -F -u 16 -p $port -s 65536 -n $iters -- \
			ib_write_bw -d sroce2 -x "$g2" -F -u 16 -p $port -s 65536 -n $iters 10.0.9.1
	fi
	port=$((port + 1))
	pair "$l: sroce_integrity, $ops operations up to $max B" \
		"$PROGS/sroce_integrity" -s -a 10.0.9.1 -p $port -t $ack_tmo -w 100 -- \
		"$PROGS/sroce_integrity" -c -a 10.0.9.1 -p $port -n $ops -m $max -S $port -t $ack_tmo -r 7 -w 100
}

declare -A spec=(
	[loss1]="loss 1%"
	[loss5]="loss 5%"
	[loss10]="loss 10%"
	[dup5]="duplicate 5%"
	[reorder25]="reorder 25% 50% delay 1ms"
	[corrupt1]="corrupt 1%"
	[mixed]="loss 2% duplicate 2% corrupt 1% reorder 25% 50% delay 1ms"
)
if [ "$full" = 1 ]; then
	faults="loss1 loss5 loss10 dup5 reorder25 corrupt1 mixed"
	pings=20 iters=10 ops=24
else
	faults=${NETEM_FAULTS-"loss1 loss10 dup5 reorder25 corrupt1"}
	pings=10 iters=5 ops=12
fi
for f in $faults; do
	log "-- netem ${spec[$f]}"
	read -r icrc0 udp0 ip0 < <(rx_drops h1 sroce1)
	read -r icrc0b udp0b ip0b < <(rx_drops h2 sroce2)
	tx0=$(($(count_of sroce1 tx_pkts) + $(count_of sroce2 tx_pkts)))
	# shellcheck disable=SC2086
	check "netem ${spec[$f]} on both ends" netem ${spec[$f]}
	# Messages up to 1 MiB; 256 KiB where loss makes go-back-N slow.
	case $f in loss5 | loss10 | mixed) max=262144 ;; *) max=1048576 ;; esac
	# At loss 10% a SEND ran out of 7 retries with a 268 ms ACK timeout
	# (-t 16) once, with another VM on the same cores: 1 s there (-t 18).
	case $f in loss10) ack_tmo=18 ;; *) ack_tmo=16 ;; esac
	# The default suite keeps loss 10% (the slowest mode: every loss costs a
	# timeout) to half the work.
	if [ "$full" != 1 ] && [ $f = loss10 ]; then
		pings=5 ops=8 max=131072
	elif [ "$full" != 1 ]; then
		pings=10 ops=12
	fi
	run_all "$f" $max
	st=$(tc -n h1 -s qdisc show dev veth-h1 | tr -s ' \n' ' ')
	log "  h1 qdisc: ${st:0:200}"
	case $f in
	loss*) check "$f: netem dropped packets" test "$(qdisc_stat)" -gt 0 ;;
	corrupt1 | mixed)
		read -r icrc1 udp1 ip1 < <(rx_drops h1 sroce1)
		read -r icrc1b udp1b ip1b < <(rx_drops h2 sroce2)
		d_icrc=$((icrc1 - icrc0 + icrc1b - icrc0b))
		d_udp=$((udp1 - udp0 + udp1b - udp0b))
		d_ip=$((ip1 - ip0 + ip1b - ip0b))
		log "  corrupted packets dropped: ICRC $d_icrc, UDP checksum $d_udp, IP header $d_ip"
		check "$f: corrupted packets were dropped" test $((d_icrc + d_udp + d_ip)) -gt 0
		;;
	esac
	tx1=$(($(count_of sroce1 tx_pkts) + $(count_of sroce2 tx_pkts)))
	log "  sroce packets sent under ${spec[$f]}: $((tx1 - tx0))"
	netem
	check "$f: h1 nothing left alive" wait_until 30 counts_zero sroce1
	check "$f: h2 nothing left alive" wait_until 30 counts_zero sroce2
done

# The last messages' ACKs lost. Each side must still be there for the
# other's retransmission, else the sender ends in "retry counter exceeded"
# (sroce_integrity's end of run: its wait_server_finished).
log "-- the last ACK lost"
modprobe -a sch_ingress cls_u32 act_gact
# lastack NAME HOST DESCRIPTION GACT MATCH...: on hHOST's egress, ACKs
# (BTH opcode 0x11) that also match MATCH get the gact action GACT, during
# one sroce_integrity run of one operation; the filter must have dropped one.
lastack() {
	local name=$1 h=$2 what=$3 gact=$4 st
	shift 4
	tc -n h$h qdisc add dev veth-h$h clsact
	# shellcheck disable=SC2086
	check "a filter on h$h drops $what" tc -n h$h filter add dev veth-h$h egress protocol ip u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff match u8 0x11 0xff at 28 "$@" \
		action gact $gact
	port=$((port + 1))
	pair "$name: sroce_integrity, 1 operation" \
		"$PROGS/sroce_integrity" -s -a 10.0.9.1 -p $port -t 14 -w 60 -- \
		"$PROGS/sroce_integrity" -c -a 10.0.9.1 -p $port -n 1 -S $port -t 14 -r 7 -w 60
	st=$(tc -n h$h -s filter show dev veth-h$h egress | tr -s ' \n' ' ')
	log "  h$h filter: ${st:0:300}"
	check "$name: the filter dropped an ACK" sh -c "tc -n h$h -s filter show dev veth-h$h egress | grep -qE 'dropped [1-9]'"
	tc -n h$h qdisc del dev veth-h$h clsact
}
# 1. h2 (the client) drops its 2nd ACK, which with one operation is the ACK
#    of the server's reply to it. The client stays until it has READ that
#    the server's last send completed. (It once failed at loss 10%.)
lastack lastack 2 "its every 2nd ACK" "pass random determ drop 2"
# 2. h1 (the server) drops the first ACK with MSN 3: with one operation
#    (a WRITE, its M_CHECK SEND, then M_DONE) the ACK of the client's last
#    message, M_DONE. The server stays until the client disconnects, so the
#    retransmitted M_DONE is answered (the ACK of the duplicate passes).
#    With the server disconnecting first, this failed at loss 10% one run
#    in five (82-netem in CI, 2026-11-25; the capture showed M_DONE sent 8
#    times to a closed QP).
lastack lastack-done 1 "its first ACK of MSN 3" "drop random determ pass 2" match u32 0x00000003 0x00ffffff at 40

check "no sroce warning in the kernel log" sh -c "! dmesg | grep -iE 'sroce.*(warn|bug)'"
ip netns del h1
ip netns del h2
check "devices gone with their namespaces" wait_until 20 sh -c '! rdma link show | grep -q sroce'
check "rmmod sroce" wait_until 20 rmmod sroce
finish

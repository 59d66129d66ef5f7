#!/usr/bin/env bash
# The data-path glue (kmod/linux: batch, pkt, path, timer, the UDP receive
# path) through the test module sroce_selftest.ko (tests/kmod, built by
# make kmod, staged next to sroce.ko by scripts/vm-run):
#  - the in-kernel tests of packets, batches, timers and work;
#  - the ICRC's CRC-32 chosen at load (icrc=auto|accel, kmod/linux/crc.c);
#  - ib_drain_qp of a kernel UD QP;
#  - RoCEv2 UD SENDs from a kernel UD QP of s1 (vethA, init_net) to s2
#    (vethB, namespace h2) over IPv4 and IPv6, seen on the wire with tshark
#    and counted by the receiving device; addressing from the AH's path
#    (TTL/hop limit, traffic class, flow label);
#  - the IPv6 UDP checksum, by the device (offload) and computed in
#    software, which the receiving UDP stack verifies;
#  - a device sending to its own address: straight to its own receive path
#    (the local queue), nothing on lo; a datagram a local socket sends to
#    the device's address over lo is dropped and counted (rx_loopback);
#  - receive drops: a netdev without a device, a packet shorter than a BTH;
#  - paths that cannot be created; no packet or path left over.
. "$(dirname "$0")/lib.sh"

D=/sys/kernel/debug/sroce
T=/sys/kernel/debug/sroce_selftest

# in_ns NS CMD...: CMD in namespace NS, or in init_net when NS is "-".
in_ns() {
	local ns=$1
	shift
	if [ "$ns" = - ]; then "$@"; else ip netns exec "$ns" "$@"; fi
}
cnt() { awk -v n="$2" '$1 == n { print $2 }' "$D/$1/counts"; }
# tx DEV "SRC DST COUNT DESTQP [PAYLOAD TCLASS HOPLIMIT FLOWLABEL]": DEV's
# kernel UD QP sends COUNT SENDs (PSN 0 up) over an AH from SRC to DST.
tx() { echo "$1 $2" >$T/ud_send; }
# has_gid DEV GID: the sysfs form of a GID is in DEV's table.
has_gid() { cat /sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null | grep -qx "$2"; }

# Captures: one dumpcap per interface for the whole test, merged at the
# end and decoded by one tshark run (it is slow under TCG) into these
# fields, one packet a line, in $CAPS.txt. Each part of the test sends to
# its own destination QP to tell its packets apart.
CAPS=/tmp/60-caps
FIELDS=(frame.interface_name ip.src ip.dst ip.ttl ip.dsfield ip.flags.df ipv6.src ipv6.dst
	ipv6.hlim ipv6.tclass ipv6.flow udp.dstport udp.checksum udp.checksum.status
	infiniband.bth.opcode infiniband.bth.destqp infiniband.bth.psn)
cap_pids=()
cap_start() { # NS IFACE
	local f=$CAPS-$2.pcapng
	rm -f "$f"
	# ip netns exec execs dumpcap: $! is dumpcap's pid.
	if [ "$1" = - ]; then
		dumpcap -q -i "$2" -f "udp port 4791" -w "$f" 2>/dev/null &
	else
		ip netns exec "$1" dumpcap -q -i "$2" -f "udp port 4791" -w "$f" 2>/dev/null &
	fi
	cap_pids+=($!)
	wait_until 20 test -s "$f" # the file header: dumpcap is capturing
}
cap_stop() {
	local args=() f
	sleep 0.5
	kill "${cap_pids[@]}"
	wait "${cap_pids[@]}" 2>/dev/null
	mergecap -w "$CAPS.pcapng" "$CAPS"-*.pcapng
	for f in "${FIELDS[@]}"; do args+=(-e "$f"); done
	tshark -r "$CAPS.pcapng" -o udp.check_checksum:TRUE -T fields -E separator=, -E occurrence=f \
		"${args[@]}" >"$CAPS.txt" 2>/dev/null
}
# fields IFACE QP FIELD...: the FIELDS of the packets to QP captured on
# IFACE, comma-joined.
fields() {
	local iface=$1 qp=$2 cols="" f i q=0
	shift 2
	for i in "${!FIELDS[@]}"; do
		[ "${FIELDS[$i]}" = infiniband.bth.destqp ] && q=$((i + 1))
	done
	for f in "$@"; do
		for i in "${!FIELDS[@]}"; do
			[ "${FIELDS[$i]}" = "$f" ] && cols="$cols,$((i + 1))"
		done
	done
	awk -F, -v q="$q" -v qp="$qp" -v i="$iface" '$1 == i && $q == qp' "$CAPS.txt" | cut -d, -f"${cols#,}"
}

# set_tx_csum DEV 0|1: the legacy ETHTOOL_STXCSUM ioctl (no ethtool here).
set_tx_csum() {
	python3 - "$1" "$2" <<'EOF'
import array, fcntl, socket, struct, sys
buf = array.array('B', struct.pack('II', 0x17, int(sys.argv[2])))  # ETHTOOL_STXCSUM
ifr = struct.pack('16sQ', sys.argv[1].encode(), buf.buffer_info()[0]).ljust(40, b'\0')
fcntl.ioctl(socket.socket(socket.AF_INET, socket.SOCK_DGRAM), 0x8946, ifr)  # SIOCETHTOOL
EOF
}

# grew DEV NAME BASE N: DEV's count NAME is BASE + N (tx, rx are counted
# when the receiving softirq ran: callers wait_until).
grew() { [ "$(cnt "$1" "$2")" -eq $(($3 + $4)) ]; }
module_grew() { [ "$(awk -v n="$1" '$1 == n { print $2 }' $D/counts)" -eq $(($2 + $3)) ]; }
# captured FILE QP N FIELD... VALUE: N packets to QP, all with these
# comma-joined field values.
captured() {
	local file=$1 qp=$2 n=$3 want=${*: -1}
	set -- "${@:4:$#-4}"
	[ "$(fields "$file" "$qp" "$@" | wc -l)" -eq "$n" ] && [ "$(fields "$file" "$qp" "$@" | sort -u)" = "$want" ] &&
		return
	log "    captured: $(fields "$file" "$qp" "$@" | sort | uniq -c | tr '\n' ';')"
	return 1
}
selftest_passed() { printf '%s\n' "$out" | tail -1 | grep -qx 'passed [1-9][0-9]* failed 0'; }
psns() { [ "$(fields "$1" "$2" infiniband.bth.psn | tr '\n' ' ')" = "$3" ]; }
no_zero_csum() { ! fields "$1" "$2" udp.checksum | grep -qx 0x0000; }
gids() { wait_until 10 has_gid "$1" "$2" && wait_until 10 has_gid "$1" "$3"; }
# clean DEV OBJS: nothing in flight, no path, no tx error, and the QPs and
# AHs DEV had before sroce_selftest's (OBJS, from objs: ib_mad's GSI QP).
clean() {
	[ "$(cnt "$1" pkts_in_flight)" -eq 0 ] && [ "$(cnt "$1" glue_pkts_in_flight)" -eq 0 ] &&
		[ "$(cnt "$1" paths)" -eq 0 ] && [ "$(cnt "$1" tx_errors)" -eq 0 ] && [ "$(objs "$1")" = "$2" ]
}
objs() { echo "qps $(cnt "$1" qps) ahs $(cnt "$1" ahs)"; }

check "modprobe sroce_selftest (loads sroce)" modprobe sroce_selftest
# The captures below count packets: a train (64-trains) is one frame there.
echo N >/sys/module/sroce/parameters/trains
out=$(cat $T/glue)
printf '%s\n' "$out" | grep FAIL
check "in-kernel tests of packets, batches, timers, work ($(printf '%s\n' "$out" | tail -1))" selftest_passed

ip netns add h2
make_veth vethA vethB h2
check "s1 on vethA" rdma link add s1 type sroce netdev vethA
check "s2 on vethB in h2" ip netns exec h2 rdma link add s2 type sroce netdev vethB
check "s1 GIDs" gids s1 0000:0000:0000:0000:0000:ffff:0a00:0101 fd00:0001:0000:0000:0000:0000:0000:0001
check "s2 GIDs" gids s2 0000:0000:0000:0000:0000:ffff:0a00:0102 fd00:0001:0000:0000:0000:0000:0000:0002
cap_start h2 vethB
cap_start - lo
objs1=$(objs s1)
objs2=$(objs s2)

# ib_drain_qp of a kernel UD QP: its drain WR is an ib_rdma_wr, which the
# UD post path must not read as an ib_ud_wr (KASAN under make test-debug).
check "ib_drain_qp of a kernel UD QP completes; a kernel FLUSH and ATOMIC WRITE are refused (EOPNOTSUPP)" \
	sh -c "echo s1 >$T/ud_drain"

# ---- IPv4 across the veth pair ----
rx2=$(cnt s2 rx_pkts)
tx1=$(cnt s1 tx_pkts)
check "send 5 over IPv4 (tclass 0x68, hop limit 17)" tx s1 "10.0.1.1 10.0.1.2 5 0x123 64 104 17"
check "s1 sent 5" grew s1 tx_pkts "$tx1" 5
check "s2 received 5" wait_until 5 grew s2 rx_pkts "$rx2" 5

# ---- IPv6, checksum offloaded to the route's device (veth) ----
rx2=$(cnt s2 rx_pkts)
check "send 3 over IPv6 (flow label 0x12345, tclass 0x20, hop limit 9)" \
	tx s1 "fd00:1::1 fd00:1::2 3 0x77 100 32 9 0x12345"
check "s2 received 3 (UDP accepted the checksum)" wait_until 5 grew s2 rx_pkts "$rx2" 3

# ---- IPv6, checksum computed by the glue ----
check "vethA: tx checksum offload off" set_tx_csum vethA 0
rx2=$(cnt s2 rx_pkts)
check "send 4 over IPv6 without offload" tx s1 "fd00:1::1 fd00:1::2 4 0x78 1000"
check "s2 received 4 (its UDP verified them)" wait_until 5 grew s2 rx_pkts "$rx2" 4
set_tx_csum vethA 1

# ---- a device to its own address: the local route, not through lo ----
for dst in 10.0.1.1 fd00:1::1; do
	rx1=$(cnt s1 rx_pkts)
	lrx1=$(cnt s1 rx_local)
	ltx1=$(cnt s1 tx_local)
	check "s1 to its own $dst" tx s1 "$dst $dst 2 0x55"
	check "s1 received its own 2" wait_until 5 grew s1 rx_pkts "$rx1" 2
	check "s1: both through its local queue (tx_local, rx_local +2)" \
		eval 'grew s1 tx_local "$ltx1" 2 && grew s1 rx_local "$lrx1" 2'
done
check "nothing crossed to s2 meanwhile" grew s2 rx_pkts "$rx2" 4
# A local socket's datagram to s1's address loops through lo: not trusted.
rx1=$(cnt s1 rx_pkts)
lo1=$(cnt s1 rx_loopback)
check "UDP 4791 datagram from a local socket to 10.0.1.1" bash -c 'printf 0123456789abcdef >/dev/udp/10.0.1.1/4791'
check "dropped on lo, counted as s1's rx_loopback" wait_until 5 grew s1 rx_loopback "$lo1" 1
check "it never reached the core (rx_pkts unchanged)" grew s1 rx_pkts "$rx1" 0

# ---- on the wire ----
cap_stop
check "IPv4: 5 RoCEv2 UD SEND_ONLY packets on vethB, addressed by the path" \
	captured vethB 0x000123 5 ip.src ip.dst ip.ttl ip.dsfield ip.flags.df udp.dstport \
	infiniband.bth.opcode 10.0.1.1,10.0.1.2,17,0x68,1,4791,100
check "IPv4: in order, PSN 0..4" psns vethB 0x000123 "0 1 2 3 4 "
check "IPv6: 3 packets on vethB with the path's fields" \
	captured vethB 0x000077 3 ipv6.src ipv6.dst ipv6.hlim ipv6.tclass ipv6.flow udp.dstport \
	fd00:1::1,fd00:1::2,9,0x00000020,0x012345,4791
check "IPv6 without offload: 4 packets with a good UDP checksum" \
	captured vethB 0x000078 4 udp.checksum.status 1
check "IPv6 without offload: no zero UDP checksum" no_zero_csum vethB 0x000078
check "own address: none of the 4 on lo" captured lo 0x000055 0 udp.dstport ""
check "own address: none on vethB" captured vethB 0x000055 0 udp.dstport ""

# ---- receive drops ----
# A netdev of init_net without a sroce device: the socket gets the packet,
# there is no device for it.
ip netns add h3
make_veth vethC vethD h3
nodev=$(awk '$1 == "rx_no_device" { print $2 }' $D/counts)
check "UDP 4791 datagram from h3 to vethC" ip netns exec h3 bash -c 'echo 0123456789abcdefghij >/dev/udp/10.0.2.1/4791'
check "dropped as rx_no_device" wait_until 5 module_grew rx_no_device "$nodev" 1
ip netns del h3
short=$(cnt s1 rx_short)
rx1=$(cnt s1 rx_pkts)
check "a datagram shorter than a BTH from h2" ip netns exec h2 bash -c 'printf 0123456789a >/dev/udp/10.0.1.1/4791'
check "dropped as rx_short" wait_until 5 grew s1 rx_short "$short" 1
check "a datagram as long as a BTH from h2" ip netns exec h2 bash -c 'printf 0123456789ab >/dev/udp/10.0.1.1/4791'
check "goes to the core" wait_until 5 grew s1 rx_pkts "$rx1" 1

# ---- paths that cannot be made ----
check_fails "IPv4 source, IPv6 destination" "Invalid argument" tx s1 "10.0.1.1 fd00:1::2 1 1"
check_fails "a source that is no GID of s1" "No such file" tx s1 "10.0.1.2 10.0.1.1 1 1"
check_fails "IPv6 destination without a route" "unreachable" tx s1 "fd00:1::1 fd00:99::1 1 1"
ip link set vethA down
check_fails "vethA down: no route" "unreachable" tx s1 "10.0.1.1 10.0.1.2 1 1"
ip link set vethA up

# ---- nothing left over ----
check "s1: no packet in flight, no path, no tx error, $objs1 as before" clean s1 "$objs1"
check "s2: no packet in flight, no path, no tx error, $objs2 as before" clean s2 "$objs2"
check "delete s1" rdma link delete s1
ip netns del h2
check "s2 gone with h2" wait_until 10 sh -c '! rdma link show | grep -q s2'
ip link del vethA 2>/dev/null
check "rmmod sroce_selftest" rmmod sroce_selftest
check "rmmod sroce" rmmod sroce

# ---- the ICRC's CRC-32 (kmod/linux/crc.c) ----
# auto keeps the faster of crc32_le and the crypto API's crc32 (timed at
# load: under TCG crc32_le wins); accel forces crc32-pclmul, which must give
# crc32_le's result for every length and alignment (sroce_selftest's "crc").
check "modprobe sroce (icrc=auto)" modprobe sroce
check "icrc=auto: timed both" grep -qE '^ns_per_4k_accel [1-9]' $D/icrc
log "  $(tr '\n' ' ' <$D/icrc)"
# The physical limit make bench prints: memcpy timed too, and the two-CPU
# limit twice the one-CPU one (4 KiB per copy + CRC, done by each end).
check "memcpy timed at load" grep -qE '^ns_per_4k_memcpy [1-9]' $D/icrc
lim1=$(awk '/^limit_mb_s_one_cpu/ { print $2 }' $D/icrc)
lim2=$(awk '/^limit_mb_s_two_cpus/ { print $2 }' $D/icrc)
check "the limits ($lim1, $lim2 MB/s): two CPUs twice one" test -n "$lim1" -a "$lim1" -gt 0 -a "$((lim2 / 2 - lim1))" -ge -1 -a "$((lim2 / 2 - lim1))" -le 1
check "rmmod sroce" rmmod sroce
check "modprobe sroce icrc=table" modprobe sroce icrc=table
check "icrc=table: crc32_le, memcpy timed still" grep -qx 'impl crc32_le' $D/icrc
check "icrc=table: its limit from crc32_le" grep -qE '^limit_mb_s_one_cpu [1-9]' $D/icrc
check "rmmod sroce" rmmod sroce
check "modprobe sroce icrc=accel" modprobe sroce icrc=accel
check "modprobe sroce_selftest" modprobe sroce_selftest
check "icrc=accel: crc32-pclmul" grep -qx 'impl crc32-pclmul' $D/icrc
out=$(cat $T/glue)
check "icrc=accel: equal to crc32_le at every length and alignment" grep -qx 'ok crc' <<<"$out"
check "rmmod sroce_selftest" rmmod sroce_selftest
check "rmmod sroce" rmmod sroce
rm -f "$CAPS"*
finish

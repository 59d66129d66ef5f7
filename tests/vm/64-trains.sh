#!/usr/bin/env bash
# Packet trains (kmod/linux/train.c, issue 17): consecutive equal-size
# packets of one QP leave as one UDP GSO skb; veth carries it whole and the
# receiving host's UDP layer segments it before sroce's encap_rcv.
#  - ib_write_bw (64 KiB), ib_send_bw (64 KiB) and ib_read_bw between two
#    namespaces: trains counted (tx_trains, tx_train_pkts) on the sender;
#    the receiver counts no ICRC error;
#  - sroce-dump on a capture of the receiving veth shows the trains split
#    into their packets, every segment's ICRC ok, none BAD;
#  - the integrity program (every byte checked) with trains;
#  - with trains=N no train is sent.
# vm-timeout: 600
. "$(dirname "$0")/lib.sh"

DUMP=$TOP/build/user/sroce-dump
work=$(mktemp -d)
two_hosts 64 1500
count() { sroce_counts "$1" | awk -v n="$2" '$1 == n { print $2 }'; }
rx_icrc() { link_stat "$1" icrc_errors; }
# zero_copy_min=0: a zero-copy packet never joins a train (train.c).
check "modprobe sroce zero_copy_min=0" modprobe -C /dev/null sroce zero_copy_min=0
check "trains defaults to N" grep -qx N /sys/module/sroce/parameters/trains
echo Y >/sys/module/sroce/parameters/trains
check "sroce1 in h1, sroce2 in h2" sroce_on_hosts 64

check "capture running on veth-h2" capture_start h2 veth-h2 "$work/c.pcap"
port=19640
pt() { host_perftest 64 "$@"; } # pt NAME TOOL ARGS: server in h1, client in h2
pt "ib_write_bw 64 KiB" ib_write_bw -s 65536 -n 200
pt "ib_send_bw 64 KiB" ib_send_bw -s 65536 -n 200
pt "ib_read_bw 64 KiB" ib_read_bw -s 65536 -n 100
sleep 1
capture_stop
t2=$(count sroce2 tx_trains) p2=$(count sroce2 tx_train_pkts) t1=$(count sroce1 tx_trains)
log "  sroce2 sent $t2 trains of $p2 packets; sroce1 (READ responses, ACKs) $t1 trains"
check "the writer sent trains (tx_trains $t2)" test "${t2:-0}" -gt 0
check "trains of more than one packet each ($p2 packets in $t2)" test "${p2:-0}" -ge $((2 * ${t2:-1}))
check "the READ responder sent trains (tx_trains $t1)" test "${t1:-0}" -gt 0
check "no ICRC error on either end (sroce1 $(rx_icrc sroce1), sroce2 $(rx_icrc sroce2))" \
	test "$(rx_icrc sroce1):$(rx_icrc sroce2)" = 0:0
"$DUMP" -r "$work/c.pcap" >"$work/c.txt" 2>&1
segs=$(grep -c ', train [0-9]*/[0-9]*$' "$work/c.txt")
log "  capture: $(wc -l <"$work/c.txt") packets, $segs of them in trains"
check "sroce-dump splits the captured trains into packets" test "$segs" -gt 0
check "every captured packet's ICRC ok, none BAD" sh -c "! grep -v 'icrc ok' '$work/c.txt' | grep -q ."

host_integrity 64 "integrity with trains: 300 operations up to 256 KiB, every byte checked" -n 300 -m 262144 -S 64

reload_sroce 64 trains=N
pt "ib_write_bw 64 KiB, trains=N" ib_write_bw -s 65536 -n 100
check "trains=N: no train sent (sroce2 tx_trains $(count sroce2 tx_trains))" test "$(count sroce2 tx_trains)" = 0
rm -rf "$work"
end_two_hosts
finish

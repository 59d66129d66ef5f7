#!/usr/bin/env bash
# Zero-copy send (issue 17 item 7; tx.cpp's tx_attach, pkt.c's
# sroce_env_pkt_add_frag): a user RC QP's request payload of zero_copy_min
# bytes or more leaves from the registered pages as skb fragments, each
# holding its own page reference; READ responses, UD and UC are copied.
#  - zero_copy_min defaults to 1024; ib_write_bw and ib_send_bw at 64 KiB
#    between two namespaces count tx_zero_copy on the sender, and the
#    receiver counts no ICRC error;
#  - sroce-dump on a capture of the receiving veth: every packet's ICRC ok;
#  - the integrity program (every byte checked, all opcodes) passes;
#  - the pages outlive their MR: with the writer's packets held 3 s in
#    netem, both ends are killed with SIGKILL (MRs deregistered, pages
#    unpinned) while packets still wait; they leave later, nothing leaks,
#    and dmesg stays clean (run-in-vm.sh);
#  - zero_copy_min=0: no zero-copy packet;
#  - the same WRITEs look their keys up about once a message a side, not
#    once a packet (the QP's key caches, key_cache.h): key_lookups.
# vm-timeout: 600
. "$(dirname "$0")/lib.sh"

DUMP=$TOP/build/user/sroce-dump
work=$(mktemp -d)
two_hosts 65 1500
rx_icrc() { link_stat "$1" icrc_errors; }
zc() { link_stat "$1" tx_zero_copy; }
kl() { echo $(($(link_stat sroce1 key_lookups) + $(link_stat sroce2 key_lookups))); }
check "modprobe sroce" modprobe -C /dev/null sroce
modprobe rdma_ucm
check "zero_copy_min defaults to 1024" grep -qx 1024 /sys/module/sroce/parameters/zero_copy_min
check "sroce1 in h1, sroce2 in h2" sroce_on_hosts 65

check "capture running on veth-h1" capture_start h1 veth-h1 "$work/c.pcap"
port=19650
pt() { host_perftest 65 "$@"; } # pt NAME TOOL ARGS: server in h1, client in h2
k0=$(kl)
pt "ib_write_bw 64 KiB" ib_write_bw -s 65536 -n 200
w2=$(zc sroce2) kw=$(($(kl) - k0))
pt "ib_send_bw 64 KiB" ib_send_bw -s 65536 -n 200
s2=$(($(zc sroce2) - w2))
pt "ib_read_bw 64 KiB" ib_read_bw -s 65536 -n 100
sleep 1
capture_stop
log "  sroce2 sent $w2 WRITE and $s2 SEND packets zero-copy; sroce1 (READ responses, copied) $(zc sroce1)"
# 200 x 64 KiB in 1024-byte packets (the path MTU of a 1500-byte veth).
check "the writer's packets went zero-copy ($w2 >= 12800)" test "${w2:-0}" -ge 12800
check "the sender's packets went zero-copy ($s2 >= 12800)" test "${s2:-0}" -ge 12800
# One per packet at each end was 2 x 12800 and more; the caches make it
# about one a message a side (a completion may cost the sender one more).
check "the WRITEs' keys were looked up $kw times for 2 x 12800 packets (< 1600)" test "$kw" -lt 1600
check "READ responses are copied (sroce1 tx_zero_copy $(zc sroce1))" test "$(zc sroce1)" = 0
check "no ICRC error on either end (sroce1 $(rx_icrc sroce1), sroce2 $(rx_icrc sroce2))" \
	test "$(rx_icrc sroce1):$(rx_icrc sroce2)" = 0:0
"$DUMP" -r "$work/c.pcap" >"$work/c.txt" 2>&1
log "  capture: $(wc -l <"$work/c.txt") packets, $(grep -c 'RDMA_WRITE_MIDDLE' "$work/c.txt") WRITE middles"
check "the capture holds the WRITEs" grep -q 'RDMA_WRITE_MIDDLE' "$work/c.txt"
check "every captured packet's ICRC ok, none BAD" sh -c "! grep -v 'icrc ok' '$work/c.txt' | grep -q ."

host_integrity 65 "integrity zero-copy: 300 operations up to 256 KiB, every byte checked" -n 300 -m 262144 -S 65

# The writer's packets wait 3 s in netem (scaled: the debug kernel's
# teardown of a killed process took longer than 3 s), the ACK timeout
# longer still; both ends die meanwhile.
hold=$(scaled_secs 3) u=$(ack_timeout 20)
# Neighbours fixed first: an ARP request from h2 would wait in netem past
# ARP's own 3 s, and the client's connect then fails (on the debug
# kernel's scaled hold of 24 s it did: "Couldn't connect").
mac() { ip -n "h$1" -br link show "veth-h$1" | awk '{ print $3 }'; }
ip -n h2 neigh replace 10.0.65.1 lladdr "$(mac 1)" dev veth-h2 nud permanent
ip -n h1 neigh replace 10.0.65.2 lladdr "$(mac 2)" dev veth-h1 nud permanent
sent() { count_of sroce2 tx_pkts; }
moving() { [ "$(sent)" -gt "$1" ]; }
unpinned() { [ "$(count_of sroce2 pinned_pages)" = 0 ]; }
waiting() { tc -n h2 -s qdisc show dev veth-h2 | awk '/netem/ { f = 1 } f && /backlog/ { sub("p", "", $3); print $3; exit }'; }
netem_dev h2 veth-h2 delay "${hold}s" limit 100000
port=$((port + 1))
ip netns exec h1 ib_write_bw -d sroce1 -x "$g1" -F -u "$u" -p $port -D 60 -s 65536 >"$work/k.srv" 2>&1 &
spid=$!
wait_until 30 sh -c "ip netns exec h1 ss -Hltn 'sport = :$port' | grep -q ."
z0=$(zc sroce2) t0=$(sent)
ip netns exec h2 ib_write_bw -d sroce2 -x "$g2" -F -u "$u" -p $port -D 60 -s 65536 10.0.65.1 >"$work/k.cli" 2>&1 &
cpid=$!
# Waits for packets, or for the client to die (then fails at once).
moving_or_dead() { moving "$1" || ! kill -0 "$cpid" 2>/dev/null; }
wait_until 60 moving_or_dead $((t0 + 500))
check "writing zero-copy into a $hold s delay ($(tr '\n' ' ' <"$work/k.cli" | tail -c 200))" moving $((t0 + 500))
check "those packets are zero-copy ($(($(zc sroce2) - z0)))" test $(($(zc sroce2) - z0)) -gt 0
kill -9 $spid $cpid
wait $spid $cpid 2>/dev/null
check "the killed writer's pages are unpinned" wait_until 10 unpinned
q=$(waiting)
check "packets of its pages still wait in netem then (${q:-?})" test "${q:-0}" -gt 0
sleep $((hold + 1))
# (netem also delays the namespace's other traffic, ARP and IPv6 among it:
# a packet or two may have come since.)
w=$(waiting)
check "and have left since (${q:-?} -> $w)" test "${w:-0}" -lt $((${q:-0} / 2))
check "h1: nothing left alive" wait_until 30 counts_zero sroce1
check "h2: nothing left alive" wait_until 30 counts_zero sroce2
netem_dev h2 veth-h2

reload_sroce 65 zero_copy_min=0
pt "ib_write_bw 64 KiB, zero_copy_min=0" ib_write_bw -s 65536 -n 100
check "zero_copy_min=0: no zero-copy packet (sroce2 $(zc sroce2))" test "$(zc sroce2)" = 0
rm -rf "$work"
end_two_hosts
finish

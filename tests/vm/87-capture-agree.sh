#!/usr/bin/env bash
# rxe <-> sroce on the wire, captured and decoded twice (issue 7): rdma_rxe
# in init_net on veth-r, sroce in namespace h2 on veth-s. sroce-dump -i
# veth-r captures SEND, WRITE and READ with multi-packet messages, both
# atomics and UD, each driver serving and requesting, and sroce
# retransmitting a SEND that rxe drops (unknown QPN). Then sroce-dump
# --json and tshark -T fields decode the same pcap: every packet must agree on BTH opcode,
# dest QP, PSN, AETH syndrome and RETH length (absent in both, or equal),
# every packet's ICRC must check, both drivers must have sent, every
# operation must be there, and --flows must show the retransmissions.
# vm-timeout: 300
. "$(dirname "$0")/lib.sh"
DUMP=$TOP/build/user/sroce-dump
# Artifacts in vm-run's output directory (the source tree is read-only in
# the VM), else a temporary one.
work=${VM_OUT:+$VM_OUT/87-capture-agree}
work=${work:-$(mktemp -d)}
rm -rf "$work"
mkdir -p "$work"

# Single packets: a train (a UDP GSO skb, as veth carries it) is one frame
# to tshark and several packets to sroce-dump (64-trains tests those).
check "rxe0 on veth-r, sroce2 on veth-s in h2, with their IPv4 GIDs" rxe_and_sroce 87
check "sroce without trains (trains=N)" sh -c 'echo N >/sys/module/sroce/parameters/trains' 
ping -c 2 -i 0.2 -W 2 10.0.87.2 >/dev/null 2>&1 # ARP before the capture

"$DUMP" -i veth-r -w "$work/c.pcap" 2>"$work/dump.err" &
dpid=$!
sleep 1
check "capture running on veth-r" kill -0 $dpid

# run NAME SERVER CLIENT PROG ARGS...: SERVER/CLIENT are rxe or sroce; the
# client connects to the server's address on a fresh port.
port=21000
run() {
	local what=$1 srv=$2 cli=$3 rc1 rc2 spid sargs cargs sns="" cns="" peer
	shift 3
	port=$((port + 1))
	if [ "$srv" = rxe ]; then
		sargs=(-d rxe0) cargs=(-d sroce2) cns="ip netns exec h2" peer=10.0.87.1
		[[ $1 == ib_* ]] && sargs+=(-x "$gr") cargs+=(-x "$gs") || { sargs+=(-g "$gr"); cargs+=(-g "$gs"); }
	else
		sargs=(-d sroce2) cargs=(-d rxe0) sns="ip netns exec h2" peer=10.0.87.2
		[[ $1 == ib_* ]] && sargs+=(-x "$gs") cargs+=(-x "$gr") || { sargs+=(-g "$gs"); cargs+=(-g "$gr"); }
	fi
	$sns timeout 120 "$@" "${sargs[@]}" -p $port >"$work/s.txt" 2>&1 &
	spid=$!
	wait_until 30 sh -c "$sns ss -Hltn 'sport = :$port' | grep -q ."
	$cns timeout 120 "$@" "${cargs[@]}" -p $port $peer >"$work/c.txt" 2>&1
	rc2=$?
	wait $spid
	rc1=$?
	if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ]; then ok "$what ($srv serves)"; else
		fail "$what ($srv serves: server $rc1, client $rc2)"
		tail -3 "$work/s.txt" "$work/c.txt" | sed 's/^/    /'
	fi
}
pt=(-F -u 18 -n 5)
run "ib_send_bw 4 KiB" rxe sroce ib_send_bw "${pt[@]}" -s 4096
run "ib_send_bw 4 KiB" sroce rxe ib_send_bw "${pt[@]}" -s 4096
run "ib_write_bw 4 KiB" sroce rxe ib_write_bw "${pt[@]}" -s 4096
run "ib_read_bw 8 KiB" rxe sroce ib_read_bw "${pt[@]}" -s 8192
run "ib_read_bw 8 KiB" sroce rxe ib_read_bw "${pt[@]}" -s 8192
run "ib_atomic_bw FETCH_ADD" sroce rxe ib_atomic_bw "${pt[@]}"
run "ib_atomic_bw CMP_AND_SWAP" rxe sroce ib_atomic_bw "${pt[@]}" -A CMP_AND_SWAP
run "ibv_ud_pingpong" rxe sroce ibv_ud_pingpong -n 5 -s 512
# A forced retransmission: sroce's ibv_rc_pingpong client gets, from a
# stand-in server on rxe's side, QPN 0x000123, which rxe does not have, so
# rxe drops every SEND and sroce resends it until its retries run out.
python3 "$TOP/tests/vm/standin_server.py" 10.0.87.1 18600 123 00000000000000000000ffff0a005701 &
ps=$!
check "stand-in server listening" wait_until 30 sh -c "ss -Htln | grep -q '10.0.87.1:18600 '"
ip netns exec h2 timeout 20 ibv_rc_pingpong -d sroce2 -g "$gs" -p 18600 -n 1 10.0.87.1 >"$work/pp.txt" 2>&1
log "  sroce's client (fails by design: no QP 0x123 behind the server): $(tail -1 "$work/pp.txt")"
wait $ps 2>/dev/null
sleep 1
kill -INT $dpid
wait $dpid
log "  capture: $(tail -1 "$work/dump.err")"
check "the capture lost nothing" grep -q ' 0 dropped by kernel$' "$work/dump.err"

"$DUMP" -r "$work/c.pcap" --json >"$work/c.json" 2>&1
"$DUMP" -r "$work/c.pcap" --flows >"$work/flows.txt" 2>&1
tshark -r "$work/c.pcap" -T fields -E separator=/t -e infiniband.bth.opcode -e infiniband.bth.destqp \
	-e infiniband.bth.psn -e infiniband.aeth.syndrome -e infiniband.reth.dmalen -e infiniband.vendor \
	>"$work/c.tshark" 2>"$work/tshark.err"
grep '^flow' "$work/flows.txt" | sed 's/^/    /'
check "--flows: sroce retransmitted its SEND to QP 0x123" \
	grep -qE '^flow 10\.0\.87\.2 > 10\.0\.87\.1 qp 0x000123: .* retransmitted [1-9]' "$work/flows.txt"
check "sroce-dump --json and tshark agree on every packet" python3 "$TOP/tests/vm/capture_agree.py" \
	"$work/c.json" "$work/c.tshark" --srcs 10.0.87.1,10.0.87.2 --want 00,01,02,06,08,0c,0d,0e,0f,11,12,13,14,64

rdma link delete rxe0
ip netns del h2
ip link del veth-r 2>/dev/null
modprobe -r rdma_rxe
check "rmmod sroce" wait_until 20 rmmod sroce
finish

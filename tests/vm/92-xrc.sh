#!/usr/bin/env bash
# XRC (Documentation/xrc.md): domains, XRC SRQs, initiator and target QPs.
# (rdma-core's own XRC tests, which rdma_rxe skips with "Create XRCD is not
# supported", are in 86-pyverbs's list.)
# - ibv_devinfo -v shows the XRC capability.
# - sroce_xrc objects and share (tests/progs/sroce_xrc.c): the objects and
#   their bad uses, SENDs into two SRQs through one target, bad XRCETHs
#   and the target's event; one target opened by three processes.
# - ibv_xsrq_pingpong between two namespaces: a server with 4 clients (four
#   processes that share one domain through /tmp/xrc_domain), sizes up to
#   64 KiB, polling and with completion events (-e).
# - The seed's kernel-owned receive QP (srocedv_alloc_xrc_rcv_qp), its
#   creator gone, used from another namespace, gone with its domain.
# - SRQ with UD (seed 002-D, sroce_ud_srq): SROCEDV_DEVICE_FLAG_UD_SRQ, and
#   four UD senders' datagrams through one SRQ, every byte checked.
# vm-timeout: 900
. "$(dirname "$0")/lib.sh"

modprobe sroce
make_veth veth0 veth1
rdma link add sroce0 type sroce netdev veth0
check "sroce0's IPv4 GID" wait_until 10 gid_index sroce0 10.0.1.1
check "ibv_devinfo -v: XRC among the capabilities" sh -c "ibv_devinfo -v -d sroce0 | grep -qw XRC"
check_prog "sroce_xrc objects: domains, SRQ numbers, targets, initiators and their bad uses" \
	"$PROGS/sroce_xrc" sroce0 objects
check_prog "sroce_xrc share: one target, three processes, alive after its creator's handle, gone with the last" \
	"$PROGS/sroce_xrc" sroce0 share
check_prog "sroce_ud_srq: SRQ with UD (seed 002-D), its srocedv flag, 4 UD senders x 200 datagrams into one SRQ" \
	"$PROGS/sroce_ud_srq" sroce0 4 200
check "sroce0: nothing left alive" wait_until 20 counts_zero sroce0
rdma link delete sroce0
ip link del veth0

two_hosts 8 9000
check "sroce1 in h1, sroce2 in h2, with their IPv4 GIDs" sroce_on_hosts 8
port=19600
# xsrq_pp SIZE [ARGS]: a server with 4 clients, 20 messages each way per client.
xsrq_pp() {
	local size=$1 pids=() rc=0 i
	shift
	port=$((port + 1))
	rm -f /tmp/xrc_domain
	ip netns exec h1 timeout 120 ibv_xsrq_pingpong -d sroce1 -g "$g1" -p $port -s "$size" -c 4 -n 20 "$@" \
		>/tmp/xsrq.server 2>&1 &
	local spid=$!
	wait_until 30 sh -c "ip netns exec h1 ss -Hltn 'sport = :$port' | grep -q ."
	for i in 1 2 3 4; do
		ip netns exec h2 timeout 120 ibv_xsrq_pingpong -d sroce2 -g "$g2" -p $port -s "$size" -n 20 "$@" \
			10.0.8.1 >/tmp/xsrq.client$i 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	wait $spid || rc=1
	if [ $rc -eq 0 ]; then
		ok "ibv_xsrq_pingpong $size B, 4 clients $*: $(cat /tmp/xsrq.server /tmp/xsrq.client* | grep -c '^success') of 5 say success"
	else
		fail "ibv_xsrq_pingpong $size B, 4 clients $*"
		tail -n 5 /tmp/xsrq.server /tmp/xsrq.client* | sed 's/^/    /'
	fi
}
for size in 1 4096 65536; do
	xsrq_pp $size
	xsrq_pp $size -e
done

# The seed's kernel-owned receive QP (tests/progs/sroce_xrc_rcv.c): A, in
# h1, makes it in a file's domain and goes; B opens the domain, keeps it
# and receives through it; a sender in h2 runs SEND, WRITE and READ
# through it, then gets RETRY_EXC_ERR once B has closed the domain. Once
# with A and B exiting, once killed with SIGKILL (and a WRITE with a wrong
# rkey first, whose error event must reach the kernel log), and once with
# the device removed under the live QP while B holds the domain.
only_qp1() { [ "$(count_of "$1" qps)" = 1 ]; }
# The kernel-owned QPs sroce1 lists in debugfs, one line each.
rcv_qps() { sroce_counts sroce1 >/dev/null && cat /sys/kernel/debug/sroce/sroce1/xrc_rcv_qps; }
# rcv_qp_gone QPN: rdma res no longer lists the QP in h1.
rcv_qp_gone() { ! ip netns exec h1 rdma res show qp link sroce1/1 lqpn "$1" 2>/dev/null | grep -q "lqpn $1 "; }
xrc_rcv() {
	local mode=$1 d=/tmp/xrc_rcv.$1 hold_a="" hold_b="" badkey="" spid apid bpid qpn src xrcd
	rm -rf "$d"
	mkdir -p "$d"
	case $mode in
	kill) hold_a=hold hold_b=hold badkey=badkey ;;
	remove) hold_b=hold ;;
	esac
	ip netns exec h2 timeout 300 "$PROGS/sroce_xrc_rcv" sroce2 sender "$d" 100 $badkey >"$d/sender.out" 2>&1 &
	spid=$!
	ip netns exec h1 timeout 300 "$PROGS/sroce_xrc_rcv" sroce1 a "$d" 0 $hold_a >"$d/a.out" 2>&1 &
	apid=$!
	ip netns exec h1 timeout 300 "$PROGS/sroce_xrc_rcv" sroce1 b "$d" 100 $hold_b >"$d/b.out" 2>&1 &
	bpid=$!
	# A goes once B has the domain open too (timeout(1) is the PID the
	# shell knows: the program says its own).
	wait_until 60 test -e "$d/b_open"
	[ "$mode" = kill ] && wait_until 60 test -e "$d/a.pid" && kill -9 "$(cat "$d/a.pid")"
	wait $apid
	check "$mode: A made the receive QP and is gone" sh -c "[ -e $d/rcv ] && ! grep -q FAIL $d/a.out"
	sed 's/^/    /' "$d/a.out"
	qpn=$((16#$(cut -d' ' -f1 "$d/rcv")))
	# Before B goes on: with A gone, the QP is still there. (B makes its SRQ
	# only after a_gone, so every byte below goes through the QP after A is
	# gone; once B is released it may finish and close the domain at once.)
	check "$mode: after A, sroce1 counts QP1 and the receive QP $qpn" test "$(count_of sroce1 qps)" = 2
	ip netns exec h1 rdma res show qp link sroce1/1 lqpn $qpn -dd >"$d/res" 2>&1
	sed 's/^/    rdma res: /' "$d/res"
	check "$mode: after A, rdma res lists QP $qpn, XRC_TGT in RTR, in a domain" sh -c \
		"grep -q 'lqpn $qpn type XRC_TGT state RTR' $d/res && grep -Eq ' drv_xrcd [1-9]' $d/res"
	xrcd=$(sed -n 's/.* drv_xrcd \([0-9]*\).*/\1/p' "$d/res")
	rcv_qps | sed 's/^/    debugfs: /'
	check "$mode: after A, debugfs lists QP $qpn in RTR, in domain $xrcd" sh -c \
		"$(declare -f rcv_qps sroce_counts); rcv_qps | grep -qx 'qpn $(printf 0x%x "$qpn") state RTR xrcd $xrcd dest_qpn 0x[0-9a-f]* rq_psn [0-9]*'"
	echo 1 >"$d/a_gone"
	if [ -n "$hold_b" ]; then
		wait_until 120 test -e "$d/b.pid"
		[ -n "$badkey" ] && check "$mode: after the wrong rkey, debugfs shows the QP in ERR" sh -c \
			"$(declare -f rcv_qps sroce_counts); rcv_qps | grep -q '^qpn $(printf 0x%x "$qpn") state ERR '"
		if [ "$mode" = remove ]; then
			# The device goes under the live QP: ib_core disassociates B's
			# context, whose domain handle was the last, so dealloc_xrcd
			# destroys the QP and its PD; run-in-vm.sh's dmesg check and
			# the rmmod at the end see what is left behind.
			check "$mode: rdma link del sroce1 with the receive QP live and B holding the domain" \
				ip netns exec h1 timeout 60 rdma link del sroce1
			check "$mode: sroce1 is gone" wait_until 20 sh -c '! rdma link show | grep -q sroce1'
		fi
		kill -9 "$(cat "$d/b.pid")"
		wait $bpid
		echo 1 >"$d/closed"
		check "$mode: B received every SEND before SIGKILL" grep -q "^ok: B: 100 SENDs" "$d/b.out"
	else
		wait $bpid
		check "$mode: B received every SEND and closed the domain" sh -c "! grep -q FAIL $d/b.out"
	fi
	sed 's/^/    /' "$d/b.out"
	wait $spid
	src=$?
	if [ -n "$badkey" ]; then
		# A WRITE with a wrong rkey takes the receive QP to error: its
		# event goes to the kernel log (xrc_rcv.c), the last SEND flushes.
		check "$mode: the sender's rounds went through, then REM_ACCESS_ERR on a wrong rkey" test $src -eq 0
		check "$mode: the receive QP's event is in the kernel log" sh -c \
			"dmesg | grep -q 'sroce: kernel-owned XRC receive QP $(printf 0x%x "$qpn"): '"
		dmesg | grep 'kernel-owned XRC receive QP' | sed 's/^/    /'
	else
		check "$mode: the sender's rounds went through, then RETRY_EXC_ERR" test $src -eq 0
	fi
	sed 's/^/    /' "$d/sender.out"
	if [ "$mode" = remove ]; then
		check "$mode: sroce1 again, for the end's checks" \
			ip netns exec h1 rdma link add sroce1 type sroce netdev veth-h1
		return
	fi
	check "$mode: the receive QP is gone with the domain (sroce1 counts QP1 only)" wait_until 10 only_qp1 sroce1
	check "$mode: rdma res no longer lists it" rcv_qp_gone $qpn
	check "$mode: nor debugfs" test -z "$(rcv_qps)"
}
# The exiting run is captured on h1's side: sroce-dump and tshark must
# read it alike, and every XRC request names B's SRQ (capture_agree.py).
work=${VM_OUT:+$VM_OUT/92-xrc}
work=${work:-$(mktemp -d)}
rm -rf "$work"
mkdir -p "$work"
DUMP=$TOP/build/user/sroce-dump
ip netns exec h1 "$DUMP" -i veth-h1 -w "$work/xrc.pcap" 2>"$work/dump.err" &
dpid=$!
sleep 1
check "capture running on veth-h1" kill -0 $dpid
xrc_rcv exit
kill -INT $dpid
wait $dpid
log "  capture: $(tail -1 "$work/dump.err")"
check "the capture lost nothing" grep -q ' 0 dropped by kernel$' "$work/dump.err"
"$DUMP" -r "$work/xrc.pcap" --json >"$work/xrc.json" 2>&1
tshark -r "$work/xrc.pcap" -T fields -E separator=/t -e infiniband.bth.opcode -e infiniband.bth.destqp \
	-e infiniband.bth.psn -e infiniband.aeth.syndrome -e infiniband.reth.dmalen -e infiniband.vendor \
	>"$work/xrc.tshark" 2>"$work/tshark.err"
srqn=$(sed -n 's/^ok: B: its own XRC SRQ \([0-9]*\) .*/\1/p' /tmp/xrc_rcv.exit/b.out)
check "sroce-dump --json and tshark agree on every packet; every XRC request names B's SRQ $srqn" \
	python3 "$TOP/tests/vm/capture_agree.py" "$work/xrc.json" "$work/xrc.tshark" --srcs 10.0.8.1,10.0.8.2 \
	--want a0,a2,a4,a6,a8,ac,ad,af,b1 --srqn "$srqn"
"$DUMP" -r "$work/xrc.pcap" | awk '!seen[$6]++' | head -12 | sed 's/^/    /'
xrc_rcv kill
xrc_rcv remove
end_two_hosts
finish

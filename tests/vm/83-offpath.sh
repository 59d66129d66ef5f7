#!/usr/bin/env bash
# Off-path injection: hosts A (10.0.83.1) and B (10.0.83.2) run a real RC
# transfer (sroce_integrity over rdma_cm, B the client) across a bridge; an
# attacker C (10.0.83.3) on the same bridge reads the live QPNs, PSNs and
# A's rkey with `rdma res show -dd` and injects, from its own address with
# valid ICRCs and the right PSNs: a SEND and a WRITE (into A's target
# region) and a READ request at A's QP, an ACK covering B's unacknowledged
# PSNs and a remote access NAK at B's QP. B's egress is held (netem loss
# 100%) meanwhile, so B has PSNs outstanding and A's state stands still.
# Then, B's egress open again, a SEND with the right addresses (from B's
# address) but BTH P_Key 0x1234. The ACK timeout is 17 s (-t 22): with 7
# retries both QPs outlive a hold of up to 2 min (at -t 20, 4 s, a hold of
# over 34 s, the machine busy, once ended the transfer in RETRY_EXC_ERR);
# under SROCE_VM_TIMEOUT_SCALE (the debug kernel: a hold of 272 s) it is
# 137 s. Every forged packet must be dropped and counted by the core's
# checks (connected QPs take packets only from their peer's address, to
# their own, with a valid P_Key: rx_bad_addr and rx_bad_pkey of `rdma
# statistic`), no state may move, and the transfer must complete with every
# byte right.
# vm-timeout: 300
. "$(dirname "$0")/lib.sh"

bridge_hosts br83 83 a b c
# C knows A's and B's MACs: ARP cannot resolve B while its egress is held.
for n in a b; do
	ip -n c neigh replace "10.0.83.$([ $n = a ] && echo 1 || echo 2)" dev eth0 nud permanent \
		lladdr "$(ip -n $n -br link show eth0 | awk '{ print $3 }')"
done
modprobe sroce
check "sroce on A and B" sh -c 'ip netns exec a rdma link add sra type sroce netdev eth0 &&
	ip netns exec b rdma link add srb type sroce netdev eth0'
check "GIDs" eval 'wait_until 10 gid_index sra 10.0.83.1 && wait_until 10 gid_index srb 10.0.83.2'
FORGE=(/usr/bin/python3 "$TOP/tests/vm/roce_forge.py")

# qp_field DEV FIELD: FIELD of DEV's sroce_integrity RC QP (rdma res -dd).
qp_field() {
	rdma res show qp link "$1" -dd | awk -v f="$2" '/type RC/ && /comm sroce_integrity/ {
		for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }' | head -1
}
# mr_field DEV FIELD: FIELD of DEV's largest sroce_integrity MR.
mr_field() {
	rdma res show mr dev "$1" -dd | awk -v f="$2" '/comm sroce_integrity/ {
		for (i = 1; i < NF; i++) { if ($i == "mrlen") l = $(i + 1); if ($i == f) v = $(i + 1) }
		if (l + 0 > best) { best = l + 0; out = v } } END { print out }'
}
# drops DEV: the core's drops of packets from a wrong address or with a
# wrong P_Key (rdma statistic: rx_bad_addr + rx_bad_pkey).
drops() {
	rdma statistic show link "$1/1" | awk '{ for (i = 1; i < NF; i++) if ($i == "rx_bad_addr" || $i == "rx_bad_pkey") s += $(i + 1) } END { print s + 0 }'
}
stat() { rdma statistic show link "$1/1" | awk -v f="$2" '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }'; }

port=19830
acktmo=$(ack_timeout 22)
l0=$(cm_listeners)
ip netns exec a timeout 250 "$PROGS/sroce_integrity" -s -a 10.0.83.1 -p $port -t $acktmo \
	-w "$(scaled_secs 200)" >/tmp/op.srv 2>&1 &
spid=$!
check "the server listens" wait_until 20 cm_listening "$l0"
ip netns exec b timeout 250 "$PROGS/sroce_integrity" -c -a 10.0.83.1 -p $port -n 2000 -m 65536 -S 83 \
	-t $acktmo -r 7 -w "$(scaled_secs 200)" >/tmp/op.cli 2>&1 &
cpid=$!
check "the transfer runs (both QPs in RTS)" wait_until 30 sh -c "[ \"\$(rdma res show qp link sra -dd | grep -c 'type RC state RTS.*comm sroce_integrity')\" = 1 ] &&
	[ \"\$(rdma res show qp link srb -dd | grep -c 'type RC state RTS.*comm sroce_integrity')\" = 1 ]"
sleep 2

# Hold B's egress until B has PSNs outstanding (up to 10 tries).
held=0
t_hold=$SECONDS
for _ in 1 2 3 4 5 6 7 8 9 10; do
	tc -n b qdisc add dev eth0 root netem loss 100%
	sleep 0.5
	read -r bsq bun < <(rdma res show qp link srb -dd | awk '/type RC/ && /comm sroce_integrity/ {
		for (i = 1; i < NF; i++) { if ($i == "drv_sq_psn") s = $(i + 1); if ($i == "drv_sq_unacked_psn") u = $(i + 1) }
		print s, u; exit }')
	if [ -n "$bsq" ] && [ "$bsq" != "$bun" ]; then held=1; break; fi
	tc -n b qdisc del dev eth0 root
	sleep 0.3
	t_hold=$SECONDS
done
check "B holds unacknowledged PSNs ($bun..$((bsq - 1)))" test $held = 1

aqpn=$(qp_field sra lqpn)
arq=$(qp_field sra drv_rq_psn)
amsn=$(qp_field sra drv_msn)
bqpn=$(qp_field srb lqpn)
brq=$(qp_field srb drv_rq_psn)
rkey=$(mr_field sra drv_rkey)
iova=$(mr_field sra drv_iova)
log "  A: QP $aqpn rq_psn $arq msn $amsn, MR rkey $rkey iova $iova; B: QP $bqpn sq_psn $bsq unacked $bun rq_psn $brq"
da=$(drops sra)
db=$(drops srb)
na=$(stat srb nak_rcvd_rem_access)
inject() { # inject WHAT NS SRC DST QPN PSN KIND [k=v...]
	local what=$1 ns=$2
	shift 2
	check "C injects $what" ip netns exec "$ns" "${FORGE[@]}" send "$@"
}
inject "a SEND at A's QP (PSN $arq)" c 10.0.83.3 10.0.83.1 "$aqpn" "$arq" send
inject "a WRITE into A's MR (rkey $rkey)" c 10.0.83.3 10.0.83.1 "$aqpn" "$arq" write va=$((iova + 4096)) rkey="$rkey"
inject "a READ request of A's MR" c 10.0.83.3 10.0.83.1 "$aqpn" "$arq" read va="$iova" rkey="$rkey" len=4096
inject "an ACK of B's PSNs up to $((bsq - 1))" c 10.0.83.3 10.0.83.2 "$bqpn" $(((bsq - 1) & 0xffffff)) ack msn=$((amsn + 100))
inject "a remote access NAK at B (PSN $bun)" c 10.0.83.3 10.0.83.2 "$bqpn" "$bun" nak syn=0x62
sleep 1
check "A's QP took nothing (rq_psn $arq, msn $amsn)" \
	test "$(qp_field sra drv_rq_psn) $(qp_field sra drv_msn)" = "$arq $amsn"
check "A answered no READ (responses_pending 0)" test "$(qp_field sra drv_responses_pending)" = 0
check "B completed nothing falsely (unacked PSN still $bun)" test "$(qp_field srb drv_sq_unacked_psn)" = "$bun"
check "B took no NAK (nak_rcvd_rem_access unchanged)" test "$(stat srb nak_rcvd_rem_access)" = "$na"
both_rts() { rdma res show qp link sra | grep -q 'type RC state RTS' && rdma res show qp link srb | grep -q 'type RC state RTS'; }
check "both QPs still in RTS" both_rts
both_rts || rdma res show qp | grep 'type RC' | sed 's/^/    /'
log "  rx_bad_addr + rx_bad_pkey: A +$(($(drops sra) - da)) B +$(($(drops srb) - db))"
check "A dropped and counted its 3 forged packets (rx_bad_addr)" test $(($(drops sra) - da)) -eq 3
check "B dropped and counted its 2 forged packets (rx_bad_addr)" test $(($(drops srb) - db)) -eq 2
rdma statistic show link sra/1 | tr ' ' '\n' | grep -A1 '^rx_bad' | paste - - | tr '\n' ' '
log ""

tc -n b qdisc del dev eth0 root
log "  B's egress was held for $((SECONDS - t_hold)) s (the QPs' budget: 8 x 4.096 us x 2^$acktmo)"
# The right addresses (B to A, from B's namespace, its egress open again),
# a P_Key A does not have. A SEND A took would fail the server's checks.
da=$(drops sra)
inject "from B's address, P_Key 0x1234, a SEND at A" b 10.0.83.2 10.0.83.1 "$aqpn" "$(qp_field sra drv_rq_psn)" send pkey=0x1234
one_more() { [ $(($(drops sra) - $1)) -eq 1 ]; }
check "A dropped and counted it (rx_bad_pkey)" wait_until 5 one_more "$da"
wait $cpid
crc=$?
wait $spid
src=$?
# The last lines, and any completion or check that failed before them.
{ grep -m3 'FAIL\|status' /tmp/op.cli; tail -2 /tmp/op.cli; } | uniq | sed 's/^/    client: /'
{ grep -m3 'FAIL\|status' /tmp/op.srv; tail -2 /tmp/op.srv; } | uniq | sed 's/^/    server: /'
check "the transfer completes, every byte checked (client $crc, server $src)" test "$crc $src" = "0 0"
check "A: nothing left alive" wait_until 20 counts_zero sra
check "B: nothing left alive" wait_until 20 counts_zero srb
for n in a b c; do ip netns del $n; done
ip link del br83
check "devices gone" wait_until 20 sh -c '! rdma link show | grep -q sr[ab]'
check "rmmod sroce" wait_until 20 rmmod sroce
finish

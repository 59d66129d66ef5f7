#!/usr/bin/env bash
# Randomized packet fuzzing of live devices (tests/vm/wire_fuzz.py). Hosts A
# (10.0.90.1, fd00:90::1) and B (.2) on a bridge, a sroce device each, run
#  - the victim: one sroce_integrity transfer over IPv4, every byte checked;
#  - the wild transfers: sroce_integrity over IPv6, one after another for as
#    long as the victim runs.
# Meanwhile the fuzzer captures their frames on B's link and replays mutated
# copies from the real sender's side (so they pass the address checks):
# victim frames with any field changed but their PSN moved where a correct
# device must not act on it; wild frames with PSNs in the live window,
# opcodes switched mid-message and RETH/atomic fields at the edges of the
# wild server's MR; the wild connections' CM MADs from A to B's QP1, mutated.
# Must hold: the victim completes with every byte and guard right; each wild
# transfer ends (success, or an error it reports: no hang, no crash) and
# never finds a guard byte changed; the fuzzer really sent every class
# while the victim ran; the kernel log stays clean (run-in-vm.sh); rdma_cm
# still connects afterwards; nothing is left alive and sroce unloads.
# FUZZ_SEED (default 90) fixes the run; FUZZ_OPS sizes the victim (the
# slow suite's 90-wire-fuzz-long runs it ten times longer).
# vm-timeout: 600
. "$(dirname "$0")/lib.sh"

seed=${FUZZ_SEED:-90}
# 5000: in doorbell mode (sq_poll=auto's choice on two vCPUs) 2500
# operations took 40 s, too short for 300 victim frames (185 sent).
ops=${FUZZ_OPS:-5000}
work=$(mktemp -d)
bridge_hosts br90 90 -6 a b
modprobe sroce
check "sroce on A and B" sh -c 'ip netns exec a rdma link add sra type sroce netdev eth0 &&
	ip netns exec b rdma link add srb type sroce netdev eth0'
has_gid() { grep -qx "$2" /sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null; }
check "IPv4 and IPv6 GIDs" eval 'wait_until 10 gid_index sra 10.0.90.1 && wait_until 10 gid_index srb 10.0.90.2 &&
	wait_until 10 has_gid sra fd00:0090:0000:0000:0000:0000:0000:0001 &&
	wait_until 10 has_gid srb fd00:0090:0000:0000:0000:0000:0000:0002'
INTEG=("$PROGS/sroce_integrity")
# ACK timeouts (IB exponents) and rdma_cm waits. The debug kernel
# (SROCE_VM_TIMEOUT_SCALE) runs this 5-15x slower: there the victim's 268 ms
# x 8 retries ran out (RETRY_EXC_ERR) and the wild servers' 10 s wait for a
# connect request too, so both grow by 8x.
vt=$(ack_timeout 16) wt=$(ack_timeout 14) ww=$(scaled_secs 10) vw=$(scaled_secs 120)

# The wild transfers: one pair after another until the victim is done.
wild_loop() {
	local k=0 port srv cli l
	while [ ! -e "$work/stop" ]; do
		k=$((k + 1))
		port=$((19900 + k))
		l=$(cm_listeners)
		ip netns exec a timeout 120 "${INTEG[@]}" -s -a fd00:90::1 -p $port -t $wt -r 3 -w $ww \
			>"$work/wild$k.srv" 2>&1 &
		srv=$!
		echo $srv >"$work/wild.pid"
		wait_until 20 cm_listening "$l"
		ip netns exec b timeout 120 "${INTEG[@]}" -c -a fd00:90::1 -p $port -n 1500 -m 65536 -S $k \
			-t $wt -r 3 -w $ww >"$work/wild$k.cli" 2>&1
		cli=$?
		wait $srv
		echo "$k $? $cli" >>"$work/wild.status"
	done
}

l0=$(cm_listeners)
ip netns exec a timeout $((ops / 5 + 300)) "${INTEG[@]}" -s -a 10.0.90.1 -p 19900 -t $vt -r 7 -w $vw >"$work/v.srv" 2>&1 &
vs=$!
check "the victim's server listens" wait_until 20 cm_listening "$l0"
ip netns exec b timeout $((ops / 5 + 300)) "${INTEG[@]}" -c -a 10.0.90.1 -p 19900 -n "$ops" -m 131072 -S "$seed" -t $vt -r 7 \
	-w $vw >"$work/v.cli" 2>&1 &
vc=$!
wild_loop &
wl=$!
# The victim's QPs as the kernel sees them (PSNs, window, retries, timer),
# every 5 s, so that a stalled victim shows where each end stood.
qp_watch() {
	local i=0 p
	while [ ! -e "$work/stop" ]; do
		i=$((i + 1))
		for p in $(pgrep -f "sroce_integrity -[cs] -a 10.0.90.1"); do
			rdma res show qp -dd | grep " pid $p " | sed "s/^/[$((i * 5)) s] /"
		done >>"$work/qp.log" 2>&1
		sleep 5
	done
}
qp_watch &
qw=$!
# Minimums per class; the wild and MAD ones may be made up after the
# victim's end while the wild transfers go on (WIRE_FUZZ_DRAIN).
min_victim=300 min_wild=100 min_mad=10
WIRE_FUZZ_MIN=wild=$min_wild,mad=$min_mad WIRE_FUZZ_DRAIN=$(scaled_secs 60) \
	/usr/bin/python3 "$TOP/tests/vm/wire_fuzz.py" a b eth0 "$seed" 3600 10.0.90. fd00:90:: "sra:$work/wild.pid" \
	>"$work/fuzz.out" 2>&1 &
fz=$!

wait $vc
vcrc=$?
wait $vs
vsrc=$?
kill -TERM $fz 2>/dev/null
wait $fz
fzrc=$?
touch "$work/stop"
wait $wl $qw

sed 's/^/    fuzzer: /' "$work/fuzz.out"
{ grep FAIL "$work/v.cli" | head -5; tail -1 "$work/v.cli"; } | sed 's/^/    victim client: /'
{ grep FAIL "$work/v.srv" | head -5; tail -1 "$work/v.srv"; } | sed 's/^/    victim server: /'
[ "$vcrc $vsrc" = "0 0" ] || tail -8 "$work/qp.log" | sed 's/^/    victim QP: /'
check "the fuzzer ran to the end of the victim (exit $fzrc)" test "$fzrc" = 0
sent() { awk -v c="$1" '$1 == "sent" && $2 == c { s += $4 } END { print s + 0 }' "$work/fuzz.out"; }
log "  sent: victim $(sent victim), wild $(sent wild), mad $(sent mad)"
check "it fuzzed the victim's flows (at least $min_victim frames)" test "$(sent victim)" -ge $min_victim
check "it fuzzed the wild flows (at least $min_wild frames)" test "$(sent wild)" -ge $min_wild
check "it sent the wild connections' MADs to QP1 (at least $min_mad)" test "$(sent mad)" -ge $min_mad
check "the victim completes, every byte and guard right (client $vcrc, server $vsrc)" test "$vcrc $vsrc" = "0 0"

# Each wild transfer ended by itself, with success or a reported error
# (exit 1). 124 is a hang; above 128, a crash.
log "  wild transfers (run, server exit, client exit): $(tr '\n' ' ' <"$work/wild.status")"
check "at least one wild transfer ran during the fuzzing" test -s "$work/wild.status"
check "every wild transfer ended by itself (exit 0 or 1)" \
	awk '$2 > 1 || $3 > 1 { bad = 1 } END { exit bad }' "$work/wild.status"
grep -h 'FAIL' "$work"/wild*.cli "$work"/wild*.srv 2>/dev/null | sort | uniq -c | sort -rn | head -8 | sed 's/^/    wild: /'
check "no wild transfer found a byte outside its SGEs changed (guard)" \
	sh -c "! grep -lE 'outside its SGEs|past its SGEs' $work/wild*.cli $work/wild*.srv"

# The client starts once the server listens: a fixed 1 s head start was
# once too short on a busy machine (the client's connect was refused).
l0=$(cm_listeners)
ip netns exec a timeout 60 rping -s -a 10.0.90.1 -C 5 >"$work/rping.srv" 2>&1 &
check "rping's server listens" wait_until 20 cm_listening "$l0"
ip netns exec b timeout 60 rping -c -a 10.0.90.1 -C 5 -V >"$work/rping.cli" 2>&1
rc=$?
wait $!
src=$?
check "rdma_cm still connects A and B (rping, IPv4: client $rc, server $src)" test "$rc $src" = "0 0"
[ "$rc $src" = "0 0" ] || tail -3 "$work"/rping.* | sed 's/^/    /'
check "A: nothing left alive" wait_until 30 counts_zero sra
check "B: nothing left alive" wait_until 30 counts_zero srb
for n in a b; do ip netns del $n; done
ip link del br90
check "devices gone" wait_until 20 sh -c '! rdma link show | grep -q sr[ab]'
check "rmmod sroce" wait_until 20 rmmod sroce
rm -rf "$work"
finish

#!/usr/bin/env bash
# Runs inside one test VM (scripts/bench.sh boots it): sroce and rdma_rxe
# side by side, each as two hosts on its own veth pair (MTU 9000, IB MTU
# 4096), perftest runs interleaved sroce, rxe, sroce, rxe, ...
#
#   in-vm.sh OUTDIR RUNS DURATION LAT_ITERS [FILTER [KSOFTIRQD_RT [SROCE_PARAMS]]]
#
# OUTDIR must be vm-run's --out folder ($VM_OUT): nothing else the guest
# writes survives the VM.
#
# The server is pinned to CPU 0, the client to CPU 1: two spinning
# perftest processes left to the scheduler sometimes share one vCPU, and a
# ping-pong then waits a scheduler slice (~4 ms) per exchange, whatever
# the driver.
# Bandwidth runs last DURATION seconds and measure the middle (perftest
# -D DURATION -f 1: one second of margin at each end); latency runs make
# LAT_ITERS exchanges.
# Every run's perftest client output goes to OUTDIR/raw/<driver>.<case>.<run>,
# and one line per run to OUTDIR/runs.tsv:
#   driver  test  bytes  qps  run  status  file
# (parsing is done on the host by scripts/bench/report.py). FILTER, if given,
# is an extended regex on "test bytes qps" that selects cases. KSOFTIRQD_RT
# 0 leaves ksoftirqd alone (default 1, see below).
#
# Topology: sroce in namespaces h1/h2 on veth-h1/veth-h2 (10.0.8.1/2). rxe on
# 6.1 only works in init_net (its UDP socket and route look-ups are there),
# so its two devices sit on veth-ra/veth-rb (10.0.9.1/2), both in init_net,
# with policy routes that send traffic between the two addresses over the
# veth instead of the local shortcut: both drivers' packets cross a veth
# and the IP stack, neither takes rxe's same-device loopback.
set -u
out=$1 runs=$2 dur=$3 lat_iters=$4 filter=${5:-.} ksoftirqd_rt=${6:-1} sroce_params=${7:-}
. "$(dirname "$0")/../../tests/vm/lib.sh"
mkdir -p "$out/raw"
: >"$out/runs.tsv"

modprobe crc32_generic 2>/dev/null
modprobe rdma_rxe || exit 1
modprobe sroce $sroce_params || exit 1

# sroce: two namespaces.
two_hosts 8 9000 || exit 1
ip netns exec h1 rdma link add sroce1 type sroce netdev veth-h1 || exit 1
ip netns exec h2 rdma link add sroce2 type sroce netdev veth-h2 || exit 1

# rxe: init_net, traffic forced through the veth.
ip link set lo up
ip link add veth-ra type veth peer name veth-rb || exit 1
for d in all default; do
	sysctl -qw net.ipv4.conf.$d.rp_filter=0 net.ipv4.conf.$d.accept_local=1
done
for d in veth-ra veth-rb; do
	ip link set $d mtu 9000 up
	sysctl -qw net.ipv4.conf.$d.rp_filter=0 net.ipv4.conf.$d.accept_local=1
done
ip addr add 10.0.9.1/32 dev veth-ra
ip addr add 10.0.9.2/32 dev veth-rb
mac_a=$(cat /sys/class/net/veth-ra/address)
mac_b=$(cat /sys/class/net/veth-rb/address)
ip neigh replace 10.0.9.2 lladdr "$mac_b" dev veth-ra nud permanent
ip neigh replace 10.0.9.1 lladdr "$mac_a" dev veth-rb nud permanent
ip route add 10.0.9.2 dev veth-ra src 10.0.9.1 table 92
ip route add 10.0.9.1 dev veth-rb src 10.0.9.2 table 91
# Locally generated packets (iif lo) to the other end take the veth; the
# local table moves behind these rules so it no longer short-cuts them.
ip rule add pref 10 iif lo to 10.0.9.2 lookup 92
ip rule add pref 11 iif lo to 10.0.9.1 lookup 91
ip rule add pref 100 lookup local
ip rule del pref 0
rdma link add rxe1 type rxe netdev veth-ra || exit 1
rdma link add rxe2 type rxe netdev veth-rb || exit 1

wait_until 10 gid_index sroce1 10.0.8.1 && wait_until 10 gid_index sroce2 10.0.8.2 || exit 1
wait_until 10 gid_index rxe1 10.0.9.1 && wait_until 10 gid_index rxe2 10.0.9.2 || exit 1
declare -A dev1 dev2 gid1 gid2 ns1 ns2 addr
dev1[sroce]=sroce1 dev2[sroce]=sroce2 ns1[sroce]="ip netns exec h1" ns2[sroce]="ip netns exec h2"
dev1[rxe]=rxe1 dev2[rxe]=rxe2 ns1[rxe]="" ns2[rxe]=""
gid1[sroce]=$(gid_index sroce1 10.0.8.1) gid2[sroce]=$(gid_index sroce2 10.0.8.2)
gid1[rxe]=$(gid_index rxe1 10.0.9.1) gid2[rxe]=$(gid_index rxe2 10.0.9.2)
addr[sroce]=10.0.8.1 addr[rxe]=10.0.9.1

{
	echo "kernel $(uname -r)"
	echo "nproc $(nproc)"
	echo "cpu $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
	# perftest's own CPU-clock estimate fails under TCG (r^2 < 0.9, then
	# it prints inf): latencies are taken in TSC cycles (-C) and converted
	# with the kernel's TSC calibration.
	echo "tsc_mhz $(dmesg | sed -nE 's/.*tsc: Refined TSC clocksource calibration: ([0-9.]+) MHz.*/\1/p; s/.*tsc: Detected ([0-9.]+) MHz processor.*/\1/p' | tail -1)"
	echo "perftest $(dpkg-query -W -f '${Version}' perftest 2>/dev/null)"
	# The module's parameters as loaded (sq_poll and the like, once they exist).
	echo "sroce_params $(for f in /sys/module/sroce/parameters/*; do [ -r "$f" ] && printf '%s=%s ' "${f##*/}" "$(cat "$f")"; done)"
	# What sq_poll=auto chose: the poller threads running (0: doorbell mode).
	echo "sq_pollers $(pgrep -c 'sqpoll' || true)"
	# The module's own timings at load (<debugfs>/sroce/icrc): memcpy and
	# the ICRC per 4 KiB, and the bandwidth they allow on one and two CPUs.
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	sed 's/^/icrc_/' /sys/kernel/debug/sroce/icrc 2>/dev/null
	for d in sroce1 rxe1; do
		echo "mtu $d $(${ns1[${d%1}]} ibv_devinfo -d $d | awk '/active_mtu/ { print $2 }')"
	done
} >"$out/machine.txt"

# ksoftirqd at SCHED_FIFO 50, for both drivers. Once a CPU's ksoftirqd is
# runnable, the kernel defers all softirq work there to it (NET_RX
# included); as a normal task it then waits until the scheduler preempts
# the busy-polling perftest on that CPU, at a tick. Each ping-pong exchange
# then takes 4 or 8 ms (HZ=250) whatever the driver; measured in this VM:
# ib_write_lat 8 ms typical for both drivers, 117 us with this setting.
if [ "$ksoftirqd_rt" = 1 ]; then
	for p in $(pgrep -x 'ksoftirqd/[0-9]+'); do
		chrt -f -p 50 "$p" >/dev/null
	done
	echo "ksoftirqd SCHED_FIFO 50" >>"$out/machine.txt"
else
	echo "ksoftirqd SCHED_OTHER (default)" >>"$out/machine.txt"
fi

port=21000
# record DRIVER TEST BYTES QPS RUN STATUS FILE: one line of runs.tsv (of
# $runs_tsv: the profiled runs go elsewhere, perf slows them).
runs_tsv=$out/runs.tsv
record() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "raw/${7##*/raw/}" >>"$runs_tsv"
}

# one DRIVER TEST BYTES QPS RUN ARGS...: one server/client run.
one() {
	local drv=$1 t=$2 bytes=$3 qps=$4 run=$5 spid rc1 rc2
	shift 5
	local f="$out/raw/$drv.$t.$bytes.q$qps.$run"
	port=$((port + 1))
	local common=(-F -u 18 -p $port "$@")
	${ns1[$drv]} timeout 200 taskset -c 0 $t -d "${dev1[$drv]}" -x "${gid1[$drv]}" "${common[@]}" >"$f.server" 2>&1 &
	spid=$!
	wait_until 30 sh -c "${ns1[$drv]} ss -Hltn 'sport = :$port' | grep -q ."
	${ns2[$drv]} timeout 200 taskset -c 1 $t -d "${dev2[$drv]}" -x "${gid2[$drv]}" "${common[@]}" "${addr[$drv]}" >"$f" 2>&1
	rc2=$?
	wait $spid
	rc1=$?
	record "$drv" "$t" "$bytes" "$qps" "$run" "$rc1/$rc2" "$f"
	echo "$(date +%T) $drv $t $bytes B q$qps run $run: exit $rc1/$rc2, $(grep -E '^ *[0-9]+ +[0-9]+ ' "$f" | tail -1 | tr -s ' ')"
}

# case TEST BYTES QPS ARGS...: RUNS interleaved pairs of runs.
case_() {
	local t=$1 bytes=$2 qps=$3 r
	shift 3
	echo "$t $bytes $qps" | grep -qE -- "$filter" || return 0
	for r in $(seq 1 "$runs"); do
		one sroce "$t" "$bytes" "$qps" "$r" "$@"
		one rxe "$t" "$bytes" "$qps" "$r" "$@"
	done
}

for t in ib_send_bw ib_write_bw ib_read_bw; do
	for s in 64 4096 65536; do
		case_ $t $s 1 -s $s -D "$dur" -f 1
	done
	for q in 2 4 8; do
		case_ $t 4096 $q -s 4096 -q $q -D "$dur" -f 1
	done
done
for t in ib_send_lat ib_write_lat ib_read_lat; do
	case_ $t 8 1 -s 8 -n "$lat_iters" -C
done

# rate PROG NAME DRV MODE RUN: one run of a 64-byte message-rate program
# (sroce_post_rate, sroce_mp_rate) from dev2 to dev1 for $dur seconds: one
# process holds both ends (every device is visible from init_net), pinned
# to CPU 1; row "NAME_MODE 64 1" in runs.tsv.
rate() {
	local prog=$1 t=$2_$4 drv=$3 mode=$4 run=$5 rc
	local f="$out/raw/$drv.$t.64.q1.$run"
	timeout 200 taskset -c 1 "$PROGS/$prog" "${dev2[$drv]}" "${dev1[$drv]}" "$mode" "$dur" >"$f" 2>&1
	rc=$?
	record "$drv" "$t" 64 1 "$run" "0/$rc" "$f"
	echo "$(date +%T) $drv $t run $run: exit $rc, $(grep -E '^ +64 +[0-9]|^recv_posts|^FAIL' "$f" | tr -s ' ' | tr '\n' ' ')"
}

# The 64-byte WRITE message rate by posting interface, ibv_post_send
# against the ibv_wr_* builders and (sroce only) the interface families
# (tests/progs/sroce_post_rate.c); rows
# "post_rate_post|post_rate_wr|post_rate_family 64 1".
for mode in post wr family; do
	echo "post_rate_$mode 64 1" | grep -qE -- "$filter" || continue
	for r in $(seq 1 "$runs"); do
		rate sroce_post_rate post_rate sroce $mode "$r"
		# rxe has no interface families (srocedv_query_intf is sroce's).
		[ $mode = family ] || rate sroce_post_rate post_rate rxe $mode "$r"
	done
done

# The 64-byte SEND receive rate and the receive WRs posted per packet:
# ordinary receive WRs of 64 bytes (plain) against multi-packet WRs of
# 1 MiB with 4 KiB alignment (mp, sroce only: issue 19's Example B, 256
# packets a WR) (tests/progs/sroce_mp_rate.c); rows
# "mp_rate_plain|mp_rate_mp 64 1", the raw file's last line
# "recv_posts P packets N posts_per_packet X". The modes interleave: plain,
# mp, plain, mp, ...
for r in $(seq 1 "$runs"); do
	for mode in plain mp; do
		echo "mp_rate_$mode 64 1" | grep -qE -- "$filter" || continue
		rate sroce_mp_rate mp_rate sroce $mode "$r"
		# rxe has no multi-packet receive (srocedv's).
		[ $mode = mp ] || rate sroce_mp_rate mp_rate rxe $mode "$r"
	done
done

# Instructions per WR in user space, sroce's provider against rxe's
# (librxe): sroce_post_rate under callgrind, whose inclusive count of its
# post_batch divides by the WRs it printed. Kernel work is not counted:
# each of rxe's post_batch calls ends in a write() system call (its
# doorbell), sroce's SQ poller takes none. (Polling is left to the host
# bench: here the count would mostly be the empty polls while sroce's
# poller works, which rxe, finishing inside the system call, never makes.)
# Rows "drv mode instructions_per_wr" in ir.tsv.
post_ir() {
	local drv=$1 mode=$2 post posted
	local f="$out/raw/$drv.post_ir_$mode"
	timeout 600 taskset -c 1 valgrind --tool=callgrind --callgrind-out-file="$f.cg" \
		"$PROGS/sroce_post_rate" "${dev2[$drv]}" "${dev1[$drv]}" "$mode" 6 >"$f" 2>&1 ||
		{ echo "$(date +%T) $drv post_ir_$mode: exit $?"; return; }
	callgrind_annotate --inclusive=yes --threshold=100 "$f.cg" >"$f.annotate" 2>/dev/null
	# The program's own function (gcc could name it post_batch.constprop.0).
	post=$(awk '$0 ~ /:post_batch(\.[a-z0-9.]+)? \[/ { gsub(",", "", $1); print $1; exit }' "$f.annotate")
	posted=$(sed -n 's/^posted \([0-9]*\)$/\1/p' "$f")
	[ -n "$post" ] && [ -n "$posted" ] || { echo "$(date +%T) $drv post_ir_$mode: no count"; return; }
	printf '%s\t%s\t%s\n' "$drv" "$mode" "$(awk -v i="$post" -v n="$posted" 'BEGIN { printf "%.1f", i / n }')" \
		>>"$out/ir.tsv"
	echo "$(date +%T) $drv post_ir_$mode: $post instructions over $posted WRs"
}
if echo "post_ir 64 1" | grep -qE -- "$filter"; then
	for mode in post wr family; do
		post_ir sroce $mode
		[ $mode = family ] || post_ir rxe $mode
	done
fi

# Sending one column of a ROWS x ROWS matrix of 8-byte cells
# (tests/progs/sroce_bench_column.c), three ways: through a non-contiguous
# window's lkey (mw, sroce only: rxe has no layouts), one SGE per cell (sge)
# and packed by memcpy (pack); one process, pinned to CPU 1, as post_rate.
# Rows "column_mw|column_sge|column_pack BYTES 1" in runs.tsv, BYTES the
# column's, ROWS * 8.
column() {
	local drv=$1 way=$2 rows=$3 run=$4 rc
	local f="$out/raw/$drv.column_$way.$((rows * 8)).q1.$run"
	timeout 200 taskset -c 1 "$PROGS/sroce_bench_column" "${dev2[$drv]}" "${dev1[$drv]}" "$way" "$rows" "$dur" >"$f" 2>&1
	rc=$?
	record "$drv" "column_$way" $((rows * 8)) 1 "$run" "0/$rc" "$f"
	echo "$(date +%T) $drv column_$way $rows rows run $run: exit $rc, $(tail -1 "$f" | tr -s ' ')"
}
# The ways interleave too: mw, sge, pack, mw, sge, pack, ...
for rows in 64 4096; do
	for r in $(seq 1 "$runs"); do
		for way in mw sge pack; do
			echo "column_$way $((rows * 8)) 1" | grep -qE -- "$filter" || continue
			column sroce $way $rows "$r"
			[ $way = mw ] || column rxe $way $rows "$r"
		done
	done
done

# Loss recovery: sroce_integrity (WRITE, READ, SEND both ways and
# FETCH_ADD, up to 300 KB over several SGEs, every byte checked; timeout 16,
# 268 ms; retry_cnt 7) over rdma_cm between the two hosts of each driver,
# netem loss on both ends of its veth, QP1 spared (lib.sh's netem_dev). Rows
# "loss_PCT 300000 1" in runs.tsv; the raw file ends with the client's
# "ok: N ops in S s" and, for sroce, how many tail-loss probes, retry
# timeouts and retransmitted packets both devices counted meanwhile.
modprobe -a sch_netem sch_prio cls_u32 rdma_ucm 2>/dev/null
declare -A vdev1 vdev2
vdev1[sroce]=veth-h1 vdev2[sroce]=veth-h2 vdev1[rxe]=veth-ra vdev2[rxe]=veth-rb
loss_ctrs() { # the three counters of both sroce devices, summed
	local d c n=0 m=0 r=0
	for d in sroce1 sroce2; do
		c=$(rdma statistic show link $d/1 2>/dev/null)
		n=$((n + $(echo "$c" | grep -o 'tail_probes [0-9]*' | cut -d' ' -f2)))
		m=$((m + $(echo "$c" | grep -o 'retrans_timeouts [0-9]*' | cut -d' ' -f2)))
		r=$((r + $(echo "$c" | grep -o 'retrans_pkts [0-9]*' | cut -d' ' -f2)))
	done
	echo "$n $m $r"
}
loss_run() {
	local drv=$1 pct=$2 run=$3 rc spid l0 c0 c1 ns1n ns2n
	local f="$out/raw/$drv.loss_$pct.300000.q1.$run"
	ns1n=${ns1[$drv]:+h1} ns2n=${ns2[$drv]:+h2}
	if [ "$pct" != 0 ]; then
		netem_dev "$ns1n" "${vdev1[$drv]}" loss "$pct%" && netem_dev "$ns2n" "${vdev2[$drv]}" loss "$pct%" || return
	fi
	port=$((port + 1))
	l0=$(cm_listeners)
	[ $drv = sroce ] && c0=$(loss_ctrs)
	${ns1[$drv]} timeout 300 "$PROGS/sroce_integrity" -s -a "${addr[$drv]}" -p $port -t 16 -w 100 \
		>"$f.server" 2>&1 &
	spid=$!
	wait_until 30 cm_listening "$l0"
	${ns2[$drv]} timeout 300 "$PROGS/sroce_integrity" -c -a "${addr[$drv]}" -p $port -n 40 -m 300000 -S 7 \
		-t 16 -r 7 -w 100 >"$f" 2>&1
	rc=$?
	wait $spid
	[ $drv = sroce ] && c1=$(loss_ctrs) &&
		echo "$c0 $c1" | awk '{ print "counters: tail_probes " $4 - $1 ", retrans_timeouts " $5 - $2 ", retrans_pkts " $6 - $3 }' >>"$f"
	netem_dev "$ns1n" "${vdev1[$drv]}"
	netem_dev "$ns2n" "${vdev2[$drv]}"
	record "$drv" "loss_$pct" 300000 1 "$run" "0/$rc" "$f"
	echo "$(date +%T) $drv loss $pct% run $run: exit $rc, $(grep -E '^ok:|counters' "$f" | tr '\n' ' ')"
}
for pct in 0 1 3 10; do
	echo "loss_$pct 300000 1" | grep -qE -- "$filter" || continue
	for r in $(seq 1 "$runs"); do
		loss_run sroce $pct "$r"
		loss_run rxe $pct "$r"
	done
done

# Where the time goes (issue 17): one run of ib_write_bw 64 KiB and of
# ib_send_bw 64 B per driver under `perf record -a -g` (cpu-clock: TCG has
# no PMU), reported by symbol and by CPU into OUTDIR/profile/. perf takes
# a minute or more to start here (it reads the 9p root): the run starts
# once samples are being written, and perf stops when it ends. Filter
# names "profile TEST BYTES".
profile() {
	local drv=$1 t=$2 bytes=$3 p=$out/profile/$1.$2.$3 ppid
	# perf's data goes to the guest's tmpfs: written to OUTDIR (9p), it
	# was most of what the profile showed.
	local data=/tmp/perf.$1.$2.$3.data
	echo "profile $t $bytes" | grep -qE -- "$filter" || return 0
	mkdir -p "$out/profile"
	sysctl -qw kernel.kptr_restrict=0 kernel.perf_event_paranoid=-1
	# -B -N: no build-id pass over every binary (slow on the 9p root).
	perf record -q -B -N -a -g -e cpu-clock -F 499 -o "$data" >/dev/null 2>&1 &
	ppid=$!
	wait_until 600 sh -c "[ \$(stat -c %s '$data' 2>/dev/null || echo 0) -gt 65536 ]"
	cat /proc/softirqs >"$p.softirqs.before"
	runs_tsv=/dev/null
	one "$drv" "$t" "$bytes" 1 profile -s "$bytes" -D "$dur" -f 1
	runs_tsv=$out/runs.tsv
	cat /proc/softirqs >"$p.softirqs.after"
	kill -INT $ppid
	wait $ppid
	perf report -i "$data" --stdio --no-children --sort sym -g none --percent-limit 0.5 2>/dev/null |
		grep -E '^ +[0-9.]+%' | head -30 >"$p.sym"
	perf report -i "$data" --stdio --no-children --sort cpu -g none 2>/dev/null |
		grep -E '^ +[0-9.]+%' >"$p.cpu"
	# cpu-clock samples taken while interrupts were off land where they
	# come back on (_raw_spin_unlock_irqrestore and the like): the frame
	# under that one says whose section it was.
	perf script -i "$data" -F ip,sym 2>/dev/null | awk '
		/^$/ { n = 0; next }
		{ n++; sym = $2 }
		n == 1 { top = sym }
		n == 2 && top ~ /irqrestore|_irq$|irq_enable/ { count[sym]++; total++ }
		END { for (s in count) printf "%d %s\n", count[s], s }' | sort -rn | head -12 >"$p.irqoff"
	rm -f "$data"
	echo "$(date +%T) profile $drv $t $bytes: $(head -3 "$p.sym" | tr -s ' ' | tr '\n' ';')"
}
for drv in sroce rxe; do
	profile $drv ib_write_bw 65536
	profile $drv ib_send_bw 64
done

# 10,000 RC QPs created, taken to INIT and destroyed by one process
# (tests/progs/sroce_qp_churn.c), then the device's QPs counted by `rdma
# res` (the kernel's own QP1 stays): OUTDIR/qp_churn.tsv, one line per run:
#   driver  run  created  create_s  init_s  destroy_s  qps_left  exit
# Filter name "qp_churn 10000".
qp_churn() {
	local drv=$1 run=$2 f=$out/raw/$1.qp_churn.$2 rc left
	timeout 1200 ${ns1[$drv]} "$PROGS/sroce_qp_churn" "${dev1[$drv]}" 10000 >"$f" 2>&1
	rc=$?
	left=$(${ns1[$drv]} rdma res show qp link "${dev1[$drv]}" 2>/dev/null | grep -c .)
	printf '%s\t%s\t%s\t%s\n' "$drv" "$run" \
		"$(sed -n 's/^qp_churn \([0-9]*\) create_s \([0-9.]*\) init_s \([0-9.]*\) destroy_s \([0-9.]*\)$/\1\t\2\t\3\t\4/p' "$f")" \
		"$left	$rc" >>"$out/qp_churn.tsv"
	echo "$(date +%T) $drv qp_churn run $run: exit $rc, $(grep -E '^(ok|FAIL):' "$f" | tr '\n' ' ') QPs left $left"
}
if echo "qp_churn 10000" | grep -qE -- "$filter"; then
	for r in $(seq 1 "$runs"); do
		qp_churn sroce "$r"
		qp_churn rxe "$r"
	done
fi

ip netns del h1
ip netns del h2
rdma link del rxe1
rdma link del rxe2
exit 0

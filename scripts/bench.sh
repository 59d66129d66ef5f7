#!/usr/bin/env bash
# `make bench`: the host micro-benchmark, then one VM running sroce and
# rdma_rxe side by side (scripts/bench/in-vm.sh), then
# Documentation/benchmarks.md and benchmarks.svg (scripts/bench/report.py).
#
#   scripts/bench.sh [--kernel VER] [--runs N] [--duration S] [--lat-iters N]
#                    [--filter REGEX] [--no-ksoftirqd-rt] [--sroce-params P]
#                    [--out DIR] [--doc DIR]
#
# Defaults: 3 runs per figure, 4 s bandwidth runs, 300 latency exchanges;
# 126 perftest runs of ~16 s each under TCG, then the programs' runs of
# ~7 s each (sroce_post_rate: 15; sroce_mp_rate, ordinary against
# multi-packet receives: 9; sroce_bench_column, a matrix column sent three
# ways: 30), about 40 min in all: run it on a quiet machine.
# --filter selects cases ("TEST BYTES QPS", extended regex, e.g.
# 'ib_write_bw 65536 1|_lat', 'post_rate', 'mp_rate', 'column',
# 'column_sge 32768'),
# for a quick look (a few minutes); the page then shows only those rows:
# give a filtered run its own --doc (and --out) and copy its section into
# Documentation/benchmarks.md by hand, or the whole page is replaced.
# --no-ksoftirqd-rt leaves ksoftirqd at its normal priority (the ping-pong
# latencies then show the 4 ms tick, see the page). --sroce-params loads sroce with those module parameters,
# e.g. "sq_poll=0" (the page lists what was loaded). The raw perftest
# outputs stay in --out (default build/bench/last).
#
# VMs are one at a time on a shared machine: set VM_LOCK to a lock file and
# the VM run waits for it (flock).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
kernel=$(cat "$top/.cache/kver" 2>/dev/null || true)
runs=3 duration=4 lat_iters=300 filter=. ksoftirqd_rt=1 sroce_params= out=$top/build/bench/last doc=$top/Documentation
cmdline=${BENCH_COMMAND:-scripts/bench.sh$(printf ' %q' "$@")}
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--duration) duration=$2; shift 2 ;;
	--lat-iters) lat_iters=$2; shift 2 ;;
	--filter) filter=$2; shift 2 ;;
	--no-ksoftirqd-rt) ksoftirqd_rt=0; shift ;;
	--sroce-params) sroce_params=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--doc) doc=$2; shift 2 ;;
	*) echo "usage: $0 [--kernel VER] [--runs N] [--duration S] [--lat-iters N] [--filter RE] [--no-ksoftirqd-rt] [--sroce-params P] [--out DIR] [--doc DIR]" >&2; exit 2 ;;
	esac
done
command -v gnuplot >/dev/null || { echo "bench: gnuplot is missing (scripts/setup.sh installs gnuplot-nox)" >&2; exit 2; }
[ -x "$top/build/host/bench_packet" ] || { echo "bench: build/host/bench_packet is missing (make bench-host)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "bench: valgrind is missing (scripts/setup.sh installs it)" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)

{
	echo "date $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null)$(git -C "$top" diff --quiet HEAD 2>/dev/null || echo ' (with local changes)')"
	echo "command $cmdline"
	echo "nproc $(nproc)"
	echo "cpu $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)"
	echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "runs $runs"
	echo "duration $duration"
	echo "lat_iters $lat_iters"
	echo "filter $filter"
	echo "vm_lock ${VM_LOCK:-}"
} >"$out/host.txt"

echo "bench: host micro-benchmark"
"$top/build/host/bench_packet" --tsv >"$out/micro.tsv" || exit 1
column -t "$out/micro.tsv"
echo "bench: posting and polling through the provider's interfaces (host, callgrind)"
bash "$top/scripts/bench/intf.sh" "$top/build/host/bench_intf" "$out/intf.tsv" || exit 1
column -t -s "$(printf '\t')" "$out/intf.tsv"

# Boot, setup and ~16 s per bandwidth run (duration 4), ~10 s per latency
# run, both drivers, with a margin: TCG on a busy host is slow; then the
# programs' 18 runs per round (post_rate 5, mp_rate 3, column 10), each
# with a setup (sroce_bench_column registers a 128 MiB matrix).
# The loss section: 8 sroce_integrity runs per round, each up to 300 s (rxe
# at 10% loss waits out many timeouts).
# The profiles: 4 runs, each with a perf report after it; the QP churn
# runs up to 1200 s each.
timeout=$((300 + runs * 2 * (18 * (duration + 14) + 3 * 15) + runs * 18 * (duration + 30) + runs * 8 * 300 + 4 * (duration + 120) + runs * 2 * 1200))
lock=()
[ -n "${VM_LOCK:-}" ] && lock=(flock "$VM_LOCK")
kargs=()
[ -n "$kernel" ] && kargs=(--kernel "$kernel")
# The guest can write only under vm-run's --out: the results go there too.
echo "bench: one VM, up to $timeout s; output in $out"
"${lock[@]}" "$top/scripts/vm-run" "${kargs[@]}" --timeout "$timeout" --out "$out/vm" -- \
	bash "$top/scripts/bench/in-vm.sh" "$out/vm" "$runs" "$duration" "$lat_iters" "$filter" "$ksoftirqd_rt" "$sroce_params"
rc=$?
[ $rc -eq 0 ] || { echo "bench: the VM run failed (exit $rc); logs in $out/vm" >&2; exit $rc; }
mkdir -p "$doc"
python3 "$top/scripts/bench/report.py" "$out" "$doc" || exit 1
echo "bench: wrote $doc/benchmarks.md and $doc/benchmarks.svg"

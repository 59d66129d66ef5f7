#!/usr/bin/env bash
# make bench-rss: one VM runs scripts/bench/rss-in-vm.sh (a UD QP against an
# RSS QP over 2 WQs on 2 vCPUs, sroce against itself), then the medians and
# their ratio go to Documentation/benchmarks-rss.md.
#
#   scripts/bench/rss.sh [--kernel VER] [--runs N] [--seconds S] [--out DIR] [--doc DIR]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
kernel= runs=3 secs=5 out=$top/build/bench/rss doc=$top/Documentation
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--doc) doc=$2; shift 2 ;;
	*) echo "usage: $0 [--kernel VER] [--runs N] [--seconds S] [--out DIR] [--doc DIR]" >&2; exit 2 ;;
	esac
done
rm -rf "$out"
mkdir -p "$out"
kargs=()
[ -n "$kernel" ] && kargs=(--kernel "$kernel")
"$top/scripts/vm-run" "${kargs[@]}" --timeout $((300 + 2 * runs * 2 * (secs + 60))) --out "$out/vm" -- \
	bash "$top/scripts/bench/rss-in-vm.sh" "$out/vm" "$runs" "$secs" || {
	echo "bench-rss: the VM run failed; logs in $out/vm" >&2
	exit 1
}
mkdir -p "$doc"
python3 - "$out/vm" "$doc/benchmarks-rss.md" "$runs" "$secs" "$(git -C "$top" rev-parse --short HEAD)" <<'PY'
import statistics, sys, time
vm, doc, runs, secs, commit = sys.argv[1:6]
rates = {}
for line in open(f"{vm}/rss.tsv"):
    size, mode, run, rate = line.split()
    rates.setdefault(int(size), {"qp": [], "rss": []})[mode].append(int(rate))
med = {s: {m: statistics.median(v) for m, v in r.items()} for s, r in rates.items()}
ratio = {s: (m["rss"] / m["qp"] if m["qp"] else 0) for s, m in med.items()}
with open(doc, "w") as f:
    f.write("# RSS receive rate (make bench-rss)\n\n")
    f.write("Written by `scripts/bench/rss.sh`; do not edit. Issue 18: the UD receive message rate into\n"
            "one UD QP against an RSS UD QP over one WQ per completion vector (2 on the VM's 2 vCPUs,\n"
            "each WQ's CQ on its own vector, so its receives are steered to that CPU), sroce against\n"
            "itself: the receiver in one namespace, 8 sending UD QPs (8 flows) of 64-byte or 4000-byte datagrams in\n"
            "another, across a veth, every packet through the IP stack. One qemu VM under TCG.\n"
            "The receivers sleep on their completion channels.\n\n")
    f.write(f"{time.strftime('%Y-%m-%d', time.gmtime())}, commit {commit}, {runs} runs of {secs} s per mode, interleaved.\n\n")
    f.write("| datagram | receiver | msg/s (median) | runs | RSS / one QP |\n|---|---|---|---|---|\n")
    for s in sorted(med):
        for m, label in (("qp", "one UD QP"), ("rss", "RSS QP over 2 WQs")):
            r = f"**{ratio[s]:.2f}**" if m == "rss" else ""
            f.write(f"| {s} B | {label} | {med[s][m]:.0f} | {', '.join(str(x) for x in rates[s][m])} | {r} |\n")
    f.write("\nWhere the receives ran (`<debugfs>/sroce/rx_cpus` after all runs):\n\n```\n")
    f.write(open(f"{vm}/rx_cpus").read())
    f.write("```\n")
print("bench-rss: " + "; ".join(f"{s} B: one QP {med[s]['qp']:.0f} msg/s, RSS {med[s]['rss']:.0f}, ratio {ratio[s]:.2f}" for s in sorted(med)) + f"; wrote {doc}")
PY

#!/usr/bin/env bash
# Runs inside one VM (scripts/bench/rss.sh boots it): the UD receive message
# rate into one QP against an RSS QP over one WQ per completion vector,
# sroce against itself (issue 18; Documentation/rss.md). The receiver
# (tests/progs/sroce_rss_rate recv) is in namespace h1, 8 sending UD QPs (8
# flows) in h2 across a veth; 64-byte and 4000-byte datagrams, the modes
# alternating, RUNS times each.
#
#   rss-in-vm.sh OUTDIR RUNS SECONDS
#
# One line per run to OUTDIR/rss.tsv: bytes mode run msg/s; the per-CPU receive
# counts (debugfs rx_cpus) after all runs to OUTDIR/rx_cpus.
set -u
out=$1 runs=$2 secs=$3
. "$(dirname "$0")/../../tests/vm/lib.sh"
mkdir -p "$out"
: >"$out/rss.tsv"

modprobe sroce || exit 1
two_hosts 8 9000 || exit 1
sroce_on_hosts 8 || exit 1
for bytes in 64 4000; do
for r in $(seq 1 "$runs"); do
	for mode in qp rss; do
		f=$out/recv.$bytes.$mode.$r
		ip netns exec h1 timeout $((secs + 60)) "$PROGS/sroce_rss_rate" recv sroce1 "$mode" "$secs" >"$f" 2>&1 &
		rpid=$!
		wait_until 20 grep -q '^ready ' "$f" || { cat "$f"; exit 1; }
		qpn=$(awk '/^ready / { print $2 }' "$f")
		ip netns exec h2 timeout $((secs + 60)) "$PROGS/sroce_rss_rate" send sroce2 10.0.8.1 "$qpn" \
			$((secs + 4)) 8 "$bytes" >"$out/send.$bytes.$mode.$r" 2>&1
		wait "$rpid" || { cat "$f"; exit 1; }
		rate=$(sed -n 's/^received .*: \([0-9]*\) msg\/s.*/\1/p' "$f")
		[ -n "$rate" ] || { cat "$f"; exit 1; }
		printf '%s\t%s\t%s\t%s\n' "$bytes" "$mode" "$r" "$rate" >>"$out/rss.tsv"
		log "  $bytes B, $mode run $r: $rate msg/s ($(cat "$out/send.$bytes.$mode.$r"))"
	done
done
done
cat /sys/kernel/debug/sroce/rx_cpus >"$out/rx_cpus"
ip netns del h1
ip netns del h2
wait_until 20 rmmod sroce

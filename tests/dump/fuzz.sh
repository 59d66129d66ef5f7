#!/usr/bin/env bash
# Runs the sroce-dump decoder fuzzer for SECONDS (default 60) from a seed
# corpus of the crafted test frames. Exit status is the fuzzer's.
# Usage: tests/dump/fuzz.sh [SECONDS]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
"$top/build/dump/mkpcap" "$work/seed.pcap" "$work/corpus" >/dev/null || exit 2
cd "$work" && "$top/build/dump/fuzz-decode" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 \
	-print_final_stats=1 corpus 2>&1 | tail -15
exit "${PIPESTATUS[0]}"

#!/usr/bin/env bash
# Runs the sroce-dump decoder fuzzer for SECONDS (default 60) from a seed
# corpus of the crafted test frames: mkpcap's capture, its trains and its
# cooked capture, each frame under every link-layer header the decoder
# reads. A reproducer libFuzzer writes (crash-*, leak-*, timeout-*, oom-*)
# is kept in DUMP_FUZZ_CRASHES (default build/dump/fuzz-crashes), since the
# corpus directory is removed at exit. Further arguments go to libFuzzer.
# Exit status is the fuzzer's.
# Usage: tests/dump/fuzz.sh [SECONDS [LIBFUZZER OPTION...]]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
[ $# -gt 0 ] && shift
crashes=${DUMP_FUZZ_CRASHES:-$top/build/dump/fuzz-crashes}
mkdir -p "$crashes" && crashes=$(cd "$crashes" && pwd) || exit 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
mk=$top/build/dump/mkpcap
{ "$mk" "$work/seed.pcap" "$work/corpus" && "$mk" --trains "$work/trains.pcap" "$work/corpus" &&
	"$mk" --sll "$work/sll.pcap" "$work/corpus"; } >/dev/null || exit 2
touch "$work/start"
cd "$work" && "$top/build/dump/fuzz-decode" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 \
	-artifact_prefix="$crashes/" -print_final_stats=1 "$@" corpus 2>&1 | tail -15
rc=${PIPESTATUS[0]}
find "$crashes" -type f -newer "$work/start" | while read -r f; do
	echo "fuzz.sh: reproducer kept: $f (replay: $top/build/dump/fuzz-decode $f)"
done
exit "$rc"

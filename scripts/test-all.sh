#!/usr/bin/env bash
# The README's test command (`make test`) after the build: host tests, the
# build checks, the sroce-dump tests, the VM suite, then the two-VM (pair)
# tests. Ends with one summary line
# `N passed, N failed` counting every test case of every layer.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
kargs=()
[ "${1:-}" = --kernel ] && kargs=(--kernel "$2")
passed=0 failed=0
layer_start=$SECONDS
count() { # count LAYER PASSED FAILED: also how long the layer took
	echo "--- $1: $2 passed, $3 failed ($((SECONDS - layer_start)) s)"
	passed=$((passed + $2))
	failed=$((failed + $3))
	layer_start=$SECONDS
}

echo "=== host tests (Catch2 via ctest)"
log=$(mktemp)
(cd "$top/build/host" && ctest --output-on-failure -j"$(nproc)" 2>&1) | tee "$log"
total=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\2/p' "$log")
bad=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of.*/\1/p' "$log")
if [ -z "$total" ]; then
	count host 0 1
else
	count host $((total - bad)) "$bad"
fi

echo "=== build checks"
tb=$(mktemp)
bash "$top/tests/build/run.sh" 2>&1 | tee "$tb"
bp=$(sed -n 's/^build: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$tb")
bf=$(sed -n 's/^build: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$tb")
count build "${bp:-0}" "${bf:-1}"

echo "=== sroce-dump tests"
td=$(mktemp)
bash "$top/tests/dump/run.sh" 2>&1 | tee "$td"
dp=$(sed -n 's/^dump: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$td")
df=$(sed -n 's/^dump: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$td")
count dump "${dp:-0}" "${df:-1}"

echo "=== VM tests"
tv=$(mktemp)
bash "$top/scripts/run-vm-tests.sh" "${kargs[@]}" 2>&1 | tee "$tv"
vrc=${PIPESTATUS[0]}
vp=$(sed -n 's/^vm: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$tv" | tail -1)
vf=$(sed -n 's/^vm: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$tv" | tail -1)
[ -n "$vp" ] || { vp=0; vf=1; }
# A kernel warning caught by vm-run after the guest's own checks fails too.
[ "$vrc" -ne 0 ] && [ "$vf" -eq 0 ] && vf=1
count vm "$vp" "$vf"

echo "=== VM pair tests"
tp=$(mktemp)
bash "$top/scripts/run-pair-tests.sh" "${kargs[@]}" 2>&1 | tee "$tp"
prc=${PIPESTATUS[0]}
pp=$(sed -n 's/^pair: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$tp" | tail -1)
pf=$(sed -n 's/^pair: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$tp" | tail -1)
[ -n "$pp" ] || { pp=0; pf=1; }
[ "$prc" -ne 0 ] && [ "$pf" -eq 0 ] && pf=1
count pair "$pp" "$pf"

rm -f "$log" "$tb" "$td" "$tv" "$tp"
echo "=== make test took $((SECONDS / 60)) min $((SECONDS % 60)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

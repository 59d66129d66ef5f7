#!/usr/bin/env bash
# Runs the two-guest tests (tests/pair/NN-*.sh) on the host, one pair of VMs
# at a time: run-pair-tests.sh [--kernel VER] [tests/pair/NN-x.sh...]
# Prints `pair: N passed, N failed`; exits non-zero on any failure. Logs of
# the last run are in build/vm/last-pair-run/NN-x/.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --kernel ]; then
	export PAIR_KVER=$2
	shift 2
fi
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=("$top"/tests/pair/[0-9]*.sh)
rm -rf "$top/build/vm/last-pair-run"
mkdir -p "$top/build/vm/last-pair-run"
passed=0 failed=0
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	echo "=== $name"
	start=$SECONDS
	bash "$t"
	rc=$?
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1))
		echo "PASS $name ($((SECONDS - start)) s)"
	else
		failed=$((failed + 1))
		echo "FAIL $name (exit $rc; logs in build/vm/last-pair-run/$name)"
	fi
done
echo "pair: $passed passed, $failed failed"
[ $failed -eq 0 ]

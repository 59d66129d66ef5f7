#!/usr/bin/env bash
# ctest (tests/host/CMakeLists.txt): the scaled timeout(1) of make
# test-debug multiplies whole durations, keeps options and fractions.
set -u
t=$(dirname "$0")/timeout
fails=0
expect() { # expect RC WHAT CMD...
	local want=$1 what=$2 rc
	shift 2
	"$@" >/dev/null 2>&1
	rc=$?
	[ "$rc" -eq "$want" ] && echo "ok: $what" || { echo "FAIL: $what (exit $rc, want $want)"; fails=$((fails + 1)); }
}
expect 0 "x3: 1 s allows a 2 s sleep" env SROCE_VM_TIMEOUT_SCALE=3 "$t" 1 sleep 2
expect 124 "x1: 1 s does not" env SROCE_VM_TIMEOUT_SCALE=1 "$t" 1 sleep 2
expect 124 "unset scale: 1 s does not" env -u SROCE_VM_TIMEOUT_SCALE "$t" 1 sleep 2
expect 137 "x2 with -s KILL: 1s still ends a 5 s sleep" env SROCE_VM_TIMEOUT_SCALE=2 "$t" -s KILL 1s sleep 5
expect 124 "fractions pass unscaled" env SROCE_VM_TIMEOUT_SCALE=9 "$t" 0.2 sleep 1
expect 3 "the command's status comes back" env SROCE_VM_TIMEOUT_SCALE=2 "$t" 5 sh -c 'exit 3'
[ $fails -eq 0 ]

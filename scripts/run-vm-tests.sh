#!/usr/bin/env bash
# Boots one test VM and runs the VM test suite (tests/vm) in it. Extra
# arguments select tests: run-vm-tests.sh [--kernel VER] [tests/vm/NN-x.sh...]
# Prints the guest's `vm: N passed, N failed` line; exits non-zero on any
# failure, including a kernel warning seen by vm-run after the run.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
kargs=()
if [ "${1:-}" = --kernel ]; then
	kargs=(--kernel "$2")
	shift 2
fi
out=$top/build/vm/last-test-run
# One run at a time: a second one would delete the first's output share
# under its running guest (its logs and result are then lost). Only this
# shell holds the lock (9>&- below): no straggler child keeps it.
mkdir -p "$top/build/vm"
exec 9>"$top/build/vm/last-test-run.lock"
flock -n 9 || { echo "run-vm-tests: another run is using $out; wait for it to end" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
# The suite in another mode (make test-vm-doorbell): SROCE_VM_MODPARAMS are
# module options for every `modprobe sroce` in the guest (modprobe.d), and
# SROCE_NO_SQ_POLL=1 puts every process's contexts in doorbell mode.
# SROCE_VM_TIMEOUT_SCALE multiplies the VM's and every test's time limit
# (make test-debug: the debug kernel is several times slower under TCG).
scale=${SROCE_VM_TIMEOUT_SCALE:-1}
# The VM's limit: 3000 s, or a test's own "# vm-timeout:" plus 600 s of
# boot and the other tests when that is longer (slow/91-extended-verbs-long
# asks for 14400 s; under the 3000 s limit it could never finish).
# SROCE_VM_TOTAL_TIMEOUT (seconds) overrides it (scripts/repeat-vm-test.sh:
# N runs of one test).
limit=3000
for t in "$@"; do
	tmo=$(sed -n 's/^# vm-timeout: \([0-9]*\)$/\1/p' "$t" 2>/dev/null | head -1)
	[ -n "$tmo" ] && [ $((tmo + 600)) -gt $limit ] && limit=$((tmo + 600))
done
"$top/scripts/vm-run" "${kargs[@]}" --timeout "${SROCE_VM_TOTAL_TIMEOUT:-$((limit * scale))}" --out "$out" -- \
	env SROCE_VM_MODPARAMS="${SROCE_VM_MODPARAMS:-}" ${SROCE_NO_SQ_POLL:+SROCE_NO_SQ_POLL=$SROCE_NO_SQ_POLL} \
	SROCE_VM_TIMEOUT_SCALE="$scale" \
	bash "$top/tests/vm/run-in-vm.sh" "$@" 9>&-
rc=$?
[ $rc -eq 0 ] || echo "vm tests: exit $rc; logs in $out" >&2
exit $rc

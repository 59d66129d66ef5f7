# Helpers for the two-guest tests (sourced). Each tests/pair/NN-*.sh runs on
# the host and boots one pair of VMs with `scripts/vm-run --pair`; a test
# whose guests run checks calls itself there as `bash "$0" guest`, and its
# guest part sources tests/vm/lib.sh (check, wait_until, finish).
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NAME=$(basename "$0" .sh)
# Logs of the test's last run (scripts/run-pair-tests.sh clears the parent).
OUT=$TOP/build/vm/last-pair-run/$NAME
fails=0
# SROCE_VM_TIMEOUT_SCALE (make test-debug: a kernel several times slower to
# boot and run) multiplies the tests' time limits; 40-runner-timeout keeps
# its own, since it tests the timeout itself.
scale=${SROCE_VM_TIMEOUT_SCALE:-1}

log() { printf '%s\n' "$*"; }
ok() { log "  ok: $*"; }
fail() {
	log "  FAIL: $*"
	fails=$((fails + 1))
}

rm -rf "$OUT" "$OUT.err"
mkdir -p "$(dirname "$OUT")"

# pair_run [vm-run options] -- CMD_A ::: CMD_B: boot the pair, logs in $OUT.
# PAIR_KVER (from run-pair-tests.sh --kernel) selects the kernel.
vm_run=("$TOP/scripts/vm-run" ${PAIR_KVER:+--kernel "$PAIR_KVER"} --pair --out "$OUT")
pair_run() { "${vm_run[@]}" "$@"; }

# no_vm_left: no qemu of this test's run (nor its timeout(1) wrapper) is still
# running: their command lines name the guests' console logs.
no_vm_left() {
	local left
	left=$(pgrep -af "file:$OUT/[ab]/console.log") || return 0
	log "  still running: $left"
	return 1
}

finish() {
	if [ "$fails" -eq 0 ]; then
		log "  all checks passed"
		exit 0
	fi
	log "  $fails check(s) failed"
	exit 1
}

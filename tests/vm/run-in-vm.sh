#!/usr/bin/env bash
# Runs tests/vm/NN-*.sh (or the given ones) inside one test VM, checking the
# kernel log after each, and prints `N passed, N failed`.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bad='WARNING:|BUG:|Oops|general protection|UBSAN|KASAN|refcount_t|possible circular locking|inconsistent lock state|possible recursive locking|suspicious RCU usage|kmemleak|ODEBUG|sleeping function called from invalid context'
passed=0 failed=0
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=("$here"/[0-9]*.sh)
# Another mode for the whole suite (scripts/run-vm-tests.sh): options for
# every load of the module; the guest's / is a writable overlay.
if [ -n "${SROCE_VM_MODPARAMS:-}" ]; then
	echo "options sroce $SROCE_VM_MODPARAMS" >/etc/modprobe.d/sroce-vm.conf
	echo "module options for this run: $SROCE_VM_MODPARAMS"
fi
# A slower kernel (make test-debug): every timeout(1) in the tests scales.
if [ "${SROCE_VM_TIMEOUT_SCALE:-1}" -gt 1 ]; then
	export PATH=$here/scaled:$PATH
	echo "time limits of this run: x$SROCE_VM_TIMEOUT_SCALE (timeout is $(command -v timeout))"
fi
[ -z "${SROCE_NO_SQ_POLL:-}" ] || echo "environment for this run: SROCE_NO_SQ_POLL=$SROCE_NO_SQ_POLL"
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	echo "=== $name"
	dmesg -C
	start=$(date +%s)
	# A test may ask for more than 300 s with a "# vm-timeout: S" line.
	tmo=$(sed -n 's/^# vm-timeout: \([0-9]*\)$/\1/p' "$t" | head -1)
	# SROCE_VM_TIMEOUT_SCALE (make test-debug: a slower kernel) multiplies it.
	# (The scaled timeout above multiplies it when it is first in PATH.)
	/usr/bin/timeout $(( ${tmo:-300} * ${SROCE_VM_TIMEOUT_SCALE:-1} )) bash "$t"
	rc=$?
	# A test that failed or timed out may leave its namespaces (and the
	# devices in them) behind; the next test starts without them, and the
	# kernel log below covers their removal.
	ip -all netns delete 2>/dev/null
	# Nor may it leave the test module loaded: it holds sroce.ko.
	rmmod sroce_selftest 2>/dev/null
	# Kernel log lines of this test are its evidence too.
	if dmesg | grep -E "$bad"; then
		echo "  FAIL: kernel log shows the lines above"
		rc=1
	fi
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1))
		echo "PASS $name ($(( $(date +%s) - start )) s)"
	else
		failed=$((failed + 1))
		echo "FAIL $name (exit $rc)"
		dmesg | tail -40 | sed 's/^/  dmesg: /'
	fi
done
echo "vm: $passed passed, $failed failed"
[ $failed -eq 0 ]

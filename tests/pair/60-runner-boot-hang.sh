#!/usr/bin/env bash
# The runner's early-boot watch (VM_BOOT_WAIT, scripts/vm/pair.sh; make
# test-debug sets it): a guest whose command has not started in time is taken
# for hung, both guests are stopped and the pair boots again, once; a second
# hang ends the run with 124. A wait of 1 s is shorter than any boot here
# (Debian's kernel reaches its command after 5-7 s under TCG), so both boots
# are taken for hung. With a wait no boot reaches, the watch lets a pair run
# and is gone when it ends.
. "$(dirname "$0")/lib.sh"

err=$(VM_BOOT_WAIT=1 pair_run --timeout $((120 * scale)) -- true ::: true 2>&1 >/dev/null)
rc=$?
printf '%s\n' "$err" | sed 's/^/  | /'
if [ "$rc" -eq 124 ]; then ok "two hung boots: exit 124"; else fail "two hung boots: exit $rc, not 124"; fi
n=$(grep -c "booting the pair again" <<<"$err")
if [ "$n" -eq 1 ]; then ok "booted again once"; else fail "booted again $n times, not once"; fi
n=$(grep -c "its command had not started after 1s" <<<"$err")
if [ "$n" -eq 4 ]; then ok "each guest named hung in each boot"; else fail "$n hung-guest lines, not 4"; fi
if grep -q "the pair hung in early boot twice" <<<"$err"; then ok "the cause named"; else fail "the cause not named"; fi
if no_vm_left; then ok "no VM left"; else fail "VMs left running"; fi

wait_s=$((900 * scale))
start=$SECONDS
err=$(VM_BOOT_WAIT=$wait_s pair_run --timeout $((120 * scale)) -- true ::: true 2>&1 >/dev/null)
rc=$?
took=$((SECONDS - start))
printf '%s\n' "$err" | sed 's/^/  | /'
if [ "$rc" -eq 0 ]; then ok "a pair that boots: exit 0"; else fail "a pair that boots: exit $rc"; fi
if grep -q "had not started\|booting the pair again" <<<"$err"; then fail "a booted pair taken for hung"; else ok "not taken for hung"; fi
# The watch holds the run's stderr: a watch left behind would have kept the
# capture above open until its wait ran out.
if [ "$took" -lt "$wait_s" ]; then ok "the watch ended with the pair ($took s)"; else fail "the run took $took s: the watch outlived the pair"; fi
if no_vm_left; then ok "no VM left"; else fail "VMs left running"; fi
finish

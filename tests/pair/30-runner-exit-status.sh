#!/usr/bin/env bash
# The runner itself: a pair fails when either command fails, with that
# command's status, or when either kernel logs a warning (125); vm-run names
# the guest that failed, and no VM is left behind.
. "$(dirname "$0")/lib.sh"

# expect STATUS GUEST CMD_A ::: CMD_B: the run exits STATUS and its stderr
# says that GUEST failed, and only GUEST.
expect() {
	local want=$1 guest=$2 other err rc
	shift 2
	[ "$guest" = a ] && other=b || other=a
	err=$(pair_run --timeout $((120 * scale)) -- "$@" 2>&1 >/dev/null)
	rc=$?
	printf '%s\n' "$err" | sed 's/^/  | /'
	if [ "$rc" -eq "$want" ]; then ok "$* exits $want"; else fail "$* exits $rc, not $want"; fi
	if grep -q "guest $guest (vm-$guest) failed: exit $want" <<<"$err" &&
		! grep -q "guest $other (vm-$other) failed" <<<"$err"; then
		ok "$*: names guest $guest as the one that failed"
	else
		fail "$*: does not name guest $guest (alone) as failed"
	fi
	if no_vm_left; then ok "$*: no VM left"; else fail "$*: VMs left running"; fi
}

expect 1 b true ::: false
expect 3 a sh -c 'exit 3' ::: true
# A line that the dmesg check treats as a kernel warning, in guest b's log.
expect 125 b true ::: sh -c 'echo "WARNING: CPU: 0 PID: 1 at pair-test (fake splat)" >/dev/kmsg'
finish

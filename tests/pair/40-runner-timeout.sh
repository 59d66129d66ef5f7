#!/usr/bin/env bash
# The runner itself: --timeout stops both VMs, the exit status is 124, and no
# qemu of the run is left.
. "$(dirname "$0")/lib.sh"

start=$SECONDS
err=$(pair_run --timeout 20 -- sleep 600 ::: sleep 600 2>&1 >/dev/null)
rc=$?
printf '%s\n' "$err" | sed 's/^/  | /'
if [ "$rc" -eq 124 ]; then ok "exit 124"; else fail "exit $rc, not 124"; fi
# timeout -k 10 gives qemu 10 s after its SIGTERM: 20 + 10 s plus slack.
if [ $((SECONDS - start)) -lt 45 ]; then ok "ended after $((SECONDS - start)) s"; else fail "took $((SECONDS - start)) s"; fi
if grep -q "timeout: the VM ran longer than 20s" <<<"$err"; then ok "says timeout"; else fail "does not say timeout"; fi
if no_vm_left; then ok "no VM left"; else fail "VMs left running"; fi
finish

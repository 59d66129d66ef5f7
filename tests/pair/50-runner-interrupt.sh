#!/usr/bin/env bash
# The runner itself: ^C (SIGINT to the terminal's foreground process group)
# while both guests run stops both VMs; the exit status is 130 and no qemu of
# the run is left.
. "$(dirname "$0")/lib.sh"

# Both commands have started once each guest recorded its start time.
started() {
	for _ in $(seq $((600 * scale))); do
		[ -s "$OUT/a/.vm/t-start" ] && [ -s "$OUT/b/.vm/t-start" ] && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.2
	done
	return 1
}

# Job control puts vm-run in a process group of its own, as a shell does for
# a foreground job (and a background job of a script would ignore SIGINT).
# A run started in the background of a non-interactive shell (nohup CMD &)
# inherits SIGINT ignored, and no trap can catch an ignored signal: env
# gives vm-run the default disposition back.
set -m
env --default-signal=INT "${vm_run[@]}" --timeout $((300 * scale)) -- sleep 600 ::: sleep 600 2>"$OUT.err" &
pid=$!
set +m
if started; then ok "both guests run their commands"; else fail "the guests did not start"; fi
kill -INT -- "-$pid"
wait "$pid"
rc=$?
sed 's/^/  | /' "$OUT.err"
if [ "$rc" -eq 130 ]; then ok "exit 130"; else fail "exit $rc, not 130"; fi
# Only vm-run's trap says this (a shell killed by SIGINT also gives 130).
if grep -q "interrupted; both VMs stopped" "$OUT.err"; then ok "says interrupted"; else fail "does not say interrupted"; fi
if no_vm_left; then ok "no VM left"; else fail "VMs left running"; fi
finish

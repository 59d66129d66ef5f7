#!/usr/bin/env bash
# Runs one VM test N times in a row in one VM boot, to show it is reliable
# (issue 12: 82-netem twenty times on each kernel):
#   repeat-vm-test.sh N tests/vm/NN-x.sh [--kernel VER] [VAR=VALUE...]
# VAR=VALUE pairs are exported in the guest before each run (for example
# NETEM_FAULTS="loss1 loss10"). The wrapper keeps the test's own
# `# vm-timeout:` line; the VM's limit covers all N runs. Prints each run's
# PASS/FAIL line and `repeat: N passed, N failed`. Logs in
# build/vm/last-test-run.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] && [ -f "$2" ] || { sed -n '2,9p' "$0" >&2; exit 2; }
n=$1 test=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
shift 2
kargs=() env=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kargs=(--kernel "$2"); shift 2 ;;
	*=*) env+=("$1"); shift ;;
	*) echo "repeat-vm-test: what is $1?" >&2; exit 2 ;;
	esac
done
name=$(basename "$test" .sh)
dir=$top/build/vm/repeat
mkdir -p "$dir"
w=$dir/$name.sh
{
	echo '#!/usr/bin/env bash'
	grep -m1 '^# vm-timeout:' "$test"
	for kv in "${env[@]}"; do printf 'export %q\n' "$kv"; done
	printf 'exec bash %q\n' "$test"
} >"$w"
tmo=$(sed -n 's/^# vm-timeout: \([0-9]*\)$/\1/p' "$test" | head -1)
runs=()
for _ in $(seq "$n"); do runs+=("$w"); done
# The VM's own limit must cover every run.
total=$((n * ${tmo:-300} * ${SROCE_VM_TIMEOUT_SCALE:-1} + 600))
# The runs go to our stderr as they happen through cat, which shares its
# file offset: `tee /dev/stderr` reopens a file with O_TRUNC, and the
# summary below then overwrote the head of a log redirected to a file.
out=$(SROCE_VM_TOTAL_TIMEOUT=$total bash "$top/scripts/run-vm-tests.sh" "${kargs[@]}" "${runs[@]}" 2>&1 | tee >(cat >&2))
p=$(grep -c "^PASS $name " <<<"$out")
f=$(grep -c "^FAIL $name " <<<"$out")
echo "repeat: $p passed, $((n - p)) failed ($name x$n${env[*]:+, ${env[*]}})"
[ "$p" -eq "$n" ] && [ "$f" -eq 0 ]

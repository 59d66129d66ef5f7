#!/usr/bin/env bash
# rdma-core's own test suite (python3-pyverbs, /usr/share/doc/rdma-core/tests)
# against sroce0 on a veth with IPv4 and IPv6 addresses: the tests listed in
# tests/vm/pyverbs-pass.list (the ones sroce passes, Documentation/pyverbs.md
# says why the others fail or skip) must all run, none skipped, and pass.
# PYVERBS_ALL=1 runs the whole suite instead and only reports.
# vm-timeout: 600
. "$(dirname "$0")/lib.sh"

list=$TOP/tests/vm/pyverbs-pass.list
src=/usr/share/doc/rdma-core/tests
check "python3-pyverbs installed" test -e $src/run_tests.py
# Debian gzips most test modules; unittest needs them as plain .py files.
rm -rf /tmp/pyverbs-tests
cp -r $src /tmp/pyverbs-tests && gunzip -f /tmp/pyverbs-tests/*.gz

# sroce0 goes in init_net, where a loaded rdma_rxe (85-rxe-interop runs
# before this) still holds UDP port 4791.
modprobe -r rdma_rxe 2>/dev/null
check "rdma_rxe unloaded: port 4791 free in init_net" sh -c "! grep -q '^rdma_rxe ' /proc/modules"
modprobe sroce
modprobe rdma_ucm
make_veth veth0 veth1
rdma link add sroce0 type sroce netdev veth0
check "sroce0's IPv4 GID" wait_until 10 gid_index sroce0 10.0.1.1

mapfile -t want < <(grep -v '^#' "$list" | awk '{ print $1 }' | grep .)
# One -k per test. unittest matches a pattern without '*' as a substring
# (test_create_cq_ex would select test_create_cq_ex_bad_flow too); with a
# leading '*' the id must end with the name.
args=()
for t in "${want[@]}"; do args+=(-k "*$t"); done
[ "${PYVERBS_ALL:-0}" = 1 ] && args=()
cd /tmp/pyverbs-tests || exit 1
start=$(date +%s)
timeout 500 /usr/bin/python3 run_tests.py --dev sroce0 -v "${args[@]}" >/tmp/pyverbs.log 2>&1
rc=$?
cd / || exit 1
log "  pyverbs exit $rc in $(($(date +%s) - start)) s: $(grep -E '^Ran |^OK|^FAILED' /tmp/pyverbs.log | tr '\n' ' ')"
[ -n "${VM_OUT:-}" ] && cp /tmp/pyverbs.log "$VM_OUT/pyverbs.log"
if [ "${PYVERBS_ALL:-0}" = 1 ]; then
	grep -E ' \.\.\. ' /tmp/pyverbs.log | sed 's/^/    /'
else
	ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in.*/\1/p' /tmp/pyverbs.log)
	check "pyverbs ran all ${#want[@]} listed tests (ran ${ran:-0})" test "${ran:-0}" -eq ${#want[@]}
	check "every listed test passed" test $rc -eq 0
	check "none of them skipped" sh -c "! grep -qE ' \.\.\. skipped' /tmp/pyverbs.log"
	grep -E ' \.\.\. (FAIL|ERROR|skipped)' /tmp/pyverbs.log | sed 's/^/    /'
	[ $rc -eq 0 ] || tail -40 /tmp/pyverbs.log | sed 's/^/    /'
fi
check "nothing left alive" wait_until 20 counts_zero sroce0
rdma link delete sroce0
ip link del veth0
check "rmmod sroce" wait_until 20 rmmod sroce
finish

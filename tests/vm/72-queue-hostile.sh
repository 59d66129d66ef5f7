#!/usr/bin/env bash
# A process that writes nonsense into its own mapped rings gets errors,
# never a damaged kernel (run-in-vm checks the log after the test); a
# process killed while it holds and uses queues leaves nothing alive.
. "$(dirname "$0")/lib.sh"

make_veth veth0 veth1
modprobe sroce
rdma link add sroce0 type sroce netdev veth0
check "the IPv4 GID appears" wait_until 10 gid_index sroce0 10.0.1.1
check "scribbled rings end in errors, objects still destroyable" \
	"$PROGS/sroce_qhostile" scribble sroce0 10.0.1.2
check "nothing left alive after the scribbles" wait_until 10 counts_zero sroce0

for round in 1 2 3; do
	ready=/tmp/qhold.ready
	rm -f "$ready"
	"$PROGS/sroce_qhostile" hold sroce0 10.0.1.2 "$ready" >/tmp/qhold.log 2>&1 &
	pid=$!
	if ! wait_until 30 test -e "$ready"; then
		fail "round $round: holder did not start: $(cat /tmp/qhold.log)"
		kill -9 "$pid"
		wait "$pid"
		continue
	fi
	sleep 1
	qps=$(count_of sroce0 qps)
	if [ "${qps:-0}" -ge 6 ]; then ok "round $round: $qps QPs alive while held"; else fail "round $round: $qps QPs alive"; fi
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	check "round $round: SIGKILL mid-use leaves nothing alive" wait_until 20 counts_zero sroce0
done

check "rdma link delete" rdma link delete sroce0
ip link del veth0
check "rmmod" rmmod sroce
finish

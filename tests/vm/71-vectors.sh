#!/usr/bin/env bash
# Completion vectors (issue 18, seed 002-C, Documentation/rss.md): one per
# CPU, their handler ids and bad inputs, a CQ moved between vectors 1,000
# times under a stream of SENDs with every message and event arriving, the
# events counted per vector (some run on the other CPU), and CPU hotplug
# moving a vector of an offlined CPU and back.
# vm-timeout: 300
. "$(dirname "$0")/lib.sh"

# vectors_all FIELD: every vector's FIELD in debugfs is above 0.
vectors_all() {
	awk -v f="$1" '{ for (i = 1; i < NF; i++) if ($i == f && $(i + 1) == 0) bad = 1 } END { exit bad || !NR }' "$vec"
}
# vectors_any FIELD: some vector's FIELD is above 0.
vectors_any() {
	awk -v f="$1" '{ for (i = 1; i < NF; i++) if ($i == f && $(i + 1) > 0) good = 1 } END { exit !good }' "$vec"
}

modprobe sroce
make_veth veth0 veth1
rdma link add sroce0 type sroce netdev veth0
check "sroce0's IPv4 GID" wait_until 10 gid_index sroce0 10.0.1.1
ncpu=$(nproc)
vec=/sys/kernel/debug/sroce/sroce0/vectors
check "debugfs lists one vector per CPU ($ncpu)" test "$(wc -l <"$vec")" -eq "$ncpu"
check_prog "sroce_vectors: handler ids, 1000 moves under a stream" timeout 240 "$PROGS/sroce_vectors" sroce0 "$ncpu" 1000
sed 's/^/    /' "$vec"
check "every vector delivered events" vectors_all events
check "the VM has two CPUs (scripts/vm-run)" test "$ncpu" -ge 2
check "some events were made on one CPU and run on their vector's other one" vectors_any deferred
echo 0 >/sys/devices/system/cpu/cpu1/online
check "CPU 1 offline: its vector 1 runs on CPU 0" grep -q '^vector 1 cpu 0 home 1 ' "$vec"
check_prog "sroce_vectors: a stream starting on vector 1 while its CPU is offline" \
	timeout 240 "$PROGS/sroce_vectors" sroce0 "$ncpu" 100 1
echo 1 >/sys/devices/system/cpu/cpu1/online
check "CPU 1 back: so is vector 1" grep -q '^vector 1 cpu 1 home 1 ' "$vec"
sed 's/^/    /' "$vec"
rdma link delete sroce0
ip link del veth0 # later tests make their own
check "sroce unloads" modprobe -r sroce
finish

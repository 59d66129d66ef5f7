#!/usr/bin/env bash
# Receive steering (issue 17, Documentation/transport.md "Receive
# steering"): a user RC/UC QP's packets are received on the CPU its owner
# posts from, not on the one they arrive on (on veth: the sender's).
#  - one device, an RC pair in one process: srocedv_modify_qp_rx_cpu's
#    bad inputs, then a SEND stream whose receiving QP is moved between
#    the CPUs and back to its owner 1,000 times, every message once and in
#    order;
#  - two namespaces, server pinned to CPU 0 and client to CPU 1: perftest
#    and the integrity program; both CPUs take steered packets (debugfs
#    rx_cpus) and both devices count rx_steered;
#  - rx_steer=N: nothing steered;
#  - a transfer killed midway, and rmmod during traffic, leave nothing.
# vm-timeout: 600
. "$(dirname "$0")/lib.sh"

cpus=/sys/kernel/debug/sroce/rx_cpus
# steered_in CPU: user QPs' packets steered to CPU so far (qp_in).
steered_in() {
	awk -v c="$1" '$1 == "cpu" && $2 == c { for (i = 3; i < NF; i++) if ($i == "qp_in") print $(i + 1) }' "$cpus"
}
rx_steered() { rdma statistic show link "$1"/1 | grep -o 'rx_steered [0-9]*' | cut -d' ' -f2; }

check "the VM has two CPUs (scripts/vm-run)" test "$(nproc)" -ge 2
check "modprobe sroce" modprobe -C /dev/null sroce
check "rx_steer defaults to N" grep -qx N /sys/module/sroce/parameters/rx_steer
echo Y >/sys/module/sroce/parameters/rx_steer
make_veth veth0 veth1
rdma link add sroce0 type sroce netdev veth0
check "sroce0's IPv4 GID" wait_until 10 gid_index sroce0 10.0.1.1
check_prog "sroce_vectors rx: receive CPU ids, 1000 moves under a stream" \
	timeout 240 "$PROGS/sroce_vectors" sroce0 "$(nproc)" 1000 0 rx
check "sroce0: nothing left alive" wait_until 20 counts_zero sroce0
rdma link delete sroce0
ip link del veth0

two_hosts 66 1500
check "sroce1 in h1, sroce2 in h2" sroce_on_hosts 66
port=19660
u=$(ack_timeout 18)
# pinned NAME TOOL ARGS: perftest TOOL, server on CPU 0 in h1, client on CPU 1 in h2.
pinned() {
	local what=$1 tool=$2
	shift 2
	port=$((port + 1))
	host_pair "$what" taskset -c 0 "$tool" -d sroce1 -x "$g1" -F -u "$u" -p $port "$@" -- \
		taskset -c 1 "$tool" -d sroce2 -x "$g2" -F -u "$u" -p $port "$@" 10.0.66.1
}
in0=$(steered_in 0) in1=$(steered_in 1)
pinned "ib_write_bw 64 KiB, server on CPU 0, client on CPU 1" ib_write_bw -s 65536 -n 300
pinned "ib_send_bw 4 KiB" ib_send_bw -s 4096 -n 2000
pinned "ib_read_bw 64 KiB" ib_read_bw -s 65536 -n 200
sed 's/^/    /' "$cpus"
d0=$(($(steered_in 0) - in0)) d1=$(($(steered_in 1) - in1))
check "CPU 0 received steered packets (the server's: $d0)" test "$d0" -gt 0
check "CPU 1 received steered packets (the client's: $d1)" test "$d1" -gt 0
check "both devices count rx_steered ($(rx_steered sroce1), $(rx_steered sroce2))" \
	test "$(rx_steered sroce1)" -gt 0 -a "$(rx_steered sroce2)" -gt 0

l0=$(cm_listeners)
ip netns exec h1 timeout 300 taskset -c 0 "$PROGS/sroce_integrity" -s -a 10.0.66.1 -p 19699 >/tmp/i.srv 2>&1 &
ipid=$!
check "integrity server listens" wait_until 20 cm_listening "$l0"
check "integrity, server on CPU 0, client on CPU 1: 300 operations up to 256 KiB, every byte checked" \
	ip netns exec h2 timeout 300 taskset -c 1 "$PROGS/sroce_integrity" -c -a 10.0.66.1 -p 19699 -n 300 -m 262144
wait $ipid
check "integrity server exit 0" test $? -eq 0

echo N >/sys/module/sroce/parameters/rx_steer
s1=$(rx_steered sroce1) s2=$(rx_steered sroce2)
pinned "ib_write_bw 64 KiB, rx_steer=N" ib_write_bw -s 65536 -n 100
check "rx_steer=N: nothing steered ($s1 -> $(rx_steered sroce1), $s2 -> $(rx_steered sroce2))" \
	test "$(rx_steered sroce1):$(rx_steered sroce2)" = "$s1:$s2"
echo Y >/sys/module/sroce/parameters/rx_steer

# background TOOL: a 60 s perftest stream of 64 KiB messages, server on CPU 0
# in h1 and client on CPU 1 in h2; sets sp and cp to their pids.
background() {
	port=$((port + 1))
	ip netns exec h1 taskset -c 0 "$1" -d sroce1 -x "$g1" -F -u "$u" -p $port -s 65536 -D 60 >/dev/null 2>&1 &
	sp=$!
	wait_until 30 sh -c "ip netns exec h1 ss -Hltn 'sport = :$port' | grep -q ."
	ip netns exec h2 taskset -c 1 "$1" -d sroce2 -x "$g2" -F -u "$u" -p $port -s 65536 -D 60 10.0.66.1 \
		>/dev/null 2>&1 &
	cp=$!
	sleep "$(scaled_secs 4)"
}

# Killed midway: the steered packets of the dead process's QPs drain.
background ib_write_bw
kill -9 $cp $sp
wait $cp $sp 2>/dev/null
check "killed mid-transfer: h1 has nothing left alive" wait_until 30 counts_zero sroce1
check "killed mid-transfer: h2 has nothing left alive" wait_until 30 counts_zero sroce2

# rmmod during traffic: the devices go under a running stream.
background ib_send_bw
check "rdma link delete under traffic" sh -c 'ip netns exec h1 rdma link delete sroce1 && ip netns exec h2 rdma link delete sroce2'
check "the perftest processes end" wait_until 60 sh -c "! kill -0 $cp 2>/dev/null && ! kill -0 $sp 2>/dev/null"
kill -9 $cp $sp 2>/dev/null
wait $cp $sp 2>/dev/null
ip netns del h1
ip netns del h2
check "rmmod sroce after the devices went under traffic" wait_until 30 rmmod sroce
finish

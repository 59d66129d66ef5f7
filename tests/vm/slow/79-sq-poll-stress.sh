#!/usr/bin/env bash
# The SQ poller's sleep/wake handshake under stress (issue 6): 100,000
# cycles of a burst of 1-8 WRITEs, then an idle gap of 0-300 us, with
# sq_idle_us 100, so that the poller keeps falling asleep and being woken
# around every gap. Every WR must complete (sroce_sqpoll fails a cycle whose
# WR takes over 5 s), and the poller's debugfs counters must show that it
# slept and was woken by doorbells many times over. In the slow suite: it
# takes several minutes under TCG.
# vm-timeout: 1800
. "$(dirname "$0")/../lib.sh"

two_hosts 79 1500
check "modprobe sroce sq_poll=1 sq_idle_us=100" modprobe sroce sq_poll=1 sq_idle_us=100
check "rdma link add sroce1" ip netns exec h1 rdma link add sroce1 type sroce netdev veth-h1
check "h1's IPv4 GID" wait_until 10 gid_index sroce1 10.0.79.1
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
stat() { awk -v n="$1" '$1 == n { print $2 }' /sys/kernel/debug/sroce/sroce1/sq_poll; }
s0=$(stat sleeps)
w0=$(stat wakeups)
check "100,000 burst/idle cycles, every WR completed" \
	ip netns exec h1 timeout 1700 "$PROGS/sroce_sqpoll" burst sroce1 100000 300
s1=$(stat sleeps)
w1=$(stat wakeups)
log "  poller: $(tr '\n' ' ' </sys/kernel/debug/sroce/sroce1/sq_poll)"
check "the poller slept between bursts ($((s1 - s0)) times)" test $((s1 - s0)) -gt 1000
check "doorbells woke it ($((w1 - w0)) times)" test $((w1 - w0)) -gt 1000
check "nothing left alive" wait_until 20 counts_zero sroce1
check "rdma link delete" ip netns exec h1 rdma link delete sroce1
ip netns del h1
ip netns del h2
check "rmmod sroce" wait_until 20 rmmod sroce
finish

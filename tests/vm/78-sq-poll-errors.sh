#!/usr/bin/env bash
# Many QPs erroring in one SQ poller pass (Documentation/sq-poller.md): 48
# UD QPs of one polled context, one armed CQ with a completion channel, a
# SEND each naming an AH of another PD, posted while a SCHED_FIFO task
# holds the poller's CPU so that the awake poller finds all 48 in one scan.
# Every error completion, the channel event and the 48 QP_FATAL async events
# must arrive, and the kernel log stays clean: with one batch per scan the
# 33rd distinct event overflowed the glue's batch (a WARN, events lost).
. "$(dirname "$0")/lib.sh"

two_hosts 88 9000
unset SROCE_NO_SQ_POLL
# A long sq_idle_us keeps the woken poller awake while the posts land (a
# doze, on a contended CPU, holds as long: the program tries again).
check "modprobe sroce sq_idle_us=200000 sq_poll_cpus=1" modprobe -C /dev/null sroce sq_idle_us=200000 sq_poll_cpus=1
check "sroce devices" sroce_on_hosts 88
# `ip netns exec` mounts its own /sys: the program reads the poller here.
mkdir -p /tmp/dbg78
mountpoint -q /tmp/dbg78 || mount -t debugfs none /tmp/dbg78
drains() { awk '$1 == "drains" { print $2 }' /tmp/dbg78/sroce/sroce1/sq_poll; }
d0=$(drains)
check "48 QPs error in one pass: every completion and event arrives" \
	ip netns exec h1 timeout 120 "$PROGS/sroce_sqpoll_errors" sroce1 48 1 /tmp/dbg78/sroce/sroce1/sq_poll
log "  poller drains: $(($(drains) - d0))"
check "counts back to ib_mad's own" counts_zero sroce1
umount /tmp/dbg78
ip netns exec h1 rdma link delete sroce1
ip netns exec h2 rdma link delete sroce2
wait_until 20 rmmod sroce
ip netns del h1
ip netns del h2
finish

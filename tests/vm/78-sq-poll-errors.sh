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
# A long sq_idle_us keeps the woken poller awake while the posts land.
check "modprobe sroce sq_idle_us=5000000 sq_poll_cpus=1" modprobe -C /dev/null sroce sq_idle_us=5000000 sq_poll_cpus=1
check "sroce devices" sroce_on_hosts 88
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
drains() { awk '$1 == "drains" { print $2 }' /sys/kernel/debug/sroce/sroce1/sq_poll; }
d0=$(drains)
check "48 QPs error in one pass: every completion and event arrives" \
	ip netns exec h1 timeout 60 "$PROGS/sroce_sqpoll_errors" sroce1 48 1
d1=$(drains)
log "  poller drains: $((d1 - d0))"
if [ $((d1 - d0)) -ge 48 ]; then ok "the poller drained the 48 QPs ($((d1 - d0)) drains)"; else fail "the poller drained $((d1 - d0)) QPs, not 48 (posts rang instead?)"; fi
check "counts back to ib_mad's own" counts_zero sroce1
ip netns exec h1 rdma link delete sroce1
ip netns exec h2 rdma link delete sroce2
wait_until 20 rmmod sroce
ip netns del h1
ip netns del h2
finish

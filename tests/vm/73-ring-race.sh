#!/usr/bin/env bash
# A process rewrites its own mapped SQ, RQ, SRQ and CQ rings (slots and indices)
# from a second thread while the kernel reads them under WRITE/READ/SEND/
# ATOMIC traffic, rings raw doorbells, and deregisters the target MR under
# traffic (tests/progs/sroce_race.c). It gets errors; its objects are all
# destroyable; another process's ping-pong on the same device meanwhile
# completes with its data checked; nothing is left; run-in-vm checks the
# kernel log.
. "$(dirname "$0")/lib.sh"

two_hosts 12 1500
# The poller reads the SQ rings while they are scribbled on (auto would
# start none on 2 vCPUs; doorbell mode reads them in the system call).
# Receive steering follows the rings' CPU hints, which are scribbled too.
modprobe sroce sq_poll=Y rx_steer=Y
check "sroce1 in h1, sroce2 in h2, with their IPv4 GIDs" sroce_on_hosts 12

# 20 s covers the ping-pong below; a slower kernel (make test-debug) needs
# that much longer.
ip netns exec h1 timeout 120 "$PROGS/sroce_race" sroce1 "$(scaled_secs 20)" >/tmp/race.log 2>&1 &
race=$!
sleep 2
port=19500
ip netns exec h1 timeout 100 ibv_rc_pingpong -d sroce1 -g "$g1" -p $port --chk -n 300 -s 4096 >/tmp/pp.server 2>&1 &
spid=$!
wait_until 30 sh -c "ip netns exec h1 ss -Hltn 'sport = :$port' | grep -q ."
ip netns exec h2 timeout 100 ibv_rc_pingpong -d sroce2 -g "$g2" -p $port --chk -n 300 -s 4096 10.0.12.1 >/tmp/pp.client 2>&1
prc=$?
wait $spid
src=$?
if [ $prc -eq 0 ] && [ $src -eq 0 ]; then
	ok "another process's rc_pingpong on the same device, during the scribbling: $(grep 'iters in' /tmp/pp.client)"
else
	fail "rc_pingpong during the scribbling (server $src, client $prc)"
	tail -5 /tmp/pp.server /tmp/pp.client
fi
check "the race was still running during the ping-pong" kill -0 $race
wait $race
rrc=$?
sed 's/^/    race: /' /tmp/race.log | grep -v '^    race: ok:'
if [ $rrc -eq 0 ]; then ok "the scribbling process: $(grep posts /tmp/race.log)"; else fail "sroce_race exit $rrc"; fi
steered=$(ip netns exec h1 rdma statistic show link sroce1/1 | grep -o 'rx_steered [0-9]*' | cut -d' ' -f2)
check "receive steering ran meanwhile (sroce1 rx_steered $steered)" test "${steered:-0}" -gt 0
check "nothing left alive on sroce1" wait_until 20 counts_zero sroce1
check "nothing left alive on sroce2" wait_until 20 counts_zero sroce2
check "rdma link delete" sh -c "ip netns exec h1 rdma link delete sroce1 && ip netns exec h2 rdma link delete sroce2"
ip netns del h1
ip netns del h2
check "rmmod" rmmod sroce
finish

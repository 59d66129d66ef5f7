#!/usr/bin/env bash
# sroce-dump on real rdma_rxe traffic crossing a veth pair: rxe0 (init_net)
# runs an ibv_rc_pingpong client against a stand-in server in namespace h2
# that answers the TCP exchange with a QPN nobody serves, so rxe sends RC
# SENDs and retransmits them. sroce-dump -i vethA and -d sroce1 (a sroce
# device on vethB in h2, so the tool must enter h2) capture them; every ICRC
# rxe computed must check ok, --json must agree with tshark, and --flows must
# count the retransmissions.
. "$(dirname "$0")/lib.sh"
DUMP=$TOP/build/user/sroce-dump
work=$(mktemp -d)

modprobe crc32_generic 2>/dev/null
check "modprobe rdma_rxe" modprobe rdma_rxe
check "modprobe sroce" modprobe sroce
ip netns add h2
make_veth vethA vethB h2
check "rxe0 on vethA" rdma link add rxe0 type rxe netdev vethA
check "sroce1 on vethB in h2" ip netns exec h2 rdma link add sroce1 type sroce netdev vethB
gid=$(ibv_devinfo -v -d rxe0 | sed -n 's/.*GID\[ *\([0-9]*\)\]:.*ffff:10\.0\.1\.1.*/\1/p' | head -1)
check "rxe0 has the IPv4 GID (index '$gid')" test -n "$gid"

# Captures: on vethA here, and through the RDMA device inside h2.
"$DUMP" -i vethA -w "$work/a.pcap" --print --tt >"$work/a.txt" 2>"$work/a.err" &
pa=$!
"$DUMP" -d sroce1 --tt --flows >"$work/d.txt" 2>"$work/d.err" &
pd=$!
check "both captures running" wait_until 10 sh -c "grep -q 'in namespace' '$work/d.err' && kill -0 $pa"
sleep 1

# The stand-in server: ibv_rc_pingpong's exchange "LID:QPN:PSN:GID" with QPN
# 0x000123 at vethB's address; no QP behind it.
ip netns exec h2 python3 "$TOP/tests/vm/standin_server.py" 10.0.1.2 18515 123 00000000000000000000ffff0a000102 &
ps=$!
# Python starts slowly under TCG: connect only once it listens.
check "stand-in server listening" wait_until 30 sh -c "ip netns exec h2 ss -Htln | grep -q ':18515 '"
timeout 10 ibv_rc_pingpong -d rxe0 -g "$gid" -n 1 10.0.1.2 >"$work/pp.txt" 2>&1
log "  pingpong client (expected to fail: no QP behind the server): $(tail -1 "$work/pp.txt")"
wait $ps 2>/dev/null
sleep 2
kill -INT $pa $pd
wait $pa $pd

log "  vethA capture: $(wc -l <"$work/a.txt") packets; first: $(head -1 "$work/a.txt")"
log "  sroce1 capture: $(sed -n 1p "$work/d.err")"
n=$(grep -c 'qp 0x000123 ' "$work/a.txt")
check "rxe's RC packets to QP 0x123 captured on vethA ($n)" test "$n" -ge 2
check "every captured packet's ICRC is ok" sh -c "! grep -v 'icrc ok\$' '$work/a.txt' | grep -q ."
check "rxe sends SEND opcodes" grep -qE 'RC_SEND_(FIRST|ONLY) qp 0x000123 psn [0-9]+' "$work/a.txt"
check "-d sroce1 entered h2 and saw the same packets" sh -c "grep -c 'qp 0x000123 .*icrc ok\$' '$work/d.txt' | grep -qx '$n'"
check "--flows counts rxe's retransmissions" grep -qE '^flow 10.0.1.1 > 10.0.1.2 qp 0x000123: .* retransmitted [1-9]' "$work/d.txt"
"$DUMP" -r "$work/a.pcap" --json >"$work/a.json" 2>&1
tshark -r "$work/a.pcap" -T fields -E separator=/t -e infiniband.bth.opcode -e infiniband.bth.destqp \
	-e infiniband.bth.psn >"$work/a.tshark" 2>/dev/null
check "--json agrees with tshark on opcode, QPN and PSN" python3 -c '
import json, sys
js = [json.loads(l) for l in open(sys.argv[1])]
ts = [l.split("\t") for l in open(sys.argv[2]).read().splitlines()]
assert len(js) == len(ts) and js, (len(js), len(ts))
for j, t in zip(js, ts):
    assert (j["opcode"], j["dest_qpn"], j["psn"]) == (int(t[0]), int(t[1], 16), int(t[2])), (j, t)
    assert j["icrc"] == "ok", j
' "$work/a.json" "$work/a.tshark"

rdma link delete rxe0
ip netns exec h2 rdma link delete sroce1
ip netns del h2
ip link del vethA 2>/dev/null
rmmod sroce 2>/dev/null
rmmod rdma_rxe 2>/dev/null
rm -rf "$work"
finish

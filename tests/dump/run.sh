#!/usr/bin/env bash
# sroce-dump tests: a capture crafted with the core's writers (good packets
# of many opcodes, VLAN-tagged ones, and one packet per kind of damage) must
# be reported packet by packet with the right verdicts; --json must agree
# with tshark; --flows must count a retransmission and no false gap; -w
# must write what tshark reads; a Linux cooked capture's tagged frames are
# read; output that cannot be written is an error; and the decoder fuzzer
# runs for a bounded time (DUMP_FUZZ_SECONDS, default 60).
# Ends with "dump: N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
dump=$top/build/user/sroce-dump
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { echo "PASS $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; [ -n "${2:-}" ] && echo "$2" | sed 's/^/  /'; failed=$((failed + 1)); }
check() { # check NAME CMD...
	local name=$1
	shift
	if out=$("$@" 2>&1); then ok "$name"; else bad "$name" "$out"; fi
}
keeps() { # keeps FILE REGEX CMD...: CMD prints the lines of FILE matching REGEX, some
	local want got
	want=$(grep -E -- "$2" "$1")
	got=$("${@:3}" 2>&1)
	[ -n "$want" ] && [ "$got" = "$want" ] || { echo "want: $want"; echo "got: $got"; return 1; }
}

"$top/build/dump/mkpcap" "$work/t.pcap" >"$work/manifest" || { bad "mkpcap"; echo "dump: $passed passed, $failed failed"; exit 1; }
nframes=$(wc -l <"$work/manifest")
"$dump" -r "$work/t.pcap" --tt >"$work/text" 2>"$work/text.err"
rc=$?
check "text: exit 0, one line per frame ($nframes)" test $rc -eq 0 -a "$(wc -l <"$work/text")" -eq "$nframes"

line() { sed -n "${1}p" "$work/text"; }
kinds() { awk -v k="$1" '$2 == k {print $1}' "$work/manifest"; }
verdict() { # verdict KIND REGEX: every frame of KIND matches REGEX
	local k=$1 re=$2 n l miss=""
	for n in $(kinds "$k"); do
		l=$(line "$n")
		echo "$l" | grep -qE -- "$re" || miss="$miss
frame $n: $l"
	done
	if [ -z "$miss" ] && [ -n "$(kinds "$k")" ]; then ok "text: $k frames match /$re/"; else bad "text: $k frames match /$re/" "$miss"; fi
}
verdict good ': [A-Z_]+ qp 0x[0-9a-f]{6} psn [0-9]+.*, icrc ok$'
verdict kat 'CNP qp 0x000118 psn 0 becn, .*icrc ok$'
verdict badicrc 'RC_SEND_MIDDLE .*icrc BAD \(0x[0-9a-f]{8}, expected 0x[0-9a-f]{8}\)$'
verdict truncbth 'malformed: truncated BTH, length [0-9]+, icrc -$'
verdict reserved 'RESERVED malformed: invalid opcode 0x18, .*icrc ok$'
verdict udplen 'IP malformed: IP/UDP length mismatch'
verdict cutreth 'RC_RDMA_WRITE_FIRST malformed: truncated extension header, .*icrc ok$'
verdict snaplen 'RC_RDMA_WRITE_MIDDLE qp 0x000011 psn 108, .*\(captured 96\), icrc unverifiable$'
# IBA 1.5 FLUSH: the FETH is decoded before the RETH, in text and JSON.
check "text and json: FLUSH's FETH (global visibility, whole MR) before its RETH" sh -c \
	"grep -q 'RC_FLUSH qp 0x000033 psn 300 ackreq, feth placement 0x1 level 1, reth va 0x7f0000003000' '$work/text' &&
	 '$dump' -r '$work/t.pcap' --json | grep -q '\"feth\":{\"placement\":1,\"selectivity\":1},\"reth\"'"
# VLAN tags on Ethernet: the capture filter and the decoder pass 802.1Q and
# QinQ, and an expression applies under the tags.
check "vlan: 802.1Q (IPv4, IPv6) and QinQ frames to qp 0x88 decoded, icrc ok" \
	test "$(grep -cE ': RC_SEND_ONLY qp 0x000088 psn [1-3], payload 20, length [0-9]+, icrc ok$' "$work/text")" -eq 3
check "vlan: 'src host 10.0.0.4' keeps the QinQ frame from it" \
	keeps "$work/text" ' IP 10\.0\.0\.4\.' "$dump" -r "$work/t.pcap" --tt src host 10.0.0.4
# Every good frame's opcode name is the one it was built with.
miss=""
while read -r n kind name; do
	[ "$kind" = good ] || continue
	line "$n" | grep -q ": $name qp " || miss="$miss
frame $n ($name): $(line "$n")"
done <"$work/manifest"
[ -z "$miss" ] && ok "text: opcode names of the good frames" || bad "text: opcode names of the good frames" "$miss"

# An independent ICRC (python zlib, no shared code) agrees on every complete
# frame, including the hardware-captured CNP.
python3 "$top/tests/dump/icrc_ref.py" "$work/t.pcap" >"$work/ref" 2>&1
miss=""
while read -r n kind name; do
	r=$(awk -v n="$n" '$1 == n {print $2}' "$work/ref")
	case $kind in
	good | kat | reserved | cutreth) want=ok ;;
	badicrc) want=BAD ;;
	*) continue ;;
	esac
	[ "$r" = "$want" ] || miss="$miss
frame $n ($kind): reference says '$r', want $want"
done <"$work/manifest"
[ -z "$miss" ] && ok "independent zlib ICRC agrees on all complete frames" || bad "independent zlib ICRC agrees on all complete frames" "$miss"

# --json: valid objects with the documented keys; the good frames agree with
# tshark's RoCEv2 dissector field by field.
"$dump" -r "$work/t.pcap" --json >"$work/json" 2>&1
tshark -r "$work/t.pcap" -T fields -E separator=/t -e frame.number -e infiniband.bth.opcode \
	-e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.bth.a -e infiniband.reth.va \
	-e infiniband.reth.r_key -e infiniband.reth.dmalen -e infiniband.aeth.syndrome \
	-e infiniband.aeth.msn -e infiniband.deth.q_key -e infiniband.deth.srcqp \
	-e infiniband.atomiceth.swapdt -e infiniband.atomiceth.cmpdt \
	-e infiniband.atomicacketh.origremdt -e infiniband.vendor >"$work/tshark" 2>/dev/null
check "json agrees with tshark on every good frame" python3 - "$work/json" "$work/tshark" "$work/manifest" "$top/tests/vm" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[4])
from capture_agree import xrc_raw_fields
objs = [json.loads(l) for l in open(sys.argv[1])]
ts = {}
for l in open(sys.argv[2]):
    f = l.rstrip("\n").split("\t")
    ts[int(f[0])] = f[1:]
kinds = {int(l.split()[0]): l.split()[1] for l in open(sys.argv[3])}
assert len(objs) == len(kinds), (len(objs), len(kinds))
def num(s):
    return int(s, 16) if s.startswith("0x") else int(s)
bad = []
checked = 0
xrc_checked = set()
for n, o in enumerate(objs, 1):
    for k in ("time", "length", "caplen", "malformed", "icrc"):
        assert k in o, (n, k)
    if kinds[n] not in ("good", "kat"):
        continue
    t = ts[n]
    want = {"opcode": num(t[0]), "dest_qpn": num(t[1]), "psn": num(t[2]), "ack_req": t[3] == "1"}
    if t[11]:  # tshark shows the AtomicETH va and rkey under reth.*
        want.update({"atomic_eth.va": num(t[4]), "atomic_eth.rkey": num(t[5])})
    elif t[4]:
        want.update({"reth.va": num(t[4]), "reth.rkey": num(t[5]), "reth.length": num(t[6])})
    if t[7]:
        want.update({"aeth.syndrome": num(t[7]), "aeth.msn": num(t[8])})
    if t[9]:
        want.update({"deth.qkey": num(t[9]), "deth.src_qp": num(t[10])})
    if t[11]:
        want.update({"atomic_eth.swap_add": num(t[11]), "atomic_eth.compare": num(t[12])})
    if t[13]:
        want.update({"atomic_ack_eth.orig": num(t[13])})
    # tshark 4.0 leaves what follows an XRC BTH as raw bytes: decoded by
    # tests/vm/capture_agree.py's reader.
    if 0xa0 <= want["opcode"] < 0xc0:
        want.update(xrc_raw_fields(want["opcode"], t[14]))
        xrc_checked.add(n)
    for k, v in want.items():
        got = o
        for part in k.split("."):
            got = got[part]
        if isinstance(got, str):
            got = num(got)
        if got != v:
            bad.append((n, k, got, v))
        checked += 1
assert not bad, bad
assert checked > 60, checked
assert len(xrc_checked) == 3, xrc_checked
print("checked", checked, "fields,", len(xrc_checked), "XRC frames")
PY

# --flows: the retransmitted PSN, the NAKs and the ICRC error are counted.
"$dump" -r "$work/t.pcap" --flows >"$work/flows" 2>&1
f11=$(grep '^flow 10.0.0.1 > 10.0.0.2 qp 0x000011:' "$work/flows")
f22=$(grep '^flow 10.0.0.2 > 10.0.0.1 qp 0x000022:' "$work/flows")
check "flows: qp 0x11 has 1 retransmitted PSN, no gap, 1 ICRC error" \
	bash -c "echo '$f11' | grep -q 'packets 9 .* psn 100..108 gaps 0 (missing 0) retransmitted 1 .* icrc_errors 1$'"
check "flows: qp 0x22 has 1 RNR NAK and 1 PSN sequence NAK" \
	bash -c "echo '$f22' | grep -q 'acks 3 rnr_naks 1 naks 1 (seq 1 '"
# A responder's stream: READ responses and ACKs answer the same requests'
# PSNs, and ACKs coalesce (14 answers 13 too) and repeat.
check "flows: READ responses, ACKs, a coalesced and a repeated ACK to qp 0x23: no gap, no retransmission" \
	grep -q '^flow 10.0.0.3 > 10.0.0.1 qp 0x000023: packets 6 .* psn 10..15 gaps 0 (missing 0) retransmitted 0 ' "$work/flows"
check "flows: a READ response missing its MIDDLE, then the part again (qp 0x24): 1 gap, 1 retransmission" \
	grep -q '^flow 10.0.0.3 > 10.0.0.1 qp 0x000024: packets 3 .* psn 20..22 gaps 1 (missing 1) retransmitted 1 ' "$work/flows"
# UD: each sender's QP (DETH) numbers its own PSNs.
check "flows: UD to qp 0x34 from QPs 0x44 (PSNs 0, 1) and 0x45 (500): two flows, no gap, no retransmission" sh -c \
	"grep -q '^flow 10.0.0.1 > 10.0.0.2 qp 0x000034 src_qp 0x000044: packets 2 .* psn 0..1 gaps 0 (missing 0) retransmitted 0 ' '$work/flows' &&
	 grep -q '^flow 10.0.0.1 > 10.0.0.2 qp 0x000034 src_qp 0x000045: packets 1 .* psn 500..500 gaps 0 (missing 0) retransmitted 0 ' '$work/flows'"
"$dump" -r "$work/t.pcap" --flows --json >"$work/flowsj" 2>&1
check "flows --json: the same counts" python3 -c '
import json, sys
fl = [json.loads(l) for l in open(sys.argv[1]) if "\"flow\"" in l]
f = [x for x in fl if x["dest_qpn"] == 0x11 and x["src"] == "10.0.0.1"][0]
assert (f["retransmitted"], f["gaps"], f["icrc_errors"], f["packets"]) == (1, 0, 1, 9), f
assert f["psn"] == {"first": 100, "last": 108}, f
assert "src_qp" not in f, f
g = [x for x in fl if x["dest_qpn"] == 0x22][0]
assert (g["rnr_naks"], g["naks"]["psn_seq_err"], g["acks"]) == (1, 1, 3), g
r = [x for x in fl if x["dest_qpn"] == 0x23][0]
assert (r["gaps"], r["retransmitted"], r["psn"]) == (0, 0, {"first": 10, "last": 15}), r
u = sorted((x["src_qp"], x["packets"], x["gaps"], x["retransmitted"]) for x in fl if x["dest_qpn"] == 0x34)
assert u == [(0x44, 2, 0, 0), (0x45, 1, 0, 0)], u
' "$work/flowsj"

# Filters: --qpn, --opcode (name or number), a BPF expression.
check "--qpn 0x22 keeps the 5 responses" test "$("$dump" -r "$work/t.pcap" --qpn 0x22 | wc -l)" -eq 5
check "--opcode RC_ACKNOWLEDGE keeps 5 (2 to qp 0x22, 3 to 0x23)" \
	test "$("$dump" -r "$work/t.pcap" --opcode RC_ACKNOWLEDGE | wc -l)" -eq 5
check "--opcode 0x81 keeps the 2 CNPs" test "$("$dump" -r "$work/t.pcap" --opcode 0x81 | wc -l)" -eq 2
check "BPF 'src host 10.0.0.2' keeps 6" test "$("$dump" -r "$work/t.pcap" src host 10.0.0.2 | wc -l)" -eq 6
"$dump" -r "$work/t.pcap" --opcode RC_BOGUS >/dev/null 2>&1
check "unknown opcode name is a usage error" test $? -eq 2
"$dump" >/dev/null 2>&1
check "no source is a usage error" test $? -eq 2
"$dump" -i lo -B 10 >/dev/null 2>&1
check "a capture buffer under 64 KiB is a usage error" test $? -eq 2

# A live capture (on this machine's lo) reports the kernel's drops at exit,
# on stderr and at the end of --flows.
"$dump" -i lo -B 1024 --flows >"$work/live.out" 2>"$work/live.err" &
lpid=$!
sleep 1 # pcap_activate
python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(5):
    s.sendto(b"\x04" + bytes(27), ("127.0.0.1", 4791))
'
sleep 0.5
kill -INT $lpid
wait $lpid
check "live: exit 0 on SIGINT" test $? -eq 0
check "live: stderr says received and dropped" grep -qE '^sroce-dump: ([5-9]|[1-9][0-9]+) packets received by filter, 0 dropped by kernel$' "$work/live.err"
check "live: --flows ends with the kernel drops" sh -c "tail -1 '$work/live.out' | grep -qx 'capture: 0 packets dropped by kernel'"
"$dump" -r "$work/t.pcap" 'udp and (' >/dev/null 2>&1
check "bad BPF expression is an error" test $? -eq 2

# Packet trains (sroce's UDP GSO, as a capture on veth sees them): one frame
# is shown as the packets it segments into, each ICRC checked.
"$top/build/dump/mkpcap" --trains "$work/tr.pcap" >"$work/tr.manifest"
"$dump" -r "$work/tr.pcap" --tt >"$work/tr.text" 2>&1
check "trains: one line per segment (5 + 3), the look-alike and the plain packet one each" \
	test "$(wc -l <"$work/tr.text")" -eq "$(awk '{ s += $3 } END { print s }' "$work/tr.manifest")"
check "trains: an IPv4 train of 5 across 16-bit PSNs, every segment's ICRC ok" sh -c \
	"[ \$(grep -c 'qp 0x000011 psn 6553[4-8], payload [0-9]*, length [0-9]*, icrc ok, train [1-5]/5\$' '$work/tr.text') -eq 5 ] &&
	 grep -q 'RC_SEND_LAST qp 0x000011 psn 65538, payload 512, .*train 5/5' '$work/tr.text'"
check "trains: an IPv6 train of 3, every segment's ICRC ok" \
	test "$(grep -c 'IP6 .*qp 0x000012 psn 4[0-2], payload 256, .*icrc ok, train [1-3]/3$' "$work/tr.text")" -eq 3
check "trains: a frame whose second PSN does not follow is one packet, ICRC BAD" \
	grep -q 'qp 0x000013 psn 7, payload 224, .*icrc BAD ([^)]*)$' "$work/tr.text"
check "trains: --json marks the segments" python3 -c '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
t = [(x["train_segment"], x["train_segments"]) for x in o if "train_segment" in x]
assert t == [(k, 5) for k in range(1, 6)] + [(k, 3) for k in range(1, 4)], t
assert all(x["icrc"] == "ok" for x in o if "train_segment" in x)
' <("$dump" -r "$work/tr.pcap" --json)
check "trains: --flows counts the segments, no gap" sh -c \
	"'$dump' -r '$work/tr.pcap' --flows | grep -q '^flow 10.0.0.1 > 10.0.0.2 qp 0x000011: packets 6 .* gaps 0 '"
"$dump" -r "$work/tr.pcap" -w "$work/trw.pcap" >/dev/null 2>&1
check "trains: -w writes each train once" cmp <("$dump" -r "$work/trw.pcap" --tt) "$work/tr.text"
"$dump" -r "$work/tr.pcap" --opcode RC_SEND_LAST -w "$work/trl.pcap" >/dev/null 2>&1
check "trains: -w --opcode RC_SEND_LAST writes the two trains whose last packet it is" \
	test "$(tshark -r "$work/trl.pcap" 2>/dev/null | wc -l):$("$dump" -r "$work/trl.pcap" --opcode RC_SEND_LAST | wc -l)" = 2:2
check "trains: -c 2 stops within a train" test "$("$dump" -r "$work/tr.pcap" -c 2 | wc -l)" -eq 2
# The live-device fuzzer (tests/vm/wire_fuzz.py) mutates a train's first
# packet and tracks its last PSN.
check "trains: wire_fuzz.py's Frame takes a train's first packet and its last PSN" python3 - "$work/tr.pcap" "$top/tests/vm" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[2])
import wire_fuzz
data = open(sys.argv[1], "rb").read()
off, got = 24, []
while off < len(data):
    incl = struct.unpack("<IIII", data[off:off + 16])[2]
    f = wire_fuzz.Frame(data[off + 16:off + 16 + incl])
    got.append((f.psn, f.last_psn, len(f.ib)))
    off += 16 + incl
assert got == [(65534, 65538, 12 + 1024), (40, 42, 12 + 256), (7, 7, 236), (9, 9, 12 + 100)], got
PY

# -w writes a pcap tshark reads; reading it back gives the same lines.
"$dump" -r "$work/t.pcap" --qpn 0x11 -w "$work/w.pcap" >"$work/w.out" 2>&1
check "-w: nothing printed without --print" test ! -s "$work/w.out"
check "-w: tshark reads the written frames" test "$(tshark -r "$work/w.pcap" 2>/dev/null | wc -l)" -eq "$("$dump" -r "$work/t.pcap" --qpn 0x11 | wc -l)"
check "-w: read back, the same lines" cmp <("$dump" -r "$work/w.pcap" --tt) <("$dump" -r "$work/t.pcap" --tt --qpn 0x11)
# pcapng input.
editcap -F pcapng "$work/t.pcap" "$work/t.pcapng" 2>/dev/null
check "pcapng input gives the same lines" cmp <("$dump" -r "$work/t.pcapng" --tt) "$work/text"

# Output that cannot be written is an error, the capture's or the lines.
"$dump" -r "$work/t.pcap" -w /dev/full >/dev/null 2>&1
check "-w /dev/full: exit 1" test $? -eq 1
"$dump" -r "$work/t.pcap" >/dev/full 2>/dev/null
check "standard output to /dev/full: exit 1" test $? -eq 1

# A Linux cooked capture (-i any), where libpcap puts a VLAN tag the kernel
# stripped at the protocol field: tagged and QinQ frames pass the filter
# and are decoded, and an expression applies to them.
"$top/build/dump/mkpcap" --sll "$work/sll.pcap" >"$work/sll.manifest"
"$dump" -r "$work/sll.pcap" --tt >"$work/sll.text" 2>&1
check "cooked: every RoCEv2 frame (untagged, tagged, QinQ; IPv4, IPv6) decoded with icrc ok, the other port not" \
	test "$(grep -cE ': RC_[A-Z_]+ qp 0x00006[12] psn [1-3], .*icrc ok$' "$work/sll.text"):$(wc -l <"$work/sll.text")" = \
	"$(grep -c ' good ' "$work/sll.manifest"):$(grep -c ' good ' "$work/sll.manifest")"
check "cooked: the tagged frames' addresses and QPs" sh -c \
	"grep -q ' IP 10.0.0.3.49155 > 10.0.0.2.4791: RC_SEND_ONLY qp 0x000061 psn 2, ' '$work/sll.text' &&
	 grep -q ' IP6 fd00::3.49155 > fd00::2.4791: RC_SEND_ONLY qp 0x000062 psn 2, ' '$work/sll.text'"
check "cooked: 'src host 10.0.0.3' keeps the tagged IPv4 frame from it" \
	keeps "$work/sll.text" ' IP 10\.0\.0\.3\.' "$dump" -r "$work/sll.pcap" --tt src host 10.0.0.3
check "cooked: 'ip6' keeps the tagged and the QinQ IPv6 frame" \
	keeps "$work/sll.text" ' IP6 ' "$dump" -r "$work/sll.pcap" --tt ip6

# The fuzzer's seeds: the trains too, each frame under every link-layer
# header the decoder reads, tagged frames among them.
mkdir "$work/corpus"
"$top/build/dump/mkpcap" "$work/c.pcap" "$work/corpus" >/dev/null
"$top/build/dump/mkpcap" --trains "$work/ct.pcap" "$work/corpus" >/dev/null
check "fuzz seeds: trains, link-layer selectors 0-5, tagged frames" python3 - "$work/corpus" <<'PY'
import os, sys
seeds = {n: open(os.path.join(sys.argv[1], n), "rb").read() for n in os.listdir(sys.argv[1])}
assert {s[0] for s in seeds.values()} == set(range(6)), sorted({s[0] for s in seeds.values()})
assert any(n.startswith("train-") for n in seeds), sorted(seeds)
assert any(s[0] == 0 and s[14:16] in (b"\x81\x00", b"\x88\xa8") for s in seeds.values())
assert any(s[0] == 2 and s[16:18] in (b"\x81\x00", b"\x88\xa8") for s in seeds.values())
PY
# The fuzzer reaches split_train's split with inputs that say the wire was
# longer than the capture (most do): a train seed with one more wire byte.
mkdir "$work/one"
python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); open(sys.argv[2], "wb").write(d[:1] + b"\x01" + d[2:])' \
	"$work/corpus/train-frame1" "$work/one/train"
check "fuzz: a train seed with extra wire bytes is still split (train_segment covered)" sh -c \
	"'$top/build/dump/fuzz-decode' -runs=0 -print_coverage=1 '$work/one' 2>&1 | grep -q '^COVERED_FUNC: .*train_segment'"
# A finding outlives the corpus directory: libFuzzer's memory limit at
# 1 MiB makes it write one (oom-*).
DUMP_FUZZ_CRASHES=$work/crashes bash "$top/tests/dump/fuzz.sh" 5 -rss_limit_mb=1 >"$work/fuzz-oom" 2>&1
rc=$?
check "fuzz: a reproducer is kept in DUMP_FUZZ_CRASHES and shown (exit $rc)" sh -c \
	"test $rc -ne 0 && ls '$work/crashes' | grep -q '^oom-' && grep -q '^fuzz.sh: reproducer kept: $work/crashes/oom-' '$work/fuzz-oom'"

# The decoder fuzzer from the crafted frames, bounded.
secs=${DUMP_FUZZ_SECONDS:-60}
check "fuzz the decoder for ${secs}s" bash "$top/tests/dump/fuzz.sh" "$secs"

echo "dump: $passed passed, $failed failed"
[ $failed -eq 0 ]

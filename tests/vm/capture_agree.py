#!/usr/bin/env python3
"""capture_agree.py JSON TSHARK [--srcs A,B] [--want HEX,...] [--srqn N]

sroce-dump --json and tshark must read a live capture alike, packet by
packet: BTH opcode, dest QP and PSN, AETH syndrome and RETH length (absent
in both, or equal), and every ICRC checks. TSHARK is `tshark -T fields`
with -e infiniband.bth.opcode -e infiniband.bth.destqp -e
infiniband.bth.psn -e infiniband.aeth.syndrome -e infiniband.reth.dmalen
-e infiniband.vendor.

tshark 4.0 names XRC opcodes but leaves what follows their BTH as raw
bytes (infiniband.vendor, given twice: the XRCETH alone, then all of it).
For XRC requests the XRCETH's SRQ number and any RETH are read from those
bytes, in IBA order (BTH, XRCETH, RETH); for XRC responses, which carry no
XRCETH, the AETH's syndrome and MSN.

--srcs: the source addresses that must both appear; --want: opcodes that
must appear; --srqn: the SRQ number every XRC request must carry.
"""
import argparse
import json

RETH_OPS = (0x06, 0x0A, 0x0B, 0x0C)  # RDMA WRITE first/only/only-imm, READ request
RESP_OPS = (0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12)  # READ responses, ACK, atomic ACK
AETH_OPS = (0x0D, 0x0F, 0x10, 0x11, 0x12)  # the responses with an AETH


def num(s):
    return int(s, 0) if s else None


def xrc_raw_fields(op, vendor):
    """The headers after an XRC packet's BTH, from tshark's raw bytes (its
    last infiniband.vendor item), as sroce-dump --json names them: a
    request's XRCETH and any RETH, a response's AETH."""
    v = bytes.fromhex(vendor.split(",")[-1])
    be = lambda a, b: int.from_bytes(v[a:b], "big")
    if op & 0x1F in AETH_OPS:
        return {"aeth.syndrome": v[0], "aeth.msn": be(1, 4)}
    if op & 0x1F in RESP_OPS:
        return {}
    f = {"xrceth.srqn": be(0, 4) & 0xFFFFFF}
    if op & 0x1F in RETH_OPS:
        f.update({"reth.va": be(4, 12), "reth.rkey": be(12, 16), "reth.length": be(16, 20)})
    return f


def json_field(j, path):
    for part in path.split("."):
        j = j[part]
    return int(j, 0) if isinstance(j, str) else j


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("tshark")
    ap.add_argument("--srcs", default="")
    ap.add_argument("--want", default="")
    ap.add_argument("--srqn", type=lambda s: int(s, 0))
    a = ap.parse_args()
    js = [json.loads(l) for l in open(a.json)]
    ts = [l.split("\t") for l in open(a.tshark).read().splitlines()]
    assert js and len(js) == len(ts), ("packets", len(js), len(ts))
    srcs, ops, xrc = set(), set(), 0
    for i, (j, t) in enumerate(zip(js, ts), 1):
        t = (t + [""] * 6)[:6]
        op = j["opcode"]
        reth_len = j.get("reth", {}).get("length")
        theirs_len = num(t[4])
        theirs_syn = num(t[3])
        if 0xA0 <= op < 0xC0:
            assert t[5], ("packet", i, "tshark shows no bytes after the BTH")
            f = xrc_raw_fields(op, t[5])
            for k, v in f.items():
                assert json_field(j, k) == v, ("packet", i, k, json_field(j, k), v)
            theirs_syn = f.get("aeth.syndrome", theirs_syn)
            theirs_len = f.get("reth.length", theirs_len)
            if "xrceth.srqn" in f:
                if a.srqn is not None:
                    assert f["xrceth.srqn"] == a.srqn, ("packet", i, "srqn", f["xrceth.srqn"], "want", a.srqn)
                xrc += 1
        mine = (op, j["dest_qpn"], j["psn"], j.get("aeth", {}).get("syndrome"), reth_len)
        theirs = (num(t[0]), num(t[1]), num(t[2]), theirs_syn, theirs_len)
        assert mine == theirs, ("packet", i, mine, theirs)
        assert j["icrc"] == "ok", ("packet", i, j["icrc"])
        srcs.add(j["src"])
        ops.add(op)
    if a.srcs:
        assert srcs == set(a.srcs.split(",")), srcs
    missing = [w for w in a.want.split(",") if w and int(w, 16) not in ops]
    assert not missing, ("missing opcodes", missing)
    print("  %d packets (%d XRC requests), opcodes %s" %
          (len(js), xrc, " ".join("0x%02x" % o for o in sorted(ops))))


if __name__ == "__main__":
    main()

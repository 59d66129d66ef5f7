#!/usr/bin/env python3
"""Randomized RoCEv2 fuzzer against live sroce devices: tests/vm/90-wire-fuzz.sh.

  wire_fuzz.py NS_A NS_B IFACE SEED SECONDS VICTIM_NET WILD_NET DEV:PIDFILE

It captures the traffic on IFACE of namespace NS_B (every frame between the
two hosts crosses it) and, while real transfers run, replays mutated copies
of what it captured, each from the namespace of the frame's sender (an
AF_PACKET socket on that end's IFACE), so every copy carries the real
peer's addresses and passes the address checks. Three classes:

  victim  frames of the IPv4 flows (VICTIM_NET, e.g. "10.0.90."), the
          transfer that must complete with every byte right. Two kinds:
          - must-drop (a bad ICRC, UDP checksum or length, a truncated
            frame, a foreign P_Key, a non-zero BTH TVer, no such QP): at the
            live PSN (the next request, an ACK of all sent) with the payload
            changed, so a device that took one would corrupt the transfer;
          - must-ignore (any opcode, BTH flags, RETH/AETH/atomic fields,
            payload, IPv4 options, IP ID, QPN, or a plain replay): the PSN
            moved where a correct device must not act on it, a request far
            behind the responder's expected PSN (a duplicate) or far ahead
            of it, a response far outside the requester's window. The PSN
            is chosen after the opcode, in its PSN space (a request is in
            its sender's, an ACK in its receiver's).
  wild    frames of the IPv6 flows (WILD_NET, "fd00:90::"), a transfer that
          may fail: PSNs in and around the live window, opcodes switched
          mid-message, RETH/atomic fields at the edges of the target MR (the
          largest MR on DEV of the process in PIDFILE, read again every 2 s
          from `rdma res show mr -dd`): its last byte, one past it, va+len
          wrapping 2^64, lengths 2^31-1, 2^31 and 2^32-1, misaligned and
          last-word atomics, wrong keys.
  mad     A's CM MADs of the IPv6 flows, to B's QP1, with random bytes
          changed, or with a MAD of random bytes.

WIRE_FUZZ_ONLY=a,b limits the victim mutations to those named (to find
which one a failure needs). Runs SECONDS, or until SIGTERM, then prints one
line per class and mutation with its count (`sent CLASS MUTATION N`) and
`total N`.

WIRE_FUZZ_MIN=wild=100,mad=10 and WIRE_FUZZ_DRAIN=S: after SIGTERM it goes
on for up to S more seconds fuzzing only the classes named that have sent
fewer than their minimum. The victim's end (the SIGTERM) does not end the
wild transfers, and on a slow kernel (the debug one) the minimums would
otherwise depend on the machine's speed rather than on the fuzzer.
Deterministic for a SEED given the same captured frames. zlib's CRC-32; no
code shared with the core.
"""
import collections
import ctypes
import os
import random
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib

ROCE_PORT = 4791
ETH_P_ALL = 0x0003
CAPTURE_BATCH = 64  # frames parsed between two sends at most
CLONE_NEWNET = 0x40000000
REQ_OPS = [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x13, 0x14, 0x16, 0x17,
           0x1C, 0x1D]  # IBA 1.5: 0x1C FLUSH, 0x1D ATOMIC WRITE
RESP_OPS = [0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12]
OTHER_OPS = [0x15, 0x18, 0x1F, 0x24, 0x2A, 0x64, 0x65, 0x81, 0xA0, 0xFF]  # reserved, UC, UD, CNP, XRC
RETH_OPS = {0x06, 0x0A, 0x0B, 0x0C, 0x1C, 0x1D}
FETH_OPS = {0x1C}  # before the RETH: placement bits 3..0, level bits 5..4
IMM_OPS = {0x03, 0x05, 0x09, 0x0B}
IETH_OPS = {0x16, 0x17}
ATOMIC_OPS = {0x13, 0x14}
AETH_OPS = {0x0D, 0x0F, 0x10, 0x11, 0x12}
PSN_MASK = 0xFFFFFF

libc = ctypes.CDLL(None, use_errno=True)


def netns_socket(ns, *args):
    """A socket created in namespace ns (sockets keep their namespace)."""
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    fd = os.open("/run/netns/" + ns, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns " + ns)
        s = socket.socket(*args)
    finally:
        libc.setns(own, CLONE_NEWNET)
        os.close(fd)
        os.close(own)
    return s


def train_segment_len(ib, psn):
    """The length of a train's packets, if the UDP payload ib is a train:
    the first offset where a BTH of the same P_Key and QP carries PSN + 1
    (as sroce-dump's split_train finds it, without its ICRC check); 0 if
    none."""
    want = ib[2:4], ib[5:8], struct.pack("!I", (psn + 1) & PSN_MASK)[1:]
    for p in range(16, len(ib) - 15, 4):
        if (ib[p + 2:p + 4], ib[p + 5:p + 8], ib[p + 9:p + 12]) == want:
            return p
    return 0


def psn_diff(a, b):
    d = (a - b) & PSN_MASK
    return d - (1 << 24) if d & 0x800000 else d


def csum16(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


class Frame:
    """One captured RoCEv2 frame, split into the parts the fuzzer rebuilds."""

    def __init__(self, raw):
        self.eth = raw[:14]
        etype = struct.unpack("!H", raw[12:14])[0]
        if etype == 0x0800:
            ihl = (raw[14] & 0xF) * 4
            self.v6 = False
            self.src = socket.inet_ntop(socket.AF_INET, raw[26:30])
            self.dst = socket.inet_ntop(socket.AF_INET, raw[30:34])
            self.ipsrc, self.ipdst = raw[26:30], raw[30:34]
            udp = 14 + ihl
            if raw[23] != 17:
                raise ValueError
        elif etype == 0x86DD:
            self.v6 = True
            self.src = socket.inet_ntop(socket.AF_INET6, raw[22:38])
            self.dst = socket.inet_ntop(socket.AF_INET6, raw[38:54])
            self.ipsrc, self.ipdst = raw[22:38], raw[38:54]
            udp = 54
            if raw[20] != 17:
                raise ValueError
        else:
            raise ValueError
        self.sport, dport, ulen = struct.unpack("!HHH", raw[udp:udp + 6])
        if dport != ROCE_PORT or ulen < 8 + 12 + 4:
            raise ValueError
        ib = raw[udp + 8:udp + ulen]
        self.opcode = ib[0]
        self.qpn = struct.unpack("!I", ib[4:8])[0] & PSN_MASK
        self.psn = struct.unpack("!I", ib[8:12])[0] & PSN_MASK
        # A packet train (sroce's UDP GSO, kmod/linux/train.c, as the
        # capture sees it before segmentation): equal packets of one QP
        # with PSNs psn, psn + 1, ...; the fuzzer takes its first packet,
        # and its last PSN for the estimates.
        seg = train_segment_len(ib, self.psn)
        self.last_psn = (self.psn + (len(ib) + seg - 1) // seg - 1) & PSN_MASK if seg else self.psn
        self.ib = (ib[:seg] if seg else ib)[:-4]  # without the ICRC


def icrc(f, iphdr, udphdr, ib):
    """RoCEv2 ICRC: masked IP header (all of it), UDP header with its
    checksum masked, BTH with resv8a masked, payload."""
    ip = bytearray(iphdr)
    if f.v6:
        ip[0] |= 0x0F
        ip[1:4] = b"\xff\xff\xff"
        ip[7] = 0xFF
    else:
        ip[1] = 0xFF
        ip[8] = 0xFF
        ip[10:12] = b"\xff\xff"
    udp = bytearray(udphdr)
    udp[6:8] = b"\xff\xff"
    b = bytearray(ib)
    b[4] = 0xFF
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(b)))


def build(f, ib, ipopts=b"", bad_icrc=False, bad_udp=False, udp_len_delta=0, trunc=0, ipid=0):
    """The frame f with IB part ib (no ICRC), every length and checksum
    right unless asked otherwise."""
    ulen = 8 + len(ib) + 4
    if f.v6:
        iphdr = struct.pack("!IHBB16s16s", 0x60000000, ulen, 17, 64, f.ipsrc, f.ipdst)
        pseudo = f.ipsrc + f.ipdst + struct.pack("!IxxxB", ulen, 17)
    else:
        ihl = 5 + len(ipopts) // 4
        hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, ihl * 4 + ulen, ipid, 0x4000, 64, 17, 0,
                          f.ipsrc, f.ipdst) + ipopts
        iphdr = hdr[:10] + struct.pack("!H", csum16(hdr)) + hdr[12:]
        pseudo = f.ipsrc + f.ipdst + struct.pack("!BBH", 0, 17, ulen)
    udphdr = struct.pack("!HHHH", f.sport, ROCE_PORT, ulen, 0)
    crc = icrc(f, iphdr, udphdr, ib)
    if bad_icrc:
        crc = bytes([crc[0] ^ 0x5A]) + crc[1:]
    body = ib + crc
    uc = csum16(pseudo + udphdr + body) or 0xFFFF
    if bad_udp:
        uc ^= 0x1234
    udphdr = struct.pack("!HHHH", f.sport, ROCE_PORT, (ulen + udp_len_delta) & 0xFFFF, uc)
    out = f.eth + iphdr + udphdr + body
    return out[:len(out) - trunc] if trunc else out


def bth(op, flags, pkey, qpn, ack, psn):
    return struct.pack("!BBHII", op, flags, pkey, qpn & PSN_MASK, (0x80000000 if ack else 0) | (psn & PSN_MASK))


def ext_headers(op, r, reth=None, atomic=None):
    """The extension headers opcode op carries, with the given or random fields."""
    out = b""
    if op in (0x64, 0x65, 0xA0) or op >= 0x80:
        out += struct.pack("!II", r.getrandbits(32), r.getrandbits(24))  # DETH or XRCETH-ish
    if op in FETH_OPS:
        out += struct.pack("!I", r.choice([0x01, 0x11, 0x02, 0x03, 0x00, 0x21, 0x31, 0x0F, r.getrandbits(32)]))
    if op in RETH_OPS or op == 0x2A:
        out += struct.pack("!QII", *(reth or (r.getrandbits(64), r.getrandbits(32), r.getrandbits(32))))
    if op in ATOMIC_OPS:
        out += struct.pack("!QIQQ", *(atomic or (r.getrandbits(64), r.getrandbits(32), 1, 0)))
    if op in AETH_OPS:
        out += struct.pack("!I", r.choice([0x1F, 0x00, 0x20, 0x60, 0x61, 0x62, 0x63, 0x64, r.getrandbits(8)]) << 24 |
                           r.getrandbits(24))
    if op == 0x12:
        out += struct.pack("!Q", r.getrandbits(64))
    if op in IMM_OPS:
        out += struct.pack("!I", r.getrandbits(32))
    if op in IETH_OPS:
        out += struct.pack("!I", r.getrandbits(32))
    return out


class Fuzzer:
    def __init__(self, a):
        self.ns_a, self.ns_b, self.iface = a[0], a[1], a[2]
        self.r = random.Random(int(a[3]))
        self.until = time.monotonic() + float(a[4])
        self.victim_net, self.wild_net = a[5], a[6]
        self.mr_dev, self.mr_pidfile = a[7].split(":", 1)
        self.mr, self.mr_reads, self.mr_longest = (0, 0, 4096), 0, 0.0
        self.cap = netns_socket(self.ns_b, socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.cap.bind((self.iface, 0))
        self.cap.setblocking(False)
        self.tx = {}
        for ns in (self.ns_a, self.ns_b):
            s = netns_socket(ns, socket.AF_PACKET, socket.SOCK_RAW)
            s.bind((self.iface, 0))
            self.tx[ns] = s
        self.frames = {"victim": [], "wild": [], "mad": []}
        self.latest = {}  # (src, dst) -> newest request PSN seen
        self.counts = {}
        self.stop = False
        self.done = False  # the main loop ended: the MR thread ends too
        self.mine = {}  # hash of each frame this fuzzer sent -> how many
        self.mine_order = collections.deque()
        self.only = set(filter(None, os.environ.get("WIRE_FUZZ_ONLY", "").split(",")))
        self.minimum = {c: int(n) for c, n in
                        (kv.split("=", 1) for kv in filter(None, os.environ.get("WIRE_FUZZ_MIN", "").split(",")))}
        self.drain = float(os.environ.get("WIRE_FUZZ_DRAIN", "0"))

    def classify(self, f):
        if f.qpn == 1:
            return "mad" if f.v6 and f.src.startswith(self.wild_net) else None
        if f.src.startswith(self.victim_net):
            return "victim"
        if f.src.startswith(self.wild_net):
            return "wild"
        return None

    def capture(self):
        # At most CAPTURE_BATCH frames a call, so that sends go on while a
        # transfer streams faster than Python parses (the debug kernel).
        # The socket's queue is short, so the PSN estimates lag little.
        for _ in range(CAPTURE_BATCH):
            try:
                raw, addr = self.cap.recvfrom(65535)
            except BlockingIOError:
                return
            # Its own frames (sent on B's side, or arriving from A's) are
            # not the transfer's: they must not move the PSN estimates.
            h = hash(raw)
            if h in self.mine:
                continue
            # pkttype 4 (PACKET_OUTGOING): B sent it; else B received it.
            try:
                f = Frame(raw)
            except (ValueError, struct.error):
                continue
            f.sender = self.ns_b if addr[2] == socket.PACKET_OUTGOING else self.ns_a
            c = self.classify(f)
            if c is None:
                continue
            if f.opcode not in RESP_OPS and f.qpn != 1:
                k = (f.src, f.dst)
                if k not in self.latest or psn_diff(f.last_psn, self.latest[k]) > 0:
                    self.latest[k] = f.last_psn
            pool = self.frames[c]
            if len(pool) < 4000:
                pool.append(f)
            else:
                pool[self.r.randrange(len(pool))] = f

    def count(self, cls, what):
        k = (cls, what)
        self.counts[k] = self.counts.get(k, 0) + 1

    def send(self, f, frame):
        h = hash(frame)
        self.mine[h] = self.mine.get(h, 0) + 1
        self.mine_order.append(h)
        if len(self.mine_order) > 50000:
            old = self.mine_order.popleft()
            self.mine[old] -= 1
            if not self.mine[old]:
                del self.mine[old]
        try:
            self.tx[f.sender].send(frame)
        except OSError:
            pass

    def req_base(self, f, op):
        """The newest request PSN of the sender of an opcode-op packet on
        f's path: a request is in f.src's space, a response in f.dst's."""
        k = (f.dst, f.src) if op in RESP_OPS else (f.src, f.dst)
        return self.latest.get(k)

    # Victim mutations. DROP ones make a frame every device must discard
    # whatever its PSN, so they carry the live PSN and a changed payload:
    # taken in place of the real packet, they would corrupt the transfer.
    # IGNORE ones may be well-formed, so their PSN is moved where a correct
    # device must not act on it.
    DROP = ["icrc", "udp-csum", "udp-len", "truncate", "pkey", "tver", "no-qp"]
    IGNORE = ["opcode", "bth-flags", "ext-fields", "payload", "ipv4-options", "ipid", "qpn", "replay"]

    def victim(self):
        r = self.r
        f = r.choice(self.frames["victim"])
        op = f.opcode
        flags, pkey, qpn, ack = f.ib[1], struct.unpack("!H", f.ib[2:4])[0], f.qpn, bool(f.ib[8] & 0x80)
        hl = len(ext_headers(f.opcode, random.Random(0)))
        hdr, payload = f.ib[12:12 + hl], f.ib[12 + hl:]
        drop = r.random() < 0.4
        kinds = [k for k in (self.DROP if drop else self.IGNORE) if not self.only or k in self.only]
        if not kinds:
            return
        what = r.choice(kinds)
        kw = {}
        if what == "opcode":
            op = r.choice(REQ_OPS + RESP_OPS + OTHER_OPS)
            hdr = ext_headers(op, r)
        elif what == "bth-flags":
            flags = r.getrandbits(8) & 0xF0  # TVer stays 0
        elif what == "ext-fields":
            hdr = ext_headers(op, r)
        elif what == "payload":
            payload = bytes(r.getrandbits(8) for _ in range(r.choice([0, 1, 3, 4, 63, 64, 1024, 1025])))
        elif what == "ipv4-options" and not f.v6:
            kw["ipopts"] = r.choice([b"\x01\x01\x01\x00", b"\x94\x04\x00\x00", b"\x07\x07\x04" + b"\0" * 5,
                                     b"\x01" * 40])
        elif what == "ipid":
            kw["ipid"] = r.getrandbits(16)
        elif what == "qpn":
            qpn = r.choice([0, 2, 15, 0xFFFFFF, r.getrandbits(24)])
        elif what == "icrc":
            kw["bad_icrc"] = True
        elif what == "udp-csum":
            kw["bad_udp"] = True
        elif what == "udp-len":
            kw["udp_len_delta"] = r.choice([-4, -1, 1, 4, 200])
        elif what == "truncate":
            kw["trunc"] = r.randrange(1, 30)
        elif what == "pkey":
            pkey = r.choice([0x0000, 0x8000, 0x8001, 0x1234, 0x7FFE, 0xFFFE])  # not the default partition
        elif what == "tver":
            flags = (flags & 0xF0) | r.randrange(1, 16)
        elif what == "no-qp":
            qpn = r.randrange(1 << 16, 1 << 24)  # above every QPN sroce gives
        base = self.req_base(f, op)
        if base is None:
            return
        if drop:
            # The live PSN: the next request, an ACK of all sent.
            psn = base if op in RESP_OPS else base + 1
            payload = bytes(b ^ 0x55 for b in payload)
        elif op in RESP_OPS:
            psn = base + r.choice([1, -1]) * r.randrange(1 << 16, 1 << 22)
        elif r.random() < 0.5:
            psn = base - r.randrange(2000, 1 << 22)  # an old duplicate
        else:
            psn = base + r.randrange(1 << 16, 1 << 22)  # far ahead
        ib = bth(op, flags, pkey, qpn, ack, psn) + hdr + payload
        self.send(f, build(f, ib, **kw))
        self.count("victim", what)

    def refresh_mr(self):
        """The wild server's largest MR (its process restarts; so do keys),
        read again every 2 s by a thread: `rdma res` takes seconds in the
        debug guest, and run inline it held up every send behind it."""
        while not self.done:
            t = time.monotonic()
            try:
                pid = open(self.mr_pidfile).read().strip()
                out = subprocess.run(["rdma", "res", "show", "mr", "dev", self.mr_dev, "-dd"],
                                     capture_output=True, text=True, timeout=10).stdout
            except (OSError, subprocess.SubprocessError):
                out = ""
            best = None
            for line in out.splitlines():
                w = line.split()
                kv = dict(zip(w[::2], w[1::2])) if len(w) % 2 == 0 else dict(zip(w[1::2], w[2::2]))
                if kv.get("pid") != pid or "drv_rkey" not in kv:
                    continue
                mr = (int(kv["drv_rkey"], 0), int(kv["drv_iova"], 0), int(kv["mrlen"]))
                if best is None or mr[2] > best[2]:
                    best = mr
            if best:
                self.mr = best  # one reference assignment: the sender sees old or new
            took = time.monotonic() - t
            self.mr_reads, self.mr_longest = self.mr_reads + 1, max(self.mr_longest, took)
            time.sleep(max(0.0, 2 - took))

    def edge_reth(self):
        r = self.r
        key, iova, ln = self.mr
        return r.choice([
            (iova + ln - 1, key, 1), (iova + ln - 1, key, 2), (iova + ln, key, 1), (iova, key, ln),
            (iova, key, ln + 1), ((1 << 64) - 8, key, 16), (iova + ln - 4, key, 0xFFFFFFFF),
            (iova, key, 1 << 31), (iova, key, (1 << 31) - 1), (iova, key, 0), (r.getrandbits(64), key, 0),
            (iova, key ^ 0x100, 64), (iova, (key & ~0xFF) | ((key + 1) & 0xFF), 64), (iova, 0, 64)])

    def edge_atomic(self):
        r = self.r
        key, iova, ln = self.mr
        va = r.choice([iova + 4, iova + 1, iova + ln - 8, iova + ln - 4, iova + ln, (1 << 64) - 4, iova])
        return (va, r.choice([key, key ^ 0x100]), r.getrandbits(64), r.getrandbits(64))

    def wild(self):
        r = self.r
        f = r.choice(self.frames["wild"])
        m = r.randrange(6)
        op = f.opcode
        if m in (0, 1):
            op = r.choice(REQ_OPS + RESP_OPS + OTHER_OPS)  # switched mid-message
        base = self.req_base(f, op)
        if base is None:
            return
        psn = base + (r.randrange(-16, 1) if op in RESP_OPS else r.randrange(-3, 4))
        if m == 5:
            psn = r.choice([base + (1 << 23) - 1, base + (1 << 23), base - (1 << 23), PSN_MASK, 0])
        reth = self.edge_reth() if m in (2, 3) else None
        atomic = self.edge_atomic() if m == 4 else None
        if reth and op not in RETH_OPS:
            op = r.choice(sorted(RETH_OPS))
        if atomic:
            op = r.choice(sorted(ATOMIC_OPS))
        plen = r.choice([0, 1, 8, 256, 1024, 1023, 4096, len(f.ib) - 12])
        payload = (f.ib[12:] * 5)[:plen] if len(f.ib) > 12 else b"\xab" * plen
        ib = (bth(op, r.choice([0, 0x40, 0x30, 0x10 | f.ib[1]]), 0xFFFF, f.qpn, r.random() < 0.5, psn) +
              ext_headers(op, r, reth, atomic) + payload)
        self.send(f, build(f, ib))
        self.count("wild", ["opcode-switch", "opcode-switch", "reth-edge", "reth-edge", "atomic-edge",
                            "psn-wrap"][m])

    def mad(self):
        r = self.r
        # A's MADs, to B, which has no listener: a mutated REQ at A's
        # listener would take the wild server's one connection.
        mads = [f for f in self.frames["mad"] if f.sender == self.ns_a]
        if not mads:
            return
        f = r.choice(mads)
        ib = bytearray(f.ib)
        if r.random() < 0.2:
            ib[20:] = bytes(r.getrandbits(8) for _ in range(256))
            what = "random-mad"
        else:
            for _ in range(r.randrange(1, 9)):
                i = r.randrange(20, len(ib))
                ib[i] = r.getrandbits(8)
            what = "mutated-mad"
        self.send(f, build(f, bytes(ib)))
        self.count("mad", what)

    def sent(self, cls):
        return sum(n for (c, _), n in self.counts.items() if c == cls)

    def on_sigterm(self, *_):
        self.stop = True
        self.stopped_at = time.monotonic()
        self.until = min(self.until, self.stopped_at + self.drain)

    def run(self):
        signal.signal(signal.SIGTERM, self.on_sigterm)
        threading.Thread(target=self.refresh_mr, daemon=True).start()
        classes = ["victim"] * 6 + ["wild"] * 3 + ["mad"]
        while time.monotonic() < self.until:
            if self.stop:
                # Draining: only the classes still short of their minimum.
                classes = [c for c in self.minimum if self.sent(c) < self.minimum[c]]
                if not classes:
                    break
            select.select([self.cap], [], [], 0.002)
            self.capture()
            c = self.r.choice(classes)
            if self.frames[c]:
                getattr(self, c)()
        self.done = True
        total = 0
        for (c, w), n in sorted(self.counts.items()):
            print("sent %s %s %d" % (c, w, n))
            total += n
        print("captured victim %d wild %d mad %d" % tuple(len(self.frames[c]) for c in ("victim", "wild", "mad")))
        print("total %d" % total)
        print("mr reads %d, longest %.1f s" % (self.mr_reads, self.mr_longest))
        if self.stop:
            print("drained %.0f s after SIGTERM" % (time.monotonic() - self.stopped_at))


def main():
    if len(sys.argv) != 9:
        raise SystemExit(__doc__)
    Fuzzer(sys.argv[1:]).run()


if __name__ == "__main__":
    main()

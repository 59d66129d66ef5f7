#!/usr/bin/env python3
"""Crafted RoCEv2 packets at a live sroce QP, from a plain UDP socket bound to
port 4791 in the peer namespace (tests/vm/84-hostile-wire.sh runs it).

The victim is an unmodified ibv_rc_pingpong or ibv_ud_pingpong server: this
script plays its client in the TCP address exchange, declaring a QP number
and PSN of its own, so the victim's QP is in RTS aimed at this socket. The
victim's answers (ACKs, NAKs, its pong) come back to the socket and are
checked against what the IBTA spec says.

  hostile_wire.py rc1|rc2|rc3|rc4|ud VICTIM_IP TCP_PORT MY_IP COUNTS_FILE

The ICRC of packets meant to pass it is computed here (zlib's CRC-32, the
masking of tests/dump/icrc_ref.py). The kernel builds the IPv4 header: with
DF set on an unconnected socket its ID is 0, so the header is predictable.
Prints ok:/FAIL: lines; exits 1 on any failure.
"""
import socket
import struct
import sys
import time
import zlib

ROCE_PORT = 4791
MY_QPN = 0x0000AB
MY_PSN = 0x000100
UD_QKEY = 0x11111111  # ibv_ud_pingpong's
fails = 0


def ok(cond, what):
    global fails
    print(("ok: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        fails += 1


def icrc(src, dst, ib):
    """ICRC of an IPv4/UDP packet carrying `ib` (BTH onwards, ICRC excluded)."""
    udp_len = 8 + len(ib) + 4
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0xFF, 20 + udp_len, 0, 0x4000, 0xFF, 17, 0xFFFF,
                     socket.inet_aton(src), socket.inet_aton(dst))
    udp = struct.pack(">HHHH", ROCE_PORT, ROCE_PORT, udp_len, 0xFFFF)
    ib = bytearray(ib)
    ib[4] = 0xFF  # BTH resv8a
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + ip + udp + bytes(ib)))


def bth(opcode, qpn, psn, ackreq=False, pad=0, se=False):
    return struct.pack(">BBHI I", opcode, (0x80 if se else 0) | (pad << 4), 0xFFFF, qpn & 0xFFFFFF,
                       (0x80000000 if ackreq else 0) | (psn & 0xFFFFFF))


def reth(va, rkey, length):
    return struct.pack(">QII", va, rkey, length)


class Wire:
    def __init__(self, me, victim, counts):
        self.me, self.victim, self.counts = me, victim, counts
        self.s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.s.bind((me, ROCE_PORT))
        # DF on, so the kernel writes IP ID 0 (part of the ICRC).
        self.s.setsockopt(socket.IPPROTO_IP, 10, 2)  # IP_MTU_DISCOVER = IP_PMTUDISC_DO

    def send(self, ib, good_icrc=True):
        crc = icrc(self.me, self.victim, ib)
        if not good_icrc:
            crc = bytes([crc[0] ^ 0x01]) + crc[1:]
        self.s.sendto(ib + crc, (self.victim, ROCE_PORT))

    def send_raw(self, data):
        self.s.sendto(data, (self.victim, ROCE_PORT))

    def collect(self, seconds, until=None):
        """Every packet for our QPN within `seconds` (or until one
        satisfies `until`): (opcode, psn, rest)."""
        out, end = [], time.time() + seconds
        while not (until and out and until(out[-1])):
            left = end - time.time()
            if left <= 0:
                return out
            self.s.settimeout(left)
            try:
                data, _ = self.s.recvfrom(65536)
            except socket.timeout:
                return out
            if len(data) < 16:
                continue
            op, qpn, psn = data[0], struct.unpack(">I", data[4:8])[0] & 0xFFFFFF, \
                struct.unpack(">I", data[8:12])[0] & 0xFFFFFF
            if qpn == MY_QPN:
                out.append((op, psn, data[12:]))
        return out

    def count(self, name):
        with open(self.counts) as f:
            for line in f:
                k, v = line.split()
                if k == name:
                    return int(v)
        raise KeyError(name)


def exchange(victim, port):
    """Plays ibv_*_pingpong's client in the TCP exchange; returns the
    victim's (qpn, psn) and the open socket (closed by the caller)."""
    gid = socket.inet_aton(sys.argv[4])
    wire_gid = "00000000000000000000ffff" + gid.hex()
    msg = ("%04x:%06x:%06x:%s" % (0, MY_QPN, MY_PSN, wire_gid)).encode() + b"\0"
    for _ in range(100):
        try:
            t = socket.create_connection((victim, port), timeout=10)
            break
        except OSError:
            time.sleep(0.2)
    t.sendall(msg)
    got = b""
    while len(got) < len(msg):
        chunk = t.recv(len(msg) - len(got))
        if not chunk:
            break
        got += chunk
    lid, qpn, psn, _ = got.rstrip(b"\0").decode().split(":")
    t.sendall(b"done\0")
    return int(qpn, 16), int(psn, 16), t


def aeth_of(pkt):
    return pkt[2][0] if len(pkt[2]) >= 4 else None


def acks(pkts):
    return [(p[1], aeth_of(p)) for p in pkts if p[0] == 0x11]


def rc1(w, vqpn, vpsn):
    psn = MY_PSN
    send64 = bth(0x04, vqpn, psn, ackreq=True) + bytes(range(64))

    # Dropped before any QP sees them, each counted by reason.
    c0 = w.count("rx_icrc_errors")
    w.send(send64, good_icrc=False)
    ok(w.collect(1.0) == [], "bad ICRC: no answer")
    ok(w.count("rx_icrc_errors") == c0 + 1, "bad ICRC: rx_icrc_errors +1")

    h0 = w.count("rx_bad_header") + w.count("rx_short")
    w.send_raw(send64[:6])
    ok(w.collect(1.0) == [], "truncated BTH: no answer")
    ok(w.count("rx_bad_header") + w.count("rx_short") == h0 + 1, "truncated BTH: counted")

    h0 = w.count("rx_bad_header")
    w.send(bth(0x1F, vqpn, psn, ackreq=True) + bytes(64))
    ok(w.collect(1.0) == [], "reserved opcode 0x1f (good ICRC): no answer")
    ok(w.count("rx_bad_header") == h0 + 1, "reserved opcode: rx_bad_header +1")

    q0 = w.count("rx_bad_qpn")
    w.send(bth(0x04, 0xFFFFF0, psn, ackreq=True) + bytes(64))
    ok(w.collect(1.0) == [], "unknown QPN: no answer")
    ok(w.count("rx_bad_qpn") == q0 + 1, "unknown QPN: rx_bad_qpn +1")

    # To the victim's requester, which has sent nothing: ignored.
    w.send(bth(0x10, vqpn, vpsn) + struct.pack(">I", 0x1F000001) + bytes(64))
    ok(w.collect(1.0) == [], "READ response without a request: no answer")
    w.send(bth(0x11, vqpn, (vpsn + 1000) & 0xFFFFFF) + struct.pack(">I", 0x1F000001))
    ok(w.collect(1.0) == [], "ACK of a PSN never sent: no answer")

    # Far ahead of the expected PSN: one sequence NAK carrying the expected
    # PSN, not one per packet.
    far = bth(0x04, vqpn, psn + 0x400000, ackreq=True) + bytes(64)
    w.send(far)
    w.send(far)
    a = acks(w.collect(1.5))
    ok(a == [(psn, 0x60)], "PSN far out of window: one NAK PSN sequence error at the expected PSN "
       "(got %s)" % [(hex(p), hex(s) if s is not None else None) for p, s in a])

    # A good SEND: ACKed, and the pingpong answers with its pong, which is
    # ACKed at once (its QP retries every 67 ms, 7 times).
    w.send(bth(0x04, vqpn, psn, ackreq=True) + bytes(range(64)))
    pk = w.collect(2.0, until=lambda p: p[0] == 0x04)
    pong = [p for p in pk if p[0] == 0x04]
    # Before our ACK is handled a tail-loss probe may resend the pong (a
    # slow kernel, this script late to answer), and a probe sent just before
    # may still be on its way. So the ACK is followed by a repeat of the
    # good SEND: the victim answers a duplicate with an ACK of its own,
    # after it has handled ours, and from that answer on no pong may come.
    settle, after = [], []
    if pong:
        w.send(bth(0x11, vqpn, vpsn) + struct.pack(">I", 0x1F000001))
        w.send(bth(0x04, vqpn, psn, ackreq=True) + bytes(range(64)))
        end = time.time() + 2.0
        while len([x for x in acks(pk + settle) if x[0] == psn]) < 2 and time.time() < end:
            settle += w.collect(end - time.time(), until=lambda p: p[0] == 0x11 and p[1] == psn)
        after = w.collect(0.7)
    pk += settle + after
    a = acks(pk)
    ok(any(p == psn and s is not None and s < 0x20 for p, s in a), "good SEND: ACKed (got %s)" % a)
    ok(len(pong) >= 1 and pong[0][1] == vpsn, "the victim's pong SEND arrived with its first PSN")
    ok(len([x for x in acks(pk) if x[0] == psn]) >= 2, "the repeated SEND: ACKed again")
    ok(not [p for p in after if p[0] == 0x04], "the pong was not retransmitted once ACKed")
    psn += 1

    # A payload larger than the path MTU (1024) in one packet: invalid request.
    w.send(bth(0x04, vqpn, psn, ackreq=True) + bytes(2048))
    a = acks(w.collect(1.5))
    ok(a == [(psn, 0x61)], "2048 B SEND_ONLY at path MTU 1024: NAK invalid request (got %s)" %
       [(hex(p), hex(s) if s is not None else None) for p, s in a])


def rc2(w, vqpn, vpsn):
    # The pingpong's QP grants no remote access: even a zero-length WRITE
    # (whose R_Key C9-88 says not to check) is refused, as rdma_rxe does.
    w.send(bth(0x0A, vqpn, MY_PSN, ackreq=True) + reth(0, 0xDEADBEEF, 0))
    a = acks(w.collect(1.5))
    ok(a == [(MY_PSN, 0x62)], "zero-length WRITE to a QP without remote write: NAK remote access (got %s)" %
       [(hex(p), hex(s) if s is not None else None) for p, s in a])


def rc3(w, vqpn, vpsn):
    w.send(bth(0x0A, vqpn, MY_PSN, ackreq=True) + reth(0x1000, 0xDEADBEEF, 16) + bytes(16))
    a = acks(w.collect(1.5))
    ok(a == [(MY_PSN, 0x62)], "WRITE with an invalid rkey: NAK remote access (got %s)" %
       [(hex(p), hex(s) if s is not None else None) for p, s in a])


def rc4(w, vqpn, vpsn):
    w.send(bth(0x0C, vqpn, MY_PSN, ackreq=True) + reth(0, 0x12345678, 0x80000000))
    pk = w.collect(1.5)
    a = acks(pk)
    ok(len(a) == 1 and a[0][0] == MY_PSN and a[0][1] in (0x61, 0x62) and
       not [p for p in pk if 0x0D <= p[0] <= 0x10],
       "READ request for 2 GiB with an invalid rkey: one NAK, no data (got %s)" %
       [(hex(p), hex(s) if s is not None else None) for p, s in a])


def ud(w, vqpn, vpsn):
    def ud_send(qkey, payload=bytes(range(64))):
        deth = struct.pack(">II", qkey, MY_QPN)
        w.send(bth(0x64, vqpn, 0) + deth + payload)

    ud_send(0xDEADBEEF)
    ok([p for p in w.collect(1.5) if p[0] == 0x64] == [], "UD SEND with a wrong Q_Key: dropped (no pong)")
    # One jumbo frame (veth MTU 9000) with more payload than any IB MTU:
    # taken, it would complete the victim's 104-byte receive in error.
    h0 = w.count("rx_bad_header")
    ud_send(UD_QKEY, bytes(5000))
    ok([p for p in w.collect(1.5) if p[0] == 0x64] == [], "UD SEND of 5000 bytes, above every IB MTU: dropped")
    ok(w.count("rx_bad_header") == h0 + 1, "UD SEND of 5000 bytes: rx_bad_header +1")
    ud_send(UD_QKEY)
    pong = [p for p in w.collect(3.0) if p[0] == 0x64]
    ok(len(pong) == 1 and pong[0][2][:4] == struct.pack(">I", UD_QKEY),
       "UD SEND with the right Q_Key: the victim's pong arrived")


def main():
    mode, victim, port, me, counts = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    w = Wire(me, victim, counts)
    vqpn, vpsn, t = exchange(victim, port)
    print("victim QPN 0x%06x PSN 0x%06x" % (vqpn, vpsn), flush=True)
    time.sleep(0.5)  # the victim reaches RTS after answering
    {"rc1": rc1, "rc2": rc2, "rc3": rc3, "rc4": rc4, "ud": ud}[mode](w, vqpn, vpsn)
    t.close()
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()

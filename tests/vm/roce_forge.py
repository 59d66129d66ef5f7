#!/usr/bin/env python3
"""Forged RoCEv2 packets with a correct ICRC, from a plain UDP socket (no
privilege needed): tests/vm/89-loopback-trust.sh and 83-offpath.sh.

  roce_forge.py exchange TCP_ADDR TCP_PORT GID_ADDR
      plays an ibv_rc_pingpong client in the TCP exchange, declaring QPN
      0xab, PSN 0x100 and GID_ADDR (IPv4 or IPv6) as its GID; prints the
      server's "QPN PSN" (hex)
  roce_forge.py send SRC DST QPN PSN KIND [key=value...]
      sends one packet from SRC (bound, any port) to DST:4791, KIND one of
        send   RC SEND_ONLY, AckReq, 64 bytes of 0xee
        write  RC RDMA WRITE_ONLY, AckReq, 64 bytes of 0xee (va=, rkey=)
        ud     UD SEND_ONLY, 64 bytes of 0xee (qkey=, default 0x11111111;
               srcqp=, default 1); DST may be a broadcast or multicast
               address
        read   RC RDMA READ request (va=, rkey=, len=)
        ack    RC ACKNOWLEDGE (AETH ACK, msn=)
        nak    RC ACKNOWLEDGE with a NAK syndrome (syn=, default 0x60)
      pkey=0x1234 sets the BTH P_Key (default 0xffff)

The kernel writes the IP header; the ICRC covers it masked (TOS/TTL/checksum,
IPv6 traffic class, flow label, hop limit) and the UDP header but its
checksum, so it is computed for the source port the socket got and IP ID 0
(DF set on an unconnected socket). zlib's CRC-32; no code shared with the
core.
"""
import socket
import struct
import sys
import time
import zlib

ROCE_PORT = 4791
MY_QPN = 0x0000AB
MY_PSN = 0x000100


def v6(addr):
    return ":" in addr


def icrc(src, dst, sport, ib):
    udp_len = 8 + len(ib) + 4
    udp = struct.pack(">HHHH", sport, ROCE_PORT, udp_len, 0xFFFF)
    if v6(src):
        ip = struct.pack(">IHBB16s16s", 0x6FFFFFFF, udp_len, 17, 0xFF,
                         socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst))
    else:
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0xFF, 20 + udp_len, 0, 0x4000, 0xFF, 17, 0xFFFF,
                         socket.inet_aton(src), socket.inet_aton(dst))
    ib = bytearray(ib)
    ib[4] = 0xFF  # BTH resv8a
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + ip + udp + bytes(ib)))


def bth(opcode, qpn, psn, pkey=0xFFFF, ackreq=False):
    return struct.pack(">BBHII", opcode, 0, pkey, qpn & 0xFFFFFF, (0x80000000 if ackreq else 0) | (psn & 0xFFFFFF))


def reth(va, rkey, length):
    return struct.pack(">QII", va, rkey, length)


def aeth(syn, msn):
    return struct.pack(">I", (syn << 24) | (msn & 0xFFFFFF))


def build(kind, qpn, psn, kv):
    pkey = int(kv.get("pkey", "0xffff"), 0)
    data = b"\xee" * 64
    if kind == "send":
        return bth(0x04, qpn, psn, pkey, True) + data
    if kind == "write":
        return bth(0x0A, qpn, psn, pkey, True) + reth(int(kv["va"], 0), int(kv["rkey"], 0), len(data)) + data
    if kind == "read":
        return bth(0x0C, qpn, psn, pkey, True) + reth(int(kv["va"], 0), int(kv["rkey"], 0), int(kv.get("len", "64"), 0))
    if kind == "ud":  # UD SEND_ONLY: BTH, DETH (Q_Key, source QP)
        deth = struct.pack(">II", int(kv.get("qkey", "0x11111111"), 0), int(kv.get("srcqp", "1"), 0) & 0xFFFFFF)
        return bth(0x64, qpn, psn, pkey) + deth + data
    if kind == "ack":
        return bth(0x11, qpn, psn, pkey) + aeth(0x1F, int(kv.get("msn", "0"), 0))
    if kind == "nak":
        return bth(0x11, qpn, psn, pkey) + aeth(int(kv.get("syn", "0x60"), 0), int(kv.get("msn", "0"), 0))
    raise SystemExit("unknown kind " + kind)


def send(src, dst, qpn, psn, kind, kv):
    fam = socket.AF_INET6 if v6(src) else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((src, 0))
    if fam == socket.AF_INET:
        s.setsockopt(socket.IPPROTO_IP, 10, 2)  # IP_MTU_DISCOVER = IP_PMTUDISC_DO: DF, IP ID 0
        s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)  # any user may
    ib = build(kind, qpn, psn, kv)
    s.sendto(ib + icrc(src, dst, s.getsockname()[1], ib), (dst, ROCE_PORT))
    s.close()


def exchange(addr, port, gid_addr):
    if v6(gid_addr):
        gid = socket.inet_pton(socket.AF_INET6, gid_addr)
    else:
        gid = b"\0" * 10 + b"\xff\xff" + socket.inet_aton(gid_addr)
    msg = ("%04x:%06x:%06x:%s" % (0, MY_QPN, MY_PSN, gid.hex())).encode() + b"\0"
    for _ in range(100):
        try:
            t = socket.create_connection((addr, port), timeout=10)
            break
        except OSError:
            time.sleep(0.2)
    else:
        raise SystemExit("no pingpong server at %s:%d" % (addr, port))
    t.sendall(msg)
    got = b""
    while len(got) < len(msg):
        chunk = t.recv(len(msg) - len(got))
        if not chunk:
            break
        got += chunk
    _, qpn, psn, _ = got.rstrip(b"\0").decode().split(":")
    t.sendall(b"done\0")
    t.close()
    print(qpn, psn)


def main():
    a = sys.argv[1:]
    if a and a[0] == "exchange" and len(a) == 4:
        exchange(a[1], int(a[2]), a[3])
    elif a and a[0] == "send" and len(a) >= 6:
        kv = dict(x.split("=", 1) for x in a[6:])
        send(a[1], a[2], int(a[3], 0), int(a[4], 0), a[5], kv)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Sends COUNT hand-built RoCEv2 packets (IPv4, RC SEND_ONLY with 16 bytes)
from SRC to DST over a raw IP socket: `good` with a correct ICRC, `badicrc`
with the ICRC's last byte flipped. Usage: roce_inject.py SRC DST QPN COUNT MODE
The ICRC is computed here with zlib (no code shared with the core)."""
import socket
import struct
import sys
import zlib


def checksum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def packet(src, dst, qpn, psn, bad):
    payload = bytes(range(16))
    bth = struct.pack("!BBHII", 0x04, 0, 0xFFFF, qpn & 0xFFFFFF, psn & 0xFFFFFF)
    udp_len = 8 + len(bth) + len(payload) + 4
    total = 20 + udp_len
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0x1234, 0x4000, 64, 17, 0,
                     socket.inet_aton(src), socket.inet_aton(dst))
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    udp = struct.pack("!HHHH", 49152, 4791, udp_len, 0)
    body = bytearray(ip + udp + bth + payload)
    masked = bytearray(body)
    masked[1] = 0xFF                  # TOS
    masked[8] = 0xFF                  # TTL
    masked[10:12] = b"\xff\xff"       # IP checksum
    masked[26:28] = b"\xff\xff"       # UDP checksum
    masked[32] = 0xFF                 # BTH resv8a
    icrc = bytearray(struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(masked))))
    if bad:
        icrc[3] ^= 0x01
    return bytes(body + icrc)


def main():
    src, dst, qpn, count, mode = sys.argv[1], sys.argv[2], int(sys.argv[3], 0), int(sys.argv[4]), sys.argv[5]
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    for i in range(count):
        s.sendto(packet(src, dst, qpn, i, mode == "badicrc"), (dst, 0))


if __name__ == "__main__":
    main()

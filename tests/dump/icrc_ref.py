#!/usr/bin/env python3
"""Independent RoCEv2 ICRC check of the frames of a pcap (Ethernet, VLAN
tags skipped), with zlib's CRC-32: prints "N ok|BAD|skip" per frame. It
shares no code with the core codec, so it validates the masking and byte
order on its own."""
import struct
import sys
import zlib


def frames(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    assert magic in (0xA1B2C3D4, 0xA1B23C4D), "little-endian pcap expected"
    off = 24
    while off + 16 <= len(data):
        _, _, incl, orig = struct.unpack("<IIII", data[off:off + 16])
        yield data[off + 16:off + 16 + incl], orig
        off += 16 + incl


def icrc_ok(frame):
    ip = frame[14:]
    if frame[12:14] == b"\x08\x00":
        ihl = (ip[0] & 15) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        ip = bytearray(ip[:total])
        ip[1] = 0xFF          # TOS
        ip[8] = 0xFF          # TTL
        ip[10:12] = b"\xff\xff"  # header checksum
        hl = ihl
    else:
        plen = struct.unpack(">H", ip[4:6])[0]
        ip = bytearray(ip[:40 + plen])
        ip[0] |= 0x0F
        ip[1:4] = b"\xff\xff\xff"  # traffic class, flow label
        ip[7] = 0xFF           # hop limit
        hl = 40
    ip[hl + 6:hl + 8] = b"\xff\xff"  # UDP checksum
    ip[hl + 8 + 4] = 0xFF            # BTH resv8a
    crc = zlib.crc32(b"\xff" * 8 + bytes(ip[:-4]))
    return struct.pack("<I", crc) == bytes(ip[-4:])


def untagged(frame):
    """The frame without its VLAN tags (802.1Q, 802.1ad), which the ICRC
    does not cover."""
    while frame[12:14] in (b"\x81\x00", b"\x88\xa8"):
        frame = frame[:12] + frame[16:]
    return frame


for n, (frame, orig) in enumerate(frames(sys.argv[1]), 1):
    orig -= len(frame) - len(untagged(frame))
    frame = untagged(frame)
    if len(frame) != orig or frame[12:14] not in (b"\x08\x00", b"\x86\xdd"):
        print(n, "skip")
        continue
    try:
        print(n, "ok" if icrc_ok(frame) else "BAD")
    except (IndexError, struct.error):
        print(n, "skip")

#!/usr/bin/env python3
"""ibv_rc_pingpong's server side of the TCP exchange, with no QP behind it.

standin_server.py ADDR PORT QPN GID_HEX: accepts one client on ADDR:PORT,
reads its "LID:QPN:PSN:GID" message and answers with QPN (hex) and GID_HEX
(32 hex digits), so that the client sends RC requests to a QPN that nobody
serves and retransmits them until its retries run out: a retransmission a
capture can show on demand.
"""
import socket
import sys

addr, port, qpn, gid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3], 16), sys.argv[4]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((addr, port))
s.listen(1)
s.settimeout(30)
c, _ = s.accept()
c.recv(52)
c.sendall(b"0000:%06x:000064:%s\0" % (qpn, gid.encode()))
c.recv(16)
c.close()

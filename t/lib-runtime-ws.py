#!/usr/bin/env python3
"""A hostile client of the runtime's exec-interactive channel.

Documentation/gosbx-runtime.txt, "Interactive commands"; RFC 6455 framing
written by hand so that it can break the rules on purpose.

  lib-runtime-ws.py <url> channel <n> <command>
	start <command>, send a message on channel <n>, print the close
  lib-runtime-ws.py <url> control <json> <command>
	start <command>, send <json> on the control channel, print the close
  lib-runtime-ws.py <url> huge <mib> <command>
	start <command>, announce one stdin frame of <mib> MiB and send it
  lib-runtime-ws.py <url> fragments <mib> <command>
	the same in 64 KiB continuation frames of one message
  lib-runtime-ws.py <url> noread <seconds> <command>
	start <command>, never read for <seconds>, then close

Prints "close <code> <reason>" when the server closes the channel, or
"reset" when it drops the connection, and "sent <bytes>" where it sends.
"""
import base64
import json
import os
import select
import socket
import struct
import sys
import time
from urllib.parse import urlparse


def connect(url, rcvbuf=None):
    u = urlparse(url)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect((u.hostname, u.port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(("GET /v1/exec HTTP/1.1\r\nHost: %s\r\n"
                  "Connection: Upgrade\r\nUpgrade: websocket\r\n"
                  "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: %s\r\n"
                  "Sec-WebSocket-Protocol: gosbx.exec.v1\r\n\r\n"
                  % (u.netloc, key)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        c = sock.recv(1)
        if not c:
            sys.exit("no handshake answer")
        head += c
    if not head.startswith(b"HTTP/1.1 101"):
        sys.exit("handshake: " + head.decode(errors="replace"))
    return sock


def header(opcode, length, fin=True):
    b0 = (0x80 if fin else 0) | opcode
    if length < 126:
        h = struct.pack("!BB", b0, 0x80 | length)
    elif length < 65536:
        h = struct.pack("!BBH", b0, 0x80 | 126, length)
    else:
        h = struct.pack("!BBQ", b0, 0x80 | 127, length)
    return h + b"\0\0\0\0"  # a zero mask: the payload goes as is


def send_msg(sock, payload, opcode=2):
    sock.sendall(header(opcode, len(payload)) + payload)


def start(sock, command):
    body = json.dumps({"type": "start", "command": command}).encode()
    send_msg(sock, b"\x04" + body)


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        c = sock.recv(n - len(buf))
        if not c:
            raise ConnectionResetError
        buf += c
    return buf


def read_close(sock, timeout=30):
    """Read messages until a close frame: print its code and reason."""
    sock.settimeout(timeout)
    try:
        while True:
            b0, b1 = recv_exact(sock, 2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", recv_exact(sock, 2))[0]
            elif n == 127:
                n = struct.unpack("!Q", recv_exact(sock, 8))[0]
            payload = recv_exact(sock, n)
            if b0 & 0x0F == 8:
                code = struct.unpack("!H", payload[:2])[0] if n >= 2 else 0
                print("close %d %s" % (code, payload[2:].decode()))
                return
    except (ConnectionResetError, BrokenPipeError, socket.timeout):
        print("reset")


def send_huge(sock, mib, fragments):
    """Send until all is sent or the server answers (its close)."""
    total = mib << 20
    chunk = b"\0" * (64 << 10)
    sent = 0
    pending = b""
    first = True
    sock.setblocking(False)
    try:
        if not fragments:
            pending = header(2, total + 1) + b"\0"
        while sent < total or pending:
            if not pending:
                if fragments:
                    last = sent + len(chunk) >= total
                    if first:
                        pending = header(2, len(chunk) + 1, last) + b"\0"
                        first = False
                    else:
                        pending = header(0, len(chunk), last)
                pending += chunk
                sent += len(chunk)
            rd, wr, _ = select.select([sock], [sock], [], 60)
            if rd or not wr:
                break
            n = sock.send(pending)
            pending = pending[n:]
    except (ConnectionResetError, BrokenPipeError):
        pass
    sock.setblocking(True)
    print("sent %d MiB" % (sent >> 20))
    sys.stdout.flush()


def main():
    url, mode, arg, command = sys.argv[1:5]
    if mode == "noread":
        sock = connect(url, rcvbuf=4096)
        start(sock, command)
        print("started")
        sys.stdout.flush()
        time.sleep(float(arg))
        sock.close()
        return
    sock = connect(url)
    start(sock, command)
    if mode == "channel":
        send_msg(sock, bytes([int(arg)]) + b"hello")
    elif mode == "control":
        send_msg(sock, b"\x04" + arg.encode())
    elif mode in ("huge", "fragments"):
        sock.settimeout(60)
        send_huge(sock, int(arg), mode == "fragments")
    read_close(sock)


main()

# A hostile sandboxd for the tests of the gRPC client's bounds (t2046):
# a REST listener whose GET /v1/health says ok (so that the url backend
# opens it), and a gRPC listener that speaks just enough HTTP/2 by hand
# (RFC 9113 frames, an RFC 7541 header block of indexed and literal
# fields) to answer the first call of each connection badly:
#
#   python3 hostile-grpc.py <rest port file> <grpc port file> <mode>
#
#   huge       a gRPC message prefix of 4 GiB - 1, then nothing
#   nostatus   HEADERS 200 application/grpc with END_STREAM: no
#              grpc-status
#   stall      SETTINGS, then nothing until the client hangs up
#
# Both listen on 127.0.0.1, free ports written to the files.
import socket, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

rest_file, grpc_file, mode = sys.argv[1:4]


class Health(BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'{"status":"ok"}'
        self.send_response(200 if self.path == "/v1/health" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def frame(ftype, flags, stream, payload=b""):
    return (len(payload).to_bytes(3, "big") + bytes([ftype, flags]) +
            stream.to_bytes(4, "big") + payload)


def read_frames(conn, buf):
    """Read until a HEADERS frame of the client; the rest stays in buf."""
    while True:
        if buf.startswith(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"):
            del buf[:24]
        while len(buf) >= 9:
            n = int.from_bytes(buf[0:3], "big")
            if len(buf) < 9 + n:
                break
            ftype = buf[3]
            del buf[:9 + n]
            if ftype == 1:
                return True
        data = conn.recv(65536)
        if not data:
            return False
        buf.extend(data)


def serve(conn):
    buf = bytearray()
    conn.sendall(frame(4, 0, 0) + frame(4, 1, 0))  # SETTINGS, ACK
    if mode == "stall" or not read_frames(conn, buf):
        while conn.recv(65536):
            pass
        return
    # :status 200 (static index 8); content-type (index 31), literal
    hdrs = b"\x88\x0f\x10\x10application/grpc"
    if mode == "nostatus":
        conn.sendall(frame(1, 0x4 | 0x1, 1, hdrs))
    else:  # huge
        conn.sendall(frame(1, 0x4, 1, hdrs) +
                     frame(0, 0, 1, b"\x00\xff\xff\xff\xff\x00\x00"))
    while conn.recv(65536):
        pass


def grpc_loop(sock):
    while True:
        conn, _ = sock.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


rest = ThreadingHTTPServer(("127.0.0.1", 0), Health)
grpc = socket.socket()
grpc.bind(("127.0.0.1", 0))
grpc.listen(8)
threading.Thread(target=grpc_loop, args=(grpc,), daemon=True).start()
with open(grpc_file + ".tmp", "w") as f:
    f.write(str(grpc.getsockname()[1]))
with open(rest_file, "w") as f:
    f.write(str(rest.server_address[1]))
import os
os.rename(grpc_file + ".tmp", grpc_file)
rest.serve_forever()

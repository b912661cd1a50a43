# A hostile runtime server for the tests of the client's bounds
# (t7040): it speaks enough of Documentation/protocol/runtime-api.md to be opened, then
# answers some commands with bodies that never end.
#
#   python3 hostile-runtime.py <port file> <log file> [--stream]
#                                                       [--archive]
#
# Listens on 127.0.0.1 (a free port, written to <port file>). GET /
# lists the features exec-options and exec-stream with --stream (so the
# client uses POST /v1/exec), none without (POST /execute, the upstream
# shape). The command decides the answer:
#   flood-json   200, a JSON object whose "stdout" string never ends
#   flood-line   200, a /v1/exec event line that never ends
#   flood-error  500, an error body that never ends
#   bad-line     200, a /v1/exec line that is not JSON
#   anything else: an honest answer, stdout "<command>\n", exit 0
# GET /download/<path> sends a file that never ends. With --archive
# (feature "archive"), GET /v1/archive?path=flood sends a tar entry of a
# 1 TiB file whose data never ends, and ?path=stall the start of one,
# then nothing until the client hangs up.
#
# "Never ends" is LIMIT bytes (1 GiB): then the connection is closed.
# Each answer appends "<what> sent=<bytes>" to the log file when it
# ends, so that a test sees how much the client read before it hung up.
import io, json, os, sys, tarfile, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LIMIT = 1 << 30
CHUNK = 1 << 20
port_file, log_file = sys.argv[1], sys.argv[2]
stream = "--stream" in sys.argv[3:]
archive = "--archive" in sys.argv[3:]
log_lock = threading.Lock()


def log(line):
    with log_lock:
        with open(log_file, "a") as f:
            f.write(line + "\n")


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # the body ends when we close

    def log_message(self, *args):
        pass

    def start(self, status, ctype):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.end_headers()

    def flood(self, what, head, fill):
        sent = 0
        block = (fill * (CHUNK // len(fill) + 1))[:CHUNK]
        try:
            self.wfile.write(head)
            sent = len(head)
            while sent < LIMIT:
                self.wfile.write(block)
                sent += len(block)
        except OSError:
            pass  # the client hung up: what we want
        log("%s sent=%d" % (what, sent))
        self.close_connection = True

    def honest(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/":
            feats = ["exec-options", "exec-stream"] if stream else []
            feats += ["archive"] if archive else []
            self.honest({"status": "ok", "server": "hostile",
                         "features": feats})
        elif archive and self.path.startswith("/v1/archive?path="):
            name = self.path.split("=", 1)[1]
            ti = tarfile.TarInfo(name)
            ti.size = 1 << 40
            head = ti.tobuf(format=tarfile.PAX_FORMAT)
            self.start(200, "application/x-tar")
            if name == "stall":
                self.wfile.write(head + b"s" * CHUNK)
                self.wfile.flush()
                log("stall sent")
                self.rfile.read(1)  # until the client hangs up
                log("stall ended")
                self.close_connection = True
            else:
                self.flood("archive", head, b"\0")
        elif self.path.startswith("/download/"):
            self.start(200, "application/octet-stream")
            self.flood("download", b"", b"d")
        else:
            self.send_error(404)

    def do_DELETE(self):
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(n) or b"{}")
        cmd = body.get("command", "")
        if cmd == "flood-json":
            self.start(200, "application/json")
            self.flood("json", b'{"exit_code":0,"stdout":"', b"x")
        elif cmd == "flood-line":
            self.start(200, "application/x-ndjson")
            self.flood("line", b'{"type":"stdout","data":"', b"y")
        elif cmd == "flood-error":
            self.start(500, "text/plain")
            self.flood("error", b"", b"boom ")
        elif cmd == "bad-line" and self.path == "/v1/exec":
            self.start(200, "application/x-ndjson")
            self.wfile.write(b"this is not an event\n")
            log("bad-line sent")
        elif self.path == "/v1/exec":
            self.start(200, "application/x-ndjson")
            ev = [{"type": "stdout", "data": cmd + "\n"},
                  {"type": "exit", "exit_code": 0, "reason": "exited"}]
            self.wfile.write("".join(json.dumps(e) + "\n"
                                     for e in ev).encode())
        else:
            self.honest({"exit_code": 0, "stdout": cmd + "\n",
                         "stderr": ""})


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.daemon_threads = True
with open(port_file + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.rename(port_file + ".tmp", port_file)
srv.serve_forever()

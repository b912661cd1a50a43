"""stdin-chunks.py <runtime url> <exec|job> <n>: feed `cat` n chunks of
stdin, each POST on a connection of its own and sent as soon as the last
one was answered (as a client behind a router does: there every request
has its own connection), then EOF; every chunk must be taken (204, never
409 "another stdin request ... is in progress") and the output must be
all of them, in order. exec: POST /v1/exec with stdin_stream and
POST /v1/exec/<id>/stdin (feature exec-input); job: POST /v1/jobs and
POST /v1/jobs/<id>/stdin (feature jobs). Prints "ok <n>"; a failure is
an AssertionError (exit 1)."""
import base64
import http.client
import json
import sys
import threading
import urllib.parse

u = urllib.parse.urlsplit(sys.argv[1])
mode, n = sys.argv[2], int(sys.argv[3])
out = []


def conn():
    return http.client.HTTPConnection(u.hostname, u.port, timeout=60)


def request(method, path, body=b"", ctype="application/octet-stream",
            headers=None):
    c = conn()
    c.request(method, path, body, dict({"Content-Type": ctype},
                                       **(headers or {})))
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def stream():
    c = conn()
    c.request("POST", "/v1/exec",
              json.dumps({"command": "cat", "stdin_stream": True}),
              {"Content-Type": "application/json",
               "X-Request-ID": "stdin-chunks"})
    out.append(c.getresponse().read())


def text(ndjson):
    d = b""
    for line in ndjson.decode().splitlines():
        e = json.loads(line)
        if e.get("type") == "stdout":
            d += e["data"].encode() if "data" in e else \
                base64.b64decode(e["b64"])
    return d.decode()


if mode == "exec":
    # daemon: a failed assertion must not wait for cat to end
    t = threading.Thread(target=stream, daemon=True)
    t.start()
    path = "/v1/exec/stdin-chunks/stdin"
else:
    st, body = request("POST", "/v1/jobs", json.dumps({"command": "cat"}),
                       "application/json")
    assert st == 201, (st, body)
    job = json.loads(body)["id"]
    path = "/v1/jobs/%s/stdin" % job

i = 0
while i < n:
    st, body = request("POST", path, ("%d\n" % i).encode())
    if st == 404 and i == 0 and mode == "exec":
        continue  # the command is not registered yet
    assert st == 204, "chunk %d: %d %s" % (i, st, body[:200])
    i += 1
st, body = request("POST", path + "?eof=1")
assert st == 204, (st, body)
if mode == "exec":
    t.join(60)
    got = text(out[0])
else:
    st, body = request("GET", "/v1/jobs/%s/wait?timeout_ms=60000" % job)
    assert st == 200, (st, body)
    st, body = request("GET", "/v1/jobs/%s/output" % job)
    assert st == 200, (st, body)
    got = text(body)
assert got == "".join("%d\n" % i for i in range(n)), got[-200:]
print("ok", n)

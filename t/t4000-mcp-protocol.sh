#!/bin/sh
test_description='gosbx mcp: the MCP protocol over stdio

Raw JSON-RPC lines against test-mcp-server (the protocol core with a
test toolset: echo, sleep with progress, log, fail, bad, pad00..pad11)
and against gosbx mcp itself: the handshake of every revision,
2026-07-28 without one, errors, ping, pagination, cancellation,
progress, logging, batches, malformed input, stdout only for frames.'
. "$(dirname "$0")"/test-lib.sh

if ! command -v python3 >/dev/null 2>&1; then
	test_skip_all "python3 is needed"
fi

# mcpio.py: a line-level client. Each test writes a python script that
# uses S (a server process): S.send(obj or raw text), S.recv() (next
# message, 60 s at most), S.until(id) (notifications before the answer
# with that id, and the answer), S.close() (EOF, then the exit status).
cat >mcpio.py <<\EOF
import json, os, select, signal, subprocess, sys, time
V = "io.modelcontextprotocol/protocolVersion"
C = "io.modelcontextprotocol/clientCapabilities"
def meta(**kw):
    m = {V: "2026-07-28", C: {}}
    m.update(kw)
    return m
class S:
    def __init__(self, argv=None, err="server.err"):
        argv = argv or ["test-mcp-server"]
        self.err = open(err, "ab")
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.err)
        self.buf = b""
        self.seen = []
    def send(self, m):
        line = m if isinstance(m, (str, bytes)) else json.dumps(m)
        if isinstance(line, str):
            line = line.encode()
        self.p.stdin.write(line + b"\n")
        self.p.stdin.flush()
    def line(self, timeout=60):
        end = time.time() + timeout
        while b"\n" not in self.buf:
            left = end - time.time()
            assert left > 0, "timeout waiting for a message"
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 65536)
                if not chunk:
                    return None
                self.buf += chunk
        l, self.buf = self.buf.split(b"\n", 1)
        return l
    def recv(self, timeout=60):
        l = self.line(timeout)
        assert l is not None, "EOF from the server"
        m = json.loads(l)
        self.seen.append(m)
        return m
    def until(self, id):
        notes = []
        while True:
            m = self.recv()
            if "method" in m:
                notes.append(m)
            elif m.get("id") == id:
                return notes, m
    def req(self, id, method, params=None):
        m = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            m["params"] = params
        self.send(m)
        return self.until(id)[1]
    def init(self, rev="2025-11-25"):
        r = self.req(0, "initialize", {"protocolVersion": rev,
                     "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r
    def rest(self):
        self.p.stdin.close()
        out = []
        while True:
            l = self.line()
            if l is None:
                break
            out.append(json.loads(l))
        return out
    def close(self):
        rest = self.rest()
        return self.p.wait(timeout=30), rest
def err(m, code):
    assert "error" in m and "result" not in m, m
    assert m["error"]["code"] == code, m
def stderr_has(text, timeout=30, err="server.err"):
    end = time.time() + timeout
    while time.time() < end:
        if text in open(err).read():
            return True
        time.sleep(0.05)
    return False
EOF

# run_py: run the python in $1 with mcpio.py loaded
run_py() {
	{ echo "from mcpio import *"; cat; } >case.py &&
	PYTHONPATH=. python3 case.py
}

test_expect_success 'gosbx mcp -h shows the usage on stdout' '
	gosbx mcp -h >out &&
	test_grep "^usage: gosbx mcp \[--http=<addr>\]" out &&
	test_grep -e "--tools=<list>" out
'

test_expect_success 'an unknown toolset is a usage error (129)' '
	test_expect_code_err 129 gosbx mcp --tools=go,nope </dev/null &&
	test_grep "unknown toolset .nope." err
'

test_expect_success '--http without a token and without --dev is refused' '
	test_expect_code_err 129 gosbx mcp --http=127.0.0.1:0 </dev/null &&
	test_grep "token-file" err
'

test_expect_success 'initialize answers each handshake revision with itself' '
	run_py <<-\EOF
	for rev in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]:
	    s = S()
	    r = s.init(rev)["result"]
	    assert r["protocolVersion"] == rev, r
	    assert r["serverInfo"]["name"] == "gosbx", r
	    assert "tools" in r["capabilities"] and "logging" in r["capabilities"]
	    assert ("title" in r["serverInfo"]) == (rev >= "2025-06-18"), r
	    assert s.close()[0] == 0
	EOF
'

test_expect_success 'an unknown or 2026 revision in initialize gets 2025-11-25' '
	run_py <<-\EOF
	for rev in ["1999-01-01", "2026-07-28"]:
	    s = S()
	    assert s.init(rev)["result"]["protocolVersion"] == "2025-11-25"
	    s.close()
	s = S()
	err(s.req(1, "initialize", {"capabilities": {}}), -32602)
	s.close()
	EOF
'

test_expect_success 'tools/list fields follow the revision' '
	run_py <<-\EOF
	def echo_tool(rev):
	    s = S(); s.init(rev)
	    t = s.req(1, "tools/list")["result"]["tools"][0]
	    s.close()
	    assert t["name"] == "echo" and "inputSchema" in t, t
	    return t
	t = echo_tool("2024-11-05")
	assert set(t) == {"name", "description", "inputSchema"}, t
	t = echo_tool("2025-03-26")
	assert set(t) == {"name", "description", "inputSchema", "annotations"}, t
	a = t["annotations"]
	assert a["readOnlyHint"] is True and a["idempotentHint"] is True, a
	assert a["destructiveHint"] is False and a["openWorldHint"] is False, a
	t = echo_tool("2025-06-18")
	assert t["title"] == "Echo" and t["outputSchema"] == {"type": "object"}, t
	EOF
'

test_expect_success 'without --structured-content: no outputSchema, no structuredContent' '
	TEST_MCP_STRUCTURED=0 run_py <<-\EOF
	for rev in ["2025-06-18", "2025-11-25"]:
	    s = S(); s.init(rev)
	    t = s.req(1, "tools/list")["result"]["tools"][0]
	    assert t["name"] == "echo" and "outputSchema" not in t, t
	    r = s.req(2, "tools/call", {"name": "echo", "arguments": {"x": "y"}})
	    assert r["result"] == {"content": [{"type": "text",
	        "text": "{\"x\":\"y\"}"}], "isError": False}, r
	    s.close()
	s = S()
	r = s.req(3, "tools/call", {"name": "echo", "arguments": {"x": "y"},
	                            "_meta": meta()})["result"]
	assert "structuredContent" not in r and r["isError"] is False, r
	s.close()
	EOF
'

test_expect_success 'ping answers an empty result, before initialize too' '
	run_py <<-\EOF
	s = S()
	assert s.req("p", "ping") == {"jsonrpc": "2.0", "id": "p", "result": {}}
	s.init()
	assert s.req(7, "ping")["result"] == {}
	s.close()
	EOF
'

test_expect_success '2026-07-28: server/discover and results with resultType' '
	run_py <<-\EOF
	s = S()
	r = s.req("d", "server/discover", {"_meta": meta()})
	assert set(r) == {"jsonrpc", "id", "result"}, r
	r = r["result"]
	assert r["resultType"] == "complete", r
	assert r["supportedVersions"][0] == "2026-07-28", r
	assert "2024-11-05" in r["supportedVersions"], r
	assert r["serverInfo"]["name"] == "gosbx" and "tools" in r["capabilities"]
	assert r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "gosbx"
	assert r["ttlMs"] == 0 and r["cacheScope"] == "private", r
	r = s.req(2, "tools/list", {"_meta": meta()})["result"]
	assert r["resultType"] == "complete" and len(r["tools"]) == 17, r
	assert "nextCursor" not in r, r
	assert r["tools"][0]["title"] == "Echo", r
	r = s.req(3, "tools/call", {"name": "echo", "arguments": {"a": 1},
	                            "_meta": meta()})["result"]
	assert r["resultType"] == "complete" and r["isError"] is False, r
	assert r["structuredContent"] == {"a": 1}, r
	assert json.loads(r["content"][0]["text"]) == {"a": 1}, r
	err(s.req(4, "ping", {"_meta": meta()}), -32601)
	err(s.req(5, "logging/setLevel", {"level": "info", "_meta": meta()}), -32601)
	s.close()
	EOF
'

test_expect_success '2026-07-28: unsupported version -32022, missing _meta -32602' '
	run_py <<-\EOF
	s = S()
	r = s.req(1, "tools/list", {"_meta": meta(**{V: "2030-01-01"})})
	err(r, -32022)
	d = r["error"]["data"]
	assert d["requested"] == "2030-01-01" and "2026-07-28" in d["supported"], d
	err(s.req(2, "tools/list", {"_meta": {V: "2026-07-28"}}), -32602)
	err(s.req(3, "tools/list", {"_meta": {V: 5, C: {}}}), -32602)
	err(s.req(4, "tools/list"), -32602)
	err(s.req(5, "server/discover"), -32602)
	err(s.req(6, "tools/call", {"name": "echo"}), -32602)
	s.close()
	EOF
'

test_expect_success 'a handshake session answers 2026 requests too' '
	run_py <<-\EOF
	s = S(); s.init("2025-03-26")
	r = s.req(1, "tools/list", {"_meta": meta()})["result"]
	assert r["resultType"] == "complete" and "title" in r["tools"][0], r
	r = s.req(2, "tools/list")["result"]
	assert "resultType" not in r and "title" not in r["tools"][0], r
	s.close()
	EOF
'

test_expect_success 'malformed messages: -32700 with id null, -32600' '
	run_py <<-\EOF
	s = S(); s.init()
	s.send("{not json")
	m = s.recv()
	assert set(m) == {"jsonrpc", "id", "error"} and m["id"] is None, m
	err(m, -32700)
	for bad in ["42", "\"x\"", "null", "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}",
	            "{\"jsonrpc\":\"2.0\",\"id\":1}", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}",
	            "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
	            "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}",
	            "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}"]:
	    s.send(bad)
	    err(s.recv(), -32600)
	s.send("\xff\xfe")
	err(s.recv(), -32700)
	assert s.req(9, "ping")["result"] == {}
	s.close()
	EOF
'

test_expect_success 'unknown methods -32601; notifications and responses get nothing' '
	run_py <<-\EOF
	s = S(); s.init()
	err(s.req(1, "resources/list"), -32601)
	err(s.req(2, "no/such"), -32601)
	s.close()
	EOF
	run_py <<-\EOF
	s = S(); s.init()
	s.send({"jsonrpc": "2.0", "method": "notifications/whatever"})
	s.send({"jsonrpc": "2.0", "id": 99, "result": {}})
	s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345}})
	s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": 7})
	s.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
	assert s.recv() == {"jsonrpc": "2.0", "id": 3, "result": {}}
	s.close()
	EOF
'

test_expect_success 'bad params: unknown tool, arguments not an object, params not an object' '
	run_py <<-\EOF
	s = S(); s.init()
	err(s.req(1, "tools/call", {"name": "nope", "arguments": {}}), -32602)
	err(s.req(2, "tools/call", {"name": "echo", "arguments": [1]}), -32602)
	err(s.req(3, "tools/call", {"arguments": {}}), -32602)
	err(s.req(4, "tools/list", 5), -32602)
	err(s.req(5, "tools/list", {"cursor": "bm9wZQ=="}), -32602)
	err(s.req(6, "tools/list", {"cursor": 5}), -32602)
	err(s.req(7, "logging/setLevel", {"level": "loud"}), -32602)
	s.close()
	EOF
'

test_expect_success 'tool results: isError, internal errors, no structuredContent for old revisions' '
	run_py <<-\EOF
	s = S(); s.init("2025-06-18")
	r = s.req(1, "tools/call", {"name": "bad", "arguments": {}})["result"]
	assert r["isError"] is True and "bad arguments: nope" in r["content"][0]["text"], r
	err(s.req(2, "tools/call", {"name": "fail"}), -32603)
	r = s.req(3, "tools/call", {"name": "echo", "arguments": {"x": "y"}})["result"]
	assert r["structuredContent"] == {"x": "y"}, r
	assert set(r) == {"content", "structuredContent", "isError"}, r
	s.close()
	s = S(); s.init("2025-03-26")
	r = s.req(3, "tools/call", {"name": "echo", "arguments": {"x": "y"}})["result"]
	assert set(r) == {"content", "isError"}, r
	assert r["content"][0]["type"] == "text", r
	s.close()
	EOF
'

test_expect_success 'tools/list: every tool in one page; old cursors still work' '
	run_py <<-\EOF
	import base64
	s = S(); s.init()
	r = s.req(1, "tools/list")["result"]
	names = [t["name"] for t in r["tools"]]
	assert "nextCursor" not in r, r
	assert len(names) == 17 and len(set(names)) == 17, names
	assert names[0] == "echo" and names[-1] == "pad11", names
	# a cursor of the paged answers of earlier versions: the rest
	cur = base64.b64encode(b"gosbx-tools:10").decode()
	r = s.req(2, "tools/list", {"cursor": cur})["result"]
	assert [t["name"] for t in r["tools"]] == names[10:], r
	assert "nextCursor" not in r, r
	err(s.req(3, "tools/list", {"cursor": "bogus"}), -32602)
	s.close()
	EOF
'

test_expect_success 'calls run on threads: ping is served while a call runs' '
	run_py <<-\EOF
	s = S(); s.init()
	s.send({"jsonrpc": "2.0", "id": "long", "method": "tools/call",
	        "params": {"name": "sleep", "arguments": {"ms": 100, "steps": 20}}})
	first = None
	s.send({"jsonrpc": "2.0", "id": "p", "method": "ping"})
	m = s.recv()
	assert m["id"] == "p", m
	notes, r = s.until("long")
	assert r["result"]["content"][0]["text"] == "slept 20 steps", r
	s.close()
	EOF
'

test_expect_success 'tasks (2025-11-25): the capability, taskSupport; none before' '
	run_py <<-\EOF
	s = S(); r = s.init()
	caps = r["result"]["capabilities"]
	assert caps["tasks"] == {"list": {}, "cancel": {},
	                         "requests": {"tools": {"call": {}}}}, caps
	tools = s.req(1, "tools/list")["result"]["tools"]
	assert all(t["execution"] == {"taskSupport": "optional"}
	           for t in tools), tools
	assert s.close()[0] == 0
	s = S(); r = s.init("2025-06-18")
	assert "tasks" not in r["result"]["capabilities"], r
	tools = s.req(1, "tools/list")["result"]["tools"]
	assert not [t for t in tools if "execution" in t], tools
	err(s.req(2, "tasks/get", {"taskId": "x"}), -32601)
	# a task param it never negotiated: an ordinary call
	r = s.req(3, "tools/call", {"name": "echo", "arguments": {"a": 1},
	                            "task": {"ttl": 1000}})
	assert json.loads(r["result"]["content"][0]["text"]) == {"a": 1}, r
	assert s.close()[0] == 0
	EOF
'

test_expect_success 'tasks: a call runs as a task; get, list, result' '
	run_py <<-\EOF
	import re
	s = S(); s.init()
	# 3 s: tasks/get and tasks/list must find it still working
	r = s.req(1, "tools/call", {"name": "sleep", "task": {"ttl": 60000},
	                            "arguments": {"ms": 1000, "steps": 3}})
	t = r["result"]["task"]
	assert re.fullmatch("[0-9a-f]{32}", t["taskId"]), t
	assert t["status"] == "working" and t["ttl"] == 60000, t
	assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z",
	                    t["createdAt"]), t
	assert t["pollInterval"] > 0, t
	g = s.req(2, "tasks/get", {"taskId": t["taskId"]})["result"]
	assert g["taskId"] == t["taskId"] and g["status"] == "working", g
	l = s.req(3, "tasks/list")["result"]["tasks"]
	assert [x["taskId"] for x in l] == [t["taskId"]], l
	s.send({"jsonrpc": "2.0", "id": 4, "method": "tasks/result",
	        "params": {"taskId": t["taskId"]}})
	notes, res = s.until(4)
	assert not notes, notes
	res = res["result"]
	assert res["content"][0]["text"] == "slept 3 steps", res
	assert res["isError"] is False, res
	assert res["_meta"]["io.modelcontextprotocol/related-task"] == \
	    {"taskId": t["taskId"]}, res
	g = s.req(5, "tasks/get", {"taskId": t["taskId"]})["result"]
	assert g["status"] == "completed", g
	# done already: tasks/result answers at once, again
	r = s.req(6, "tasks/result", {"taskId": t["taskId"]})
	assert r["result"]["content"][0]["text"] == "slept 3 steps", r
	# a ttl above the bound is cut to it (1 h); none gives the bound
	r = s.req(7, "tools/call", {"name": "echo", "task": {"ttl": 10**10}})
	assert r["result"]["task"]["ttl"] == 3600000, r
	r = s.req(8, "tools/call", {"name": "echo", "task": {}})
	assert r["result"]["task"]["ttl"] == 3600000, r
	assert s.close()[0] == 0
	EOF
'

test_expect_success 'tasks: failed calls, malformed params, unknown ids' '
	run_py <<-\EOF
	s = S(); s.init()
	tid = s.req(1, "tools/call", {"name": "bad", "task": {}})["result"]["task"]["taskId"]
	r = s.req(2, "tasks/result", {"taskId": tid})["result"]
	assert r["isError"] is True, r
	assert s.req(3, "tasks/get", {"taskId": tid})["result"]["status"] == "failed"
	tid = s.req(4, "tools/call", {"name": "fail", "task": {}})["result"]["task"]["taskId"]
	err(s.req(5, "tasks/result", {"taskId": tid}), -32603)
	g = s.req(6, "tasks/get", {"taskId": tid})["result"]
	assert g["status"] == "failed" and "boom" in g["statusMessage"], g
	err(s.req(7, "tasks/cancel", {"taskId": tid}), -32602)
	for bad in (5, "x", [], {"ttl": -1}, {"ttl": "60s"}, {"ttl": 1.5}):
	    err(s.req(8, "tools/call", {"name": "echo", "task": bad}), -32602)
	for m in ("tasks/get", "tasks/result", "tasks/cancel"):
	    err(s.req(9, m, {}), -32602)
	    err(s.req(10, m, {"taskId": 7}), -32602)
	    err(s.req(11, m, {"taskId": "0" * 32}), -32602)
	err(s.req(12, "tasks/list", {"cursor": "abc"}), -32602)
	# a bad task param runs nothing
	assert len(s.req(13, "tasks/list")["result"]["tasks"]) == 2
	assert s.close()[0] == 0
	EOF
'

test_expect_success 'tasks/cancel stops the call; the task stays cancelled' '
	run_py <<-\EOF
	s = S(err="tcancel.err"); s.init()
	tid = s.req(1, "tools/call", {"name": "sleep", "task": {},
	    "arguments": {"ms": 100, "steps": 600}})["result"]["task"]["taskId"]
	s.send({"jsonrpc": "2.0", "id": 2, "method": "tasks/result",
	        "params": {"taskId": tid}})
	c = s.req(3, "tasks/cancel", {"taskId": tid})["result"]
	assert c["taskId"] == tid and c["status"] == "cancelled", c
	# the waiting tasks/result gets an answer: there is no result
	got = [m for m in s.seen if m.get("id") == 2]
	assert len(got) == 1, s.seen
	err(got[0], -32602)
	assert stderr_has("cancelled sleep", err="tcancel.err")
	g = s.req(4, "tasks/get", {"taskId": tid})["result"]
	assert g["status"] == "cancelled", g
	err(s.req(5, "tasks/cancel", {"taskId": tid}), -32602)
	assert s.close()[0] == 0
	EOF
'

test_expect_success 'tasks: at most 64 a session; one that ended goes after its ttl' '
	run_py <<-\EOF
	import time
	s = S(err="tmax.err"); s.init()
	# ttl 0: dropped as soon as it ended
	tid = s.req(1, "tools/call", {"name": "echo", "task": {"ttl": 0}})["result"]["task"]["taskId"]
	end = time.time() + 30
	while "result" in s.req(2, "tasks/get", {"taskId": tid}):
	    assert time.time() < end, "a task past its ttl is still there"
	    time.sleep(0.05)
	ids = []
	for i in range(64):
	    r = s.req(100 + i, "tools/call", {"name": "sleep", "task": {},
	        "arguments": {"ms": 100, "steps": 600}})
	    ids.append(r["result"]["task"]["taskId"])
	assert len(set(ids)) == 64
	r = s.req(3, "tools/call", {"name": "echo", "task": {}})
	err(r, -32603)
	assert "too many tasks" in r["error"]["message"], r
	# without a task the call runs as ever
	assert "result" in s.req(4, "tools/call", {"name": "echo"})
	for i, t in enumerate(ids):
	    assert s.req(200 + i, "tasks/cancel", {"taskId": t})["result"]["status"] == "cancelled"
	# cancelled ones are kept for their ttl (1 h): still full
	err(s.req(5, "tools/call", {"name": "echo", "task": {}}), -32603)
	assert len(s.req(6, "tasks/list")["result"]["tasks"]) == 64
	assert s.close()[0] == 0
	EOF
'

test_expect_success 'tasks: not in 2026-07-28 (an extension there), another session sees none' '
	run_py <<-\EOF
	s = S(); s.init()
	tid = s.req(1, "tools/call", {"name": "echo", "task": {}})["result"]["task"]["taskId"]
	r = s.req(2, "tasks/get", {"taskId": tid, "_meta": meta()})
	err(r, -32601)
	r = s.req(3, "tools/call", {"name": "echo", "arguments": {}, "task": {},
	                            "_meta": meta()})
	assert r["result"]["content"][0]["text"] == "{}", r
	o = S(); o.init()
	err(o.req(1, "tasks/get", {"taskId": tid}), -32602)
	err(o.req(2, "tasks/result", {"taskId": tid}), -32602)
	err(o.req(3, "tasks/cancel", {"taskId": tid}), -32602)
	assert o.req(4, "tasks/list")["result"]["tasks"] == []
	assert o.close()[0] == 0
	assert s.close()[0] == 0
	EOF
'

test_expect_success 'notifications/cancelled: no answer, the tool sees it, the server goes on' '
	run_py <<-\EOF
	s = S(err="cancel.err"); s.init()
	s.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
	        "params": {"name": "sleep", "arguments": {"ms": 100, "steps": 600}}})
	s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
	        "params": {"requestId": 5, "reason": "test"}})
	assert stderr_has("cancelled sleep", err="cancel.err")
	assert s.req(6, "ping")["result"] == {}
	code, rest = s.close()
	assert code == 0
	assert not [m for m in s.seen + rest if m.get("id") == 5], s.seen + rest
	EOF
'

test_expect_success 'progress: increasing, with messages, all before the result' '
	run_py <<-\EOF
	for rev, token in [("2025-11-25", "tok"), ("2024-11-05", 42)]:
	    s = S(); s.init(rev)
	    s.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
	            "params": {"name": "sleep", "arguments": {"ms": 10, "steps": 5},
	                       "_meta": {"progressToken": token}}})
	    notes, r = s.until(1)
	    assert r["result"]["isError"] is False, r
	    prog = [n["params"] for n in notes if n["method"] == "notifications/progress"]
	    assert len(prog) == 5, notes
	    assert [p["progress"] for p in prog] == [1, 2, 3, 4, 5], prog
	    assert all(p["progressToken"] == token and p["total"] == 5 for p in prog), prog
	    if rev == "2024-11-05":
	        assert all("message" not in p for p in prog), prog
	    else:
	        assert [p["message"] for p in prog] == ["step %d" % i for i in range(1, 6)]
	    code, rest = s.close()
	    assert not [m for m in rest if m.get("method") == "notifications/progress"], rest
	EOF
'

test_expect_success 'no progress without a progressToken' '
	run_py <<-\EOF
	s = S(); s.init()
	s.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
	        "params": {"name": "sleep", "arguments": {"ms": 10, "steps": 3}}})
	notes, r = s.until(1)
	assert notes == [], notes
	s.close()
	EOF
'

test_expect_success 'logging/setLevel filters notifications/message' '
	run_py <<-\EOF
	s = S(); s.init()
	s.req(1, "tools/call", {"name": "log", "arguments": {"level": "error", "text": "before"}})
	assert not [m for m in s.seen if m.get("method") == "notifications/message"]
	assert s.req(2, "logging/setLevel", {"level": "warning"})["result"] == {}
	s.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
	        "params": {"name": "log", "arguments": {"level": "info", "text": "quiet"}}})
	notes, r = s.until(3)
	assert notes == [], notes
	s.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
	        "params": {"name": "log", "arguments": {"level": "error", "text": "loud"}}})
	notes, r = s.until(4)
	assert len(notes) == 1, notes
	p = notes[0]["params"]
	assert notes[0]["method"] == "notifications/message", notes
	assert p["level"] == "error" and p["data"] == "loud" and p["logger"] == "gosbx", p
	s.close()
	EOF
'

test_expect_success '2026-07-28: logLevel in _meta asks for notifications/message' '
	run_py <<-\EOF
	s = S()
	s.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
	        "params": {"name": "log", "arguments": {"level": "notice", "text": "hi"},
	                   "_meta": meta()}})
	notes, r = s.until(1)
	assert notes == [], notes
	s.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
	        "params": {"name": "log", "arguments": {"level": "notice", "text": "hi"},
	                   "_meta": meta(**{"io.modelcontextprotocol/logLevel": "info"})}})
	notes, r = s.until(2)
	assert [n["params"]["data"] for n in notes] == ["hi"], notes
	err(s.req(3, "tools/list", {"_meta": meta(**{"io.modelcontextprotocol/logLevel": "x"})}), -32602)
	s.close()
	EOF
'

test_expect_success 'batches: arrays answered with arrays in 2025-03-26 only' '
	run_py <<-\EOF
	s = S(); s.init("2025-03-26")
	s.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"},
	        {"jsonrpc": "2.0", "method": "notifications/whatever"},
	        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
	         "params": {"name": "sleep", "arguments": {"ms": 10, "steps": 2}}},
	        {"jsonrpc": "2.0", "id": 3, "method": "nope"}, 5])
	m = s.recv()
	assert isinstance(m, list) and len(m) == 4, m
	byid = {x.get("id"): x for x in m}
	assert byid[1]["result"] == {} and byid[3]["error"]["code"] == -32601, m
	assert byid[2]["result"]["content"][0]["text"] == "slept 2 steps", m
	assert byid[None]["error"]["code"] == -32600, m
	s.send([{"jsonrpc": "2.0", "method": "notifications/whatever"}])
	s.send([])
	err(s.recv(), -32600)
	s.close()
	s = S(); s.init("2025-06-18")
	s.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
	err(s.recv(), -32600)
	s.close()
	EOF
'

test_expect_success 'a line longer than 64 MiB is -32700 and the server goes on' '
	run_py <<-\EOF
	s = S(); s.init()
	chunk = b"x" * (1 << 20)
	for i in range(66):
	    s.p.stdin.write(chunk)
	s.p.stdin.write(b"\n")
	s.p.stdin.flush()
	err(s.recv(), -32700)
	assert s.req(1, "ping")["result"] == {}
	assert s.close()[0] == 0
	EOF
'

test_expect_success 'EOF with a call running: it is cancelled, the session ends, exit 0' '
	run_py <<-\EOF
	s = S(err="eof.err"); s.init()
	s.req(1, "tools/call", {"name": "echo", "arguments": {}})
	s.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
	        "params": {"name": "sleep", "arguments": {"ms": 100, "steps": 600}}})
	s.req(3, "ping")
	code, rest = s.close()
	assert code == 0, code
	assert rest == [], rest
	EOF
	test_grep "cancelled sleep" eof.err &&
	test_grep "session_end stdio calls=2" eof.err
'

test_expect_success 'SIGTERM ends the session too, exit 0' '
	run_py <<-\EOF
	s = S(err="term.err"); s.init()
	s.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
	        "params": {"name": "sleep", "arguments": {"ms": 100, "steps": 600}}})
	s.req(3, "ping")
	s.p.send_signal(signal.SIGTERM)
	assert s.p.wait(timeout=30) == 0
	EOF
	test_grep "session_end stdio calls=1" term.err
'

test_expect_success 'gosbx mcp: stdout carries only protocol frames' '
	run_py <<-\EOF
	s = S(["gosbx", "mcp"])
	r = s.init("2025-06-18")["result"]
	assert r["protocolVersion"] == "2025-06-18", r
	tools = s.req(1, "tools/list")["result"]["tools"]
	assert "run_go_code" in [t["name"] for t in tools], tools
	s.send("garbage")
	err(s.recv(), -32700)
	assert s.req(2, "ping")["result"] == {}
	code, rest = s.close()
	assert code == 0 and rest == [], rest
	EOF
'

test_expect_success 'gosbx mcp --tools=go,sandbox,jobs lists the tools of all three' '
	run_py <<-\EOF
	s = S(["gosbx", "mcp", "--tools=go,sandbox,jobs"])
	s.init()
	r = s.req(1, "tools/list")["result"]
	names = [t["name"] for t in r["tools"]]
	assert "nextCursor" not in r, r
	assert names == ["run_go_code", "sandbox_start", "sandbox_stop",
	    "sandbox_run_code", "sandbox_run_command", "sandbox_get_metrics",
	    "sandbox_exec_start", "sandbox_exec_poll",
	    "sandbox_exec_write_stdin", "sandbox_exec_signal",
	    "sandbox_exec_close", "execute_python", "execute_javascript", "execute_bash",
	    "check_job_status", "get_job_logs"], names
	assert not any("outputSchema" in t for t in r["tools"]), r
	s.close()
	EOF
'

test_expect_success 'no sanitizer report from any server' '
	cat *.err >all-err &&
	test_grep ! -E "Sanitizer|runtime error" all-err
'

test_done

# A small MCP client for the raw toolset tests (t4030, t4040): speaks
# newline-delimited JSON-RPC to $MCP_SERVER over stdio. Used through
# mcp_run in t/lib-mcp-raw.sh.
import json, os, subprocess, sys

SERVER = os.environ["MCP_SERVER"].split()
CLIENT_NAME = os.environ.get("MCP_CLIENT_NAME", "gosbx-test")

class Client:
    def __init__(self, *args):
        self.p = subprocess.Popen(SERVER + list(args),
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=open("server.err", "ab"))
        self.next_id = 0
        self.pending = {}
        r = self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": CLIENT_NAME, "version": "0"}})
        assert "result" in r, r
        self.send({"jsonrpc": "2.0",
                   "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def start(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id,
                   "method": method, "params": params})
        return self.next_id

    def wait(self, id):
        while id not in self.pending:
            line = self.p.stdout.readline()
            assert line, "the server closed stdout"
            msg = json.loads(line)
            if "id" in msg and ("result" in msg or "error" in msg):
                self.pending[msg["id"]] = msg
        return self.pending.pop(id)

    def request(self, method, params):
        return self.wait(self.start(method, params))

    def call(self, name, **args):
        r = self.request("tools/call",
                         {"name": name, "arguments": args})
        assert "result" in r, r
        res = r["result"]
        text = "".join(b.get("text", "") for b in res["content"])
        return res, text

    def close(self):
        self.p.stdin.close()
        rc = self.p.wait(timeout=300)
        assert rc == 0, "the server exited %d" % rc

def ok(r):
    res, text = r
    assert not res.get("isError"), text
    return res, text

def err(r):
    res, text = r
    assert res.get("isError") is True, text
    return res, text

NS = "default"

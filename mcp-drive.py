import json, subprocess, sys

steps = sys.argv[1:sys.argv.index("--")]
cmd = sys.argv[sys.argv.index("--") + 1:]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
ids = [0]

def rpc(method, params, notify=False):
    msg = {"jsonrpc": "2.0", "method": method, "params": params}
    if not notify:
        ids[0] += 1
        msg["id"] = ids[0]
    p.stdin.write((json.dumps(msg) + "\n").encode())
    p.stdin.flush()
    if notify:
        return None
    while True:
        line = p.stdout.readline()
        if not line:
            sys.exit("gosbx mcp ended early")
        ans = json.loads(line)
        if ans.get("id") == ids[0]:
            return ans

rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t6203", "version": "1"}})
rpc("notifications/initialized", {}, notify=True)
n = 0
for s in steps:
    if s.startswith("sh:"):
        subprocess.run(s[3:], shell=True, check=True)
        continue
    n += 1
    ans = rpc("tools/call", {"name": "run_go_code",
                             "arguments": {"command": s[5:]}})
    res = ans.get("result", {})
    with open("call-%d.txt" % n, "w") as f:
        f.write(res.get("content", [{}])[0].get("text", json.dumps(ans)))
    with open("call-%d.status" % n, "w") as f:
        f.write("error\n" if res.get("isError") else "ok\n")
p.stdin.close()
sys.exit(p.wait())

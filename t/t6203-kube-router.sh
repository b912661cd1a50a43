#!/bin/sh
test_description='the kube backend and the sandbox-router

The router headers on every runtime request (seen by a recording
server behind --api-url), --gateway, the router token, a tunnel that
breaks mid-session (the next command works), and a command longer than
the router'"'"'s proxy timeout (exec-stream keeps data flowing).'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-kube.sh

CLAIMS=/apis/extensions.agents.x-k8s.io/v1alpha1/namespaces/default/sandboxclaims

no_claims() {
	kube_curl "$CLAIMS" >claims.json &&
	test "$(kube_py claims.json "len(v[\"items\"])")" = 0
}

# A runtime-shaped server that records each request's headers (one JSON
# object a line in headers.log) and answers GET / and POST /execute.
cat >recorder.py <<\EOF
import json, os
from http.server import BaseHTTPRequestHandler, HTTPServer

class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, obj):
        with open("headers.log", "a") as f:
            f.write(json.dumps(dict(self.headers.items())) + "\n")
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.answer({"status": "ok"})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.answer({"exit_code": 0, "stdout": "recorded\n", "stderr": ""})

    def log_message(self, *a):
        pass

s = HTTPServer(("127.0.0.1", 0), H)
with open("recorder.port.tmp", "w") as f:
    f.write(str(s.server_address[1]))
os.rename("recorder.port.tmp", "recorder.port")
s.serve_forever()
EOF

# The MCP driver: runs `gosbx mcp` over stdio; each argument before
# "--" is a step: "call:<command>" (run_go_code; its text goes to
# call-<i>.txt, "error" or "ok" to call-<i>.status) or "sh:<command>"
# run in between; after "--" the server's command line.
cat >mcp-drive.py <<\EOF
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
                   "clientInfo": {"name": "t62xx", "version": "1"}})
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
EOF

test_atexit "kube_stop kube"
test_atexit 'test -f recorder.pid && kill $(cat recorder.pid)'
test_expect_success 'setup: fake-kube with a router token and a 2 s proxy timeout' '
	kube_start -- --template=go-runtime-template --router-token=s3cret \
		--router-timeout=2 &&
	echo s3cret >token &&
	cat >break.sh <<-EOF
	curl -sS --max-time 30 --cacert "$KUBE_PKI/ca.crt" \
		--cert "$KUBE_PKI/client.crt" --key "$KUBE_PKI/client.key" \
		-X POST "$(kube_url)/fake/break-tunnels" >broken.json
	EOF
	cat >replace.sh <<-EOF
	curl -sS --max-time 30 --cacert "$KUBE_PKI/ca.crt" \
		--cert "$KUBE_PKI/client.crt" --key "$KUBE_PKI/client.key" \
		-X POST "$(kube_url)/fake/replace-router" >replaced.json
	EOF
'
KUBECONFIG=$TRASH_DIRECTORY/kube.kubeconfig
GOSBX_BACKEND=kube
export KUBECONFIG GOSBX_BACKEND

test_expect_success 'without the router token the router refuses (401); no claim left' '
	fails_err gosbx exec -- true &&
	test_grep "401" err &&
	rt_poll 10 no_claims
'

test_expect_success 'GOSBX_ROUTER_TOKEN and --router-token-file are sent' '
	GOSBX_ROUTER_TOKEN=s3cret gosbx exec -- echo env >out &&
	echo env >expect && test_cmp expect out &&
	gosbx --router-token-file=token exec -- echo file >out &&
	echo file >expect && test_cmp expect out
'

test_expect_success 'an empty token file is an error' '
	: >empty &&
	test_expect_code_err 125 gosbx --router-token-file=empty exec -- true &&
	test_grep "token file .empty. is empty" err
'

GOSBX_ROUTER_TOKEN=s3cret
export GOSBX_ROUTER_TOKEN

test_expect_success 'setup: a kept claim' '
	gosbx open -q >name
'

test_expect_success 'every runtime request carries the router headers' '
	name=$(cat name) &&
	kube_curl "$CLAIMS/$name" >claim.json &&
	kube_py claim.json "v[\"status\"][\"sandbox\"][\"name\"]" >sandbox &&
	{ (exec python3 recorder.py) & echo $! >recorder.pid; } &&
	rt_poll 10 test -s recorder.port &&
	gosbx --api-url="http://127.0.0.1:$(cat recorder.port)" \
		exec --claim="$name" -- true >out &&
	echo recorded >expect && test_cmp expect out &&
	python3 - "$(cat sandbox)" <<-\EOF
	import json, re, sys
	lines = [json.loads(l) for l in open("headers.log")]
	claim = json.load(open("claim.json"))
	ips = claim["status"]["sandbox"].get("podIPs") or []
	assert len(lines) >= 2, lines
	for h in lines:
	    h = dict((k.lower(), v) for k, v in h.items())
	    assert h["x-sandbox-id"] == sys.argv[1], h
	    assert h["x-sandbox-namespace"] == "default", h
	    assert h["x-sandbox-port"] == "8888", h
	    assert int(h["x-sandbox-timeout"]) >= 60, h
	    assert re.match("^[0-9a-f]{16}$", h["x-request-id"]), h
	    assert h["authorization"] == "Bearer s3cret", h
	    if ips:
	        ip = ips[0] if isinstance(ips[0], str) else ips[0]["ip"]
	        assert h["x-sandbox-pod-ip"] == ip, h
	    else:
	        assert h["x-sandbox-pod-ip"], h
	EOF
'

test_expect_success '--gateway reaches the router at http://<addr>' '
	name=$(cat name) &&
	addr=$(kube_router_url | sed "s|^http://||") &&
	gosbx --gateway="$addr" exec --claim="$name" -- echo via gateway >out &&
	echo via gateway >expect && test_cmp expect out
'

test_expect_success 'a command longer than the router timeout still returns (exec-stream)' '
	name=$(cat name) &&
	gosbx exec --claim="$name" -- \
		"for i in 1 2 3 4 5; do echo tick \$i; sleep 1; done; echo done" >out &&
	tail -n 1 out >last &&
	echo done >expect && test_cmp expect last &&
	test_line_count = 6 out
'

test_expect_success 'a tunnel that breaks mid-session: the next command works' '
	name=$(cat name) &&
	python3 mcp-drive.py "call:echo before" "sh:sh break.sh" \
		"call:echo after" -- gosbx mcp --persistent --claim="$name" 2>mcp.err &&
	{ cat broken.json; echo; } >&4 &&
	test "$(kube_py broken.json "v[\"broken\"] > 0")" = true &&
	test_grep "before" call-1.txt &&
	test_grep "^ok$" call-1.status &&
	test_grep "after" call-2.txt &&
	test_grep "^ok$" call-2.status
'

# A rollout of the router replaces its pod: the tunnel to the old pod
# breaks, and the next tunnel must go to the new pod (found anew
# through the EndpointSlices), not to the pod the session began with.
test_expect_success 'the router pod replaced mid-session: the next command works' '
	name=$(cat name) &&
	kube_curl "/api/v1/namespaces/default/pods?labelSelector=app%3Dsandbox-router" >before.json &&
	python3 mcp-drive.py "call:echo before" "sh:sh replace.sh" \
		"call:echo after" -- gosbx mcp --persistent --claim="$name" 2>mcp.err &&
	kube_curl "/api/v1/namespaces/default/pods?labelSelector=app%3Dsandbox-router" >after.json &&
	test "$(kube_py replaced.json "v[\"replaced\"]")" = 1 &&
	test "$(kube_py before.json "[p[\"metadata\"][\"name\"] for p in v[\"items\"]] != [p[\"metadata\"][\"name\"] for p in json.load(open(\"after.json\"))[\"items\"]]")" = true &&
	test_grep "before" call-1.txt &&
	test_grep "^ok$" call-1.status &&
	test_grep "after" call-2.txt &&
	test_grep "^ok$" call-2.status
'

test_expect_success 'close' '
	gosbx close "$(cat name)" &&
	rt_poll 10 no_claims
'

test_done

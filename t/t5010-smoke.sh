#!/bin/sh
test_description='gosbx smoke: an MCP client through the seed flows

gosbx smoke against the real gosbx mcp on the local backend, then
against small python3 servers that answer right, answer wrong for one
flow, exit at once, write garbage or never answer; and the MCP client
configurations in contrib/.'
. "$(dirname "$0")/test-lib.sh"

claims_dir="$XDG_STATE_HOME/gosbx/claims"

if test_have_prereq BWRAP &&
	bwrap --unshare-user --ro-bind / / true 2>/dev/null; then
	test_set_prereq SANDBOX
fi

test_atexit 'gosbx close --all'

# no_claims: the claims directory holds nothing (or does not exist)
no_claims() {
	test -z "$(ls -A "$claims_dir" 2>/dev/null)" || {
		echo >&4 "claims left behind:" && ls -A "$claims_dir" >&4
		return 1
	}
}

# A fake MCP server on stdio: fake-server.py <mode>. Modes: good,
# wrong-multi (wrong stdout for the multi-file flow), no-iserror (the
# compile error without isError), exit (exits at once), garbage (a
# line that is not JSON), hang (never answers tools/call), no-tool
# (no run_go_code). It answers like run_go_code without running
# anything, splits tools/list into two pages, and sends a log
# notification and a ping before each tools/call answer.
cat >fake-server.py <<\EOF
import json, os, sys

mode = sys.argv[1] if len(sys.argv) > 1 else "good"
if mode == "exit":
    sys.stderr.write("fake server: giving up at once\n")
    sys.exit(3)

def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()

def text(code, out, err):
    t = "exit=%d  (12ms)\n\n" % code
    if out:
        t += "\u2500\u2500 stdout \u2500\u2500\n" + out + "\n"
    if out and err:
        t += "\n"
    if err:
        t += "\u2500\u2500 stderr \u2500\u2500\n" + err + "\n"
    if not out and not err:
        t += "(no output)\n"
    return t

RUN = {"name": "run_go_code", "description": "Build and run Go code.\nMore.",
       "inputSchema": {"type": "object"}}
OTHER = {"name": "other_tool", "description": "Something else.",
         "inputSchema": {"type": "object"}}
files = {}
log = open(os.environ["FAKE_LOG"], "a") if "FAKE_LOG" in os.environ else None
for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    if log:
        log.write("%s\n" % method)
        log.flush()
    if method is None:
        continue  # our ping's answer
    if "id" not in msg:
        continue  # a notification
    rid = msg["id"]
    if method == "initialize":
        if mode == "garbage":
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
            continue
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "9.9"}}})
    elif method == "tools/list":
        cursor = (msg.get("params") or {}).get("cursor")
        if cursor is None:
            send({"jsonrpc": "2.0", "id": rid,
                  "result": {"tools": [OTHER], "nextCursor": "page2"}})
        else:
            tools = [] if mode == "no-tool" else [RUN]
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": tools}})
    elif method == "tools/call":
        if mode == "hang":
            continue
        args = msg["params"]["arguments"]
        files.update(args.get("files", {}))
        code, out, err = 0, "", ""
        if "broken" in files.get("main.go", ""):
            code = 1
            err = "# command-line-arguments\n./main.go:2:14: undefined: broken"
        elif "sub/sub.go" in files:
            out = "hi from sub-package"
            if mode == "wrong-multi":
                out = "hi from the wrong package"
        else:
            out = "hello from mcp smoke"
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "info", "data": "running"}})
        send({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
        is_error = code != 0 and mode != "no-iserror"
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "content": [{"type": "text", "text": text(code, out, err)}],
            "isError": is_error}})
    else:
        send({"jsonrpc": "2.0", "id": rid,
              "error": {"code": -32601, "message": "Method not found"}})
EOF

fake() {
	echo "python3 '$TRASH_DIRECTORY/fake-server.py' $1"
}

test_expect_success PYTHON 'smoke passes against a server that answers right' '
	gosbx smoke --server="$(fake good)" >out 2>err &&
	test_grep "^server: fake 9.9 (protocol 2025-11-25)$" out &&
	test_grep "^tools advertised: 2$" out &&
	test_grep "^  - run_go_code: Build and run Go code.$" out &&
	test_grep "^========== single-file go run ==========$" out &&
	test_grep "^========== build + re-run binary ==========$" out &&
	test_grep "^========== multi-file build+run ==========$" out &&
	test_grep "^hi from sub-package$" out &&
	test_grep "^========== intentional compile error ==========$" out &&
	test_grep "undefined: broken" out &&
	test_grep "^(tool reported IsError=true)$" out &&
	tail -n 1 out >last &&
	echo "smoke complete" >expect &&
	test_cmp expect last
'

test_expect_success PYTHON 'a wrong result fails the smoke and names the flow' '
	test_expect_code_err 1 gosbx smoke --server="$(fake wrong-multi)" >out &&
	test_grep "smoke: flow .multi-file build+run. failed: stdout does not hold .hi from sub-package." err &&
	test_grep "hi from the wrong package" out &&
	test_grep ! "intentional compile error" out &&
	test_grep ! "smoke complete" out
'

test_expect_success PYTHON 'a compile error without isError fails its flow' '
	test_expect_code_err 1 gosbx smoke --server="$(fake no-iserror)" >out &&
	test_grep "flow .intentional compile error. failed: isError is false but the exit code is 1" err &&
	test_grep ! "smoke complete" out
'

test_expect_success PYTHON 'a server that exits at once fails clearly' '
	test_expect_code_err 1 gosbx smoke --server="$(fake exit)" >out &&
	test_grep "smoke: initialize failed: .*the server exited with status 3" err &&
	test_grep "fake server: giving up at once" err &&
	test_grep ! "smoke complete" out
'

test_expect_success 'a server that cannot start fails clearly' '
	test_expect_code_err 1 gosbx smoke --server=/nonexistent/server >out &&
	test_grep "smoke: initialize failed: .*status 127" err
'

test_expect_success PYTHON 'a server that writes garbage on stdout fails clearly' '
	test_expect_code_err 1 gosbx smoke --server="$(fake garbage)" >out &&
	test_grep "initialize failed: the server wrote a line that is not a JSON-RPC message on its standard output: .this is not json." err
'

test_expect_success PYTHON 'a server without run_go_code fails at tools/list' '
	test_expect_code_err 1 gosbx smoke --server="$(fake no-tool)" >out &&
	test_grep "tools/list failed: the server does not offer the tool run_go_code" err
'

test_expect_success PYTHON 'a call that gets no answer in time fails its flow' '
	test_expect_code_err 1 gosbx smoke --timeout=5s --server="$(fake hang)" >out &&
	test_grep "flow .single-file go run. failed: no answer in time" err
'

test_expect_success PYTHON 'SIGINT cancels the running call and stops the server' '
	rm -f fake.log &&
	FAKE_LOG=$PWD/fake.log gosbx smoke --server="$(fake hang)" \
		>out 2>err 3>&- 4>&- 5>&- &
	pid=$! &&
	test_retry 600 0.1 grep -q "^tools/call$" fake.log &&
	kill -INT $pid &&
	{ wait $pid; rc=$?; } &&
	test $rc = 130 &&
	test_grep "flow .single-file go run. failed: interrupted by signal 2" err &&
	test_grep "^notifications/cancelled$" fake.log &&
	test_grep ! "smoke complete" out &&
	! pgrep -f "fake-server.py hang" >/dev/null
'

test_expect_success 'bad options are usage errors' '
	test_expect_code 129 gosbx smoke --timeout=0 &&
	test_expect_code 129 gosbx smoke --server= &&
	test_expect_code 129 gosbx smoke extra
'

test_expect_success SANDBOX,GO 'done when: gosbx smoke passes against gosbx mcp' '
	gosbx smoke >out 2>err &&
	test_grep "^tools advertised: " out &&
	test_grep "^  - run_go_code: " out &&
	test_grep "hello from mcp smoke" out &&
	test_grep "^hi from sub-package$" out &&
	test_grep "undefined: broken" out &&
	test_grep "^(tool reported IsError=true)$" out &&
	tail -n 1 out >last &&
	echo "smoke complete" >expect &&
	test_cmp expect last &&
	test_grep "^opening sandbox (namespace=default template=go-runtime-template claim=\"\")$" err &&
	test_grep "^sandbox open: claim=" err &&
	test_grep "^closing (deleting sandbox " err &&
	no_claims
'

test_expect_success SANDBOX,GO 'namespace and template reach gosbx mcp' '
	gosbx smoke --namespace=team-a --template=tpl-x >out 2>err &&
	test_grep "^opening sandbox (namespace=team-a template=tpl-x claim=\"\")$" err &&
	no_claims
'

# The MCP client configurations (contrib/README.md)
test_expect_success PYTHON 'the contrib MCP configurations are JSON that runs gosbx mcp' '
	for f in claude-code.mcp.json.example gemini-cli.settings.json.example
	do
		python3 - "$GOSBX_SOURCE_DIR/contrib/$f" <<-\EOF || return 1
		import json, sys
		conf = json.load(open(sys.argv[1]))
		server = conf["mcpServers"]["gosbx"]
		assert server["command"].startswith("/"), server
		assert server["command"].endswith("/gosbx"), server
		assert server["args"][0] == "mcp", server
		EOF
	done
'

test_expect_success 'contrib/README.md says how to register gosbx mcp' '
	readme="$GOSBX_SOURCE_DIR/contrib/README.md" &&
	test_grep "claude mcp add gosbx -- /absolute/path/to/gosbx mcp" "$readme" &&
	test_grep "gemini mcp add" "$readme" &&
	test_grep -e "--http=127.0.0.1:5555" "$readme" &&
	test_grep -e "--tools=go,sandbox,jobs" "$readme"
'

test_done

#!/bin/sh
test_description='a hostile runtime cannot make the client hold its answers

A fake runtime (t/hostile-runtime.py) answers with bodies that never
end: an /execute JSON string, a /v1/exec line, an error body. gosbx exec
and gosbx mcp --http stop reading at their bounds with a clear error,
their peak RSS stays bounded, and gosbx mcp keeps serving other
sessions. A job of the jobs toolset that writes without end does not
grow the server either.'
. "$(dirname "$0")"/test-lib.sh

test_have_prereq PYTHON || test_skip_all 'python3 is not installed'

# Peak RSS bounds in MiB. Honest bounds: the /execute cap is 97 MiB
# (lib/session/session.c EXECUTE_ANSWER_MAX), the /v1/exec line cap 8 MiB. The
# sanitizers' quarantine keeps freed buffers resident: more room there.
if test_have_prereq SANITIZED; then
	EXEC_MAX=640 LINE_MAX=256 MCP_MAX=900 JOBS_MAX=600
else
	EXEC_MAX=200 LINE_MAX=64 MCP_MAX=300 JOBS_MAX=150
fi
# what the fake sends before it gives up (1 GiB): a client that read it
# all has no bound
SENT_MAX=$((256 << 20))

# start_hostile <name> [--stream]: <name>.url
start_hostile() {
	_n=$1
	shift
	python3 "$TEST_DIRECTORY/hostile-runtime.py" "$_n.port" "$_n.log" \
		"$@" 2>"$_n.err" &
	echo $! >"$_n.pid"
	test_atexit "kill $(cat "$_n.pid")"
	test_retry 100 0.1 test -s "$_n.port" &&
	echo "http://127.0.0.1:$(cat "$_n.port")" >"$_n.url"
}

# peak_rss <out> cmd...: run cmd; its exit status to <out>.rc and its
# peak RSS in MiB (ru_maxrss of the child) to <out>.rss
peak_rss() {
	_o=$1
	shift
	python3 -c '
import resource, subprocess, sys
p = subprocess.run(sys.argv[2:])
open(sys.argv[1] + ".rc", "w").write("%d\n" % p.returncode)
kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
open(sys.argv[1] + ".rss", "w").write("%d\n" % (kb // 1024))
' "$_o" "$@"
}

# below <file> <max>: the number in file is below max
below() {
	test "$(cat "$1")" -lt "$2" || {
		echo >&4 "$1: $(cat "$1"), want below $2"
		return 1
	}
}

# staged <dir>: a .gosbx-cp-* staging directory is in dir
staged() {
	ls -A "$1" | grep -q "^\.gosbx-cp-"
}

# test_must_be_empty_file <file>
test_must_be_empty_file() {
	test ! -s "$1" || { cat "$1" >&4; return 1; }
}

# sent_below <log> <what>: every answer of that kind stopped early
sent_below() {
	# the server logs an answer once its write fails, after the client
	# hung up: wait for the line
	test_retry 100 0.1 grep -q "^$2 sent=" "$1" &&
	grep "^$2 sent=" "$1" >sent &&
	test_line_count -gt 0 sent &&
	sed "s/.*sent=//" sent | while read -r n; do
		test "$n" -lt "$SENT_MAX" || {
			echo >&4 "$2: the client read $n bytes"
			return 1
		}
	done
}

test_expect_success 'setup: hostile runtimes, upstream-shaped and streaming' '
	start_hostile up &&
	start_hostile st --stream &&
	gosbx --backend=url --url="$(cat up.url)" exec -- "echo hi" >out &&
	echo "echo hi" >expect &&
	test_cmp expect out &&
	gosbx --backend=url --url="$(cat st.url)" exec -- "echo there" >out &&
	echo "echo there" >expect &&
	test_cmp expect out
'

test_expect_success 'an endless /execute answer: clear error, bounded RSS' '
	peak_rss flood gosbx --backend=url --url="$(cat up.url)" \
		exec -- flood-json 2>err &&
	echo 125 >expect && test_cmp expect flood.rc &&
	test_grep "POST .*/execute.* failed: answer over 101711872 bytes" err &&
	below flood.rss $EXEC_MAX &&
	sent_below up.log json
'

test_expect_success 'an endless /v1/exec line: clear error, bounded RSS' '
	peak_rss line gosbx --backend=url --url="$(cat st.url)" \
		exec -- flood-line 2>err &&
	echo 125 >expect && test_cmp expect line.rc &&
	test_grep "execute failed: runtime event line over 8388608 bytes" err &&
	below line.rss $LINE_MAX &&
	sent_below st.log line
'

test_expect_success 'a /v1/exec line that is no event is an error, not a cancel' '
	test_expect_code_err 125 gosbx --backend=url --url="$(cat st.url)" \
		exec -- bad-line &&
	test_grep "the runtime sent a line that is not an event" err
'

# gosbx cp out of a sandbox: the sandbox decides what is sent
test_expect_success 'cp: an endless archive stops at --max-size, nothing written' '
	start_hostile ar --archive &&
	test_expect_code_err 125 gosbx --backend=url --url="$(cat ar.url)" \
		cp --max-size=8m x:/app/flood flood-out &&
	test_grep "is larger than 8388608 bytes" err &&
	test_grep "max-size" err &&
	! test -e flood-out &&
	ls -A >out &&
	test_grep ! gosbx-cp out &&
	sent_below ar.log archive
'

test_expect_success 'cp: SIGTERM mid-transfer leaves no staging directory' '
	mkdir term &&
	{
		gosbx --backend=url --url="$(cat ar.url)" cp x:/app/stall \
			term/stall-out 2>term.err &
	} &&
	pid=$! &&
	test_retry 300 0.1 grep -q "stall sent" ar.log &&
	test_retry 300 0.1 staged term &&
	kill -TERM $pid &&
	test_expect_code 143 wait $pid &&
	ls -A term >out &&
	test_must_be_empty_file out &&
	test_retry 300 0.1 grep -q "stall ended" ar.log
'

test_expect_success 'an endless error body: its start is the message' '
	for rt in up st; do
		peak_rss err-$rt gosbx --backend=url --url="$(cat $rt.url)" \
			exec -- flood-error 2>err &&
		echo 125 >expect && test_cmp expect err-$rt.rc &&
		test_grep "execute failed: 500 Internal Server Error: boom boom" err &&
		below err-$rt.rss $LINE_MAX &&
		sent_below $rt.log error || return 1
	done
'

# mcp_http <url> <script>: python with post(session, msg) -> (headers,
# answer), init() -> session id, call(session, command) -> result
mcp_http() {
	python3 -c '
import json, sys, urllib.request
URL = sys.argv[1]
def post(sid, msg):
    h = {"Content-Type": "application/json", "Accept": "application/json"}
    if sid:
        h["Mcp-Session-Id"] = sid
    rq = urllib.request.Request(URL, json.dumps(msg).encode(), h)
    with urllib.request.urlopen(rq, timeout=120) as r:
        body = r.read()
        return r.headers, json.loads(body) if body else None
def init():
    h, a = post(None, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "t7040", "version": "0"}}})
    sid = h["Mcp-Session-Id"]
    post(sid, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return sid
def call(sid, command):
    h, a = post(sid, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "run_go_code",
                   "arguments": {"command": command}}})
    return a["result"]
'"$2" "$1"
}

# VmHWM of a process in MiB
vm_hwm() {
	echo $(($(sed -n "s/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p" /proc/$1/status) / 1024))
}

test_expect_success 'gosbx mcp --http: a flood ends one call, others are served' '
	port=$(test_free_port) &&
	{
		gosbx --backend=url --url="$(cat up.url)" mcp --dev \
			--http=127.0.0.1:$port 2>mcp.err &
	} &&
	echo $! >mcp.pid &&
	test_atexit "kill $(cat mcp.pid)" &&
	test_retry 100 0.1 grep -q "listening on" mcp.err &&
	mcp_http http://127.0.0.1:$port/mcp "
other = init()
r = call(other, \"echo before\")
assert \"echo before\" in r[\"content\"][0][\"text\"], r
sid = init()
r = call(sid, \"flood-json\")
t = r[\"content\"][0][\"text\"]
assert r[\"isError\"] is True, r
assert \"answer over 101711872 bytes\" in t, t
r = call(other, \"echo after\")
assert r[\"content\"][0][\"text\"].endswith(\"echo after\n\"), r
r = call(init(), \"echo new\")
assert r[\"content\"][0][\"text\"].endswith(\"echo new\n\"), r
" &&
	vm_hwm $(cat mcp.pid) >mcp.rss &&
	below mcp.rss $MCP_MAX &&
	sent_below up.log json &&
	kill $(cat mcp.pid)
'

if command -v bwrap >/dev/null 2>&1 &&
	bwrap --unshare-user --ro-bind / / true 2>/dev/null
then
	test_set_prereq LOCAL
	# jobs get a 512 MiB memory limit: none for a user without cgroups
	test_limits_prereq
fi

test_expect_success LOCAL,LIMITS 'a job that writes without end does not grow gosbx mcp' '
	XDG_STATE_HOME=$(mktemp -d /tmp/gosbx-t7040.XXXXXX) &&
	test_atexit "rm -rf $XDG_STATE_HOME" &&
	export XDG_STATE_HOME &&
	MCP_SERVER="gosbx mcp --tools=jobs" &&
	export MCP_SERVER &&
	PYTHONPATH="$TEST_DIRECTORY" python3 -c "
from lib_mcp_raw import *
c = Client()
res, text = ok(c.call(\"execute_bash\",
    script=\"head -c 300000000 /dev/zero | tr -c x x; echo; echo end\"))
# 300,000,005 bytes written: the seed head and tail of all of them
assert \"[299983621 bytes elided]\" in text, text[:300]
assert text.rstrip().endswith(\"end\"), text[-200:]
hwm = [l for l in open(\"/proc/%d/status\" % c.p.pid) if l.startswith(\"VmHWM\")]
open(\"jobs.rss\", \"w\").write(\"%d\n\" % (int(hwm[0].split()[1]) // 1024))
c.close()
" &&
	below jobs.rss $JOBS_MAX
'

test_done

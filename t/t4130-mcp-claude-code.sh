#!/bin/sh
test_description='gosbx mcp in Claude Code: what the model receives'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-mcp.sh"

mcp_hosts_install
GOSBX=$GOSBX_BUILD_DIR/gosbx
export GOSBX TRASH_DIRECTORY
CLAUDE=$MCP_HOSTS_BIN/claude

# Claude Code in print mode against the scripted Messages API: a dummy
# key, no traffic but the model's (CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC,
# and mcp_host_run's network namespace), MCP tools declared to the model
# at once (ENABLE_TOOL_SEARCH=false; else the model first loads them with
# the ToolSearch tool). HOME is the trash directory (test-lib).
# claude_p <script.json> [claude options]: requests in requests.log, the
# printed JSON in out.json. With HTTP_PORT set, a gosbx mcp --http on
# that port (token in http.token) runs beside it, in the same network
# namespace, and must stop cleanly (SIGTERM) afterwards.
claude_p() {
	_script=$1
	shift
	rm -f requests.log http.rc &&
	mkdir -p work &&
	(
		cd work &&
		mcp_host_run anthropic "$TRASH_DIRECTORY/$_script" \
			"$TRASH_DIRECTORY/requests.log" sh -c '
			t=$TRASH_DIRECTORY
			if test -n "${HTTP_PORT:-}"; then
				"$GOSBX" mcp --http=127.0.0.1:$HTTP_PORT \
					--token-file="$t/http.token" \
					</dev/null 2>"$t/http.log" &
				srv=$!
				i=0
				until grep -q "listening on" "$t/http.log"; do
					i=$((i + 1))
					test $i -lt 100 || exit 125
					sleep 0.1
				done
			fi
			ANTHROPIC_BASE_URL=$MODEL_URL \
			ANTHROPIC_API_KEY=sk-ant-test-dummy \
			CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
			DISABLE_AUTOUPDATER=1 ENABLE_TOOL_SEARCH=false \
			"$@" </dev/null
			rc=$?
			if test -n "${HTTP_PORT:-}"; then
				kill -TERM $srv
				wait $srv
				echo $? >"$t/http.rc"
			fi
			exit $rc' claude "$CLAUDE" -p \
			"Use run_go_code." --output-format json "$@"
	) >out.json 2>claude.err || {
		cat claude.err out.json >&4
		return 1
	}
}

# results <log>: the tool_result blocks of the last request, one JSON line
# each: {"text": <the content as text>, "is_error": <bool>}
results() {
	node -e '
const fs = require("fs");
const reqs = fs.readFileSync(process.argv[1], "utf8").split("\n")
	.filter(Boolean).map(JSON.parse)
	.filter((r) => (r.body.tools ?? []).some((t) =>
		t.name.startsWith("mcp__")));
const last = reqs[reqs.length - 1].body;
for (const m of last.messages)
	for (const b of Array.isArray(m.content) ? m.content : [])
		if (b.type === "tool_result")
			console.log(JSON.stringify({
				text: typeof b.content === "string" ? b.content
					: b.content.map((c) => c.text).join(""),
				is_error: b.is_error === true }));
' "$1"
}

# nth <n>: the text of result n (1-based), durations masked, raw
nth() {
	sed -n "$1p" results | node -e '
const r = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(r.text.replace(/^(exit=-?[0-9]+  \()[^)]*\)/,
	"$1D)"));
'
}
is_error() {
	sed -n "$1p" results | grep -q "\"is_error\":$2}\$"
}

test_expect_success 'register gosbx user-wide, as the README says' '
	"$CLAUDE" mcp add --scope user gosbx -- "$GOSBX" mcp >add.out 2>&1 &&
	grep "\"gosbx\"" "$HOME/.claude.json"
'

cat >calls.json <<\EOF
[
 {"tool": "mcp__gosbx__run_go_code", "input": {"files": {"note.txt": "kept\n"},
  "command": "printf 'a\\nb\\n'; printf err >&2; exit 3"}},
 {"tool": "mcp__gosbx__run_go_code", "input": {"command": "cat note.txt; echo more >>note.txt"}},
 {"tool": "mcp__gosbx__run_go_code", "input": {"command": "cat note.txt"}},
 {"text": "finished"}
]
EOF

test_expect_success 'three run_go_code calls in one session' '
	claude_p calls.json --allowedTools mcp__gosbx__run_go_code &&
	node -e "
const o = JSON.parse(require(\"fs\").readFileSync(\"out.json\", \"utf8\"));
if (o.result !== \"finished\" || o.is_error) process.exit(1);
" &&
	results requests.log >results &&
	test_line_count = 3 results
'

# The seed's text, byte for byte (Claude Code drops the last newline of
# an isError result, not of the others)
test_expect_success 'the model gets the text of run_go_code, byte for byte' '
	printf "exit=3  (D)\n\n── stdout ──\na\nb\n\n── stderr ──\nerr" >expect &&
	nth 1 >actual &&
	test_cmp expect actual &&
	is_error 1 true &&
	printf "exit=0  (D)\n\n── stdout ──\nkept\n" >expect &&
	nth 2 >actual &&
	test_cmp expect actual &&
	is_error 2 false
'

test_expect_success 'files persist across the calls of the session' '
	printf "exit=0  (D)\n\n── stdout ──\nkept\nmore\n" >expect &&
	nth 3 >actual &&
	test_cmp expect actual &&
	is_error 3 false
'

test_expect_success 'the model sees the seed'"'"'s tool: description and schema' '
	node -e "
const fs = require(\"fs\");
const r = JSON.parse(fs.readFileSync(\"requests.log\", \"utf8\")
	.split(\"\\n\").find((l) => l.includes(\"mcp__gosbx__run_go_code\")));
const t = r.body.tools.find((t) => t.name === \"mcp__gosbx__run_go_code\");
const ok = t.description.includes(\"isolated sandbox\") &&
	t.description.includes(\"rm -rf -- *\") &&
	JSON.stringify(t.input_schema.required) === JSON.stringify([\"command\"]);
process.exit(ok ? 0 : 1);
"
'

test_expect_success 'the session ended with the host: no sandbox left' '
	wait_no_claims
'

cat >timeout.json <<\EOF
[
 {"tool": "mcp__gosbx__run_go_code", "input": {"command": "echo started; exec sleep 4130.5"}},
 {"text": "finished"}
]
EOF

test_expect_success 'a call cut by --call-timeout: the model is told' '
	"$CLAUDE" mcp remove --scope user gosbx >/dev/null 2>&1 &&
	"$CLAUDE" mcp add --scope user gosbx -- "$GOSBX" mcp \
		--call-timeout=1s >add.out 2>&1 &&
	claude_p timeout.json --allowedTools mcp__gosbx__run_go_code &&
	results requests.log >results &&
	printf "exit=-1  (D)  [timed out after 1s]\n\n── stdout ──\nstarted" >expect &&
	nth 1 >actual &&
	test_cmp expect actual &&
	is_error 1 true &&
	! pgrep -f "^sleep 4130.5\$" &&
	wait_no_claims
'

cat >http.json <<\EOF
[
 {"tool": "mcp__gosbx-http__run_go_code", "input": {"command": "echo over http"}},
 {"text": "finished"}
]
EOF

test_expect_success 'over --http with a bearer token, as the README says' '
	HTTP_PORT=$(test_free_port) &&
	export HTTP_PORT GOSBX &&
	head -c 32 /dev/urandom | base64 >http.token &&
	"$CLAUDE" mcp remove --scope user gosbx >/dev/null 2>&1 &&
	"$CLAUDE" mcp add --scope user --transport http gosbx-http \
		"http://127.0.0.1:$HTTP_PORT/mcp" \
		--header "Authorization: Bearer $(cat http.token)" >add.out 2>&1 &&
	claude_p http.json --allowedTools mcp__gosbx-http__run_go_code &&
	test "$(cat http.rc)" = 0 &&
	mcp_no_sanitizer_report http.log &&
	results requests.log >results &&
	printf "exit=0  (D)\n\n── stdout ──\nover http\n" >expect &&
	nth 1 >actual &&
	test_cmp expect actual &&
	wait_no_claims
'

# Issue 21: Claude Code's own limits on a tool call (its bundle: the
# call passes onprogress, so the SDK sends a progressToken):
# - a hard wall-clock limit, the server's "timeout" (ms, at least 1000)
#   or else MCP_TOOL_TIMEOUT (ms; default 100000000, about 28 hours):
#   progress does not extend it;
# - an idle limit, CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT (ms, 0 turns it
#   off; default 30 minutes for a stdio server, 5 for HTTP, at least the
#   server's "timeout"), checked every 30 s: a response or a progress
#   notification starts it anew.
# Scaled: 3 s limits, a silent command, heartbeats off ("before") and
# every second ("after"). At the hard limit, whichever of Claude Code's
# own timer and the SDK's fires first ends the call: the SDK's sends
# notifications/cancelled, Claude Code's does not; either way the server
# kills the command, at the latest when Claude Code exits and closes
# its stdin. The server runs through $MCP_TEE
# (t/lib-mcp.sh), which keeps what the client sent and what the server
# answered.

# claude_slow <heartbeat> <command> <client env>...: gosbx registered
# with heartbeats every <heartbeat>, the model runs <command> with
# run_go_code, Claude Code has the environment <client env>; the
# elapsed ms in ms.<heartbeat>, the tool results in results
claude_slow() {
	_hb=$1
	cat >slow.json <<-EOF &&
	[
	 {"tool": "mcp__gosbx__run_go_code", "input": {"command": "$2"}},
	 {"text": "finished"}
	]
	EOF
	shift 2 &&
	"$CLAUDE" mcp remove --scope user gosbx >/dev/null 2>&1
	"$CLAUDE" mcp remove --scope user gosbx-http >/dev/null 2>&1
	"$CLAUDE" mcp add --scope user gosbx -- "$MCP_TEE" "$_hb" \
		>add.out 2>&1 &&
	rm -f "c2s.$_hb.log" "s2c.$_hb.log" &&
	t0=$(date +%s%3N) &&
	(
		export "$@" &&
		claude_p slow.json --allowedTools mcp__gosbx__run_go_code
	) &&
	echo $(($(date +%s%3N) - t0)) >"ms.$_hb" &&
	echo "# claude, heartbeat $_hb, $*: $(cat "ms.$_hb") ms" >&3 &&
	results requests.log >results &&
	cat results >&3 &&
	test_line_count = 1 results
}

test_expect_success 'hard limit, no heartbeats: dies at MCP_TOOL_TIMEOUT' '
	claude_slow 0 "exec sleep 4130.61" MCP_TOOL_TIMEOUT=3000 &&
	grep "timed out after 3s" results &&
	is_error 1 true &&
	test "$(cat ms.0)" -ge 3000 &&
	test "$(mcp_heartbeats s2c.0.log)" = 0 &&
	wait_gone "sleep 4130.61" &&
	wait_no_claims
'

test_expect_success 'it sends a progressToken with run_go_code' '
	grep "\"name\":\"run_go_code\"" c2s.0.log >call &&
	grep "\"progressToken\":[0-9]" call
'

test_expect_success 'hard limit, heartbeats: dies at 3 s all the same' '
	# every 500 ms: the call also opens the sandbox, which may take
	# a second of the three on a loaded machine
	claude_slow 500ms "exec sleep 4130.62" MCP_TOOL_TIMEOUT=3000 &&
	grep "timed out after 3s" results &&
	is_error 1 true &&
	test "$(cat ms.500ms)" -ge 3000 &&
	test "$(mcp_heartbeats s2c.500ms.log)" -ge 2 &&
	wait_gone "sleep 4130.62" &&
	wait_no_claims
'

test_expect_success 'idle limit, no heartbeats: dies at the 30 s check' '
	claude_slow 0 "exec sleep 4130.63" CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT=3000 &&
	grep "sent no response or progress for [0-9]*s" results &&
	is_error 1 true &&
	test "$(cat ms.0)" -ge 29000 &&
	test "$(mcp_heartbeats s2c.0.log)" = 0 &&
	wait_gone "sleep 4130.63" &&
	wait_no_claims
'

test_expect_success 'idle limit, heartbeats: a silent 33 s call ends well' '
	claude_slow 1s "sleep 33.4130; echo done" \
		CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT=3000 &&
	printf "exit=0  (D)\n\n── stdout ──\ndone\n" >expect &&
	nth 1 >actual &&
	test_cmp expect actual &&
	is_error 1 false &&
	test "$(cat ms.1s)" -ge 33000 &&
	test "$(mcp_heartbeats s2c.1s.log)" -ge 25 &&
	wait_no_claims
'

test_done

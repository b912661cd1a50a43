#!/bin/sh
test_description='gosbx mcp in Gemini CLI: every tool of every toolset'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-mcp.sh"

mcp_hosts_install
GOSBX=$GOSBX_BUILD_DIR/gosbx
GEMINI=$MCP_HOSTS_BIN/gemini
export GOSBX TRASH_DIRECTORY

# Gemini CLI in non-interactive mode against the scripted Gemini API
# (GOOGLE_GEMINI_BASE_URL, a dummy key), usage statistics off, no traffic
# but the model's (mcp_host_run's network namespace). -y approves the
# tool calls. HOME is the trash directory (test-lib).
gemini_p() {
	rm -f requests.log &&
	mkdir -p work &&
	(
		cd work &&
		mcp_host_run gemini "$TRASH_DIRECTORY/$1" \
			"$TRASH_DIRECTORY/requests.log" sh -c '
			GOOGLE_GEMINI_BASE_URL=$MODEL_URL GEMINI_API_KEY=dummy \
			exec "$@" </dev/null' gemini "$GEMINI" -p \
			"Use run_go_code." -y --output-format json
	) >out.json 2>gemini.err || {
		cat gemini.err out.json >&4
		return 1
	}
}

test_expect_success 'register gosbx user-wide, trust the folder' '
	"$GEMINI" mcp add --scope user gosbx "$GOSBX" mcp \
		--tools=go,sandbox,jobs >add.out 2>&1 &&
	mkdir -p work &&
	# Gemini CLI starts no MCP server in a folder it does not trust,
	# user-wide ones included
	printf "{\"%s\": \"TRUST_FOLDER\"}\n" "$TRASH_DIRECTORY/work" \
		>"$HOME/.gemini/trustedFolders.json" &&
	node -e "
const fs = require(\"fs\");
const f = process.env.HOME + \"/.gemini/settings.json\";
const s = JSON.parse(fs.readFileSync(f, \"utf8\"));
s.security = { auth: { selectedType: \"gemini-api-key\" } };
s.privacy = { usageStatisticsEnabled: false };
s.general = { disableAutoUpdate: true, disableUpdateNag: true };
fs.writeFileSync(f, JSON.stringify(s, null, 2));
"
'

cat >calls.json <<\EOF
[
 {"tool": "mcp_gosbx_run_go_code", "input": {"command": "echo hi from gemini"}},
 {"text": "finished"}
]
EOF

test_expect_success 'a run_go_code call' '
	gemini_p calls.json &&
	node -e "
const o = JSON.parse(require(\"fs\").readFileSync(\"out.json\", \"utf8\"));
process.exit(o.response === \"finished\" ? 0 : 1);
"
'

# Gemini CLI's discovery reads the first page of tools/list only
test_expect_success 'the model is offered all 16 tools of the three toolsets' '
	node -e "
const fs = require(\"fs\");
const want = [\"run_go_code\", \"sandbox_start\", \"sandbox_stop\",
	\"sandbox_run_code\", \"sandbox_run_command\", \"sandbox_get_metrics\",
	\"sandbox_exec_start\", \"sandbox_exec_poll\",
	\"sandbox_exec_write_stdin\", \"sandbox_exec_signal\",
	\"sandbox_exec_close\", \"execute_python\", \"execute_javascript\", \"execute_bash\",
	\"check_job_status\", \"get_job_logs\"].map((n) => \"mcp_gosbx_\" + n);
const reqs = fs.readFileSync(\"requests.log\", \"utf8\").split(\"\\n\")
	.filter(Boolean).map(JSON.parse);
const main = reqs.filter((r) => (r.body.tools ?? []).some((t) =>
	(t.functionDeclarations ?? []).some((d) =>
		d.name.startsWith(\"mcp_gosbx_\"))));
if (main.length === 0) process.exit(1);
const got = main[0].body.tools.flatMap((t) => t.functionDeclarations ?? [])
	.map((d) => d.name).filter((n) => n.startsWith(\"mcp_gosbx_\")).sort();
console.log(got.join(\" \"));
process.exit(JSON.stringify(got) === JSON.stringify(want.sort()) ? 0 : 1);
" >&4
'

test_expect_success 'the model gets the text of run_go_code' '
	node -e "
const fs = require(\"fs\");
const reqs = fs.readFileSync(\"requests.log\", \"utf8\").split(\"\\n\")
	.filter(Boolean).map(JSON.parse);
const last = reqs[reqs.length - 1].body;
const fr = last.contents.flatMap((c) => c.parts ?? [])
	.filter((p) => p.functionResponse).map((p) => p.functionResponse);
const out = fr[0].response.output.replace(/^(exit=0  \\()[^)]*\\)/m, \"\$1D)\");
process.stdout.write(out);
" >actual &&
	printf "<untrusted_context>\nexit=0  (D)\n\n── stdout ──\nhi from gemini\n\n</untrusted_context>" >expect &&
	test_cmp expect actual &&
	wait_no_claims
'

# Issue 21: Gemini CLI's own limit on a tool call. It sends a
# progressToken (a UUID in _meta, bundle: McpCallableTool.callTool) and
# shows the progress, but calls with the official SDK's plain `timeout`:
# the server's "timeout" in settings.json mcpServers (ms; default
# MCP_DEFAULT_TIMEOUT_MSEC, 10 minutes), neither reset on progress nor
# raised by it. Scaled: a 3 s timeout and a silent command, heartbeats
# off ("before") and every second ("after"). The server runs through
# $MCP_TEE (t/lib-mcp.sh), which keeps what the client sent and what the
# server answered.

# gemini_slow <heartbeat> <seconds>: a 3 s timeout for gosbx, whose
# heartbeat interval is <heartbeat>; the model runs a silent
# `sleep <seconds>`; the elapsed ms in ms.<heartbeat>
gemini_slow() {
	node -e "
const fs = require(\"fs\");
const f = process.env.HOME + \"/.gemini/settings.json\";
const s = JSON.parse(fs.readFileSync(f, \"utf8\"));
s.mcpServers.gosbx = { command: process.argv[1],
	args: [process.argv[2], \"--tools=go,sandbox,jobs\"],
	timeout: 3000 };
fs.writeFileSync(f, JSON.stringify(s, null, 2));
" "$MCP_TEE" "$1" &&
	cat >slow.json <<-EOF &&
	[
	 {"tool": "mcp_gosbx_run_go_code", "input": {"command": "exec sleep $2"}},
	 {"text": "finished"}
	]
	EOF
	rm -f "c2s.$1.log" "s2c.$1.log" &&
	t0=$(date +%s%3N) &&
	gemini_p slow.json &&
	echo $(($(date +%s%3N) - t0)) >"ms.$1" &&
	echo "# gemini, heartbeat $1: $(cat "ms.$1") ms" >&3
}

# error_of: the function response of the last request, as JSON
error_of() {
	node -e "
const fs = require(\"fs\");
const reqs = fs.readFileSync(\"requests.log\", \"utf8\").split(\"\\n\")
	.filter(Boolean).map(JSON.parse);
const last = reqs[reqs.length - 1].body;
const fr = last.contents.flatMap((c) => c.parts ?? [])
	.filter((p) => p.functionResponse).map((p) => p.functionResponse);
process.stdout.write(JSON.stringify(fr[fr.length - 1].response));
"
}

test_expect_success 'it sends a progressToken with run_go_code' '
	gemini_slow 0 4140.1 &&
	grep "\"name\":\"run_go_code\"" c2s.0.log >call &&
	grep "\"_meta\":{\"progressToken\":\"[0-9a-f-]\{36\}\"}" call
'

test_expect_success 'before (no heartbeats): the call dies at its 3 s timeout' '
	error_of >err.json &&
	grep "Request timed out" err.json &&
	test "$(cat ms.0)" -ge 3000 &&
	test "$(mcp_heartbeats s2c.0.log)" = 0 &&
	wait_gone "sleep 4140.1" &&
	wait_no_claims
'

test_expect_success 'after (heartbeats): it dies at 3 s all the same' '
	# every 500 ms: the call also opens the sandbox, which may take
	# a second of the three on a loaded machine
	gemini_slow 500ms 4140.2 &&
	error_of >err.json &&
	grep "Request timed out" err.json &&
	test "$(cat ms.500ms)" -ge 3000 &&
	test "$(mcp_heartbeats s2c.500ms.log)" -ge 2 &&
	wait_gone "sleep 4140.2" &&
	wait_no_claims
'

test_expect_success 'the client told the server: notifications/cancelled' '
	grep "\"method\":\"notifications/cancelled\"" c2s.0.log &&
	grep "\"method\":\"notifications/cancelled\"" c2s.500ms.log
'

test_done

#!/bin/sh
test_description='gosbx mcp over stdio, driven by the official TypeScript SDK'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-mcp.sh"

# The expected text of a result whose duration was masked.
mask_duration() {
	sed -e '1s/^\(exit=[0-9]*  (\)[^)]*)/\1<duration>)/' "$@"
}
# The first line's duration is in Go's format, rounded to milliseconds.
go_duration() {
	head -n 1 "$1" | grep -E \
		'^exit=[0-9]+  \((0s|[0-9]+ms|([0-9]+h)?([0-9]+m)?[0-9]+(\.[0-9]+)?s)\)'
}

for v in 2024-11-05 2025-03-26 2025-06-18 2025-11-25; do
	test_expect_success "revision $v: initialize, tools/list, setLevel, run_go_code, ping" '
		mcp_client --protocol='$v' info list loglevel debug \
			call run_go_code "{\"command\":\"echo hi\"}" ping \
			-- "$MCP_STDIO" >out 2>err &&
		mcp_check out "r[0].protocolVersion === \"'$v'\"" &&
		mcp_check out "r[0].serverInfo.name === \"gosbx\"" &&
		mcp_check out "r[0].capabilities.tools !== undefined" &&
		mcp_check out "r[1].result.tools.some((t) =>
			t.name === \"run_go_code\" &&
			t.inputSchema.required.includes(\"command\"))" &&
		mcp_check out "r[2].ok && r[4].ok" &&
		mcp_check out "r[3].ok && r[3].result.isError === false" &&
		mcp_check out "text(3).includes(\"\\n\" + H(\"stdout\") + \"\\nhi\\n\")" &&
		mcp_check out "errs.length === 0" &&
		wait_no_claims
	'
done

test_expect_success 'the lifecycle lines of run_go_code go to stderr' '
	n=$(wc -l <stdio.log) &&
	mcp_client call run_go_code "{\"command\":\"true\"}" \
		-- "$MCP_STDIO" >out 2>client.err &&
	tail -n +$((n + 1)) stdio.log >err &&
	mcp_check out "r[0].ok && text(0).startsWith(\"exit=0  (\")" &&
	test_grep "^opening sandbox (namespace=default template=go-runtime-template claim=\"\")\$" err &&
	test_grep "^sandbox open: claim=." err &&
	name=$(sed -n "s/^sandbox open: claim=//p" err) &&
	test_grep "^closing (deleting sandbox $name)\$" err &&
	wait_no_claims
'

test_expect_success '2026-07-28: the v2 client pinned to it (server/discover)' '
	mcp_client --protocol=2026-07-28 info list \
		call run_go_code "{\"command\":\"echo modern\"}" \
		-- "$MCP_STDIO" >out 2>err &&
	mcp_check out "r[0].sdk === \"v2\" &&
		r[0].protocolVersion === \"2026-07-28\"" &&
	mcp_check out "r[1].result.tools.some((t) => t.name === \"run_go_code\")" &&
	mcp_check out "r[2].ok && r[2].result.isError === false &&
		text(2).includes(H(\"stdout\") + \"\\nmodern\\n\")" &&
	wait_no_claims
'

test_expect_success '2026-07-28: the v2 client in auto mode picks it' '
	mcp_client --negotiate=auto info -- "$MCP_STDIO" >out 2>err &&
	mcp_check out "r[0].protocolVersion === \"2026-07-28\""
'

test_expect_success 'result text byte for byte; non-zero exit is isError' '
	cat >args.json <<-\EOF &&
	{"command":"printf '"'"'a\\nb\\n'"'"'; printf err >&2; exit 3"}
	EOF
	mcp_client --save-text=actual call run_go_code @args.json \
		-- "$MCP_STDIO" >out 2>err &&
	mcp_check out "r[0].ok && r[0].result.isError === true" &&
	cat >expect <<-\EOF &&
	exit=3  (<duration>)

	── stdout ──
	a
	b

	── stderr ──
	err
	EOF
	go_duration actual &&
	mask_duration actual >masked &&
	test_cmp expect masked
'

test_expect_success 'by default the result is the text alone' '
	mcp_client --protocol=2025-06-18 list \
		call run_go_code "{\"command\":\"echo t\"}" \
		-- "$MCP_STDIO" >out 2>err &&
	mcp_check out "r[0].result.tools.every((t) =>
		t.outputSchema === undefined)" &&
	mcp_check out "r[1].ok && r[1].result.structuredContent === undefined &&
		JSON.stringify(r[1].result.content) === JSON.stringify([{
			type: \"text\", text: text(1) }])"
'

test_expect_success '--structured-content: the SDK accepts it (outputSchema)' '
	mcp_client --protocol=2025-06-18 list \
		call run_go_code "{\"command\":\"echo s; exit 5\"}" \
		call run_go_code "{\"command\":\"echo t\"}" \
		-- "$MCP_STDIO" --structured-content >out 2>err &&
	mcp_check out "r[0].result.tools.find((t) =>
		t.name === \"run_go_code\").outputSchema.type === \"object\"" &&
	mcp_check out "r[1].ok && r[1].result.isError === true" &&
	mcp_check out "r[2].ok && r[2].result.isError === false &&
		typeof r[2].result.structuredContent === \"object\""
'

test_expect_success 'invalid arguments are tool errors, the server lives on' '
	mcp_client call run_go_code "{}" \
		call run_go_code "{\"command\":\"\"}" \
		call run_go_code "{\"command\":5}" \
		call run_go_code "{\"command\":\"true\",\"bogus\":1}" \
		call run_go_code "{\"command\":\"true\",\"files\":{\"../x\":\"y\"}}" \
		call run_go_code "{\"command\":\"true\",\"files\":{\"/etc/x\":\"y\"}}" \
		call run_go_code "{\"command\":\"true\",\"files\":{\"a\":5}}" \
		call run_go_code "{\"command\":\"echo alive\"}" \
		-- "$MCP_STDIO" >out 2>err &&
	mcp_check out "r.length === 8" &&
	mcp_check out "r.slice(0, 7).every((s) => s.ok &&
		s.result.isError === true && s.result.content[0].text !== \"\")" &&
	mcp_check out "r[7].ok && r[7].result.isError === false &&
		text(7).includes(\"alive\")"
'

test_expect_success 'an unknown tool is an error the SDK reports' '
	mcp_client call no_such_tool "{}" \
		call run_go_code "{\"command\":\"echo alive\"}" \
		-- "$MCP_STDIO" >out 2>err
	mcp_check out "r.length === 2" &&
	mcp_check out "(!r[0].ok && r[0].error.code === -32602) ||
		(r[0].ok && r[0].result.isError === true)" &&
	mcp_check out "r[1].ok && text(1).includes(\"alive\")"
'

# The SDK handles notifications in a microtask and an answer at once: a
# progress notification read in one chunk with the answer of its request
# is "unknown" to it (onerror), and a host may drop the connection on it.
test_expect_success '100 calls with a progressToken: no client error' '
	i=0 &&
	set -- &&
	while test $i -lt 100
	do
		i=$((i + 1)) &&
		set -- "$@" --progress call run_go_code "{\"command\":\"echo $i\"}" ||
		return 1
	done &&
	mcp_client "$@" -- "$MCP_STDIO" >out 2>err &&
	mcp_check out "r.length === 100 && r.every((s, i) => s.ok &&
		!s.result.isError && s.progress.length > 0 &&
		text(i).endsWith(\"\\n\" + (i + 1) + \"\\n\"))" &&
	mcp_check out "errs.length === 0"
'

test_expect_success 'progress notifications arrive before the result' '
	mcp_client --progress call run_go_code \
		"{\"command\":\"for i in 1 2 3 4 5; do echo line\$i; sleep 0.3; done\"}" \
		-- "$MCP_STDIO" >out 2>err &&
	mcp_check out "r[0].ok && r[0].progress.length > 0" &&
	mcp_check out "r[0].progress.some((p) =>
		/running|line[1-5]/.test(p.message ?? \"\"))" &&
	mcp_check out "r[0].progress.every((p, i, a) =>
		i === 0 || p.progress > a[i - 1].progress)" &&
	mcp_check out "errs.length === 0"
'

test_expect_success '2024-11-05: progress without message' '
	mcp_client --protocol=2024-11-05 --progress call run_go_code \
		"{\"command\":\"for i in 1 2 3; do echo line\$i; sleep 0.3; done\"}" \
		-- "$MCP_STDIO" >out 2>err &&
	mcp_check out "r[0].ok && r[0].progress.length > 0" &&
	mcp_check out "r[0].progress.every((p) => p.message === undefined)"
'

test_expect_success 'an aborted call (AbortSignal) kills its process' '
	echo "{\"command\":\"sleep 4100.654\"}" >sleep.json &&
	mcp_client_bg abort --abort-on=abort-now call run_go_code @sleep.json \
		call run_go_code "{\"command\":\"echo after\"}" \
		-- "$MCP_STDIO" &&
	wait_running "sleep 4100.654" &&
	>abort-now &&
	test_expect_code 1 mcp_client_wait abort &&
	mcp_check abort.out "!r[0].ok && r[1].ok &&
		text(1).includes(\"after\")" &&
	mcp_check abort.out "errs.length === 0" &&
	wait_gone "sleep 4100.654" &&
	wait_no_claims
'

test_expect_success 'a call that times out in the SDK is cancelled' '
	mcp_client call run_go_code "{\"command\":\"true\"}" \
		--timeout=2000 call run_go_code "{\"command\":\"sleep 4100.321\"}" \
		call run_go_code "{\"command\":\"echo after\"}" \
		-- "$MCP_STDIO" >out 2>err
	test $? = 1 &&
	mcp_check out "!r[1].ok && r[1].error.code === -32001" &&
	mcp_check out "r[2].ok && text(2).includes(\"after\")" &&
	mcp_check out "errs.length === 0" &&
	wait_gone "sleep 4100.321" &&
	wait_no_claims
'

test_expect_success 'a killed client: the command and the sandbox go' '
	echo "{\"command\":\"sleep 4100.111\"}" >sleep.json &&
	mcp_client_bg killed call run_go_code @sleep.json -- "$MCP_STDIO" &&
	wait_running "sleep 4100.111" &&
	server=$(pgrep -P "$(cat killed.pid)") &&
	test -n "$server" &&
	kill -9 "$(cat killed.pid)" &&
	wait_gone "sleep 4100.111" &&
	mcp_poll 30 eval "! kill -0 $server 2>/dev/null" &&
	wait_no_claims
'

test_expect_success '10 MB of output: the SDK takes the truncated answer' '
	cat >args.json <<-\EOF &&
	{"command":"head -c 10000000 /dev/zero | tr '"'"'\\0'"'"' a"}
	EOF
	mcp_client --save-text=actual --timeout=300000 call run_go_code @args.json \
		-- "$MCP_STDIO" >out 2>err &&
	mcp_check out "r[0].ok && r[0].result.isError === false" &&
	mcp_check out "errs.length === 0" &&
	go_duration actual &&
	head -n 1 actual | grep "  \[truncated: stdout\]\$" &&
	test $(wc -c <actual) -lt 20000
'

# Known breakage: lib/session/session.c keeps only the first 8 MiB of a stream
# (STREAM_CAP) and run_go_code truncates what it kept, so it says
# "[8372224 bytes elided]" and its tail is the end of the first 8 MiB,
# not of the output (Documentation/protocol/mcp.md: N = bytes removed).
test_expect_success '10 MB of output: head and tail with the elided count' '
	{
		printf "exit=0  (<duration>)  [truncated: stdout]\n\n" &&
		printf "── stdout ──\n" &&
		head -c 8192 /dev/zero | tr "\0" a &&
		printf "\n... [9983616 bytes elided] ...\n" &&
		head -c 8192 /dev/zero | tr "\0" a &&
		printf "\n"
	} >expect &&
	mask_duration actual >masked &&
	test_cmp expect masked
'

# 10,888,896 bytes of numbers: the tail must be the end of the output
# (the same known breakage: the tail shown is 1187464)
test_expect_success '10 MB of numbers: the head is the start of the output' '
	mcp_client --timeout=300000 call run_go_code "{\"command\":\"seq 1 1500000\"}" \
		-- "$MCP_STDIO" >seq.out 2>err &&
	mcp_check seq.out "r[0].ok && r[0].result.isError === false" &&
	mcp_check seq.out "text(0).split(\"\\n\")[0].endsWith(
		\")  [truncated: stdout]\")" &&
	mcp_check seq.out "text(0).includes(
		\"\\n\" + H(\"stdout\") + \"\\n1\\n2\\n3\\n\")"
'

test_expect_success '10 MB of numbers: the tail is the end of the output' '
	mcp_check seq.out "text(0).includes(
		\"\\n... [10872512 bytes elided] ...\\n\")" &&
	mcp_check seq.out "text(0).endsWith(\"\\n1499999\\n1500000\\n\")"
'

test_expect_success GO 'a Go program: files, go run' '
	cat >args.json <<-\EOF &&
	{"files": {"go.mod": "module hello\n\ngo 1.19\n",
	  "main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello from go\") }\n"},
	 "command": "go run main.go"}
	EOF
	mcp_client --timeout=300000 call run_go_code @args.json \
		-- "$MCP_STDIO" >out 2>err &&
	mcp_check out "r[0].ok && r[0].result.isError === false &&
		text(0).includes(H(\"stdout\") + \"\\nhello from go\\n\")"
'

test_expect_success 'the jobs toolset (--tools=go,sandbox,jobs)' '
	mcp_client list \
		call execute_bash "{\"script\":\"echo hi from bash\"}" \
		call execute_bash "{\"script\":\"echo oops >&2; exit 4\"}" \
		call execute_python "{\"code\":\"print(6*7)\"}" \
		call execute_javascript "{\"code\":\"console.log(6*7)\"}" \
		call execute_bash "{\"script\":\"sleep 0.5; echo later\",\"wait\":false}" \
		until check_job_status "{\"job_id\":\"{{job_id}}\"}" "completed" \
		call get_job_logs "{\"job_id\":\"{{job_id}}\"}" \
		call check_job_status "{\"job_id\":\"no-such-job\"}" \
		call execute_bash "{}" \
		-- "$MCP_STDIO" --tools=go,sandbox,jobs >out 2>err &&
	mcp_check out "[\"run_go_code\", \"sandbox_start\", \"sandbox_stop\",
		\"sandbox_run_code\", \"sandbox_run_command\",
		\"sandbox_get_metrics\", \"execute_python\",
		\"execute_javascript\", \"execute_bash\", \"check_job_status\",
		\"get_job_logs\"].every((n) =>
			r[0].result.tools.some((t) => t.name === n))" &&
	mcp_check out "r[1].ok && !r[1].result.isError &&
		text(1).includes(\"hi from bash\")" &&
	mcp_check out "r[2].ok && r[2].result.isError === true &&
		text(2).includes(\"oops\")" &&
	mcp_check out "r[3].ok && !r[3].result.isError && text(3).includes(\"42\")" &&
	mcp_check out "r[4].ok && !r[4].result.isError && text(4).includes(\"42\")" &&
	mcp_check out "r[5].ok && !r[5].result.isError &&
		/^job \\S+ submitted/.test(text(5))" &&
	mcp_check out "r[6].ok" &&
	mcp_check out "r[7].ok && !r[7].result.isError && text(7).includes(\"later\")" &&
	mcp_check out "r[8].ok && r[8].result.isError === true" &&
	mcp_check out "r[9].ok && r[9].result.isError === true" &&
	mcp_check out "errs.length === 0" &&
	wait_no_claims
'

test_expect_success 'background commands of the sandbox toolset (sandbox_exec_*)' '
	sb="\"sandbox\":\"bg\",\"namespace\":\"default\"" &&
	mcp_client list \
		call sandbox_start "{$sb}" \
		call sandbox_exec_start "{$sb,\"command\":\"cat\",\"stdin\":true}" \
		call sandbox_exec_write_stdin "{$sb,\"exec_id\":\"{{exec_id}}\",\"data\":\"via the sdk\\n\",\"eof\":true}" \
		until sandbox_exec_poll "{$sb,\"exec_id\":\"{{exec_id}}\",\"wait\":2}" "state=exited  exit=0" \
		call sandbox_exec_close "{$sb,\"exec_id\":\"{{exec_id}}\"}" \
		call sandbox_exec_poll "{$sb,\"exec_id\":\"{{exec_id}}\"}" \
		call sandbox_stop "{$sb}" \
		-- "$MCP_STDIO" --tools=sandbox --structured-content >out 2>err &&
	mcp_check out "r[0].result.tools.some((t) =>
		t.name === \"sandbox_exec_poll\" && t.outputSchema)" &&
	mcp_check out "r[2].ok && !r[2].result.isError &&
		/^j[0-9a-f]{12}$/.test(r[2].result.structuredContent.exec_id)" &&
	mcp_check out "r[3].ok && !r[3].result.isError" &&
	mcp_check out "r[4].ok && r[4].result.structuredContent.stdout ===
		\"via the sdk\\n\" && r[4].result.structuredContent.exit_code === 0" &&
	mcp_check out "r[5].ok && !r[5].result.isError" &&
	mcp_check out "r[6].ok && r[6].result.isError === true &&
		text(6).includes(\"unknown exec id\")" &&
	mcp_check out "r[7].ok && !r[7].result.isError" &&
	mcp_check out "errs.length === 0" &&
	wait_no_claims
'

test_expect_success 'no server printed a sanitizer report' '
	mcp_no_sanitizer_report stdio.log
'

test_done

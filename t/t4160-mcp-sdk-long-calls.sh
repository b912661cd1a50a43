#!/bin/sh
test_description='gosbx mcp: long silent calls through the official SDK (heartbeats, timeout)'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-mcp.sh"

# Issue 21: a command that prints nothing sent no notification, so the
# official TypeScript SDK's request timeout (60 s by default) killed the
# call even with resetTimeoutOnProgress. The server now sends a progress
# ("running, <s> s") whenever a call with a progressToken was silent for
# the heartbeat interval (5 s; GOSBX_MCP_HEARTBEAT here). The scaled
# cases use a 1 s heartbeat and a 3 s client timeout; the last case is
# the real one: a silent 90 s command with the SDK's default timeout
# (it takes 90 s).

T='"sandbox":"a","namespace":"t"'
START="call sandbox_start {$T}"

# run <client options and steps>: one sandbox_start, then the steps,
# against a stdio server of the sandbox toolset
run() {
	mcp_client $START "$@" -- "$MCP_STDIO" --tools=sandbox,go,jobs
}

test_expect_success 'scaled: a silent 6 s command lives through a 3 s timeout reset on progress' '
	GOSBX_MCP_HEARTBEAT=1s run --progress --reset-timeout-on-progress \
		--timeout=3000 call sandbox_run_command \
		"{$T,\"command\":\"sleep 6\"}" >out 2>err &&
	mcp_check out "r[1].ok && r[1].result.isError === false &&
		text(1).startsWith(\"exit=0  (\")" &&
	mcp_check out "r[1].progress.filter((p) =>
		/^running, [0-9]+ s$/.test(p.message)).length >= 3" &&
	mcp_check out "r[1].progress.every((p, i, a) =>
		i === 0 || p.progress > a[i - 1].progress)" &&
	mcp_check out "r[1].progress.every((p, i, a) =>
		(i === 0 ? p.ms : p.ms - a[i - 1].ms) < 3000)" &&
	mcp_check out "r[1].ms >= 6000 && errs.length === 0" &&
	wait_no_claims
'

test_expect_success 'scaled: heartbeats and output lines interleave, values grow' '
	GOSBX_MCP_HEARTBEAT=1s run --progress --reset-timeout-on-progress \
		--timeout=3000 call sandbox_run_command \
		"{$T,\"command\":\"echo a; sleep 2.5; echo b; sleep 2.5\"}" \
		>out 2>err &&
	mcp_check out "r[1].ok && r[1].result.isError === false" &&
	mcp_check out "r[1].progress.some((p) => /^running, /.test(p.message))" &&
	mcp_check out "r[1].progress.every((p, i, a) =>
		i === 0 || p.progress > a[i - 1].progress)" &&
	mcp_check out "errs.length === 0"
'

test_expect_success 'scaled, before: without a progressToken the call dies at the timeout' '
	GOSBX_MCP_HEARTBEAT=1s run --reset-timeout-on-progress --timeout=3000 \
		call sandbox_run_command "{$T,\"command\":\"sleep 4160.1$$\"}" \
		>out 2>err
	test $? = 1 &&
	mcp_check out "!r[1].ok && r[1].error.code === -32001 &&
		/timed out/i.test(r[1].error.message)" &&
	mcp_check out "r[1].ms >= 3000 && r[1].ms < 10000" &&
	wait_gone "sleep 4160.1$$" &&
	wait_no_claims
'

test_expect_success 'scaled, before: heartbeats off (GOSBX_MCP_HEARTBEAT=0), as before issue 21' '
	GOSBX_MCP_HEARTBEAT=0 run --progress --reset-timeout-on-progress \
		--timeout=3000 call sandbox_run_command \
		"{$T,\"command\":\"sleep 4160.2$$\"}" >out 2>err
	test $? = 1 &&
	mcp_check out "!r[1].ok && r[1].error.code === -32001" &&
	mcp_check out "!r[1].progress.some((p) => /^running, /.test(p.message))" &&
	wait_gone "sleep 4160.2$$" &&
	wait_no_claims
'

test_expect_success 'scaled: run_go_code gets heartbeats too' '
	GOSBX_MCP_HEARTBEAT=1s run --progress --reset-timeout-on-progress \
		--timeout=3000 call run_go_code "{\"command\":\"sleep 5\"}" \
		>out 2>err &&
	mcp_check out "r[1].ok && r[1].result.isError === false" &&
	mcp_check out "r[1].progress.filter((p) =>
		/^running, /.test(p.message)).length >= 2" &&
	mcp_check out "errs.length === 0" &&
	wait_no_claims
'

# jobs need their 512 MiB limit (t4040): where it cannot be applied they
# fail closed (JOBS, t/lib-backend.sh)
test_expect_success JOBS 'scaled: a waited-for job gets heartbeats too' '
	GOSBX_MCP_HEARTBEAT=1s run --progress --reset-timeout-on-progress \
		--timeout=3000 call execute_bash "{\"script\":\"sleep 5\"}" \
		>out 2>err &&
	mcp_check out "r[1].ok && r[1].result.isError === false" &&
	mcp_check out "r[1].progress.filter((p) =>
		/^running, /.test(p.message)).length >= 2" &&
	mcp_check out "errs.length === 0" &&
	wait_no_claims
'

test_expect_success 'scaled, HTTP: the SSE stream carries the heartbeats' '
	(
		GOSBX_MCP_HEARTBEAT=1s &&
		export GOSBX_MCP_HEARTBEAT &&
		mcp_http_start --name=hb --tools=sandbox
	) &&
	mcp_client --url="$(cat hb.url)" --token-file=hb.token $START \
		--progress --reset-timeout-on-progress --timeout=3000 \
		call sandbox_run_command "{$T,\"command\":\"sleep 6\"}" \
		--timeout=3000 \
		call sandbox_run_command "{$T,\"command\":\"sleep 4160.7$$\"}" \
		>out 2>err
	test $? = 1 &&
	mcp_check out "r[1].ok && r[1].result.isError === false &&
		r[1].progress.filter((p) =>
			/^running, [0-9]+ s$/.test(p.message)).length >= 3" &&
	mcp_check out "!r[2].ok && r[2].error.code === -32001" &&
	mcp_check out "errs.length === 0" &&
	wait_gone "sleep 4160.7$$" &&
	mcp_http_stop hb &&
	wait_no_claims
'

test_expect_success 'a bad GOSBX_MCP_HEARTBEAT is a usage error' '
	GOSBX_MCP_HEARTBEAT=often test_expect_code_err 129 gosbx mcp </dev/null &&
	test_grep "GOSBX_MCP_HEARTBEAT" err
'

test_expect_success 'timeout argument: a short one kills the command, reason=timeout' '
	run call sandbox_run_command \
		"{$T,\"command\":\"sleep 4160.3$$\",\"timeout\":1}" \
		call sandbox_run_code \
		"{$T,\"language\":\"bash\",\"code\":\"sleep 4160.4$$\",\"timeout\":\"1500ms\"}" \
		call run_go_code "{\"command\":\"sleep 4160.5$$\",\"timeout\":1}" \
		>out 2>err &&
	mcp_check out "[1, 2].every((i) => r[i].ok && r[i].result.isError &&
		/^exit=-?[0-9]+  \\([0-9]+ms\\)  reason=timeout/.test(text(i)))" &&
	mcp_check out "r[3].ok && r[3].result.isError &&
		text(3).includes(\"[timed out after 1s]\")" &&
	mcp_check out "r.slice(1).every((s) => s.ms < 60000)" &&
	wait_gone "sleep 4160.3$$" && wait_gone "sleep 4160.4$$" &&
	wait_gone "sleep 4160.5$$" &&
	wait_no_claims
'

test_expect_success JOBS 'timeout argument: a job cut by it failed with reason timeout' '
	run call execute_bash "{\"script\":\"sleep 4160.6$$\",\"timeout\":1}" \
		>out 2>err &&
	mcp_check out "r[1].ok && r[1].result.isError &&
		/failed/.test(text(1)) && /timeout/.test(text(1)) &&
		r[1].ms < 60000" &&
	wait_gone "sleep 4160.6$$" &&
	wait_no_claims
'

test_expect_success 'timeout argument: above --call-timeout is refused, naming the limit' '
	mcp_client $START call sandbox_run_command \
		"{$T,\"command\":\"echo no\",\"timeout\":120}" \
		call run_go_code "{\"command\":\"echo no\",\"timeout\":\"2m\"}" \
		call execute_python "{\"code\":\"print(1)\",\"timeout\":61}" \
		call sandbox_run_command "{$T,\"command\":\"echo no\",\"timeout\":0}" \
		call sandbox_run_command "{$T,\"command\":\"echo yes\",\"timeout\":60}" \
		-- "$MCP_STDIO" --tools=sandbox,go,jobs --call-timeout=1m \
		>out 2>err &&
	mcp_check out "[1, 2, 3].every((i) => r[i].ok && r[i].result.isError &&
		text(i).includes(\"above this server'"'"'s limit of 60 s \" +
			\"(gosbx mcp --call-timeout)\"))" &&
	mcp_check out "!text(1).includes(\"no\\n\") && !text(2).includes(\"no\\n\")" &&
	mcp_check out "r[4].result.isError &&
		text(4).startsWith(\"argument '"'"'timeout'"'"' must be\")" &&
	mcp_check out "r[5].ok && !r[5].result.isError &&
		text(5).includes(\"yes\")" &&
	wait_no_claims
'

test_expect_success 'tools that run a command declare the timeout argument' '
	mcp_client list -- "$MCP_STDIO" --tools=go,sandbox,jobs >out 2>err &&
	mcp_check out "[\"run_go_code\", \"sandbox_run_code\",
		\"sandbox_run_command\", \"execute_python\",
		\"execute_javascript\", \"execute_bash\"].every((n) =>
		r[0].result.tools.find((t) => t.name === n)
			.inputSchema.properties.timeout.type === \"number\")"
'

# The real thing, both sides at once (one server each): the SDK's
# default 60 s timeout, the default 5 s heartbeat, a silent 90 s sleep.
# On local only: the heartbeats are gosbx mcp's own, whatever the
# backend, and the scaled cases above show them through url (t4161),
# fake-kube (t6218) and the real control plane (t6654) in seconds; the
# 90 s proof once is enough, and CI's time is kept short.
test_expect_success LOCAL 'real: a silent 90 s command; with reset on progress it succeeds, without it dies at 60 s' '
	mcp_client_bg with $START --progress --reset-timeout-on-progress \
		call sandbox_run_command "{$T,\"command\":\"sleep 90.416$$\"}" \
		-- "$MCP_STDIO" --tools=sandbox &&
	mcp_client_bg without $START \
		call sandbox_run_command "{$T,\"command\":\"sleep 90.417$$\"}" \
		-- "$MCP_STDIO" --tools=sandbox &&
	test_expect_code 1 mcp_client_wait without &&
	mcp_client_wait with &&
	mcp_check without.out "!r[1].ok && r[1].error.code === -32001 &&
		r[1].ms >= 60000 && r[1].ms < 90000" &&
	mcp_check with.out "r[1].ok && r[1].result.isError === false &&
		text(1).startsWith(\"exit=0  (\") && r[1].ms >= 90000" &&
	mcp_check with.out "r[1].progress.filter((p) =>
		/^running, [0-9]+ s$/.test(p.message)).length >= 15" &&
	mcp_check with.out "r[1].progress.every((p, i, a) =>
		(i === 0 ? p.ms : p.ms - a[i - 1].ms) < 10000 &&
		(i === 0 || p.progress > a[i - 1].progress))" &&
	mcp_check with.out "errs.length === 0" &&
	wait_gone "sleep 90.417$$" &&
	wait_no_claims
'

test_done

#!/bin/sh
test_description='gosbx mcp: tasks (revision 2025-11-25) through the official SDK'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-mcp.sh"

# Issue 21: a tools/call that carries "task" answers at once with a task;
# the client polls tasks/get and fetches the result with tasks/result,
# from any connection of its MCP session. The client is the official
# TypeScript SDK's client.experimental.tasks (t/mcp-client/client.mjs:
# task, tstart, tget, twait, tresult, tlist, tcancel). The raw wire
# (malformed params, unknown ids, 2026-07-28) is in t4000.

T='"sandbox":"a","namespace":"t"'
START="call sandbox_start {$T}"
P=--protocol=2025-11-25

# client options for the server "srv"
http() {
	mcp_client --url="$(cat "$TRASH_DIRECTORY/srv.url")" \
		--token-file="$TRASH_DIRECTORY/srv.token" $P "$@"
}

test_expect_success 'stdio: the capability, taskSupport, a task of a short command' '
	mcp_client $P info list $START task sandbox_run_command \
		"{$T,\"command\":\"echo short\"}" \
		-- "$MCP_STDIO" --tools=sandbox >out 2>err &&
	mcp_check out "r[0].capabilities.tasks.requests.tools.call &&
		r[0].capabilities.tasks.list && r[0].capabilities.tasks.cancel" &&
	mcp_check out "r[1].result.tools.every((t) =>
		t.execution.taskSupport === \"optional\")" &&
	mcp_check out "r[3].ok && r[3].events[0].type === \"taskCreated\" &&
		r[3].events.at(-1).type === \"result\"" &&
	mcp_check out "text(3).startsWith(\"exit=0  (\") &&
		/short/.test(text(3))" &&
	mcp_check out "r[3].result._meta[\"io.modelcontextprotocol/related-task\"]
		.taskId.length === 32" &&
	mcp_check out "errs.length === 0" &&
	wait_no_claims
'

test_expect_success 'stdio: a failing command ends the task failed; tasks/result has its output' '
	mcp_client $P $START tstart sandbox_run_command \
		"{$T,\"command\":\"echo out; exit 3\"}" \
		twait "{{task_id}}" failed tresult "{{task_id}}" \
		-- "$MCP_STDIO" --tools=sandbox >out 2>err &&
	mcp_check out "r[2].result.status === \"failed\"" &&
	mcp_check out "r[3].result.isError === true &&
		text(3).startsWith(\"exit=3  (\") && /out/.test(text(3))" &&
	wait_no_claims
'

test_expect_success 'start gosbx mcp --http with the sandbox toolset' '
	mcp_http_start --tools=sandbox
'

test_expect_success 'http: a long command: working, then completed, listed, its result' '
	http $START tstart sandbox_run_command \
		"{$T,\"command\":\"sleep 3; echo late\"}" \
		tget "{{task_id}}" tlist twait "{{task_id}}" completed \
		tresult "{{task_id}}" >out 2>err &&
	mcp_check out "r[1].result.task.status === \"working\" &&
		/^[0-9a-f]{32}$/.test(r[1].result.task.taskId) &&
		r[1].result.task.ttl === 60000" &&
	mcp_check out "r[2].result.status === \"working\" &&
		r[2].result.taskId === r[1].result.task.taskId" &&
	mcp_check out "r[3].result.tasks.some((t) =>
		t.taskId === r[1].result.task.taskId)" &&
	mcp_check out "r[4].ok && r[5].ok && text(5).startsWith(\"exit=0  (\") &&
		/late/.test(text(5))" &&
	wait_no_claims
'

test_expect_success 'http: tasks/cancel of a running sleep from another connection' '
	mcp_client_bg c1 --url="$(cat srv.url)" --token-file=srv.token $P \
		--task-file=tid info $START tstart sandbox_run_command \
		"{$T,\"command\":\"sleep 4170.1$$\"}" \
		twait "{{task_id}}" cancelled &&
	wait_running "sleep 4170.1$$" &&
	sid=$(mcp_get c1.out "r[0].sessionId") &&
	# another session cannot cancel it, nor see it
	test_expect_code 1 http tcancel @tid tget @tid tlist >other 2>err &&
	mcp_check other "!r[0].ok && r[0].error.code === -32602 &&
		!r[1].ok && r[1].error.code === -32602 &&
		r[2].result.tasks.length === 0" &&
	# the same session, on a new connection, can
	http --session-id="$sid" --no-terminate tcancel @tid >cancel 2>err &&
	mcp_check cancel "r[0].result.status === \"cancelled\"" &&
	wait_gone "sleep 4170.1$$" &&
	mcp_client_wait c1 &&
	mcp_check c1.out "r[3].ok && r[3].result.status === \"cancelled\"" &&
	wait_no_claims
'

test_expect_success 'http: the client goes away mid-task; its session still gets the result' '
	http --no-terminate --task-file=tid2 info $START \
		tstart sandbox_run_command \
		"{$T,\"command\":\"sleep 2; echo survived\"}" >c2 2>err &&
	mcp_check c2 "r[2].result.task.status === \"working\"" &&
	sid=$(mcp_get c2 "r[0].sessionId") &&
	test_expect_code 1 http tresult @tid2 tget @tid2 >other 2>err &&
	mcp_check other "!r[0].ok && r[0].error.code === -32602 &&
		!r[1].ok && r[1].error.code === -32602" &&
	http --session-id="$sid" tresult @tid2 tget @tid2 >back 2>err &&
	mcp_check back "r[0].ok && text(0).startsWith(\"exit=0  (\") &&
		/survived/.test(text(0)) &&
		r[0].result._meta[\"io.modelcontextprotocol/related-task\"]
		.taskId === \"$(cat tid2)\"" &&
	mcp_check back "r[1].result.status === \"completed\"" &&
	wait_no_claims
'

# the command outlives curl's 1 s by far: a node client slow to start
# under load must not let the task end before curl gives up
test_expect_success 'http: a tasks/result whose connection drops before the end' '
	http --no-terminate --task-file=tid3 info $START \
		tstart sandbox_run_command \
		"{$T,\"command\":\"sleep 8; echo waited\"}" >c3 2>err &&
	sid=$(mcp_get c3 "r[0].sessionId") &&
	test_expect_code 28 $MCP_IN curl -s --max-time 1 -X POST \
		-H "Authorization: Bearer $(cat srv.token)" \
		-H "Mcp-Session-Id: $sid" -H "MCP-Protocol-Version: 2025-11-25" \
		-H "Content-Type: application/json" \
		-H "Accept: application/json, text/event-stream" \
		--data "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tasks/result\",\"params\":{\"taskId\":\"$(cat tid3)\"}}" \
		"$(cat srv.url)" &&
	http --session-id="$sid" tresult @tid3 >back 2>err &&
	mcp_check back "r[0].ok && /waited/.test(text(0))" &&
	wait_no_claims
'

test_expect_success 'stop the server' '
	mcp_http_stop
'

test_done

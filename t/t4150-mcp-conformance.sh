#!/bin/sh
test_description='gosbx mcp --http against the official MCP conformance suite'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-mcp.sh"

mcp_hosts_install

# The server scenarios of @modelcontextprotocol/conformance that apply to
# a server of tools only. The others do not apply:
#   completion-complete, resources-*, prompts-*: capabilities gosbx does
#     not offer (tools only);
#   tools-call-* (simple-text, image, audio, embedded-resource,
#     mixed-content, with-logging, error, with-progress, sampling,
#     elicitation), elicitation-sep1034-defaults, elicitation-sep1330-enums,
#     json-schema-2020-12, server-sse-polling: they call the test tools of
#     the suite's reference server (test_simple_text, test_reconnection,
#     ...), which a real server does not have; gosbx's progress, logging
#     and errors are tested with the SDK (t4100, t4110).
# The suite (0.1.13) has no scenario for tasks (2025-11-25): t4170 tests
# them with the SDK's client, t4000 on the raw wire. The task scenarios of
# 0.2.0-alpha.12 (tasks-lifecycle, sep-2663-*, ...) test SEP-2663's tasks
# extension instead: io.modelcontextprotocol/tasks under
# capabilities.extensions, with tasks/result and tasks/list removed
# (tasks-removed-tasks-list, sep-2663-tasks-result-removed-method-not-found),
# which 2025-11-25's tasks capability, what gosbx serves, has; and it needs
# Node.js 22.
# The suite sends no Authorization header: the server runs with --dev.
scenarios='server-initialize logging-set-level ping tools-list
server-sse-multiple-streams dns-rebinding-protection'

test_expect_success 'start gosbx mcp --http --dev with every toolset' '
	port=$(test_free_port) &&
	(
		gosbx mcp --http="127.0.0.1:$port" --dev --tools=go,sandbox,jobs \
			</dev/null >srv.out 2>srv.log &
		echo $! >srv.pid
	) &&
	echo "http://127.0.0.1:$port/mcp" >srv.url &&
	test_retry 100 0.1 grep "listening on" srv.log
'
test_atexit 'kill "$(cat "$TRASH_DIRECTORY/srv.pid")" 2>/dev/null'

for s in $scenarios; do
	test_expect_success "conformance: $s" '
		"$MCP_HOSTS_BIN/conformance" server --url="$(cat srv.url)" \
			--scenario='$s' >'$s'.out 2>&1 || {
			cat '$s'.out >&4
			false
		} &&
		grep "^Passed: [1-9][0-9]*/[1-9][0-9]*, 0 failed" '$s'.out
	'
done

test_expect_success 'the server stops cleanly, no sandbox left' '
	kill -TERM "$(cat srv.pid)" &&
	test_retry 300 0.1 eval "! kill -0 $(cat srv.pid) 2>/dev/null" &&
	mcp_no_sanitizer_report srv.log &&
	wait_no_claims
'

test_done

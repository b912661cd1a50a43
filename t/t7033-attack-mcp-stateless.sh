#!/bin/sh
test_description='gosbx mcp --http: stateless clients share no sandbox

2026-07-28 clients send no session. Each request without one has state
of its own (deleted once answered): client B cannot read what client A
wrote, and one client killing its sandbox'"'"'s runtime (kill -TERM 1)
breaks nobody else. A client keeps state by naming it in _meta
"dev.gosbx/session"; other names do not see it, and DELETE with
Mcp-Session-Id ~<name> ends it. kill -TERM 1 in a sandbox ends nothing.'
. "$(dirname "$0")"/test-lib.sh

test_have_prereq PYTHON || test_skip_all 'python3 is not installed'
test_have_prereq BWRAP || test_skip_all 'bwrap is not installed'
test_limits_prereq

claims="$XDG_STATE_HOME/gosbx/claims"

# call <out> <command> [<state name>]: run_go_code as a 2026-07-28
# request; the HTTP status into <out>.status, the result text into
# <out> (the JSON body into <out>.json)
call() {
	_meta="\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}"
	test -n "${3:-}" && _meta="$_meta,\"dev.gosbx/session\":\"$3\""
	python3 -c 'import json, sys; print(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "run_go_code", "arguments": {"command": sys.argv[1]}, "_meta": json.loads("{" + sys.argv[2] + "}")}}))' \
		"$2" "$_meta" >"$1.req" &&
	curl -sS --max-time 300 -o "$1.json" -w "%{http_code}" \
		-H "Authorization: Bearer $(cat token)" \
		-H "Content-Type: application/json" \
		-H "Accept: application/json" \
		-H "MCP-Protocol-Version: 2026-07-28" \
		-H "Mcp-Method: tools/call" -H "Mcp-Name: run_go_code" \
		--data-binary "@$1.req" "$(cat mcp.url)" >"$1.status" &&
	python3 -c '
import json, sys
b = json.load(open(sys.argv[1] + ".json"))
r = b.get("result") or {}
open(sys.argv[1], "w").write("".join(c.get("text", "") for c in r.get("content", [])))
' "$1"
}

no_claims() {
	test -z "$(ls "$claims" 2>/dev/null)"
}

test_expect_success 'setup: gosbx mcp --http with a token' '
	head -c 24 /dev/urandom | od -An -tx1 | tr -d " \n" >token &&
	{
		gosbx mcp --http=127.0.0.1:0 --token-file=token \
			</dev/null 2>mcp.err 3>&- 4>&- 5>&- &
	} &&
	echo $! >mcp.pid &&
	test_atexit "kill -TERM $(cat mcp.pid); gosbx close --all" &&
	test_retry 300 0.1 grep -q "listening on" mcp.err &&
	sed -n "s/.*listening on //p" mcp.err >mcp.url
'

test_expect_success 'client B does not read what client A wrote' '
	call a "echo secret-7033 >/app/a.txt && cat /app/a.txt" &&
	test "$(cat a.status)" = 200 &&
	test_grep secret-7033 a &&
	call b "cat /app/a.txt; ls /app" &&
	test "$(cat b.status)" = 200 &&
	test_grep ! secret-7033 b &&
	test_grep "No such file" b
'

test_expect_success 'a stateless request leaves no sandbox behind' '
	test_retry 300 0.1 no_claims || { ls -l "$claims" >&4; false; }
'

test_expect_success 'one client killing its runtime breaks nobody else' '
	call k "kill -TERM 1; sleep 1; echo after" &&
	call ok "echo still-served" &&
	test "$(cat ok.status)" = 200 &&
	test_grep still-served ok &&
	python3 -c "import json; assert not json.load(open(\"ok.json\"))[\"result\"].get(\"isError\")"
'

test_expect_success 'a named state is kept, and only for its name' '
	call n1 "echo kept-7033 >/app/n.txt" a-7033-x1 &&
	test "$(cat n1.status)" = 200 &&
	call n2 "cat /app/n.txt" a-7033-x1 &&
	test_grep kept-7033 n2 &&
	call n3 "cat /app/n.txt" b-7033-x2 &&
	test_grep ! kept-7033 n3 &&
	call n4 "cat /app/n.txt" &&
	test_grep ! kept-7033 n4
'

test_expect_success 'kill -TERM 1 in a sandbox ends neither it nor its files' '
	call t1 "echo survives-7033 >/app/s.txt; kill -TERM 1; kill -INT 1; echo sent" a-7033-x1 &&
	test_grep sent t1 &&
	call t2 "cat /app/s.txt" a-7033-x1 &&
	test "$(cat t2.status)" = 200 &&
	test_grep survives-7033 t2
'

test_expect_success 'DELETE ~<name> ends a named state and its sandbox' '
	test -n "$(ls "$claims")" &&
	curl -sS -o del.body -w "%{http_code}" -X DELETE \
		-H "Authorization: Bearer $(cat token)" \
		-H "Mcp-Session-Id: ~a-7033-x1" "$(cat mcp.url)" >del.status &&
	test "$(cat del.status)" = 204 &&
	call n5 "cat /app/n.txt" a-7033-x1 &&
	test_grep ! kept-7033 n5
'

test_expect_success 'a malformed state name is refused' '
	call bad "echo x" "../x y" &&
	test "$(cat bad.status)" = 400 &&
	test_grep "dev.gosbx/session" bad.json
'

# a normal user whose sandboxes cannot have their limits (CI's
# unprivileged run): an agent's code must not run unbounded unless the
# operator says so
test_expect_success NOLIMITS 'gosbx mcp will not start without its limits' '
	(
		unset GOSBX_ALLOW_NO_LIMITS &&
		test_expect_code_err 125 gosbx mcp </dev/null &&
		test_grep "will not run it without the limits" err &&
		test_grep "gosbx doctor" err &&
		test_expect_code_err 125 gosbx mcp --http=127.0.0.1:0 --dev \
			</dev/null &&
		test_grep "will not run it without the limits" err &&
		gosbx mcp --memory=0 --pids=0 --cpus=0 </dev/null 2>err &&
		GOSBX_ALLOW_NO_LIMITS=1 gosbx mcp </dev/null 2>err
	)
'

test_expect_success LIMITS 'gosbx mcp starts where its limits apply' '
	(
		unset GOSBX_ALLOW_NO_LIMITS &&
		gosbx mcp </dev/null 2>err
	)
'

test_done

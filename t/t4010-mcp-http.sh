#!/bin/sh
test_description='gosbx mcp --http: streamable HTTP

curl against test-mcp-server (the protocol core with a test toolset)
and gosbx mcp --http: sessions, DELETE, Origin, bearer tokens, JSON and
SSE answers, 2026-07-28 without a session, many sessions at once.'
. "$(dirname "$0")"/test-lib.sh

if ! command -v curl >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1
then
	test_skip_all "curl and python3 are needed"
fi

# start_server <name> <cmd...>: start it on a free loopback port, wait
# for its "listening on" line; <name>.url, <name>.pid, <name>.err
start_server() {
	_n=$1
	shift
	rm -f "$_n.rc" "$_n.pid"
	(
		"$@" 2>"$_n.err" &
		echo $! >"$_n.pid"
		wait $!
		echo $? >"$_n.rc"
	) &
	test_retry 100 0.1 test -s "$_n.pid" || return 1
	test_atexit "kill -9 $(cat "$_n.pid") 2>/dev/null"
	for _i in $(seq 1 300); do
		if grep -q "listening on" "$_n.err"; then
			sed -n "s/.*listening on //p" "$_n.err" >"$_n.url"
			return 0
		fi
		kill -0 "$(cat "$_n.pid")" 2>/dev/null || break
		sleep 0.1
	done
	cat "$_n.err" >&4
	return 1
}

# stop_server <name>: SIGTERM, wait, the exit status must be 0
stop_server() {
	kill -TERM "$(cat "$1.pid")" &&
	test_retry 300 0.1 test -s "$1.rc" &&
	test "$(cat "$1.rc")" = 0
}

URL=
# post <json> [curl args]: POST to $URL; files status, headers, body
post() {
	_body=$1
	shift
	curl -s -o body -D headers -w "%{http_code}" \
		-H "Content-Type: application/json" \
		-H "Accept: application/json, text/event-stream" \
		"$@" --data-binary "$_body" "$URL" >status
}

# hdr <name>: the value of a response header (case-insensitive)
hdr() {
	tr -d '\r' <headers | sed -n "s/^$1: //Ip" | head -n 1
}

# jq-like checks in python on the file body (JSON) or SSE events
check() {
	python3 -c "
import json, sys
raw = open('body').read()
if raw.startswith('event:') or raw.startswith(':'):
    ev = [json.loads(l[6:]) for l in raw.splitlines() if l.startswith('data: ')]
    b = ev[-1]
else:
    ev = []
    b = json.loads(raw)
$1
"
}

expect_status() {
	test "$(cat status)" = "$1" || {
		echo "status $(cat status), want $1" >&4
		cat headers body >&4
		return 1
	}
}

INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'

test_expect_success 'start test-mcp-server on a loopback port' '
	start_server srv test-mcp-server 127.0.0.1:0 &&
	test_grep "^http://127.0.0.1:[0-9]*/mcp\$" srv.url
'
URL=$(cat srv.url 2>/dev/null)

test_expect_success 'initialize: JSON answer and a 128-bit Mcp-Session-Id' '
	post "$INIT" &&
	expect_status 200 &&
	hdr Content-Type | grep "^application/json" &&
	hdr Mcp-Session-Id >sid &&
	grep -E "^[0-9a-f]{32}\$" sid &&
	check "assert b[\"result\"][\"protocolVersion\"] == \"2025-06-18\", b"
'
SID=$(cat sid 2>/dev/null)

test_expect_success 'notifications/initialized: 202 without a body' '
	post "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}" \
		-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-06-18" &&
	expect_status 202 &&
	test ! -s body
'

test_expect_success 'requests need the session id (400), an unknown one is 404' '
	post "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}" &&
	expect_status 400 &&
	post "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}" \
		-H "Mcp-Session-Id: 0123456789abcdef0123456789abcdef" &&
	expect_status 404
'

test_expect_success 'MCP-Protocol-Version: an unknown or malformed one is 400' '
	post "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}" \
		-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 1999-01-01" &&
	expect_status 400 &&
	check "assert \"1999-01-01\" in b[\"error\"][\"message\"] and \"2025-11-25\" in b[\"error\"][\"message\"], b" &&
	post "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}" \
		-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: latest" &&
	expect_status 400 &&
	post "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}" \
		-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-06-18" &&
	expect_status 200
'

# The official SDK serves any revision it supports, whatever the session
# negotiated; the conformance scenario server-sse-multiple-streams sends
# 2025-03-26 on a 2025-11-25 session.
test_expect_success 'MCP-Protocol-Version: any supported revision is served' '
	for v in 2024-11-05 2025-03-26 2025-11-25
	do
		post "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}" \
			-H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $v" &&
		expect_status 200 &&
		check "assert b == {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}, b" ||
		return 1
	done
'

test_expect_success 'tools/list and a call without progress answer JSON' '
	post "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}" \
		-H "Mcp-Session-Id: $SID" &&
	expect_status 200 &&
	check "assert len(b[\"result\"][\"tools\"]) == 17 and \"nextCursor\" not in b[\"result\"], b" &&
	post "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"a\":1}}}" \
		-H "Mcp-Session-Id: $SID" &&
	expect_status 200 &&
	hdr Content-Type | grep "^application/json" &&
	check "assert b == {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"a\\\":1}\"}],\"structuredContent\":{\"a\":1},\"isError\":False}}, b"
'

test_expect_success 'a call with a progressToken streams SSE: progress, then the result' '
	post "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"sleep\",\"arguments\":{\"ms\":10,\"steps\":4},\"_meta\":{\"progressToken\":9}}}" \
		-H "Mcp-Session-Id: $SID" &&
	expect_status 200 &&
	hdr Content-Type | grep "^text/event-stream" &&
	grep "^event: message\$" body &&
	check "
p = [e[\"params\"][\"progress\"] for e in ev[:-1]]
assert p == [1, 2, 3, 4], ev
assert all(e[\"method\"] == \"notifications/progress\" for e in ev[:-1]), ev
assert b[\"id\"] == 5 and b[\"result\"][\"content\"][0][\"text\"] == \"slept 4 steps\", b"
'

# An SSE client may read the events of one write in one go and handle the
# answer before the notifications (Documentation/protocol/mcp.md, progress): the answer
# comes in an HTTP chunk of its own, even right after a burst of progress
# (delay: the stream is open before the burst).
test_expect_success 'SSE: the result is written apart from the progress before it' '
	curl -s --raw -o raw -H "Content-Type: application/json" \
		-H "Accept: application/json, text/event-stream" \
		-H "Mcp-Session-Id: $SID" \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"tools/call\",\"params\":{\"name\":\"sleep\",\"arguments\":{\"ms\":0,\"steps\":50,\"delay\":300},\"_meta\":{\"progressToken\":15}}}" \
		"$URL" &&
	python3 -c "
import json
raw = open(\"raw\", \"rb\").read()
chunks = []
while raw:
    size, raw = raw.split(b\"\\r\\n\", 1)
    n = int(size, 16)
    if n == 0:
        break
    chunks.append(raw[:n])
    raw = raw[n + 2:]
kinds = []
for c in chunks:
    ev = [json.loads(l[6:]) for l in c.decode().splitlines()
          if l.startswith(\"data: \")]
    kinds.append([\"result\" if \"result\" in e else e[\"method\"]
                  for e in ev])
assert sum(k.count(\"notifications/progress\") for k in kinds) == 50, kinds
assert kinds[-1] == [\"result\"], kinds
"
'

test_expect_success 'without text/event-stream in Accept the same call answers JSON' '
	curl -s -o body -D headers -w "%{http_code}" \
		-H "Content-Type: application/json" -H "Accept: application/json" \
		-H "Mcp-Session-Id: $SID" \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"sleep\",\"arguments\":{\"ms\":10,\"steps\":2},\"_meta\":{\"progressToken\":9}}}" \
		"$URL" >status &&
	expect_status 200 &&
	check "assert b[\"id\"] == 6 and b[\"result\"][\"isError\"] is False, b"
'

# curl gives up after 5 s (the call lasts 60): time enough for a sanitized
# server on a loaded machine to have started the call it must cancel
test_expect_success 'closing the SSE stream cancels the call' '
	test_must_fail curl -s -N --max-time 5 -o body \
		-H "Content-Type: application/json" \
		-H "Accept: application/json, text/event-stream" \
		-H "Mcp-Session-Id: $SID" \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"sleep\",\"arguments\":{\"ms\":100,\"steps\":600},\"_meta\":{\"progressToken\":1}}}" \
		"$URL" &&
	test_retry 100 0.1 grep "cancelled sleep" srv.err
'

test_expect_success 'a client that drops a JSON request cancels its call' '
	before=$(grep -c "cancelled sleep" srv.err) &&
	test_must_fail curl -s --max-time 5 -o body \
		-H "Content-Type: application/json" -H "Accept: application/json" \
		-H "Mcp-Session-Id: $SID" \
		--data-binary "{\"jsonrpc\":\"2.0\",\"id\":17,\"method\":\"tools/call\",\"params\":{\"name\":\"sleep\",\"arguments\":{\"ms\":100,\"steps\":600}}}" \
		"$URL" &&
	more_cancelled() {
		test "$(grep -c "cancelled sleep" srv.err)" -gt "$before"
	} &&
	test_retry 100 0.1 more_cancelled
'

test_expect_success 'a 2025-03-26 session takes batches: an array of answers' '
	post "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-03-26\",\"capabilities\":{}}}" &&
	sid=$(hdr Mcp-Session-Id) &&
	post "[{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"b\":2}}}]" \
		-H "Mcp-Session-Id: $sid" &&
	expect_status 200 &&
	check "assert isinstance(b, list) and [m[\"id\"] for m in b] == [3, 4], b
assert b[1][\"result\"][\"content\"][0][\"text\"] == \"{\\\"b\\\":2}\", b" &&
	post "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]" \
		-H "Mcp-Session-Id: $sid" &&
	expect_status 202
'

test_expect_success 'errors: parse error 400 with id null, unknown tool -32602' '
	post "{oops" -H "Mcp-Session-Id: $SID" &&
	expect_status 400 &&
	check "assert b[\"id\"] is None and b[\"error\"][\"code\"] == -32700, b" &&
	post "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}" \
		-H "Mcp-Session-Id: $SID" &&
	check "assert b[\"error\"][\"code\"] == -32602, b" &&
	post "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]" \
		-H "Mcp-Session-Id: $SID" &&
	expect_status 400 &&
	check "assert b[\"error\"][\"code\"] == -32600, b"
'

test_expect_success 'wrong media type 415; GET 405; other paths 404' '
	curl -s -o body -w "%{http_code}" -H "Content-Type: text/plain" \
		--data-binary "{}" "$URL" >status &&
	expect_status 415 &&
	curl -s -o body -D headers -w "%{http_code}" "$URL" >status &&
	expect_status 405 &&
	curl -s -o body -w "%{http_code}" "${URL%/mcp}/other" >status &&
	expect_status 404
'

test_expect_success 'Origin: localhost origins pass, others are 403' '
	for o in http://localhost:3000 http://127.0.0.1 "http://[::1]:8080" https://localhost
	do
		post "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}" \
			-H "Mcp-Session-Id: $SID" -H "Origin: $o" &&
		expect_status 200 || return 1
	done &&
	for o in http://evil.example http://localhost.evil.example null http://127.0.0.1.nip.io
	do
		post "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}" \
			-H "Mcp-Session-Id: $SID" -H "Origin: $o" &&
		expect_status 403 || return 1
	done
'

test_expect_success '2026-07-28 needs no session: JSON with resultType' '
	post "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{$META}}" &&
	expect_status 200 &&
	test -z "$(hdr Mcp-Session-Id)" &&
	check "assert b[\"result\"][\"resultType\"] == \"complete\" and \"2026-07-28\" in b[\"result\"][\"supportedVersions\"], b" &&
	post "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"z\":2},$META}}" \
		-H "MCP-Protocol-Version: 2026-07-28" -H "Mcp-Method: tools/call" -H "Mcp-Name: echo" &&
	expect_status 200 &&
	check "assert b[\"result\"][\"structuredContent\"] == {\"z\": 2}, b"
'

test_expect_success '2026-07-28 errors: -32022 400, unknown method 404, header mismatch -32020' '
	post "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2099-01-01\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}" &&
	expect_status 400 &&
	check "assert b[\"error\"][\"code\"] == -32022 and b[\"error\"][\"data\"][\"requested\"] == \"2099-01-01\", b" &&
	post "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"no/such\",\"params\":{$META}}" &&
	expect_status 404 &&
	check "assert b[\"error\"][\"code\"] == -32601, b" &&
	post "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{$META}}" \
		-H "Mcp-Method: tools/call" &&
	expect_status 400 &&
	check "assert b[\"error\"][\"code\"] == -32020, b"
'

test_expect_success 'DELETE ends the session (toolset session_end), then 404' '
	curl -s -o body -w "%{http_code}" -X DELETE -H "Mcp-Session-Id: $SID" \
		"$URL" >status &&
	expect_status 204 &&
	test_grep "session_end ${SID%????????????????????????} calls=" srv.err &&
	post "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}" -H "Mcp-Session-Id: $SID" &&
	expect_status 404 &&
	curl -s -o body -w "%{http_code}" -X DELETE -H "Mcp-Session-Id: $SID" \
		"$URL" >status &&
	expect_status 404
'

test_expect_success '20 sessions at once, each with its own state' '
	for i in $(seq 1 20); do
		(
			curl -s -D h$i -o /dev/null -H "Content-Type: application/json" \
				-H "Accept: application/json, text/event-stream" \
				--data-binary "$INIT" "$URL" &&
			sid=$(tr -d "\r" <h$i | sed -n "s/^mcp-session-id: //Ip") &&
			curl -s -o b$i -H "Content-Type: application/json" \
				-H "Accept: application/json, text/event-stream" \
				-H "Mcp-Session-Id: $sid" \
				--data-binary "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"sleep\",\"arguments\":{\"ms\":200,\"steps\":2}}}" \
				"$URL" &&
			echo "$sid" >sess$i
		) &
	done &&
	wait &&
	cat sess* | sort -u >sids &&
	test_line_count = 20 sids &&
	for i in $(seq 1 20); do
		grep "slept 2 steps" b$i || return 1
	done
'

test_expect_success 'SIGTERM: every session ends, exit 0' '
	stop_server srv &&
	test $(grep -c "^session_end" srv.err) -ge 22
'

test_expect_success 'bearer token: 401 with WWW-Authenticate without it' '
	TEST_MCP_TOKEN=s3cret start_server tok test-mcp-server 127.0.0.1:0 &&
	URL=$(cat tok.url) &&
	post "$INIT" &&
	expect_status 401 &&
	hdr WWW-Authenticate | grep "^Bearer" &&
	post "$INIT" -H "Authorization: Bearer wrong" &&
	expect_status 401 &&
	post "$INIT" -H "Authorization: Bearer s3cret" &&
	expect_status 200 &&
	stop_server tok
'

test_expect_success 'idle sessions expire' '
	TEST_MCP_IDLE_MS=3000 start_server idle test-mcp-server 127.0.0.1:0 &&
	URL=$(cat idle.url) &&
	post "$INIT" &&
	sid=$(hdr Mcp-Session-Id) &&
	post "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}" \
		-H "Mcp-Session-Id: $sid" &&
	expect_status 200 &&
	test_retry 100 0.1 grep "session_end" idle.err &&
	post "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}" -H "Mcp-Session-Id: $sid" &&
	expect_status 404 &&
	stop_server idle
'

test_expect_success 'gosbx mcp --http: --token-file, loopback by default' '
	echo "  tok-123  " >token &&
	start_server g gosbx mcp --http=:0 --token-file=token &&
	URL=$(cat g.url) &&
	test_grep "^http://127.0.0.1:" g.url &&
	post "$INIT" &&
	expect_status 401 &&
	post "$INIT" -H "Authorization: Bearer tok-123" &&
	expect_status 200 &&
	post "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}" \
		-H "Authorization: Bearer tok-123" -H "Mcp-Session-Id: $(hdr Mcp-Session-Id)" &&
	check "assert \"run_go_code\" in [t[\"name\"] for t in b[\"result\"][\"tools\"]], b" &&
	stop_server g
'

test_expect_success 'gosbx mcp --http warns about a non-loopback address' '
	GOSBX_MCP_TOKEN=x start_server any gosbx mcp --http=0.0.0.0:0 &&
	test_grep "not a loopback address" any.err &&
	stop_server any
'

test_expect_success 'gosbx mcp --http: a token file others may read gets a warning' '
	test_grep "^warning: token file .token. is open to other users (mode 06[46][04]): chmod 600 .token.\$" g.err &&
	chmod 600 token &&
	start_server g600 gosbx mcp --http=:0 --token-file=token &&
	test_grep ! "token file" g600.err &&
	stop_server g600
'

test_expect_success 'gosbx mcp --http: a port above 65535 or none is 129' '
	for a in 127.0.0.1:99999 :65536 127.0.0.1:123456 notaport 127.0.0.1:
	do
		test_expect_code_err 129 env GOSBX_MCP_TOKEN=x \
			gosbx mcp --http=$a </dev/null &&
		test_grep "^error: bad address .$a." err &&
		test_grep ! "listening on" err || return 1
	done
'

test_expect_success 'gosbx mcp --dev: only on a loopback address' '
	for a in 0.0.0.0:0 "[::]:0"
	do
		test_expect_code_err 129 gosbx mcp --dev --http=$a </dev/null &&
		test_grep "^error: --dev serves without a token: only on a loopback address" err &&
		test_grep ! "listening on" err || return 1
	done &&
	start_server dev gosbx mcp --dev --http=127.0.0.1:0 &&
	stop_server dev
'

test_expect_success 'no sanitizer report from any server' '
	cat *.err >all-err &&
	test_grep ! -E "Sanitizer|runtime error" all-err
'

test_done

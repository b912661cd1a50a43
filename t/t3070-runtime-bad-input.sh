#!/bin/sh
test_description='gosbx-runtime: bad input is refused and survived

Each test sends one kind of bad input, checks the answer, and then that
the server still answers GET / and runs a command (rt_alive).'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

# post_json <status> <body or @file> [curl options]: POST /execute
post_json() {
	_want=$1 _data=$2
	shift 2
	rt_expect "$_want" POST /execute -H "Content-Type: application/json" \
		--data-binary "$_data" "$@"
}

# the detail of the last answer starts with $1
detail_starts() {
	json_get body detail >detail &&
	test_grep "^$1" detail
}

# the detail of the last answer mentions $1
detail_has() {
	json_get body detail >detail &&
	test_grep -F "$1" detail
}

test_expect_success 'setup' '
	rt_start
'

test_expect_success 'malformed JSON: 400 invalid JSON body' '
	post_json 400 "{\"command\":" &&
	detail_starts "invalid JSON body: ." &&
	rt_alive
'

test_expect_success 'JSON with trailing garbage: 400' '
	post_json 400 "{\"command\":\"true\"} x" &&
	detail_starts "invalid JSON body: " &&
	rt_alive
'

test_expect_success 'an empty body: 400' '
	post_json 400 "" &&
	json_type body detail >t && echo str >expect && test_cmp expect t &&
	rt_alive
'

for doc in "[1,2]" "\"echo hi\"" 42 null true
do
	test_expect_success "non-object JSON $doc: 400" "
		post_json 400 '$doc' &&
		json_type body detail >t && echo str >expect &&
		test_cmp expect t &&
		rt_alive
	"
done

test_expect_success 'a missing command: 400 command must not be empty' '
	rt_expect_error 400 "command must not be empty" POST /execute \
		--data-binary "{}" &&
	rt_expect_error 400 "command must not be empty" POST /execute \
		--data-binary "{\"cmd\":\"echo hi\"}" &&
	rt_alive
'

test_expect_success 'an empty command: 400 command must not be empty' '
	rt_expect_error 400 "command must not be empty" POST /execute \
		--data-binary "{\"command\":\"\"}" &&
	rt_alive
'

for v in 5 null true "[\"echo\",\"hi\"]" "{}"
do
	test_expect_success "a non-string command $v: 400" "
		rt_expect_error 400 'command must not be empty' POST /execute \
			--data-binary '{\"command\":$v}' &&
		rt_alive
	"
done

# option=value pairs with a wrong type; the detail names the option
while read -r opt val <&7
do
	test_expect_success "option $opt=$val: 400 naming $opt" "
		post_json 400 '{\"command\":\"true\",\"$opt\":$val}' &&
		detail_has '$opt' &&
		rt_alive
	"
done 7<<\EOF
timeout_ms -1
timeout_ms "500"
timeout_ms 1.5
timeout_ms true
timeout_ms {}
max_output_bytes -5
max_output_bytes "x"
env []
env "A=1"
env {"A":1}
env {"A":null}
env {"A":["x"]}
cwd 5
cwd []
stdin 5
stdin ["x"]
EOF

test_expect_success 'the documented messages for timeout_ms and env' '
	post_json 400 "{\"command\":\"true\",\"timeout_ms\":-1}" &&
	json_is body detail "timeout_ms must be a non-negative integer" &&
	post_json 400 "{\"command\":\"true\",\"env\":{\"A\":1}}" &&
	detail_starts "env must be an object of strings"
'

test_expect_success 'invalid UTF-8 inside the JSON body: 400' '
	printf "{\"command\":\"echo \377\"}" >badutf8.json &&
	post_json 400 @badutf8.json &&
	detail_starts "invalid JSON body: " &&
	rt_alive
'

test_expect_success 'a NUL escaped in the command: never run truncated' '
	rt_req POST /execute \
		--data-binary "{\"command\":\"touch nul-ran\\u0000; echo x\"}" &&
	case "$(cat status)" in
	400) ;;
	200) json_is body reason start_failed ;;
	*) false ;;
	esac &&
	! test -e work/nul-ran &&
	rt_alive
'

test_expect_success 'deeply nested JSON: 400, no crash' '
	python3 -c "print(\"[\" * 100000 + \"]\" * 100000)" >deep.json &&
	post_json 400 @deep.json &&
	rt_alive &&
	python3 -c "print(\"{\\\"command\\\":\\\"true\\\",\\\"x\\\":\" + \"{\\\"a\\\":\" * 50000 + \"1\" + \"}\" * 50001)" >deep2.json &&
	rt_req POST /execute --data-binary @deep2.json &&
	test "$(cat status)" -ge 200 && test "$(cat status)" -lt 500 &&
	rt_alive
'

test_expect_success 'a body of exactly 1 MiB is accepted' '
	python3 -c "
import json, sys
head = json.dumps({\"command\": \"wc -c\", \"stdin\": \"\"})[:-2]
pad = 1048576 - len(head) - 2
sys.stdout.write(head + \"x\" * pad + \"\\\"}\")
" >limit.json &&
	test "$(wc -c <limit.json)" = $RT_JSON_LIMIT &&
	post_json 200 @limit.json &&
	json_is body exit_code 0 &&
	test "$(json_get body stdout)" -gt 1040000
'

test_expect_success 'a body one byte over 1 MiB: 413 request body too large' '
	{ cat limit.json && echo; } >over.json &&
	test "$(wc -c <over.json)" = $((RT_JSON_LIMIT + 1)) &&
	rt_expect_error 413 "request body too large" POST /execute \
		--data-binary @over.json &&
	rt_alive
'

test_expect_success 'a chunked body over 1 MiB without a length: 413' '
	{
		{ printf "{\"command\":\"true\",\"stdin\":\""
		  head -c 3000000 /dev/zero | tr "\0" x
		  printf "\"}"; } |
		rt_req POST /execute -T - -H "Content-Type: application/json"
		true
	} &&
	test "$(cat status)" = 413 &&
	json_is body detail "request body too large" &&
	rt_alive
'

test_expect_success 'a 64 MiB JSON body: 413, memory bounded' '
	{
		head -c 67108864 /dev/zero |
		rt_req POST /execute -T - -H "Transfer-Encoding:" \
			-H "Content-Length: 67108864"
		true
	} &&
	test "$(cat status)" = 413 &&
	rt_memory_bounded VmRSS &&
	rt_alive
'

test_expect_success 'an upload with no file part: 400' '
	rt_expect_error 400 "missing file part '"'file'"'" POST /upload \
		-F "other=value" &&
	rt_alive
'

test_expect_success 'an upload with a bad multipart boundary: 400' '
	rt_expect 400 POST /upload \
		-H "Content-Type: multipart/form-data; boundary=nothere" \
		--data-binary "--other
garbage" &&
	rt_alive
'

test_expect_success 'a multipart content type without boundary: 400' '
	rt_expect 400 POST /upload -H "Content-Type: multipart/form-data" \
		--data-binary "x" &&
	rt_alive
'

test_expect_success 'a NUL in a path: refused' '
	rt_req GET /download/a%00b &&
	test "$(cat status)" -ge 400 && test "$(cat status)" -lt 500 &&
	rt_req PUT /v1/files/a%00b --data-binary x &&
	test "$(cat status)" -ge 400 && test "$(cat status)" -lt 500 &&
	! test -e work/a &&
	rt_alive
'

test_expect_success 'a malformed percent escape: no crash' '
	rt_req GET /download/%zz%4 &&
	test "$(cat status)" -ge 400 && test "$(cat status)" -lt 500 &&
	rt_req GET /exists/%%% &&
	test "$(cat status)" -ge 200 && test "$(cat status)" -lt 500 &&
	rt_alive
'

test_expect_success 'a very long path: refused, no crash' '
	long=$(python3 -c "print(\"a/\" * 30000)") &&
	rt_req GET "/download/$long" &&
	test "$(cat status)" -ge 400 && test "$(cat status)" -lt 500 &&
	rt_alive
'

test_expect_success 'a name longer than NAME_MAX: an error, no crash' '
	long=$(python3 -c "print(\"n\" * 5000)") &&
	rt_req PUT "/v1/files/$long" --data-binary x &&
	test "$(cat status)" -ge 400 &&
	rt_alive
'

test_expect_success 'an unsatisfiable Range: 416 or the whole file' '
	printf 0123456789 >work/digits &&
	rt_req GET /download/digits -H "Range: bytes=100-200" &&
	case "$(cat status)" in 416 | 200) ;; *) false ;; esac &&
	rt_req GET /download/digits -H "Range: bytes=5-2" &&
	case "$(cat status)" in 416 | 200) ;; *) false ;; esac &&
	rt_req GET /download/digits -H "Range: lines=1-2" &&
	case "$(cat status)" in 416 | 200) ;; *) false ;; esac &&
	rt_alive
'

test_expect_success 'garbage instead of HTTP: no crash' '
	python3 -c "
import socket, sys
host, port = sys.argv[1][len(\"http://\"):].split(\":\")
for junk in [b\"\\x00\\xff\\x16\\x03\\x01garbage\\r\\n\\r\\n\",
             b\"GET\\r\\n\\r\\n\", b\"GET / HTTP/9.9\\r\\n\\r\\n\",
             b\"POST /execute HTTP/1.1\\r\\nContent-Length: -5\\r\\n\\r\\n\",
             b\"POST /execute HTTP/1.1\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\nzz\\r\\n\",
             b\"GET /\" + b\"a\" * 200000 + b\" HTTP/1.1\\r\\n\\r\\n\"]:
    s = socket.create_connection((host, int(port)), timeout=30)
    try:
        s.sendall(junk)
        s.shutdown(socket.SHUT_WR)
        while s.recv(65536):
            pass
    except OSError:
        pass
    s.close()
" "$(cat rt.url)" &&
	rt_alive
'

test_expect_success 'a client that sends half a request and stalls blocks no one' '
	python3 -c "
import socket, sys, time
host, port = sys.argv[1][len(\"http://\"):].split(\":\")
s = socket.create_connection((host, int(port)))
s.sendall(b\"POST /execute HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 100\\r\\n\\r\\n{\\\"comm\")
open(\"stalled\", \"w\").close()
time.sleep(60)
" "$(cat rt.url)" &
	stall=$! &&
	rt_poll 30 test -e stalled &&
	rt_alive &&
	kill $stall
'

test_expect_success 'a wrong method: 405, then alive' '
	rt_expect_error 405 "method not allowed" PUT /execute --data-binary x &&
	rt_expect_error 405 "method not allowed" DELETE /list/ &&
	rt_alive
'

test_expect_success 'the servers stop cleanly, no sanitizer report' '
	rt_stop_check
'

test_done

#!/bin/sh
test_description='gosbx-runtime: detached commands (extension jobs)'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

# job_start <json body>: POST /v1/jobs, the job id into the file id
job_start() {
	rt_expect 201 POST /v1/jobs --data-binary "$1" &&
	json_get body id >id &&
	test -s id
}

# job_state <id> <state>: GET /v1/jobs/<id> says that state
job_state() {
	rt_expect 200 GET /v1/jobs/$1 && json_is body state "$2"
}

# ndjson_text <file>: the stdout/stderr data of an output stream, joined
ndjson_text() {
	python3 -c '
import base64, json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["type"] in ("stdout", "stderr"):
        d = e["data"].encode() if "data" in e else base64.b64decode(e["b64"])
        sys.stdout.buffer.write(d)
' "$1"
}

# ndjson_types <file>: the event types, one a line
ndjson_types() {
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    print(json.loads(line)["type"])
' "$1"
}

test_expect_success 'setup' '
	mkdir tmp &&
	TMPDIR=$TRASH_DIRECTORY/tmp rt_start &&
	rt_expect 200 GET / &&
	grep -q "\"jobs\"" body
'

test_expect_success 'a job outlives the request that started it' '
	job_start "{\"command\":\"echo one; read x; echo got \$x; echo err >&2; exit 3\"}" &&
	json_is body state running &&
	test_grep "\"started_ms\":[0-9]" body &&
	id=$(cat id) &&
	job_state $id running &&
	rt_expect 200 GET /v1/jobs &&
	grep -q "\"id\":\"$id\"" body &&
	test -d tmp/gosbx-jobs-$(id -u)/$id
'

test_expect_success 'stdin, then EOF; wait gives the end' '
	id=$(cat id) &&
	rt_expect 204 POST "/v1/jobs/$id/stdin" --data-binary "two
" &&
	rt_expect 200 GET "/v1/jobs/$id/wait?timeout_ms=20000" &&
	json_is body state exited &&
	json_is body exit_code 3 &&
	json_is body reason exited &&
	json_is body output_bytes 16 &&
	test_grep "\"cpu_ms\":[0-9]" body &&
	test_grep "\"peak_rss_kb\":[0-9]" body &&
	test_grep "\"ended_ms\":[0-9]" body
'

test_expect_success 'output replays from the start, ends with exit' '
	id=$(cat id) &&
	rt_expect 200 GET "/v1/jobs/$id/output" &&
	ndjson_text body >actual &&
	printf "one\ngot two\nerr\n" >expect &&
	test_cmp expect actual &&
	ndjson_types body | tail -n 1 >last &&
	echo exit >expect &&
	test_cmp expect last &&
	grep "\"type\":\"stderr\"" body | grep -q "\"offset\":12" &&
	rt_expect 200 GET "/v1/jobs/$id/output?since=4" &&
	ndjson_text body >actual &&
	printf "got two\nerr\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'follow streams output until the end' '
	job_start "{\"command\":\"echo a; read x; echo b\$x\"}" &&
	id=$(cat id) &&
	{ rt_curl "/v1/jobs/$id/output?follow=1" -N >follow.out & } &&
	pid=$! &&
	rt_poll 10 grep -q "\"data\":\"a" follow.out &&
	rt_expect 204 POST "/v1/jobs/$id/stdin?eof=1" --data-binary "c" &&
	wait $pid &&
	ndjson_text follow.out >actual &&
	printf "a\nbc\n" >expect &&
	test_cmp expect actual &&
	ndjson_types follow.out | tail -n 1 >last &&
	echo exit >expect &&
	test_cmp expect last
'

test_expect_success 'signal by name and number reaches the process group' '
	job_start "{\"command\":\"sleep 100 & wait\"}" &&
	id=$(cat id) &&
	rt_expect 204 POST "/v1/jobs/$id/signal" --data-binary "{\"signal\":\"USR1\"}" &&
	rt_expect 200 GET "/v1/jobs/$id/wait?timeout_ms=20000" &&
	json_is body reason signaled &&
	json_is body signal 10 &&
	rt_expect_error 409 "job '\''$id'\'' has ended" POST "/v1/jobs/$id/signal" --data-binary "{\"signal\":9}" &&
	job_start "{\"command\":\"sleep 100\"}" &&
	id=$(cat id) &&
	rt_expect 204 POST "/v1/jobs/$id/signal" --data-binary "{\"signal\":\"SIGTERM\"}" &&
	rt_expect 200 GET "/v1/jobs/$id/wait?timeout_ms=20000" &&
	json_is body signal 15
'

# job_text_has <id> <text>: the job's output so far holds <text>
job_text_has() {
	rt_expect 200 GET "/v1/jobs/$1/output" &&
	ndjson_text body >text &&
	grep -q "$2" text
}

test_expect_success 'a job on a terminal: its size at start and resize (SIGWINCH)' '
	cat >winch.py <<-\EOF &&
	import os, signal, time
	def size(what):
	    c, r = os.get_terminal_size(0)
	    # os.write: print in a handler can meet the print it interrupted
	    os.write(1, ("%s %dx%d\n" % (what, c, r)).encode())
	signal.signal(signal.SIGWINCH, lambda *a: size("winch"))
	size("size")
	time.sleep(60)
	EOF
	job_start "{\"command\":\"python3 $PWD/winch.py\",\"tty\":true,\"cols\":100,\"rows\":30}" &&
	id=$(cat id) &&
	json_is body tty true &&
	rt_poll 20 job_text_has $id "size 100x30" &&
	rt_expect 204 POST "/v1/jobs/$id/resize" --data-binary "{\"cols\":132,\"rows\":43}" &&
	rt_poll 20 job_text_has $id "winch 132x43" &&
	rt_expect 400 POST "/v1/jobs/$id/resize" --data-binary "{\"cols\":0,\"rows\":43}" &&
	rt_expect 400 POST "/v1/jobs/$id/resize" --data-binary "{\"cols\":70000,\"rows\":43}" &&
	rt_expect 400 POST "/v1/jobs/$id/resize" --data-binary "{\"cols\":\"80\",\"rows\":24}" &&
	rt_expect 400 POST "/v1/jobs/$id/resize" --data-binary "[" &&
	rt_expect 204 POST "/v1/jobs/$id/signal" --data-binary "{\"signal\":\"KILL\"}" &&
	rt_expect 200 GET "/v1/jobs/$id/wait?timeout_ms=20000" &&
	rt_expect_error 409 "job '\''$id'\'' has ended" POST "/v1/jobs/$id/resize" --data-binary "{\"cols\":80,\"rows\":24}" &&
	job_start "{\"command\":\"sleep 100\"}" &&
	id=$(cat id) &&
	rt_expect_error 409 "job '\''$id'\'' has no terminal" POST "/v1/jobs/$id/resize" --data-binary "{\"cols\":80,\"rows\":24}" &&
	rt_expect 204 DELETE "/v1/jobs/$id"
'

test_expect_success 'wait times out with 408 and the running job' '
	job_start "{\"command\":\"sleep 100\"}" &&
	id=$(cat id) &&
	rt_expect 408 GET "/v1/jobs/$id/wait?timeout_ms=100" &&
	json_is body state running &&
	rt_expect 204 DELETE "/v1/jobs/$id" &&
	rt_expect_error 404 "no job '\''$id'\''" GET "/v1/jobs/$id" &&
	rt_poll 10 eval "! test -e tmp/gosbx-jobs-$(id -u)/$id"
'

test_expect_success 'output past the bound is trimmed with a marker' '
	line=$(printf "%099d" 7) &&
	job_start "{\"command\":\"yes $line | head -n 2000\",\"output_keep_bytes\":40000}" &&
	id=$(cat id) &&
	rt_expect 200 GET "/v1/jobs/$id/wait?timeout_ms=30000" &&
	json_is body output_bytes 200000 &&
	first=$(json_get body output_first) &&
	test "$first" -gt 150000 &&
	rt_expect 200 GET "/v1/jobs/$id/output" &&
	ndjson_types body | head -n 1 >first-type &&
	echo trimmed >expect &&
	test_cmp expect first-type &&
	head -n 1 body | grep -q "\"bytes\":$first" &&
	ndjson_text body >actual &&
	test $(wc -c <actual) = $((200000 - first)) &&
	tail -n 1 actual >last &&
	echo $line >expect &&
	test_cmp expect last &&
	ls tmp/gosbx-jobs-$(id -u)/$id >files &&
	test_line_count -le 5 files
'

test_expect_success 'unknown ids, bad bodies and arguments: clear 4xx' '
	rt_expect_error 404 "no job '\''jnope'\''" GET /v1/jobs/jnope &&
	rt_expect 404 GET /v1/jobs/../x &&
	rt_expect 404 GET /v1/jobs/jnope/other &&
	rt_expect 405 PUT /v1/jobs &&
	rt_expect 405 POST /v1/jobs/jnope/output &&
	rt_expect_error 400 "command must not be empty" POST /v1/jobs --data-binary "{}" &&
	rt_expect 400 POST /v1/jobs --data-binary "not json" &&
	rt_expect 415 POST /v1/jobs -H "Content-Type: text/plain" --data-binary "{\"command\":\"true\"}" &&
	rt_expect 400 POST /v1/jobs --data-binary "{\"command\":\"true\",\"stdin\":\"x\"}" &&
	rt_expect 400 POST /v1/jobs --data-binary "{\"command\":\"true\",\"output_keep_bytes\":1}" &&
	job_start "{\"command\":\"sleep 100\"}" &&
	id=$(cat id) &&
	rt_expect 400 POST "/v1/jobs/$id/signal" --data-binary "{\"signal\":\"NOPE\"}" &&
	rt_expect 400 POST "/v1/jobs/$id/signal" --data-binary "[" &&
	rt_expect 415 POST "/v1/jobs/$id/stdin" -H "Content-Type: text/plain" --data-binary x &&
	rt_expect 400 GET "/v1/jobs/$id/output?since=-1" &&
	rt_expect 400 GET "/v1/jobs/$id/output?since=99" &&
	rt_expect 400 GET "/v1/jobs/$id/output?follow=maybe" &&
	rt_expect 400 GET "/v1/jobs/$id/wait?timeout_ms=x" &&
	rt_expect 204 DELETE "/v1/jobs/$id" &&
	rt_alive
'

test_expect_success 'at most 64 jobs: ended ones are forgotten oldest first' '
	rt_expect 200 GET /v1/jobs &&
	i=0 &&
	while test $i -lt 70; do
		job_start "{\"command\":\"true\"}" || return 1
		i=$((i + 1))
	done &&
	rt_expect 200 GET /v1/jobs &&
	python3 -c "import json,sys; print(len(json.load(open(\"body\"))))" >n &&
	echo 64 >expect &&
	test_cmp expect n &&
	ls tmp/gosbx-jobs-$(id -u) >dirs &&
	test_line_count -le 66 dirs
'

test_expect_success 'a client that goes away mid-follow leaves the job running' '
	job_start "{\"command\":\"read x; echo \$x\"}" &&
	id=$(cat id) &&
	RT_MAX_TIME=1 rt_curl "/v1/jobs/$id/output?follow=1" >/dev/null;
	job_state $id running &&
	rt_expect 204 POST "/v1/jobs/$id/stdin?eof=1" --data-binary "late" &&
	rt_expect 200 GET "/v1/jobs/$id/wait?timeout_ms=20000" &&
	rt_expect 200 GET "/v1/jobs/$id/output" &&
	ndjson_text body >actual &&
	echo late >expect &&
	test_cmp expect actual
'

# see t3060's "stdin chunks back to back": the same for a job's stdin
test_expect_success PYTHON 'job stdin chunks back to back on new connections: none refused' '
	rt_loaded python3 "$TEST_DIRECTORY/stdin-chunks.py" "$(cat rt.url)" job 500
'

test_expect_success 'the jobs output goes with the runtime' '
	job_start "{\"command\":\"echo kept; sleep 100\"}" &&
	ls tmp/gosbx-jobs-$(id -u) >dirs &&
	test_line_count -gt 1 dirs &&
	rt_stop &&
	ls tmp/gosbx-jobs-$(id -u) >dirs &&
	test_line_count = 0 dirs
'

test_done

#!/bin/sh
test_description='gosbx-runtime: POST /v1/exec streams NDJSON events'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

# stream <json body> [curl options]: POST /v1/exec, expect 200, parse.
stream() {
	_body=$1
	shift
	rt_expect 200 POST /v1/exec -H "Content-Type: application/json" \
		--data-binary "$_body" "$@" &&
	rt_ndjson body
}

test_expect_success 'setup' '
	rt_start
'

test_expect_success 'NDJSON, chunked; stdout and stderr events, exit last' '
	stream "{\"command\":\"echo out; echo err >&2; exit 3\"}" &&
	rt_header Content-Type >ct &&
	echo application/x-ndjson >expect && test_cmp expect ct &&
	rt_header Transfer-Encoding >te &&
	echo chunked >expect && test_cmp expect te &&
	printf "out\n" >expect && test_cmp expect stream.out &&
	printf "err\n" >expect && test_cmp expect stream.err &&
	json_is stream.exit exit_code 3 &&
	json_is stream.exit reason exited
'

test_expect_success 'the exit event has every field of /execute but the output' '
	json_keys stream.exit >actual &&
	printf "%s\n" cpu_ms duration_ms exit_code peak_rss_kb reason \
		stderr_truncated stdout_truncated type >expect &&
	test_cmp expect actual &&
	json_is stream.exit stdout_truncated false &&
	json_is stream.exit stderr_truncated false &&
	for k in cpu_ms duration_ms exit_code peak_rss_kb
	do
		echo int >expect && json_type stream.exit $k >actual &&
		test_cmp expect actual || return 1
	done
'

test_expect_success 'output events come before the exit event' '
	stream "{\"command\":\"printf a; sleep 0.1; printf b >&2; sleep 0.1; printf c\"}" &&
	printf ac >expect && test_cmp expect stream.out &&
	printf b >expect && test_cmp expect stream.err &&
	grep -n . stream.types >numbered &&
	test_grep "^[0-9]*:exit\$" numbered &&
	test "$(grep -c exit stream.types)" = 1 &&
	test "$(tail -n 1 stream.types)" = exit &&
	test "$(head -n 1 stream.types)" = stdout
'

test_expect_success 'a signaled command: the exit event carries signal' '
	stream "{\"command\":\"kill -KILL \$\$\"}" &&
	json_is stream.exit reason signaled &&
	json_is stream.exit signal 9 &&
	json_is stream.exit exit_code -1
'

test_expect_success 'events arrive while the command still runs' '
	rm -f work/release &&
	{
		rt_curl /v1/exec -N -o live.out \
			--data-binary "{\"command\":\"echo first; while ! test -e release; do sleep 0.05; done; echo second\",\"timeout_ms\":120000}" &
	} &&
	rt_poll 60 grep -q first live.out &&
	! grep -q second live.out &&
	! grep -q "\"exit\"" live.out &&
	touch work/release &&
	wait &&
	rt_ndjson live.out &&
	printf "first\nsecond\n" >expect && test_cmp expect stream.out &&
	json_is stream.exit reason exited
'

test_expect_success 'invalid UTF-8 travels as b64, bytes intact' '
	stream "{\"command\":\"printf \\\"a\\\\377b\\\\303\\\"\"}" &&
	printf "a\377b\303" >expect &&
	test_cmp expect stream.out &&
	test_grep "\"b64\"" body
'

test_expect_success 'binary output: every byte arrives in order' '
	head -c 1000000 /dev/urandom >work/blob &&
	stream "{\"command\":\"cat blob\"}" &&
	test_cmp work/blob stream.out
'

test_expect_success 'multibyte text split across chunks: every byte arrives' '
	python3 -c "import sys; sys.stdout.buffer.write((\"\\u00e9\\u20ac\\U0001f600\" * 200000).encode())" \
		>work/utf8.txt &&
	stream "{\"command\":\"cat utf8.txt; cat utf8.txt >&2\"}" &&
	test_cmp work/utf8.txt stream.out &&
	test_cmp work/utf8.txt stream.err
'

test_expect_success 'many small writes keep their order' '
	stream "{\"command\":\"i=0; while test \$i -lt 3000; do echo \$i; i=\$((i+1)); done\"}" &&
	seq 0 2999 >expect &&
	test_cmp expect stream.out
'

test_expect_success 'more than 8 MiB: the stream loses nothing' '
	stream "{\"command\":\"head -c 20000000 /dev/zero | tr \\\"\\\\0\\\" z\"}" &&
	test "$(wc -c <stream.out)" = 20000000 &&
	test "$(tr -d z <stream.out | wc -c)" = 0
'

test_expect_success 'options: stdin, env, cwd' '
	mkdir -p work/sub &&
	stream "{\"command\":\"cat; echo \$T3060; pwd\",\"stdin\":\"in\\n\",\"env\":{\"T3060\":\"envval\"},\"cwd\":\"sub\"}" &&
	printf "in\nenvval\n%s\n" "$TRASH_DIRECTORY/work/sub" >expect &&
	test_cmp expect stream.out
'

test_expect_success 'option timeout_ms: reason timeout, group gone' '
	stream "{\"command\":\"echo started; sleep 3060.789 & sleep 3060.789\",\"timeout_ms\":3000}" &&
	printf "started\n" >expect && test_cmp expect stream.out &&
	json_is stream.exit reason timeout &&
	rt_no_process "sleep 3060\\.789"
'

test_expect_success 'option max_output_bytes: reason output_limit' '
	stream "{\"command\":\"yes\",\"max_output_bytes\":50000}" &&
	json_is stream.exit reason output_limit &&
	test "$(wc -c <stream.out)" -le 50000
'

test_expect_success 'validation errors come as a plain 400 before streaming' '
	rt_expect_error 400 "command must not be empty" POST /v1/exec \
		--data-binary "{\"command\":\"\"}" &&
	rt_expect_error 400 "cwd must be within workdir" POST /v1/exec \
		--data-binary "{\"command\":\"pwd\",\"cwd\":\"..\"}" &&
	rt_expect 400 POST /v1/exec --data-binary "{\"command\":" &&
	json_get body detail >detail &&
	test_grep "^invalid JSON body: " detail
'

test_expect_success 'a body over 1 MiB is 413' '
	python3 -c "import json; print(json.dumps({\"command\": \"true\", \"stdin\": \"x\" * 1100000}))" >big.json &&
	rt_expect_error 413 "request body too large" POST /v1/exec \
		--data-binary @big.json
'

test_expect_success 'closing the connection kills the process group' '
	# 5 s for curl, the server and the shell to get "going" out under
	# ASan on a loaded machine; the command runs for 1000
	test_expect_code 28 rt_curl /v1/exec -N --max-time 5 -o cut.out \
		--data-binary "{\"command\":\"echo going; sleep 3060.790 & sleep 3060.790\"}" &&
	test_grep going cut.out &&
	rt_no_process "sleep 3060\\.790" &&
	rt_alive
'

# cancel_by_id <id>: DELETE /v1/exec/<id> answers 204 (polled: the
# process pgrep saw may belong to the command before it is registered)
cancel_by_id() {
	rt_req DELETE "/v1/exec/$1" && test "$(cat status)" = 204
}

test_expect_success 'DELETE /v1/exec/<request id> cancels while the client waits' '
	rt_curl /v1/exec -N -o held.out -H "X-Request-ID: t3060-held" \
		--data-binary "{\"command\":\"echo going; sleep 3060.791 & sleep 3060.791\"}" &
	held=$! &&
	# pgrep would see the shell, whose command line names the sleep,
	# before its echo ran: the output it must keep is the signal
	rt_poll 30 grep -q going held.out &&
	rt_poll 30 cancel_by_id t3060-held &&
	wait $held &&
	rt_ndjson held.out &&
	json_is stream.exit reason cancelled &&
	json_is stream.exit exit_code -1 &&
	test_grep going stream.out &&
	rt_no_process "sleep 3060\\.791" &&
	rt_expect_error 404 "no running command has request id '"'"'t3060-held'"'"'" \
		DELETE /v1/exec/t3060-held &&
	rt_expect 400 DELETE /v1/exec &&
	rt_expect 400 DELETE /v1/exec/a/b &&
	rt_expect 404 POST /v1/exec/t3060-held -d x \
		-H "Content-Type: application/octet-stream"
'

test_expect_success 'DELETE /v1/exec/<request id> cancels a plain /execute too' '
	rt_curl /execute -o held.json -H "X-Request-ID: t3060-plain" \
		-H "Content-Type: application/json" \
		--data-binary "{\"command\":\"sleep 3060.792\"}" &
	held=$! &&
	rt_wait_process "^sleep 3060\\.792" &&
	rt_poll 30 cancel_by_id t3060-plain &&
	wait $held &&
	json_is held.json reason cancelled &&
	rt_no_process "sleep 3060\\.792" &&
	rt_expect 200 GET / &&
	test_grep "\"exec-cancel\"" body
'

test_expect_success 'a stream command is logged like /execute' '
	stream "{\"command\":\"echo logged-stream\"}" &&
	rt_poll 10 grep -q "msg=\"exec done\" command=\"echo logged-stream\" exit=0 stdout_bytes=14 stderr_bytes=0" rt.log &&
	test_grep "msg=request method=POST path=/v1/exec status=200" rt.log
'

test_expect_success 'a quiet command gets heartbeat events, then its exit' '
	rt_start --name=hb --workdir="$TRASH_DIRECTORY/hbwork" -- --heartbeat=200ms &&
	RT=hb rt_expect 200 POST /v1/exec -H "Content-Type: application/json" \
		--data-binary "{\"command\":\"sleep 1; echo after\"}" &&
	grep -c "^{\"type\":\"heartbeat\"}$" body >count &&
	test "$(cat count)" -ge 2 &&
	tail -n 1 body | test_grep "\"type\":\"exit\",\"exit_code\":0" &&
	test_grep "\"data\":\"after" body
'

# A client that sends its next chunk of stdin as soon as the last one is
# answered, each on a connection of its own (through a router every
# request has its own): the last one's claim on the command's stdin must
# be over by then, never "in progress" (409), which loses the chunk. (An
# answer went out before the claim ended: under load the next chunk came
# first; the REPL on kube lost a line so, t6223 in CI.)
test_expect_success PYTHON 'stdin chunks back to back on new connections: none refused' '
	rt_loaded python3 "$TEST_DIRECTORY/stdin-chunks.py" "$(cat rt.url)" exec 500
'

test_expect_success 'the servers stop cleanly, no sanitizer report' '
	rt_stop_check
'

test_done

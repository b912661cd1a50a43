#!/bin/sh
test_description='gosbx-runtime: the key=value log on stderr'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

# exec_done_line <preview as logged, quoted>: wait for its exec done line
exec_done_line() {
	rt_poll 10 grep -qF "msg=\"exec done\" command=$1 exit=" rt.log ||
	{ echo >&4 "no exec done line with command=$1 in:"; cat rt.log >&4; false; }
}

test_expect_success 'setup' '
	rt_start
'

test_expect_success 'every line: time (RFC 3339, ms), level, msg' '
	rt_exec "{\"command\":\"true\"}" &&
	rt_expect 404 GET /nope &&
	rt_poll 10 grep -q "path=/nope" rt.log &&
	{
		grep -Ev "^time=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}(Z|[+-][0-9]{2}:[0-9]{2}) level=(DEBUG|INFO|WARN|ERROR) msg=" rt.log >bad
		true
	} &&
	test_line_count = 0 bad &&
	test_line_count -ge 4 rt.log
'

test_expect_success 'server listening names addr and workdir' '
	test_grep "level=INFO msg=\"server listening\" addr=$(sed "s|http://||" rt.url) workdir=$TRASH_DIRECTORY/work" rt.log
'

test_expect_success 'request lines: method, path, status, duration_ms' '
	rt_expect 404 GET /log-probe &&
	rt_expect 405 GET /execute &&
	rt_expect 200 PUT /v1/files/logged.txt --data-binary x &&
	rt_poll 10 grep -q "method=PUT path=/v1/files/logged.txt" rt.log &&
	test_grep "level=INFO msg=request method=GET path=/log-probe status=404 duration_ms=[0-9]" rt.log &&
	test_grep "msg=request method=GET path=/execute status=405 duration_ms=" rt.log &&
	test_grep "msg=request method=PUT path=/v1/files/logged.txt status=200 duration_ms=" rt.log
'

test_expect_success 'exec begin and exec done with counts' '
	rt_exec "{\"command\":\"printf 1234; printf 12 >&2; exit 4\"}" &&
	exec_done_line "\"printf 1234; printf 12 >&2; exit 4\"" &&
	test_grep "level=INFO msg=\"exec begin\" command=\"printf 1234; printf 12 >&2; exit 4\"\$" rt.log &&
	test_grep "msg=\"exec done\" command=\"printf 1234; printf 12 >&2; exit 4\" exit=4 stdout_bytes=4 stderr_bytes=2 duration_ms=[0-9]" rt.log
'

test_expect_success 'stdout_bytes counts all bytes, also past the 8 MiB cut' '
	rt_exec "{\"command\":\"head -c 9000000 /dev/zero\"}" &&
	exec_done_line "\"head -c 9000000 /dev/zero\"" &&
	test_grep "command=\"head -c 9000000 /dev/zero\" exit=0 stdout_bytes=9000000 stderr_bytes=0" rt.log
'

test_expect_success 'preview: a newline becomes U+23CE' '
	rt_exec "{\"command\":\"echo one\\necho two\"}" &&
	nl=$(printf "\342\217\216") &&
	exec_done_line "\"echo one${nl}echo two\""
'

test_expect_success 'preview: cut at 120 bytes with U+2026' '
	long=$(python3 -c "print(\"true \" + \"y\" * 200)") &&
	rt_exec "{\"command\":\"$long\"}" &&
	cut=$(python3 -c "print(\"true \" + \"y\" * 115)") &&
	ell=$(printf "\342\200\246") &&
	exec_done_line "\"$cut$ell\""
'

test_expect_success 'preview: exactly 120 bytes is not cut' '
	long=$(python3 -c "print(\"true \" + \"z\" * 115)") &&
	rt_exec "{\"command\":\"$long\"}" &&
	exec_done_line "\"$long\""
'

test_expect_success 'preview: quotes and backslashes are escaped' '
	cat >q.json <<-\EOF &&
	{"command":"true \"q\" \\\\x"}
	EOF
	rt_exec @q.json &&
	cat >q.expect <<-\EOF &&
	msg="exec done" command="true \"q\" \\\\x" exit=0
	EOF
	rt_poll 10 grep -qF -f q.expect rt.log
'

test_expect_success 'a value without spaces is not quoted' '
	rt_exec "{\"command\":\"true\"}" &&
	exec_done_line true
'

test_expect_success 'a control character in the command is escaped' '
	rt_exec "{\"command\":\"true\\t#tab\"}" &&
	exec_done_line "\"true\\t#tab\""
'

test_expect_success '--log-level=warn drops the INFO lines' '
	rt_start --name=warn --workdir="$TRASH_DIRECTORY/warn-work" -- \
		--log-level=warn &&
	RT=warn rt_exec "{\"command\":\"true\"}" &&
	RT=warn rt_expect 404 GET /nope &&
	rt_stop warn &&
	test_must_fail grep "level=INFO" warn.log &&
	test_must_fail grep "level=DEBUG" warn.log
'

test_expect_success 'SANDBOX_LOG_LEVEL=error does the same' '
	SANDBOX_LOG_LEVEL=error &&
	export SANDBOX_LOG_LEVEL &&
	rt_start --name=err --workdir="$TRASH_DIRECTORY/err-work" &&
	RT=err rt_exec "{\"command\":\"true\"}" &&
	rt_stop err &&
	test_must_fail grep "level=INFO" err.log
'

test_expect_success '--log-level=debug keeps the INFO lines' '
	rt_start --name=dbg --workdir="$TRASH_DIRECTORY/dbg-work" -- \
		--log-level=debug &&
	RT=dbg rt_exec "{\"command\":\"true\"}" &&
	rt_poll 10 grep -q "msg=\"exec done\"" dbg.log &&
	rt_stop dbg
'

test_expect_success 'an unknown log level is refused at startup' '
	{
		timeout 60 gosbx-runtime --log-level=loud \
			--addr=127.0.0.1:$(test_free_port) \
			--workdir="$TRASH_DIRECTORY/loud-work" </dev/null \
			>loud.out 2>loud.log 3>&- 4>&- 5>&-
		echo $? >loud.status
	} &&
	test "$(cat loud.status)" != 0 &&
	test "$(cat loud.status)" != 124 &&
	test "$(cat loud.status)" -le 129 &&
	test_grep "loud" loud.log
'

test_expect_success 'GET / lists logs; GET /v1/logs has the lines of stderr' '
	# a request is logged after its answer: wait for the lines
	requests_logged() {
		test "$(grep -c "msg=request " rt.log)" -ge "$1"
	} &&
	n=$(grep -c "msg=request " rt.log) &&
	rt_expect 200 GET / &&
	test_grep "\"logs\"" body &&
	rt_exec "{\"command\":\"echo via-v1-logs\"}" &&
	rt_poll 10 grep -q "command=\"echo via-v1-logs\" exit=0" rt.log &&
	rt_poll 10 requests_logged $((n + 2)) &&
	rt_expect 200 GET /v1/logs &&
	json_get body log >ring &&
	test_grep "msg=\"exec done\" command=\"echo via-v1-logs\" exit=0" ring &&
	json_is body from 0 &&
	next=$(json_get body next) &&
	rt_poll 10 requests_logged $((n + 3)) &&
	rt_expect 200 GET "/v1/logs?since=$next" &&
	json_is body from "$next" &&
	json_get body log >since &&
	# only the request line of the GET /v1/logs before
	test_line_count = 1 since &&
	test_grep "msg=request method=GET path=/v1/logs status=200" since
'

test_expect_success 'GET /v1/logs: a since that is no offset is 400' '
	rt_expect 400 GET "/v1/logs?since=abc" &&
	rt_expect 400 GET "/v1/logs?since=-1" &&
	rt_expect 400 GET "/v1/logs?since=" &&
	rt_expect 400 GET "/v1/logs?since=99999999999999999999999" &&
	rt_alive
'

test_expect_success 'GET /v1/logs keeps at most 1 MiB, whole lines' '
	long=$(printf "%04000d" 0) &&
	for i in $(seq 400)
	do
		echo "url = \"$(cat rt.url)/ring-$i-$long\"" &&
		echo "output = /dev/null" || return 1
	done >curl.cfg &&
	curl -s -K curl.cfg &&
	rt_poll 10 grep -q "path=/ring-400-" rt.log &&
	rt_expect 200 GET /v1/logs &&
	json_get body log >ring &&
	test $(wc -c <ring) -le 1048576 &&
	test $(wc -c <ring) -ge 600000 &&
	test_grep "path=/ring-400-" ring &&
	test_must_fail grep "path=/ring-1-" ring &&
	test $(json_get body from) -gt 0 &&
	# every line whole: none without its start
	test_must_fail grep -v "^time=" ring &&
	# (under a sanitizer the quarantine keeps every freed request resident)
	{ test_have_prereq SANITIZED || rt_memory_bounded; }
'

test_expect_success 'the servers stop cleanly, no sanitizer report' '
	rt_stop_check
'

test_done

#!/bin/sh
test_description='idle and slow connections cannot keep honest clients out

1,000 TCP connections that send nothing and one that sends its request
head a byte a second, against gosbx-runtime on TCP and gosbx mcp --http
(t/slowloris.py): an honest request is served while they are held, the
server closes each of them within its head timeout (10 s from accept),
and keeps serving. gosbx-runtime listens on loopback unless told.'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

test_have_prereq PYTHON || test_skip_all 'python3 is not installed'

# slowloris <port> <request file> [<head file>]: run t/slowloris.py,
# its facts in "facts"; skips (returns 0 with SKIPPED) when the fd
# limit is too low
slowloris() {
	python3 "$TEST_DIRECTORY/slowloris.py" 127.0.0.1 "$1" "$2" 1000 \
		${3:+"$3"} >facts
	_rc=$?
	cat facts >&4
	if test $_rc = 2; then
		echo >&4 "SKIPPED: $(cat facts)"
		return 0
	fi
	test $_rc = 0
}

# fact <key>: its value in "facts"
fact() {
	sed -n "s/^$1 //p" facts
}

test_expect_success 'gosbx-runtime on TCP: served while 1,000 idle connections stand' '
	rt_start &&
	port=$(sed "s/.*://" rt.url) &&
	printf "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" >req &&
	slowloris $port req &&
	test "$(fact honest_status)" = 200 &&
	test "$(fact idle_closed)" = 1000 &&
	test "$(fact honest_after)" = 200 &&
	curl -sf "$(cat rt.url)/" >out &&
	test_grep "\"status\":\"ok\"" out
'

test_expect_success 'gosbx-runtime: served while 1,000 connections stall their bodies' '
	rt_start --name=body &&
	port=$(sed "s/.*://" body.url) &&
	printf "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" >req &&
	printf "POST /execute HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"command\":" >head &&
	slowloris $port req head &&
	test "$(fact honest_status)" = 200 &&
	test "$(fact idle_closed)" = 1000 &&
	test "$(fact honest_after)" = 200 &&
	RT=body rt_exec "{\"command\":\"echo still\"}" &&
	test "$(json_get body stdout)" = still
'

test_expect_success 'gosbx mcp --http: the token gets through 1,000 idle connections' '
	echo t0ken-for-t7041 >token &&
	port=$(test_free_port) &&
	{
		gosbx mcp --http=127.0.0.1:$port --token-file=token \
			2>mcp.err &
	} &&
	echo $! >mcp.pid &&
	test_atexit "kill $(cat mcp.pid)" &&
	test_retry 300 0.1 grep -q "listening on" mcp.err &&
	body="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t7041\",\"version\":\"0\"}}}" &&
	printf "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer t0ken-for-t7041\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" \
		${#body} "$body" >req &&
	slowloris $port req &&
	test "$(fact honest_status)" = 200 &&
	test "$(fact idle_closed)" = 1000 &&
	test "$(fact honest_after)" = 200 &&
	kill $(cat mcp.pid)
'

test_expect_success 'gosbx-runtime listens on 127.0.0.1:8888 unless told' '
	mkdir -p w &&
	{
		gosbx-runtime --workdir=w </dev/null 2>default.log 3>&- 4>&- 5>&- &
	} &&
	echo $! >default.pid &&
	test_atexit "kill $(cat default.pid)" &&
	test_retry 300 0.1 grep -q "server listening\|cannot listen" default.log &&
	cat default.log >&4 &&
	if grep -q "cannot listen" default.log
	then
		# the port is taken here: the address tried is still the point
		test_grep "cannot listen on .127.0.0.1:8888.: Address already in use" default.log
	else
		test_grep "msg=\"server listening\" addr=127.0.0.1:8888 " default.log &&
		ss -ltnH "sport = :8888" >ss.out &&
		test_grep "127.0.0.1:8888" ss.out &&
		test_grep ! "0.0.0.0:8888\|\*:8888\|\[::\]:8888" ss.out
	fi
'

test_done

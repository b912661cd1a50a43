#!/bin/sh
test_description='gosbx-runtime: options, GET /, routing errors, metrics'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

test_expect_success '-h prints the usage on stdout and exits 0' '
	gosbx-runtime -h >out 2>err &&
	head -n 1 out >first &&
	echo "usage: gosbx-runtime [--addr=<addr>] [--workdir=<dir>] [--log-level=<level>] [--shutdown-grace=<duration>]" >expect &&
	test_cmp expect first &&
	test_grep -e "--addr" out &&
	test_grep SANDBOX_ADDR out &&
	test_grep SANDBOX_WORKDIR out &&
	test_grep SANDBOX_LOG_LEVEL out
'

test_expect_success '--version prints the version' '
	gosbx-runtime --version >out &&
	test_grep "^gosbx-runtime version [0-9]" out
'

test_expect_success 'an unknown option is a usage error (129)' '
	{ gosbx-runtime --no-such-option 2>err; echo $? >code; } &&
	echo 129 >expect && test_cmp expect code &&
	test_grep "no-such-option" err
'

test_expect_success 'a bad duration is a usage error (129)' '
	{ gosbx-runtime --shutdown-grace=soon 2>err; echo $? >code; } &&
	echo 129 >expect && test_cmp expect code &&
	test_grep "shutdown-grace" err
'

test_expect_success 'start on a loopback TCP port' '
	rt_start
'

test_expect_success 'GET / answers the readiness object with features' '
	rt_expect 200 GET / &&
	json_is body status ok &&
	json_is body server gosbx-runtime &&
	json_type body version >type && echo str >expect &&
	test_cmp expect type &&
	test -n "$(json_get body version)" &&
	json_is body features \
		"[\"archive\", \"exec-cancel\", \"exec-input\", \"exec-interactive\", \"exec-options\", \"exec-stream\", \"files\", \"jobs\", \"logs\", \"metrics\"]" &&
	rt_header Content-Type >ct &&
	test_grep "^application/json" ct
'

test_expect_success 'the version of GET / is the one of --version' '
	rt_expect 200 GET / &&
	gosbx-runtime --version >out &&
	test_grep " $(json_get body version)\$" out
'

test_expect_success 'the workdir was created with mode 0755' '
	test -d work &&
	test "$(stat -c %a work)" = 755
'

test_expect_success 'the startup line names address and workdir' '
	test_grep "level=INFO msg=\"server listening\" .*addr=" rt.log &&
	test_grep "workdir=$TRASH_DIRECTORY/work" rt.log
'

test_expect_success 'an unknown path is 404 not found' '
	rt_expect_error 404 "not found" GET /nope &&
	rt_expect_error 404 "not found" POST /v1/nope &&
	rt_expect_error 404 "not found" GET /executex
'

test_expect_success 'a wrong method on a known path is 405' '
	rt_expect_error 405 "method not allowed" GET /execute &&
	rt_expect_error 405 "method not allowed" POST / -d x &&
	rt_expect_error 405 "method not allowed" GET /upload &&
	rt_expect_error 405 "method not allowed" PUT /v1/exec &&
	rt_expect_error 405 "method not allowed" POST /v1/metrics -d x &&
	rt_expect_error 405 "method not allowed" DELETE /download/x &&
	rt_expect_error 405 "method not allowed" POST /v1/files/x -d x
'

test_expect_success 'GET /v1/metrics has its keys with number values' '
	head -c 1048576 /dev/zero >work/mib &&
	rt_expect 200 GET /v1/metrics &&
	json_keys body >actual &&
	printf "%s\n" cpu_usage disk_usage memory_usage processes uptime_s \
		>expect &&
	test_cmp expect actual &&
	for k in cpu_usage memory_usage
	do
		json_type body $k >type &&
		grep -E "^(int|float)\$" type || return 1
	done &&
	for k in disk_usage processes uptime_s
	do
		json_type body $k >type && echo int >expect &&
		test_cmp expect type || return 1
	done &&
	test "$(json_get body disk_usage)" -ge 1048576 &&
	test "$(json_get body uptime_s)" -ge 0 &&
	test "$(json_get body processes)" -ge 0 &&
	python3 -c "import json,sys; j=json.load(open(\"body\")); sys.exit(not (j[\"cpu_usage\"] >= 0 and j[\"memory_usage\"] > 0))"
'

test_expect_success 'disk_usage grows with the workdir' '
	rt_expect 200 GET /v1/metrics &&
	before=$(json_get body disk_usage) &&
	head -c 4194304 /dev/zero >work/more &&
	rt_expect 200 GET /v1/metrics &&
	after=$(json_get body disk_usage) &&
	test "$after" -ge $((before + 4194304))
'

test_expect_success 'every request is logged with method, path, status' '
	rt_expect 404 GET /logged-404 &&
	rt_expect 200 GET /v1/metrics &&
	rt_poll 10 grep -q "msg=request method=GET path=/logged-404 status=404 duration_ms=[0-9]" rt.log &&
	test_grep "msg=request method=GET path=/v1/metrics status=200 duration_ms=[0-9]" rt.log
'

test_expect_success 'a unix socket address works' '
	rt_start --name=sock --unix --workdir="$TRASH_DIRECTORY/sockwork" &&
	test -S sock.sock &&
	RT=sock rt_expect 200 GET / &&
	json_is body status ok &&
	RT=sock rt_exec "{\"command\":\"pwd\"}" &&
	json_is body stdout "$TRASH_DIRECTORY/sockwork" &&
	test_grep "addr=unix:$TRASH_DIRECTORY/sock.sock" sock.log
'

test_expect_success 'SANDBOX_ADDR and SANDBOX_WORKDIR configure the server' '
	rt_start --name=env --env --workdir="$TRASH_DIRECTORY/envwork" &&
	RT=env rt_exec "{\"command\":\"pwd\"}" &&
	json_is body stdout "$TRASH_DIRECTORY/envwork" &&
	rt_stop env
'

test_expect_success 'an address of the form :port listens on all interfaces' '
	rt_start --name=any --any --workdir="$TRASH_DIRECTORY/anywork" &&
	RT=any rt_expect 200 GET / &&
	rt_stop any
'

test_expect_success 'a relative workdir is resolved' '
	mkdir rel &&
	(cd rel && rt_start --name=rel --workdir=w) &&
	RT=rel rt_exec "{\"command\":\"pwd\"}" &&
	json_is body stdout "$TRASH_DIRECTORY/rel/w" &&
	rt_stop rel
'

test_expect_success 'the servers stop cleanly, no sanitizer report' '
	rt_stop_check
'

test_done

#!/bin/sh
test_description='gosbx exec: a stream gone silent is a lost connection, not a hang'
# A proxy or port-forward that stops carrying bytes without closing the
# connection (seen through a real API server's port-forward under load)
# would leave gosbx waiting for ever. gosbx-runtime says its heartbeat
# interval in GET / (heartbeat_ms) and sends an event at least that
# often; gosbx takes three intervals and 5 s of silence for a lost
# connection. Here the runtime is stopped (SIGSTOP) in mid-command: its
# socket stays open and silent.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-runtime.sh

test_expect_success 'GET / says the heartbeat interval' '
	rt_start --unix -- --heartbeat=1s &&
	curl -sS --unix-socket "$TRASH_DIRECTORY/rt.sock" http://x/ >root.json &&
	test "$(json_get root.json heartbeat_ms)" = 1000
'

test_expect_success 'a silent stream fails with a clear error (125), nothing hangs' '
	GOSBX_URL=$(cat "$TRASH_DIRECTORY/rt.url") &&
	rtpid=$(rt_pid) &&
	{
		gosbx --backend=url --url="$GOSBX_URL" exec -- \
			"echo started; sleep 2045.456" >out 2>err &
	} &&
	pid=$! &&
	test_retry 100 0.1 grep -q started out &&
	kill -STOP "$rtpid" &&
	# 3 heartbeats and 5 s: about 8 s; waited for by wait, which
	# a hang would turn into the test run'"'"'s own timeout
	{ wait $pid; status=$?; } &&
	kill -CONT "$rtpid" &&
	test $status = 125 &&
	cat err >&3 &&
	test_grep "nothing came for 8 s; the connection is taken for lost" err
'

test_expect_success 'a quiet command with heartbeats is not cut' '
	gosbx --backend=url --url="$(cat "$TRASH_DIRECTORY/rt.url")" \
		exec -- "sleep 4; echo done" >out &&
	echo done >expect &&
	test_cmp expect out
'

test_done

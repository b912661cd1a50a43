#!/bin/sh
test_description='gosbx exec: kept claims, concurrency, SIGINT, dead runtimes'
. "$(dirname "$0")/test-lib.sh"

# local by default; t6221 runs this suite with GOSBX_TEST_BACKEND=kube
. "$TEST_DIRECTORY"/lib-backend.sh

claims_dir="$XDG_STATE_HOME/gosbx/claims"

# Sandbox processes are visible in the host's pid namespace; the
# patterns start with '^sleep' so that they never match gosbx itself.
running() {
	pgrep -f "$1" >/dev/null
}
appears() {
	test_retry 200 0.1 running "$1"
}
not_running() {
	! pgrep -f "$1" >/dev/null
}
gone() {
	test_retry 200 0.1 not_running "$1"
}
# pids_of <pattern>: the processes whose command line matches, and
# their children (a sandbox's bwrap and netd, and bwrap's child: the
# runtime)
pids_of() {
	for _p in $(pgrep -f "$1"); do
		echo "$_p"
		pgrep -P "$_p" || :
	done
}

test_atexit 'gosbx close --all'

test_expect_success 'setup: a kept claim' '
	gosbx open -q --name=t2001 >name &&
	echo t2001 >expect &&
	test_cmp expect name
'

test_expect_success 'state persists across exec calls on a claim' '
	gosbx exec --claim=t2001 -- "echo kept >state" &&
	gosbx exec --claim=t2001 -- cat state >out &&
	echo kept >expect &&
	test_cmp expect out &&
	backend_claim_exists t2001
'

test_expect_success 'GOSBX_CLAIM names the default claim' '
	GOSBX_CLAIM=t2001 gosbx exec -- cat state >out &&
	echo kept >expect &&
	test_cmp expect out
'

test_expect_success 'exec with --claim disconnects but never deletes' '
	expect_code 9 gosbx exec --claim=t2001 -- exit 9 &&
	gosbx exec --claim=t2001 -- true &&
	backend_claim_exists t2001
'

test_expect_success 'limits only apply to throwaway sandboxes (129)' '
	expect_code 129 gosbx exec --claim=t2001 --memory=1g -- true 2>err &&
	test_grep "throwaway" err
'

test_expect_success 'an unknown claim fails with 125, a bad name is usage (129)' '
	expect_code 125 gosbx exec --claim=no-such-claim -- true 2>err &&
	test_grep -E "no such claim|no claim .no-such-claim." err &&
	expect_code 129 gosbx exec --claim=../t2001 -- true 2>err &&
	test_grep "invalid claim name" err
'

test_expect_success 'two exec on one claim at once both run' '
	gosbx exec --claim=t2001 -- "rm -f a b" || return 1
	# each writes its file, then waits (bounded) for the other one
	gosbx exec --claim=t2001 -- "touch a; i=0;
		while ! test -f b; do i=\$((i+1)); test \$i -lt 600 || exit 1;
		sleep 0.1; done; echo A" >out.a &
	pid_a=$! &&
	gosbx exec --claim=t2001 -- "touch b; i=0;
		while ! test -f a; do i=\$((i+1)); test \$i -lt 600 || exit 1;
		sleep 0.1; done; echo B" >out.b &&
	wait $pid_a &&
	echo A >expect && test_cmp expect out.a &&
	echo B >expect && test_cmp expect out.b
'

test_expect_success 'SIGINT kills the command in the sandbox; exit 130' '
	gosbx exec --claim=t2001 -- "sleep 1000.789" &
	pid=$! &&
	appears "^sleep 1000.789" &&
	kill -INT $pid &&
	{ wait $pid; status=$?; } &&
	test $status = 130 &&
	gone "^sleep 1000.789" &&
	gosbx exec --claim=t2001 -- cat state >out &&
	echo kept >expect &&
	test_cmp expect out
'

test_expect_success 'SIGTERM does the same; exit 143' '
	gosbx exec --claim=t2001 -- "sleep 1000.790" &
	pid=$! &&
	appears "^sleep 1000.790" &&
	kill -TERM $pid &&
	{ wait $pid; status=$?; } &&
	test $status = 143 &&
	gone "^sleep 1000.790"
'

test_expect_success 'SIGINT of a throwaway exec also deletes its sandbox' '
	backend_claims >before &&
	gosbx exec -- "sleep 1000.791" &
	pid=$! &&
	appears "^sleep 1000.791" &&
	kill -INT $pid &&
	{ wait $pid; status=$?; } &&
	test $status = 130 &&
	gone "^sleep 1000.791" &&
	backend_claims >after &&
	test_cmp before after
'

test_expect_success 'a stdin script runs in a claim' '
	echo "cat state; exit 6" >script &&
	expect_code 6 gosbx exec --claim=t2001 <script >out &&
	echo kept >expect &&
	test_cmp expect out
'

test_expect_success LOCAL 'a claim whose runtime was killed: clear error, 125' '
	gosbx open -q --name=t2001-dead >/dev/null &&
	appears "$claims_dir/t2001-dead/" &&
	pids=$(pids_of "$claims_dir/t2001-dead/") &&
	test $(echo "$pids" | wc -l) -ge 3 &&
	pkill -KILL -f "$claims_dir/t2001-dead/" &&
	test_retry 200 0.1 test_ended $pids &&
	expect_code 125 gosbx exec --claim=t2001-dead -- true 2>err &&
	test_grep "claim .t2001-dead." err &&
	gosbx close t2001-dead &&
	test ! -e "$claims_dir/t2001-dead"
'

test_expect_success 'the other claim is still fine' '
	gosbx exec --claim=t2001 -- cat state >out &&
	echo kept >expect &&
	test_cmp expect out
'

test_done

#!/bin/sh
test_description='gosbx exec on the url backend driving sandboxd (sandboxd://)

gosbx-runtime'"'"'s sandboxd listeners, upstream sandboxd built from the
Go module (t/lib-sandboxd.sh), and hostile gRPC servers
(t/hostile-grpc.py): a huge message length, no grpc-status, a server
that stops answering, a server that is not HTTP/2.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-sandboxd.sh

# the same checks against each server; $1 names it
exec_checks() {
	test_expect_success "$1: output streams and exit status" "
		expect_code 3 env GOSBX_URL=\"\$(sbd_url $1)\" \
			gosbx --backend=url exec -- \
			'echo out; echo err >&2; exit 3' >out 2>err &&
		echo out >expect && test_cmp expect out &&
		echo err >expect && test_cmp expect err
	"

	# stdin's EOF meets a command that has ended: upstream answers
	# NOT_FOUND or INTERNAL (file already closed), before or after
	# the exit event; neither is news
	test_expect_success "$1: commands that end at once say nothing more" "
		i=0 &&
		while test \$i -lt 40
		do
			GOSBX_URL=\$(sbd_url $1) gosbx --backend=url exec \
				-- 'exit 0' </dev/null 2>err &&
			test_cmp /dev/null err &&
			printf abc | GOSBX_URL=\$(sbd_url $1) \
				gosbx --backend=url exec -i -- 'exit 0' 2>err &&
			test_cmp /dev/null err || return 1
			i=\$((i + 1))
		done
	"

	test_expect_success "$1: -e and -w reach the command" "
		mkdir -p \"\$(cat $1.root)/sub\" &&
		GOSBX_URL=\$(sbd_url $1) gosbx --backend=url exec -e A=b \
			-w sub -- 'echo \$A; pwd' >out &&
		sed -n 1p out >actual && echo b >expect &&
		test_cmp expect actual &&
		sed -n 2p out | grep '/sub\$'
	"

	test_expect_success "$1: -o json has the exit code and output" "
		GOSBX_URL=\$(sbd_url $1) gosbx --backend=url exec -o json \
			-- 'printf x; exit 7' >out;
		test \$? = 7 &&
		grep '\"exit_code\":7' out && grep '\"stdout\":\"x\"' out
	"

	test_expect_success "$1: --timeout kills through SendSignal (124)" "
		expect_code 124 env GOSBX_URL=\"\$(sbd_url $1)\" \
			gosbx --backend=url exec --timeout=3s -- \
			'sleep 1000.$2' 2>err &&
		test_grep 'timed out' err &&
		test_retry 100 0.1 sh -c '! pgrep -f \"^sleep 1000.$2\" >/dev/null'
	"

	test_expect_success "$1: files with a command go through PUT" "
		echo data >f &&
		GOSBX_URL=\$(sbd_url $1) gosbx --backend=url exec -f f \
			-- 'cat f' >out &&
		test_cmp f out
	"
}

test_expect_success 'setup: gosbx-runtime with sandboxd listeners' '
	sbd_start_gosbx --name=gs
'
exec_checks gs 461

test_expect_success 'setup: upstream sandboxd built from the module' '
	sbd_build &&
	sbd_start_upstream --name=up
'
exec_checks up 462

test_expect_success 'a malformed sandboxd URL is a usage error' '
	expect_code 129 env GOSBX_URL="sandboxd://?rest=x" \
		gosbx --backend=url exec -- true 2>err &&
	test_grep "malformed sandboxd URL" err
'

test_expect_success 'gosbx logs says sandboxd has no runtime log' '
	GOSBX_URL=$(sbd_url gs) && export GOSBX_URL &&
	gosbx --backend=url logs "$GOSBX_URL" >out 2>&1;
	test $? != 0 && grep "runs sandboxd, which serves no log of its own" out
'

test_expect_success 'gosbx exec -d and jobs say sandboxd has no jobs' '
	GOSBX_URL=$(sbd_url gs) && export GOSBX_URL &&
	expect_code_err 125 gosbx --backend=url exec -d --claim="$GOSBX_URL" \
		-- sleep 1 &&
	grep "runs sandboxd, which has no jobs" err &&
	expect_code_err 125 gosbx --backend=url jobs --claim="$GOSBX_URL" &&
	grep "runs sandboxd, which has no jobs" err
'

# hostile_start <mode>: t/hostile-grpc.py on free ports, its URL in
# <mode>.url
hostile_start() {
	python3 "$TEST_DIRECTORY/hostile-grpc.py" "$1.rp" "$1.gp" "$1" \
		</dev/null >/dev/null 2>"$1.log" 3>&- 4>&- 5>&- &
	echo $! >>"$TRASH_DIRECTORY/.sbd-pids" &&
	test_retry 100 0.1 test -s "$1.gp" &&
	test_retry 100 0.1 test -s "$1.rp" &&
	echo "sandboxd://127.0.0.1:$(cat "$1.gp")?rest=$(cat "$1.rp")" \
		>"$1.url"
}

test_expect_success 'a gRPC port that is not HTTP/2 (the REST one)' '
	_rest=$(cat gs.rest) && _port=${_rest##*:} &&
	expect_code 125 env GOSBX_URL="sandboxd://127.0.0.1:$_port?rest=$_port" \
		gosbx --backend=url exec -- true 2>err &&
	test_grep -E "gRPC server (ended|closed) the connection" err
'

test_expect_success 'a message length of 4 GiB - 1 ends the call' '
	hostile_start huge &&
	expect_code 125 env GOSBX_URL="$(cat huge.url)" \
		gosbx --backend=url exec -- true 2>err &&
	test_grep "message of 4294967295 bytes over the limit" err
'

test_expect_success 'an answer without grpc-status is an error' '
	hostile_start nostatus &&
	expect_code 125 env GOSBX_URL="$(cat nostatus.url)" \
		gosbx --backend=url exec -- true 2>err &&
	test_grep "without grpc-status" err
'

test_expect_success 'a server that stops answering: --timeout ends the wait' '
	hostile_start stall &&
	expect_code 125 env GOSBX_URL="$(cat stall.url)" \
		gosbx --backend=url exec --timeout=500ms -- true 2>err &&
	test_grep "did not start the command within the timeout of 500 ms" err
'

test_done

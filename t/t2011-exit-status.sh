#!/bin/sh
test_description='one exit-status rule for every command (gosbx(1) EXIT STATUS)'
. "$(dirname "$0")/test-lib.sh"

# 0 success, 129 a usage error with the usage, 125 a failure of gosbx
# or the sandbox, 1 a verdict (doctor, demo, smoke), and for exec the
# command's own status.

test_atexit 'gosbx close --all'

# usage_err <cmd> <gosbx arguments...>: exits 129, says why and shows
# the usage of <cmd> ("gosbx" for the global options) on stderr
usage_err() {
	_cmd=$1
	shift
	test_expect_code_err 129 gosbx "$@" </dev/null >out &&
	test_grep "^error: " err &&
	test_grep "^usage: gosbx${_cmd:+ $_cmd}" err &&
	test_line_count = 0 out
}

commands="claims close demo doctor exec mcp open push smoke"

test_expect_success 'every command: an unknown option is 129 with the usage' '
	for c in $commands; do
		usage_err $c $c --no-such-option || return 1
	done &&
	usage_err "" --no-such-option claims
'

test_expect_success 'every command: a bad option value is 129 with the usage' '
	usage_err claims claims -o yaml &&
	usage_err claims claims --backend=nowhere &&
	usage_err close close --all some-name &&
	usage_err demo demo --flow=nope &&
	usage_err demo demo --open-timeout=soon &&
	usage_err doctor doctor -o yaml &&
	usage_err doctor doctor --backend=nowhere &&
	usage_err doctor doctor --probe-timeout=soon &&
	usage_err exec exec --timeout=soon -- true &&
	usage_err exec exec --env==v -- true &&
	usage_err exec exec --cwd=../x -- true &&
	usage_err exec exec -f "x:../y" -- true &&
	usage_err exec exec --cpus=lots -- true &&
	usage_err mcp mcp --tools=nope &&
	usage_err mcp mcp --jobs-max-concurrent=0 &&
	usage_err open open --ttl=soon &&
	usage_err open open --memory=lots &&
	usage_err push push --claim=valid-name --to=../x f &&
	usage_err smoke smoke --timeout=soon &&
	usage_err smoke smoke --server= &&
	usage_err "" --backend=nowhere claims &&
	usage_err "" --api-version=v9 claims &&
	usage_err "" --open-timeout=0 claims
'

test_expect_success 'a kube option without the kube backend is 129, naming it' '
	for o in --kubeconfig=k --context=c --namespace=n --template=t \
		--warm-pool=w --api-version=v1beta1 --gateway=127.0.0.1:1 \
		--api-url=http://127.0.0.1:1 --router-namespace=r \
		--open-timeout=1m
	do
		test_expect_code_err 129 gosbx $o open </dev/null >out &&
		test_grep "^error: option .${o%%=*}. needs --backend=kube; the backend here is .local.\$" err &&
		test_line_count = 0 out || return 1
	done &&
	(
		GOSBX_BACKEND=url &&
		export GOSBX_BACKEND &&
		test_expect_code_err 129 gosbx --url=http://127.0.0.1:1 \
			--context=c exec -- true
	) &&
	test_grep "option .--context. needs --backend=kube; the backend here is .url. (GOSBX_BACKEND)" err &&
	echo token >tok &&
	test_expect_code_err 129 gosbx --router-token-file=tok claims &&
	test_grep "option .--router-token-file. needs --backend=kube or --backend=url" err
'

test_expect_success 'a kube option before a command'"'"'s -h: its help, not the error' '
	gosbx --namespace=n exec -h >out &&
	test_grep "^usage: gosbx exec " out &&
	gosbx --namespace=n open --help >out &&
	test_grep "^usage: gosbx open " out &&
	# a -h after the command is the sandbox command'"'"'s: still refused
	test_expect_code_err 129 gosbx --namespace=n exec ls -h </dev/null &&
	test_grep "needs --backend=kube" err &&
	test_expect_code_err 129 gosbx --namespace=n exec -- -h </dev/null &&
	test_grep "needs --backend=kube" err
'

test_expect_success 'a command'"'"'s own --backend=kube takes the global kube options' '
	test_expect_code 1 gosbx --context=no-such-context doctor --backend=kube \
		--kubeconfig=no-such-kubeconfig >out &&
	test_grep "^fail  kubeconfig: " out &&
	test_expect_code_err 125 gosbx --namespace=n claims --backend=kube \
		--kubeconfig=no-such-kubeconfig &&
	test_grep "no-such-kubeconfig" err
'

test_expect_success 'kube options from the environment are not checked' '
	GOSBX_NAMESPACE=n GOSBX_OPEN_TIMEOUT=1m gosbx claims >out
'

test_expect_success 'every command that takes a claim name: a bad one is 129' '
	for args in "open --name=../x" "exec --claim=../x -- true" \
		"push --claim=../x f" "close ../x" "close --disconnect UPPER" \
		"demo --claim=../x" "mcp --claim=a/b"
	do
		set -- $args &&
		usage_err $1 "$@" &&
		test_grep "invalid claim name" err || return 1
	done
'

test_expect_success 'a usage error opens nothing' '
	gosbx claims -o json >claims.json &&
	test "$(tr -d " \n" <claims.json)" = "[]"
'

# The rest needs sandboxes: the local backend
. "$TEST_DIRECTORY"/lib-backend.sh

test_expect_success 'a failure of gosbx or the sandbox is 125' '
	echo x >f &&
	test_expect_code 125 gosbx exec --claim=no-such-claim -- true &&
	test_expect_code 125 gosbx exec -f no-such-file -- true &&
	test_expect_code 125 gosbx push --claim=no-such-claim f &&
	test_expect_code 125 gosbx close no-such-claim &&
	test_expect_code 125 gosbx close --disconnect no-such-claim &&
	test_expect_code 125 gosbx demo --claim=no-such-claim >/dev/null &&
	gosbx open -q --name=t2011 >/dev/null &&
	test_expect_code 125 gosbx open -q --name=t2011 &&
	test_expect_code 125 gosbx push --claim=t2011 no-such-file &&
	test_expect_code 125 gosbx --backend=url --url=http://127.0.0.1:1 \
		--router-token-file=/nonexistent claims &&
	test_expect_code 125 gosbx mcp --http=127.0.0.1:0 \
		--token-file=/nonexistent </dev/null &&
	gosbx close t2011
'

test_expect_success 'a claims directory that cannot be read is 125' '
	echo file >state-file &&
	test_expect_code 125 env XDG_STATE_HOME="$PWD/state-file" gosbx claims
'

test_expect_success 'a write error on standard output is 125' '
	test -w /dev/full || return 0
	test_expect_code 125 gosbx claims >/dev/full &&
	test_expect_code 125 gosbx --version >/dev/full
'

test_expect_success 'a verdict is 1: doctor found a failing check' '
	test_expect_code 1 env GOSBX_BWRAP=/nonexistent/bwrap gosbx doctor >out
'

test_expect_success 'exec: the command'"'"'s own status, 124 for a timeout' '
	test_expect_code 0 gosbx exec -- true &&
	test_expect_code 1 gosbx exec -- false &&
	test_expect_code 7 gosbx exec -- sh -c "exit 7" &&
	test_expect_code 125 gosbx exec -- sh -c "exit 125" &&
	test_expect_code 129 gosbx exec -- sh -c "exit 129" &&
	test_expect_code 124 gosbx exec --timeout=200ms -- sleep 2011
'

test_expect_success 'success is 0 for every command' '
	gosbx open -q --name=t2011 >/dev/null &&
	gosbx exec --claim=t2011 -- true &&
	gosbx push --claim=t2011 f &&
	gosbx claims >/dev/null &&
	gosbx close t2011 &&
	gosbx --version >/dev/null &&
	gosbx help exec >/dev/null
'

test_done

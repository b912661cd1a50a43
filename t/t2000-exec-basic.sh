#!/bin/sh
test_description='gosbx exec: files, output, exit statuses, options'
. "$(dirname "$0")/test-lib.sh"

# local by default; t6220 runs this suite with GOSBX_TEST_BACKEND=kube
. "$TEST_DIRECTORY"/lib-backend.sh

# gone <pattern>: no process matches within about 10 s
not_running() {
	! pgrep -f "$1" >/dev/null
}
gone() {
	test_retry 100 0.1 not_running "$1"
}

test_atexit 'gosbx close --all'

test_expect_success GO 'done when: exec -f main.go -f go.mod -- go run main.go' '
	cat >main.go <<-\EOF &&
	package main

	import "fmt"

	func main() { fmt.Println("hello from a sandbox") }
	EOF
	printf "module hello\n\ngo 1.19\n" >go.mod &&
	gosbx exec -f main.go -f go.mod -- go run main.go >out &&
	echo "hello from a sandbox" >expect &&
	test_cmp expect out &&
	no_claims
'

test_expect_success 'a throwaway sandbox leaves no claim behind' '
	gosbx exec -- true &&
	expect_code 7 gosbx exec -- "exit 7" &&
	no_claims
'

test_expect_success 'the exit status passes through' '
	expect_code 3 gosbx exec -- exit 3 &&
	expect_code 0 gosbx exec -- "false; true" &&
	expect_code 1 gosbx exec false
'

test_expect_success 'death by signal N gives 128+N' '
	expect_code 137 gosbx exec -- "kill -KILL \$\$" &&
	expect_code 143 gosbx exec -- "kill -TERM \$\$"
'

test_expect_success 'stdout and stderr stay apart' '
	gosbx exec -- "echo out1; echo err1 >&2; echo out2; echo err2 >&2" \
		>out 2>err &&
	printf "out1\nout2\n" >expect && test_cmp expect out &&
	test_drop_limits_warning err &&
	printf "err1\nerr2\n" >expect && test_cmp expect err
'

test_expect_success 'several words after the options are an exact argv' '
	gosbx exec echo a   b "c  d" >out &&
	echo "a b c  d" >expect &&
	test_cmp expect out &&
	gosbx exec ls -la >out &&
	test_grep "^total" out
'

test_expect_success 'binary output arrives unchanged' '
	gosbx exec -- "printf \"\\377\\000\\001x\"" >out &&
	printf "\377\000\001x" >expect &&
	test_cmp expect out
'

test_expect_success '-f: destinations, nested directories, renames' '
	echo one >x.go &&
	echo two >y.txt &&
	gosbx exec -f x.go:pkg/x.go -f y.txt:a/b/c.txt -f x.go -- \
		"cat pkg/x.go a/b/c.txt x.go" >out &&
	printf "one\ntwo\none\n" >expect &&
	test_cmp expect out &&
	mkdir -p sub &&
	echo three >sub/z &&
	gosbx exec -f sub/z -- cat z >out &&
	echo three >expect &&
	test_cmp expect out
'

test_expect_success '-f destinations that escape /app are usage errors, nothing opened' '
	echo x >f &&
	for dest in ../y /etc/y /app/../y a/../../y a//b ""
	do
		expect_code 129 gosbx exec -f "f:$dest" -- true 2>err &&
		test_grep "^error: -f .f:" err || return 1
	done &&
	no_claims
'

test_expect_success '-f with a missing file or a directory fails with 125' '
	expect_code 125 gosbx exec -f no-such-file -- true 2>err &&
	test_grep "cannot read .no-such-file." err &&
	mkdir -p adir &&
	expect_code 125 gosbx exec -f adir -- true 2>err &&
	test_grep "is a directory" err &&
	no_claims
'

test_expect_success '--env and --cwd' '
	gosbx exec --env=A=1 --env="B=two words" -- "echo \$A; echo \$B" >out &&
	printf "1\ntwo words\n" >expect &&
	test_cmp expect out &&
	echo x >f &&
	gosbx exec -f f:d/e/f --cwd=d/e -- "pwd; ls" >out &&
	printf "%s/d/e\nf\n" "${BACKEND_WORKDIR:-$(sed -n "1s|/d/e\$||p" out)}" >expect &&
	test_cmp expect out
'

test_expect_success 'bad --env, --cwd and limit values are usage errors (129)' '
	expect_code 129 gosbx exec -e "" -- true &&
	expect_code 129 gosbx exec --env==v -- true &&
	expect_code 129 gosbx exec --cwd=../x -- true &&
	expect_code 129 gosbx exec --cwd=/etc -- true &&
	expect_code 129 gosbx exec --cpus=lots -- true &&
	expect_code 129 gosbx exec --pids=-3 -- true &&
	no_claims
'

test_expect_success 'usage errors give 129' '
	expect_code 129 gosbx exec --no-such-option -- true &&
	expect_code 0 gosbx exec -h >out &&
	test_grep "usage: gosbx exec" out
'

test_expect_success LOCAL,LIMITS 'limit options are accepted for a throwaway sandbox' '
	expect_code 0 gosbx exec --pids=40 --memory=256m --cpus=1 -- true
'

test_expect_success LOCAL,NOLIMITS 'limits this user cannot have fail closed (125)' '
	expect_code 125 gosbx exec --pids=40 -- true 2>err &&
	test_grep "cannot create sandbox: cgroup pids controller" err &&
	no_claims
'

test_expect_success PYTHON '--json prints one object with every field' '
	expect_code 5 gosbx exec --json -- "echo out; printf \"\\377\" >&2; exit 5" >out &&
	python3 -c "
import json, sys
o = json.load(open(\"out\"))
assert o[\"exit_code\"] == 5, o
assert o[\"reason\"] == \"exited\", o
assert o[\"stdout\"] == \"out\\n\", o
assert o[\"stderr\"] == \"\\ufffd\", o
assert o[\"claim\"].startswith(\"sandbox-\"), o
for k in (\"duration_ms\", \"cpu_ms\", \"peak_rss_kb\"):
    assert o[k] is None or (isinstance(o[k], int) and o[k] >= 0), (k, o)
assert o[\"stdout_truncated\"] is False and o[\"stderr_truncated\"] is False
assert o[\"signal\"] is None, o
" &&
	test_line_count = 1 out
'

test_expect_success PYTHON '--json of a signal death has the signal' '
	expect_code 137 gosbx exec --json -- "kill -KILL \$\$" >out &&
	python3 -c "
import json
o = json.load(open(\"out\"))
assert o[\"signal\"] == 9 and o[\"reason\"] == \"signaled\", o
assert o[\"exit_code\"] == -1, o
"
'

test_expect_success '--timeout: reason timeout, 124, nothing left running' '
	expect_code 124 gosbx exec --timeout=1s -- "sleep 1000.654" 2>err &&
	test_grep "timed out" err &&
	gone "^sleep 1000.654" &&
	no_claims
'

test_expect_success PYTHON '--timeout with --json says reason timeout' '
	expect_code 124 gosbx exec --json --timeout=3s -- \
		"echo started; sleep 1000.655" >out &&
	python3 -c "
import json
o = json.load(open(\"out\"))
assert o[\"reason\"] == \"timeout\", o
assert o[\"stdout\"] == \"started\\n\", o
"
'

test_expect_success 'no command: the script is standard input' '
	printf "echo one\necho two >&2\nexit 4\n" >script &&
	expect_code 4 gosbx exec <script >out 2>err &&
	echo one >expect && test_cmp expect out &&
	test_drop_limits_warning err &&
	echo two >expect && test_cmp expect err &&
	no_claims
'

test_expect_success 'no command and an empty standard input is a usage error' '
	expect_code 129 gosbx exec </dev/null 2>err &&
	test_grep "no command" err
'

test_done

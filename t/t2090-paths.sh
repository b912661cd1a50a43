#!/bin/sh
test_description='one rule for paths in a sandbox (lib/workpath.h)

push --to, exec --cwd/-w, exec -f <local>:<dest> and cp <claim>:<path>
take the same forms: relative to /app or absolute under it, with or
without a trailing slash. Outside /app, ".." and empty segments are
bad input (129) everywhere. exec -e and -w, as docker exec has them.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

test_atexit 'gosbx close --all'

sx() {
	gosbx exec --claim=t2090 -- "$@"
}

# every spelling of /app/d and of /app itself
forms_d="d d/ ./d /app/d /app/d/ /app/./d"
forms_app=". ./ /app /app/"

test_expect_success 'setup' '
	gosbx open -q --name=t2090 >/dev/null &&
	echo one >f.txt &&
	sx mkdir -p d
'

test_expect_success 'push --to: every form lands in /app/d or /app' '
	for to in $forms_d
	do
		sx rm -f d/f.txt &&
		gosbx push --claim=t2090 --to=$to f.txt &&
		sx cat d/f.txt >out &&
		test_cmp f.txt out || return 1
	done &&
	for to in $forms_app
	do
		sx rm -f f.txt &&
		gosbx push --claim=t2090 --to=$to f.txt &&
		sx cat f.txt >out &&
		test_cmp f.txt out || return 1
	done
'

test_expect_success 'exec --cwd and -w: every form runs in /app/d or /app' '
	echo /app/d >expect &&
	for cwd in $forms_d
	do
		gosbx exec --claim=t2090 --cwd=$cwd -- pwd >out &&
		test_cmp expect out &&
		gosbx exec --claim=t2090 -w $cwd -- pwd >out &&
		test_cmp expect out || return 1
	done &&
	echo /app >expect &&
	for cwd in $forms_app
	do
		gosbx exec --claim=t2090 -w $cwd -- pwd >out &&
		test_cmp expect out || return 1
	done
'

test_expect_success 'exec -f <local>:<dest>: a file, or into a directory' '
	for dest in d/g.txt ./d/g.txt /app/d/g.txt d/ /app/d/
	do
		sx rm -f d/g.txt d/f.txt &&
		gosbx exec --claim=t2090 -f f.txt:$dest -- \
			"cat d/g.txt 2>/dev/null || cat d/f.txt" >out &&
		test_cmp f.txt out || return 1
	done &&
	gosbx exec --claim=t2090 -f f.txt:/app -- cat /app/f.txt >out &&
	test_cmp f.txt out
'

test_expect_success 'cp <claim>:<path>: the same forms, both ways' '
	for p in $forms_d
	do
		sx rm -f d/f.txt &&
		gosbx cp f.txt t2090:$p &&
		sx cat d/f.txt >out &&
		test_cmp f.txt out &&
		rm -f back &&
		gosbx cp t2090:${p%/}/f.txt back &&
		test_cmp f.txt back || return 1
	done
'

test_expect_success 'outside /app, .. and empty segments: 129 for all four' '
	for p in /etc /etc/x /apps /app/../etc ../x d/../../x "d//x" ""
	do
		test_expect_code_err 129 gosbx push --claim=t2090 --to="$p" \
			f.txt &&
		test_grep "option .--to.: " err &&
		test_expect_code_err 129 gosbx exec --claim=t2090 --cwd="$p" \
			-- true &&
		test_grep "option .--cwd.: " err &&
		test_expect_code_err 129 gosbx exec --claim=t2090 \
			-f "f.txt:$p" -- true &&
		test_grep "^error: -f " err &&
		test_expect_code_err 129 gosbx cp f.txt "t2090:$p" &&
		test_grep "the sandbox path: " err || return 1
	done &&
	sx "test ! -e /etc/f.txt && test ! -e /x"
'

test_expect_success 'exec -e K=V, -e K from our environment, --env' '
	T2090_A=from-here gosbx exec --claim=t2090 -e T2090_A -e B=2 \
		--env=C=3 -e T2090_UNSET -- \
		"echo \$T2090_A \$B \$C \${T2090_UNSET-unset}" >out &&
	echo from-here 2 3 unset >expect &&
	test_cmp expect out &&
	test_expect_code_err 129 gosbx exec --claim=t2090 -e =v -- true &&
	test_grep "expects K=V or K" err
'

test_expect_success 'exec <claim> -- cmd: caught with a hint (129)' '
	test_expect_code_err 129 gosbx exec t2090 -- go version &&
	test_grep "did you mean .gosbx exec --claim=t2090 -- go version.?" err &&
	test_expect_code_err 129 gosbx exec t2090 -- sh -c "echo a b" &&
	test_grep "claim=t2090 -- sh -c '"'"'echo a b'"'"'" err
'

test_expect_success 'a command named like a claim still runs' '
	# after a -- of its own, or when no claim of that name exists
	test_expect_code 127 gosbx exec --claim=t2090 -- t2090 -- x &&
	test_expect_code 127 gosbx exec -- t2090 -- x &&
	sx "mkdir -p bin && printf \"#!/bin/sh\necho ran \\\$*\n\" >bin/ran &&
		chmod +x bin/ran" &&
	gosbx exec --claim=t2090 -- bin/ran -- x >out &&
	echo ran -- x >expect &&
	test_cmp expect out &&
	test_expect_code 127 gosbx exec no-such-claim -- true &&
	test_expect_code 0 gosbx exec --claim=t2090 echo -- x
'

test_done

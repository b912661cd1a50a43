#!/bin/sh
test_description='gosbx logs: the request log of a claim'"'"'s runtime'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

test_have_prereq LOCAL && test_atexit 'gosbx close --all'

test_expect_success 'setup' '
	if ! test_have_prereq URL
	then
		gosbx open -q --name=t2060 >/dev/null
	fi &&
	gosbx exec --claim=t2060 -- "echo one"
'

test_expect_success 'the exec begin and exec done lines of a command' '
	gosbx logs t2060 >out &&
	test_grep "msg=\"exec begin\"" out &&
	test_grep "msg=\"exec done\" command=\"echo one\" exit=0" out
'

test_expect_success '-f follows: a later command shows up, SIGTERM ends it' '
	{ gosbx logs -f t2060 >follow & } &&
	pid=$! &&
	test_retry 300 0.1 grep -q "command=\"echo one\"" follow &&
	gosbx exec --claim=t2060 -- "echo two-t2060" &&
	test_retry 300 0.1 grep -q "command=\"echo two-t2060\" exit=0" follow &&
	kill -TERM $pid &&
	wait $pid
'

test_expect_success 'control characters of a command do not reach the terminal' '
	gosbx exec --claim=t2060 -- "true \"x$(printf "\033]0;ctl-t2060\007")y\"" &&
	gosbx logs t2060 >out &&
	test_grep "ctl-t2060" out &&
	! grep -q "$(printf "\033")" out &&
	! grep -q "$(printf "\007")" out
'

test_expect_success LOCAL 'control characters in the log do not reach the terminal' '
	# the runtime escapes them; a runtime the sandbox took over may not
	printf "x\033]0;owned\007 y\tz\n" \
		>>"$XDG_STATE_HOME/gosbx/claims/t2060/runtime.log" &&
	gosbx logs t2060 >out &&
	! grep -q "$(printf "\033")" out &&
	printf "x\\\\x1b]0;owned\\\\a y\tz\n" >expect &&
	grep owned out >last &&
	test_cmp expect last
'

test_expect_success LOCAL 'C1 controls and invalid UTF-8 in the log are escaped' '
	# U+009B (CSI) and U+009D (OSC) as UTF-8, a raw 0x9b byte (CSI on
	# an 8-bit terminal), and valid text kept as it is
	printf "c1 \302\2332J \302\2350;t\007 raw \2332J caf\303\251\n" \
		>>"$XDG_STATE_HOME/gosbx/claims/t2060/runtime.log" &&
	gosbx logs t2060 >out &&
	grep "^c1 " out >last &&
	printf "c1 \\\\u009b2J \\\\u009d0;t\\\\a raw \\\\x9b2J caf\303\251\n" >expect &&
	test_cmp expect last
'

test_expect_success LOCAL 'a claim that does not exist; usage' '
	test_expect_code_err 125 gosbx logs no-such-claim &&
	test_grep "no-such-claim" err &&
	test_expect_code_err 129 gosbx logs
'

test_done

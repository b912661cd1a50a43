#!/bin/sh
test_description='every command listed by gosbx -h, through gosbx(1) EXIT STATUS

-h is 0; an unknown option, a missing or extra argument and a bad option
value are 129 (bad input); a claim that does not exist is 125. A command
that gosbx -h lists and this table does not know fails the test: add it.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

test_atexit 'gosbx close --all'

# rows: <command> <status> <arguments...>; "-" for no arguments
cat >table <<\EOF_TABLE
claims 129 claims extra-arg
claims 129 claims -o yaml
close 129 close
close 129 close --all some-name
close 125 close nope
cp 129 cp only-one
cp 129 cp a b c
cp 129 cp nope:x nope:y
cp 129 cp --max-size=lots nope:x .
cp 129 cp nope:../x .
cp 129 cp nope:/etc/passwd .
cp 125 cp nope:x .
demo 129 demo extra-arg
demo 129 demo --flow=nope
demo 125 demo --claim=nope
doctor 129 doctor extra-arg
doctor 129 doctor -o yaml
exec 129 exec --timeout=soon -- true
exec 129 exec --cwd=/etc -- true
exec 129 exec -e =v -- true
exec 129 exec --memory=4k -- true
exec 129 exec --memory=lots -- true
exec 125 exec --claim=nope -- true
jobs 129 jobs extra-arg
jobs 129 jobs
jobs 125 jobs --claim=nope
kill 129 kill
kill 129 kill nope/j1 extra-arg
kill 125 kill nope/j1
wait 129 wait
wait 125 wait nope/j1
attach 129 attach
attach 125 attach nope/j1
exec 129 exec -d -- true
logs 129 logs
logs 129 logs a b
logs 125 logs nope
mcp 129 mcp extra-arg
mcp 129 mcp --http=notaport --dev
mcp 129 mcp --tools=nope
open 129 open extra-arg
open 129 open --memory=4k
open 129 open --ttl=soon
push 129 push --claim=nope
push 129 push --claim=nope --to=../x f
push 125 push --claim=nope f
resume 129 resume
resume 129 resume ../x
resume 125 resume nope
smoke 129 smoke extra-arg
smoke 129 smoke --timeout=soon
suspend 129 suspend
suspend 129 suspend ../x
suspend 125 suspend nope
version 129 version -o yaml
EOF_TABLE

test_expect_success 'gosbx -h lists no command this table does not know' '
	gosbx -h >help &&
	sed -n "/^commands:/,/^\$/s/^   \\([a-z-]*\\) .*/\\1/p" help |
		grep -v "^help\$" >listed &&
	test -s listed &&
	while read c
	do
		grep -q "^$c " table || {
			echo >&4 "gosbx -h lists \"$c\": add it to t0080"
			return 1
		} || return 1
	done <listed
'

# Only commands this build lists (the table may know one that is
# coming, e.g. "version").
listed() { grep -qx "$1" listed; }

test_expect_success 'every command: -h is 0, with the usage on stdout' '
	while read c
	do
		test_expect_code 0 gosbx $c -h </dev/null >out &&
		test_grep "^usage: gosbx $c" out || return 1
	done <listed
'

test_expect_success 'every command: an unknown option is 129' '
	while read c
	do
		test_expect_code_err 129 gosbx $c --no-such-option \
			</dev/null >out &&
		test_grep "^error: " err || return 1
	done <listed
'

test_expect_success 'the table: bad input 129, a claim that does not exist 125' '
	echo x >f &&
	while read c want args
	do
		listed $c || continue
		test_expect_code_err $want gosbx $args </dev/null >out ||
			return 1
		test_grep "^error: " err || return 1
		if test $want = 129
		then
			test_grep "^usage: gosbx $c" err || return 1
		else
			test_grep "nope" err || return 1
		fi
	done <table
'

test_expect_success 'the url backend without a URL or a claim (its URL) is 129' '
	for args in "exec true" "open" "push f"
	do
		test_expect_code_err 129 gosbx --backend=url $args </dev/null &&
		test_grep "needs a runtime URL" err || return 1
	done
'

test_expect_success 'a mistyped command: 129 and the nearest command' '
	test_expect_code_err 129 gosbx exce &&
	test_grep "^error: .exce. is not a gosbx command .*did you mean .exec.?\$" err &&
	test_expect_code_err 129 gosbx cloes &&
	test_grep "did you mean .close.?" err &&
	test_expect_code_err 129 gosbx zzzzzzzz &&
	test_grep ! "did you mean" err
'

test_expect_success 'a bad option value opened nothing' '
	gosbx claims -o json >claims.json &&
	test "$(tr -d " \n" <claims.json)" = "[]"
'

test_done

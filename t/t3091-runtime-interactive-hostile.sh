#!/bin/sh
test_description='gosbx-runtime: the exec-interactive channel against hostile input

A client written by hand (t/lib-runtime-ws.py) breaks the channel rules of
Documentation/gosbx-runtime.txt ("Interactive commands"): a channel the
client may not use, a message far over the limit (whole or in fragments),
a client that never reads while its command writes without end. Each must
close the channel (with the documented code) or pause the command, kill the
command, keep the runtime small, and leave it serving.'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

# ws <mode> <arg> <command>: run the client against the runtime
ws() {
	python3 "$TEST_DIRECTORY/lib-runtime-ws.py" "$(cat rt.url)" "$@"
}

test_expect_success PYTHON 'setup' '
	rt_start
'

for ch in 1 2 3 5 255
do
	test_expect_success PYTHON "channel $ch from the client: 1008, command killed" '
		ws channel $ch "sleep 3091$ch" >out &&
		echo "close 1008 unknown channel $ch" >expect &&
		test_cmp expect out &&
		rt_no_process "sleep 3091$ch" &&
		rt_alive
	'
done

test_expect_success PYTHON 'an unknown control type: 1008' '
	ws control "{\"type\":\"bogus\"}" "sleep 30919" >out &&
	grep "^close 1008 " out &&
	rt_no_process "sleep 30919" &&
	rt_alive
'

test_expect_success PYTHON 'a 200 MiB frame: 1009 before it is read' '
	ws huge 200 "sleep 30920" >out &&
	cat out && grep "^close 1009" out &&
	rt_memory_bounded VmHWM &&
	rt_no_process "sleep 30920" &&
	rt_alive
'

test_expect_success PYTHON 'a 200 MiB message in fragments: 1009' '
	ws fragments 200 "sleep 30921" >out &&
	cat out && grep "^close 1009" out &&
	rt_memory_bounded VmHWM &&
	rt_no_process "sleep 30921" &&
	rt_alive
'

# paused_ <pid>: the process sleeps (blocked writing to its full pipe),
# or the server outgrew its limit (then rt_memory_bounded fails the
# test, without first eating the machine's memory)
paused_() {
	! rt_memory_bounded 2>/dev/null 4>/dev/null ||
	grep -q "^State:[[:space:]]*S" /proc/"$1"/status
}

test_expect_success PYTHON 'a client that never reads: the command is paused' '
	# the client stays 20 s: longer than the checks take under load
	ws noread 20 "yes 30922" >out &
	echo $! >client.pid &&
	rt_poll 10 grep -q started out &&
	# ^: the client'"'"'s own command line names the command too
	rt_wait_process "^yes 30922" &&
	pid=$(pgrep -f "^yes 30922") &&
	rt_poll 15 paused_ $pid &&
	rt_memory_bounded &&
	# paused, and stays so: a second look a while later
	sleep 1 &&
	state=$(sed -n "s/^State:[[:space:]]*\([A-Z]\).*/\1/p" /proc/$pid/status) &&
	test "$state" = S &&
	rt_memory_bounded &&
	wait $(cat client.pid) &&
	rt_no_process "yes 30922" &&
	rt_poll 10 grep -q "command=\"yes 30922\" exit=" rt.log &&
	bytes=$(sed -n "s/.*command=\"yes 30922\" exit=.* stdout_bytes=\([0-9]*\).*/\1/p" rt.log) &&
	echo "the command wrote $bytes bytes" &&
	test "$bytes" -lt 33554432 &&
	rt_memory_bounded VmHWM &&
	rt_alive
'

test_expect_success PYTHON 'stop' '
	rt_stop_check
'

test_done

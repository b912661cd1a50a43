#!/bin/sh
test_description='gosbx exec -d, jobs, logs --job, kill, wait, attach'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

test_have_prereq LOCAL && test_atexit 'gosbx close --all'

test_expect_success 'setup' '
	if ! test_have_prereq URL
	then
		gosbx open -q --name=t2110 >/dev/null
	fi
'

test_expect_success 'exec -d without --claim is a usage error' '
	test_expect_code_err 129 gosbx exec -d -- true &&
	test_grep "needs --claim" err
'

test_expect_success 'exec -d prints the job; the job runs on after gosbx exits' '
	gosbx exec -d --claim=t2110 -- "echo start; read line; echo got \$line; exit 7" >job &&
	grep -q "^t2110/j[0-9a-f]*\$" job &&
	gosbx jobs --claim=t2110 >list &&
	head -n 1 list | grep -q "^ID *STATE *START *EXIT/REASON *CPU *PEAK MEM *COMMAND" &&
	grep "^$(cat job) *running" list &&
	gosbx jobs --claim=t2110 -o json >list.json &&
	grep -q "\"state\":\"running\"" list.json
'

test_expect_success 'logs --job replays the output from the start' '
	test_retry 300 0.1 eval "gosbx logs --job=$(cat job) >out && grep -q start out" &&
	echo start >expect &&
	test_cmp expect out
'

test_expect_success 'attach sends stdin; logs -f and wait give the status' '
	echo hello | gosbx attach $(cat job) >attach.out;
	test $? = 7 &&
	test_grep "got hello" attach.out &&
	test_expect_code 7 gosbx logs -f --job=$(cat job) >out &&
	printf "start\ngot hello\n" >expect &&
	test_cmp expect out &&
	test_expect_code 7 gosbx wait $(cat job) &&
	gosbx logs --job=$(cat job) --since=6 >out &&
	echo "got hello" >expect &&
	test_cmp expect out
'

test_expect_success 'a bare id with --claim; kill -s gives 128+N' '
	gosbx exec -d --claim=t2110 -- "sleep 300" >job2 &&
	id=$(sed "s|.*/||" job2) &&
	gosbx kill --claim=t2110 -s USR1 $id &&
	test_expect_code 138 gosbx wait --claim=t2110 $id &&
	gosbx jobs --claim=t2110 >list &&
	grep "^t2110/$id *exited .* signal 10 " list
'

test_expect_success 'a job survives a SIGKILLed logs -f' '
	gosbx exec -d --claim=t2110 -- "echo a; read x; echo b\$x" >job3 &&
	{ gosbx logs -f --job=$(cat job3) >follow & } &&
	pid=$! &&
	test_retry 300 0.1 grep -q "^a" follow &&
	kill -KILL $pid &&
	{ wait $pid; true; } &&
	gosbx jobs --claim=t2110 >list &&
	grep "^$(cat job3) *running" list &&
	printf "c\n" | gosbx attach $(cat job3) >out &&
	printf "a\nbc\n" >expect &&
	test_cmp expect out
'

# attach-tty.py <job>: gosbx attach <job> on a pseudo-terminal of 100x30
# (its controlling terminal, as in a shell). The job (winch.py) prints
# its terminal's size at start and at each SIGWINCH, "sigint" at each
# SIGINT and "got <line>" for each line. Checks that attach gives the
# job the local size, then a new size, passes a line, a raw Ctrl-C (to
# the job, not to gosbx) and a lone Ctrl-P, and that Ctrl-P Ctrl-Q
# detaches with 130.
cat >winch.py <<\EOF
import os, signal, sys
# os.write, not print: a handler that prints while the loop is printing
# raises "reentrant call" and ends the job
def say(text):
    os.write(1, (text + "\n").encode())
def size(what):
    c, r = os.get_terminal_size(0)
    say("%s %dx%d" % (what, c, r))
signal.signal(signal.SIGWINCH, lambda *a: size("winch"))
signal.signal(signal.SIGINT, lambda *a: say("sigint"))
size("size")
for line in sys.stdin:
    say("got " + line.strip())
EOF
cat >attach-tty.py <<\EOF
import fcntl, os, pty, select, struct, sys, termios, time
def winsize(fd, cols, rows):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
pid, fd = pty.fork()
if pid == 0:
    winsize(0, 100, 30)
    os.execvp("gosbx", ["gosbx", "attach", sys.argv[1]])
seen = b""
def until(want, secs=60):
    global seen
    end = time.time() + secs
    while want not in seen:
        left = end - time.time()
        if left <= 0:
            sys.exit("no %r in %r" % (want, seen))
        if select.select([fd], [], [], left)[0]:
            try:
                seen += os.read(fd, 4096)
            except OSError:
                sys.exit("attach ended; no %r in %r" % (want, seen))
until(b"winch 100x30")
winsize(fd, 120, 40)
until(b"winch 120x40")
os.write(fd, b"hello\r")
until(b"got hello")
os.write(fd, b"\x03")
until(b"sigint")
os.write(fd, b"\x10x\r")
until(b"got \x10x")
os.write(fd, b"\x10\x11")
until(b"detached from job")
_, st = os.waitpid(pid, 0)
if os.waitstatus_to_exitcode(st) != 130:
    sys.exit("attach: status %r; %r" % (st, seen))
EOF

test_expect_success 'exec -dt: attach from a terminal is raw, sized, detachable' '
	gosbx exec --claim=t2110 -f "$TRASH_DIRECTORY/winch.py" -- true &&
	gosbx exec -dt --claim=t2110 -- python3 winch.py >jobt &&
	test_retry 300 0.1 eval "gosbx logs --job=$(cat jobt) | grep -q \"^size 80x24\"" &&
	python3 "$TRASH_DIRECTORY/attach-tty.py" "$(cat jobt)" &&
	gosbx jobs --claim=t2110 >list &&
	grep "^$(cat jobt) *running" list &&
	gosbx kill -s KILL $(cat jobt) &&
	test_expect_code 137 gosbx wait $(cat jobt)
'

# A job whose stdin another client holds: the writer (curl, on the
# runtime's socket) blocks, because the job does not read yet; attach's
# chunk meets it (409 "in progress") and waits for its turn instead of
# being dropped.
test_expect_success LOCAL 'attach waits while another client writes the job'"'"'s stdin' '
	gosbx exec -d --claim=t2110 -- "until test -e /tmp/t2110.go; do sleep 0.05; done; wc -c" >job5 &&
	id=$(sed "s|.*/||" job5) &&
	dir="$XDG_STATE_HOME/gosbx/claims/t2110" &&
	head -c 1000000 /dev/zero >big &&
	{ (cd "$dir/run" && curl -sS --unix-socket runtime.sock -o /dev/null \
		-H "Content-Type: application/octet-stream" \
		-w "%{http_code}" --data-binary @"$TRASH_DIRECTORY/big" \
		"http://localhost/v1/jobs/$id/stdin") >a.code & } &&
	a=$! &&
	stdin_busy() {
		(cd "$dir/run" && curl -sS --unix-socket runtime.sock -o /dev/null \
			-H "Content-Type: application/octet-stream" \
			-w "%{http_code}" --data-binary "" \
			"http://localhost/v1/jobs/$id/stdin") | grep -q 409
	} &&
	test_retry 300 0.1 stdin_busy &&
	n=$(grep -c "status=409" "$dir/runtime.log") &&
	{ printf "tail\n" | timeout 120 gosbx attach $(cat job5) >b.out 2>b.err & } &&
	b=$! &&
	test_retry 300 0.1 eval "test \$(grep -c status=409 \"\$dir/runtime.log\") -gt $n" &&
	gosbx exec --claim=t2110 -- touch /tmp/t2110.go &&
	wait $a &&
	test "$(cat a.code)" = 204 &&
	wait $b &&
	test_grep "^1000005\$" b.out
'

test_expect_success 'exec -d -i is refused' '
	test_expect_code_err 129 gosbx exec -d -i --claim=t2110 -- true &&
	test_grep "none of -i" err
'

test_expect_success 'output over the bound is trimmed with a marker' '
	gosbx exec -d --claim=t2110 -- "head -c 70000000 /dev/zero | tr \\\\0 x; echo; echo end" >job4 &&
	gosbx wait $(cat job4) &&
	gosbx logs --job=$(cat job4) >out 2>err &&
	test_grep "bytes of output trimmed" err &&
	tail -n 1 out >last &&
	echo end >expect &&
	test_cmp expect last &&
	test $(wc -c <out) -le 67108864
'

test_expect_success 'unknown and malformed jobs: clear errors' '
	test_expect_code_err 125 gosbx wait t2110/jdeadbeef0000 &&
	test_grep "no job .jdeadbeef0000.$" err &&
	test_expect_code_err 125 gosbx kill t2110/jdeadbeef0000 &&
	test_grep "no job" err &&
	test_expect_code_err 129 gosbx wait jdeadbeef0000 &&
	test_grep "name its claim" err &&
	test_expect_code_err 129 gosbx kill "t2110/j/x" &&
	test_expect_code_err 129 gosbx logs --job=t2110/NOPE &&
	test_expect_code_err 125 gosbx kill -s NOPE $(cat job4) &&
	test_grep "signal" err
'

test_done

#!/bin/sh
test_description='gosbx exec: the REPL on a terminal (driven through a pty)'
. "$(dirname "$0")/test-lib.sh"

# local by default; t6223 and t6232 run this suite with
# GOSBX_TEST_BACKEND=kube (through a router that carries plain HTTP
# only, and through one that passes WebSockets), t2043 with url
. "$TEST_DIRECTORY"/lib-backend.sh
test_have_prereq PYTHON || test_skip_all 'python3 is needed for the pty'

test_have_prereq URL || test_atexit 'gosbx close --all'

# A small expect(1) in python: runs argv in a pty and follows a script
# of "send <text>", "expect <text>", "waitproc <pgrep -f pattern>",
# "ctrl-c", "ctrl-d", "tab" lines; the transcript goes to pty.log. Each
# expect waits up to 60 s (a loaded machine), then fails.
cat >pty-drive.py <<\EOF
import fcntl, os, pty, select, struct, subprocess, sys, termios, time

script = open(sys.argv[1]).read().splitlines()
pid, fd = pty.fork()
if pid == 0:
    # wide: a long url prompt (a socket deep in a home) must not wrap
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 400, 0, 0))
    os.execvp(sys.argv[2], sys.argv[2:])
log = open("pty.log", "wb")
buf = b""

def fill(deadline):
    global buf
    r, _, _ = select.select([fd], [], [], 0.1)
    if r:
        try:
            d = os.read(fd, 4096)
        except OSError:
            d = b""
        if not d:
            return False
        log.write(d)
        log.flush()
        buf += d
    if time.time() > deadline:
        raise SystemExit("timed out at: %s" % line)
    return True

for line in script:
    op, _, arg = line.partition(" ")
    deadline = time.time() + 60
    if op == "send":
        os.write(fd, arg.encode() + b"\r")
    elif op == "ctrl-c":
        os.write(fd, b"\x03")
    elif op == "ctrl-d":
        os.write(fd, b"\x04")
    elif op == "tab":
        os.write(fd, b"\t")
    elif op == "type":
        os.write(fd, arg.encode())
    elif op == "expect":
        want = arg.encode()
        while want not in buf:
            if not fill(deadline):
                raise SystemExit("eof before: %s" % arg)
        buf = buf[buf.index(want) + len(want):]
    elif op == "expect-nothing":
        end = time.time() + float(arg)
        while time.time() < end:
            fill(end + 60)
    elif op == "waitproc":
        while subprocess.call(["pgrep", "-f", arg],
                              stdout=subprocess.DEVNULL) != 0:
            fill(deadline)
while fill(time.time() + 60):
    pass
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
EOF

# plain output: no bracketed-paste escapes around the prompt
echo "set enable-bracketed-paste off" >inputrc
INPUTRC=$PWD/inputrc
export INPUTRC

# repl <script>: drive `gosbx exec --claim=t2002` with the script
# (url: the prompt names the runtime's URL, not a claim)
repl() {
	if test_have_prereq URL
	then
		sed "s|^expect t2002:/app|expect $GOSBX_URL:/app|" "$1" >"$1.url" &&
		set -- "$1.url"
	fi
	python3 pty-drive.py "$1" gosbx exec --claim=t2002
}

not_running() {
	! pgrep -f "$1" >/dev/null
}

history="$XDG_STATE_HOME/gosbx/history"

test_expect_success 'setup' '
	{ test_have_prereq URL || gosbx open -q --name=t2002 >/dev/null; } &&
	echo local data >local.txt &&
	mkdir -p tree/sub &&
	echo deep >tree/sub/f
'

test_expect_success 'lines run in the sandbox with live output' '
	cat >s1 <<-\EOF &&
	expect t2002:/app$ 
	send echo hi-$((6*7))
	expect hi-42
	expect t2002:/app$ 
	send exit 3
	expect [exit 3]
	expect t2002:/app$ 
	send :quit
	EOF
	repl s1
'

test_expect_success 'the history file keeps the lines' '
	test -f "$history" &&
	test_grep -F -x "echo hi-\$((6*7))" "$history" &&
	test_grep -x ":quit" "$history"
'

test_expect_success ':put, :ls and :get' '
	cat >s2 <<-\EOF &&
	expect t2002:/app$ 
	send :put local.txt in/put.txt
	expect bytes)
	expect t2002:/app$ 
	send :put tree
	expect t2002:/app$ 
	send :ls in
	expect put.txt
	expect t2002:/app$ 
	send cat tree/sub/f
	expect deep
	expect t2002:/app$ 
	send :get in/put.txt got.txt
	expect bytes)
	expect t2002:/app$ 
	send :quit
	EOF
	repl s2 &&
	test_cmp local.txt got.txt &&
	gosbx exec --claim=t2002 -- cat in/put.txt tree/sub/f >out &&
	printf "local data\ndeep\n" >expect &&
	test_cmp expect out
'

test_expect_success ':put gives a file the time of the write, not 1970' '
	gosbx exec --claim=t2002 -- touch stamp &&
	cat >s10 <<-\EOF &&
	expect t2002:/app$ 
	send :put local.txt stamped.txt
	expect bytes)
	expect t2002:/app$ 
	send :quit
	EOF
	repl s10 &&
	gosbx exec --claim=t2002 -- find stamped.txt -newer stamp >out &&
	echo stamped.txt >expect &&
	test_cmp expect out
'

test_expect_success 'Ctrl-C cancels the running command, not the REPL' '
	cat >s3 <<-\EOF &&
	expect t2002:/app$ 
	send sleep 1000.321
	waitproc ^sleep 1000.321
	ctrl-c
	expect [cancelled]
	expect t2002:/app$ 
	send echo after
	expect after
	expect t2002:/app$ 
	send :quit
	EOF
	repl s3 &&
	test_retry 200 0.1 not_running "^sleep 1000.321"
'

test_expect_success 'Ctrl-C at the prompt clears the line' '
	cat >s4 <<-\EOF &&
	expect t2002:/app$ 
	type echo partial
	expect echo partial
	ctrl-c
	send echo clean
	expect clean
	expect t2002:/app$ 
	ctrl-d
	EOF
	repl s4 &&
	tr -d "\r" <pty.log >log &&
	test_grep -x clean log &&
	test_grep ! "partialecho" log
'

test_expect_success ':reset empties /app, :help lists the meta commands' '
	cat >s5 <<-\EOF &&
	expect t2002:/app$ 
	send :help
	expect :quit
	expect t2002:/app$ 
	send :reset
	expect reset
	expect t2002:/app$ 
	send :nonsense
	expect unknown command
	expect t2002:/app$ 
	send :quit
	EOF
	repl s5 &&
	gosbx exec --claim=t2002 -- "ls -A | wc -l" >out &&
	echo 0 >expect &&
	test_cmp expect out
'

test_expect_success 'one live shell: cd, variables, functions and sourced files last' '
	cat >s9 <<-\EOF &&
	expect t2002:/app$ 
	send mkdir -p sub/deeper && cd sub && greeting=hello-$((20+22))
	expect t2002:/app/sub$ 
	send pwd; echo "$greeting"
	expect hello-42
	expect t2002:/app/sub$ 
	send say() { echo "said:$1"; }; printf "sourced=yes\n" >env.sh
	expect t2002:/app/sub$ 
	send say it; . ./env.sh
	expect said:it
	expect t2002:/app/sub$ 
	send echo "$sourced"; cd deeper
	expect yes
	expect t2002:/app/sub/deeper$ 
	send cd ../..; echo back
	expect back
	expect t2002:/app$ 
	send :quit
	EOF
	repl s9 &&
	tr -d "\r" <pty.log >log &&
	test_grep -x "hello-42" log &&
	test_grep "/sub$" log
'

test_expect_success 'a directory named with C0 and C1 controls shows escaped' '
	# U+009B (CSI) and ESC in a name the sandbox made: the prompt
	# must not pass them to the terminal
	cat >s9c <<-\EOF &&
	expect t2002:/app$ 
	send d=$(printf "x\302\233\033y"); mkdir -p "$d"; cd "$d"
	expect t2002:/app/x\u009b\x1by$ 
	send cd ..; rmdir "$d"
	expect t2002:/app$ 
	send :quit
	EOF
	repl s9c &&
	! grep -q "$(printf "\302\233")" pty.log
'

test_expect_success 'a syntax error or exit does not lose the REPL' '
	cat >s10 <<-\EOF &&
	expect t2002:/app$ 
	send kept=1
	expect t2002:/app$ 
	send echo "unterminated
	expect Syntax error
	expect t2002:/app$ 
	send echo kept=$kept
	expect kept=1
	expect t2002:/app$ 
	send exit 4
	expect [exit 4]
	expect the shell ended
	expect t2002:/app$ 
	send echo kept=${kept:-gone} in $PWD
	expect kept=gone
	expect t2002:/app$ 
	send :quit
	EOF
	repl s10
'

test_expect_success 'stdin of a line is empty, not the REPL' '
	cat >s11 <<-\EOF &&
	expect t2002:/app$ 
	send cat; read x; echo "read:[$x]"
	expect read:[]
	expect t2002:/app$ 
	send :quit
	EOF
	repl s11
'

test_expect_success 'Ctrl-C kills every process of the line, the shell stays' '
	# the loop runs in the shell itself: Ctrl-C must stop it too
	cat >s12 <<-\EOF &&
	expect t2002:/app$ 
	send state=before; sleep 1000.4321 | sleep 1000.4322
	waitproc ^sleep 1000.4322
	ctrl-c
	expect [cancelled]
	expect t2002:/app$ 
	send echo state=$state
	expect state=before
	expect t2002:/app$ 
	send n=0; while :; do n=$((n+1)); done
	expect-nothing 1
	ctrl-c
	expect [cancelled]
	expect t2002:/app$ 
	send echo still=$state
	expect still=before
	expect t2002:/app$ 
	send :quit
	EOF
	repl s12 &&
	test_retry 200 0.1 not_running "^sleep 1000.432"
'

test_expect_success 'Tab completes names in the sandbox, not here' '
	gosbx exec --claim=t2002 -- \
		"mkdir -p t2002-only-dir && echo sandboxed >t2002-only-file" &&
	touch t2002-local-only &&
	cat >s13 <<-\EOF &&
	expect t2002:/app$ 
	type cat t2002-only-f
	tab
	send 
	expect sandboxed
	expect t2002:/app$ 
	type cd t2002-only-d
	tab
	send 
	expect t2002:/app/t2002-only-dir$ 
	type echo t2002-local-o
	tab
	send 
	expect t2002:/app/t2002-only-dir$ 
	send :quit
	EOF
	repl s13 &&
	tr -d "\r" <pty.log >log &&
	test_grep "cat t2002-only-file" log &&
	test_grep ! "t2002-local-only" log
'

test_expect_success 'a line repeated at once is kept once in the history' '
	cat >s7 <<-\EOF &&
	expect t2002:/app$ 
	send echo twice-1
	expect t2002:/app$ 
	send echo twice-1
	expect t2002:/app$ 
	send echo twice-2
	expect t2002:/app$ 
	send echo twice-1
	expect t2002:/app$ 
	send :quit
	EOF
	repl s7 &&
	grep "^echo twice-" "$history" >got &&
	printf "echo twice-1\necho twice-2\necho twice-1\n" >expect &&
	test_cmp expect got
'

# readline is loaded on first use (lib/dl/dl.h); GOSBX_TEST_DL_DIR points
# the loader at a directory without it
test_expect_success 'without readline the REPL fails clearly (125)' '
	mkdir -p no-libs &&
	cat >s8 <<-\EOF &&
	expect install libreadline8
	EOF
	test_expect_code 125 python3 pty-drive.py s8 \
		env GOSBX_TEST_DL_DIR="$PWD/no-libs" \
		gosbx exec --claim=t2002 &&
	test_grep "libreadline\.so\.8 could not be loaded: .*no-libs/libreadline\.so\.8" pty.log
'

test_expect_success !URL 'the REPL without --claim is a usage error' '
	cat >s6 <<-\EOF &&
	expect gosbx exec --claim
	EOF
	test_expect_code 129 python3 pty-drive.py s6 gosbx exec
'

test_done

#!/bin/sh
test_description='gosbx-runtime --sandboxd-grpc: the sandboxd ProcessService

The contract is agent-sandbox v1.0.3,
packages/sandboxd/spec/process/v1/process.proto, driven by upstream'"'"'s
generated Go client (t/sandboxd-grpc-client, its modules through the go
command'"'"'s proxy).'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

command -v go >/dev/null 2>&1 || test_skip_all "go is needed"

# client <method> <args>...: the client against server "rt"'s gRPC
# listener; grpc <method> <args>...: the same, its answer in "out"
client() {
	"$TRASH_DIRECTORY/client/sandboxd-grpc-client" "$(cat grpc.addr)" "$@"
}
grpc() {
	client "$@" >out
}

# steady_ <name> <command>...: what the command prints (a counter) was
# the same the last three times; for rt_poll, which calls it every
# 0.1 s, to wait for a process that stopped (on a full pipe, a timer).
# State in <name>.last and <name>.count.
steady_() {
	_st_name=$1
	shift
	_st_v=$("$@") || return 1
	if test "$_st_v" = "$(cat "$_st_name.last" 2>/dev/null)"; then
		echo >>"$_st_name.count"
	else
		: >"$_st_name.count"
	fi
	echo "$_st_v" >"$_st_name.last"
	test "$(wc -l <"$_st_name.count")" -ge 2
}

# wchar <pid>: the bytes the process has written (/proc/<pid>/io)
wchar() {
	sed -n "s/^wchar: //p" "/proc/$1/io"
}

# yes_stopped_ <pid>: the process wrote nothing for 0.3 s (steady_), or
# the server grew by 64 MiB since $rss0 (then the test fails, but
# without first eating the machine's memory)
yes_stopped_() {
	test $(($(rt_proc_kb VmRSS) - rss0)) -ge 65536 ||
		steady_ yes wchar "$1"
}

# idle_ <pid>: no thread of the process was running or runnable
# (state R) the last three times (rt_poll calls it every 0.1 s); a
# thread that retries at once instead of waiting is always R, even on
# a machine too busy to give it much CPU time. State in idle.count.
idle_() {
	if grep -q "^State:[[:space:]]*R" /proc/"$1"/task/*/status; then
		: >idle.count
	else
		echo >>idle.count
	fi
	test "$(wc -l <idle.count)" -ge 3
}

# grpc_conns: "<accepted> <waiting>": the established connections to
# the gRPC port that the server accepted (the socket has an inode) and
# those still in its listen backlog (inode 0), from /proc/net/tcp
grpc_conns() {
	python3 -c '
import sys
port = int(sys.argv[1].rsplit(":", 1)[1])
acc = wait = 0
for line in open("/proc/net/tcp").readlines()[1:]:
    f = line.split()
    if int(f[1].split(":")[1], 16) != port or f[3] != "01":
        continue
    if f[9] == "0":
        wait += 1
    else:
        acc += 1
print(acc, wait)
' "$(cat grpc.addr)"
}

# conns_are <accepted> <waiting>: grpc_conns says so
conns_are() {
	echo "$1 $2" >conns.expect &&
	grpc_conns >conns.actual &&
	cmp -s conns.expect conns.actual
}

# none_accepted: connections wait in the backlog, none is accepted (one
# the server took when a descriptor was free and had to close again
# is not counted: it is not waiting)
none_accepted() {
	grpc_conns >conns.actual &&
	read acc wait <conns.actual &&
	test "$acc" = 0 && test "$wait" -gt 0
}

# grpc_expect <expected output line>... -- <method> <args>...
grpc_expect() {
	: >expect
	while test "$1" != --; do
		printf "%s\n" "$1" >>expect
		shift
	done
	shift
	grpc "$@"
	test_cmp expect out
}

test_expect_success 'setup: the client builds, the listener answers' '
	cp -R "$TEST_DIRECTORY/sandboxd-grpc-client" client &&
	(cd client && test_real_go build -mod=mod -o sandboxd-grpc-client .) &&
	port=$(test_free_port) &&
	echo "127.0.0.1:$port" >grpc.addr &&
	# the connections of hold.py below send nothing: they would be
	# closed after the 20 s of the handshake (t3115 tests that)
	SANDBOX_GREETING=hi SANDBOX_GRPC_HANDSHAKE_TIMEOUT=1h \
		rt_start --sandboxd-grpc="127.0.0.1:$port" &&
	rt_poll 60 grpc execute true &&
	grep "msg=\"sandboxd grpc listening\" addr=127.0.0.1:$port" rt.log &&
	mkdir -p work/dir
'

test_expect_success 'Execute: exit code, stdout and stderr' '
	grpc_expect "exit 3" "stdout \"out\\n\"" "stderr \"err\\n\"" -- \
		execute sh -c "echo out; echo err >&2; exit 3"
'

test_expect_success 'Execute: an argv, not a shell line' '
	grpc_expect "exit 0" "stdout \"a b;\$X\\n\"" "stderr \"\"" -- \
		execute echo "a b;\$X"
'

test_expect_success 'Execute: env_vars over the server environment' '
	GRPC_ENV=EXTRA=1 grpc_expect "exit 0" "stdout \"hi 1\\n\"" \
		"stderr \"\"" -- \
		execute sh -c "echo \$SANDBOX_GREETING \$EXTRA"
'

test_expect_success 'Execute: cwd under the workdir, default the workdir' '
	grpc execute pwd &&
	grep "stdout \"$(cat rt.work)\\\\n\"" out &&
	GRPC_CWD=dir grpc execute pwd &&
	grep "stdout \"$(cat rt.work)/dir\\\\n\"" out
'

test_expect_success 'Execute: a signal is exit code -1' '
	grpc_expect "exit -1" "stdout \"\"" "stderr \"\"" -- \
		execute sh -c "kill -9 \$\$"
'

test_expect_success 'Execute: the error statuses' '
	test_must_fail grpc execute &&
	grep "^status InvalidArgument: command is required" out &&
	test_must_fail grpc execute no-such-command-here &&
	grep "^status NotFound: .*not found" out &&
	GRPC_CWD=../.. test_must_fail grpc execute true &&
	grep "^status PermissionDenied: " out &&
	GRPC_CWD=nodir test_must_fail grpc execute true &&
	grep "^status NotFound: failed to execute command: command or path not found: chdir .*/nodir: " out
'

# gRPC clients take answers up to 4 MiB unless told otherwise (as
# against upstream's server, which has no cap at all)
test_expect_success 'Execute: output beyond the 8 MiB cap is cut' '
	test_must_fail grpc execute sh -c "yes a | head -c 5000000" &&
	grep "^status ResourceExhausted: " out &&
	GRPC_MAX_RECV=20000000 \
		grpc execute sh -c "yes a | head -c 9000000" &&
	grep "^exit 0" out &&
	tr -cd a <out | wc -c >len &&
	echo $((RT_STREAM_CAP / 2)) >expect &&
	test_cmp expect len
'

test_expect_success 'Start: init, the output streamed, exit' '
	grpc_expect "init true" "stdout \"a\\n\"" "stderr \"b\\n\"" "exit 2" -- \
		start sh -c "echo a; echo b >&2; exit 2"
'

test_expect_success 'Start + WriteStdin: input, then EOF' '
	grpc_expect "init true" "stdout \"hello\"" "stderr \"\"" "exit 0" -- \
		start-stdin hello cat
'

test_expect_success 'Start + SendSignal: SIGTERM ends it, exit -1' '
	grpc_expect "init true" "stdout \"\"" "stderr \"\"" "exit -1" -- \
		start-term sleep 100
'

test_expect_success 'Start with a PTY + ResizeTTY: the new size' '
	grpc_expect "init true" "stdout \"\\r\\n30 100\\r\\n\"" \
		"stderr \"\"" "exit 0" -- \
		start-pty sh -c "read x; stty size"
'

test_expect_success 'by process id: NOT_FOUND for an unknown one' '
	test_must_fail grpc signal 999999 &&
	grep "^status NotFound: process 999999 not found" out &&
	test_must_fail grpc start no-such-command-here &&
	grep "^status NotFound: .*not found" out
'

test_expect_success 'Start: a client that does not read stops the command' '
	rm -f go yes.* &&
	rss0=$(rt_proc_kb VmRSS) &&
	hwm0=$(rt_proc_kb VmHWM) &&
	{ client start-noread "$TRASH_DIRECTORY/go" 100000000 yes t3111-bp \
		>noread.out & } &&
	echo $! >client.pid &&
	rt_poll 30 grep -q "^init true" noread.out &&
	rt_wait_process "^yes t3111-bp" &&
	pid=$(pgrep -f "^yes t3111-bp") &&
	{ rt_poll 30 yes_stopped_ $pid; stopped=$?; } &&
	w=$(wchar $pid) &&
	state=$(sed -n "s/^State:[[:space:]]*\([A-Z]\).*/\1/p" \
		/proc/$pid/status) &&
	rss=$(rt_proc_kb VmRSS) &&
	hwm=$(rt_proc_kb VmHWM) &&
	touch go &&
	echo "yes: state $state after $w bytes; VmRSS $rss0 -> $rss kB," \
		"VmHWM $hwm0 -> $hwm kB" &&
	wait $(cat client.pid) &&
	printf "%s\n" "init true" "read 100000000 bytes intact" cancelled \
		>expect &&
	test_cmp expect noread.out &&
	rt_no_process "^yes t3111-bp" &&
	test $stopped = 0 &&
	test "$state" = S &&
	test "$w" -lt 67108864 &&
	test $((rss - rss0)) -lt 65536 &&
	test $((hwm - hwm0)) -lt 65536
'

test_expect_success 'Execute: cancelling one call kills its command only' '
	rm -f go work/b.go &&
	{ client execute-cancel "$TRASH_DIRECTORY/go" sleep 1000.311 -- \
		sh -c "until test -e b.go; do sleep 0.1; done; echo b" \
		>cancel.out & } &&
	echo $! >client.pid &&
	rt_wait_process "^sleep 1000.311" &&
	rt_wait_process "^sh -c until test -e b.go" &&
	touch go &&
	rt_no_process "^sleep 1000.311" &&
	pgrep -f "^sh -c until test -e b.go" &&
	touch work/b.go &&
	wait $(cat client.pid) &&
	printf "%s\n" "first: status Canceled" "second: exit 0" \
		"stdout \"b\\n\"" "stderr \"\"" >expect &&
	test_cmp expect cancel.out
'

test_expect_success 'calls are freed as they end, not with the connection' '
	rm -f go &&
	vm0=$(rt_proc_kb VmSize) &&
	{ GRPC_DEADLINE=600 client repeat "$TRASH_DIRECTORY/go" 300 true \
		>repeat.out & } &&
	echo $! >client.pid &&
	rt_poll 600 grep -q "^done 300" repeat.out &&
	vm=$(rt_proc_kb VmSize) &&
	echo "VmSize $vm0 kB before, $vm kB after 300 calls" &&
	test $((vm - vm0)) -lt 524288 &&
	touch go &&
	wait $(cat client.pid)
'

cat >hold.py <<\EOF
# hold.py <addr> <n>: open n connections to addr and send nothing; once
# the file close.some exists close the first 10, once close.all exists
# the rest. Writes "held" when all are open.
import os, socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
socks = [socket.create_connection((host, int(port)))
         for _ in range(int(sys.argv[2]))]
open("held", "w").write("%d\n" % len(socks))
for name, n in (("close.some", 10), ("close.all", len(socks))):
    while not os.path.exists(name):
        time.sleep(0.05)
    for s in socks[:n]:
        s.close()
EOF

test_expect_success 'at most 64 connections at once; the next one waits' '
	rm -f held close.* &&
	{ python3 hold.py "$(cat grpc.addr)" 70 & } &&
	echo $! >hold.pid &&
	rt_poll 30 test -s held &&
	rt_poll 30 conns_are 64 6 &&
	rt_poll 30 grep -q \
		"msg=\"sandboxd grpc connection limit reached\" limit=64" \
		rt.log &&
	{ client execute echo served >served.out & } &&
	echo $! >client.pid &&
	rt_poll 30 conns_are 64 7 &&
	touch close.some &&
	wait $(cat client.pid) &&
	printf "%s\n" "exit 0" "stdout \"served\\n\"" "stderr \"\"" >expect &&
	test_cmp expect served.out &&
	touch close.all &&
	wait $(cat hold.pid)
'

test_expect_success 'out of descriptors: no busy accept loop, then served' '
	rm -f held close.* idle.count &&
	pid=$(rt_pid) &&
	soft=$(prlimit --pid $pid --nofile --output=SOFT --noheadings) &&
	prlimit --pid $pid --nofile=3: &&
	{ python3 hold.py "$(cat grpc.addr)" 10 & } &&
	echo $! >hold.pid &&
	rt_poll 30 test -s held &&
	rt_poll 30 none_accepted &&
	rt_poll 30 idle_ $pid &&
	grep "msg=\"sandboxd grpc cannot accept\"" rt.log &&
	prlimit --pid $pid --nofile=$soft: &&
	touch close.some close.all &&
	wait $(cat hold.pid) &&
	grpc_expect "exit 0" "stdout \"again\\n\"" "stderr \"\"" -- \
		execute echo again
'

test_expect_success '--token-file: UNAUTHENTICATED without the token' '
	echo secret >tok.token &&
	port=$(test_free_port) &&
	echo "127.0.0.1:$port" >grpc.addr &&
	rt_start --name=tok --token-file="$TRASH_DIRECTORY/tok.token" \
		--sandboxd-grpc="127.0.0.1:$port" &&
	rt_poll 60 test_must_fail grpc execute true &&
	grep "^status Unauthenticated: " out &&
	GRPC_TOKEN=secret grpc_expect "exit 0" "stdout \"\"" "stderr \"\"" -- \
		execute true
'

test_done

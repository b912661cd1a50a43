#!/bin/sh
test_description='gosbx-runtime: startup failures, SIGTERM/SIGINT shutdown'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

# run_runtime <name> [options]: start a server in the foreground test's
# shell (so that `wait` can collect its exit status); no readiness wait
run_runtime() {
	_n=$1
	shift
	gosbx-runtime "$@" </dev/null >"$_n.out" 2>"$_n.log" 3>&- 4>&- 5>&- &
	echo $! >"$_n.pid"
	echo $! >>.rt-pids
}

# wait_exit <name> <seconds>: the server exits within the bound; its
# status goes to <name>.status
wait_exit() {
	_p=$(cat "$1.pid")
	if ! rt_poll "$2" rt_dead_ "$_p"; then
		echo >&4 "$1 still running after $2 s"
		return 1
	fi
	wait "$_p"
	echo $? >"$1.status"
}

# refuses <name>: the server no longer answers GET / (it stopped accepting)
refuses() {
	test "$(RT=$1 RT_MAX_TIME=2 rt_curl / -o /dev/null -w "%{http_code}" \
		2>/dev/null)" != 200
}

test_expect_success 'a workdir that cannot be created: exit 1, error logged' '
	: >file &&
	run_runtime bad1 --addr=127.0.0.1:$(test_free_port) \
		--workdir="$TRASH_DIRECTORY/file/sub" &&
	wait_exit bad1 60 &&
	echo 1 >expect && test_cmp expect bad1.status &&
	test_grep "level=ERROR msg=\"workdir not writable\"" bad1.log &&
	test_grep "file/sub" bad1.log
'

test_expect_success 'a workdir where files cannot be created: exit 1' '
	run_runtime bad2 --addr=127.0.0.1:$(test_free_port) --workdir=/proc &&
	wait_exit bad2 60 &&
	echo 1 >expect && test_cmp expect bad2.status &&
	test_grep "level=ERROR msg=\"workdir not writable\"" bad2.log
'

test_expect_success 'an address that cannot be bound: exit non-zero' '
	run_runtime bad3 --addr="unix:$TRASH_DIRECTORY/no/such/dir/sock" \
		--workdir="$TRASH_DIRECTORY/w3" &&
	wait_exit bad3 60 &&
	test "$(cat bad3.status)" != 0 &&
	test "$(cat bad3.status)" -lt 128 &&
	test_grep "level=ERROR" bad3.log
'

test_expect_success 'SIGTERM with nothing running: exit 0 promptly' '
	rt_start --name=idle --workdir="$TRASH_DIRECTORY/idle-work" -- \
		--shutdown-grace=600s &&
	kill -TERM $(rt_pid idle) &&
	wait_exit idle 60 &&
	echo 0 >expect && test_cmp expect idle.status
'

test_expect_success 'SIGINT with nothing running: exit 0' '
	rt_start --name=int --workdir="$TRASH_DIRECTORY/int-work" &&
	kill -INT $(rt_pid int) &&
	wait_exit int 60 &&
	echo 0 >expect && test_cmp expect int.status
'

test_expect_success 'SIGTERM during a command: group killed, files intact, exit 0' '
	rt_start --name=busy --workdir="$TRASH_DIRECTORY/busy-work" -- \
		--shutdown-grace=1s &&
	head -c 1000000 /dev/urandom >keep.bin &&
	RT=busy rt_expect 200 POST /upload -F "file=@keep.bin" &&
	{
		RT=busy rt_curl /execute -o busy.answer \
			--data-binary "{\"command\":\"sleep 3080.321 & (sleep 3080.321; echo x) & sleep 3080.321\"}" &
	} &&
	rt_wait_process "^sleep 3080\\.321" &&
	kill -TERM $(rt_pid busy) &&
	wait_exit busy 60 &&
	echo 0 >expect && test_cmp expect busy.status &&
	rt_no_process "sleep 3080\\.321" &&
	wait &&
	test_cmp keep.bin busy-work/keep.bin &&
	(cd busy-work && ls -A) >actual &&
	echo keep.bin >expect && test_cmp expect actual
'

test_expect_success 'SIGTERM: a command ending within the grace is answered' '
	rt_start --name=grace --workdir="$TRASH_DIRECTORY/grace-work" -- \
		--shutdown-grace=600s &&
	{
		RT=grace rt_curl /execute -o grace.answer \
			--data-binary "{\"command\":\"touch started; while ! test -e release; do sleep 0.05; done; echo finished\"}" &
	} &&
	rt_poll 60 test -e grace-work/started &&
	kill -TERM $(rt_pid grace) &&
	rt_poll 60 refuses grace &&
	touch grace-work/release &&
	wait_exit grace 60 &&
	echo 0 >expect && test_cmp expect grace.status &&
	wait &&
	json_is grace.answer stdout finished &&
	json_is grace.answer exit_code 0
'

test_expect_success 'SIGTERM during a /v1/exec stream: group killed, exit 0' '
	rt_start --name=strm --workdir="$TRASH_DIRECTORY/strm-work" -- \
		--shutdown-grace=1s &&
	{
		RT=strm rt_curl /v1/exec -N -o strm.answer \
			--data-binary "{\"command\":\"echo up; sleep 1000.322\"}" &
	} &&
	rt_poll 60 grep -q up strm.answer &&
	kill -TERM $(rt_pid strm) &&
	wait_exit strm 60 &&
	echo 0 >expect && test_cmp expect strm.status &&
	rt_no_process "sleep 1000\\.322" &&
	wait
'

test_expect_success 'a server can start again on the same unix socket path' '
	rt_start --name=again --unix --workdir="$TRASH_DIRECTORY/again-work" &&
	rt_stop again &&
	rt_start --name=again --unix --workdir="$TRASH_DIRECTORY/again-work" &&
	RT=again rt_expect 200 GET / &&
	rt_stop again
'

test_expect_success '--idle-timeout: exit 0 and create the expired file' '
	rt_start --name=idle2 --workdir="$TRASH_DIRECTORY/idle2-work" -- \
		--idle-timeout=3s --expired-file="$TRASH_DIRECTORY/idle2.expired" &&
	wait_exit idle2 60 &&
	echo 0 >expect && test_cmp expect idle2.status &&
	test -f idle2.expired &&
	test_grep "idle timeout" idle2.log
'

test_expect_success '--idle-timeout does not end a running request' '
	rt_start --name=idle3 --workdir="$TRASH_DIRECTORY/idle3-work" -- \
		--idle-timeout=3s --expired-file="$TRASH_DIRECTORY/idle3.expired" &&
	# the timeout runs from rt_start'"'"'s last request: 3 s for the next
	# one to start on a loaded machine; the command outlives it
	RT=idle3 rt_exec "{\"command\":\"sleep 5; echo survived\"}" &&
	json_is body stdout survived &&
	wait_exit idle3 60 &&
	test -f idle3.expired
'

test_expect_success 'no expired file when a signal ends the server' '
	rt_start --name=idle4 --workdir="$TRASH_DIRECTORY/idle4-work" -- \
		--idle-timeout=600s --expired-file="$TRASH_DIRECTORY/idle4.expired" &&
	kill -TERM $(rt_pid idle4) &&
	wait_exit idle4 60 &&
	! test -e idle4.expired
'

test_expect_success '--expired-fd: the idle timeout writes "expired" there' '
	run_runtime idle5 --addr=127.0.0.1:$(test_free_port) \
		--workdir="$TRASH_DIRECTORY/idle5-work" --idle-timeout=1s \
		--expired-fd=7 7>idle5.expired &&
	wait_exit idle5 60 &&
	echo 0 >expect && test_cmp expect idle5.status &&
	echo expired >expect && test_cmp expect idle5.expired
'

test_expect_success '--addr=fd:N refuses what is not a listening socket' '
	run_runtime fd1 --addr=fd:0 --workdir="$TRASH_DIRECTORY/fd-work" &&
	wait_exit fd1 60 &&
	echo 1 >expect && test_cmp expect fd1.status &&
	test_grep "not a stream socket\\|Socket operation on non-socket" fd1.log &&
	run_runtime fd2 --addr=fd:63 --workdir="$TRASH_DIRECTORY/fd-work" &&
	wait_exit fd2 60 &&
	test_cmp expect fd2.status &&
	test_grep "Bad file descriptor" fd2.log &&
	python3 -c "
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
os.dup2(s.fileno(), 9)
os.execvp(sys.argv[1], sys.argv[1:])
" gosbx-runtime --addr=fd:9 --workdir="$TRASH_DIRECTORY/fd-work" \
		2>fd3.log </dev/null;
	echo $? >fd3.status &&
	test_cmp expect fd3.status &&
	test_grep "is not listening" fd3.log &&
	gosbx-runtime --owner-fd=62 --workdir="$TRASH_DIRECTORY/fd-work" \
		2>fd4.log </dev/null;
	echo $? >fd4.status &&
	echo 129 >expect && test_cmp expect fd4.status &&
	test_grep "option=owner-fd fd=62" fd4.log
'

# fd_runtime.py: a parent that listens on a socket, starts a server on
# that descriptor with a ready pipe and an owner pipe, runs a command
# whose pieces leave its session, then closes the owner pipe (as a
# killed owner would): the server must end within 60 s, and them too.
cat >fd_runtime.py <<\EOF
import json, os, select, socket, subprocess, sys, time

sock, work, log = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX)
s.bind(sock)
s.listen(16)
ready_r, ready_w = os.pipe()
owner_r, owner_w = os.pipe()
p = subprocess.Popen(
    ["gosbx-runtime", "--addr=fd:%d" % s.fileno(), "--workdir=" + work,
     "--ready-fd=%d" % ready_w, "--owner-fd=%d" % owner_r,
     "--idle-timeout=600s"],
    pass_fds=(s.fileno(), ready_w, owner_r), stdin=subprocess.DEVNULL,
    stderr=open(log, "w"))
s.close(); os.close(ready_w); os.close(owner_r)
r, _, _ = select.select([ready_r], [], [], 60)
assert r, "no ready"
assert os.read(ready_r, 64) == b"ready\n"
assert os.read(ready_r, 64) == b""
print("ready")

c = socket.socket(socket.AF_UNIX)
c.connect(sock)
body = json.dumps({"command": "setsid sh -c \"sleep 1000.61 &\" & "
                              "sleep 1000.62"})
c.sendall(("POST /v1/exec HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n"
           "\r\n%s" % (len(body), body)).encode())
end = time.time() + 60
while time.time() < end and subprocess.run(
        ["pgrep", "-f", "^sleep 1000[.]61"],
        stdout=subprocess.DEVNULL).returncode:
    time.sleep(0.1)
print("running")
os.close(owner_w)
try:
    print("exit", p.wait(60))
except subprocess.TimeoutExpired:
    p.kill()
    print("still running")
print("socket left" if os.path.exists(sock) else "socket removed")
EOF

test_expect_success '--addr=fd:N, --ready-fd, and --owner-fd: EOF ends all' '
	python3 fd_runtime.py "$TRASH_DIRECTORY/fd.sock" \
		"$TRASH_DIRECTORY/fd-work" fd.log >fd.out &&
	cat >expect <<-\EOF &&
	ready
	running
	exit 0
	socket left
	EOF
	test_cmp expect fd.out &&
	test_grep "owner gone, exiting" fd.log &&
	rt_no_process "sleep 1000\\.6[12]"
'

test_expect_success 'the servers stop cleanly, no sanitizer report' '
	rt_stop_check
'

test_done

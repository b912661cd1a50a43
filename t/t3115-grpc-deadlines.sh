#!/bin/sh
test_description='gosbx-runtime --sandboxd-grpc: connection deadlines, start failures

A connection that does not complete the HTTP/2 handshake is closed,
one without a stream is ended with GOAWAY (SANDBOX_GRPC_HANDSHAKE_TIMEOUT
and SANDBOX_GRPC_IDLE_TIMEOUT shorten both here), so that they cannot
keep the 64 connection slots; a command that cannot start is an error
status, as upstream'"'"'s, not an init and an exit -1. Deadlines of calls
(grpc-timeout), compression and the start errors that upstream shares
are cases of t/sandboxd-conformance (t3114).'
. "$(dirname "$0")"/test-lib.sh
. "$TEST_DIRECTORY"/lib-runtime.sh

command -v go >/dev/null 2>&1 || test_skip_all "go is needed"

client() {
	"$TRASH_DIRECTORY/client/sandboxd-grpc-client" "$(cat grpc.addr)" "$@"
}

# raw.py <addr> <mode>: one connection to the gRPC listener that
#   silent    sends nothing
#   half      sends half the client preface
#   preface   sends the preface and an empty SETTINGS
# then reads until the server closes it (at most 60 s) and prints the
# types of the frames it got, one a line ("4" SETTINGS, "7 0" a GOAWAY
# with its error code), and "closed" (or "open" after 60 s).
cat >raw.py <<\EOF
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
if sys.argv[2] == "half":
    s.sendall(preface[:10])
elif sys.argv[2] == "preface":
    s.sendall(preface + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00")
s.settimeout(1)
buf, end, state = b"", time.monotonic() + 60, "open"
while time.monotonic() < end:
    try:
        data = s.recv(65536)
    except socket.timeout:
        continue
    except ConnectionResetError:
        data = b""
    if not data:
        state = "closed"
        break
    buf += data
while len(buf) >= 9:
    n = int.from_bytes(buf[0:3], "big")
    ftype, payload = buf[3], buf[9:9 + n]
    if ftype == 7:
        print(7, int.from_bytes(payload[4:8], "big"))
    elif ftype != 4 or not buf[4] & 1:  # SETTINGS ACKs aside
        print(ftype)
    buf = buf[9 + n:]
print(state)
EOF

# hold.py <addr> <n>: open n connections and send nothing; "held" once
# all are open, then wait until the file release exists
cat >hold.py <<\EOF
import os, socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
socks = [socket.create_connection((host, int(port)))
         for _ in range(int(sys.argv[2]))]
open("held", "w").write("%d\n" % len(socks))
while not os.path.exists("release"):
    time.sleep(0.05)
EOF

test_expect_success 'setup: the client builds, the listener answers' '
	cp -R "$TEST_DIRECTORY/sandboxd-grpc-client" client &&
	(cd client && HOME=$TEST_REAL_HOME GOFLAGS=-mod=mod \
		go build -o sandboxd-grpc-client .) &&
	port=$(test_free_port) &&
	echo "127.0.0.1:$port" >grpc.addr &&
	SANDBOX_GRPC_HANDSHAKE_TIMEOUT=1s SANDBOX_GRPC_IDLE_TIMEOUT=1s \
		rt_start --sandboxd-grpc="127.0.0.1:$port" &&
	rt_poll 60 client execute true >out
'

test_expect_success 'a connection that sends nothing is closed' '
	python3 raw.py "$(cat grpc.addr)" silent >raw.out &&
	printf "%s\n" 4 closed >expect &&
	test_cmp expect raw.out &&
	grep "msg=\"sandboxd grpc handshake timeout\"" rt.log
'

test_expect_success 'a connection stopped within the preface is closed' '
	python3 raw.py "$(cat grpc.addr)" half >raw.out &&
	printf "%s\n" 4 closed >expect &&
	test_cmp expect raw.out
'

test_expect_success 'a connection without a stream gets GOAWAY, then closed' '
	python3 raw.py "$(cat grpc.addr)" preface >raw.out &&
	printf "%s\n" 4 "7 0" closed >expect &&
	test_cmp expect raw.out &&
	grep "msg=\"sandboxd grpc idle connection closed\"" rt.log
'

test_expect_success 'a call that outlasts the idle timeout is not cut' '
	client execute sh -c "sleep 2; echo slow" >out &&
	printf "%s\n" "exit 0" "stdout \"slow\\n\"" "stderr \"\"" >expect &&
	test_cmp expect out
'

test_expect_success '64 silent connections do not keep the slots' '
	rm -f held release &&
	{ python3 hold.py "$(cat grpc.addr)" 70 & } &&
	echo $! >hold.pid &&
	rt_poll 30 test -s held &&
	GRPC_DEADLINE=60 client execute echo served >out &&
	touch release &&
	wait $(cat hold.pid) &&
	printf "%s\n" "exit 0" "stdout \"served\\n\"" "stderr \"\"" >expect &&
	test_cmp expect out
'

test_expect_success 'a bad SANDBOX_GRPC_IDLE_TIMEOUT stops the runtime' '
	port=$(test_free_port) &&
	{
		SANDBOX_GRPC_IDLE_TIMEOUT=soon timeout 30 gosbx-runtime \
			--addr=127.0.0.1:$(test_free_port) \
			--workdir="$TRASH_DIRECTORY/w2" \
			--sandboxd-grpc="127.0.0.1:$port" 2>bad.log
		echo $? >rc
	} &&
	echo 1 >expect &&
	test_cmp expect rc &&
	grep "level=ERROR msg=\"bad duration\" variable=SANDBOX_GRPC_IDLE_TIMEOUT value=soon" bad.log
'

# The runtime as a user that may not enter a directory (root may enter
# any): its stat() of the cwd passes, the command'"'"'s chdir() fails,
# so the command does not start (exec.c: start_failed)
test_expect_success 'setup: a runtime that may not enter work/locked' '
	mkdir -p nb/locked nbbin &&
	if test "$(id -u)" = 0; then
		chown -R 65534:65534 nb &&
		printf "%s\n" "#!/bin/sh" \
			"exec setpriv --reuid=65534 --regid=65534 --clear-groups \"$GOSBX_BUILD_DIR/gosbx-runtime\" \"\$@\"" \
			>nbbin/gosbx-runtime
	else
		printf "%s\n" "#!/bin/sh" \
			"exec \"$GOSBX_BUILD_DIR/gosbx-runtime\" \"\$@\"" \
			>nbbin/gosbx-runtime
	fi &&
	chmod +x nbbin/gosbx-runtime &&
	chmod 0600 nb/locked &&
	port=$(test_free_port) &&
	echo "127.0.0.1:$port" >grpc.addr &&
	PATH=$TRASH_DIRECTORY/nbbin:$PATH rt_start --name=nb \
		--workdir="$TRASH_DIRECTORY/nb" --sandboxd-grpc="127.0.0.1:$port" &&
	rt_poll 60 client execute true >out
'

test_expect_success 'Execute: a cwd it may not enter is PERMISSION_DENIED' '
	GRPC_CWD=locked test_must_fail client execute true >out &&
	grep "^status PermissionDenied: failed to execute command: permission denied: .*chdir" out
'

test_expect_success 'Start: the same, and no init event' '
	GRPC_CWD=locked test_must_fail client start true >out &&
	test_line_count = 1 out &&
	grep "^status PermissionDenied: failed to start command: permission denied: .*chdir" out
'

test_done

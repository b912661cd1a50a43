#!/bin/sh
test_description='local isolation: the sandbox filesystem and environment'
. "$(dirname "$0")/test-lib.sh"

test_have_prereq BWRAP || test_skip_all 'bwrap is not installed'
bwrap --unshare-user --ro-bind / / true 2>/dev/null ||
	test_skip_all 'unprivileged user namespaces do not work here'

# run a command with its stderr in the file "err"

test_expect_success 'a command runs and its exit status passes through' '
	isolate-run -- true &&
	test_expect_code 3 isolate-run -- sh -c "exit 3"
'

test_expect_success 'a signal death is reported as 128+N' '
	test_expect_code 143 isolate-run -- sh -c "kill -TERM \$\$"
'

test_expect_success 'writes to /app persist in the claim directory' '
	mkdir claim &&
	isolate-run --claim-dir="$PWD/claim" -- \
		sh -c "pwd >out && echo hello >/app/hello" &&
	echo hello >expect &&
	test_cmp expect claim/hello &&
	echo /app >expect &&
	test_cmp expect claim/out
'

test_expect_success 'writing under /usr and /etc fails' '
	test_must_fail isolate-run -- touch /usr/gosbx-t7000 &&
	test_must_fail isolate-run -- touch /etc/gosbx-t7000 &&
	test_must_fail isolate-run -- mkdir /usr/lib/gosbx-t7000 &&
	test_must_fail isolate-run -- sh -c "echo x >>/etc/passwd" &&
	test ! -e /usr/gosbx-t7000 &&
	test ! -e /etc/gosbx-t7000 &&
	test ! -e /usr/lib/gosbx-t7000
'

# bwrap's root and /dev are tmpfs mounts with no size: writable, they
# held up to half of the host's memory with no memory limit (issue 17)
test_expect_success 'the root and /dev are read-only; /dev/shm has a size' '
	test_must_fail isolate-run -- touch /gosbx-t7000 &&
	test_must_fail isolate-run -- mkdir /gosbx-t7000d &&
	test_must_fail isolate-run -- touch /dev/gosbx-t7000 &&
	isolate-run -- sh -c "echo x >/dev/null && touch /dev/shm/ok /tmp/ok" &&
	isolate-run -- df -k /dev/shm >df.out &&
	size=$(awk "NR == 2 { print \$2 }" df.out) &&
	test "$size" -le $((1 << 20)) || { cat df.out >&4; false; }
'

test_expect_success 'the host boot line is not shown in /proc' '
	test -s /proc/cmdline &&
	isolate-run -- sh -c "cat /proc/cmdline 2>/dev/null; true" >cmdline &&
	test ! -s cmdline
'

test_expect_success 'the root is fresh: only the expected top directories' '
	isolate-run -- sh -c "ls -A /" >actual &&
	for d in app dev etc home proc tmp usr; do
		grep -qx "$d" actual || return 1
	done &&
	! grep -qx root actual &&
	! grep -qx work actual &&
	! grep -qx var actual
'

test_expect_success 'files outside the binds are invisible' '
	marker="$TRASH_DIRECTORY/../t7000-marker.$$" &&
	echo secret >"$marker" &&
	test_atexit "rm -f \"$marker\"" &&
	abs=$(cd "$(dirname "$marker")" && pwd)/$(basename "$marker") &&
	test_must_fail isolate-run -- cat "$abs" &&
	test_must_fail isolate-run -- ls /root &&
	test_must_fail isolate-run -- ls "$GOSBX_SOURCE_DIR" &&
	test_must_fail isolate-run -- cat "$TRASH_DIRECTORY/home/.profile"
'

test_expect_success '/tmp is private in both directions' '
	host=/tmp/gosbx-t7000-host.$$ &&
	echo host >$host &&
	test_atexit "rm -f $host /tmp/gosbx-t7000-inside.$$" &&
	isolate-run -- sh -c "test ! -e $host && echo in >/tmp/gosbx-t7000-inside.$$ && cat /tmp/gosbx-t7000-inside.$$" >out &&
	echo in >expect &&
	test_cmp expect out &&
	test ! -e /tmp/gosbx-t7000-inside.$$
'

test_expect_success 'the environment is the seed image one' '
	FOO_FROM_HOST=leak isolate-run -- env >env &&
	! grep FOO_FROM_HOST env &&
	grep -qx "HOME=/home/sandbox" env &&
	grep -qx "GOCACHE=/home/sandbox/.cache/go-build" env &&
	grep -qx "GOMODCACHE=/home/sandbox/go/pkg/mod" env &&
	grep -qx "GOPATH=/home/sandbox/go" env &&
	grep -qx "GOTOOLCHAIN=local" env &&
	grep -qx "CGO_ENABLED=0" env &&
	grep -qx "GOFLAGS=-buildvcs=false" env &&
	grep -qx "LANG=C.UTF-8" env &&
	grep -q "^PATH=/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin:/home/sandbox/go/bin" env
'

test_expect_success 'extra environment is added' '
	isolate-run --env=GREETING=hi --env=HOME=/elsewhere -- env >env &&
	grep -qx GREETING=hi env &&
	grep -qx HOME=/elsewhere env
'

test_expect_success 'HOME is writable, the sandbox user is uid 1000' '
	isolate-run -- sh -c "touch \$HOME/x && id -u && id -g" >out &&
	printf "1000\n1000\n" >expect &&
	test_cmp expect out
'

test_expect_success 'extra read-only binds are visible and read-only' '
	mkdir -p ro &&
	echo data >ro/file &&
	isolate-run --ro-bind="$PWD/ro:/data" -- cat /data/file >out &&
	test_cmp ro/file out &&
	test_must_fail isolate-run --ro-bind="$PWD/ro:/data" -- \
		touch /data/new &&
	test ! -e ro/new
'

test_expect_success 'seccomp is loaded with no_new_privs, capabilities dropped' '
	isolate-run -- cat /proc/self/status >status &&
	grep -q "^NoNewPrivs:[[:space:]]*1" status &&
	grep -q "^Seccomp:[[:space:]]*2" status &&
	grep -q "^CapEff:[[:space:]]*0000000000000000" status &&
	grep -q "^CapBnd:[[:space:]]*0000000000000000" status
'

test_expect_success 'the sandbox has its own pid namespace and hostname' '
	isolate-run -- sh -c "ps -e -o pid= | wc -l; hostname" >out &&
	read n <out &&
	test "$n" -le 5 &&
	tail -n 1 out >host &&
	echo gosbx >expect &&
	test_cmp expect host
'

test_expect_success 'a missing claim directory or bind source is an error' '
	test_expect_code 125 with_err isolate-run --claim-dir="$PWD/nope" -- true &&
	grep "cannot create sandbox: claim directory .*nope" err &&
	test_expect_code 125 with_err isolate-run --ro-bind="$PWD/nope:/x" -- true &&
	grep "cannot create sandbox: bind .*nope.*No such file" err
'

test_expect_success GO 'go version works inside' '
	isolate-run -- go version >out &&
	grep "^go version go" out &&
	go version >host &&
	test_cmp host out
'

test_expect_success GO 'go env reports the sandbox caches' '
	isolate-run -- go env GOCACHE GOMODCACHE GOROOT >out &&
	sed -n 1p out >gocache && echo /home/sandbox/.cache/go-build >expect &&
	test_cmp expect gocache &&
	sed -n 2p out >gomod && echo /home/sandbox/go/pkg/mod >expect &&
	test_cmp expect gomod
'

test_expect_success GO 'go run builds and runs a program in /app' '
	mkdir -p gorun &&
	cat >gorun/main.go <<-\EOT &&
	package main

	import "fmt"

	func main() { fmt.Println("hello from the sandbox") }
	EOT
	isolate-run --claim-dir="$PWD/gorun" -- go run main.go >out &&
	echo "hello from the sandbox" >expect &&
	test_cmp expect out &&
	# the build cache is the sandbox'"'"'s own, not shared on the host
	! test -e "$XDG_CACHE_HOME/gosbx/go-build"
'

test_expect_success PYTHON 'a sandbox gets 32 inotify instances, not all of its user'"'"'s' '
	cat >inotify.py <<-\EOT &&
	import ctypes, os
	libc = ctypes.CDLL(None, use_errno=True)
	n = 0
	while libc.inotify_init1(0) >= 0:
	    n += 1
	print(n, os.strerror(ctypes.get_errno()))
	EOT
	mkdir inotify &&
	cp inotify.py inotify/ &&
	isolate-run --claim-dir="$PWD/inotify" -- python3 inotify.py >out &&
	echo "32 Too many open files" >expect &&
	test_cmp expect out
'

# Issue 17: flock(2) needs no write access, and the host'"'"'s /usr and
# /etc were the same files inside. As root they are overlays of
# themselves (other inodes); a normal user'"'"'s bwrap 0.8 cannot do that.
test_expect_success ROOT 'a lock on a file of /usr or /etc stays in the sandbox' '
	mkdir lock &&
	mkfifo lock/ready lock/go &&
	chmod 666 lock/ready lock/go &&
	{
		isolate-run --claim-dir="$PWD/lock" -- flock /usr/bin/env \
			flock /etc/hostname sh -c "echo locked >ready; read x <go" &
	} &&
	read state <lock/ready &&
	test "$state" = locked &&
	ok=t &&
	{ flock -n /usr/bin/env true || ok=; } &&
	{ flock -n /etc/hostname true || ok=; } &&
	echo >lock/go &&
	wait &&
	test -n "$ok"
'

test_done

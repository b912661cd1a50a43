#!/bin/sh
test_description='attack: untrusted code never runs as host uid 0

As root, bwrap --uid 1000 used to map the sandbox user to the caller,
host uid 0: sandbox code read /etc/shadow, wrote host-wide sysctls
(kernel.core_pattern: code run as real root) and left set-user-ID-root
files on the host. As root each sandbox now runs as a host uid of its
own; /proc/sys is read-only in every mode; no set-id file is made.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY"/lib-backend.sh

test "$(id -u)" != 0 && test_set_prereq USER

# with_err cmd...: stderr in the file "err"

# no process of uid $1 runs (zombies that the host's init has not reaped
# yet run nothing)
none_runs() {
	! ps -u "$1" -o stat= | grep -v "^Z"
}

# the host ids of a process: "<real uid> <real gid>"
host_ids() {
	sed -n "s/^Uid:[[:space:]]*\([0-9]*\).*/\1/p;s/^Gid:[[:space:]]*\([0-9]*\).*/\1/p" \
		/proc/$1/status | tr '\n' ' '
}

test_expect_success '/proc/sys is read-only inside, whoever runs gosbx' '
	isolate-run -- sh -c "
		grep \" /proc/sys \" /proc/self/mountinfo
		v=\$(cat /proc/sys/kernel/core_pattern)
		# the same value back: harmless if it were allowed
		printf \"%s\\n\" \"\$v\" >/proc/sys/kernel/core_pattern &&
			echo WROTE
		true" >out 2>err &&
	grep " /proc/sys ro," out &&
	! grep WROTE out &&
	grep "Read-only file system" err
'

test_expect_success 'no set-id file reaches the host, in /app or the caches' '
	mkdir -p claim &&
	isolate-run --claim-dir="$PWD/claim" -- sh -c "
		cp /bin/sh /app/sh; chmod 4755 /app/sh
		cp /bin/sh \$GOCACHE/sh; chmod 6755 \$GOCACHE/sh
		install -m 4755 /bin/sh /app/sh2
		true" &&
	test -f claim/sh &&
	test -z "$(find claim "$XDG_CACHE_HOME" -perm /6000)"
'

test_expect_success ROOT 'as root: the sandbox cannot read /etc/shadow' '
	test_must_fail with_err isolate-run -- cat /etc/shadow >out &&
	grep "Permission denied" err &&
	test_must_fail isolate-run -- sh -c "head -c1 /etc/shadow" >out &&
	! test -s out
'

test_expect_success ROOT 'as root: the sandbox runs as an unknown, non-zero host uid' '
	rm -f st st.done &&
	{ isolate-run --state=st -- sh -c "sleep 7011 & wait" & } &&
	pid=$! &&
	test_retry 600 0.1 test -e st.done &&
	test_atexit "isolate-run --kill=\"$PWD/st\"" &&
	uid=$(sed -n "s/^host-uid //p" st) &&
	gid=$(sed -n "s/^host-gid //p" st) &&
	test "$uid" -gt 0 && test "$gid" -gt 0 &&
	! getent passwd "$uid" && ! getent group "$gid" &&
	child=$(sed -n "s/^child-pid //p" st) &&
	test_retry 300 0.1 pgrep -x -f "sleep 7011" &&
	for p in $(sed -n "s/^pid //p" st) $child $(pgrep -x -f "sleep 7011")
	do
		test "$(host_ids $p)" = "$uid $gid " || return 1
	done &&
	isolate-run --kill=st &&
	{ wait $pid; true; } &&
	! pgrep -x -f "sleep 7011" &&
	! test -e /run/gosbx/uids/$uid
'

test_expect_success ROOT 'as root: two live claims never share a host uid' '
	a=$(gosbx open -q) &&
	test_atexit "gosbx close $a" &&
	b=$(gosbx open -q) &&
	test_atexit "gosbx close $b" &&
	claims=$XDG_STATE_HOME/gosbx/claims &&
	ua=$(sed -n "s/^host-uid //p" "$claims/$a/meta") &&
	ub=$(sed -n "s/^host-uid //p" "$claims/$b/meta") &&
	test -n "$ua" && test -n "$ub" &&
	test "$ua" != "$ub" &&
	test "$ua" -gt 0 && test "$ub" -gt 0 &&
	# the runtimes run as them, and the sandboxes write as them
	gosbx exec --claim="$a" -- "touch /app/mine; id -u" >out &&
	echo 1000 >expect &&
	test_cmp expect out &&
	test "$(stat -c %u "$claims/$a/fs/app/mine")" = "$ua" &&
	test "$(stat -c %u "$claims/$a/fs/app")" = "$ua" &&
	pgrep -u "$ua" -f gosbx-runtime &&
	pgrep -u "$ub" -f gosbx-runtime &&
	test -e /run/gosbx/uids/$ua &&
	gosbx close "$a" &&
	none_runs "$ua" &&
	! test -e /run/gosbx/uids/$ua &&
	gosbx close "$b" &&
	none_runs "$ub"
'

test_expect_success ROOT 'as root: a claim cannot read another claim or root files' '
	a=$(gosbx open -q) &&
	test_atexit "gosbx close $a" &&
	b=$(gosbx open -q) &&
	test_atexit "gosbx close $b" &&
	claims=$XDG_STATE_HOME/gosbx/claims &&
	gosbx exec --claim="$a" -- "echo a-secret >/app/secret; chmod 600 /app/secret" &&
	ub=$(sed -n "s/^host-uid //p" "$claims/$b/meta") &&
	# even given the path, uid b cannot read what uid a keeps private
	test -s "$claims/$a/fs/app/secret" &&
	test_must_fail setpriv --reuid="$ub" --regid="$ub" --clear-groups \
		cat "$claims/$a/fs/app/secret" &&
	gosbx exec --claim="$b" -- "cat /etc/shadow" >out 2>&1;
	! grep "^root:" out &&
	gosbx close "$a" && gosbx close "$b"
'

test_expect_success ROOT 'as root: doctor says what root mode does' '
	isolate-run --doctor >out || true &&
	grep "^ok sandbox user: running as root: each sandbox runs as a host uid and gid of its own, never 0, from [0-9]*-[0-9]* (" out &&
	grep "^ok user namespaces: .bwrap --unshare-user true. works (as uid [1-9][0-9]*, as root.s sandboxes do)" out
'

test_expect_success USER 'as a user: the sandbox runs as that user' '
	isolate-run --doctor >out || true &&
	grep "^ok sandbox user: sandboxes run as your uid $(id -u) " out &&
	rm -f st st.done &&
	isolate-run --detach --state=st -- sleep 7012 &&
	test "$(sed -n "s/^host-uid //p" st)" = "$(id -u)" &&
	isolate-run --kill=st
'

test_done

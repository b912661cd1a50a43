#!/bin/sh
test_description='attacks on the channel to the runtime from inside a sandbox

Code in a sandbox must not reach the runtime socket that the gosbx
client trusts: not replace it (a symlink to another claim, or to any
socket the user can reach), not find it, and not take it from the
runtime through /proc or pidfd_getfd().'
. "$(dirname "$0")/test-lib.sh"

test_have_prereq BWRAP || test_skip_all 'bwrap is not installed'
bwrap --unshare-user --ro-bind / / true 2>/dev/null ||
	test_skip_all 'unprivileged user namespaces do not work here'

claims="$XDG_STATE_HOME/gosbx/claims"
test_atexit 'gosbx close --all'

test_expect_success 'setup: two kept claims that say who they are' '
	gosbx open -q --name=victim >/dev/null &&
	gosbx open -q --name=other >/dev/null &&
	gosbx exec --claim=victim -- "echo victim >who" &&
	gosbx exec --claim=other -- "echo other >who"
'

test_expect_success 'the socket is ours: a socket in a directory only we see' '
	test -S "$claims/victim/run/runtime.sock" &&
	! test -h "$claims/victim/run/runtime.sock" &&
	test "$(stat -c %a "$claims/victim/run")" = 700 &&
	gosbx exec --claim=victim -- \
		"! test -e /run/gosbx && ! test -e /run/gosbx/runtime.sock"
'

test_expect_success 'no unix socket of the runtime is visible inside' '
	gosbx exec --claim=victim -- \
		"find / -xdev -type s 2>/dev/null; find /run /tmp /app -type s 2>/dev/null; true" >sockets &&
	! test -s sockets
'

test_expect_success 'a symlink planted by the sandbox cannot redirect the client' '
	# what worked when /run/gosbx (run/ of the claim) was bound inside
	gosbx exec --claim=victim -- "
		rm -f /run/gosbx/runtime.sock &&
		ln -s \"$claims/other/run/runtime.sock\" /run/gosbx/runtime.sock
	" 2>/dev/null;
	gosbx exec --claim=victim -- cat who >out &&
	echo victim >expect &&
	test_cmp expect out &&
	test -S "$claims/victim/run/runtime.sock"
'

cat >steal.py <<\PYEOF
# Look for a listening socket in every process we can see, through
# /proc/<pid>/fd and pidfd_getfd(2) (what a same-uid attacker tries).
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
SYS_pidfd_open, SYS_pidfd_getfd = 434, 438
me = os.getpid()
for pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit()):
    if pid == me:
        continue
    try:
        fds = [int(f) for f in os.listdir("/proc/%d/fd" % pid)]
        print("listed", pid)
    except OSError:
        fds = range(64)
    pfd = libc.syscall(SYS_pidfd_open, pid, 0)
    if pfd < 0:
        continue
    for fd in fds:
        got = libc.syscall(SYS_pidfd_getfd, pfd, fd, 0)
        if got < 0:
            continue
        try:
            s = socket.socket(fileno=got)
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
                print("stole a listening socket from", pid)
            s.detach()
        except OSError:
            pass
        os.close(got)
    os.close(pfd)
PYEOF

test_expect_success PYTHON 'the runtime and its helpers keep their descriptors' '
	cp steal.py "$claims/victim/fs/app/" &&
	gosbx exec --claim=victim -- "python3 steal.py; ls -l /proc/1/fd/" \
		>out 2>err;
	cat out err >&4 &&
	grep "^listed" out &&
	! grep stole out &&
	grep "/proc/1/fd.*Permission denied" err
'

test_expect_success 'a claim whose sandbox could write the socket is refused' '
	gosbx open -q --name=legacy >/dev/null &&
	sed -i "/^channel fd\$/d" "$claims/legacy/meta" &&
	{ gosbx exec --claim=legacy -- true 2>err; echo $? >rc; } &&
	echo 125 >expect && test_cmp expect rc &&
	test_grep "opened by an older gosbx whose sandbox can redirect" err
'

test_done

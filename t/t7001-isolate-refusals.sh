#!/bin/sh
test_description='local isolation: what a sandboxed process must not do'
. "$(dirname "$0")/test-lib.sh"

test_have_prereq BWRAP || test_skip_all 'bwrap is not installed'
bwrap --unshare-user --ro-bind / / true 2>/dev/null ||
	test_skip_all 'unprivileged user namespaces do not work here'
command -v cc >/dev/null 2>&1 && test_set_prereq CC

# run a command with its stderr in the file "err" (test_must_fail
# would send it elsewhere)
with_err() {
	"$@" 2>err
}
test "$(uname -m)" = x86_64 && test_set_prereq X86_64

# A host listener on loopback for the network tests.
port=$(test_free_port)
mkdir -p www && echo "served from the host" >www/index.html
(cd www && exec python3 -m http.server --bind 127.0.0.1 "$port") \
	>http.log 2>&1 &
http_pid=$!
test_atexit "kill $http_pid"
test_retry 100 0.1 curl -sf -o /dev/null "http://127.0.0.1:$port/" ||
	test_skip_all 'cannot start a host HTTP listener'

test_expect_success 'the host listener is reachable from the host' '
	curl -sf "http://127.0.0.1:$port/" >out &&
	test_cmp www/index.html out
'

test_expect_success 'no network: connecting to a host listener fails' '
	test_must_fail isolate-run -- \
		curl -sS --max-time 10 "http://127.0.0.1:$port/" &&
	test_must_fail isolate-run -- python3 -c "
import socket
socket.create_connection((\"127.0.0.1\", $port), timeout=10)
"
'

test_expect_success 'no network: AF_INET/AF_INET6 sockets are refused' '
	isolate-run -- python3 -c "
import errno, socket
for fam in (socket.AF_INET, socket.AF_INET6):
    try:
        socket.socket(fam, socket.SOCK_STREAM)
    except OSError as e:
        assert e.errno == errno.EPERM, e
    else:
        raise SystemExit(\"socket(%d) allowed\" % fam)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(\"/tmp/sock\")
print(\"unix ok\")
" >out &&
	echo "unix ok" >expect &&
	test_cmp expect out
'

test_expect_success 'with --network the host listener is reachable' '
	isolate-run --network -- \
		curl -sf --max-time 30 "http://127.0.0.1:$port/" >out &&
	test_cmp www/index.html out
'

test_expect_success 'ptrace of another process fails' '
	isolate-run -- sh -c "sleep 1000 & pid=\$!; python3 -c \"
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(16, int(sys.argv[1]), 0, 0)  # PTRACE_ATTACH
print(r, ctypes.get_errno())
\" \$pid; kill \$pid" >out &&
	echo "-1 1" >expect &&
	test_cmp expect out
'

test_expect_success 'strace cannot trace' '
	test_must_fail with_err isolate-run -- strace -o /dev/null true &&
	grep -i "operation not permitted" err
'

test_expect_success 'process_vm_readv is refused' '
	isolate-run -- python3 -c "
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(8)
class iov(ctypes.Structure):
    _fields_ = [(\"base\", ctypes.c_void_p), (\"len\", ctypes.c_size_t)]
a = iov(ctypes.cast(buf, ctypes.c_void_p), 8)
b = iov(ctypes.cast(buf, ctypes.c_void_p), 8)
r = libc.process_vm_readv(os.getpid(), ctypes.byref(a), 1, ctypes.byref(b), 1, 0)
print(r, ctypes.get_errno())
" >out &&
	echo "-1 1" >expect &&
	test_cmp expect out
'

test_expect_success 'mount fails' '
	test_must_fail isolate-run -- mount -t tmpfs none /tmp &&
	test_must_fail isolate-run -- mount --bind /app /tmp
'

test_expect_success 'unshare fails' '
	test_must_fail with_err isolate-run -- unshare -U true &&
	grep -i "operation not permitted" err &&
	test_must_fail isolate-run -- unshare -r true &&
	test_must_fail isolate-run -- unshare -n true
'

test_expect_success X86_64 'clone with namespace flags and setns fail' '
	isolate-run -- python3 -c "
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
out = []
for flag in (0x10000000, 0x20000000, 0x40000000, 0x20000, 0x4000000,
             0x8000000, 0x2000000):
    r = libc.syscall(56, flag | 17, 0, 0, 0, 0)  # clone on x86_64
    if r == 0:
        os._exit(0)
    out.append((r, ctypes.get_errno()))
fd = os.open(\"/proc/self/ns/net\", os.O_RDONLY)
out.append((libc.setns(fd, 0), ctypes.get_errno()))
print(set(out))
" >out &&
	echo "{(-1, 1)}" >expect &&
	test_cmp expect out
'

test_expect_success 'plain fork and threads still work' '
	isolate-run -- sh -c "(echo child) && echo parent" >out &&
	printf "child\nparent\n" >expect &&
	test_cmp expect out &&
	isolate-run -- python3 -c "
import threading
t = threading.Thread(target=print, args=(\"thread\",))
t.start(); t.join()
" >out &&
	echo thread >expect &&
	test_cmp expect out
'

test_expect_success X86_64 'clone3 reports ENOSYS (libc falls back to clone)' '
	isolate-run -- python3 -c "
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print(libc.syscall(435, 0, 0), ctypes.get_errno())
" >out &&
	echo "-1 38" >expect &&
	test_cmp expect out
'

test_expect_success X86_64 'keyctl, bpf, perf_event_open, reboot are refused' '
	isolate-run -- python3 -c "
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
res = set()
for nr in (250, 321, 298, 169, 323, 175):  # x86_64 numbers
    res.add((libc.syscall(nr, 0, 0, 0, 0, 0), ctypes.get_errno()))
print(res)
" >out &&
	echo "{(-1, 1)}" >expect &&
	test_cmp expect out
'

# The 32-bit x86 ABI: a kernel without IA32 emulation kills the probe
# on the host too (then there is no 32-bit ABI to filter).
if test_have_prereq X86_64,CC
then
	cat >int80.c <<-\EOT
	#include <stdio.h>
	static long sys32(long nr, long a)
	{
		long r;
		__asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(a)
				 : "memory");
		return r;
	}
	int main(void)
	{
		/* i386: getpid 20, unshare 310 (CLONE_NEWUSER), ptrace 26 */
		printf("%d %ld %ld\n", sys32(20, 0) > 0, sys32(310, 0x10000000),
		       sys32(26, 0));
		return 0;
	}
	EOT
	if cc -o int80 int80.c && ./int80 >int80.host 2>&1 &&
		grep -q "^1 " int80.host
	then
		test_set_prereq IA32
	else
		say "# no IA32 emulation in this kernel: int 0x80 fails on the host"
	fi
fi

test_expect_success IA32 'the 32-bit syscall ABI (int 0x80) is filtered too' '
	isolate-run -- ./int80 >out &&
	echo "1 -1 -1" >expect &&
	test_cmp expect out
'

test_done

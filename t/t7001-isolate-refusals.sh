#!/bin/sh
test_description='local isolation: what a sandboxed process must not do'
. "$(dirname "$0")/test-lib.sh"

test_have_prereq BWRAP || test_skip_all 'bwrap is not installed'
bwrap --unshare-user --ro-bind / / true 2>/dev/null ||
	test_skip_all 'unprivileged user namespaces do not work here'
command -v cc >/dev/null 2>&1 && test_set_prereq CC

# run a command with its stderr in the file "err" (test_must_fail
# would send it elsewhere)
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

test_expect_success 'no network: loopback works, only lo exists' '
	isolate-run -- python3 -c "
import socket
names = [n for _, n in socket.if_nameindex()]
assert names == [\"lo\"], names
for fam, addr in ((socket.AF_INET, \"127.0.0.1\"), (socket.AF_INET6, \"::1\")):
    srv = socket.socket(fam, socket.SOCK_STREAM)
    srv.bind((addr, 0))
    srv.listen(1)
    c = socket.create_connection(srv.getsockname()[:2], timeout=10)
    conn, _ = srv.accept()
    c.sendall(b\"ping\")
    assert conn.recv(4) == b\"ping\"
    print(addr, \"ok\")
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(\"/tmp/sock\")
print(\"unix ok\")
" >out &&
	printf "127.0.0.1 ok\n::1 ok\nunix ok\n" >expect &&
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

test_expect_success X86_64 'io_uring, pidfd_getfd and openat2 are refused' '
	isolate-run -- python3 -c "
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(120)  # struct io_uring_params
for name, nr, args in ((\"io_uring_setup\", 425, (8, buf)),
                       (\"io_uring_enter\", 426, (0, 1, 0, 0, 0, 0)),
                       (\"io_uring_register\", 427, (0, 0, 0, 0)),
                       (\"pidfd_getfd\", 438, (0, 0, 0)),
                       (\"openat2\", 437, (0, b\"/etc/hostname\", 0, 0))):
    print(name, libc.syscall(nr, *args), ctypes.get_errno())
" >out &&
	cat >expect <<-\EOF &&
	io_uring_setup -1 1
	io_uring_enter -1 1
	io_uring_register -1 1
	pidfd_getfd -1 1
	openat2 -1 38
	EOF
	test_cmp expect out
'

test_expect_success 'AF_VSOCK sockets are refused, with or without network' '
	for net in "" --network
	do
		isolate-run $net -- python3 -c "
import errno, socket
try:
    socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
except OSError as e:
    print(errno.errorcode[e.errno])
else:
    print(\"allowed\")
" >out &&
		echo EPERM >expect &&
		test_cmp expect out || return 1
	done
'

test_expect_success 'personality: only the flags of Docker'"'"'s profile' '
	isolate-run -- python3 -c "
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.personality.argtypes = [ctypes.c_ulong]
for v in (0, 8, 0x20000, 0x20008, 0xffffffff,
          0x0040000,   # ADDR_NO_RANDOMIZE: no ASLR
          0x0400000,   # READ_IMPLIES_EXEC
          0x0100000,   # MMAP_PAGE_ZERO
          0x0040008, 1, 0xfffffffe, 0x100040000):
    ctypes.set_errno(0)
    r = libc.personality(v)
    print(hex(v), \"ok\" if r >= 0 else \"EPERM\" if ctypes.get_errno() == 1
          else ctypes.get_errno())
    libc.personality(0)
" >out &&
	cat >expect <<-\EOF &&
	0x0 ok
	0x8 ok
	0x20000 ok
	0x20008 ok
	0xffffffff ok
	0x40000 EPERM
	0x400000 EPERM
	0x100000 EPERM
	0x40008 EPERM
	0x1 EPERM
	0xfffffffe EPERM
	0x100040000 EPERM
	EOF
	test_cmp expect out &&
	# setarch -R is how a shell turns ASLR off
	test_must_fail isolate-run -- setarch -R true
'

test_expect_success 'no set-user-ID or set-group-ID file can be made' '
	isolate-run -- python3 -c "
import os, stat
open(\"/app/plain\", \"w\").close()
for m in (0o4755, 0o2755, 0o6755):
    try:
        os.chmod(\"/app/plain\", m)
        print(oct(m), \"chmod allowed\")
    except PermissionError:
        print(oct(m), \"chmod EPERM\")
    try:
        os.close(os.open(\"/app/new%o\" % m, os.O_CREAT | os.O_WRONLY, m))
        print(oct(m), \"open allowed\")
    except PermissionError:
        print(oct(m), \"open EPERM\")
os.chmod(\"/app/plain\", 0o755)
os.mkdir(\"/app/d\", 0o755)
os.close(os.open(\"/app/d/f\", os.O_CREAT | os.O_WRONLY, 0o644))
print(\"plain modes ok\")
" >out &&
	cat >expect <<-\EOF &&
	0o4755 chmod EPERM
	0o4755 open EPERM
	0o2755 chmod EPERM
	0o2755 open EPERM
	0o6755 chmod EPERM
	0o6755 open EPERM
	plain modes ok
	EOF
	test_cmp expect out &&
	test_must_fail isolate-run -- chmod u+s /app/plain &&
	test_must_fail isolate-run -- chmod g+s /app/d &&
	test -z "$(find . -perm /6000)"
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

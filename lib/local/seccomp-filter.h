#ifndef SECCOMP_FILTER_H
#define SECCOMP_FILTER_H

#include "compat.h"
#include "strbuf.h"

/*
 * The seccomp filter of local sandboxes (Documentation/technical/design.md
 * "Backends", `local`), built with libseccomp and handed to bubblewrap as BPF
 * (`bwrap
 * --seccomp FD`, which also sets no_new_privs before loading it). The
 * table in gosbx(1), "SECCOMP FILTER", says the same for users; keep
 * both in step.
 *
 * Default action: allow. Denied with EPERM: ptrace, pidfd_getfd,
 * process_vm_readv/writev, the mount family (mount, umount2, umount,
 * pivot_root, fsopen, fsmount, move_mount, open_tree, fspick,
 * mount_setattr), kexec_load, kexec_file_load, init_module,
 * finit_module, delete_module, bpf, perf_event_open, keyctl, add_key,
 * request_key, reboot, swapon, swapoff, unshare, setns, userfaultfd,
 * open_by_handle_at, acct, settimeofday, clock_settime, clock_adjtime,
 * adjtimex, stime, io_uring_setup/enter/register (as Docker's default
 * profile), clone() with any CLONE_NEWUSER/NEWNS/NEWPID/NEWNET/NEWUTS/
 * NEWIPC/NEWCGROUP flag, socket(AF_VSOCK) (the hypervisor's sockets),
 * personality() other than PER_LINUX, PER_LINUX32, UNAME26 or the
 * query, and a mode with S_ISUID or S_ISGID in chmod, fchmod,
 * fchmodat, fchmodat2, mknod, mknodat, creat and in open/openat with
 * O_CREAT or O_TMPFILE. clone3 and openat2 fail with ENOSYS (their
 * flags live in memory the filter cannot read; libc then falls back).
 * Every socket family but AF_VSOCK is allowed: without networking
 * the sandbox's network namespace has only its own loopback (see
 * isolate.h), so a server on 127.0.0.1 or ::1 inside works and
 * nothing outside is reachable.
 *
 * On x86_64 the same rules also cover the 32-bit x86 ABI (int 0x80),
 * where socketcall(2) is denied as a whole since its arguments are in
 * memory; syscalls of any other ABI (x32) kill the process. System
 * calls numbered alike on every architecture since Linux 5.1 are
 * denied by number when this libseccomp does not know their names.
 */

/*
 * Build the filter and write its BPF into a memfd. Returns the
 * descriptor (close-on-exec, offset 0; the caller closes it), or -1
 * with error() naming the cause.
 */
int seccomp_filter_fd(void);

/*
 * For `gosbx doctor`: whether this kernel can filter system calls
 * (prctl(PR_GET_SECCOMP) and building the filter). Returns 1 if
 * usable; 0 if not, with the reason appended to why.
 */
int seccomp_filter_available(struct strbuf *why);

#endif /* SECCOMP_FILTER_H */

#ifndef SECCOMP_FILTER_H
#define SECCOMP_FILTER_H

#include "compat.h"
#include "strbuf.h"

/*
 * The seccomp filter of local sandboxes (DESIGN.md "Backends", `local`),
 * built with libseccomp and handed to bubblewrap as BPF (`bwrap
 * --seccomp FD`, which also sets no_new_privs before loading it).
 *
 * Default action: allow. Denied with EPERM: ptrace,
 * process_vm_readv/writev, mount, umount2, pivot_root, kexec_load,
 * kexec_file_load, init_module, finit_module, delete_module, bpf,
 * perf_event_open, keyctl, add_key, request_key, reboot, swapon,
 * swapoff, unshare, setns, userfaultfd, open_by_handle_at, acct,
 * settimeofday, clock_settime, clock_adjtime, adjtimex, and clone()
 * with any CLONE_NEWUSER/NEWNS/NEWPID/NEWNET/NEWUTS/NEWIPC/NEWCGROUP
 * flag. clone3 fails with ENOSYS (its flags live in memory the filter
 * cannot read; libc then falls back to clone). Without networking,
 * socket(AF_INET) and socket(AF_INET6) fail with EPERM (AF_UNIX stays).
 *
 * On x86_64 the same rules also cover the 32-bit x86 ABI (int 0x80),
 * where socketcall(2) is denied as a whole without networking since
 * its arguments are in memory; syscalls of any other ABI (x32) kill
 * the process.
 */

/*
 * Build the filter and write its BPF into a memfd. Returns the
 * descriptor (close-on-exec, offset 0; the caller closes it), or -1
 * with error() naming the cause. allow_network: 0 adds the socket
 * rules above.
 */
int seccomp_filter_fd(int allow_network);

/*
 * For `gosbx doctor`: whether this kernel can filter system calls
 * (prctl(PR_GET_SECCOMP) and building the filter). Returns 1 if
 * usable; 0 if not, with the reason appended to why.
 */
int seccomp_filter_available(struct strbuf *why);

#endif /* SECCOMP_FILTER_H */

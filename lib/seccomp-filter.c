#include "compat.h"
#include "seccomp-filter.h"
#include "usage.h"

#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

/* denied with EPERM everywhere */
static const char *const denied[] = {
	"ptrace",	 "process_vm_readv", "process_vm_writev",
	"mount",	 "umount2",	     "umount",
	"pivot_root",	 "fsopen",	     "fsmount",
	"move_mount",	 "open_tree",	     "fspick",
	"mount_setattr", "kexec_load",	     "kexec_file_load",
	"init_module",	 "finit_module",     "delete_module",
	"bpf",		 "perf_event_open",  "keyctl",
	"add_key",	 "request_key",	     "reboot",
	"swapon",	 "swapoff",	     "unshare",
	"setns",	 "userfaultfd",	     "open_by_handle_at",
	"acct",		 "settimeofday",     "clock_settime",
	"clock_adjtime", "adjtimex",	     "stime",
};

static const unsigned long ns_flags[] = {
	CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWPID,    CLONE_NEWNET,
	CLONE_NEWUTS,  CLONE_NEWIPC, CLONE_NEWCGROUP,
};

/*
 * Add one rule; a syscall this libseccomp or architecture does not
 * know is not an error (there is nothing to deny).
 */
static int add(scmp_filter_ctx ctx, uint32_t action, const char *name,
	       unsigned nr_args, const struct scmp_arg_cmp *args)
{
	int nr = seccomp_syscall_resolve_name(name);
	int r;

	if (nr == __NR_SCMP_ERROR)
		return 0;
	r = seccomp_rule_add_array(ctx, action, nr, nr_args, args);
	if (r == -EDOM || r == -EOPNOTSUPP)
		return 0; /* not on this architecture */
	if (r < 0) {
		errno = -r;
		return error_errno("cannot create sandbox: seccomp rule for "
				   "'%s'",
				   name);
	}
	return 0;
}

static int add_rules(scmp_filter_ctx ctx, int allow_network)
{
	uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	/* s390 passes the stack first, the flags second */
	unsigned flag_arg =
		seccomp_arch_native() == SCMP_ARCH_S390X ||
				seccomp_arch_native() == SCMP_ARCH_S390
			? 1
			: 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(denied); i++)
		if (add(ctx, eperm, denied[i], 0, NULL))
			return -1;
	if (add(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL))
		return -1;
	for (i = 0; i < ARRAY_SIZE(ns_flags); i++) {
		struct scmp_arg_cmp cmp = { flag_arg, SCMP_CMP_MASKED_EQ,
					    ns_flags[i], ns_flags[i] };

		if (add(ctx, eperm, "clone", 1, &cmp))
			return -1;
	}
	if (!allow_network) {
		struct scmp_arg_cmp inet = { 0, SCMP_CMP_EQ, AF_INET, 0 };
		struct scmp_arg_cmp inet6 = { 0, SCMP_CMP_EQ, AF_INET6, 0 };

		if (add(ctx, eperm, "socket", 1, &inet) ||
		    add(ctx, eperm, "socket", 1, &inet6))
			return -1;
	}
	return 0;
}

/* the 32-bit x86 ABI of an x86_64 kernel: same rules, socketcall too */
static int add_x86_rules(scmp_filter_ctx ctx, int allow_network)
{
	scmp_filter_ctx x86 = seccomp_init(SCMP_ACT_ALLOW);
	int r, ret = -1;

	if (!x86)
		return error("cannot create sandbox: seccomp_init failed");
	r = seccomp_arch_remove(x86, seccomp_arch_native());
	if (!r)
		r = seccomp_arch_add(x86, SCMP_ARCH_X86);
	if (r < 0) {
		errno = -r;
		error_errno("cannot create sandbox: seccomp x86 architecture");
		goto out;
	}
	if (add_rules(x86, 1))
		goto out;
	if (!allow_network) {
		/*
		 * socketcall hides the domain in memory; direct socket(2)
		 * (Linux 4.3+) gets the same argument rule as on x86_64.
		 */
		struct scmp_arg_cmp inet = { 0, SCMP_CMP_EQ, AF_INET, 0 };
		struct scmp_arg_cmp inet6 = { 0, SCMP_CMP_EQ, AF_INET6, 0 };

		if (add(x86, SCMP_ACT_ERRNO(EPERM), "socketcall", 0, NULL))
			goto out;
		r = seccomp_rule_add_exact(x86, SCMP_ACT_ERRNO(EPERM),
					   SCMP_SYS(socket), 1, inet);
		if (!r)
			r = seccomp_rule_add_exact(x86, SCMP_ACT_ERRNO(EPERM),
						   SCMP_SYS(socket), 1, inet6);
		if (r < 0) {
			/* no direct socket(2): deny it as a whole */
			if (add(x86, SCMP_ACT_ERRNO(EPERM), "socket", 0, NULL))
				goto out;
		}
	}
	r = seccomp_merge(ctx, x86);
	if (r < 0) {
		errno = -r;
		error_errno("cannot create sandbox: seccomp merge of x86 "
			    "filter");
		goto out;
	}
	return 0; /* seccomp_merge freed x86 */
out:
	seccomp_release(x86);
	return ret;
}

static scmp_filter_ctx build(int allow_network)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r;

	if (!ctx) {
		error("cannot create sandbox: seccomp_init failed");
		return NULL;
	}
	/* any ABI not in the filter (e.g. x32) kills the process */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
			     SCMP_ACT_KILL_PROCESS);
	if (r < 0) {
		errno = -r;
		error_errno("cannot create sandbox: seccomp bad-arch action");
		goto fail;
	}
	if (add_rules(ctx, allow_network))
		goto fail;
	if (seccomp_arch_native() == SCMP_ARCH_X86_64 &&
	    add_x86_rules(ctx, allow_network))
		goto fail;
	return ctx;
fail:
	seccomp_release(ctx);
	return NULL;
}

int seccomp_filter_fd(int allow_network)
{
	scmp_filter_ctx ctx = build(allow_network);
	int fd, r;

	if (!ctx)
		return -1;
	fd = memfd_create("gosbx-seccomp", MFD_CLOEXEC);
	if (fd < 0) {
		error_errno("cannot create sandbox: seccomp: memfd_create");
		goto out;
	}
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0) {
		errno = -r;
		error_errno("cannot create sandbox: seccomp_export_bpf");
		close(fd);
		fd = -1;
		goto out;
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		error_errno("cannot create sandbox: seccomp: lseek");
		close(fd);
		fd = -1;
	}
out:
	seccomp_release(ctx);
	return fd;
}

int seccomp_filter_available(struct strbuf *why)
{
	scmp_filter_ctx ctx;

	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL) {
		strbuf_addstr(why, "the kernel has no seccomp support "
				   "(CONFIG_SECCOMP)");
		return 0;
	}
	ctx = build(0);
	if (!ctx) {
		strbuf_addf(why, "libseccomp cannot build the filter: %s",
			    last_error());
		return 0;
	}
	seccomp_release(ctx);
	return 1;
}

#include "compat.h"
#include "local/seccomp-filter.h"
#include "usage.h"

#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif

/* denied with EPERM everywhere */
static const char *const denied[] = {
	"ptrace",
	"process_vm_readv",
	"process_vm_writev",
	"pidfd_getfd",
	"mount",
	"umount2",
	"umount",
	"pivot_root",
	"fsopen",
	"fsmount",
	"move_mount",
	"open_tree",
	"fspick",
	"mount_setattr",
	"kexec_load",
	"kexec_file_load",
	"init_module",
	"finit_module",
	"delete_module",
	"bpf",
	"perf_event_open",
	"keyctl",
	"add_key",
	"request_key",
	"reboot",
	"swapon",
	"swapoff",
	"unshare",
	"setns",
	"userfaultfd",
	"open_by_handle_at",
	"acct",
	"settimeofday",
	"clock_settime",
	"clock_adjtime",
	"adjtimex",
	"stime",
	"io_uring_setup",
	"io_uring_enter",
	"io_uring_register",
};

/*
 * Failing with ENOSYS, as on a kernel without them, so that libc falls
 * back: clone3 and openat2 carry their flags (and openat2 its mode) in
 * memory the filter cannot read.
 */
static const char *const nosys[] = { "clone3", "openat2" };

/*
 * System calls added since Linux 5.1 have the same number on every
 * architecture (x86_64 and i386 included); a libseccomp older than
 * the kernel may not know their names, which must not leave them
 * allowed.
 */
static const struct {
	const char *name;
	int nr;
} unified[] = {
	{ "io_uring_setup", 425 },
	{ "io_uring_enter", 426 },
	{ "io_uring_register", 427 },
	{ "open_tree", 428 },
	{ "move_mount", 429 },
	{ "fsopen", 430 },
	{ "fsmount", 432 },
	{ "fspick", 433 },
	{ "clone3", 435 },
	{ "openat2", 437 },
	{ "pidfd_getfd", 438 },
	{ "mount_setattr", 442 },
	{ "fchmodat2", 452 },
};

static const unsigned long ns_flags[] = {
	CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWPID,    CLONE_NEWNET,
	CLONE_NEWUTS,  CLONE_NEWIPC, CLONE_NEWCGROUP,
};

/*
 * The calls that give a file a mode: where the mode is (argument
 * index) and, for open, where the flags are that make it create a file
 * (-1: the call always applies the mode).
 */
static const struct {
	const char *name;
	unsigned mode_arg;
	int flags_arg;
} mode_calls[] = {
	{ "chmod", 1, -1 },	{ "fchmod", 1, -1 }, { "fchmodat", 2, -1 },
	{ "fchmodat2", 2, -1 }, { "mknod", 1, -1 },  { "mknodat", 2, -1 },
	{ "creat", 1, -1 },	{ "open", 2, 1 },    { "openat", 3, 2 },
};

/*
 * The number of name as seccomp_rule_add() takes it (native, or one of
 * libseccomp's negative pseudo numbers for a call only other ABIs
 * have, e.g. socketcall), or __NR_SCMP_ERROR.
 */
static int resolve(const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);
	size_t i;

	if (nr != __NR_SCMP_ERROR)
		return nr;
	for (i = 0; i < ARRAY_SIZE(unified); i++)
		if (!strcmp(unified[i].name, name))
			return unified[i].nr;
	return __NR_SCMP_ERROR;
}

/*
 * Add one rule; a syscall this architecture does not have is not an
 * error (there is nothing to deny).
 */
static int add(scmp_filter_ctx ctx, uint32_t action, const char *name,
	       unsigned nr_args, const struct scmp_arg_cmp *args)
{
	int nr = resolve(name);
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

/*
 * personality(2): only what Docker's default profile allows, PER_LINUX
 * (0), PER_LINUX32 (8), UNAME26 (0x20000), their combinations and the
 * query 0xffffffff; the other flags (ADDR_NO_RANDOMIZE turns ASLR off,
 * READ_IMPLIES_EXEC, MMAP_PAGE_ZERO, ...) fail with EPERM. A rule
 * compares each argument once, so "not one of these values" is a set
 * of masked comparisons on the low 32 bits the kernel reads:
 *   bit 0 clear: any bit other than 3 and 17 is refused;
 *   bit 0 set: bit i set and bit i+1 clear is refused, so only
 *   0xffffffff passes.
 */
static int add_personality(scmp_filter_ctx ctx)
{
	uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	const uint64_t ok = 0x8 | 0x20000;
	int b;

	for (b = 1; b < 32; b++) {
		uint64_t bit = (uint64_t)1 << b;
		struct scmp_arg_cmp cmp = { 0, SCMP_CMP_MASKED_EQ, bit | 1,
					    bit };

		if (!(bit & ok) && add(ctx, eperm, "personality", 1, &cmp))
			return -1;
	}
	for (b = 0; b < 31; b++) {
		struct scmp_arg_cmp cmp = { 0, SCMP_CMP_MASKED_EQ,
					    (uint64_t)3 << b | 1,
					    (uint64_t)1 << b | 1 };

		if (add(ctx, eperm, "personality", 1, &cmp))
			return -1;
	}
	return 0;
}

/*
 * No set-user-ID or set-group-ID file: a mode with S_ISUID or S_ISGID
 * fails with EPERM in chmod and its siblings, mknod and in an open
 * that creates a file (O_CREAT, O_TMPFILE). Such a file would keep its
 * bit on the host, outside the sandbox's nosuid mounts.
 */
static int add_setid(scmp_filter_ctx ctx)
{
	static const unsigned long bits[] = { S_ISUID, S_ISGID };
	static const unsigned long creating[] = { O_CREAT, __O_TMPFILE };
	uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	size_t i, j, k;

	for (i = 0; i < ARRAY_SIZE(mode_calls); i++) {
		for (j = 0; j < ARRAY_SIZE(bits); j++) {
			struct scmp_arg_cmp cmp[2] = {
				{ mode_calls[i].mode_arg, SCMP_CMP_MASKED_EQ,
				  bits[j], bits[j] },
			};

			if (mode_calls[i].flags_arg < 0) {
				if (add(ctx, eperm, mode_calls[i].name, 1, cmp))
					return -1;
				continue;
			}
			for (k = 0; k < ARRAY_SIZE(creating); k++) {
				cmp[1].arg = mode_calls[i].flags_arg;
				cmp[1].op = SCMP_CMP_MASKED_EQ;
				cmp[1].datum_a = creating[k];
				cmp[1].datum_b = creating[k];
				if (add(ctx, eperm, mode_calls[i].name, 2, cmp))
					return -1;
			}
		}
	}
	return 0;
}

static int add_rules(scmp_filter_ctx ctx)
{
	uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	/* s390 passes the stack first, the flags second */
	unsigned flag_arg =
		seccomp_arch_native() == SCMP_ARCH_S390X ||
				seccomp_arch_native() == SCMP_ARCH_S390
			? 1
			: 0;
	struct scmp_arg_cmp vsock = { 0, SCMP_CMP_EQ, AF_VSOCK, 0 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(denied); i++)
		if (add(ctx, eperm, denied[i], 0, NULL))
			return -1;
	for (i = 0; i < ARRAY_SIZE(nosys); i++)
		if (add(ctx, SCMP_ACT_ERRNO(ENOSYS), nosys[i], 0, NULL))
			return -1;
	for (i = 0; i < ARRAY_SIZE(ns_flags); i++) {
		struct scmp_arg_cmp cmp = { flag_arg, SCMP_CMP_MASKED_EQ,
					    ns_flags[i], ns_flags[i] };

		if (add(ctx, eperm, "clone", 1, &cmp))
			return -1;
	}
	if (add(ctx, eperm, "socket", 1, &vsock) || add_personality(ctx) ||
	    add_setid(ctx))
		return -1;
	return 0;
}

/*
 * The 32-bit x86 ABI of an x86_64 kernel: the same rules, and
 * socketcall(2) denied as a whole, since it hides the socket family in
 * memory (32-bit programs use the direct socket calls of Linux 4.3+).
 */
static int add_x86_rules(scmp_filter_ctx ctx)
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
	if (add_rules(x86) ||
	    add(x86, SCMP_ACT_ERRNO(EPERM), "socketcall", 0, NULL))
		goto out;
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

static scmp_filter_ctx build(void)
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
	if (add_rules(ctx))
		goto fail;
	if (seccomp_arch_native() == SCMP_ARCH_X86_64 && add_x86_rules(ctx))
		goto fail;
	return ctx;
fail:
	seccomp_release(ctx);
	return NULL;
}

int seccomp_filter_fd(void)
{
	scmp_filter_ctx ctx = build();
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
	ctx = build();
	if (!ctx) {
		strbuf_addf(why, "libseccomp cannot build the filter: %s",
			    last_error());
		return 0;
	}
	seccomp_release(ctx);
	return 1;
}

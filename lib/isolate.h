#ifndef ISOLATE_H
#define ISOLATE_H

#include "compat.h"
#include "cgroup.h"
#include "strbuf.h"
#include "strvec.h"

/*
 * The isolation of the `local` backend (DESIGN.md "Backends"): one
 * sandbox is a bubblewrap (`bwrap`) process tree with
 *   - new user, pid, ipc, uts (hostname "gosbx") and, if possible,
 *     cgroup namespaces; a new network namespace unless networking is
 *     asked for; a new session; all capabilities dropped;
 *   - a fresh root: host /usr and /etc read-only, /bin, /lib, /lib64,
 *     /lib32, /libx32, /sbin as the host has them (symlinks stay
 *     symlinks), fresh /proc, /dev, /tmp (tmpfs), HOME=/home/sandbox
 *     (tmpfs), the claim directory read-write at /app (the working
 *     directory), the per-user Go caches read-write, the host Go root
 *     read-only when it lives outside /usr; the sandbox user is uid and
 *     gid 1000 mapped to the invoking user;
 *   - the environment of the seed's runtime image only (--clearenv);
 *   - the seccomp filter of seccomp-filter.h (no_new_privs is set);
 *   - cgroup limits (cgroup.h), entered before bwrap runs, so nothing
 *     ever runs unconfined; as a non-root user on cgroup v2 a systemd
 *     scope (`systemd-run --user --scope -p MemoryMax=...`) instead;
 *   - rlimits: RLIMIT_NOFILE, RLIMIT_FSIZE (if set), RLIMIT_CORE 0.
 * bwrap stays pid 1 of the sandbox and reaps (unless as_init); bwrap
 * exits with the status of the first process (argv; 128+N when killed
 * by signal N) once it ends, but its reaper, and with it the sandbox,
 * lives on while any process inside does; with as_init the sandbox
 * ends with the first process.
 *
 * Isolation fails closed: if a namespace, the seccomp filter or an
 * explicitly asked limit cannot be set up, nothing is started and the
 * error names the layer and the cause. A default limit (not asked
 * explicitly) that the host cannot apply is skipped with one warning
 * per process.
 *
 * Cgroups: as root, <hierarchy>/gosbx/<claim_name> in v2 where its
 * controllers exist, else in the v1 hierarchy; as another user, a
 * parent group "gosbx" the user may write (made by an administrator),
 * else on v2 a systemd scope gosbx-<claim_name>.scope whose limits
 * are read back after start (fail closed if systemd did not apply
 * them). The systemd path could not be exercised on the development
 * host (no user session bus); the direct v1 path and, with fake
 * trees, the v2 files are tested.
 *
 * Environment: GOSBX_CGROUP_ROOT replaces /sys/fs/cgroup (tests);
 * GOSBX_BWRAP replaces `bwrap` found on PATH.
 */

#define ISOLATE_DEFAULT_MEMORY ((int64_t)2 << 30) /* bytes */
#define ISOLATE_DEFAULT_PIDS 1024
#define ISOLATE_DEFAULT_NOFILE 8192
#define ISOLATE_SANDBOX_UID 1000
#define ISOLATE_HOME "/home/sandbox"
#define ISOLATE_WORKDIR "/app"
#define ISOLATE_MAX_PASS_FDS 8

struct isolate_config {
	/*
	 * Names the cgroups (<parent>/<claim_name>) and the systemd scope
	 * (gosbx-<claim_name>.scope): one path component, unique per
	 * live sandbox. Required.
	 */
	const char *claim_name;
	/* host directory that becomes /app, read-write. Required. */
	const char *claim_dir;
	/*
	 * Host Go build and module caches, bound read-write to
	 * /home/sandbox/.cache/go-build and /home/sandbox/go/pkg/mod;
	 * created if missing. NULL: $XDG_CACHE_HOME/gosbx/go-build and
	 * $XDG_CACHE_HOME/gosbx/go-mod ($HOME/.cache when unset).
	 */
	const char *gocache_dir;
	const char *gomodcache_dir;
	/* extra read-only binds, each "HOST" or "HOST:SANDBOX" (absolute) */
	struct strvec ro_binds;
	/* extra read-write binds, "HOST:SANDBOX" (absolute paths) */
	struct strvec rw_binds;
	/* allow network (share the host's network namespace) */
	int network;
	/*
	 * Kill the sandbox when the spawning thread's process dies
	 * (bwrap --die-with-parent). A resident runtime that must outlive
	 * `gosbx open` leaves it 0; bwrap is then started in a new
	 * session and the caller daemonizes (or just exits: bwrap is
	 * re-parented).
	 */
	int die_with_parent;
	/*
	 * Limits, 0 = none. *_explicit: the user asked for it, so it
	 * never degrades; otherwise it is a default that is skipped with
	 * a warning when this host cannot apply it.
	 */
	int64_t memory_bytes; /* memory incl. swap, bytes */
	int memory_explicit;
	int64_t pids; /* tasks */
	int pids_explicit;
	double cpus; /* CPU bandwidth, e.g. 1.5 */
	int cpus_explicit;
	int64_t nofile; /* RLIMIT_NOFILE (soft and hard) */
	int nofile_explicit;
	int64_t fsize_bytes; /* RLIMIT_FSIZE, bytes; 0 = none */
	/* cgroup parent group name; NULL = "gosbx" */
	const char *cgroup_parent;
	/* the command run inside, argv[0] looked up on the sandbox PATH */
	struct strvec argv;
	/* extra environment "K=V", after (and overriding) the defaults */
	struct strvec env;
	/* descriptors for the sandbox's stdin/stdout/stderr; -1 inherits */
	int stdin_fd, stdout_fd, stderr_fd;
	/*
	 * Descriptors the command inherits under the same numbers (e.g. a
	 * listening socket handed to gosbx-runtime); bwrap passes them on
	 * and closes them in its own processes. Every other descriptor of
	 * ours is closed. At most ISOLATE_MAX_PASS_FDS.
	 */
	int pass_fds[ISOLATE_MAX_PASS_FDS];
	int nr_pass_fds;
	/*
	 * The command is pid 1 of the sandbox (bwrap --as-pid-1) instead
	 * of a child of bwrap's reaper: when it exits the kernel ends
	 * every process of the sandbox (bwrap's reaper waits for all of
	 * them), nothing of bwrap's inside holds the sandbox's stdio, and
	 * code inside cannot signal the command to death (pid 1 only gets
	 * signals it handles or blocks). The command must reap orphans
	 * (gosbx-runtime does).
	 */
	int as_init;
};

/*
 * Defaults: memory ISOLATE_DEFAULT_MEMORY, pids ISOLATE_DEFAULT_PIDS,
 * nofile ISOLATE_DEFAULT_NOFILE (all not explicit), no CPU limit, no
 * network, die_with_parent 1, fds -1. Free with isolate_config_release.
 */
void isolate_config_init(struct isolate_config *cfg);
void isolate_config_release(struct isolate_config *cfg);

/* bits of isolate_handle.limits: what was really applied */
#define ISOLATE_LIMIT_MEMORY (1u << 0)
#define ISOLATE_LIMIT_PIDS (1u << 1)
#define ISOLATE_LIMIT_CPU (1u << 2)

struct isolate_handle {
	pid_t pid;	 /* bwrap on the host (our child after spawn) */
	uint64_t start;	 /* its start time, clock ticks since boot */
	pid_t child_pid; /* the sandbox's pid 1, host pid namespace */
	uint64_t child_start;
	struct cgroup cg; /* the sandbox's groups (maybe none in use) */
	unsigned limits;  /* ISOLATE_LIMIT_* applied */
	int reaped;	  /* isolate_wait() collected the status */
	int status;	  /* wait status once reaped */
};

/* Zero the handle (pid -1). */
void isolate_handle_init(struct isolate_handle *h);

/*
 * Start the sandbox. On success h describes it (pid is our child) and
 * 0 is returned; bwrap may still be setting up the mounts when this
 * returns (wait for a sign from the command itself, e.g. its socket),
 * but its pid 1 exists and every process is already in the cgroups.
 * On failure returns -1 after error("cannot create sandbox: <layer>:
 * <cause>"), with nothing left running and no cgroup left behind.
 * The claim directory and every bind source must exist (checked
 * here); bwrap's own messages ("bwrap: ...") go to cfg->stderr_fd.
 * A failure of bwrap after its pid 1 exists (rare: a mount that
 * fails) looks like the command exiting with status 1.
 * Not async-signal-safe; safe in a threaded program (the child only
 * makes async-signal-safe calls before exec). h must be initialised;
 * free with isolate_release() or isolate_handle_free().
 */
int isolate_spawn(const struct isolate_config *cfg, struct isolate_handle *h);

/*
 * Wait for bwrap (only in the process that spawned it). timeout_ms -1
 * waits forever, 0 polls. Returns 1 with *status (a wait status) when
 * it ended, 0 if still running, -1 with error() on failure.
 */
int isolate_wait(struct isolate_handle *h, int timeout_ms, int *status);

/*
 * True if the sandbox still runs: its pid 1 (or bwrap) exists with
 * the recorded start time, so a reused pid is never mistaken for it;
 * a zombie (an orphan the host's init did not reap) counts as ended.
 * Works from any process of the same user.
 */
int isolate_alive(const struct isolate_handle *h);

/*
 * SIGKILL the sandbox: its pid 1 (which ends the pid namespace), bwrap
 * and every process in its cgroups. Pids are checked against their
 * start times first. Works from any process. Returns 0 or -1 (error()
 * when processes could not be killed).
 */
int isolate_kill(struct isolate_handle *h);

/*
 * Number of OOM kills in the sandbox's memory group so far (see
 * cgroup_oom_kills()); 0 when there is no memory group. Returns 0 or
 * -1 with error().
 */
int isolate_oom_kills(const struct isolate_handle *h, uint64_t *out);

/*
 * End the sandbox for good: isolate_kill(), reap bwrap if it is our
 * child, remove the cgroups, free h's memory. Returns 0, or -1 with
 * error() if something could not be cleaned (h is freed anyway).
 */
int isolate_release(struct isolate_handle *h);

/* Free h's memory only; the sandbox keeps running. */
void isolate_handle_free(struct isolate_handle *h);

/*
 * Persist what another process needs to find, kill and clean the
 * sandbox: text lines "pid N", "start N", "child-pid N",
 * "child-start N", "limits N" and the cgroup_state_format() lines.
 * Appends to out.
 */
void isolate_state_format(const struct isolate_handle *h, struct strbuf *out);
/*
 * Load isolate_state_format() text into an initialised h. Returns 0
 * or -1 with error(). Unknown lines are ignored.
 */
int isolate_state_parse(struct isolate_handle *h, const char *text);

/* `gosbx doctor` checks of the local backend */
enum isolate_check_status {
	ISOLATE_CHECK_OK,
	ISOLATE_CHECK_WARN,
	ISOLATE_CHECK_FAIL
};

struct isolate_check {
	char *name; /* e.g. "bwrap", "user namespaces" */
	enum isolate_check_status status;
	char *message; /* what was found */
	char *fix;     /* how to fix it, or NULL when ok */
};

/*
 * Run the checks: bwrap present (and its version), unprivileged user
 * namespaces usable (runs `bwrap --unshare-user true`), seccomp,
 * cgroup layout and whether memory/pids/cpu limits can be applied by
 * this user, toolchains on PATH (go, python3, node with versions).
 * Returns 0 with *checks (an array of *nr entries; free with
 * isolate_checks_free()), or -1 with error().
 */
int isolate_doctor(struct isolate_check **checks, size_t *nr);
void isolate_checks_free(struct isolate_check *checks, size_t nr);

/* "ok", "warn", "fail" */
const char *isolate_check_status_name(enum isolate_check_status s);

#endif /* ISOLATE_H */

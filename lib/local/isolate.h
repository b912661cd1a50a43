#ifndef ISOLATE_H
#define ISOLATE_H

#include "compat.h"
#include "local/cgroup.h"
#include "strbuf.h"
#include "strvec.h"

/*
 * The isolation of the `local` backend (Documentation/technical/design.md
 * "Backends"): one sandbox is a bubblewrap (`bwrap`) process tree with
 *   - new user, pid, ipc, uts (hostname "gosbx") and, if possible,
 *     cgroup namespaces; a new network namespace unless networking is
 *     asked for; a new session; all capabilities dropped;
 *   - a fresh root: host /usr and /etc read-only, /bin, /lib, /lib64,
 *     /lib32, /libx32, /sbin as the host has them (symlinks stay
 *     symlinks), fresh /proc, /dev, the claim directory read-write at
 *     /app (the working directory), /tmp and HOME=/home/sandbox from
 *     the claim's storage (storage.h) or else size-limited tmpfs, the
 *     host's GOROOT read-only when it lives outside /usr (host_goroot()
 *     in isolate.c says which GOROOT is trusted); /proc/sys read-only;
 *   - Go caches in HOME (GOCACHE=/home/sandbox/.cache/go-build,
 *     GOMODCACHE=/home/sandbox/go/pkg/mod): nothing is shared with
 *     another sandbox (issue 9 finding 4);
 *   - the sandbox user is uid and gid 1000, mapped to one host uid and
 *     gid: the invoking user's own, except as root, where each sandbox
 *     gets its own unprivileged host uid and gid (uidpool.h): the child
 *     joins the cgroups as root, then drops every privilege (setgroups
 *     to none, setresgid, setresuid) before it runs bwrap, which then
 *     creates an unprivileged user namespace like for any user. bwrap
 *     resolves its bind sources as that uid, so as root they are first
 *     bound, as root, under ISOLATE_STAGE_DIR in a mount namespace of
 *     the child's own (the host never sees these mounts);
 *   - the environment of the seed's runtime image only (--clearenv),
 *     and bwrap itself (and systemd-run) runs with ISOLATE_EXEC_PATH
 *     as its whole environment: no variable of the caller is in any
 *     process of the sandbox, /proc/1/environ included;
 *   - stdin, stdout and stderr from the config (/dev/null when not
 *     given), no other descriptor of the caller;
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
/*
 * The smallest limits a sandbox starts with (bwrap, its pid 1, the local
 * backend's gosbx-runtime and one command: about 2 MiB and 6 tasks when
 * measured, doubled and more); a smaller one is refused at once, naming
 * the limit and this minimum, rather than failing in bwrap's setup.
 */
#define ISOLATE_MIN_MEMORY ((int64_t)8 << 20) /* bytes */
#define ISOLATE_MIN_PIDS 8
#define ISOLATE_TMPFS_MAX ((int64_t)1 << 30) /* bytes, default tmpfs size */
/*
 * Kernel objects the kernel counts per user, capped per sandbox in its
 * user namespace (/proc/sys/user, user_namespaces(7)): a sandbox used
 * to be able to take all of its host user's inotify instances (128 by
 * default), and the user's own programs then failed (issue 17). Its
 * counts still go to its host user as well.
 */
#define ISOLATE_INOTIFY_INSTANCES 32
#define ISOLATE_INOTIFY_WATCHES 16384
#define ISOLATE_SANDBOX_UID 1000
#define ISOLATE_HOME "/home/sandbox"
#define ISOLATE_WORKDIR "/app"
/* the sandbox's GOCACHE, and its own layer over the shared one */
#define ISOLATE_GOCACHE ISOLATE_HOME "/.cache/go-build"
#define ISOLATE_GOCACHE_UPPER ISOLATE_HOME "/.cache/.go-build-upper"
#define ISOLATE_GOCACHE_WORK ISOLATE_HOME "/.cache/.go-build-work"
/* the whole environment bwrap and systemd-run are started with */
#define ISOLATE_EXEC_PATH "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
/* as root: where the child stages bind sources (see above) */
#define ISOLATE_STAGE_DIR "/run/gosbx/stage"
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
	 * Host directory bound read-write at /home/sandbox (HOME, GOPATH
	 * and the Go caches; the claim's own, see storage.h). NULL: a
	 * tmpfs of tmpfs_bytes.
	 */
	const char *home_dir;
	/* host directory bound read-write at /tmp; NULL: a tmpfs */
	const char *tmp_dir;
	/*
	 * Size of each tmpfs above (bwrap --size), bytes; 0: half the
	 * memory limit, at most ISOLATE_TMPFS_MAX. A full tmpfs gives
	 * ENOSPC to the writer instead of taking the whole memory limit.
	 */
	int64_t tmpfs_bytes;
	/*
	 * A default limit the caller could not apply (e.g. "no disk
	 * quota (...)"): joins the one warning about skipped defaults.
	 */
	const char *default_skipped;
	/* extra read-only binds, each "HOST" or "HOST:SANDBOX" (absolute) */
	struct strvec ro_binds;
	/* extra read-write binds, "HOST:SANDBOX" (absolute paths) */
	struct strvec rw_binds;
	/* allow network (share the host's network namespace) */
	int network;
	/*
	 * With network 0: make the sockets of netd.h in the sandbox's own
	 * network namespace, before the command runs (a TCP socket
	 * listening on 127.0.0.1:NETD_PORT, a UDP socket bound to
	 * 127.0.0.1:53), for isolate_handle.net_fds, and give the sandbox
	 * the environment that names them (HTTP_PROXY and the rest,
	 * GOPROXY when modules is 1; netd.h). resolv_conf: a host file
	 * bound read-only at /etc/resolv.conf ("nameserver 127.0.0.1"),
	 * or NULL.
	 */
	int net_proxy;
	int modules;
	const char *resolv_conf;
	/*
	 * The Go of the sandbox: a go binary or a GOROOT (--go); NULL:
	 * the `go` on PATH (isolate.c, host_goroot())
	 */
	const char *go;
	/*
	 * The standard library's build cache of that Go (gostd.h), or
	 * NULL: bound read-only at GOSTD_SANDBOX_DIR and mounted, before
	 * the command runs, as the lower layer of an overlay on
	 * ISOLATE_HOME/.cache/go-build whose upper layer is
	 * ISOLATE_GOCACHE_UPPER (with ISOLATE_GOCACHE_WORK) in HOME:
	 * home_dir must hold those three directories, writable by the
	 * sandbox. A failed overlay leaves a plain cache, with a warning.
	 */
	const char *gocache_lower;
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
	/*
	 * Descriptors for the sandbox's stdin/stdout/stderr; -1:
	 * /dev/null. Nothing else of the caller's reaches the sandbox.
	 */
	int stdin_fd, stdout_fd, stderr_fd;
	/*
	 * The host uid and gid the sandbox user (1000) maps to. As a
	 * normal user always the caller's own. As root,
	 * isolate_reserve_ids() picks them; isolate_spawn() reserves
	 * a pair itself if the caller did not. Set by
	 * isolate_config_init() to the caller's ids.
	 */
	uid_t host_uid;
	gid_t host_gid;
	int ids_reserved; /* host_uid is a reservation of uidpool.h */
	/*
	 * Descriptors the command inherits under the same numbers (e.g. a
	 * listening socket handed to gosbx-runtime); bwrap passes them on
	 * and closes them in its own processes. Every other descriptor of
	 * ours is closed. At most ISOLATE_MAX_PASS_FDS.
	 */
	int pass_fds[ISOLATE_MAX_PASS_FDS];
	int nr_pass_fds;
	/*
	 * Where bwrap writes the command's end, or -1: bwrap's
	 * --json-status-fd, a line `{ "exit-code": N }` (128+N for
	 * signal N) when the command ends. Only bwrap's monitor outside
	 * the sandbox holds it, so the record outlives whoever spawned
	 * the sandbox and code inside cannot forge it.
	 */
	int status_fd;
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
/*
 * Free cfg's memory and give back a uid reserved with
 * isolate_reserve_ids() that no sandbox took (a start that failed or
 * never happened); a started sandbox keeps its uid until
 * isolate_destroy().
 */
void isolate_config_release(struct isolate_config *cfg);

/*
 * As root: reserve a free per-sandbox host uid and gid (uidpool.h) and
 * set cfg->host_uid/host_gid; the caller then gives the sandbox what
 * it must write (isolate_chown_tree()) and calls isolate_spawn(). As
 * another user: nothing to do (the ids are the caller's). Returns 0,
 * or -1 with error("cannot create sandbox: uid: ...").
 */
int isolate_reserve_ids(struct isolate_config *cfg);
/*
 * The same for the host uid uid only (a suspended claim resumed as
 * the uid that owns its files): 0, or -1 with error() when that uid is
 * taken meanwhile (the caller may reserve another and give the files
 * to it). Nothing to do as another user.
 */
int isolate_reserve_ids_as(struct isolate_config *cfg, uid_t uid);

/*
 * Give the tree at path (a directory or a file, not followed when it
 * is a symlink) to cfg->host_uid and host_gid, so that the sandbox
 * can write it: lchown(2) of every entry, not crossing mount points,
 * the top last (its owner tells that a walk finished).
 * Call it before the sandbox starts, on a tree no untrusted code can
 * change meanwhile. Nothing to do when the ids are the caller's own
 * (not root). Returns 0, or -1 with error() naming the entry.
 */
int isolate_chown_tree(const struct isolate_config *cfg, const char *path);

/*
 * The go binary a sandbox of cfg would get (want: --go, a go binary or
 * a GOROOT; NULL: the `go` on PATH): <GOROOT>/bin/go of the GOROOT that
 * isolate binds (the same checks), into out. Returns 1, 0 when there
 * is no go, -1 with the reason in why.
 */
int isolate_host_go(const char *want, struct strbuf *out, struct strbuf *why);

/*
 * The bubblewrap sandboxes would run with (GOSBX_BWRAP, else `bwrap` on
 * PATH): its path into path and the first line of `bwrap --version`
 * ("bubblewrap 0.8.0") into version (both reset first). Returns 1, 0
 * when there is none (both empty), -1 when `--version` failed (path
 * set). Prints nothing.
 */
int isolate_bwrap_version(struct strbuf *path, struct strbuf *version);

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
	uid_t host_uid;	  /* host ids of the sandbox user (uid 1000) */
	gid_t host_gid;
	int reaped; /* isolate_wait() collected the status */
	int status; /* wait status once reaped */
	/*
	 * With cfg->net_proxy: the TCP listening socket and the UDP
	 * socket made in the sandbox's network namespace (close-on-exec),
	 * the caller's to hand to netd and close; else -1. Not part of
	 * isolate_state_format().
	 */
	int net_fds[2];
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
 * free with isolate_destroy() or isolate_handle_free().
 */
int isolate_spawn(const struct isolate_config *cfg, struct isolate_handle *h);

/*
 * Could isolate_spawn() apply every limit of cfg (memory_bytes, pids,
 * cpus), the defaults as if they were explicit? Reads the host's
 * cgroups, changes nothing. Returns 0, or -1 with error("cannot create
 * sandbox: <why>; use --memory=0 to run without a memory limit") for
 * the first one that cannot be applied.
 */
int isolate_limits_check(const struct isolate_config *cfg);

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
 * child, remove the cgroups, give back its host uid (as root), free
 * h's memory. Returns 0, or -1 with error() if something could not be
 * cleaned (h is freed anyway).
 */
int isolate_destroy(struct isolate_handle *h);

/* Free h's memory only; the sandbox keeps running. */
void isolate_handle_free(struct isolate_handle *h);

/*
 * Persist what another process needs to find, kill and clean the
 * sandbox: text lines "pid N", "start N", "child-pid N",
 * "child-start N", "limits N", "host-uid N", "host-gid N" and the
 * cgroup_state_format() lines.
 * Appends to out.
 */
void isolate_state_format(const struct isolate_handle *h, struct strbuf *out);
/*
 * Load isolate_state_format() text into an initialised h. Returns 0
 * or -1 with error(). Unknown lines are ignored.
 */
int isolate_state_parse(struct isolate_handle *h, const char *text);

struct doctor_check; /* session/doctor.h */

/*
 * Run the checks: bwrap present (and its version), unprivileged user
 * namespaces usable (runs `bwrap --unshare-user true`), seccomp,
 * cgroup layout and whether memory/pids/cpu limits can be applied by
 * this user, toolchains on PATH (go, python3, node with versions).
 * Returns 0 with *checks (an array of *nr entries; free with
 * doctor_checks_free()), or -1 with error().
 */
int isolate_doctor(struct doctor_check **checks, size_t *nr);

#endif /* ISOLATE_H */

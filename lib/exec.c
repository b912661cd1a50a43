#include "compat.h"
#include "exec.h"
#include "usage.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>

/*
 * How the pieces fit:
 *
 * - Every command runs below a "shim": a process that makes itself a
 *   child subreaper (PR_SET_CHILD_SUBREAPER), closes every descriptor
 *   but the few it needs, and forks and execs `/bin/sh -c` in a new
 *   process group, with default signal dispositions and an empty mask.
 *   Whatever the command starts stays below the shim, even a process
 *   that calls setsid() and forks twice: an orphan goes to its nearest
 *   subreaper ancestor, the shim. So the shim can always find the
 *   command's processes (a walk of /proc by parent pid) and kill all
 *   of them, and when it reaps them their CPU time adds up in its
 *   RUSAGE_CHILDREN: nothing the command did escapes the count.
 * - Who forks the shim: a "spawner" (exec_spawner_start()), a small
 *   single-threaded copy of this process made at startup, which gets
 *   each request over a SOCK_SEQPACKET socket (a memfd with the
 *   command, directory and environment, and the pipes, passed with
 *   SCM_RIGHTS). Forking a large multi-threaded server for every
 *   command would cost page-table copies and copy-on-write faults
 *   across all its threads (measured: tens to hundreds of ms under
 *   load); forking the small spawner does not. Without a spawner (the
 *   gosbx client running a kubeconfig exec plugin, tests) exec_start()
 *   forks the shim itself. The shim code is the same either way and
 *   uses system calls only (no malloc: the process that forked it may
 *   have threads).
 * - The shim reports on a pipe (struct shim_msg, one atomic write
 *   each): the shell's pid once it runs (or why it could not start),
 *   then, whenever it reaped something, the CPU time and peak RSS of
 *   everything reaped so far, the shell's wait status once the shell
 *   ended, and "empty" when no process of the command is left (then
 *   it exits). We ask it to kill the whole tree by writing 'k' on a
 *   second pipe; EOF there (we died) means the same.
 * - Shims and the spawner are forks without exec, so they keep this
 *   process's non-dumpable flag (gosbx-runtime sets PR_SET_DUMPABLE
 *   0): code of the same uid cannot read their descriptors or memory
 *   through /proc. It can kill them, though (same uid). What a killed
 *   shim ran is re-parented to the spawner (a subreaper too), which
 *   kills every child of its own that is not a shim; what a killed
 *   spawner had goes to us, and exec_kill_strays() kills every child
 *   of ours that is neither a shim, nor the spawner (started again on
 *   the next command), nor started under exec_reaper_hold().
 * - A command on a pseudo-terminal (request tty): we open the master
 *   (posix_openpt) and name the slave in the request; the shim's child
 *   calls setsid() instead of setpgid() and opens the slave (without
 *   O_NOCTTY: it becomes the new session's controlling terminal) as its
 *   fds 0, 1 and 2. A session leader's process group is its pid too,
 *   so the group kill and the shim's tree kill work the same way. The
 *   master is the output pipe (and, with stdin_stream, the stdin).
 * - exec_step() is one poll() round over the two output pipes (unless
 *   paused), the stdin pipe while bytes remain, the shim's report
 *   pipe, the caller's cancel_fd (POLLRDHUP only, so plain readable
 *   data never wakes us up) and the caller's poll_extra descriptors.
 * - Once the command was killed (timeout, cancel, output limit) we
 *   wait for the shim's "empty" (so that the CPU time of what was
 *   killed is counted) and drain what is already in the pipes; a
 *   stray that holds the pipes (its shim was killed) only delays the
 *   end by EXEC_DRAIN_QUIET_MS without data, EXEC_DRAIN_MAX_MS at most.
 * - When the command ends normally while processes it started still
 *   run (a daemon that closed its output), the shim stays with them
 *   ("lingering") until they end; exec_kill_all() ends them too.
 * - A registry of running commands (one mutex) backs exec_kill_all(),
 *   exec_running_count(), exec_reap_orphans() and exec_kill_strays().
 *   Forking holds a read lock on `reaper_lock` until the new child is
 *   known, and the reaper and the stray killer take it for writing,
 *   so they never see a child of ours that is not yet known.
 */

#define EXEC_CHUNK (256 * 1024)
#define EXEC_DEFAULT_CAP ((size_t)8388608)
#define EXEC_DRAIN_QUIET_MS 50
#define EXEC_DRAIN_MAX_MS 2000
#define EXEC_ORPHAN_PIPES_POLL_MS 100
/* after a normal end with processes left: time for the shim's last count */
#define EXEC_SETTLE_MS 10
/* a shim that said "empty" is gone within this (else: lingering list) */
#define EXEC_SHIM_EXIT_MS 1000
/* the shim re-scans and kills this often until nothing is left */
#define SHIM_KILL_ROUND_MS 10
#define SHELL_PATH "/bin/sh"
/* poll_extra descriptors looked at (exec.h) */
#define EXEC_MAX_EXTRA 8
/* PID_MAX_LIMIT of 64-bit Linux: pids are below it */
#define SHIM_PID_LIMIT (1u << 22)

/* What the shim tells us; one write(2) each (below PIPE_BUF: atomic). */
enum shim_kind {
	SHIM_STARTED = 1,  /* value: the shell's pid; aux: the shim's */
	SHIM_START_FAILED, /* value: an errno; aux: enum shim_stage */
	SHIM_STATUS,	   /* flags below; value: wait status if exited */
};
enum shim_stage {
	SHIM_STAGE_REQUEST = 1, /* a malformed request */
	SHIM_STAGE_SUBREAPER,
	SHIM_STAGE_FORK,
	SHIM_STAGE_CHDIR,
	SHIM_STAGE_FDS,
	SHIM_STAGE_EXEC,
	SHIM_STAGE_TTY, /* opening the terminal (request tty) */
};
#define SHIM_SHELL_EXITED 1u /* the shell was reaped now */
#define SHIM_EMPTY 2u	     /* nothing of the command is left */

struct shim_msg {
	int32_t kind;
	int32_t value;
	uint32_t flags;
	int32_t aux;
	int64_t cpu_us;	   /* user + system of everything reaped */
	int64_t maxrss_kb; /* the largest peak RSS among them */
};

/*
 * A request for a shim, in a memfd: this header, then the strings:
 * command NUL [cwd NUL] [tty NUL] nargv * (arg NUL) nenv * (K=V NUL);
 * with nargv > 0 the first string is the exec_path to execve() with
 * those arguments, else the sh -c text.
 */
#define SPAWN_MAGIC 0x67736278u /* "gsbx" */
struct spawn_hdr {
	uint32_t magic;
	uint32_t nenv;	  /* environment strings */
	uint32_t has_cwd; /* a directory follows the command */
	uint32_t has_tty; /* a terminal's path follows (request tty) */
	uint32_t nargv;	  /* argument strings: no shell (request argv) */
	uint32_t pad;
	uint64_t size; /* bytes after the header */
};

/* What a shim gets, as descriptors (sent to the spawner as such). */
struct shim_fds {
	int req;	  /* the memfd holding the request */
	int st, ctl;	  /* its ends of the report and kill pipes */
	int in, out, err; /* the command's stdio (in -1: /dev/null) */
			  /* (with a tty: out and err unused, /dev/null) */
};

struct exec_proc {
	const struct exec_request *req;
	pid_t pid;	    /* the shell == the pgid; -1 if never started */
	pid_t shim;	    /* the shim; -1 if none */
	int direct;	    /* the shim is our child (no spawner) */
	int fd_st;	    /* the shim's reports; -1 at EOF */
	int fd_ctl;	    /* write 'k': kill the command's processes */
	int fd_out, fd_err; /* our read ends, -1 once at EOF or closed */
	int fd_in;	    /* our write end of stdin, -1 when closed */
	int fd_stdin;	    /* stdin_stream: the caller's write end, or -1 */
	int fd_tty;	    /* tty: a dup of the master for the caller, or -1 */
	int out_paused;	    /* exec_pause_output() */
	size_t in_off;	    /* bytes of stdin_data written */
	int watch_cancel;   /* cancel_fd is still watched */
	int cb_off;	    /* on_output asked to stop */
	size_t cap;	    /* stream cap in bytes */
	uint64_t start_us, deadline_us; /* deadline 0: no timeout */
	int draining;			/* after a kill: bounded drain */
	uint64_t drain_quiet_us, drain_end_us;
	int shim_killed; /* gave up waiting: SIGKILLed the shim */
	int settled;	 /* looked for a last report after the end */
	int status;	 /* the shell's wait status */
	int lost_status; /* the shim died before telling it */
	int64_t cpu_us, maxrss_kb;
	uint64_t reaped_us;
	int empty;		 /* the shim said nothing is left */
	int reaped;		 /* atomic: the shell's end is known */
	int shim_reaped;	 /* atomic: we waited for the shim */
	int done;		 /* atomic: ended and both pipes closed */
	const char *kill_reason; /* atomic: set once, when we kill */
	char *buf;		 /* EXEC_CHUNK read buffer */
	char tty_name[64];	 /* tty: the slave's path */
	struct exec_result res;
	/* registry links, under reg_lock */
	struct exec_proc *reg_next, **reg_pprev;
};

/* A shim whose command ended while processes of it still run. */
struct lingering_shim {
	pid_t shim;
	int ctl;    /* our end of its kill pipe */
	int st;	    /* its reports (EOF: it exited) */
	int direct; /* our child, else the spawner's */
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct exec_proc *reg_head;
static int reg_count;
static struct lingering_shim *lingering; /* under reg_lock */
static size_t nr_lingering, alloc_lingering;
static pthread_rwlock_t reaper_lock = PTHREAD_RWLOCK_INITIALIZER;
/* spawns hold it shared; exec_umask_hold() exclusive */
static pthread_rwlock_t umask_lock = PTHREAD_RWLOCK_INITIALIZER;
/* the spawner: our end of its socket, its pid; under spawner_lock */
static pthread_mutex_t spawner_lock = PTHREAD_MUTEX_INITIALIZER;
static int spawner_fd = -1;
static pid_t spawner_pid = -1; /* atomic */
static int spawner_on;	       /* exec_spawner_start() was called */

extern char **environ;

static inline int load_int(const int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void store_int(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

void exec_request_init(struct exec_request *req)
{
	memset(req, 0, sizeof(*req));
	req->cancel_fd = -1;
}

void exec_result_init(struct exec_result *res)
{
	memset(res, 0, sizeof(*res));
	res->exit_code = -1;
	strbuf_init(&res->out, 0);
	strbuf_init(&res->err, 0);
}

void exec_result_release(struct exec_result *res)
{
	strbuf_release(&res->out);
	strbuf_release(&res->err);
	free(res->held_output);
	exec_result_init(res);
}

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

static void reg_add(struct exec_proc *p)
{
	pthread_mutex_lock(&reg_lock);
	p->reg_next = reg_head;
	if (reg_head)
		reg_head->reg_pprev = &p->reg_next;
	reg_head = p;
	p->reg_pprev = &reg_head;
	reg_count++;
	pthread_mutex_unlock(&reg_lock);
}

/* Under reg_lock. */
static void reg_unlink(struct exec_proc *p)
{
	if (!p->reg_pprev)
		return;
	*p->reg_pprev = p->reg_next;
	if (p->reg_next)
		p->reg_next->reg_pprev = p->reg_pprev;
	p->reg_next = NULL;
	p->reg_pprev = NULL;
	reg_count--;
}

/*
 * Leave the registry; a shim that still runs (processes of the command
 * live on) goes to the lingering list in the same step, so that the
 * stray killer never sees it in neither.
 */
static void reg_del(struct exec_proc *p, int linger)
{
	pthread_mutex_lock(&reg_lock);
	reg_unlink(p);
	if (linger) {
		ALLOC_GROW(lingering, nr_lingering + 1, alloc_lingering);
		lingering[nr_lingering].shim = p->shim;
		lingering[nr_lingering].ctl = p->fd_ctl;
		lingering[nr_lingering].st = p->fd_st;
		lingering[nr_lingering].direct = p->direct;
		nr_lingering++;
		p->fd_ctl = -1;
		p->fd_st = -1;
	}
	pthread_mutex_unlock(&reg_lock);
}

/* Under reg_lock: is pid a shim we still have to reap? */
static int reg_owns(pid_t pid)
{
	struct exec_proc *p;

	for (p = reg_head; p; p = p->reg_next)
		if (p->direct && p->shim == pid && !load_int(&p->shim_reaped))
			return 1;
	return 0;
}

/* Under reg_lock: the index of a lingering shim that is our child. */
static int linger_find(pid_t pid)
{
	for (size_t i = 0; i < nr_lingering; i++)
		if (lingering[i].direct && lingering[i].shim == pid)
			return (int)i;
	return -1;
}

/* Under reg_lock. */
static void linger_drop(size_t i)
{
	close(lingering[i].ctl);
	if (lingering[i].st >= 0)
		close(lingering[i].st);
	lingering[i] = lingering[--nr_lingering];
}

/* A lingering shim (our child) was reaped: forget it. */
static void linger_forget(pid_t pid)
{
	int i;

	pthread_mutex_lock(&reg_lock);
	i = linger_find(pid);
	if (i >= 0)
		linger_drop((size_t)i);
	pthread_mutex_unlock(&reg_lock);
}

/* Forget the lingering shims that exited (EOF on their reports). */
static void linger_sweep(void)
{
	char buf[256];

	pthread_mutex_lock(&reg_lock);
	for (size_t i = 0; i < nr_lingering;) {
		struct pollfd pfd = { lingering[i].st, POLLIN, 0 };

		if (!lingering[i].direct && poll(&pfd, 1, 0) > 0 &&
		    read(lingering[i].st, buf, sizeof(buf)) == 0) {
			linger_drop(i);
			continue;
		}
		i++;
	}
	pthread_mutex_unlock(&reg_lock);
}

/* Ask a shim to kill every process of its command (any thread). */
static void shim_ask_kill(pid_t shim, int ctl)
{
	ssize_t w;

	if (ctl >= 0)
		w = write(ctl, "k", 1); /* non-blocking; one byte is enough */
	(void)w;
	/* in case code of the sandbox stopped it */
	if (shim > 0)
		kill(shim, SIGCONT);
}

/*
 * The command could not start: what failed (or NULL: the stage the
 * shim reported) and the errno.
 */
static void start_failed_at(struct exec_proc *p, const char *what, int stage,
			    int err)
{
	strbuf_reset(&p->res.err);
	if (what)
		strbuf_addf(&p->res.err, "cannot run command: %s: %s", what,
			    strerror(err));
	else if (stage == SHIM_STAGE_CHDIR)
		strbuf_addf(&p->res.err, "cannot run command: chdir '%s': %s",
			    p->req->cwd ? p->req->cwd : ".", strerror(err));
	else if (stage == SHIM_STAGE_EXEC)
		strbuf_addf(&p->res.err, "cannot run command: '%s': %s",
			    p->req->argv ? p->req->exec_path : SHELL_PATH,
			    strerror(err));
	else if (stage == SHIM_STAGE_TTY)
		strbuf_addf(&p->res.err,
			    "cannot run command: terminal '%s': %s",
			    p->tty_name, strerror(err));
	else
		strbuf_addf(&p->res.err, "cannot run command: %s: %s",
			    stage == SHIM_STAGE_FORK  ? "fork"
			    : stage == SHIM_STAGE_FDS ? "redirecting stdio"
			    : stage == SHIM_STAGE_SUBREAPER ? "prctl"
							    : "shim",
			    strerror(err));
	p->res.err_total = p->res.err.len;
	p->res.exit_code = -1;
	p->res.reason = "start_failed";
	p->res.start_errno = err;
	p->res.duration_ms = (int64_t)((monotonic_us() - p->start_us) / 1000);
	p->pid = -1;
	store_int(&p->reaped, 1);
	store_int(&p->done, 1);
}

static void start_failed(struct exec_proc *p, const char *what, int err)
{
	start_failed_at(p, what, 0, err);
}

/* --- the shim (a forked child; one thread, no malloc) ------------- */

static void shim_send(int fd, int kind, int value, unsigned flags, int aux)
{
	struct shim_msg m;
	struct rusage ru;

	memset(&m, 0, sizeof(m));
	m.kind = kind;
	m.value = value;
	m.flags = flags;
	m.aux = aux;
	if (!getrusage(RUSAGE_CHILDREN, &ru)) {
		m.cpu_us = (int64_t)ru.ru_utime.tv_sec * 1000000 +
			   ru.ru_utime.tv_usec +
			   (int64_t)ru.ru_stime.tv_sec * 1000000 +
			   ru.ru_stime.tv_usec;
		m.maxrss_kb = ru.ru_maxrss;
	}
	/* EPIPE once the command is no longer ours to report on */
	while (write(fd, &m, sizeof(m)) < 0 && errno == EINTR)
		;
}

static void shim_close_range(unsigned lo, unsigned hi)
{
	struct rlimit rl;
	unsigned max = 65536, fd;

	if (lo > hi || !syscall(SYS_close_range, lo, hi, 0))
		return;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < max)
		max = (unsigned)rl.rlim_cur;
	for (fd = lo; fd <= hi && fd < max; fd++)
		close((int)fd);
}

/* Close every descriptor from 3 up but those in keep (-1s ignored). */
static void shim_close_fds(int *keep, int n)
{
	unsigned lo = 3;
	int i, j;

	for (i = 1; i < n; i++) /* insertion sort */
		for (j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		if (keep[i] < (int)lo)
			continue;
		if ((unsigned)keep[i] > lo)
			shim_close_range(lo, (unsigned)keep[i] - 1);
		lo = (unsigned)keep[i] + 1;
	}
	shim_close_range(lo, ~0U);
}

/* The decimal digits of v at p, NUL-terminated; returns the NUL's place. */
static char *put_uint(char *p, unsigned v)
{
	char digits[16];
	int n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && n < (int)sizeof(digits));
	while (n)
		*p++ = digits[--n];
	*p = '\0';
	return p;
}

/* "/proc/<pid>/stat" into buf (at least 32 bytes) without stdio */
static void shim_stat_path(char *buf, pid_t pid)
{
	memcpy(put_uint(stpcpy(buf, "/proc/"), (unsigned)pid), "/stat", 6);
}

/* The parent of pid from /proc/<pid>/stat, or -1 if it is gone. */
static pid_t shim_ppid(pid_t pid)
{
	char path[40], buf[256];
	const char *p;
	ssize_t n;
	long v = 0;
	int fd;

	shim_stat_path(path, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) S ppid ...": comm may hold anything but is short */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -1;
	for (p += 4; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (*p - '0');
	return v > 0 && v < (long)SHIM_PID_LIMIT ? (pid_t)v : -1;
}

struct shim_proc {
	pid_t pid, ppid;
};

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/*
 * Every process in /proc with its parent, into an mmap'd array (*v of
 * *alloc entries, grown here). Returns the count.
 */
static size_t shim_scan(struct shim_proc **v, size_t *alloc)
{
	char dents[8192];
	size_t n = 0;
	int dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return 0;
	for (;;) {
		long got = syscall(SYS_getdents64, dfd, dents, sizeof(dents));
		long off = 0;

		if (got <= 0)
			break;
		while (off < got) {
			struct linux_dirent64 *d = (void *)(dents + off);
			const char *s = d->d_name;
			long pid = 0;

			off += d->d_reclen;
			for (; *s >= '0' && *s <= '9'; s++)
				pid = pid * 10 + (*s - '0');
			if (*s || pid <= 0 || pid >= (long)SHIM_PID_LIMIT)
				continue;
			if (n == *alloc) {
				size_t na = *alloc ? *alloc * 2 : 4096;
				void *nv =
					*v ? mremap(*v, *alloc * sizeof(**v),
						    na * sizeof(**v),
						    MREMAP_MAYMOVE)
					   : mmap(NULL, na * sizeof(**v),
						  PROT_READ | PROT_WRITE,
						  MAP_PRIVATE | MAP_ANONYMOUS,
						  -1, 0);
				if (nv == MAP_FAILED)
					goto out;
				*v = nv;
				*alloc = na;
			}
			(*v)[n].pid = (pid_t)pid;
			(*v)[n].ppid = shim_ppid((pid_t)pid);
			n++;
		}
	}
out:
	close(dfd);
	return n;
}

#define MARKED(bits, pid) ((bits)[(unsigned)(pid) >> 3] & (1u << ((pid)&7)))
#define MARK(bits, pid) ((bits)[(unsigned)(pid) >> 3] |= (1u << ((pid)&7)))

/*
 * SIGKILL every descendant of ours. A direct child cannot be another
 * process (we are its only reaper); a deeper one is opened as a pidfd
 * first and its parent read again, so a pid reused meanwhile by a
 * process outside the tree is never signalled.
 */
static void shim_kill_tree(struct shim_proc **v, size_t *alloc)
{
	pid_t self = getpid();
	size_t n = shim_scan(v, alloc), i;
	unsigned char *bits;
	int changed = 1;

	if (!n)
		return;
	bits = mmap(NULL, SHIM_PID_LIMIT / 8, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (bits == MAP_FAILED)
		return;
	/* /proc lists pids in ascending order: one pass mostly does */
	while (changed) {
		changed = 0;
		for (i = 0; i < n; i++) {
			struct shim_proc *e = &(*v)[i];

			if (e->ppid <= 0 || MARKED(bits, e->pid))
				continue;
			if (e->ppid == self || MARKED(bits, e->ppid)) {
				MARK(bits, e->pid);
				changed = 1;
			}
		}
	}
	for (i = 0; i < n; i++) {
		struct shim_proc *e = &(*v)[i];
		pid_t ppid;
		int fd;

		if (!MARKED(bits, e->pid))
			continue;
		if (e->ppid == self) {
			kill(e->pid, SIGKILL);
			continue;
		}
		fd = (int)syscall(SYS_pidfd_open, e->pid, 0);
		if (fd < 0) {
			if (errno == ENOSYS)
				kill(e->pid, SIGKILL);
			continue;
		}
		ppid = shim_ppid(e->pid);
		if (ppid > 0 && (ppid == self || MARKED(bits, ppid)))
			syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
		close(fd);
	}
	munmap(bits, SHIM_PID_LIMIT / 8);
}

/*
 * The request in the memfd: argv and envp pointer arrays (mmap'd)
 * into the mapped strings. Returns 0, or -1 if it is malformed.
 */
struct shim_req {
	const char *path; /* what to execve(): the shell, or exec_path */
	char **argv, **envp;
	const char *cwd; /* NULL: stay where we are */
	const char *tty; /* NULL: no terminal (shim_fds' stdio) */
};

static int shim_load(int fd, struct shim_req *r)
{
	const struct spawn_hdr *h;
	struct stat st;
	char *base, *p, *end, **ptrs;
	size_t nptr, nargs;

	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(*h))
		return -1;
	base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (base == MAP_FAILED)
		return -1;
	h = (const void *)base;
	if (h->magic != SPAWN_MAGIC ||
	    h->size != (uint64_t)st.st_size - sizeof(*h) || !h->size ||
	    base[st.st_size - 1] || h->nenv > (1u << 20) ||
	    h->nargv > (1u << 20))
		return -1;
	/* the arguments: sh -c <command> NULL, or nargv of them and NULL */
	nargs = h->nargv ? h->nargv + 1 : 4;
	nptr = nargs + h->nenv + 1;
	ptrs = mmap(NULL, nptr * sizeof(*ptrs), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ptrs == MAP_FAILED)
		return -1;
	p = base + sizeof(*h);
	end = base + st.st_size;
	if (h->nargv) {
		r->path = p;
	} else {
		r->path = SHELL_PATH;
		ptrs[0] = (char *)"sh";
		ptrs[1] = (char *)"-c";
		ptrs[2] = p;
		ptrs[3] = NULL;
	}
	p += strlen(p) + 1;
	r->cwd = NULL;
	if (h->has_cwd) {
		if (p >= end)
			return -1;
		r->cwd = p;
		p += strlen(p) + 1;
	}
	r->tty = NULL;
	if (h->has_tty) {
		if (p >= end || !*p)
			return -1;
		r->tty = p;
		p += strlen(p) + 1;
	}
	for (uint32_t i = 0; i < h->nargv; i++) {
		if (p >= end)
			return -1;
		ptrs[i] = p;
		p += strlen(p) + 1;
	}
	if (h->nargv)
		ptrs[h->nargv] = NULL;
	for (uint32_t i = 0; i < h->nenv; i++) {
		if (p >= end)
			return -1;
		ptrs[nargs + i] = p;
		p += strlen(p) + 1;
	}
	ptrs[nargs + h->nenv] = NULL;
	r->argv = ptrs;
	r->envp = ptrs + nargs;
	return 0;
}

/*
 * Start the shell: vfork (no copy of the page tables: the shim waits
 * until the child has exec'd), then in the child a process group of
 * its own (with a terminal: a session of its own, the terminal its
 * controlling tty and its stdio), the directory, stdio, default
 * signals and exec, system calls only. Returns its pid, or -1 with
 * *stage and *err set.
 */
static pid_t shim_spawn(const struct shim_req *r, const struct shim_fds *f,
			int *stage, int *err)
{
	int ep[2], e[2];
	ssize_t n;
	pid_t pid;

	if (pipe2(ep, O_CLOEXEC)) {
		*stage = SHIM_STAGE_FORK;
		*err = errno;
		return -1;
	}
	pid = vfork();
	if (!pid) {
		struct sigaction sa;
		sigset_t none;
		int fd, sig;

		close(ep[0]);
		e[0] = SHIM_STAGE_TTY;
		if (r->tty) {
			/*
			 * A new session, then the terminal opened without
			 * O_NOCTTY: it becomes the controlling terminal.
			 */
			if (setsid() < 0)
				goto fail;
			fd = open(r->tty, O_RDWR);
			if (fd < 0)
				goto fail;
			if (dup2(fd, 0) < 0 || dup2(fd, 1) < 0 ||
			    dup2(fd, 2) < 0)
				goto fail;
			if (fd > 2)
				close(fd);
		} else {
			setpgid(0, 0);
		}
		e[0] = SHIM_STAGE_CHDIR;
		if (r->cwd && chdir(r->cwd))
			goto fail;
		e[0] = SHIM_STAGE_FDS;
		if (!r->tty) {
			fd = f->in >= 0
				     ? f->in
				     : open("/dev/null", O_RDONLY | O_CLOEXEC);
			if (fd < 0 || dup2(fd, 0) < 0 || dup2(f->out, 1) < 0 ||
			    dup2(f->err, 2) < 0)
				goto fail;
		}
		/* every signal back to SIG_DFL (SIGPIPE above all) */
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		for (sig = 1; sig < NSIG; sig++)
			sigaction(sig, &sa, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		e[0] = SHIM_STAGE_EXEC;
		execve(r->path, r->argv, r->envp);
	fail:
		e[1] = errno;
		n = write(ep[1], e, sizeof(e));
		(void)n;
		_exit(127);
	}
	close(ep[1]);
	if (pid < 0) {
		close(ep[0]);
		*stage = SHIM_STAGE_FORK;
		*err = errno;
		return -1;
	}
	if (!r->tty) /* (a session leader is its own group already) */
		setpgid(pid, pid); /* (the child did it, too) */
	do {
		n = read(ep[0], e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(ep[0]);
	if (n == sizeof(e)) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		*stage = e[0];
		*err = e[1];
		return -1;
	}
	return pid;
}

static const int shim_ignored[] = { SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,
				    SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU,
				    SIGUSR1, SIGUSR2, SIGALRM };

/* Signals of a shim or the spawner: the usual ones ignored, SIGCHLD
 * blocked (for a signalfd) at its default disposition. */
static void shim_signals(sigset_t *chld)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	for (size_t i = 0; i < ARRAY_SIZE(shim_ignored); i++)
		sigaction(shim_ignored[i], &sa, NULL);
	sa.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(chld);
	sigaddset(chld, SIGCHLD);
	sigprocmask(SIG_SETMASK, chld, NULL);
}

/*
 * The shim: subreaper, starter and reaper of one command. Only system
 * calls and async-signal-safe functions (the process it was forked
 * from may have other threads). Never returns.
 */
static NORETURN void shim_main(const struct shim_fds *f)
{
	struct shim_proc *procs = NULL;
	struct shim_req req;
	size_t alloc = 0;
	sigset_t chld;
	pid_t shell;
	int keep[6], nkeep = 0, sfd, ctl = f->ctl, killing = 0;
	int shell_status = 0, shell_reaped = 0, stage = 0, err = 0;

	shim_signals(&chld);
	keep[nkeep++] = f->req;
	keep[nkeep++] = f->st;
	keep[nkeep++] = f->ctl;
	keep[nkeep++] = f->out;
	keep[nkeep++] = f->err;
	if (f->in >= 0)
		keep[nkeep++] = f->in;
	shim_close_fds(keep, nkeep);

	if (shim_load(f->req, &req)) {
		shim_send(f->st, SHIM_START_FAILED, EINVAL, 0,
			  SHIM_STAGE_REQUEST);
		_exit(0);
	}
	close(f->req);
	/* without it the command's orphans would escape: fail closed */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) {
		shim_send(f->st, SHIM_START_FAILED, errno, 0,
			  SHIM_STAGE_SUBREAPER);
		_exit(0);
	}
	sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	shell = shim_spawn(&req, f, &stage, &err);
	if (shell < 0) {
		shim_send(f->st, SHIM_START_FAILED, err, 0, stage);
		_exit(0);
	}
	shim_send(f->st, SHIM_STARTED, shell, 0, getpid());
	close(f->out);
	close(f->err);
	if (f->in >= 0)
		close(f->in);

	for (;;) {
		struct pollfd pfd[2];
		unsigned flags = 0;
		int nfd = 0, any = 0, status;
		pid_t r;

		while ((r = waitpid(-1, &status, WNOHANG)) > 0) {
			any = 1;
			if (r == shell) {
				shell_status = status;
				shell_reaped = 1;
				flags |= SHIM_SHELL_EXITED;
			}
		}
		if (r < 0 && errno == ECHILD)
			flags |= SHIM_EMPTY;
		if (any || flags)
			shim_send(f->st, SHIM_STATUS,
				  shell_reaped ? shell_status : 0, flags, 0);
		if (flags & SHIM_EMPTY)
			_exit(0);
		if (killing) {
			/* the group first: it is most of the tree, at once */
			if (!shell_reaped)
				kill(-shell, SIGKILL);
			shim_kill_tree(&procs, &alloc);
		}

		if (sfd >= 0) {
			pfd[nfd].fd = sfd;
			pfd[nfd++].events = POLLIN;
		}
		if (ctl >= 0) {
			pfd[nfd].fd = ctl;
			pfd[nfd++].events = POLLIN;
		}
		if (poll(pfd, (nfds_t)nfd,
			 killing || sfd < 0 ? SHIM_KILL_ROUND_MS : -1) <= 0)
			continue;
		for (int i = 0; i < nfd; i++) {
			char buf[64];
			ssize_t n;

			if (!pfd[i].revents)
				continue;
			n = read(pfd[i].fd, buf, sizeof(buf));
			if (pfd[i].fd != ctl)
				continue; /* signalfd: just drained */
			if (n > 0 && memchr(buf, 'k', (size_t)n))
				killing = 1;
			if (n == 0 ||
			    (n < 0 && errno != EAGAIN && errno != EINTR)) {
				/* whoever started us is gone: end it all */
				close(ctl);
				ctl = -1;
				killing = 1;
			}
		}
	}
}

/* --- the spawner: forks shims (one thread, no malloc) ------------- */

#define SPAWNER_MAX_SHIMS 16384
#define SPAWNER_TICK_MS 1000

static pid_t spawner_shims[SPAWNER_MAX_SHIMS]; /* only in the spawner */
static size_t spawner_nr;
static int spawner_overflow; /* a shim not in the table: kill no strays */

/* Remove pid from the table; 1 if it was a shim. */
static int spawner_forget(pid_t pid)
{
	for (size_t i = 0; i < spawner_nr; i++)
		if (spawner_shims[i] == pid) {
			spawner_shims[i] = spawner_shims[--spawner_nr];
			return 1;
		}
	return 0;
}

/* SIGKILL pid, a child of ours, unless it is a shim. */
static void spawner_kill_if_stray(pid_t pid)
{
	for (size_t j = 0; j < spawner_nr; j++)
		if (spawner_shims[j] == pid)
			return;
	kill(pid, SIGKILL); /* our child: its pid cannot be reused */
}

/*
 * SIGKILL every child that is not a shim (a killed shim's orphans):
 * from our "children" file (CONFIG_PROC_CHILDREN; one thread, so one
 * file), else from a walk of /proc.
 */
static void spawner_kill_strays(struct shim_proc **v, size_t *alloc)
{
	pid_t self = getpid();
	char path[64], buf[4096];
	long cur = 0;
	int fd, digits = 0;
	size_t n, i;
	ssize_t got;

	if (spawner_overflow)
		return;
	memcpy(put_uint(stpcpy(path, "/proc/self/task/"), (unsigned)self),
	       "/children", 10);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		while ((got = read(fd, buf, sizeof(buf))) > 0)
			for (ssize_t k = 0; k < got; k++) {
				if (buf[k] >= '0' && buf[k] <= '9') {
					cur = cur * 10 + (buf[k] - '0');
					digits = 1;
					continue;
				}
				if (digits && cur > 0)
					spawner_kill_if_stray((pid_t)cur);
				cur = digits = 0;
			}
		if (digits && cur > 0)
			spawner_kill_if_stray((pid_t)cur);
		close(fd);
		return;
	}
	n = shim_scan(v, alloc);
	for (i = 0; i < n; i++)
		if ((*v)[i].ppid == self)
			spawner_kill_if_stray((*v)[i].pid);
}

/* Take one request: 5 or 6 descriptors (stdin last, if any). */
static void spawner_request(int sock)
{
	char data[8], ctlbuf[CMSG_SPACE(6 * sizeof(int))];
	struct iovec iov = { data, sizeof(data) };
	struct msghdr msg;
	struct cmsghdr *cm;
	struct shim_fds f;
	int fds[6], nfds = 0;
	ssize_t n;
	pid_t pid;

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctlbuf;
	msg.msg_controllen = sizeof(ctlbuf);
	n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	if (n == 0)
		_exit(0); /* the server is gone; its shims see EOF too */
	if (n < 0)
		return;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		size_t k;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k && nfds < 6; i++)
			memcpy(&fds[nfds++], CMSG_DATA(cm) + i * sizeof(int),
			       sizeof(int));
	}
	if (nfds < 5 || (msg.msg_flags & MSG_CTRUNC))
		goto out;
	f.req = fds[0];
	f.st = fds[1];
	f.ctl = fds[2];
	f.out = fds[3];
	f.err = fds[4];
	f.in = nfds > 5 ? fds[5] : -1;
	pid = _Fork();
	if (!pid)
		shim_main(&f);
	if (pid < 0)
		shim_send(f.st, SHIM_START_FAILED, errno, 0, SHIM_STAGE_FORK);
	else if (spawner_nr < SPAWNER_MAX_SHIMS)
		spawner_shims[spawner_nr++] = pid;
	else
		spawner_overflow = 1;
out:
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
}

static NORETURN void spawner_main(int sock)
{
	struct shim_proc *procs = NULL;
	size_t alloc = 0;
	sigset_t chld;
	int sfd, keep[1] = { sock };

	shim_signals(&chld);
	shim_close_fds(keep, 1);
	/* a killed shim's orphans come here (else to the server) */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	uint64_t next_scan = monotonic_ms() + SPAWNER_TICK_MS;

	for (;;) {
		struct pollfd pfd[2] = { { sock, POLLIN, 0 },
					 { sfd, POLLIN, 0 } };
		int r, st, strays = 0;
		pid_t pid;

		r = poll(pfd, sfd >= 0 ? 2 : 1,
			 sfd >= 0 ? SPAWNER_TICK_MS : SHIM_KILL_ROUND_MS * 10);
		if (r > 0 && pfd[0].revents)
			spawner_request(sock);
		if (r > 0 && sfd >= 0 && pfd[1].revents) {
			char buf[256];
			ssize_t n = read(sfd, buf, sizeof(buf));
			(void)n;
		}
		while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
			if (spawner_forget(pid) && WIFSIGNALED(st))
				strays = 1; /* killed: its orphans are ours */
		/* and now and then: CLONE_PARENT makes strays too */
		if (strays || monotonic_ms() >= next_scan) {
			spawner_kill_strays(&procs, &alloc);
			next_scan = monotonic_ms() + SPAWNER_TICK_MS;
		}
	}
}

/* Under spawner_lock: start the spawner. 0, or -1 with errno. */
static int spawner_launch(void)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -1;
	pthread_rwlock_rdlock(&reaper_lock);
	pid = _Fork();
	if (!pid)
		spawner_main(sv[1]);
	if (pid > 0)
		__atomic_store_n(&spawner_pid, pid, __ATOMIC_RELEASE);
	pthread_rwlock_unlock(&reaper_lock);
	close(sv[1]);
	if (pid < 0) {
		int e = errno;
		close(sv[0]);
		errno = e;
		return -1;
	}
	spawner_fd = sv[0];
	return 0;
}

int exec_spawner_start(void)
{
	int ret = 0;

	pthread_mutex_lock(&spawner_lock);
	if (spawner_fd < 0 && spawner_launch() < 0)
		ret = error_errno("cannot start the command spawner");
	spawner_on = spawner_fd >= 0;
	pthread_mutex_unlock(&spawner_lock);
	return ret;
}

void exec_spawner_stop(void)
{
	pthread_mutex_lock(&spawner_lock);
	if (spawner_fd >= 0)
		close(spawner_fd); /* it exits at EOF */
	spawner_fd = -1;
	spawner_on = 0;
	__atomic_store_n(&spawner_pid, -1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&spawner_lock);
}

/*
 * Hand a request to the spawner, starting it again if it died.
 * Returns 0, 1 when there is no spawner (fork the shim yourself), or
 * -1 with errno.
 */
static int spawner_send(const struct shim_fds *f)
{
	char ctlbuf[CMSG_SPACE(6 * sizeof(int))];
	int fds[6] = { f->req, f->st, f->ctl, f->out, f->err, f->in };
	int nfds = f->in >= 0 ? 6 : 5, ret = -1, tries;
	struct iovec iov = { (char *)"r", 1 };
	struct msghdr msg;
	struct cmsghdr *cm;

	memset(&msg, 0, sizeof(msg));
	memset(ctlbuf, 0, sizeof(ctlbuf));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctlbuf;
	msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));

	pthread_mutex_lock(&spawner_lock);
	if (!spawner_on) {
		ret = 1;
		goto out;
	}
	for (tries = 0; tries < 2; tries++) {
		if (spawner_fd < 0 && spawner_launch() < 0)
			break;
		if (sendmsg(spawner_fd, &msg, MSG_NOSIGNAL) >= 0) {
			ret = 0;
			break;
		}
		if (errno == EINTR) {
			tries--;
			continue;
		}
		/* it died (killed by a command): start another one */
		close(spawner_fd);
		spawner_fd = -1;
	}
out:
	pthread_mutex_unlock(&spawner_lock);
	return ret;
}

/* --- starting ----------------------------------------------------- */

/*
 * The request in a memfd (tty: the terminal's path, or NULL). Returns
 * it, or -1 with errno.
 */
static int write_request(const struct exec_request *req, const char *tty)
{
	struct strbuf sb = STRBUF_INIT;
	struct spawn_hdr h;
	char *const *env = req->env ? (char *const *)req->env : environ;
	int fd, e;

	memset(&h, 0, sizeof(h));
	h.magic = SPAWN_MAGIC;
	h.has_cwd = req->cwd != NULL;
	h.has_tty = tty != NULL;
	strbuf_add(&sb, &h, sizeof(h));
	if (req->argv) {
		strbuf_add(&sb, req->exec_path, strlen(req->exec_path) + 1);
	} else {
		strbuf_add(&sb, req->command, strlen(req->command) + 1);
	}
	if (req->cwd)
		strbuf_add(&sb, req->cwd, strlen(req->cwd) + 1);
	if (tty)
		strbuf_add(&sb, tty, strlen(tty) + 1);
	for (const char *const *a = req->argv; a && *a; a++, h.nargv++)
		strbuf_add(&sb, *a, strlen(*a) + 1);
	for (; env && *env; env++, h.nenv++)
		strbuf_add(&sb, *env, strlen(*env) + 1);
	h.size = sb.len - sizeof(h);
	memcpy(sb.buf, &h, sizeof(h));
	fd = memfd_create("gosbx-exec", MFD_CLOEXEC);
	if (fd >= 0 && write_in_full(fd, sb.buf, sb.len) < 0) {
		e = errno;
		close(fd);
		errno = e;
		fd = -1;
	}
	strbuf_release(&sb);
	return fd;
}

/* Wait for the shim we forked ourselves (it exits or already did). */
static void reap_shim(struct exec_proc *p)
{
	int st;

	if (!p->direct || p->shim <= 0 || load_int(&p->shim_reaped))
		return;
	while (waitpid(p->shim, &st, 0) < 0 && errno == EINTR)
		;
	store_int(&p->shim_reaped, 1);
}

/* Read the shim's first report: the shell runs, or why it does not. */
static void read_start(struct exec_proc *p)
{
	struct shim_msg m;
	ssize_t n = read_in_full(p->fd_st, &m, sizeof(m));

	if (n == sizeof(m) && m.kind == SHIM_STARTED && m.value > 0 &&
	    m.aux > 0) {
		__atomic_store_n(&p->shim, m.aux, __ATOMIC_RELEASE);
		__atomic_store_n(&p->pid, m.value, __ATOMIC_RELEASE);
		return;
	}
	if (n == sizeof(m) && m.kind == SHIM_START_FAILED)
		start_failed_at(p, NULL, m.aux, m.value);
	else
		start_failed(p, "shim", n < 0 ? errno : EPIPE);
	close_fd(&p->fd_st);
	reap_shim(p);
	store_int(&p->shim_reaped, 1);
}

/*
 * A new pseudo-terminal for request tty: *master (non-blocking,
 * close-on-exec) and its slave's path in p->tty_name, the window size
 * set; with tty_raw also *slave, the slave opened (the line
 * discipline's settings live on that side) and put in raw mode, to be
 * closed once the command has opened it itself. Returns 0, or -1 after
 * start_failed().
 */
static int open_tty(struct exec_proc *p, int *master, int *slave)
{
	const struct exec_request *req = p->req;
	struct winsize ws = { 0 };
	struct termios t;
	int m;

	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0) {
		start_failed(p, "posix_openpt", errno);
		return -1;
	}
	ws.ws_col = req->cols ? req->cols : 80;
	ws.ws_row = req->rows ? req->rows : 24;
	if (grantpt(m) < 0 || unlockpt(m) < 0 ||
	    ptsname_r(m, p->tty_name, sizeof(p->tty_name)) ||
	    ioctl(m, TIOCSWINSZ, &ws) < 0 ||
	    fcntl(m, F_SETFL, O_NONBLOCK) < 0) {
		start_failed(p, "pseudo-terminal", errno);
		close(m);
		return -1;
	}
	if (req->tty_raw) {
		int s = open(p->tty_name, O_RDWR | O_NOCTTY | O_CLOEXEC);

		if (s < 0 || tcgetattr(s, &t) < 0) {
			start_failed(p, "pseudo-terminal", errno);
			if (s >= 0)
				close(s);
			close(m);
			return -1;
		}
		cfmakeraw(&t);
		if (tcsetattr(s, TCSANOW, &t) < 0) {
			start_failed(p, "pseudo-terminal", errno);
			close(s);
			close(m);
			return -1;
		}
		*slave = s;
	}
	*master = m;
	return 0;
}

int exec_start(const struct exec_request *req, struct exec_proc **out)
{
	struct exec_proc *p;
	struct shim_fds f;
	int in_pipe[2] = { -1, -1 };
	int out_pipe[2] = { -1, -1 };
	int err_pipe[2] = { -1, -1 };
	int st_pipe[2] = { -1, -1 };
	int ctl_pipe[2] = { -1, -1 };
	int master = -1, slave = -1, devnull = -1;
	int memfd = -1, rc, fork_errno = 0;
	pid_t shim;

	if (!out)
		return -1;
	*out = NULL;
	if (!req || !req->command ||
	    (req->argv && (!req->argv[0] || !req->exec_path)))
		return -1;

	p = xcalloc(1, sizeof(*p));
	p->req = req;
	p->pid = p->shim = -1;
	p->fd_st = p->fd_ctl = p->fd_out = p->fd_err = p->fd_in = -1;
	p->fd_stdin = p->fd_tty = -1;
	p->watch_cancel = req->cancel_fd >= 0;
	p->cap = req->stream_cap ? req->stream_cap : EXEC_DEFAULT_CAP;
	exec_result_init(&p->res);
	*out = p;
	p->start_us = monotonic_us();
	if (req->timeout_ms > 0)
		p->deadline_us = p->start_us + (uint64_t)req->timeout_ms * 1000;

	if (req->tty) {
		/* the terminal is the command's stdio: out and err unused */
		if (open_tty(p, &master, &slave) < 0)
			return 0;
		devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (devnull < 0) {
			start_failed(p, "/dev/null", errno);
			goto cleanup;
		}
	} else if ((req->stdin_data || req->stdin_stream) &&
		   pipe2(in_pipe, O_CLOEXEC) < 0) {
		start_failed(p, "pipe", errno);
		return 0;
	}
	if ((!req->tty && (pipe2(out_pipe, O_CLOEXEC) < 0 ||
			   pipe2(err_pipe, O_CLOEXEC) < 0)) ||
	    pipe2(st_pipe, O_CLOEXEC) < 0 || pipe2(ctl_pipe, O_CLOEXEC) < 0) {
		start_failed(p, "pipe", errno);
		goto cleanup;
	}
	/* larger pipes: fewer wake-ups and bigger chunks for fast writers */
	if (!req->tty) {
		fcntl(out_pipe[0], F_SETPIPE_SZ, EXEC_CHUNK);
		fcntl(err_pipe[0], F_SETPIPE_SZ, EXEC_CHUNK);
	}
	/* our ends of stdin and of the kill pipe must never block */
	if ((in_pipe[1] >= 0 && fcntl(in_pipe[1], F_SETFL, O_NONBLOCK) < 0) ||
	    fcntl(ctl_pipe[1], F_SETFL, O_NONBLOCK) < 0) {
		start_failed(p, "fcntl", errno);
		goto cleanup;
	}
	memfd = write_request(req, req->tty ? p->tty_name : NULL);
	if (memfd < 0) {
		start_failed(p, "memfd", errno);
		goto cleanup;
	}
	f.req = memfd;
	f.st = st_pipe[1];
	f.ctl = ctl_pipe[0];
	/* ours before the command is known: exec_cancel() may come now */
	p->fd_st = st_pipe[0];
	p->fd_ctl = ctl_pipe[1];
	st_pipe[0] = ctl_pipe[1] = -1;
	f.in = in_pipe[0];
	f.out = req->tty ? devnull : out_pipe[1];
	f.err = req->tty ? devnull : err_pipe[1];

	/*
	 * Hold off exec_umask_hold() until the shim has our umask (only
	 * a shim we fork ourselves has it), and exec_reap_orphans() and
	 * exec_kill_strays() until such a shim is registered.
	 */
	pthread_rwlock_rdlock(&umask_lock);
	rc = spawner_send(&f);
	if (rc > 0) {
		pthread_rwlock_rdlock(&reaper_lock);
		shim = _Fork();
		if (!shim)
			shim_main(&f);
		if (shim > 0) {
			__atomic_store_n(&p->shim, shim, __ATOMIC_RELEASE);
			p->direct = 1;
			reg_add(p);
		} else {
			fork_errno = errno;
		}
		pthread_rwlock_unlock(&reaper_lock);
		rc = shim > 0 ? 0 : -1;
	} else if (rc < 0) {
		fork_errno = errno;
	} else {
		reg_add(p);
	}
	pthread_rwlock_unlock(&umask_lock);
	if (rc < 0) {
		start_failed(p, p->direct || !spawner_on ? "fork" : "spawner",
			     fork_errno);
		goto cleanup;
	}

	close_fd(&st_pipe[1]); /* EOF on ours: the shim is gone */
	close_fd(&ctl_pipe[0]);
	close_fd(&memfd);
	read_start(p);
	/* only now: the command has the terminal open (tty_raw) */
	close_fd(&slave);
	if (load_int(&p->done))
		goto cleanup;
	fcntl(p->fd_st, F_SETFL, O_NONBLOCK);
	p->buf = xmalloc(EXEC_CHUNK);
	if (req->tty) {
		p->fd_out = master;
		master = -1;
		p->fd_tty = fcntl(p->fd_out, F_DUPFD_CLOEXEC, 3);
	} else {
		p->fd_out = out_pipe[0];
		p->fd_err = err_pipe[0];
		out_pipe[0] = err_pipe[0] = -1;
	}
	if (req->stdin_stream && !req->tty) {
		p->fd_stdin = in_pipe[1];
		in_pipe[1] = -1;
	} else if (req->stdin_len && !req->tty) {
		p->fd_in = in_pipe[1];
		in_pipe[1] = -1;
	}

cleanup:
	close_fd(&master);
	close_fd(&slave);
	close_fd(&devnull);
	close_fd(&memfd);
	close_fd(&in_pipe[0]);
	close_fd(&in_pipe[1]);
	close_fd(&out_pipe[0]);
	close_fd(&out_pipe[1]);
	close_fd(&err_pipe[0]);
	close_fd(&err_pipe[1]);
	close_fd(&st_pipe[0]);
	close_fd(&st_pipe[1]);
	close_fd(&ctl_pipe[0]);
	close_fd(&ctl_pipe[1]);
	return 0;
}

pid_t exec_pgid(const struct exec_proc *p)
{
	return p ? p->pid : -1;
}

void exec_cancel(struct exec_proc *p, const char *reason)
{
	const char *expected = NULL;
	pid_t pid;

	if (!p || load_int(&p->done) || p->fd_ctl < 0)
		return;
	if (!__atomic_compare_exchange_n(&p->kill_reason, &expected, reason, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	/*
	 * The shell's group at once; the shim finds the rest (a request
	 * that comes before the shell runs waits in the pipe for it).
	 */
	pid = __atomic_load_n(&p->pid, __ATOMIC_ACQUIRE);
	if (pid > 0 && !load_int(&p->reaped)) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL); /* if it moved to another group */
	}
	if (!load_int(&p->shim_reaped))
		shim_ask_kill(__atomic_load_n(&p->shim, __ATOMIC_ACQUIRE),
			      p->fd_ctl);
}

/* Append up to the cap, growing the buffer to no more than cap + 1. */
static void add_capped(struct strbuf *sb, const char *buf, size_t n, size_t cap,
		       int *truncated)
{
	size_t room = sb->len < cap ? cap - sb->len : 0;
	size_t need, a;

	if (n > room) {
		*truncated = 1;
		n = room;
	}
	if (!n)
		return;
	if (!sb->alloc)
		strbuf_grow(sb, 0);
	need = sb->len + n + 1;
	if (need > sb->alloc) {
		a = sb->alloc < SIZE_MAX / 2 ? sb->alloc * 2 : need;
		if (a < need)
			a = need;
		if (cap < SIZE_MAX && a > cap + 1)
			a = cap + 1;
		sb->buf = xrealloc(sb->buf, a);
		sb->alloc = a;
	}
	memcpy(sb->buf + sb->len, buf, n);
	strbuf_setlen(sb, sb->len + n);
}

static void deliver(struct exec_proc *p, enum exec_stream stream,
		    const char *buf, size_t n)
{
	const struct exec_request *req = p->req;
	struct exec_result *res = &p->res;
	uint64_t before = (uint64_t)res->out_total + res->err_total;
	size_t keep = n;
	int over = 0;

	if (req->max_output_bytes > 0) {
		uint64_t max = (uint64_t)req->max_output_bytes;

		if (before >= max)
			keep = 0;
		else if (n > max - before)
			keep = (size_t)(max - before);
		over = before + n > max;
	}
	if (stream == EXEC_STDOUT) {
		res->out_total += n;
		if (keep < n)
			res->out_truncated = 1;
	} else {
		res->err_total += n;
		if (keep < n)
			res->err_truncated = 1;
	}
	if (keep && req->on_output && !p->cb_off &&
	    req->on_output(stream, buf, keep, req->data) < 0) {
		p->cb_off = 1;
		exec_cancel(p, "cancelled");
	}
	if (stream == EXEC_STDOUT)
		add_capped(&res->out, buf, keep, p->cap, &res->out_truncated);
	else
		add_capped(&res->err, buf, keep, p->cap, &res->err_truncated);
	if (over)
		exec_cancel(p, "output_limit");
}

/* One read from an output pipe that poll() reported ready. */
static void read_pipe(struct exec_proc *p, int *fd, enum exec_stream stream)
{
	ssize_t n = read(*fd, p->buf, EXEC_CHUNK);

	if (n > 0) {
		deliver(p, stream, p->buf, (size_t)n);
		if (p->draining)
			p->drain_quiet_us =
				monotonic_us() + EXEC_DRAIN_QUIET_MS * 1000;
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		close_fd(fd);
	}
}

/*
 * write(2) to the stdin pipe without SIGPIPE reaching the process when
 * the command closed its end: block it in this thread, and swallow the
 * one our write raised (unless one was pending already).
 */
static ssize_t write_nosigpipe(int fd, const void *buf, size_t len)
{
	sigset_t pipe_set, old, pending;
	int was_pending, saved;
	ssize_t n;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE);
	n = write(fd, buf, len);
	saved = errno;
	if (n < 0 && saved == EPIPE && !was_pending) {
		struct timespec zero = { 0, 0 };

		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 &&
		       errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return n;
}

static void feed_stdin(struct exec_proc *p)
{
	const struct exec_request *req = p->req;
	size_t left = req->stdin_len - p->in_off;
	ssize_t n;

	if (left > EXEC_CHUNK)
		left = EXEC_CHUNK;
	n = write_nosigpipe(p->fd_in, req->stdin_data + p->in_off, left);
	if (n > 0)
		p->in_off += (size_t)n;
	else if (n < 0 && errno != EAGAIN && errno != EINTR)
		close_fd(&p->fd_in); /* EPIPE: it does not want more */
	if (p->in_off >= req->stdin_len)
		close_fd(&p->fd_in);
}

/* The shim's reports that arrived; EOF means it exited (or was killed). */
static void read_reports(struct exec_proc *p)
{
	struct shim_msg m[16];
	ssize_t n;

	while (p->fd_st >= 0) {
		n = read(p->fd_st, m, sizeof(m));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return; /* EAGAIN: nothing more now */
		if (n == 0) {
			close_fd(&p->fd_st);
			reap_shim(p);
			store_int(&p->shim_reaped, 1); /* gone, anyway */
			if (!load_int(&p->reaped)) {
				/*
				 * Killed before it could tell (code of the
				 * sandbox can): kill the shell's group and
				 * drain as after any kill; the rest is ours
				 * to kill, see exec_kill_strays().
				 */
				const char *none = NULL;

				__atomic_compare_exchange_n(
					&p->kill_reason, &none, "signaled", 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
				if (p->pid > 0)
					kill(-p->pid, SIGKILL);
				p->lost_status = 1;
				p->reaped_us = monotonic_us();
				store_int(&p->reaped, 1);
			}
			p->empty = 1;
			return;
		}
		for (size_t i = 0; i < (size_t)n / sizeof(m[0]); i++) {
			if (m[i].kind != SHIM_STATUS)
				continue;
			p->cpu_us = m[i].cpu_us;
			p->maxrss_kb = m[i].maxrss_kb;
			if (m[i].flags & SHIM_SHELL_EXITED) {
				p->status = m[i].value;
				p->reaped_us = monotonic_us();
				store_int(&p->reaped, 1);
			}
			if (m[i].flags & SHIM_EMPTY)
				p->empty = 1;
		}
	}
}

static void make_result(struct exec_proc *p)
{
	struct exec_result *res = &p->res;
	const char *killed = __atomic_load_n(&p->kill_reason, __ATOMIC_ACQUIRE);

	res->duration_ms = (int64_t)((p->reaped_us - p->start_us) / 1000);
	res->cpu_ms = p->cpu_us / 1000;
	res->peak_rss_kb = p->maxrss_kb;
	if (p->lost_status) {
		res->exit_code = -1;
		res->reason = "signaled";
	} else if (WIFEXITED(p->status)) {
		res->exit_code = WEXITSTATUS(p->status);
		res->reason = "exited";
	} else {
		res->exit_code = -1;
		res->signal = WIFSIGNALED(p->status) ? WTERMSIG(p->status) : 0;
		res->reason = "signaled";
	}
	if (killed)
		res->reason = killed;
}

/*
 * Finished when the shell's end is known and both pipes are closed;
 * after a kill, also when the shim said nothing is left (so that what
 * was killed is counted) or the drain ran out of time.
 */
static int check_done(struct exec_proc *p, uint64_t now)
{
	if (!load_int(&p->reaped) || p->fd_out >= 0 || p->fd_err >= 0)
		return 0;
	if (p->draining && !p->empty && now < p->drain_end_us)
		return 0;
	if (!p->draining && !p->empty && !p->settled && p->fd_st >= 0) {
		/* the last reaps of the shim may be on their way */
		struct pollfd pfd = { p->fd_st, POLLIN, 0 };

		p->settled = 1;
		if (poll(&pfd, 1, EXEC_SETTLE_MS) > 0)
			read_reports(p);
	}
	close_fd(&p->fd_in);
	make_result(p);
	store_int(&p->done, 1);
	return 1;
}

/* ---- output held by what the command left (wait_delay_ms) ---- */

struct held_copy {
	int fd[2];  /* stdout, stderr read ends; -1 when closed */
	int out;    /* the file, or -1: read and drop */
	off_t left; /* bytes the file may still take */
};

/* Copy what the left processes write until they close (a thread). */
static void *held_copy_run(void *arg)
{
	struct held_copy *h = arg;
	char buf[16384];

	while (h->fd[0] >= 0 || h->fd[1] >= 0) {
		struct pollfd pfd[2] = { { h->fd[0], POLLIN, 0 },
					 { h->fd[1], POLLIN, 0 } };

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (h->fd[i] < 0 || !pfd[i].revents)
				continue;
			n = read(h->fd[i], buf, sizeof(buf));
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				close_fd(&h->fd[i]);
				continue;
			}
			if (h->out >= 0 && h->left > 0) {
				size_t k = (size_t)n < (size_t)h->left
						   ? (size_t)n
						   : (size_t)h->left;

				if (xwrite(h->out, buf, k) < 0)
					close_fd(&h->out);
				else
					h->left -= (off_t)k;
			}
		}
	}
	close_fd(&h->fd[0]);
	close_fd(&h->fd[1]);
	close_fd(&h->out);
	free(h);
	return NULL;
}

/*
 * The shell exited wait_delay_ms ago and a process it left still holds
 * its output: finish without it, and let a thread of our own copy what
 * it writes later to held_output_path (lib/exec.h).
 */
static void hand_off_output(struct exec_proc *p)
{
	const struct exec_request *req = p->req;
	struct held_copy *h = xcalloc(1, sizeof(*h));
	pthread_attr_t attr;
	pthread_t tid;

	h->fd[0] = p->fd_out;
	h->fd[1] = p->fd_err;
	p->fd_out = p->fd_err = -1;
	h->out = -1;
	h->left = EXEC_HELD_OUTPUT_MAX;
	if (req->held_output_path) {
		h->out = open(req->held_output_path,
			      O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
				      O_NOFOLLOW,
			      0644);
		if (h->out >= 0)
			p->res.held_output = xstrdup(req->held_output_path);
	}
	p->res.output_held = 1;
	for (int i = 0; i < 2; i++)
		if (h->fd[i] >= 0)
			fcntl(h->fd[i], F_SETFL, 0); /* the thread blocks */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	if (pthread_create(&tid, &attr, held_copy_run, h)) {
		/* no thread: close them, a later write fails (EPIPE) */
		close_fd(&h->fd[0]);
		close_fd(&h->fd[1]);
		close_fd(&h->out);
		free(p->res.held_output);
		p->res.held_output = NULL;
		free(h);
	}
	pthread_attr_destroy(&attr);
}

/* the shell ended wait_delay_ms ago and its output is still held */
static int output_overdue(const struct exec_proc *p, uint64_t now)
{
	return p->req->wait_delay_ms > 0 && !p->draining &&
	       load_int(&p->reaped) && (p->fd_out >= 0 || p->fd_err >= 0) &&
	       now >= p->reaped_us + (uint64_t)p->req->wait_delay_ms * 1000;
}

static int poll_ms(uint64_t now, uint64_t until)
{
	uint64_t d;

	if (until <= now)
		return 0;
	d = (until - now + 999) / 1000;
	return d > INT_MAX ? INT_MAX : (int)d;
}

static int min_timeout(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

int exec_step(struct exec_proc *p, int wait_ms)
{
	struct pollfd pfd[5 + EXEC_MAX_EXTRA];
	int i_out = -1, i_err = -1, i_in = -1, i_st = -1, i_cancel = -1;
	int nfd = 0, timeout = wait_ms, r, i_extra;
	unsigned nr_extra;
	uint64_t now;

	if (!p || load_int(&p->done))
		return 0;

	now = monotonic_us();
	if (p->deadline_us && now >= p->deadline_us)
		exec_cancel(p, "timeout");
	if (!p->draining &&
	    __atomic_load_n(&p->kill_reason, __ATOMIC_ACQUIRE)) {
		p->draining = 1;
		p->drain_quiet_us = now + EXEC_DRAIN_QUIET_MS * 1000;
		p->drain_end_us = now + EXEC_DRAIN_MAX_MS * 1000;
	}
	if (p->draining &&
	    (now >= p->drain_quiet_us || now >= p->drain_end_us)) {
		close_fd(&p->fd_out);
		close_fd(&p->fd_err);
		close_fd(&p->fd_in);
	}
	if (p->draining && now >= p->drain_end_us && !p->empty &&
	    !p->shim_killed && !load_int(&p->shim_reaped)) {
		/* a stuck or stopped shim: its orphans become strays */
		p->shim_killed = 1;
		kill(p->shim, SIGKILL);
	}
	if (output_overdue(p, now))
		hand_off_output(p);
	if (check_done(p, now))
		return 0;

	if (p->fd_out >= 0 && !p->out_paused) {
		i_out = nfd;
		pfd[nfd].fd = p->fd_out;
		pfd[nfd++].events = POLLIN;
	}
	if (p->fd_err >= 0 && !p->out_paused) {
		i_err = nfd;
		pfd[nfd].fd = p->fd_err;
		pfd[nfd++].events = POLLIN;
	}
	if (p->fd_in >= 0) {
		i_in = nfd;
		pfd[nfd].fd = p->fd_in;
		pfd[nfd++].events = POLLOUT;
	}
	if (p->fd_st >= 0) {
		i_st = nfd;
		pfd[nfd].fd = p->fd_st;
		pfd[nfd++].events = POLLIN;
	}
	if (p->watch_cancel) {
		i_cancel = nfd;
		pfd[nfd].fd = p->req->cancel_fd;
		/* POLLHUP and POLLERR are reported whatever we ask */
		pfd[nfd++].events = POLLRDHUP;
	}
	nr_extra = p->req->poll_extra ? p->req->nr_poll_extra : 0;
	if (nr_extra > EXEC_MAX_EXTRA)
		nr_extra = EXEC_MAX_EXTRA;
	i_extra = nfd;
	for (unsigned i = 0; i < nr_extra; i++) {
		p->req->poll_extra[i].revents = 0;
		pfd[nfd].fd = p->req->poll_extra[i].fd;
		pfd[nfd++].events = p->req->poll_extra[i].events;
	}
	if (p->deadline_us &&
	    !__atomic_load_n(&p->kill_reason, __ATOMIC_ACQUIRE))
		timeout = min_timeout(timeout, poll_ms(now, p->deadline_us));
	/*
	 * Only background jobs hold the pipes now: nothing would wake us
	 * if another thread cancelled (exec_kill_all), so look at the kill
	 * reason now and then.
	 */
	if (load_int(&p->reaped) && !p->draining)
		timeout = min_timeout(timeout, EXEC_ORPHAN_PIPES_POLL_MS);
	if (load_int(&p->reaped) && !p->draining && p->req->wait_delay_ms > 0)
		timeout = min_timeout(
			timeout,
			poll_ms(now,
				p->reaped_us + (uint64_t)p->req->wait_delay_ms *
						       1000));
	if (p->draining) {
		uint64_t until = p->drain_end_us;

		if ((p->fd_out >= 0 || p->fd_err >= 0) &&
		    p->drain_quiet_us < until)
			until = p->drain_quiet_us;
		timeout = min_timeout(timeout, poll_ms(now, until));
	}

	r = poll(pfd, (nfds_t)nfd, timeout);
	if (r > 0) {
		for (unsigned i = 0; i < nr_extra; i++)
			p->req->poll_extra[i].revents =
				pfd[i_extra + i].revents;
		if (i_cancel >= 0 && pfd[i_cancel].revents) {
			p->watch_cancel = 0;
			exec_cancel(p, "cancelled");
		}
		if (i_out >= 0 && pfd[i_out].revents)
			read_pipe(p, &p->fd_out, EXEC_STDOUT);
		if (i_err >= 0 && pfd[i_err].revents)
			read_pipe(p, &p->fd_err, EXEC_STDERR);
		if (i_in >= 0 && p->fd_in >= 0 && pfd[i_in].revents) {
			if (pfd[i_in].revents & POLLOUT)
				feed_stdin(p);
			else
				close_fd(&p->fd_in);
		}
		if (i_st >= 0 && pfd[i_st].revents)
			read_reports(p);
	}

	now = monotonic_us();
	if (p->deadline_us && now >= p->deadline_us)
		exec_cancel(p, "timeout");
	if (output_overdue(p, now))
		hand_off_output(p);

	return check_done(p, now) ? 0 : 1;
}

int exec_stdin_fd(struct exec_proc *p)
{
	if (!p || load_int(&p->done))
		return -1;
	if (p->req->tty)
		return p->req->stdin_stream ? p->fd_tty : -1;
	return p->fd_stdin;
}

void exec_stdin_close(struct exec_proc *p)
{
	struct termios t;

	if (!p)
		return;
	if (!p->req->tty) {
		close_fd(&p->fd_stdin);
		return;
	}
	if (p->fd_tty >= 0 && !tcgetattr(p->fd_tty, &t)) {
		char eof = (char)t.c_cc[VEOF];
		ssize_t n = write(p->fd_tty, &eof, 1);

		(void)n; /* a full terminal: nothing more to do */
	}
}

int exec_resize(struct exec_proc *p, unsigned cols, unsigned rows)
{
	struct winsize ws = { 0 };

	if (!p || p->fd_tty < 0 || !cols || !rows || cols > 65535 ||
	    rows > 65535)
		return -1;
	ws.ws_col = (unsigned short)cols;
	ws.ws_row = (unsigned short)rows;
	return ioctl(p->fd_tty, TIOCSWINSZ, &ws) < 0 ? -1 : 0;
}

int exec_signal_foreground(struct exec_proc *p, int sig)
{
	pid_t fg;

	if (!p || p->fd_tty < 0)
		return -1;
	fg = tcgetpgrp(p->fd_tty);
	if (fg <= 0 || load_int(&p->done))
		return 0;
	return kill(-fg, sig) < 0 ? 0 : 1;
}

void exec_pause_output(struct exec_proc *p, int paused)
{
	if (p)
		p->out_paused = paused;
}

/*
 * After the end: a shim that said "empty" is exiting, wait for it; one
 * whose command left processes behind lingers with them (returns 1).
 */
static int settle_shim(struct exec_proc *p)
{
	uint64_t end = monotonic_ms() + EXEC_SHIM_EXIT_MS;

	if (p->shim <= 0 || load_int(&p->shim_reaped))
		return 0;
	while (p->empty && p->fd_st >= 0 && monotonic_ms() < end) {
		struct pollfd pfd = { p->fd_st, POLLIN, 0 };

		if (poll(&pfd, 1, (int)(end - monotonic_ms())) > 0)
			read_reports(p); /* reaps it at EOF */
	}
	return !load_int(&p->shim_reaped);
}

void exec_finish(struct exec_proc *p, struct exec_result *res)
{
	if (!p)
		return;
	if (!load_int(&p->done))
		exec_cancel(p, "cancelled");
	p->out_paused = 0;
	while (exec_step(p, -1) > 0)
		;
	reg_del(p, settle_shim(p));
	close_fd(&p->fd_st);
	close_fd(&p->fd_ctl);
	close_fd(&p->fd_out);
	close_fd(&p->fd_err);
	close_fd(&p->fd_in);
	close_fd(&p->fd_stdin);
	close_fd(&p->fd_tty);
	if (res) {
		exec_result_release(res);
		*res = p->res;
	} else {
		exec_result_release(&p->res);
	}
	free(p->buf);
	free(p);
}

int exec_run(const struct exec_request *req, struct exec_result *res)
{
	struct exec_proc *p;

	if (exec_start(req, &p) < 0)
		return -1;
	while (exec_step(p, -1) > 0)
		;
	exec_finish(p, res);
	return 0;
}

int exec_kill_all(void)
{
	struct exec_proc *p;
	int n = 0;

	pthread_mutex_lock(&reg_lock);
	for (p = reg_head; p; p = p->reg_next) {
		if (load_int(&p->done))
			continue;
		exec_cancel(p, "cancelled");
		n++;
	}
	for (size_t i = 0; i < nr_lingering; i++)
		shim_ask_kill(lingering[i].shim, lingering[i].ctl);
	pthread_mutex_unlock(&reg_lock);
	return n;
}

void exec_umask_hold(void)
{
	pthread_rwlock_wrlock(&umask_lock);
}

void exec_umask_release(void)
{
	pthread_rwlock_unlock(&umask_lock);
}

int exec_cancel_tag(const char *tag, const char *reason)
{
	struct exec_proc *p;
	int n = 0;

	if (!tag || !*tag)
		return 0;
	pthread_mutex_lock(&reg_lock);
	for (p = reg_head; p; p = p->reg_next) {
		if (load_int(&p->done) || !p->req->tag ||
		    strcmp(p->req->tag, tag))
			continue;
		exec_cancel(p, reason);
		n++;
	}
	pthread_mutex_unlock(&reg_lock);
	return n;
}

int exec_running_count(void)
{
	int n;

	pthread_mutex_lock(&reg_lock);
	n = reg_count;
	pthread_mutex_unlock(&reg_lock);
	return n;
}

int exec_lingering_count(void)
{
	int n;

	pthread_mutex_lock(&reg_lock);
	n = (int)nr_lingering;
	pthread_mutex_unlock(&reg_lock);
	return n;
}

/* --- our children: orphans and strays ----------------------------- */

/*
 * Call fn for each child process of ours: the "children" file of every
 * thread (CONFIG_PROC_CHILDREN), else a walk of /proc by parent pid.
 */
static int for_each_child(int (*fn)(pid_t pid, void *data), void *data)
{
	struct strbuf sb = STRBUF_INIT;
	char path[64];
	struct dirent *de;
	DIR *dir;
	int n = 0, have_children_files = 0;
	pid_t self = getpid();

	dir = opendir("/proc/self/task");
	if (dir) {
		while ((de = readdir(dir))) {
			const char *s;
			char *end;

			if (de->d_name[0] == '.')
				continue;
			xsnprintf(path, sizeof(path),
				  "/proc/self/task/%s/children", de->d_name);
			strbuf_reset(&sb);
			if (strbuf_read_file(&sb, path, 64) < 0)
				continue;
			have_children_files = 1;
			for (s = sb.buf; *s;) {
				long v = strtol(s, &end, 10);

				if (end == s)
					break;
				if (v > 0 && v <= INT_MAX)
					n += fn((pid_t)v, data);
				s = end;
			}
		}
		closedir(dir);
	}
	if (have_children_files)
		goto out;
	dir = opendir("/proc");
	if (!dir)
		goto out;
	while ((de = readdir(dir))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);

		if (end == de->d_name || *end || v <= 0 || v > INT_MAX)
			continue;
		if (shim_ppid((pid_t)v) == self)
			n += fn((pid_t)v, data);
	}
	closedir(dir);
out:
	strbuf_release(&sb);
	return n;
}

/* Reap one child by pid if it has exited and nobody owns it. */
static int reap_if_orphan(pid_t pid, void *data)
{
	siginfo_t si;
	int owned;

	pthread_mutex_lock(&reg_lock);
	owned = reg_owns(pid);
	pthread_mutex_unlock(&reg_lock);
	if (owned)
		return 0;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG) < 0 ||
	    si.si_pid != pid)
		return 0;
	linger_forget(pid);
	return 1;
}

int exec_reap_orphans(void)
{
	siginfo_t si;
	pid_t pid;
	int n = 0, owned;

	linger_sweep();
	/* a spawn in progress (or an exec_reaper_hold) means: next time */
	if (pthread_rwlock_trywrlock(&reaper_lock))
		return 0;
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
		    si.si_pid <= 0)
			break;
		pid = si.si_pid;
		pthread_mutex_lock(&reg_lock);
		owned = reg_owns(pid);
		pthread_mutex_unlock(&reg_lock);
		if (owned) {
			/*
			 * The first exited child is a shim a command still
			 * waits for: look at the others one by one.
			 */
			n += for_each_child(reap_if_orphan, NULL);
			break;
		}
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG) < 0 ||
		    si.si_pid != pid)
			break;
		linger_forget(pid);
		n++;
	}
	pthread_rwlock_unlock(&reaper_lock);
	return n;
}

/* SIGKILL one child unless it is a shim of ours (or a zombie). */
static int kill_if_stray(pid_t pid, void *data)
{
	char path[40];
	struct strbuf sb = STRBUF_INIT;
	const char *s;
	int known, zombie = 0;

	pthread_mutex_lock(&reg_lock);
	known = reg_owns(pid) || linger_find(pid) >= 0 ||
		pid == __atomic_load_n(&spawner_pid, __ATOMIC_ACQUIRE);
	pthread_mutex_unlock(&reg_lock);
	if (known)
		return 0;
	shim_stat_path(path, pid);
	if (strbuf_read_file(&sb, path, 256) > 0 &&
	    (s = strrchr(sb.buf, ')')) && s[1] == ' ')
		zombie = s[2] == 'Z' || s[2] == 'X';
	strbuf_release(&sb);
	if (zombie)
		return 0;
	return !kill(pid, SIGKILL);
}

int exec_kill_strays(void)
{
	int n;

	if (pthread_rwlock_trywrlock(&reaper_lock))
		return 0;
	n = for_each_child(kill_if_stray, NULL);
	pthread_rwlock_unlock(&reaper_lock);
	return n;
}

void exec_reaper_hold(void)
{
	pthread_rwlock_rdlock(&reaper_lock);
}

void exec_reaper_release(void)
{
	pthread_rwlock_unlock(&reaper_lock);
}

#include "compat.h"
#include "exec.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>

/*
 * How the pieces fit:
 *
 * - exec_start() spawns `/bin/sh -c` with posix_spawn (glibc: a
 *   CLONE_VFORK clone, no copy of our address space), in a new process
 *   group, with default signal dispositions and an empty mask. All our
 *   own descriptors are O_CLOEXEC, so the child gets exactly 0, 1, 2.
 * - exec_step() is one poll() round over the two output pipes, the
 *   stdin pipe while bytes remain, a pidfd that becomes readable when
 *   the shell exits, and the caller's cancel_fd (POLLRDHUP only, so
 *   plain readable data never wakes us up).
 * - Once the group was killed (timeout, cancel, output limit) we only
 *   drain what is already in the pipes: descendants that left the
 *   group may keep the write ends open forever, so the pipes are
 *   closed after EXEC_DRAIN_QUIET_MS without data (at most
 *   EXEC_DRAIN_MAX_MS in all).
 * - A registry of running commands (one mutex) backs exec_kill_all(),
 *   exec_running_count() and exec_reap_orphans(). Spawning holds a
 *   read lock on `reaper_lock` until the new pid is registered, and
 *   exec_reap_orphans() takes it for writing, so it never sees a child
 *   of ours that is not yet known.
 */

#define EXEC_CHUNK (256 * 1024)
#define EXEC_DEFAULT_CAP ((size_t)8388608)
#define EXEC_DRAIN_QUIET_MS 50
#define EXEC_DRAIN_MAX_MS 2000
#define EXEC_NOPIDFD_POLL_MIN_MS 1
#define EXEC_NOPIDFD_POLL_MAX_MS 50
#define EXEC_ORPHAN_PIPES_POLL_MS 100
#define SHELL_PATH "/bin/sh"
/* poll_extra descriptors looked at (exec.h) */
#define EXEC_MAX_EXTRA 8

struct exec_proc {
	const struct exec_request *req;
	pid_t pid;	    /* the shell == the pgid; -1 if never started */
	int pidfd;	    /* -1 if unavailable or closed */
	int nopidfd_ms;	    /* without pidfd: next wait4 poll interval */
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
	int status;
	int lost_status; /* wait4 failed (someone stole the child) */
	struct rusage ru;
	uint64_t reaped_us;
	int reaped;		 /* atomic: the shell was waited for */
	int done;		 /* atomic: reaped and both pipes closed */
	const char *kill_reason; /* atomic: set once, when we kill */
	char *buf;		 /* EXEC_CHUNK read buffer */
	struct exec_result res;
	/* registry links, under reg_lock */
	struct exec_proc *reg_next, **reg_pprev;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct exec_proc *reg_head;
static int reg_count;
static pthread_rwlock_t reaper_lock = PTHREAD_RWLOCK_INITIALIZER;
/* spawns hold it shared; exec_umask_hold() exclusive */
static pthread_rwlock_t umask_lock = PTHREAD_RWLOCK_INITIALIZER;
/* 1: pidfd_open works, 0: unknown, -1: unavailable (ENOSYS) */
static int have_pidfd;

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

static void reg_del(struct exec_proc *p)
{
	pthread_mutex_lock(&reg_lock);
	if (p->reg_pprev) {
		*p->reg_pprev = p->reg_next;
		if (p->reg_next)
			p->reg_next->reg_pprev = p->reg_pprev;
		p->reg_next = NULL;
		p->reg_pprev = NULL;
		reg_count--;
	}
	pthread_mutex_unlock(&reg_lock);
}

/* Under reg_lock: is pid the shell of a command we still have to reap? */
static int reg_owns(pid_t pid)
{
	struct exec_proc *p;

	for (p = reg_head; p; p = p->reg_next)
		if (p->pid == pid && !load_int(&p->reaped))
			return 1;
	return 0;
}

static void start_failed(struct exec_proc *p, const char *what, int err)
{
	const char *cwd = p->req->cwd;
	struct stat st;
	int cerr = 0;

	strbuf_reset(&p->res.err);
	if (!what && cwd) {
		/* posix_spawn only says it failed: did chdir fail? */
		if (stat(cwd, &st) < 0)
			cerr = errno;
		else if (!S_ISDIR(st.st_mode))
			cerr = ENOTDIR;
		else if (access(cwd, X_OK) < 0)
			cerr = errno;
	}
	if (cerr)
		strbuf_addf(&p->res.err, "cannot run command: chdir '%s': %s",
			    cwd, strerror(cerr));
	else if (what)
		strbuf_addf(&p->res.err, "cannot run command: %s: %s", what,
			    strerror(err));
	else
		strbuf_addf(&p->res.err, "cannot run command: '%s': %s",
			    SHELL_PATH, strerror(err));
	p->res.err_total = p->res.err.len;
	p->res.exit_code = -1;
	p->res.reason = "start_failed";
	p->res.duration_ms = (int64_t)((monotonic_us() - p->start_us) / 1000);
	p->pid = -1;
	store_int(&p->reaped, 1);
	store_int(&p->done, 1);
}

static int open_pidfd(pid_t pid)
{
	int fd;

	if (__atomic_load_n(&have_pidfd, __ATOMIC_RELAXED) < 0)
		return -1;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0) {
		if (errno == ENOSYS)
			__atomic_store_n(&have_pidfd, -1, __ATOMIC_RELAXED);
		return -1;
	}
	return fd; /* pidfds are always close-on-exec */
}

/*
 * Start the shell with stdin in_rd (-1: /dev/null), stdout out_wr and
 * stderr err_wr; or, with tty set, on that terminal (its slave path):
 * a new session whose controlling terminal it is (opened after setsid,
 * without O_NOCTTY), as fds 0, 1 and 2.
 */
static int spawn(struct exec_proc *p, int in_rd, int out_wr, int err_wr,
		 const char *tty)
{
	const struct exec_request *req = p->req;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t set;
	char *argv[4];
	char *const *envp;
	int rc;

	argv[0] = (char *)"sh";
	argv[1] = (char *)"-c";
	argv[2] = (char *)req->command;
	argv[3] = NULL;
	envp = req->env ? (char *const *)req->env : environ;

	if ((rc = posix_spawn_file_actions_init(&fa)))
		return rc;
	if ((rc = posix_spawnattr_init(&attr))) {
		posix_spawn_file_actions_destroy(&fa);
		return rc;
	}
	/* chdir first, so that a relative path of nothing else matters */
	if (req->cwd)
		rc = posix_spawn_file_actions_addchdir_np(&fa, req->cwd);
	if (!rc && tty) {
		rc = posix_spawn_file_actions_addopen(&fa, 0, tty, O_RDWR, 0);
		if (!rc)
			rc = posix_spawn_file_actions_adddup2(&fa, 0, 1);
		if (!rc)
			rc = posix_spawn_file_actions_adddup2(&fa, 0, 2);
	} else if (!rc) {
		if (in_rd >= 0)
			rc = posix_spawn_file_actions_adddup2(&fa, in_rd, 0);
		else
			rc = posix_spawn_file_actions_addopen(
				&fa, 0, "/dev/null", O_RDONLY, 0);
		if (!rc)
			rc = posix_spawn_file_actions_adddup2(&fa, out_wr, 1);
		if (!rc)
			rc = posix_spawn_file_actions_adddup2(&fa, err_wr, 2);
	}
	/*
	 * A session leader's process group is its pid too (and setpgid()
	 * would fail for it), so the group kill works the same way.
	 */
	if (!rc)
		rc = posix_spawnattr_setflags(
			&attr,
			(tty ? POSIX_SPAWN_SETSID : POSIX_SPAWN_SETPGROUP) |
				POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	if (!rc && !tty)
		rc = posix_spawnattr_setpgroup(&attr, 0);
	if (!rc) {
		/* every signal back to SIG_DFL (SIGPIPE above all) */
		sigfillset(&set);
		rc = posix_spawnattr_setsigdefault(&attr, &set);
	}
	if (!rc) {
		sigemptyset(&set);
		rc = posix_spawnattr_setsigmask(&attr, &set);
	}
	if (!rc) {
		/*
		 * Hold off exec_reap_orphans() until the pid is registered,
		 * or a fast child could be reaped as an "orphan".
		 */
		pthread_rwlock_rdlock(&umask_lock);
		pthread_rwlock_rdlock(&reaper_lock);
		rc = posix_spawn(&p->pid, SHELL_PATH, &fa, &attr, argv, envp);
		if (!rc)
			reg_add(p);
		pthread_rwlock_unlock(&reaper_lock);
		pthread_rwlock_unlock(&umask_lock);
	}
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

/*
 * exec_start() on a new pseudo-terminal (request tty): the master is
 * our output pipe, and with stdin_stream the caller's stdin too (a dup,
 * fd_tty, that outlives the output side until exec_finish()). The
 * slave is opened by the child only (see spawn()), so the terminal
 * hangs up once the command and everything it started closed it.
 */
static int start_tty(struct exec_proc *p)
{
	const struct exec_request *req = p->req;
	struct winsize ws = { 0 };
	struct termios t;
	char name[64];
	int m, slave = -1, rc;

	m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0) {
		start_failed(p, "posix_openpt", errno);
		return 0;
	}
	if (grantpt(m) < 0 || unlockpt(m) < 0 ||
	    ptsname_r(m, name, sizeof(name))) {
		start_failed(p, "pseudo-terminal", errno);
		close(m);
		return 0;
	}
	ws.ws_col = req->cols ? req->cols : 80;
	ws.ws_row = req->rows ? req->rows : 24;
	if (ioctl(m, TIOCSWINSZ, &ws) < 0 ||
	    fcntl(m, F_SETFL, O_NONBLOCK) < 0) {
		start_failed(p, "pseudo-terminal", errno);
		close(m);
		return 0;
	}
	if (req->tty_raw) {
		/* the line discipline's settings live on the slave side */
		slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (slave < 0 || tcgetattr(slave, &t) < 0) {
			start_failed(p, "pseudo-terminal", errno);
			if (slave >= 0)
				close(slave);
			close(m);
			return 0;
		}
		cfmakeraw(&t);
		tcsetattr(slave, TCSANOW, &t);
	}
	rc = spawn(p, -1, -1, -1, name);
	/* only now: closing it first would hang the terminal up */
	if (slave >= 0)
		close(slave);
	if (rc) {
		p->pid = -1;
		start_failed(p, NULL, rc);
		close(m);
		return 0;
	}
	p->pidfd = open_pidfd(p->pid);
	p->buf = xmalloc(EXEC_CHUNK);
	p->fd_out = m;
	p->fd_tty = fcntl(m, F_DUPFD_CLOEXEC, 3);
	return 0;
}

int exec_start(const struct exec_request *req, struct exec_proc **out)
{
	struct exec_proc *p;
	int in_pipe[2] = { -1, -1 };
	int out_pipe[2] = { -1, -1 };
	int err_pipe[2] = { -1, -1 };
	int rc;

	if (!out)
		return -1;
	*out = NULL;
	if (!req || !req->command)
		return -1;

	p = xcalloc(1, sizeof(*p));
	p->req = req;
	p->pid = -1;
	p->pidfd = p->fd_out = p->fd_err = p->fd_in = -1;
	p->fd_stdin = p->fd_tty = -1;
	p->watch_cancel = req->cancel_fd >= 0;
	p->cap = req->stream_cap ? req->stream_cap : EXEC_DEFAULT_CAP;
	exec_result_init(&p->res);
	*out = p;
	p->start_us = monotonic_us();
	if (req->timeout_ms > 0)
		p->deadline_us = p->start_us + (uint64_t)req->timeout_ms * 1000;

	if (req->tty)
		return start_tty(p);
	if ((req->stdin_data || req->stdin_stream) &&
	    pipe2(in_pipe, O_CLOEXEC) < 0) {
		start_failed(p, "pipe", errno);
		return 0;
	}
	if (pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0) {
		start_failed(p, "pipe", errno);
		goto cleanup;
	}
	/* larger pipes: fewer wake-ups and bigger chunks for fast writers */
	fcntl(out_pipe[0], F_SETPIPE_SZ, EXEC_CHUNK);
	fcntl(err_pipe[0], F_SETPIPE_SZ, EXEC_CHUNK);
	/* our end of stdin must never block the loop */
	if (in_pipe[1] >= 0 && fcntl(in_pipe[1], F_SETFL, O_NONBLOCK) < 0) {
		start_failed(p, "fcntl", errno);
		goto cleanup;
	}

	rc = spawn(p, in_pipe[0], out_pipe[1], err_pipe[1], NULL);
	if (rc) {
		p->pid = -1;
		start_failed(p, NULL, rc);
		goto cleanup;
	}
	p->pidfd = open_pidfd(p->pid);
	p->buf = xmalloc(EXEC_CHUNK);
	p->fd_out = out_pipe[0];
	p->fd_err = err_pipe[0];
	out_pipe[0] = err_pipe[0] = -1;
	if (req->stdin_stream) {
		p->fd_stdin = in_pipe[1];
		in_pipe[1] = -1;
	} else if (req->stdin_len) {
		p->fd_in = in_pipe[1];
		in_pipe[1] = -1;
	}

cleanup:
	close_fd(&in_pipe[0]);
	close_fd(&in_pipe[1]);
	close_fd(&out_pipe[0]);
	close_fd(&out_pipe[1]);
	close_fd(&err_pipe[0]);
	close_fd(&err_pipe[1]);
	return 0;
}

pid_t exec_pgid(const struct exec_proc *p)
{
	return p ? p->pid : -1;
}

void exec_cancel(struct exec_proc *p, const char *reason)
{
	const char *expected = NULL;

	if (!p || p->pid < 0 || load_int(&p->done))
		return;
	if (!__atomic_compare_exchange_n(&p->kill_reason, &expected, reason, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	kill(-p->pid, SIGKILL);
	/* in case the shell itself moved to another group */
	if (!load_int(&p->reaped))
		kill(p->pid, SIGKILL);
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

static void try_reap(struct exec_proc *p)
{
	pid_t r;

	do {
		r = wait4(p->pid, &p->status, WNOHANG, &p->ru);
	} while (r < 0 && errno == EINTR);
	if (r == 0) {
		/*
		 * The pidfd said "exited" but there is nothing to wait for
		 * yet (a tracer holds the zombie): poll instead of spinning.
		 */
		close_fd(&p->pidfd);
		return;
	}
	if (r < 0)
		p->lost_status = 1;
	p->reaped_us = monotonic_us();
	store_int(&p->reaped, 1);
	close_fd(&p->pidfd);
}

static void make_result(struct exec_proc *p)
{
	struct exec_result *res = &p->res;
	const char *killed = __atomic_load_n(&p->kill_reason, __ATOMIC_ACQUIRE);

	res->duration_ms = (int64_t)((p->reaped_us - p->start_us) / 1000);
	res->cpu_ms = (int64_t)p->ru.ru_utime.tv_sec * 1000 +
		      p->ru.ru_utime.tv_usec / 1000 +
		      (int64_t)p->ru.ru_stime.tv_sec * 1000 +
		      p->ru.ru_stime.tv_usec / 1000;
	res->peak_rss_kb = p->ru.ru_maxrss;
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

/* Finished when the shell was reaped and both pipes are closed. */
static int check_done(struct exec_proc *p)
{
	if (!load_int(&p->reaped) || p->fd_out >= 0 || p->fd_err >= 0)
		return 0;
	close_fd(&p->fd_in);
	make_result(p);
	store_int(&p->done, 1);
	return 1;
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
	int i_out = -1, i_err = -1, i_in = -1, i_pid = -1, i_cancel = -1;
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
	if (check_done(p))
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
	if (!load_int(&p->reaped)) {
		if (p->pidfd >= 0) {
			i_pid = nfd;
			pfd[nfd].fd = p->pidfd;
			pfd[nfd++].events = POLLIN;
		} else {
			/* no pidfd: look with wait4 at growing intervals */
			if (p->nopidfd_ms < EXEC_NOPIDFD_POLL_MIN_MS)
				p->nopidfd_ms = EXEC_NOPIDFD_POLL_MIN_MS;
			timeout = min_timeout(timeout, p->nopidfd_ms);
			p->nopidfd_ms =
				p->nopidfd_ms * 2 > EXEC_NOPIDFD_POLL_MAX_MS
					? EXEC_NOPIDFD_POLL_MAX_MS
					: p->nopidfd_ms * 2;
		}
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
	 * if another thread cancelled (exec_kill_all) and they had left
	 * the group, so look at the kill reason now and then.
	 */
	if (load_int(&p->reaped) && !p->draining)
		timeout = min_timeout(timeout, EXEC_ORPHAN_PIPES_POLL_MS);
	if (p->draining && (p->fd_out >= 0 || p->fd_err >= 0)) {
		uint64_t until = p->drain_quiet_us < p->drain_end_us
					 ? p->drain_quiet_us
					 : p->drain_end_us;

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
	}
	if (!load_int(&p->reaped) &&
	    (p->pidfd < 0 || (i_pid >= 0 && r > 0 && pfd[i_pid].revents)))
		try_reap(p);

	now = monotonic_us();
	if (p->deadline_us && now >= p->deadline_us)
		exec_cancel(p, "timeout");

	return check_done(p) ? 0 : 1;
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

void exec_finish(struct exec_proc *p, struct exec_result *res)
{
	if (!p)
		return;
	if (!load_int(&p->done))
		exec_cancel(p, "cancelled");
	p->out_paused = 0;
	while (exec_step(p, -1) > 0)
		;
	reg_del(p);
	close_fd(&p->pidfd);
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

/* Reap one child by pid if it has exited and nobody owns it. */
static int reap_if_orphan(pid_t pid)
{
	siginfo_t si;
	int owned;

	pthread_mutex_lock(&reg_lock);
	owned = reg_owns(pid);
	pthread_mutex_unlock(&reg_lock);
	if (owned)
		return 0;
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG) < 0)
		return 0;
	return si.si_pid == pid;
}

/*
 * The slow path, when the first exited child is one a command still has
 * to reap itself: list our children from /proc (every thread's
 * "children" file) and reap the untracked ones that have exited.
 */
static int reap_by_scan(void)
{
	char path[64];
	DIR *dir;
	struct dirent *de;
	int n = 0;

	dir = opendir("/proc/self/task");
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		struct strbuf sb = STRBUF_INIT;
		const char *s;
		char *end;

		if (de->d_name[0] == '.')
			continue;
		xsnprintf(path, sizeof(path), "/proc/self/task/%s/children",
			  de->d_name);
		if (strbuf_read_file(&sb, path, 64) < 0) {
			strbuf_release(&sb);
			continue;
		}
		for (s = sb.buf; *s;) {
			long v = strtol(s, &end, 10);

			if (end == s)
				break;
			if (v > 0 && v <= INT_MAX)
				n += reap_if_orphan((pid_t)v);
			s = end;
		}
		strbuf_release(&sb);
	}
	closedir(dir);
	return n;
}

int exec_reap_orphans(void)
{
	siginfo_t si;
	pid_t pid;
	int n = 0, owned;

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
			n += reap_by_scan();
			break;
		}
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG) < 0 ||
		    si.si_pid != pid)
			break;
		n++;
	}
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

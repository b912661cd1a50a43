/*
 * The local backend: a sandbox is a claim directory plus a resident
 * gosbx-runtime inside bubblewrap, seccomp and cgroups (isolate.h),
 * serving a unix socket in the claim directory.
 *
 * The channel (see backend-local.h for the layout): we bind and listen
 * on run/runtime.sock ourselves and hand the listening descriptor to
 * the runtime (--addr=fd:N), which is pid 1 of the sandbox and makes
 * itself non-dumpable. run/ is never bound into the sandbox, so code
 * inside can neither replace the socket (a symlink to another claim's
 * runtime, or any socket root can reach) nor reach the runtime itself
 * (and keep it alive past its idle TTL). The runtime's other
 * descriptors come from us too: the log, the "expired" report
 * (run/end), a readiness pipe and, for a sandbox that must not outlive
 * the process that made it, the owner pipe.
 */
#include "compat.h"
#include "session/claims.h"
#include "session/doctor.h"
#include "local/backend-local.h"
#include "dir.h"
#include "goenv.h"
#include "http.h"
#include "local/egress.h"
#include "local/gostd.h"
#include "local/isolate.h"
#include "local/netd-run.h"
#include "listen.h"
#include "run-command.h"
#include "session/session.h"
#include "local/storage.h"
#include "usage.h"
#include "utf8.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/un.h>
#include <time.h>

#define DEFAULT_TTL_MS (3600 * 1000)
#define READY_TIMEOUT_MS 15000
#define SANDBOX_RUNTIME "/opt/gosbx/gosbx-runtime"
/* in meta: the runtime got its socket from us (older claims: no) */
#define META_CHANNEL "channel fd"

struct local_state {
	struct strbuf dir; /* the claim directory */
	int run_fd;	   /* O_PATH descriptor of dir/run, or -1 */
	int owner_fd;	   /* write end of the owner pipe, or -1 (kept) */
	int lock_fd;	   /* run/owner, locked while we own it, or -1 */
	struct isolate_handle h;
	int have_handle;
	int spawned; /* h.pid is our child (create_claim()), not reattached */
	int dead;    /* reattached for its log only: the runtime is gone */
	uint64_t oom_before;
};

const char *local_claim_status_name(enum local_claim_status s)
{
	switch (s) {
	case LOCAL_CLAIM_READY:
		return "ready";
	case LOCAL_CLAIM_EXPIRED:
		return "expired";
	case LOCAL_CLAIM_SUSPENDED:
		return "suspended";
	default:
		return "dead";
	}
}

int local_claims_dir(struct strbuf *out)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");

	if (state && *state == '/')
		strbuf_addf(out, "%s/gosbx/claims", state);
	else if (home && *home)
		strbuf_addf(out, "%s/.local/state/gosbx/claims", home);
	else
		return error("cannot find the state directory: neither "
			     "XDG_STATE_HOME nor HOME is set");
	return 0;
}

int local_find_runtime(struct strbuf *out)
{
	const char *env = getenv("GOSBX_RUNTIME");
	char self[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		if (access(env, X_OK) < 0)
			return error_errno("GOSBX_RUNTIME '%s'", env);
		strbuf_addstr(out, env);
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			struct strbuf p = STRBUF_INIT;
			strbuf_add(&p, self, slash - self + 1);
			strbuf_addstr(&p, "gosbx-runtime");
			if (!access(p.buf, X_OK)) {
				strbuf_addbuf(out, &p);
				strbuf_release(&p);
				return 0;
			}
			strbuf_release(&p);
		}
	}
	{
		const char *path = getenv("PATH");
		struct strbuf p = STRBUF_INIT;

		while (path && *path) {
			const char *colon = strchrnul(path, ':');
			strbuf_reset(&p);
			strbuf_add(&p, path, colon - path);
			strbuf_addstr(&p, "/gosbx-runtime");
			if (!access(p.buf, X_OK)) {
				strbuf_addbuf(out, &p);
				strbuf_release(&p);
				return 0;
			}
			path = *colon ? colon + 1 : colon;
		}
		strbuf_release(&p);
	}
	return error("cannot find gosbx-runtime (install it next to gosbx, "
		     "on PATH, or set GOSBX_RUNTIME)");
}

/* "key value" lines of the meta file */
static const char *meta_get(const char *text, const char *key,
			    struct strbuf *val)
{
	size_t klen = strlen(key);
	const char *p = text;

	strbuf_reset(val);
	while (p && *p) {
		const char *eol = strchrnul(p, '\n');
		if (!strncmp(p, key, klen) && p[klen] == ' ') {
			strbuf_add(val, p + klen + 1, eol - p - klen - 1);
			return val->buf;
		}
		p = *eol ? eol + 1 : NULL;
	}
	return NULL;
}

static int64_t meta_int(const char *text, const char *key, int64_t def)
{
	struct strbuf v = STRBUF_INIT;
	int64_t n = def;

	if (meta_get(text, key, &v))
		n = strtoll(v.buf, NULL, 10);
	strbuf_release(&v);
	return n;
}

static int write_file_atomic(const char *path, const char *data, size_t len)
{
	struct strbuf tmp = STRBUF_INIT;
	int fd, ret = -1;

	strbuf_addf(&tmp, "%s.tmp", path);
	fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		error_errno("cannot write '%s'", tmp.buf);
		goto out;
	}
	if (write_in_full(fd, data, len) < 0 || close(fd) < 0) {
		error_errno("cannot write '%s'", tmp.buf);
		unlink(tmp.buf);
		goto out;
	}
	if (rename(tmp.buf, path) < 0) {
		error_errno("cannot rename '%s'", tmp.buf);
		unlink(tmp.buf);
		goto out;
	}
	ret = 0;
out:
	strbuf_release(&tmp);
	return ret;
}

/* five random characters that read well */
static void add_random(struct strbuf *out)
{
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	unsigned char rnd[5];

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		uint64_t t = monotonic_us() ^ (uint64_t)getpid() << 20;
		memcpy(rnd, &t, sizeof(rnd));
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		strbuf_addch(out, alphabet[rnd[i] % (sizeof(alphabet) - 1)]);
}

static void generate_name(struct strbuf *out)
{
	strbuf_addstr(out, "sandbox-");
	add_random(out);
}

/*
 * The last three lines of the runtime's log, for an error message:
 * escaped (utf8_escape_into()), since the log quotes what came from
 * the sandbox (and a claim made by an older gosbx let sandbox code
 * write into it).
 */
static void log_tail(const char *path, struct strbuf *out)
{
	struct strbuf log = STRBUF_INIT;
	const char *start;
	int lines = 0;

	if (strbuf_read_file(&log, path, 0) <= 0)
		goto out;
	strbuf_rtrim(&log);
	start = log.buf + log.len;
	while (start > log.buf && lines < 3) {
		start--;
		if (*start == '\n')
			lines++;
	}
	if (*start == '\n')
		start++;
	utf8_escape_into(out, start, log.len - (start - log.buf),
			 UTF8_ESCAPE_KEEP_LINES);
out:
	strbuf_release(&log);
}

/*
 * The host path of the runtime's socket. A unix socket address holds at
 * most 107 bytes, and claims can live deep in the file system: past
 * that, the socket is reached through /proc/self/fd/<fd of run/>, a
 * short name for the same directory.
 */
static int socket_path(struct local_state *ls, struct strbuf *out)
{
	struct sockaddr_un sun;

	strbuf_reset(out);
	strbuf_addf(out, "%s/run/runtime.sock", ls->dir.buf);
	if (out->len < sizeof(sun.sun_path))
		return 0;
	if (ls->run_fd < 0) {
		struct strbuf run = STRBUF_INIT;

		strbuf_addf(&run, "%s/run", ls->dir.buf);
		ls->run_fd = open(run.buf, O_PATH | O_DIRECTORY | O_CLOEXEC);
		strbuf_release(&run);
		if (ls->run_fd < 0)
			return error_errno("cannot open '%s/run'", ls->dir.buf);
	}
	strbuf_reset(out);
	strbuf_addf(out, "/proc/self/fd/%d/runtime.sock", ls->run_fd);
	return 0;
}

static int connect_runtime(struct session *s, struct local_state *ls)
{
	struct http_client_opts ho = { 0 };
	struct strbuf sock = STRBUF_INIT;

	if (socket_path(ls, &sock) < 0) {
		strbuf_release(&sock);
		return -1;
	}
	ho.unix_socket = sock.buf;
	ho.connect_timeout_ms = 5000;
	s->http = http_client_new("http://localhost", &ho);
	strbuf_release(&sock);
	return s->http ? 0 : -1;
}

/*
 * Why the sandbox of the claim in dir ended (issue 17: a death
 * certificate in `gosbx claims`, `gosbx logs` and the next result),
 * appended to why; for anyone, not only the process that spawned it:
 * run/end says "expired" when the runtime ended at its idle TTL, and
 * bwrap's monitor writes the runtime's end into run/status
 * (isolate_config.status_fd). h, when parsed, has the cgroup whose
 * out-of-memory kills are counted; oom_before is that count when the
 * caller first saw the sandbox (0 when it did not). wait_status: what
 * waitpid() said of bwrap to the process that spawned it, or NULL.
 */
static void death_reason(const char *dir, const struct isolate_handle *h,
			 uint64_t oom_before, const int *wait_status,
			 struct strbuf *why)
{
	struct strbuf p = STRBUF_INIT, text = STRBUF_INIT;
	const char *v;
	uint64_t ooms = 0;
	long code = -1;

	strbuf_addf(&p, "%s/run/end", dir);
	if (strbuf_read_file(&text, p.buf, 64) >= 0 &&
	    starts_with(text.buf, "expired")) {
		strbuf_addstr(why, "it expired after being idle for its TTL");
		goto out;
	}
	strbuf_reset(&p);
	strbuf_reset(&text);
	strbuf_addf(&p, "%s/run/status", dir);
	if (strbuf_read_file(&text, p.buf, 4096) >= 0 &&
	    (v = strstr(text.buf, "\"exit-code\":")))
		code = strtol(v + strlen("\"exit-code\":"), NULL, 10);
	/* without a record, bwrap's own end, if we saw it */
	if (code < 0 && wait_status && WIFSIGNALED(*wait_status))
		code = 128 + WTERMSIG(*wait_status);
	else if (code < 0 && wait_status && WIFEXITED(*wait_status))
		code = WEXITSTATUS(*wait_status);
	if (code > 128 && code < 128 + NSIG)
		strbuf_addf(why, "its runtime was killed by signal %ld (%s)",
			    code - 128, strsignal((int)(code - 128)));
	else if (code == 0)
		strbuf_addstr(why, "its runtime exited");
	else if (code > 0)
		strbuf_addf(why, "its runtime exited with status %ld", code);
	else
		strbuf_addstr(why, "its runtime is gone (how it ended was "
				   "not recorded: bwrap was killed too)");
	if (code == 128 + SIGKILL && !isolate_oom_kills(h, &ooms) &&
	    ooms > oom_before)
		strbuf_addstr(why, " after the memory limit was hit");
out:
	strbuf_release(&p);
	strbuf_release(&text);
}

/*
 * READY while the runtime (the sandbox's pid 1) lives; else EXPIRED if
 * it wrote "expired" into run/end (only it holds that file open; older
 * claims: the file run/expired exists), else DEAD.
 */
static enum local_claim_status claim_status(const char *dir, const char *meta,
					    struct isolate_handle *h)
{
	struct strbuf p = STRBUF_INIT, end = STRBUF_INIT;
	enum local_claim_status st = LOCAL_CLAIM_DEAD;

	if (strstr(meta, "\nmode suspended\n")) {
		st = LOCAL_CLAIM_SUSPENDED;
		goto out;
	}
	if (isolate_state_parse(h, meta) == 0 && isolate_alive(h)) {
		st = LOCAL_CLAIM_READY;
		goto out;
	}
	strbuf_addf(&p, "%s/run/end", dir);
	if (strbuf_read_file(&end, p.buf, 64) >= 0) {
		if (starts_with(end.buf, "expired"))
			st = LOCAL_CLAIM_EXPIRED;
		goto out;
	}
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/run/expired", dir);
	if (!access(p.buf, F_OK))
		st = LOCAL_CLAIM_EXPIRED;
out:
	strbuf_release(&p);
	strbuf_release(&end);
	return st;
}

/*
 * Connect to the runtime of the existing claim name. allow_dead: a dead
 * or expired claim is opened too, unconnected (ls->dead), for its log.
 */
static int reattach(struct session *s, struct local_state *ls, const char *name,
		    int allow_dead)
{
	struct strbuf meta = STRBUF_INIT, path = STRBUF_INIT;
	int ret = -1;

	strbuf_addf(&path, "%s/meta", ls->dir.buf);
	if (strbuf_read_file(&meta, path.buf, 0) < 0) {
		if (errno == ENOENT)
			error("no such claim '%s'", name);
		else
			error_errno("cannot read '%s'", path.buf);
		goto out;
	}
	isolate_handle_init(&ls->h);
	ls->have_handle = 1;
	switch (claim_status(ls->dir.buf, meta.buf, &ls->h)) {
	case LOCAL_CLAIM_READY:
		break;
	case LOCAL_CLAIM_SUSPENDED:
		if (allow_dead) {
			s->claim = xstrdup(name);
			ls->dead = 1;
			ret = 0;
			goto out;
		}
		error("claim '%s' is suspended; resume it with 'gosbx resume "
		      "%s'",
		      name, name);
		goto out;
	case LOCAL_CLAIM_EXPIRED:
		if (allow_dead) {
			s->claim = xstrdup(name);
			ls->dead = 1;
			ret = 0;
			goto out;
		}
		error("claim '%s' expired after being idle for its TTL; "
		      "remove it with 'gosbx close %s'",
		      name, name);
		goto out;
	default: {
		struct strbuf log = STRBUF_INIT, tail = STRBUF_INIT,
			      why = STRBUF_INIT;

		if (allow_dead) {
			s->claim = xstrdup(name);
			ls->dead = 1;
			ret = 0;
			goto out;
		}
		death_reason(ls->dir.buf, &ls->h, 0, NULL, &why);
		strbuf_addf(&log, "%s/runtime.log", ls->dir.buf);
		log_tail(log.buf, &tail);
		error("claim '%s' is dead: %s%s%s; remove it with 'gosbx "
		      "close %s'",
		      name, why.buf, tail.len ? ", last log: " : "", tail.buf,
		      name);
		strbuf_release(&log);
		strbuf_release(&tail);
		strbuf_release(&why);
		goto out;
	}
	}
	if (!strstr(meta.buf, "\n" META_CHANNEL "\n")) {
		/* its sandbox could replace the socket with a symlink */
		error("claim '%s' was opened by an older gosbx whose sandbox "
		      "can redirect this client; remove it with 'gosbx close "
		      "%s' and open a new one",
		      name, name);
		goto out;
	}
	s->claim = xstrdup(name);
	ret = connect_runtime(s, ls);
out:
	strbuf_release(&meta);
	strbuf_release(&path);
	return ret;
}

static void touch_claim(const char *dir)
{
	struct strbuf p = STRBUF_INIT;
	int fd;

	strbuf_addf(&p, "%s/last-used", dir);
	fd = open(p.buf, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		futimens(fd, NULL);
		close(fd);
	}
	strbuf_release(&p);
}

/*
 * As root the sandbox runs as a host uid of its own (isolate.h): reserve
 * it. The claim's storage (app/, home/ with the Go caches, tmp/) is
 * given to it by storage_create() (storage.h); run/ stays ours alone.
 */
static int give_claim(struct isolate_config *cfg)
{
	return isolate_reserve_ids(cfg);
}

/*
 * A sandbox that must not outlive us (not kept) gets an owner: we hold
 * run/owner locked (flock) as long as we live, and the write end of a
 * pipe whose read end the runtime watches (--owner-fd). When we end,
 * however we end, the runtime reads EOF and ends the sandbox, and the
 * next gosbx that lists or creates claims finds the lock free and
 * removes what is left (prune_orphaned()). The lock file is made under
 * another name and renamed, so it never exists unlocked.
 */
static int take_ownership(struct local_state *ls, int *owner_rd)
{
	struct strbuf tmp = STRBUF_INIT, lock = STRBUF_INIT;
	int fds[2] = { -1, -1 }, ret = -1;

	strbuf_addf(&tmp, "%s/run/owner.new", ls->dir.buf);
	strbuf_addf(&lock, "%s/run/owner", ls->dir.buf);
	ls->lock_fd =
		open(tmp.buf, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (ls->lock_fd < 0 || flock(ls->lock_fd, LOCK_EX | LOCK_NB) < 0 ||
	    rename(tmp.buf, lock.buf) < 0) {
		error_errno("cannot create '%s'", lock.buf);
		goto out;
	}
	if (pipe2(fds, O_CLOEXEC) < 0) {
		error_errno("cannot create sandbox: owner pipe");
		goto out;
	}
	ls->owner_fd = fds[1];
	*owner_rd = fds[0];
	ret = 0;
out:
	strbuf_release(&tmp);
	strbuf_release(&lock);
	return ret;
}

/*
 * Wait until the runtime says "ready" on its pipe. EOF first means it
 * ended (only it holds the write end: bwrap closes what it passes on).
 * Returns 0, or -1 with error() and the log's last lines.
 */
static int wait_ready(struct local_state *ls, int ready_fd)
{
	uint64_t deadline = monotonic_ms() + READY_TIMEOUT_MS;
	struct strbuf p = STRBUF_INIT, tail = STRBUF_INIT;
	const char *why = "did not start in time";
	char buf[16];
	int status;

	for (;;) {
		struct pollfd pfd = { ready_fd, POLLIN, 0 };
		int r = poll(&pfd, 1, 100);
		ssize_t n;

		if (r > 0) {
			n = read(ready_fd, buf, sizeof(buf));
			if (n > 0 && !memcmp(buf, "ready", 5))
				return 0;
			if (n == 0 || (n < 0 && errno != EINTR)) {
				why = "exited at start";
				break;
			}
		}
		if (isolate_wait(&ls->h, 0, &status) == 1) {
			why = "exited at start";
			break;
		}
		if (monotonic_ms() > deadline)
			break;
	}
	strbuf_addf(&p, "%s/runtime.log", ls->dir.buf);
	log_tail(p.buf, &tail);
	error("cannot create sandbox: the runtime %s%s%s", why,
	      tail.len ? ": " : "", tail.buf);
	strbuf_release(&p);
	strbuf_release(&tail);
	return -1;
}

static void close_fds(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
}

/*
 * The gosbx binary that runs netd: ourselves when we are gosbx, else
 * the one next to the runtime (a test program linking lib/).
 */
static void find_gosbx(const char *runtime, struct strbuf *out)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *slash;

	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash && !strcmp(slash + 1, "gosbx")) {
			strbuf_addstr(out, self);
			return;
		}
	}
	slash = strrchr(runtime, '/');
	if (slash)
		strbuf_add(out, runtime, slash - runtime + 1);
	strbuf_addstr(out, "gosbx");
}

/*
 * The standard library's shared build cache under the sandbox's own
 * (gostd.h): the directories of the overlay in its HOME, its own, and
 * the layer, once built. Nothing to do without a Go or a layer yet.
 */
static void plan_gocache(struct isolate_config *cfg, const char *home,
			 const char *go, struct strbuf *layer)
{
	static const char *const dirs[] = { "/.cache", "/.cache/go-build",
					    "/.cache/.go-build-upper",
					    "/.cache/.go-build-work" };
	struct strbuf p = STRBUF_INIT;
	struct stat st;
	int made = 0;
	size_t i;

	if (!*go || gostd_layer(go, layer) <= 0)
		return;
	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		strbuf_reset(&p);
		strbuf_addf(&p, "%s%s", home, dirs[i]);
		if (!mkdir(p.buf, 0755))
			made = 1;
		else if (errno != EEXIST)
			goto out;
	}
	/*
	 * The cache's 256 subdirectories in the sandbox's own layer: a
	 * merged directory takes its owner and mode from the upper one,
	 * so the sandbox adds entries there (the layer's are not its own)
	 */
	for (i = 0; i < 256; i++) {
		strbuf_reset(&p);
		strbuf_addf(&p, "%s/.cache/.go-build-upper/%02x", home,
			    (unsigned)i);
		if (!mkdir(p.buf, 0755))
			made = 1;
		else if (errno != EEXIST)
			goto out;
	}
	/*
	 * Given to the sandbox's uid, unless nothing was made and the
	 * top is its already (a resumed claim's: isolate_chown_tree()
	 * does the top last, and the sandbox makes only files of its
	 * own), so that a resume does not walk a large build cache
	 */
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/.cache", home);
	if ((made || lstat(p.buf, &st) < 0 || st.st_uid != cfg->host_uid ||
	     st.st_gid != cfg->host_gid) &&
	    isolate_chown_tree(cfg, p.buf) < 0)
		goto out;
	cfg->gocache_lower = layer->buf;
out:
	strbuf_release(&p);
}

/*
 * The network of a new claim (Documentation/protocol/network.md): none, the
 * host's
 * (--network), or netd's proxy (allow-list and/or Go modules). For
 * the proxy: check the allow-list before anything is created, give
 * the sandbox the user's checksum database settings and a
 * resolv.conf that names netd's DNS.
 */
static int plan_network(struct local_state *ls, const struct session_opts *o,
			struct isolate_config *cfg, struct strbuf *go,
			struct strbuf *resolv)
{
	static const char *const go_vars[] = { "GOSUMDB", "GOPRIVATE",
					       "GONOSUMDB", "GONOPROXY" };
	struct egress_policy policy;
	struct strbuf p = STRBUF_INIT, env = STRBUF_INIT;
	struct stat st;
	size_t i;
	int ret = -1;

	/* the go that fetches modules is the sandbox's (isolate.c) */
	if (isolate_host_go(o->go, go, &p) < 0 && o->go) {
		error("cannot create sandbox: go: %s", p.buf);
		strbuf_release(&p);
		return -1;
	}
	strbuf_reset(&p);
	cfg->go = o->go;
	strbuf_release(&p);
	if (o->network || (!o->allow_net && o->modules_off))
		return 0;
	egress_policy_init(&policy);
	if (o->allow_net && egress_policy_add(&policy, o->allow_net) < 0)
		goto out;
	cfg->net_proxy = 1;
	cfg->modules = !o->modules_off;
	/* the user's checksum database settings, for the go inside */
	if (cfg->modules && go->len &&
	    !goenv_lines(go->buf, go_vars, ARRAY_SIZE(go_vars), &env, &p)) {
		const char *line = env.buf;

		for (i = 0; i < ARRAY_SIZE(go_vars) && *line; i++) {
			const char *nl = strchrnul(line, '\n');

			if (nl > line)
				strvec_pushf(&cfg->env, "%s=%.*s", go_vars[i],
					     (int)(nl - line), line);
			line = *nl ? nl + 1 : nl;
		}
	}
	/* a host whose resolv.conf is a symlink keeps it (no DNS inside) */
	if (!lstat("/etc/resolv.conf", &st) && S_ISREG(st.st_mode)) {
		strbuf_addf(&p, "%s/run/resolv.conf", ls->dir.buf);
		if (write_file_atomic(p.buf, "nameserver 127.0.0.1\n", 21) < 0)
			goto out;
		chmod(p.buf, 0644);
		strbuf_addbuf(resolv, &p);
		cfg->resolv_conf = resolv->buf;
	}
	ret = 0;
out:
	egress_policy_release(&policy);
	strbuf_release(&p);
	strbuf_release(&env);
	return ret;
}

/* netd for a claim whose sandbox has the sockets (plan_network()) */
static int start_netd(struct local_state *ls, const struct session_opts *o,
		      const char *runtime, const char *go)
{
	struct netd_spawn n = { 0 };
	struct strbuf gosbx = STRBUF_INIT, log = STRBUF_INIT;
	int ret;

	find_gosbx(runtime, &gosbx);
	strbuf_addf(&log, "%s/runtime.log", ls->dir.buf);
	n.gosbx = gosbx.buf;
	n.log_path = log.buf;
	n.fds[0] = ls->h.net_fds[0];
	n.fds[1] = ls->h.net_fds[1];
	n.sandbox_pid = ls->h.pid;
	n.allow_net = o->allow_net;
	n.modules = !o->modules_off;
	n.go = *go ? go : NULL;
	ret = netd_spawn(&n);
	close(ls->h.net_fds[0]);
	close(ls->h.net_fds[1]);
	ls->h.net_fds[0] = ls->h.net_fds[1] = -1;
	strbuf_release(&gosbx);
	strbuf_release(&log);
	return ret;
}

/*
 * The Go release of the go binary <GOROOT>/bin/go (isolate_host_go()):
 * the first line of <GOROOT>/VERSION ("go1.26.8"), as Go's own
 * distributions and the distributions' packages have it. Owned;
 * NULL when there is none.
 */
static char *go_release(const char *go)
{
	struct strbuf p = STRBUF_INIT, v = STRBUF_INIT;
	char *ret = NULL;
	size_t len = strlen(go);

	if (len <= strlen("/bin/go") || !ends_with(go, "/bin/go"))
		return NULL;
	strbuf_add(&p, go, len - strlen("/bin/go"));
	strbuf_addstr(&p, "/VERSION");
	if (strbuf_read_file(&v, p.buf, 256) >= 0 && starts_with(v.buf, "go")) {
		strbuf_setlen(&v, strcspn(v.buf, "\n"));
		if (v.len > 2 && v.len < 64 &&
		    !utf8_needs_escape(v.buf, v.len, 0))
			ret = strbuf_detach(&v, NULL);
	}
	strbuf_release(&p);
	strbuf_release(&v);
	return ret;
}

/* What the new sandbox got (session.h, struct session_granted). */
static void note_granted(struct session *s, const struct isolate_config *cfg,
			 unsigned limits, const struct storage *st,
			 const char *go)
{
	s->granted.memory_bytes =
		limits & ISOLATE_LIMIT_MEMORY ? cfg->memory_bytes : 0;
	s->granted.cpus = limits & ISOLATE_LIMIT_CPU ? cfg->cpus : 0;
	s->granted.pids = limits & ISOLATE_LIMIT_PIDS ? cfg->pids : 0;
	s->granted.disk_bytes =
		st->quota == STORAGE_QUOTA_NONE ? 0 : st->disk_bytes;
	s->granted.go_version = go_release(go);
}

/*
 * The limits of a sandbox as meta records them: what was applied
 * (0: none), so that a resumed sandbox gets exactly those, asked
 * explicitly (never less: resume fails closed).
 */
static void meta_add_plan(struct strbuf *meta, const struct session_opts *o,
			  const struct isolate_config *cfg, unsigned limits)
{
	strbuf_addf(meta,
		    "limit_memory %" PRId64 "\nlimit_pids %" PRId64
		    "\nlimit_cpus %.17g\n",
		    limits & ISOLATE_LIMIT_MEMORY ? cfg->memory_bytes : 0,
		    limits & ISOLATE_LIMIT_PIDS ? cfg->pids : 0,
		    limits & ISOLATE_LIMIT_CPU ? cfg->cpus : 0.0);
	strbuf_addf(meta, "go_path %s\nmode running\n", o->go ? o->go : "");
}

/*
 * Start the sandbox of the claim in ls->dir on its storage st with
 * cfg (claim ids and storage set by the caller; the rest from o), write
 * meta (created: epoch seconds of the claim) and connect. owner_rd:
 * the read end of the owner pipe, or -1 (kept); closed here. Returns 0,
 * or -1 with error() and nothing left running (ls->have_handle 0).
 */
static int start_sandbox(struct session *s, struct local_state *ls,
			 const struct session_opts *o, const char *name,
			 struct isolate_config *cfg, const struct storage *st,
			 int64_t created, int owner_rd)
{
	struct strbuf p = STRBUF_INIT, runtime = STRBUF_INIT;
	struct strbuf meta = STRBUF_INIT, sock = STRBUF_INIT;
	struct strbuf cgname = STRBUF_INIT, go = STRBUF_INIT;
	struct strbuf resolv = STRBUF_INIT, gostd = STRBUF_INIT;
	struct listen_info li = { 0 };
	int64_t ttl = o->ttl_ms > 0 ? o->ttl_ms : DEFAULT_TTL_MS;
	/* what the runtime gets: socket, end report, ready, owner, log */
	int child_fds[5] = { -1, -1, -1, owner_rd, -1 };
	int ready_fd = -1, ret = -1, ready[2], status_fd = -1;
	enum { C_SOCK, C_END, C_READY, C_OWNER, C_LOG };

	if (local_find_runtime(&runtime) < 0)
		goto out;
	strbuf_addf(&p, "%s/runtime.log", ls->dir.buf);
	child_fds[C_LOG] =
		open(p.buf, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (child_fds[C_LOG] < 0) {
		error_errno("cannot create '%s'", p.buf);
		goto out;
	}
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/run/end", ls->dir.buf);
	child_fds[C_END] =
		open(p.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (child_fds[C_END] < 0) {
		error_errno("cannot create '%s'", p.buf);
		goto out;
	}
	/* bwrap's record of how the runtime ended (death_reason()) */
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/run/status", ls->dir.buf);
	status_fd =
		open(p.buf, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
		     0600);
	if (status_fd < 0) {
		error_errno("cannot create '%s'", p.buf);
		goto out;
	}
	if (socket_path(ls, &sock) < 0)
		goto out;
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/run/runtime.sock", ls->dir.buf);
	unlink(p.buf); /* a resumed claim's, from its last sandbox */
	strbuf_reset(&p);
	strbuf_addf(&p, "unix:%s", sock.buf);
	child_fds[C_SOCK] = listen_address(p.buf, NULL, 256, &li);
	if (child_fds[C_SOCK] < 0)
		goto out;
	if (pipe2(ready, O_CLOEXEC) < 0) {
		error_errno("cannot create sandbox: pipe");
		goto out;
	}
	ready_fd = ready[0];
	child_fds[C_READY] = ready[1];

	/*
	 * Cgroups (and systemd scopes) live in one namespace for the whole
	 * machine while claim names are only unique per state directory:
	 * a random suffix keeps two claims of the same name (other users,
	 * other XDG_STATE_HOME) from sharing, and killing, one group.
	 */
	strbuf_addf(&cgname, "%s-", name);
	add_random(&cgname);
	cfg->claim_name = cgname.buf;
	cfg->claim_dir = st->app.buf;
	cfg->home_dir = st->home.buf;
	cfg->tmp_dir = st->tmp.len ? st->tmp.buf : NULL;
	cfg->default_skipped = st->skipped.len ? st->skipped.buf : NULL;
	cfg->network = o->network;
	if (plan_network(ls, o, cfg, &go, &resolv) < 0)
		goto out;
	plan_gocache(cfg, st->home.buf, go.buf, &gostd);
	cfg->die_with_parent = 0;
	cfg->as_init = 1;
	cfg->memory_bytes = o->memory_bytes < 0 ? 0
			    : o->memory_bytes	? o->memory_bytes
						: SESSION_DEFAULT_MEMORY;
	cfg->memory_explicit = o->memory_set && o->memory_bytes > 0;
	cfg->pids = o->pids < 0 ? 0 : o->pids ? o->pids : SESSION_DEFAULT_PIDS;
	cfg->pids_explicit = o->pids_set && o->pids > 0;
	cfg->cpus = o->cpus < 0	  ? 0
		    : o->cpus > 0 ? o->cpus
				  : SESSION_DEFAULT_CPUS;
	cfg->cpus_explicit = o->cpus_set && o->cpus > 0;
	strvec_pushf(&cfg->ro_binds, "%s:" SANDBOX_RUNTIME, runtime.buf);
	strvec_push(&cfg->argv, SANDBOX_RUNTIME);
	strvec_pushf(&cfg->argv, "--addr=fd:%d", child_fds[C_SOCK]);
	strvec_push(&cfg->argv, "--workdir=/app");
	strvec_pushf(&cfg->argv, "--idle-timeout=%" PRId64 "ms", ttl);
	strvec_pushf(&cfg->argv, "--expired-fd=%d", child_fds[C_END]);
	strvec_pushf(&cfg->argv, "--ready-fd=%d", child_fds[C_READY]);
	if (child_fds[C_OWNER] >= 0)
		strvec_pushf(&cfg->argv, "--owner-fd=%d", child_fds[C_OWNER]);
	strvec_push(&cfg->argv, "--shutdown-grace=1s");
	for (int i = 0; i < C_LOG; i++)
		if (child_fds[i] >= 0)
			cfg->pass_fds[cfg->nr_pass_fds++] = child_fds[i];
	cfg->stdin_fd = -1;
	cfg->stdout_fd = child_fds[C_LOG];
	cfg->stderr_fd = child_fds[C_LOG];
	cfg->status_fd = status_fd;
	/* sanitizer builds: keep their reports in the log */
	if (getenv("ASAN_OPTIONS"))
		strvec_pushf(&cfg->env, "ASAN_OPTIONS=%s",
			     getenv("ASAN_OPTIONS"));
	if (getenv("UBSAN_OPTIONS"))
		strvec_pushf(&cfg->env, "UBSAN_OPTIONS=%s",
			     getenv("UBSAN_OPTIONS"));

	isolate_handle_init(&ls->h);
	ls->have_handle = 1;
	if (isolate_spawn(cfg, &ls->h) < 0) {
		ls->have_handle = 0;
		goto out;
	}
	ls->spawned = 1;
	if (cfg->net_proxy && start_netd(ls, o, runtime.buf, go.buf) < 0)
		goto out;
	/* what an out-of-memory result names (session.h) */
	if (ls->h.limits & ISOLATE_LIMIT_MEMORY)
		s->memory_limit_bytes = cfg->memory_bytes;
	note_granted(s, cfg, ls->h.limits, st, go.buf);
	/* theirs now: EOF on the ready pipe means the runtime is gone */
	close_fds(child_fds, ARRAY_SIZE(child_fds));

	strbuf_addf(&meta,
		    "name %s\ncreated %lld\nttl_ms %" PRId64
		    "\nnetwork %d\nkeep %d\npurpose %s\nowner %d\n" META_CHANNEL
		    "\nallow_net %s\nmodules %d\n",
		    name, (long long)created, ttl, o->network, o->keep,
		    o->purpose ? o->purpose : "", ls->owner_fd >= 0,
		    o->allow_net ? o->allow_net : "",
		    !o->network && !o->modules_off);
	meta_add_plan(&meta, o, cfg, ls->h.limits);
	isolate_state_format(&ls->h, &meta);
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/meta", ls->dir.buf);
	if (write_file_atomic(p.buf, meta.buf, meta.len) < 0)
		goto out;
	touch_claim(ls->dir.buf);

	if (wait_ready(ls, ready_fd) < 0)
		goto out;
	s->claim = xstrdup(name);
	ret = connect_runtime(s, ls);
out:
	close_fds(child_fds, ARRAY_SIZE(child_fds));
	if (ready_fd >= 0)
		close(ready_fd);
	if (status_fd >= 0)
		close(status_fd);
	listen_info_release(&li);
	if (ret < 0 && ls->have_handle) {
		isolate_destroy(&ls->h);
		ls->have_handle = 0;
	}
	cfg->claim_name = NULL;
	strbuf_release(&p);
	strbuf_release(&runtime);
	strbuf_release(&meta);
	strbuf_release(&sock);
	strbuf_release(&cgname);
	strbuf_release(&go);
	strbuf_release(&resolv);
	strbuf_release(&gostd);
	return ret;
}

static int create_claim(struct session *s, struct local_state *ls,
			const struct session_opts *o, const char *name)
{
	struct isolate_config cfg;
	struct strbuf p = STRBUF_INIT, templates = STRBUF_INIT;
	struct storage_opts so = STORAGE_OPTS_INIT;
	struct storage st;
	int ret = -1, created = 0, owner_rd = -1, have_cfg = 0;

	storage_init(&st);
	if (mkdir(ls->dir.buf, 0700) < 0) {
		if (errno == EEXIST)
			error("claim '%s' already exists", name);
		else
			error_errno("cannot create claim directory '%s'",
				    ls->dir.buf);
		goto out;
	}
	created = 1;
	/* ours alone: the sandbox never sees run/ (see the top) */
	strbuf_addf(&p, "%s/run", ls->dir.buf);
	if (mkdir(p.buf, 0700) < 0) {
		error_errno("cannot create '%s'", p.buf);
		goto out;
	}
	if (!o->keep && take_ownership(ls, &owner_rd) < 0)
		goto out;

	isolate_config_init(&cfg);
	have_cfg = 1;
	if (give_claim(&cfg) < 0)
		goto out;
	/*
	 * /app, HOME (the Go caches) and /tmp: the claim's own storage,
	 * owned by the sandbox's host ids (as root a uid of its own)
	 */
	if (cfg.host_uid != geteuid()) {
		so.owner = cfg.host_uid;
		so.group = cfg.host_gid;
	}
	so.disk_bytes = o->disk_bytes;
	so.disk_explicit = o->disk_bytes > 0;
	/* formatted images to copy: <state>/gosbx/disk-templates */
	if (!local_claims_dir(&templates)) {
		strbuf_setlen(&templates, templates.len - strlen("claims"));
		strbuf_addstr(&templates, "disk-templates");
		so.template_dir = templates.buf;
	}
	if (storage_create(&st, ls->dir.buf, &so) < 0)
		goto out;
	ret = start_sandbox(s, ls, o, name, &cfg, &st, (int64_t)time(NULL),
			    owner_rd);
	owner_rd = -1;
out:
	if (owner_rd >= 0)
		close(owner_rd);
	if (have_cfg)
		isolate_config_release(&cfg);
	if (ret < 0 && created) {
		storage_unmount(ls->dir.buf);
		remove_tree(ls->dir.buf);
	}
	storage_release(&st);
	strbuf_release(&templates);
	strbuf_release(&p);
	return ret;
}

static int delete_dir_claim(const char *dir, const char *name);

/*
 * Remove what owners that died left behind (Documentation/technical/design.md:
 * nothing left behind): a claim with run/owner whose lock nobody holds belonged
 * to a gosbx that ended without closing it (SIGKILL, crash). Its runtime ended
 * when the owner pipe reached EOF; kill what may still run, and remove its
 * cgroups and directory. Kept claims have no run/owner and are never touched
 * here, expired or not. We hold the lock while removing, so two gosbx never
 * remove the same claim.
 */
static void prune_orphaned(const char *claims_dir)
{
	struct strbuf p = STRBUF_INIT;
	struct dirent *de;
	DIR *d = opendir(claims_dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		int fd;

		if (de->d_name[0] == '.' ||
		    session_check_claim_name(de->d_name) < 0)
			continue;
		strbuf_reset(&p);
		strbuf_addf(&p, "%s/%s/run/owner", claims_dir, de->d_name);
		fd = open(p.buf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!flock(fd, LOCK_EX | LOCK_NB)) {
			strbuf_reset(&p);
			strbuf_addf(&p, "%s/%s", claims_dir, de->d_name);
			if (delete_dir_claim(p.buf, de->d_name) < 0)
				warning("could not remove claim '%s' left by "
					"a gosbx that ended",
					de->d_name);
		}
		close(fd);
	}
	closedir(d);
	strbuf_release(&p);
}

static void local_state_free(struct session *s)
{
	struct local_state *ls = s->backend;

	if (!ls)
		return;
	if (ls->have_handle)
		isolate_handle_free(&ls->h);
	if (ls->run_fd >= 0)
		close(ls->run_fd);
	/* an owned sandbox ends now (its runtime reads EOF) */
	if (ls->owner_fd >= 0)
		close(ls->owner_fd);
	if (ls->lock_fd >= 0)
		close(ls->lock_fd);
	strbuf_release(&ls->dir);
	free(ls);
	s->backend = NULL;
}

static int local_open(struct session *s, const struct session_opts *o)
{
	struct local_state *ls = xcalloc(1, sizeof(*ls));
	struct strbuf name = STRBUF_INIT;
	int ret;

	strbuf_init(&ls->dir, 0);
	ls->run_fd = ls->owner_fd = ls->lock_fd = -1;
	s->backend = ls;
	if (o->claim)
		strbuf_addstr(&name, o->claim);
	else if (o->name)
		strbuf_addstr(&name, o->name);
	else
		generate_name(&name);
	if (session_check_claim_name(name.buf) < 0 ||
	    local_claims_dir(&ls->dir) < 0 || mkdir_p(ls->dir.buf, 0700) < 0) {
		if (errno)
			error_errno("cannot create '%s'", ls->dir.buf);
		ret = -1;
		goto out;
	}
	if (!o->claim)
		prune_orphaned(ls->dir.buf);
	strbuf_addf(&ls->dir, "/%s", name.buf);
	if (o->claim)
		ret = reattach(s, ls, name.buf, o->allow_dead);
	else
		ret = create_claim(s, ls, o, name.buf);
out:
	if (ret < 0)
		local_state_free(s);
	strbuf_release(&name);
	return ret;
}

static int delete_dir_claim(const char *dir, const char *name)
{
	struct strbuf meta = STRBUF_INIT, p = STRBUF_INIT;
	struct isolate_handle h;
	int ret = 0;

	strbuf_addf(&p, "%s/meta", dir);
	isolate_handle_init(&h);
	if (strbuf_read_file(&meta, p.buf, 0) >= 0 &&
	    !isolate_state_parse(&h, meta.buf)) {
		if (isolate_destroy(&h) < 0)
			ret = -1;
	} else {
		isolate_handle_free(&h);
	}
	if (storage_unmount(dir) < 0)
		ret = -1;
	if (remove_tree(dir) < 0)
		ret = error("cannot remove claim directory '%s'", dir);
	strbuf_release(&meta);
	strbuf_release(&p);
	return ret;
}

static int local_destroy(struct session *s)
{
	struct local_state *ls = s->backend;
	int ret;

	if (!ls)
		return 0;
	if (ls->have_handle) {
		/* isolate_destroy() kills, reaps and removes cgroups */
		ret = isolate_destroy(&ls->h);
		ls->have_handle = 0;
		if (storage_unmount(ls->dir.buf) < 0)
			ret = -1;
		if (remove_tree(ls->dir.buf) < 0)
			ret = error("cannot remove claim directory '%s'",
				    ls->dir.buf);
	} else {
		ret = delete_dir_claim(ls->dir.buf, s->claim);
	}
	local_state_free(s);
	return ret;
}

static void local_detach(struct session *s)
{
	local_state_free(s);
}

static void local_touch(struct session *s)
{
	struct local_state *ls = s->backend;

	if (ls)
		touch_claim(ls->dir.buf);
}

/*
 * The go command's refusal of a go.mod (or go.work) that asks for a
 * newer Go than it is, when it may not switch toolchains: "go: go.mod
 * requires go >= 1.27.1 (running go 1.26.8; GOTOOLCHAIN=local)"
 * (cmd/go, GOTOOLCHAIN semantics). gosbx sets GOTOOLCHAIN=local when
 * modules are off (isolate.c), so the line names the Go the sandbox
 * has but not how to get another: say it (issue 18). Sets hint to one
 * line when the last bytes of stderr, tail, have Go's refusal.
 */
void local_go_version_hint(const struct strbuf *tail, struct strbuf *hint)
{
	static const char want[] = " requires go >= ";
	static const char run[] = " (running go ";
	const char *p, *end = tail->buf + tail->len, *last = NULL;
	const char *need, *have;
	int need_len, have_len;

	for (p = tail->buf; (p = memmem(p, end - p, want, sizeof(want) - 1));
	     p++)
		last = p;
	if (!last)
		return;
	need = last + sizeof(want) - 1;
	need_len = strspn(need, "0123456789.rcbeta");
	if (!need_len || strncmp(need + need_len, run, sizeof(run) - 1))
		return;
	have = need + need_len + sizeof(run) - 1;
	have_len = strspn(have, "0123456789.rcbeta");
	if (!have_len || strncmp(have + have_len, "; GOTOOLCHAIN=local)",
				 strlen("; GOTOOLCHAIN=local)")))
		return;
	strbuf_addf(hint,
		    "gosbx: this sandbox has go %.*s and may not fetch go %.*s "
		    "(GOTOOLCHAIN=local, as with --modules=off); open it "
		    "with --go=<a GOROOT of go %.*s or newer>, or with "
		    "modules on to fetch that toolchain\n",
		    have_len, have, need_len, need, need_len, need);
}

static void local_exec_hook(struct session *s, int after,
			    struct session_result *res)
{
	struct local_state *ls = s->backend;
	uint64_t n = 0;

	if (!ls || !ls->have_handle)
		return;
	if (!after) {
		if (isolate_oom_kills(&ls->h, &ls->oom_before) < 0)
			ls->oom_before = UINT64_MAX;
		return;
	}
	if (res->exit_code)
		local_go_version_hint(res->err_tail.len ? &res->err_tail
							: &res->err,
				      &res->hint);
	if (ls->oom_before == UINT64_MAX ||
	    (strcmp(res->reason, "signaled") && strcmp(res->reason, "exited")))
		return;
	if (!(res->signal == 9 || res->exit_code == 137))
		return;
	if (!isolate_oom_kills(&ls->h, &n) && n > ls->oom_before)
		res->reason = "oom";
}

/* the claim's runtime.log to fd; with follow, what is added too */
static int copy_log(struct session *s, int follow, int fd,
		    volatile sig_atomic_t *cancel)
{
	struct local_state *ls = s->backend;
	struct strbuf p = STRBUF_INIT, pend = STRBUF_INIT;
	char buf[65536];
	int in, ret = 0;

	strbuf_addf(&p, "%s/runtime.log", ls->dir.buf);
	in = open(p.buf, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (in < 0) {
		ret = error_errno("cannot read the log of claim '%s' ('%s')",
				  s->claim, p.buf);
		strbuf_release(&p);
		return ret;
	}
	strbuf_release(&p);
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR && !(cancel && *cancel))
			continue;
		if (n < 0) {
			if (!(cancel && *cancel))
				ret = error_errno("cannot read the log of "
						  "claim '%s'",
						  s->claim);
			break;
		}
		if (n > 0) {
			/* the sandbox can write into the log: no control */
			strbuf_add(&pend, buf, (size_t)n);
			if (session_write_sandbox_text(fd, &pend, 0) < 0) {
				ret = error_errno("cannot write the log");
				break;
			}
			continue;
		}
		if (!follow || (cancel && *cancel))
			break;
		/* at the end: the runtime appends; look again soon */
		poll(NULL, 0, 200);
		if (cancel && *cancel)
			break;
	}
	if (!ret && pend.len && session_write_sandbox_text(fd, &pend, 1) < 0)
		ret = error_errno("cannot write the log");
	strbuf_release(&pend);
	close(in);
	return ret;
}

/* Copy the claim's runtime.log to fd; with follow, what is added too. */
static int local_logs(struct session *s, int follow, int fd,
		      volatile sig_atomic_t *cancel)
{
	struct local_state *ls = s->backend;
	struct strbuf why = STRBUF_INIT;
	int ret;

	/* the log of a dead claim is all there will be: no following */
	ret = copy_log(s, ls->dead ? 0 : follow, fd, cancel);
	if (ls->dead) {
		death_reason(ls->dir.buf, &ls->h, 0, NULL, &why);
		fprintf(stderr, "gosbx: claim '%s' is %s: %s\n", s->claim,
			starts_with(why.buf, "it expired") ? "expired" : "dead",
			why.buf);
		strbuf_release(&why);
	}
	return ret;
}
/* backend_ops.gone: the sandbox's pid 1 ended; say how */
static int local_gone(struct session *s, struct strbuf *why)
{
	struct local_state *ls = s->backend;
	int status = 0, reaped = 0;

	if (!ls || !ls->have_handle)
		return 0;
	if (ls->dead)
		goto gone;
	/*
	 * A request failed: bwrap may take a moment to follow its pid 1
	 * (ours to wait for when we spawned it; else it must be gone).
	 * bwrap's record in run/status says how it ended either way.
	 */
	reaped = ls->spawned && isolate_wait(&ls->h, 500, &status) == 1;
	if (!reaped && isolate_alive(&ls->h))
		return 0;
gone:
	death_reason(ls->dir.buf, &ls->h,
		     ls->oom_before == UINT64_MAX ? 0 : ls->oom_before,
		     reaped ? &status : NULL, why);
	return 1;
}

/* backend_ops.check_limits: the limits create_claim() would ask for */
static int local_check_limits(const struct session_opts *o)
{
	struct isolate_config cfg;
	int ret;

	isolate_config_init(&cfg);
	cfg.memory_bytes = o->memory_bytes < 0 ? 0
			   : o->memory_bytes   ? o->memory_bytes
					       : SESSION_DEFAULT_MEMORY;
	cfg.pids = o->pids < 0 ? 0 : o->pids ? o->pids : SESSION_DEFAULT_PIDS;
	cfg.cpus = o->cpus < 0	 ? 0
		   : o->cpus > 0 ? o->cpus
				 : SESSION_DEFAULT_CPUS;
	ret = isolate_limits_check(&cfg);
	isolate_config_release(&cfg);
	return ret;
}

/*
 * The limits and TTL a new sandbox of opts gets when it leaves them at
 * 0 (create_claim(); the disk as storage_prepare() takes it where a
 * quota can be applied); opts's own where given, 0 for none.
 */
static int local_defaults(const struct session_opts *o,
			  struct backend_defaults *d)
{
	d->memory_bytes = o->memory_bytes < 0 ? 0
			  : o->memory_bytes   ? o->memory_bytes
					      : SESSION_DEFAULT_MEMORY;
	d->pids = o->pids < 0 ? 0 : o->pids ? o->pids : SESSION_DEFAULT_PIDS;
	d->cpus = o->cpus < 0	? 0
		  : o->cpus > 0 ? o->cpus
				: SESSION_DEFAULT_CPUS;
	d->disk_bytes = o->disk_bytes < 0 ? 0
			: o->disk_bytes	  ? o->disk_bytes
					  : STORAGE_DEFAULT_DISK;
	d->ttl_ms = o->ttl_ms > 0 ? o->ttl_ms : DEFAULT_TTL_MS;
	return 0;
}

static int local_op_delete(const struct session_opts *opts, const char *name);
static int local_op_keep(const struct session_opts *opts, const char *name);
static int local_op_delete_all(const struct session_opts *opts,
			       void (*closed)(const char *name, void *data),
			       void *data);
static int local_op_suspend(const struct session_opts *opts, const char *name);
static int local_op_resume(const struct session_opts *opts, const char *name);

const struct backend_ops backend_local = {
	.name = "local",
	.caps = BACKEND_ALLOW_NET | BACKEND_GO | BACKEND_DEFAULT_LIMITS,
	.defaults = local_defaults,
	.min_memory_bytes = ISOLATE_MIN_MEMORY,
	.min_pids = ISOLATE_MIN_PIDS,
	.min_disk_bytes = STORAGE_MIN_DISK,
	.delete_claim = local_op_delete,
	.keep_claim = local_op_keep,
	.delete_all = local_op_delete_all,
	.suspend_claim = local_op_suspend,
	.resume_claim = local_op_resume,
	.open = local_open,
	.destroy = local_destroy,
	.detach = local_detach,
	.touch = local_touch,
	.exec_hook = local_exec_hook,
	.logs = local_logs,
	.check_limits = local_check_limits,
	.gone = local_gone,
	.list = local_claims_print,
	.prune = local_claims_prune,
	.doctor = doctor_local,
};

int local_claim_delete(const char *name)
{
	struct strbuf dir = STRBUF_INIT;
	struct stat st;
	int ret = -1;

	if (session_check_claim_name(name) < 0 || local_claims_dir(&dir) < 0)
		goto out;
	strbuf_addf(&dir, "/%s", name);
	if (lstat(dir.buf, &st) < 0 || !S_ISDIR(st.st_mode)) {
		error("no such claim '%s'", name);
		goto out;
	}
	ret = delete_dir_claim(dir.buf, name);
out:
	strbuf_release(&dir);
	return ret;
}

static int64_t tree_bytes;
static int add_bytes(const char *path, const struct stat *st, int flag,
		     struct FTW *ftw)
{
	if (flag == FTW_F || flag == FTW_SL || flag == FTW_D)
		tree_bytes += (int64_t)st->st_blocks * 512;
	return 0;
}

static int cmp_info(const void *a, const void *b)
{
	return strcmp(((const struct local_claim_info *)a)->name,
		      ((const struct local_claim_info *)b)->name);
}

int local_claims_list(struct local_claim_info **out, size_t *nr, int with_size)
{
	struct strbuf dir = STRBUF_INIT, p = STRBUF_INIT;
	struct strbuf meta = STRBUF_INIT, v = STRBUF_INIT;
	struct local_claim_info *list = NULL;
	size_t n = 0, alloc = 0;
	struct dirent *de;
	DIR *d;

	*out = NULL;
	*nr = 0;
	if (local_claims_dir(&dir) < 0)
		return -1;
	prune_orphaned(dir.buf);
	d = opendir(dir.buf);
	if (!d) {
		int ret = 0;

		if (errno != ENOENT)
			ret = error_errno("cannot read '%s'", dir.buf);
		strbuf_release(&dir);
		return ret;
	}
	while ((de = readdir(d))) {
		struct local_claim_info *c;
		struct isolate_handle h;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		strbuf_reset(&p);
		strbuf_addf(&p, "%s/%s/meta", dir.buf, de->d_name);
		strbuf_reset(&meta);
		if (strbuf_read_file(&meta, p.buf, 0) < 0)
			continue; /* being created or deleted */
		ALLOC_GROW(list, n + 1, alloc);
		c = &list[n++];
		memset(c, 0, sizeof(*c));
		c->name = xstrdup(de->d_name);
		c->created = meta_int(meta.buf, "created", 0);
		c->ttl_ms = meta_int(meta.buf, "ttl_ms", DEFAULT_TTL_MS);
		c->network = meta_int(meta.buf, "network", 0);
		c->keep = meta_int(meta.buf, "keep", 0);
		c->purpose =
			xstrdup(meta_get(meta.buf, "purpose", &v) ? v.buf : "");
		strbuf_reset(&p);
		strbuf_addf(&p, "%s/%s", dir.buf, de->d_name);
		isolate_handle_init(&h);
		c->status = claim_status(p.buf, meta.buf, &h);
		if (c->status != LOCAL_CLAIM_READY &&
		    c->status != LOCAL_CLAIM_SUSPENDED) {
			struct strbuf why = STRBUF_INIT;

			death_reason(p.buf, &h, 0, NULL, &why);
			c->reason = strbuf_detach(&why, NULL);
		}
		isolate_handle_free(&h);
		strbuf_addstr(&p, "/last-used");
		c->last_used = !stat(p.buf, &st) ? st.st_mtime : c->created;
		c->app_bytes = -1;
		if (with_size) {
			struct storage sto;

			strbuf_setlen(&p, p.len - strlen("/last-used"));
			storage_init(&sto);
			storage_paths(&sto, p.buf);
			tree_bytes = 0;
			nftw(sto.app.buf, add_bytes, 16, FTW_PHYS);
			storage_release(&sto);
			c->app_bytes = tree_bytes;
		}
	}
	closedir(d);
	if (n)
		qsort(list, n, sizeof(*list), cmp_info);
	*out = list;
	*nr = n;
	strbuf_release(&dir);
	strbuf_release(&p);
	strbuf_release(&meta);
	strbuf_release(&v);
	return 0;
}

void local_claims_free(struct local_claim_info *c, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		free(c[i].name);
		free(c[i].purpose);
		free(c[i].reason);
	}
	free(c);
}

/* ---- backend_ops that work on claims without a session ---- */

static int local_op_delete(const struct session_opts *opts, const char *name)
{
	(void)opts;
	return local_claim_delete(name);
}

/* --disconnect: nothing to drop, the claim only has to exist */
static int local_op_keep(const struct session_opts *opts, const char *name)
{
	struct strbuf dir = STRBUF_INIT;
	struct stat st;
	int ret = -1;

	(void)opts;
	if (local_claims_dir(&dir) < 0)
		goto out;
	strbuf_addf(&dir, "/%s", name);
	if (lstat(dir.buf, &st) < 0 || !S_ISDIR(st.st_mode)) {
		error("no such claim '%s'", name);
		goto out;
	}
	ret = 0;
out:
	strbuf_release(&dir);
	return ret;
}

static int local_op_delete_all(const struct session_opts *opts,
			       void (*closed)(const char *name, void *data),
			       void *data)
{
	struct local_claim_info *list;
	size_t nr;
	int ret = 0;

	(void)opts;
	if (local_claims_list(&list, &nr, 0) < 0)
		return -1;
	for (size_t i = 0; i < nr; i++) {
		if (local_claim_delete(list[i].name) < 0)
			ret = -1;
		else if (closed)
			closed(list[i].name, data);
	}
	local_claims_free(list, nr);
	return ret;
}

/* ---- suspend and resume (gosbx-suspend(1)) ---- */

/*
 * Lock the claim in dir against another suspend or resume (flock of
 * its run/, held until the descriptor is closed). Returns the
 * descriptor, or -1 with error() ("no such claim").
 */
static int lock_claim(const char *dir, const char *name)
{
	struct strbuf p = STRBUF_INIT;
	int fd;

	strbuf_addf(&p, "%s/run", dir);
	fd = open(p.buf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			error("no such claim '%s'", name);
		else
			error_errno("cannot open '%s'", p.buf);
	} else if (flock(fd, LOCK_EX) < 0) {
		error_errno("cannot lock '%s'", p.buf);
		close(fd);
		fd = -1;
	}
	strbuf_release(&p);
	return fd;
}

/*
 * The claim directory of name into dir and its meta into meta, for a
 * claim gosbx suspend can work on: one that records its mode (made by a
 * gosbx that knows how to resume it) and is kept. 0, or -1 with error().
 */
static int suspendable(const char *name, struct strbuf *dir,
		       struct strbuf *meta)
{
	struct strbuf p = STRBUF_INIT;
	int ret = -1;

	if (local_claims_dir(dir) < 0)
		goto out;
	strbuf_addf(dir, "/%s", name);
	strbuf_addf(&p, "%s/meta", dir->buf);
	if (strbuf_read_file(meta, p.buf, 0) < 0) {
		if (errno == ENOENT)
			error("no such claim '%s'", name);
		else
			error_errno("cannot read '%s'", p.buf);
		goto out;
	}
	if (!strstr(meta->buf, "\nmode ")) {
		error("claim '%s' was opened by an older gosbx that did not "
		      "record how to start it again; close it and open a new "
		      "one",
		      name);
		goto out;
	}
	if (!meta_int(meta->buf, "keep", 0)) {
		error("claim '%s' is not kept: it ends with the gosbx that "
		      "opened it; only a claim of 'gosbx open' (or 'gosbx "
		      "mcp --persistent') can be suspended",
		      name);
		goto out;
	}
	ret = 0;
out:
	strbuf_release(&p);
	return ret;
}

/*
 * suspendable(), then the claim's lock into *lock (the caller unlocks),
 * then its meta read again under the lock. 0, or -1 with error().
 */
static int lock_suspendable(const char *name, struct strbuf *dir,
			    struct strbuf *meta, int *lock)
{
	struct strbuf p = STRBUF_INIT;
	int ret = -1;

	if (suspendable(name, dir, meta) < 0 ||
	    (*lock = lock_claim(dir->buf, name)) < 0)
		goto out;
	strbuf_reset(meta);
	strbuf_addf(&p, "%s/meta", dir->buf);
	if (strbuf_read_file(meta, p.buf, 0) < 0) {
		error_errno("cannot read '%s'", p.buf);
		goto out;
	}
	ret = 0;
out:
	strbuf_release(&p);
	return ret;
}

/* meta with its "mode" line replaced by mode, written to dir/meta */
static int write_mode(const char *dir, const char *meta, const char *mode)
{
	struct strbuf out = STRBUF_INIT, p = STRBUF_INIT;
	const char *line = meta;
	int ret;

	while (*line) {
		const char *eol = strchrnul(line, '\n');

		if (!starts_with(line, "mode "))
			strbuf_add(&out, line, eol - line);
		if (!starts_with(line, "mode ") && *eol)
			strbuf_addch(&out, '\n');
		line = *eol ? eol + 1 : eol;
	}
	strbuf_addf(&out, "mode %s\n", mode);
	strbuf_addf(&p, "%s/meta", dir);
	ret = write_file_atomic(p.buf, out.buf, out.len);
	strbuf_release(&out);
	strbuf_release(&p);
	return ret;
}

/*
 * Wait until the killed sandbox of h (its pids and start times only)
 * has ended: its pid 1 gone, the kernel has ended every process of its
 * pid namespace (without cgroups, a normal user's sandbox, the kill
 * reaches them only through that). At most 5 s. 0, or -1 with error().
 */
static int wait_gone(const struct isolate_handle *h, const char *name)
{
	uint64_t deadline = monotonic_ms() + 5000;

	while (isolate_alive(h)) {
		if (monotonic_ms() > deadline)
			return error("cannot suspend claim '%s': its sandbox "
				     "(pid %d) still runs 5 s after SIGKILL",
				     name, (int)h->child_pid);
		poll(NULL, 0, 2);
	}
	return 0;
}

/*
 * Stop every process of the sandbox (its runtime, what it started, netd
 * with it), remove its cgroups (its namespaces end with its last
 * process), give back its host uid; keep the claim directory, its
 * storage (mounted) and meta, marked suspended.
 */
static int local_op_suspend(const struct session_opts *opts, const char *name)
{
	struct strbuf dir = STRBUF_INIT, meta = STRBUF_INIT;
	struct strbuf p = STRBUF_INIT;
	struct isolate_handle h, pids;
	int lock = -1, ret = -1;

	(void)opts;
	isolate_handle_init(&h);
	if (lock_suspendable(name, &dir, &meta, &lock) < 0)
		goto out;
	if (claim_status(dir.buf, meta.buf, &h) == LOCAL_CLAIM_SUSPENDED) {
		ret = 1;
		goto out;
	}
	/* an expired or dead one too: what is left goes, the files stay */
	isolate_handle_init(&pids);
	pids.pid = h.pid;
	pids.start = h.start;
	pids.child_pid = h.child_pid;
	pids.child_start = h.child_start;
	ret = isolate_destroy(&h);
	isolate_handle_init(&h);
	if (!ret)
		ret = wait_gone(&pids, name);
	isolate_handle_free(&pids);
	if (ret < 0 || write_mode(dir.buf, meta.buf, "suspended") < 0) {
		ret = -1;
		goto out;
	}
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/run/runtime.sock", dir.buf);
	unlink(p.buf);
out:
	isolate_handle_free(&h);
	if (lock >= 0)
		close(lock);
	strbuf_release(&dir);
	strbuf_release(&meta);
	strbuf_release(&p);
	return ret;
}

/*
 * The options the sandbox of meta was opened with, as resume asks for
 * them: every limit that was applied, explicitly (never degraded), and
 * none where none was. Strings point into the strbufs given.
 */
static void resume_opts(const char *meta, struct session_opts *o,
			struct strbuf *allow_net, struct strbuf *go,
			struct strbuf *purpose)
{
	struct strbuf v = STRBUF_INIT;
	int64_t n;

	memset(o, 0, sizeof(*o));
	o->keep = 1;
	o->ttl_ms = meta_int(meta, "ttl_ms", DEFAULT_TTL_MS);
	o->network = (int)meta_int(meta, "network", 0);
	o->modules_off = !o->network && !meta_int(meta, "modules", 0);
	if (meta_get(meta, "allow_net", allow_net) && allow_net->len)
		o->allow_net = allow_net->buf;
	if (meta_get(meta, "go_path", go) && go->len)
		o->go = go->buf;
	o->purpose = meta_get(meta, "purpose", purpose);
	n = meta_int(meta, "limit_memory", 0);
	o->memory_bytes = n > 0 ? n : -1;
	o->memory_set = n > 0;
	n = meta_int(meta, "limit_pids", 0);
	o->pids = n > 0 ? (int)n : -1;
	o->pids_set = n > 0;
	o->cpus = meta_get(meta, "limit_cpus", &v) ? strtod(v.buf, NULL) : 0;
	o->cpus_set = o->cpus > 0;
	if (o->cpus <= 0)
		o->cpus = -1;
	strbuf_release(&v);
}

/*
 * The storage of the claim in dir for a resumed sandbox owned by the
 * ids of cfg: refused when its disk image is no longer mounted (the host
 * restarted), given to cfg's uid when that changed (as root, when the
 * claim's uid was taken while it was suspended). 0 or -1 with error().
 */
static int resume_storage(const char *dir, const char *name,
			  const struct isolate_config *cfg, uid_t old_uid,
			  struct storage *st)
{
	struct strbuf p = STRBUF_INIT;
	struct stat sd, sf;
	int ret = -1;

	storage_paths(st, dir);
	strbuf_addf(&p, "%s/disk.img", dir);
	if (!access(p.buf, F_OK) &&
	    (stat(dir, &sd) < 0 || stat(st->root.buf, &sf) < 0 ||
	     sd.st_dev == sf.st_dev)) {
		error("cannot resume claim '%s': its disk '%s' is not mounted "
		      "(the host restarted?); close it",
		      name, p.buf);
		goto out;
	}
	strbuf_reset(&p);
	strbuf_addf(&p, "%s/tmp", st->root.buf);
	if (!access(p.buf, F_OK))
		strbuf_addbuf(&st->tmp, &p);
	if (cfg->host_uid != old_uid &&
	    (isolate_chown_tree(cfg, st->app.buf) < 0 ||
	     isolate_chown_tree(cfg, st->home.buf) < 0 ||
	     (st->tmp.len && isolate_chown_tree(cfg, st->tmp.buf) < 0)))
		goto out;
	ret = 0;
out:
	strbuf_release(&p);
	return ret;
}

/* Start the sandbox of the suspended claim in dir again; lock held. */
static int resume_locked(const char *dir, const char *name, const char *meta)
{
	struct strbuf allow = STRBUF_INIT, go = STRBUF_INIT;
	struct strbuf purpose = STRBUF_INIT;
	struct session_opts o;
	struct isolate_config cfg;
	struct isolate_handle old;
	struct storage st;
	struct session s = { 0 };
	struct local_state *ls = xcalloc(1, sizeof(*ls));
	int ret = -1;

	strbuf_init(&ls->dir, 0);
	strbuf_addstr(&ls->dir, dir);
	ls->run_fd = ls->owner_fd = ls->lock_fd = -1;
	s.ops = &backend_local;
	s.backend = ls;
	s.keep = 1;
	storage_init(&st);
	isolate_config_init(&cfg);
	isolate_handle_init(&old);
	resume_opts(meta, &o, &allow, &go, &purpose);
	isolate_state_parse(&old, meta);
	/* as root: the uid that owns its files, else another one */
	if (old.host_uid != (uid_t)-1 &&
	    isolate_reserve_ids_as(&cfg, old.host_uid) < 0) {
		warning("claim '%s' gets another host uid", name);
		if (give_claim(&cfg) < 0)
			goto out;
	}
	if (resume_storage(dir, name, &cfg, old.host_uid, &st) < 0)
		goto out;
	ret = start_sandbox(&s, ls, &o, name, &cfg, &st,
			    meta_int(meta, "created", (int64_t)time(NULL)), -1);
	if (ret < 0) {
		struct strbuf p = STRBUF_INIT;

		/* still suspended: its old meta, files untouched */
		strbuf_addf(&p, "%s/meta", dir);
		write_file_atomic(p.buf, meta, strlen(meta));
		error("claim '%s' stays suspended (it runs again only with "
		      "the isolation and limits it was opened with)",
		      name);
		strbuf_release(&p);
	}
out:
	session_disconnect(&s);
	isolate_handle_free(&old);
	isolate_config_release(&cfg);
	storage_release(&st);
	strbuf_release(&allow);
	strbuf_release(&go);
	strbuf_release(&purpose);
	return ret;
}

static int local_op_resume(const struct session_opts *opts, const char *name)
{
	struct strbuf dir = STRBUF_INIT, meta = STRBUF_INIT;
	struct strbuf p = STRBUF_INIT;
	struct isolate_handle h;
	enum local_claim_status st;
	int lock = -1, ret = -1;

	(void)opts;
	isolate_handle_init(&h);
	if (lock_suspendable(name, &dir, &meta, &lock) < 0)
		goto out;
	st = claim_status(dir.buf, meta.buf, &h);
	switch (st) {
	case LOCAL_CLAIM_SUSPENDED:
		ret = resume_locked(dir.buf, name, meta.buf);
		break;
	case LOCAL_CLAIM_READY:
		ret = 1;
		break;
	case LOCAL_CLAIM_EXPIRED:
	case LOCAL_CLAIM_DEAD:
		error("claim '%s' is not suspended but %s; suspend it first "
		      "('gosbx suspend %s') to start it again",
		      name, local_claim_status_name(st), name);
	}
out:
	isolate_handle_free(&h);
	if (lock >= 0)
		close(lock);
	strbuf_release(&dir);
	strbuf_release(&meta);
	strbuf_release(&p);
	return ret;
}

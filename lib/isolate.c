#include "compat.h"
#include "dir.h"
#include "isolate.h"
#include "run-command.h"
#include "seccomp-filter.h"
#include "usage.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

#define SYSTEMD_PREFIX "gosbx-"
#define SETUP_TIMEOUT_MS 60000
#define KILL_TIMEOUT_MS 5000

void isolate_config_init(struct isolate_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	strvec_init(&cfg->ro_binds);
	strvec_init(&cfg->rw_binds);
	strvec_init(&cfg->argv);
	strvec_init(&cfg->env);
	cfg->die_with_parent = 1;
	cfg->memory_bytes = ISOLATE_DEFAULT_MEMORY;
	cfg->pids = ISOLATE_DEFAULT_PIDS;
	cfg->nofile = ISOLATE_DEFAULT_NOFILE;
	cfg->stdin_fd = cfg->stdout_fd = cfg->stderr_fd = -1;
}

void isolate_config_release(struct isolate_config *cfg)
{
	strvec_clear(&cfg->ro_binds);
	strvec_clear(&cfg->rw_binds);
	strvec_clear(&cfg->argv);
	strvec_clear(&cfg->env);
}

void isolate_handle_init(struct isolate_handle *h)
{
	memset(h, 0, sizeof(*h));
	h->pid = -1;
	h->child_pid = -1;
	cgroup_init(&h->cg);
}

void isolate_handle_free(struct isolate_handle *h)
{
	cgroup_release(&h->cg);
	isolate_handle_init(h);
}

/* --- small helpers ------------------------------------------------ */

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The PATH of a sandbox before the host's Go directory is added. */
#define SANDBOX_PATH "/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin"

static int find_in_path(const char *path, const char *name,
			struct strbuf *out);

/* Find an executable on $PATH; appends its path to out. 0 or -1. */
static int find_on_path(const char *name, struct strbuf *out)
{
	return find_in_path(getenv("PATH"), name, out);
}

/* Find an executable in the directories of path (NULL: a default). */
static int find_in_path(const char *path, const char *name,
			struct strbuf *out)
{
	const char *p;

	if (strchr(name, '/')) {
		if (access(name, X_OK))
			return -1;
		strbuf_addstr(out, name);
		return 0;
	}
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p;) {
		const char *end = strchrnul(p, ':');
		size_t len = out->len;
		struct stat st;

		if (end > p) {
			strbuf_add(out, p, end - p);
			strbuf_addf(out, "/%s", name);
			if (!stat(out->buf, &st) && S_ISREG(st.st_mode) &&
			    !access(out->buf, X_OK))
				return 0;
			strbuf_setlen(out, len);
		}
		p = *end ? end + 1 : end;
	}
	return -1;
}

static int find_bwrap(struct strbuf *out)
{
	const char *env = getenv("GOSBX_BWRAP");

	return find_on_path(env && *env ? env : "bwrap", out);
}

/*
 * Start time of a process (field 22 of /proc/pid/stat); 0 if it is
 * gone or a zombie (not every pid 1 reaps the orphans it inherits).
 */
static uint64_t proc_start_time(pid_t pid)
{
	char path[64];
	struct strbuf sb = STRBUF_INIT;
	uint64_t start = 0;
	const char *p;
	int field;

	if (pid <= 0)
		return 0;
	xsnprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (strbuf_read_file(&sb, path, 512) < 0)
		goto out;
	p = strrchr(sb.buf, ')');
	if (!p || !p[1] || !p[2])
		goto out;
	/* after ") " comes field 3 (state); a zombie counts as gone */
	if (p[2] == 'Z' || p[2] == 'X')
		goto out;
	for (field = 2; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	start = strtoull(p, NULL, 10);
out:
	strbuf_release(&sb);
	return start;
}



static int is_dir(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return 0;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return 0;
	}
	return 1;
}


/* --- limits: which controller goes where -------------------------- */

enum limit_mode {
	MODE_NONE,    /* not available to this user */
	MODE_DIRECT,  /* we write the cgroup files */
	MODE_SYSTEMD, /* systemd-run --user --scope */
};

static int systemd_user_works(void)
{
	static int cached = -1;
	const char *argv[] = { "systemd-run", "--user", "--scope", "--quiet",
			       "--collect",   "--",	"true",	   NULL };
	struct strbuf out = STRBUF_INIT;

	if (cached < 0) {
		cached = exited_ok(run_capture(argv, &out, 10000));
		strbuf_release(&out);
	}
	return cached;
}

/* controllers delegated to this user's systemd manager (v2) */
static unsigned systemd_delegated(const struct cgroup_host *host)
{
	struct strbuf sb = STRBUF_INIT, dir = STRBUF_INIT;
	char unit[64];
	const char *p, *at;
	unsigned bits = 0;

	xsnprintf(unit, sizeof(unit), "/user@%d.service", (int)getuid());
	if (strbuf_read_file(&sb, "/proc/self/cgroup", 256) < 0)
		goto out;
	p = strstr(sb.buf, "0::");
	if (!p)
		goto out;
	at = strstr(p, unit);
	if (!at)
		goto out;
	strbuf_addf(&dir, "%s%.*s%s/cgroup.controllers", host->v2_path,
		    (int)(at - (p + 3)), p + 3, unit);
	strbuf_reset(&sb);
	if (strbuf_read_file(&sb, dir.buf, 64) < 0)
		goto out;
	for (int c = 0; c < CGROUP_NR_CTL; c++) {
		const char *name = cgroup_ctl_name(c);
		const char *q = sb.buf;
		size_t n = strlen(name);

		while ((q = strstr(q, name))) {
			if ((q == sb.buf || q[-1] == ' ') &&
			    (q[n] == ' ' || q[n] == '\n' || !q[n])) {
				bits |= CGROUP_BIT(c);
				break;
			}
			q += n;
		}
	}
out:
	strbuf_release(&sb);
	strbuf_release(&dir);
	return bits;
}

/*
 * How controller c can be limited by this user; when it cannot, the
 * reason is appended to why.
 */
static enum limit_mode plan_ctl(const struct cgroup_host *host,
				const char *parent, enum cgroup_ctl c,
				struct strbuf *why)
{
	int version = cgroup_host_version(host, c);
	struct strbuf sb = STRBUF_INIT;
	const char *hier;
	enum limit_mode mode = MODE_NONE;

	if (!version) {
		strbuf_addf(why, "cgroup %s controller not available (",
			    cgroup_ctl_name(c));
		cgroup_host_explain(host, c, why);
		strbuf_addch(why, ')');
		return MODE_NONE;
	}
	if (!geteuid() || host->fake)
		return MODE_DIRECT;
	/* a parent group delegated to us (e.g. chowned by the admin) */
	hier = version == 2 ? host->v2_path : host->v1_path[c];
	strbuf_addf(&sb, "%s/%s", hier, parent);
	if (!access(sb.buf, W_OK))
		mode = MODE_DIRECT;
	else if (version == 2 && systemd_user_works() &&
		 (systemd_delegated(host) & CGROUP_BIT(c)))
		mode = MODE_SYSTEMD;
	else if (version == 2 && systemd_user_works())
		strbuf_addf(why,
			    "cgroup %s controller not delegated to "
			    "user %d by systemd",
			    cgroup_ctl_name(c), (int)getuid());
	else if (version == 2)
		strbuf_addf(why,
			    "cgroup %s controller (v2) needs root or "
			    "a delegated group, and 'systemd-run --user' "
			    "does not work",
			    cgroup_ctl_name(c));
	else
		strbuf_addf(why,
			    "cgroup %s controller (v1) needs root or "
			    "a group '%s' writable by uid %d",
			    cgroup_ctl_name(c), sb.buf, (int)getuid());
	strbuf_release(&sb);
	return mode;
}

static const char *const limit_flag[CGROUP_NR_CTL] = { "--memory=0", "--pids=0",
						       "--cpus=0" };
static const char *const limit_what[CGROUP_NR_CTL] = { "a memory limit",
						       "a pids limit",
						       "a CPU limit" };

struct limit_plan {
	struct cgroup_limits lim;
	unsigned want; /* controllers to set up */
	unsigned explicit_ctls;
	int systemd; /* use a systemd scope for them */
};

static void warn_skipped_once(const char *msg)
{
	static int warned;

	if (__atomic_exchange_n(&warned, 1, __ATOMIC_SEQ_CST))
		return;
	warning("sandbox runs without some default limits: %s; see "
		"'gosbx doctor'",
		msg);
}

static int plan_limits(const struct isolate_config *cfg,
		       const struct cgroup_host *host, struct limit_plan *pl)
{
	struct strbuf skipped = STRBUF_INIT;
	const char *parent = cfg->cgroup_parent ? cfg->cgroup_parent : "gosbx";
	unsigned direct = 0, systemd = 0;
	int c, ret = 0;

	memset(pl, 0, sizeof(*pl));
	pl->lim.memory_bytes = cfg->memory_bytes > 0 ? cfg->memory_bytes : 0;
	pl->lim.pids = cfg->pids > 0 ? cfg->pids : 0;
	pl->lim.cpus = cfg->cpus > 0 ? cfg->cpus : 0;
	if (cfg->memory_explicit)
		pl->explicit_ctls |= CGROUP_BIT(CGROUP_MEMORY);
	if (cfg->pids_explicit)
		pl->explicit_ctls |= CGROUP_BIT(CGROUP_PIDS);
	if (cfg->cpus_explicit)
		pl->explicit_ctls |= CGROUP_BIT(CGROUP_CPU);

	for (c = 0; c < CGROUP_NR_CTL; c++) {
		struct strbuf why = STRBUF_INIT;
		int set = c == CGROUP_MEMORY ? pl->lim.memory_bytes > 0
			  : c == CGROUP_PIDS ? pl->lim.pids > 0
					     : pl->lim.cpus > 0;
		enum limit_mode mode;

		if (!set)
			continue;
		mode = plan_ctl(host, parent, c, &why);
		if (mode == MODE_DIRECT)
			direct |= CGROUP_BIT(c);
		else if (mode == MODE_SYSTEMD)
			systemd |= CGROUP_BIT(c);
		else if (pl->explicit_ctls & CGROUP_BIT(c))
			ret = error("cannot create sandbox: %s; use %s to run "
				    "without %s",
				    why.buf, limit_flag[c], limit_what[c]);
		else
			strbuf_addf(&skipped, "%s%s", skipped.len ? "; " : "",
				    why.buf);
		strbuf_release(&why);
		if (ret)
			goto out;
	}
	/* one mechanism per sandbox: prefer systemd when it is needed */
	if (systemd) {
		pl->systemd = 1;
		pl->want = systemd | (direct & host->v2_ctls);
		direct &= ~pl->want;
		for (c = 0; c < CGROUP_NR_CTL; c++) {
			if (!(direct & CGROUP_BIT(c)))
				continue;
			if (pl->explicit_ctls & CGROUP_BIT(c)) {
				ret = error("cannot create sandbox: cgroup %s "
					    "controller: cannot mix a systemd "
					    "scope and v1 groups; use %s to "
					    "run without %s",
					    cgroup_ctl_name(c), limit_flag[c],
					    limit_what[c]);
				goto out;
			}
			strbuf_addf(&skipped,
				    "%scgroup %s controller is "
				    "v1 while others use a systemd scope",
				    skipped.len ? "; " : "",
				    cgroup_ctl_name(c));
		}
	} else {
		pl->want = direct;
	}
	if (skipped.len)
		warn_skipped_once(skipped.buf);
out:
	strbuf_release(&skipped);
	return ret;
}

/* --- the bwrap command line --------------------------------------- */

static void add_root_dir(struct strvec *args, const char *dir)
{
	struct stat st;
	char target[PATH_MAX];
	ssize_t n;

	if (lstat(dir, &st))
		return;
	if (S_ISLNK(st.st_mode)) {
		n = readlink(dir, target, sizeof(target) - 1);
		if (n <= 0)
			return;
		target[n] = '\0';
		strvec_pushv(args, (const char *[]){ "--symlink", target, dir,
						     NULL });
	} else if (S_ISDIR(st.st_mode)) {
		strvec_pushv(args,
			     (const char *[]){ "--ro-bind", dir, dir, NULL });
	}
}

static void setenv_arg(struct strvec *args, const char *kv)
{
	const char *eq = strchr(kv, '=');
	char *key;

	if (!eq)
		return;
	key = xstrndup(kv, eq - kv);
	strvec_pushv(args, (const char *[]){ "--setenv", key, eq + 1, NULL });
	free(key);
}

static int cache_dir(const char *given, const char *leaf, struct strbuf *out)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	if (given && *given) {
		strbuf_addstr(out, given);
	} else if (xdg && *xdg == '/') {
		strbuf_addf(out, "%s/gosbx/%s", xdg, leaf);
	} else if (home && *home == '/') {
		strbuf_addf(out, "%s/.cache/gosbx/%s", home, leaf);
	} else {
		return error("cannot create sandbox: go cache: neither "
			     "XDG_CACHE_HOME nor HOME is set");
	}
	if (mkdir_p(out->buf, 0755))
		return error_errno("cannot create sandbox: go cache: cannot "
				   "create '%s'",
				   out->buf);
	return 0;
}

/*
 * The host's Go: if `go` on our PATH resolves outside /usr, its GOROOT
 * is bound read-only at the same path. The directory holding the real
 * binary is added to the sandbox PATH.
 */
static void add_host_go(struct strvec *args, struct strbuf *path_env)
{
	struct strbuf go = STRBUF_INIT, list = STRBUF_INIT, pat = STRBUF_INIT;
	char *real = NULL, *slash;

	if (find_on_path("go", &go))
		goto out;
	real = realpath(go.buf, NULL);
	if (!real)
		goto out;
	slash = strrchr(real, '/');
	if (!slash || slash == real)
		goto out;
	*slash = '\0'; /* real = the directory holding the binary */
	strbuf_addf(&list, ":%s:", path_env->buf);
	strbuf_addf(&pat, ":%s:", real);
	if (!strstr(list.buf, pat.buf))
		strbuf_addf(path_env, ":%s", real);
	if (!starts_with(real, "/usr/")) {
		slash = strrchr(real, '/');
		if (slash && slash != real) {
			*slash = '\0'; /* the GOROOT */
			strvec_pushv(args, (const char *[]){ "--ro-bind", real,
							     real, NULL });
		}
	}
out:
	free(real);
	strbuf_release(&go);
	strbuf_release(&list);
	strbuf_release(&pat);
}

static int add_binds(struct strvec *args, const struct strvec *binds,
		     const char *flag)
{
	size_t i;

	for (i = 0; i < binds->nr; i++) {
		const char *spec = binds->v[i];
		const char *colon = strchr(spec, ':');
		char *src =
			colon ? xstrndup(spec, colon - spec) : xstrdup(spec);
		const char *dst = colon ? colon + 1 : src;
		struct stat st;
		int bad = *src != '/' || *dst != '/', missing = 0;

		if (!bad && stat(src, &st))
			missing = errno;
		if (!bad && !missing)
			strvec_pushv(args,
				     (const char *[]){ flag, src, dst, NULL });
		free(src);
		if (bad)
			return error("cannot create sandbox: bind '%s': "
				     "paths must be absolute",
				     spec);
		if (missing) {
			errno = missing;
			return error_errno("cannot create sandbox: bind '%s'",
					   spec);
		}
	}
	return 0;
}

static int build_bwrap_args(const struct isolate_config *cfg,
			    struct strvec *args, int seccomp_fd, int info_fd)
{
	static const char *const root_dirs[] = {
		"/bin", "/lib", "/lib64", "/lib32", "/libx32", "/sbin",
	};
	struct strbuf gocache = STRBUF_INIT, gomod = STRBUF_INIT;
	struct strbuf path_env = STRBUF_INIT;
	char uid[16];
	size_t i;
	int ret = -1;

	if (cache_dir(cfg->gocache_dir, "go-build", &gocache) ||
	    cache_dir(cfg->gomodcache_dir, "go-mod", &gomod))
		goto out;

	xsnprintf(uid, sizeof(uid), "%d", ISOLATE_SANDBOX_UID);
	strvec_pushv(args,
		     (const char *[]){ "--unshare-user", "--uid", uid, "--gid",
				       uid, "--unshare-pid", "--unshare-ipc",
				       "--unshare-uts", "--hostname", "gosbx",
				       "--unshare-cgroup-try", NULL });
	if (!cfg->network)
		strvec_push(args, "--unshare-net");
	if (cfg->as_init)
		strvec_push(args, "--as-pid-1");
	strvec_push(args, "--new-session");
	if (cfg->die_with_parent)
		strvec_push(args, "--die-with-parent");
	strvec_pushv(args, (const char *[]){ "--cap-drop", "ALL", NULL });
	strvec_push(args, "--seccomp");
	strvec_pushf(args, "%d", seccomp_fd);
	strvec_push(args, "--info-fd");
	strvec_pushf(args, "%d", info_fd);

	strvec_pushv(args,
		     (const char *[]){ "--ro-bind", "/usr", "/usr", "--ro-bind",
				       "/etc", "/etc", NULL });
	for (i = 0; i < ARRAY_SIZE(root_dirs); i++)
		add_root_dir(args, root_dirs[i]);
	strvec_pushv(args,
		     (const char *[]){ "--proc", "/proc", "--dev", "/dev",
				       "--tmpfs", "/tmp", "--tmpfs",
				       ISOLATE_HOME, "--bind", gocache.buf,
				       ISOLATE_HOME "/.cache/go-build",
				       "--bind", gomod.buf,
				       ISOLATE_HOME "/go/pkg/mod", NULL });

	strbuf_addstr(&path_env, SANDBOX_PATH ":" ISOLATE_HOME "/go/bin");
	add_host_go(args, &path_env);
	if (add_binds(args, &cfg->ro_binds, "--ro-bind") ||
	    add_binds(args, &cfg->rw_binds, "--bind"))
		goto out;
	strvec_pushv(args, (const char *[]){ "--bind",
					     cfg->claim_dir,
					     ISOLATE_WORKDIR,
					     "--chdir",
					     ISOLATE_WORKDIR,
					     "--clearenv",
					     "--setenv",
					     "PATH",
					     path_env.buf,
					     "--setenv",
					     "HOME",
					     ISOLATE_HOME,
					     "--setenv",
					     "USER",
					     "sandbox",
					     "--setenv",
					     "GOPATH",
					     ISOLATE_HOME "/go",
					     "--setenv",
					     "GOCACHE",
					     ISOLATE_HOME "/.cache/go-build",
					     "--setenv",
					     "GOMODCACHE",
					     ISOLATE_HOME "/go/pkg/mod",
					     "--setenv",
					     "GOTOOLCHAIN",
					     "local",
					     "--setenv",
					     "CGO_ENABLED",
					     "0",
					     "--setenv",
					     "GOFLAGS",
					     "-buildvcs=false",
					     "--setenv",
					     "LANG",
					     "C.UTF-8",
					     NULL });
	if (!cfg->network)
		strvec_pushv(args, (const char *[]){ "--setenv", "GOPROXY",
						     "off", NULL });
	for (i = 0; i < cfg->env.nr; i++)
		setenv_arg(args, cfg->env.v[i]);
	strvec_push(args, "--");
	strvec_pushv(args, cfg->argv.v);
	ret = 0;
out:
	strbuf_release(&gocache);
	strbuf_release(&gomod);
	strbuf_release(&path_env);
	return ret;
}

static void systemd_prefix(const struct isolate_config *cfg,
			   const struct limit_plan *pl, struct strvec *args)
{
	strvec_pushv(args, (const char *[]){ "systemd-run", "--user", "--scope",
					     "--quiet", "--collect", NULL });
	strvec_pushf(args, "--unit=%s%s", SYSTEMD_PREFIX, cfg->claim_name);
	if (pl->want & CGROUP_BIT(CGROUP_MEMORY)) {
		strvec_push(args, "-p");
		strvec_pushf(args, "MemoryMax=%" PRId64, pl->lim.memory_bytes);
		strvec_pushv(args,
			     (const char *[]){ "-p", "MemorySwapMax=0", NULL });
	}
	if (pl->want & CGROUP_BIT(CGROUP_PIDS)) {
		strvec_push(args, "-p");
		strvec_pushf(args, "TasksMax=%" PRId64, pl->lim.pids);
	}
	if (pl->want & CGROUP_BIT(CGROUP_CPU)) {
		long pct = (long)(pl->lim.cpus * 100 + 0.5);

		strvec_push(args, "-p");
		strvec_pushf(args, "CPUQuota=%ld%%", pct > 0 ? pct : 1);
	}
	strvec_push(args, "--");
}

/* --- spawning ----------------------------------------------------- */

enum child_stage {
	STAGE_SESSION = 1,
	STAGE_STDIO,
	STAGE_CGROUP,
	STAGE_RLIMIT,
	STAGE_FDS,
	STAGE_EXEC,
};

struct child_report {
	int stage;
	int err;
};

struct child_ctx {
	const struct isolate_config *cfg;
	const struct cgroup *join; /* NULL: none */
	struct rlimit nofile, fsize;
	int set_fsize;
	int keep_fds[2 + ISOLATE_MAX_PASS_FDS];
	int nr_keep_fds;
	const char *exe;
	char *const *argv;
	int report_fd;
};

static NORETURN void child_fail(const struct child_ctx *ctx, int stage)
{
	struct child_report r = { stage, errno };

	ssize_t w = write(ctx->report_fd, &r, sizeof(r));

	(void)w; /* nothing left to do if the parent is gone */
	_exit(127);
}

/* runs between fork() and exec(): async-signal-safe calls only */
static NORETURN void child_run(const struct child_ctx *ctx)
{
	const struct isolate_config *cfg = ctx->cfg;
	struct rlimit zero = { 0, 0 };
	sigset_t none;
	int sig, i, fd;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	if (!cfg->die_with_parent && setsid() < 0)
		child_fail(ctx, STAGE_SESSION);
	if ((cfg->stdin_fd >= 0 && dup2(cfg->stdin_fd, 0) < 0) ||
	    (cfg->stdout_fd >= 0 && dup2(cfg->stdout_fd, 1) < 0) ||
	    (cfg->stderr_fd >= 0 && dup2(cfg->stderr_fd, 2) < 0))
		child_fail(ctx, STAGE_STDIO);
	if (ctx->join && cgroup_join_self(ctx->join))
		child_fail(ctx, STAGE_CGROUP);
	if (setrlimit(RLIMIT_NOFILE, &ctx->nofile) ||
	    setrlimit(RLIMIT_CORE, &zero) ||
	    (ctx->set_fsize && setrlimit(RLIMIT_FSIZE, &ctx->fsize)))
		child_fail(ctx, STAGE_RLIMIT);
	/* no descriptor of ours leaks into the sandbox */
	if (syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */)) {
		for (fd = 3; fd < (int)ctx->nofile.rlim_cur && fd < 65536; fd++)
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	for (i = 0; i < ctx->nr_keep_fds; i++)
		if (fcntl(ctx->keep_fds[i], F_SETFD, 0))
			child_fail(ctx, STAGE_FDS);
	execve(ctx->exe, ctx->argv, environ);
	child_fail(ctx, STAGE_EXEC);
}

static const char *stage_name(int stage)
{
	switch (stage) {
	case STAGE_SESSION:
		return "setsid";
	case STAGE_STDIO:
		return "redirecting stdio";
	case STAGE_CGROUP:
		return "cgroup: cannot join the sandbox's cgroup";
	case STAGE_RLIMIT:
		return "rlimits: cannot set RLIMIT_NOFILE/CORE/FSIZE";
	case STAGE_FDS:
		return "passing descriptors to bwrap";
	default:
		return "cannot run bwrap";
	}
}

/*
 * Read bwrap's --info-fd JSON to its end (bwrap closes it; stopping
 * early would kill bwrap with SIGPIPE) and return "child-pid", or -1
 * when bwrap failed before writing it.
 */
static pid_t read_child_pid(int fd)
{
	struct strbuf sb = STRBUF_INIT;
	uint64_t deadline = monotonic_ms() + SETUP_TIMEOUT_MS;
	const char *p;
	pid_t pid = -1;

	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		int64_t left = (int64_t)(deadline - monotonic_ms());
		char buf[512];
		ssize_t n;
		int r;

		if (left <= 0)
			break;
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n = xread(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		strbuf_add(&sb, buf, n);
	}
	p = strstr(sb.buf, "\"child-pid\"");
	if (p && (p = strchr(p, ':')))
		pid = (pid_t)strtol(p + 1, NULL, 10);
	strbuf_release(&sb);
	return pid;
}

/* systemd mode: find the scope's group from bwrap's /proc/pid/cgroup */
static int locate_scope(const struct cgroup_host *host, pid_t pid,
			const char *unit, struct cgroup *cg)
{
	struct strbuf sb = STRBUF_INIT, path = STRBUF_INIT;
	const char *p, *eol;
	int ret = -1;

	strbuf_addf(&path, "/proc/%d/cgroup", (int)pid);
	if (strbuf_read_file(&sb, path.buf, 256) < 0) {
		error_errno("cannot create sandbox: cgroup: cannot read '%s'",
			    path.buf);
		goto out;
	}
	p = strstr(sb.buf, "0::");
	if (p && (p == sb.buf || p[-1] == '\n')) {
		p += 3;
		eol = strchrnul(p, '\n');
		strbuf_reset(&path);
		strbuf_addf(&path, "%s%.*s", host->v2_path, (int)(eol - p), p);
		if (ends_with(path.buf, unit)) {
			cg->v2 = strbuf_detach(&path, NULL);
			cg->unit = xstrdup(unit);
			ret = 0;
		}
	}
	if (ret)
		error("cannot create sandbox: cgroup: systemd did not put "
		      "the sandbox into '%s'",
		      unit);
out:
	strbuf_release(&sb);
	strbuf_release(&path);
	return ret;
}

/* fail closed: make sure systemd really wrote what was asked */
static int verify_scope(const struct cgroup *cg, const struct limit_plan *pl)
{
	static const char *const files[CGROUP_NR_CTL] = { "memory.max",
							  "pids.max",
							  "cpu.max" };
	int c, ret = 0;

	for (c = 0; c < CGROUP_NR_CTL && !ret; c++) {
		struct strbuf path = STRBUF_INIT, sb = STRBUF_INIT;

		if (!(pl->want & CGROUP_BIT(c)))
			continue;
		strbuf_addf(&path, "%s/%s", cg->v2, files[c]);
		if (strbuf_read_file(&sb, path.buf, 64) < 0 ||
		    starts_with(sb.buf, "max"))
			ret = error("cannot create sandbox: cgroup %s "
				    "controller: the systemd scope has no "
				    "limit in '%s'",
				    cgroup_ctl_name(c), path.buf);
		strbuf_release(&path);
		strbuf_release(&sb);
	}
	return ret;
}

static unsigned applied_bits(unsigned want)
{
	unsigned bits = 0;

	if (want & CGROUP_BIT(CGROUP_MEMORY))
		bits |= ISOLATE_LIMIT_MEMORY;
	if (want & CGROUP_BIT(CGROUP_PIDS))
		bits |= ISOLATE_LIMIT_PIDS;
	if (want & CGROUP_BIT(CGROUP_CPU))
		bits |= ISOLATE_LIMIT_CPU;
	return bits;
}

static int plan_rlimits(const struct isolate_config *cfg, struct child_ctx *ctx)
{
	struct rlimit cur;
	rlim_t nofile = cfg->nofile > 0 ? (rlim_t)cfg->nofile
					: (rlim_t)ISOLATE_DEFAULT_NOFILE;

	if (getrlimit(RLIMIT_NOFILE, &cur))
		return error_errno("cannot create sandbox: rlimits");
	if (nofile > cur.rlim_max && geteuid()) {
		if (cfg->nofile_explicit)
			return error("cannot create sandbox: rlimits: open "
				     "files %" PRId64 " is above the hard "
				     "limit %llu",
				     cfg->nofile,
				     (unsigned long long)cur.rlim_max);
		nofile = cur.rlim_max;
	}
	ctx->nofile.rlim_cur = ctx->nofile.rlim_max = nofile;
	if (cfg->fsize_bytes > 0) {
		ctx->set_fsize = 1;
		ctx->fsize.rlim_cur = ctx->fsize.rlim_max =
			(rlim_t)cfg->fsize_bytes;
	}
	return 0;
}

/*
 * Create the groups. When that fails for a default limit (e.g. a v2
 * subtree_control that refuses to delegate), warn once and go on with
 * the explicit limits alone; an explicit one never degrades.
 */
static int create_groups(const struct isolate_config *cfg,
			 const struct cgroup_host *host, struct limit_plan *pl,
			 struct cgroup *cg)
{
	struct strbuf why = STRBUF_INIT;
	const char *msg;
	int ret = 0;

	if (!cgroup_create_why(host, cfg->cgroup_parent, cfg->claim_name,
			       pl->want, &pl->lim, cg, &why))
		goto out;
	if ((pl->want & pl->explicit_ctls) == pl->want) {
		ret = error("%s", why.buf);
		goto out;
	}
	if (!skip_prefix(why.buf, "cannot create sandbox: ", &msg))
		msg = why.buf;
	warn_skipped_once(msg);
	pl->want &= pl->explicit_ctls;
	if (pl->want)
		ret = cgroup_create(host, cfg->cgroup_parent, cfg->claim_name,
				    pl->want, &pl->lim, cg);
out:
	strbuf_release(&why);
	return ret;
}

int isolate_spawn(const struct isolate_config *cfg, struct isolate_handle *h)
{
	struct cgroup_host host;
	struct limit_plan pl;
	struct strvec args = STRVEC_INIT;
	struct strbuf exe = STRBUF_INIT, unit = STRBUF_INIT;
	struct child_ctx ctx;
	struct child_report report;
	int seccomp_fd = -1, info[2] = { -1, -1 }, rep[2] = { -1, -1 };
	int ret = -1, status = 0;
	ssize_t n;
	pid_t pid;

	isolate_handle_init(h);
	memset(&ctx, 0, sizeof(ctx));
	memset(&pl, 0, sizeof(pl));
	if (!cfg->claim_name || !*cfg->claim_name ||
	    strchr(cfg->claim_name, '/'))
		return error("cannot create sandbox: invalid claim name '%s'",
			     cfg->claim_name ? cfg->claim_name : "");
	if (!cfg->claim_dir || *cfg->claim_dir != '/')
		return error("cannot create sandbox: claim directory must "
			     "be an absolute path");
	if (!cfg->argv.nr)
		return error("cannot create sandbox: no command to run");
	if (cfg->nr_pass_fds < 0 || cfg->nr_pass_fds > ISOLATE_MAX_PASS_FDS)
		return error("cannot create sandbox: too many descriptors to "
			     "pass");
	for (int i = 0; i < cfg->nr_pass_fds; i++)
		if (cfg->pass_fds[i] < 3 ||
		    fcntl(cfg->pass_fds[i], F_GETFD) < 0)
			return error("cannot create sandbox: descriptor %d to "
				     "pass is not open (or is stdio)",
				     cfg->pass_fds[i]);
	/*
	 * bwrap reports a missing bind source only after its pid 1 exists,
	 * like an exit of the command: check the sources first.
	 */
	if (!is_dir(cfg->claim_dir))
		return error_errno("cannot create sandbox: claim directory "
				   "'%s'",
				   cfg->claim_dir);
	cgroup_host_detect(&host);
	if (find_bwrap(&exe)) {
		error("cannot create sandbox: namespaces: bwrap not found "
		      "on PATH; install bubblewrap");
		goto out;
	}
	if (plan_rlimits(cfg, &ctx) || plan_limits(cfg, &host, &pl))
		goto out;

	seccomp_fd = seccomp_filter_fd(cfg->network);
	if (seccomp_fd < 0)
		goto out;
	if (pipe2(info, O_CLOEXEC) || pipe2(rep, O_CLOEXEC)) {
		error_errno("cannot create sandbox: pipe");
		goto out;
	}
	if (pl.systemd) {
		strbuf_addf(&unit, "%s%s.scope", SYSTEMD_PREFIX,
			    cfg->claim_name);
		systemd_prefix(cfg, &pl, &args);
		strvec_push(&args, exe.buf);
		strbuf_reset(&exe);
		if (find_on_path("systemd-run", &exe)) {
			error("cannot create sandbox: cgroup: systemd-run "
			      "not found");
			goto out;
		}
	} else {
		strvec_push(&args, exe.buf);
		if (pl.want && create_groups(cfg, &host, &pl, &h->cg))
			goto out;
		if (pl.want)
			ctx.join = &h->cg;
	}
	if (build_bwrap_args(cfg, &args, seccomp_fd, info[1]))
		goto out;

	ctx.cfg = cfg;
	ctx.keep_fds[ctx.nr_keep_fds++] = seccomp_fd;
	ctx.keep_fds[ctx.nr_keep_fds++] = info[1];
	for (int i = 0; i < cfg->nr_pass_fds; i++)
		ctx.keep_fds[ctx.nr_keep_fds++] = cfg->pass_fds[i];
	ctx.exe = exe.buf;
	ctx.argv = (char *const *)args.v;
	ctx.report_fd = rep[1];

	pid = fork();
	if (pid < 0) {
		error_errno("cannot create sandbox: fork");
		goto out;
	}
	if (!pid)
		child_run(&ctx);
	h->pid = pid;
	close(rep[1]);
	rep[1] = -1;
	close(info[1]);
	info[1] = -1;

	n = read_in_full(rep[0], &report, sizeof(report));
	if (n == sizeof(report)) {
		errno = report.err;
		error_errno("cannot create sandbox: %s",
			    stage_name(report.stage));
		goto reap;
	}
	h->child_pid = read_child_pid(info[0]);
	if (h->child_pid <= 0) {
		if (waitpid(pid, &status, 0) == pid) {
			h->reaped = 1;
			h->status = status;
		}
		error("cannot create sandbox: namespaces: bwrap failed "
		      "(%s %d; its message is above)",
		      WIFSIGNALED(status) ? "signal" : "exit status",
		      WIFSIGNALED(status) ? WTERMSIG(status)
					  : WEXITSTATUS(status));
		goto fail;
	}
	h->start = proc_start_time(pid);
	h->child_start = proc_start_time(h->child_pid);
	if (pl.systemd && (locate_scope(&host, pid, unit.buf, &h->cg) ||
			   verify_scope(&h->cg, &pl)))
		goto fail;
	h->limits = applied_bits(pl.want);
	ret = 0;
	goto out;

reap:
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	h->reaped = 1;
	h->status = status;
fail:
	isolate_kill(h);
	if (!h->reaped)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	cgroup_destroy(&h->cg, KILL_TIMEOUT_MS);
	isolate_handle_free(h);
out:
	if (ret && !pl.systemd && cgroup_in_use(&h->cg)) {
		cgroup_destroy(&h->cg, KILL_TIMEOUT_MS);
		isolate_handle_free(h);
	}
	if (seccomp_fd >= 0)
		close(seccomp_fd);
	if (info[0] >= 0)
		close(info[0]);
	if (info[1] >= 0)
		close(info[1]);
	if (rep[0] >= 0)
		close(rep[0]);
	if (rep[1] >= 0)
		close(rep[1]);
	strvec_clear(&args);
	strbuf_release(&exe);
	strbuf_release(&unit);
	cgroup_host_release(&host);
	return ret;
}

int isolate_wait(struct isolate_handle *h, int timeout_ms, int *status)
{
	uint64_t deadline = monotonic_ms() + (timeout_ms > 0 ? timeout_ms : 0);

	if (h->reaped) {
		*status = h->status;
		return 1;
	}
	if (h->pid <= 0)
		return error("isolate_wait: no sandbox process");
	for (;;) {
		pid_t r = waitpid(h->pid, status, timeout_ms < 0 ? 0 : WNOHANG);

		if (r == h->pid) {
			h->reaped = 1;
			h->status = *status;
			return 1;
		}
		if (r < 0 && errno != EINTR)
			return error_errno("waitpid %d", (int)h->pid);
		if (r == 0 && monotonic_ms() >= deadline)
			return 0;
		if (r == 0)
			sleep_ms(10);
	}
}

/* the pid, if it still is the process we started */
static int same_process(pid_t pid, uint64_t start)
{
	uint64_t now;

	if (pid <= 0)
		return 0;
	now = proc_start_time(pid);
	return now && (!start || now == start);
}

int isolate_alive(const struct isolate_handle *h)
{
	if (h->reaped)
		return 0;
	return same_process(h->child_pid, h->child_start) ||
	       same_process(h->pid, h->start);
}

int isolate_kill(struct isolate_handle *h)
{
	int ret = 0;

	if (!h->reaped && same_process(h->child_pid, h->child_start))
		kill(h->child_pid, SIGKILL);
	if (!h->reaped && same_process(h->pid, h->start))
		kill(h->pid, SIGKILL);
	if (cgroup_in_use(&h->cg) && cgroup_kill_all(&h->cg, KILL_TIMEOUT_MS))
		ret = -1;
	return ret;
}

int isolate_oom_kills(const struct isolate_handle *h, uint64_t *out)
{
	return cgroup_oom_kills(&h->cg, out);
}

int isolate_release(struct isolate_handle *h)
{
	int ret = isolate_kill(h), status;

	if (!h->reaped && h->pid > 0) {
		/* our child: reap it; someone else's: ECHILD at once */
		while (waitpid(h->pid, &status, 0) < 0 && errno == EINTR)
			;
		h->reaped = 1;
	}
	if (cgroup_destroy(&h->cg, KILL_TIMEOUT_MS))
		ret = -1;
	isolate_handle_free(h);
	return ret;
}

void isolate_state_format(const struct isolate_handle *h, struct strbuf *out)
{
	strbuf_addf(out, "pid %d\nstart %" PRIu64 "\n", (int)h->pid, h->start);
	strbuf_addf(out, "child-pid %d\nchild-start %" PRIu64 "\n",
		    (int)h->child_pid, h->child_start);
	strbuf_addf(out, "limits %u\n", h->limits);
	cgroup_state_format(&h->cg, out);
}

int isolate_state_parse(struct isolate_handle *h, const char *text)
{
	const char *p = text;

	while (*p) {
		const char *eol = strchrnul(p, '\n');
		const char *v;

		if (skip_prefix(p, "pid ", &v))
			h->pid = (pid_t)strtol(v, NULL, 10);
		else if (skip_prefix(p, "start ", &v))
			h->start = strtoull(v, NULL, 10);
		else if (skip_prefix(p, "child-pid ", &v))
			h->child_pid = (pid_t)strtol(v, NULL, 10);
		else if (skip_prefix(p, "child-start ", &v))
			h->child_start = strtoull(v, NULL, 10);
		else if (skip_prefix(p, "limits ", &v))
			h->limits = (unsigned)strtoul(v, NULL, 10);
		p = *eol ? eol + 1 : eol;
	}
	return cgroup_state_parse(&h->cg, text);
}

/* --- doctor ------------------------------------------------------- */

const char *isolate_check_status_name(enum isolate_check_status s)
{
	return s == ISOLATE_CHECK_OK	 ? "ok"
	       : s == ISOLATE_CHECK_WARN ? "warn"
					 : "fail";
}

static void add_check(struct isolate_check **v, size_t *nr, size_t *alloc,
		      const char *name, enum isolate_check_status st,
		      const char *msg, const char *fix)
{
	struct isolate_check *c;

	ALLOC_GROW(*v, *nr + 1, *alloc);
	c = &(*v)[(*nr)++];
	c->name = xstrdup(name);
	c->status = st;
	c->message = xstrdup(msg);
	c->fix = fix && st != ISOLATE_CHECK_OK ? xstrdup(fix) : NULL;
}

static void first_line(struct strbuf *sb)
{
	char *nl = strchr(sb->buf, '\n');

	if (nl)
		strbuf_setlen(sb, nl - sb->buf);
	strbuf_trim(sb);
}

/*
 * A toolchain as sandboxes see it: go is found on our PATH (its GOROOT
 * is bound into every sandbox, see add_host_go()); anything else must
 * be in a directory of the sandbox's own PATH, whatever ours says (a
 * pyenv shim or an nvm node in $HOME is not visible inside).
 */
static void doctor_tool(struct isolate_check **v, size_t *nr, size_t *alloc,
			const char *tool, const char *flag, const char *fix,
			enum isolate_check_status missing)
{
	struct strbuf path = STRBUF_INIT, out = STRBUF_INIT;
	const char *argv[3] = { NULL, flag, NULL };
	int host = !strcmp(tool, "go");
	int missing_tool = host ? find_on_path(tool, &path)
				: find_in_path(SANDBOX_PATH, tool, &path);

	argv[0] = path.buf;
	if (missing_tool) {
		if (host)
			strbuf_addf(&out, "'%s' not found on PATH", tool);
		else
			strbuf_addf(&out,
				    "'%s' not found in the sandbox's PATH "
				    "(" SANDBOX_PATH ")",
				    tool);
		add_check(v, nr, alloc, tool, missing, out.buf, fix);
	} else if (!exited_ok(run_capture(argv, &out, 10000))) {
		struct strbuf msg = STRBUF_INIT;

		first_line(&out);
		strbuf_addf(&msg, "'%s %s' failed: %s", path.buf, flag,
			    out.buf);
		add_check(v, nr, alloc, tool, missing, msg.buf, fix);
		strbuf_release(&msg);
	} else {
		first_line(&out);
		strbuf_addf(&out, " (%s)", path.buf);
		add_check(v, nr, alloc, tool, ISOLATE_CHECK_OK, out.buf, NULL);
	}
	strbuf_release(&path);
	strbuf_release(&out);
}

static const char *limit_fix(const struct cgroup_host *host, enum cgroup_ctl c,
			     struct strbuf *fix)
{
	int version = cgroup_host_version(host, c);

	if (!version && host->layout == CGROUP_LAYOUT_V2)
		strbuf_addf(fix,
			    "enable the controller for sub-groups: "
			    "echo +%s > %s/cgroup.subtree_control (or boot "
			    "with it enabled)",
			    cgroup_ctl_name(c), host->v2_path);
	else if (!version)
		strbuf_addf(fix,
			    "mount the v1 %s hierarchy (mount -t cgroup "
			    "-o %s cgroup %s/%s) or boot with cgroup v2 "
			    "(systemd.unified_cgroup_hierarchy=1)",
			    cgroup_ctl_name(c), cgroup_ctl_name(c), host->root,
			    cgroup_ctl_name(c));
	else if (version == 2)
		strbuf_addf(fix,
			    "run as root, or log in through systemd so "
			    "that 'systemd-run --user --scope' works and "
			    "delegates %s (Delegate= in user@.service)",
			    cgroup_ctl_name(c));
	else
		strbuf_addf(fix,
			    "run as root, or let an administrator "
			    "create %s/gosbx owned by uid %d",
			    host->v1_path[c], (int)getuid());
	return fix->buf;
}

int isolate_doctor(struct isolate_check **checks, size_t *nr)
{
	struct isolate_check *v = NULL;
	size_t n = 0, alloc = 0;
	struct strbuf bwrap = STRBUF_INIT, out = STRBUF_INIT;
	struct cgroup_host host;
	int c;

	/* bubblewrap */
	if (find_bwrap(&bwrap)) {
		add_check(&v, &n, &alloc, "bwrap", ISOLATE_CHECK_FAIL,
			  "bwrap not found on PATH",
			  "install bubblewrap (apt-get install bubblewrap, "
			  "dnf install bubblewrap)");
	} else {
		const char *argv[] = { bwrap.buf, "--version", NULL };

		if (exited_ok(run_capture(argv, &out, 10000))) {
			first_line(&out);
			strbuf_addf(&out, " (%s)", bwrap.buf);
			add_check(&v, &n, &alloc, "bwrap", ISOLATE_CHECK_OK,
				  out.buf, NULL);
		} else {
			strbuf_reset(&out);
			strbuf_addf(&out, "'%s --version' failed", bwrap.buf);
			add_check(&v, &n, &alloc, "bwrap", ISOLATE_CHECK_FAIL,
				  out.buf, "reinstall bubblewrap");
		}
	}

	/* user namespaces: really try one */
	strbuf_reset(&out);
	if (bwrap.len) {
		const char *argv[] = { bwrap.buf,
				       "--unshare-user",
				       "--unshare-pid",
				       "--ro-bind",
				       "/",
				       "/",
				       "--proc",
				       "/proc",
				       "--",
				       "true",
				       NULL };

		if (exited_ok(run_capture(argv, &out, 10000))) {
			add_check(&v, &n, &alloc, "user namespaces",
				  ISOLATE_CHECK_OK,
				  "'bwrap --unshare-user true' works", NULL);
		} else {
			struct strbuf msg = STRBUF_INIT;

			first_line(&out);
			strbuf_addf(&msg,
				    "'bwrap --unshare-user true' "
				    "failed: %s",
				    out.buf);
			strbuf_reset(&out);
			strbuf_addbuf(&out, &msg);
			strbuf_release(&msg);
			add_check(
				&v, &n, &alloc, "user namespaces",
				ISOLATE_CHECK_FAIL, out.buf,
				"allow unprivileged user namespaces: sysctl "
				"kernel.unprivileged_userns_clone=1 (Debian), "
				"sysctl user.max_user_namespaces=15000, or on "
				"Ubuntu 24.04+ sysctl kernel.apparmor_restrict_"
				"unprivileged_userns=0");
		}
	} else {
		add_check(&v, &n, &alloc, "user namespaces", ISOLATE_CHECK_FAIL,
			  "not tried: bwrap is missing", "install bubblewrap");
	}

	/* seccomp */
	strbuf_reset(&out);
	if (seccomp_filter_available(&out))
		add_check(&v, &n, &alloc, "seccomp", ISOLATE_CHECK_OK,
			  "the kernel filters system calls and libseccomp "
			  "builds the gosbx filter",
			  NULL);
	else
		add_check(&v, &n, &alloc, "seccomp", ISOLATE_CHECK_FAIL,
			  out.buf,
			  "use a kernel built with CONFIG_SECCOMP "
			  "and CONFIG_SECCOMP_FILTER");

	/* cgroups */
	cgroup_host_detect(&host);
	strbuf_reset(&out);
	cgroup_host_describe(&host, &out);
	add_check(&v, &n, &alloc, "cgroups",
		  host.layout == CGROUP_LAYOUT_NONE ? ISOLATE_CHECK_WARN
						    : ISOLATE_CHECK_OK,
		  out.buf, "mount cgroup2 on /sys/fs/cgroup");
	for (c = 0; c < CGROUP_NR_CTL; c++) {
		struct strbuf why = STRBUF_INIT, fix = STRBUF_INIT;
		char name[32];
		enum limit_mode mode = plan_ctl(&host, "gosbx", c, &why);

		xsnprintf(name, sizeof(name), "%s limit", cgroup_ctl_name(c));
		strbuf_reset(&out);
		if (mode == MODE_DIRECT)
			strbuf_addf(&out, "applied through cgroup v%d groups",
				    cgroup_host_version(&host, c));
		else if (mode == MODE_SYSTEMD)
			strbuf_addstr(&out, "applied through a systemd user "
					    "scope");
		else
			strbuf_addf(&out, "cannot be applied: %s", why.buf);
		add_check(&v, &n, &alloc, name,
			  mode == MODE_NONE ? ISOLATE_CHECK_WARN
					    : ISOLATE_CHECK_OK,
			  out.buf, limit_fix(&host, c, &fix));
		strbuf_release(&why);
		strbuf_release(&fix);
	}
	cgroup_host_release(&host);

	/* toolchains */
	doctor_tool(&v, &n, &alloc, "go", "version",
		    "install Go (apt-get install golang-go)",
		    ISOLATE_CHECK_FAIL);
	doctor_tool(&v, &n, &alloc, "python3", "--version",
		    "install Python 3 (apt-get install python3)",
		    ISOLATE_CHECK_WARN);
	doctor_tool(&v, &n, &alloc, "node", "--version",
		    "install Node.js (apt-get install nodejs)",
		    ISOLATE_CHECK_WARN);

	strbuf_release(&bwrap);
	strbuf_release(&out);
	*checks = v;
	*nr = n;
	return 0;
}

void isolate_checks_free(struct isolate_check *checks, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		free(checks[i].name);
		free(checks[i].message);
		free(checks[i].fix);
	}
	free(checks);
}

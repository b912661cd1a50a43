#include "compat.h"
#include "dir.h"
#include "goenv.h"
#include "local/isolate.h"
#include "local/gostd.h"
#include "local/netd.h"
#include "run-command.h"
#include "local/seccomp-filter.h"
#include "local/uidpool.h"
#include "session/doctor.h"
#include "usage.h"

#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

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
	cfg->status_fd = -1;
	cfg->host_uid = geteuid();
	cfg->host_gid = getegid();
}

void isolate_config_release(struct isolate_config *cfg)
{
	if (cfg->ids_reserved)
		uidpool_release(cfg->host_uid, 0, 0);
	cfg->ids_reserved = 0;
	strvec_clear(&cfg->ro_binds);
	strvec_clear(&cfg->rw_binds);
	strvec_clear(&cfg->argv);
	strvec_clear(&cfg->env);
}

/* root runs no sandbox as itself: it drops to a reserved uid */
static int drops_ids(void)
{
	return !geteuid();
}

int isolate_reserve_ids(struct isolate_config *cfg)
{
	if (!drops_ids() || cfg->ids_reserved)
		return 0;
	if (uidpool_reserve(&cfg->host_uid, &cfg->host_gid))
		return -1;
	cfg->ids_reserved = 1;
	return 0;
}

int isolate_reserve_ids_as(struct isolate_config *cfg, uid_t uid)
{
	if (!drops_ids() || cfg->ids_reserved)
		return 0;
	if (uidpool_reserve_id(uid, &cfg->host_gid))
		return -1;
	cfg->host_uid = uid;
	cfg->ids_reserved = 1;
	return 0;
}

static uid_t chown_uid;
static gid_t chown_gid;
static const char *chown_failed;

static int chown_one(const char *path, const struct stat *st, int flag,
		     struct FTW *ftw)
{
	if (lchown(path, chown_uid, chown_gid)) {
		chown_failed = path;
		return -1;
	}
	return 0;
}

int isolate_chown_tree(const struct isolate_config *cfg, const char *path)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int ret = 0;

	if (cfg->host_uid == geteuid() && cfg->host_gid == getegid())
		return 0;
	/* nftw() has no data argument: one tree at a time */
	pthread_mutex_lock(&lock);
	chown_uid = cfg->host_uid;
	chown_gid = cfg->host_gid;
	chown_failed = NULL;
	if (nftw(path, chown_one, 16, FTW_PHYS | FTW_MOUNT | FTW_DEPTH)) {
		ret = error_errno("cannot create sandbox: uid: cannot give "
				  "'%s' to uid %u",
				  chown_failed ? chown_failed : path,
				  (unsigned)cfg->host_uid);
	}
	pthread_mutex_unlock(&lock);
	return ret;
}

void isolate_handle_init(struct isolate_handle *h)
{
	memset(h, 0, sizeof(*h));
	h->pid = -1;
	h->child_pid = -1;
	h->host_uid = (uid_t)-1;
	h->host_gid = (gid_t)-1;
	h->net_fds[0] = h->net_fds[1] = -1;
	cgroup_init(&h->cg);
}

void isolate_handle_free(struct isolate_handle *h)
{
	if (h->net_fds[0] >= 0)
		close(h->net_fds[0]);
	if (h->net_fds[1] >= 0)
		close(h->net_fds[1]);
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

static int find_in_path(const char *path, const char *name, struct strbuf *out);

/* Find an executable on $PATH; appends its path to out. 0 or -1. */
static int find_on_path(const char *name, struct strbuf *out)
{
	return find_in_path(getenv("PATH"), name, out);
}

/* Find an executable in the directories of path (NULL: a default). */
static int find_in_path(const char *path, const char *name, struct strbuf *out)
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
	if (pl->lim.memory_bytes && pl->lim.memory_bytes < ISOLATE_MIN_MEMORY)
		return error("cannot create sandbox: a memory limit of %" PRId64
			     " bytes is too small to start a sandbox; the "
			     "minimum is %" PRId64 " MiB (--memory=%" PRId64
			     "m), or --memory=0 for none",
			     pl->lim.memory_bytes, ISOLATE_MIN_MEMORY >> 20,
			     ISOLATE_MIN_MEMORY >> 20);
	if (pl->lim.pids && pl->lim.pids < ISOLATE_MIN_PIDS)
		return error("cannot create sandbox: a pids limit of %" PRId64
			     " is too small to start a sandbox; the minimum "
			     "is %d (--pids=%d), or --pids=0 for none",
			     pl->lim.pids, ISOLATE_MIN_PIDS, ISOLATE_MIN_PIDS);

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
	if (cfg->default_skipped && *cfg->default_skipped)
		strbuf_addf(&skipped, "%s%s", skipped.len ? "; " : "",
			    cfg->default_skipped);
	if (skipped.len)
		warn_skipped_once(skipped.buf);
out:
	strbuf_release(&skipped);
	return ret;
}

int isolate_limits_check(const struct isolate_config *cfg)
{
	struct isolate_config c = *cfg; /* read only: nothing released */
	struct cgroup_host host;
	struct limit_plan pl;
	int ret;

	c.memory_explicit = c.memory_bytes > 0;
	c.pids_explicit = c.pids > 0;
	c.cpus_explicit = c.cpus > 0;
	c.default_skipped = NULL;
	cgroup_host_detect(&host);
	ret = plan_limits(&c, &host, &pl);
	cgroup_host_release(&host);
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

/* a is the directory b or one of its ancestors ("/a" holds "/a/b") */
static int path_holds(const char *a, const char *b)
{
	size_t la = strlen(a);

	while (la > 1 && a[la - 1] == '/')
		la--;
	if (la == 1)
		return *a == '/';
	return !strncmp(a, b, la) && (!b[la] || b[la] == '/');
}

/* path, resolved if it exists (so that symlinks cannot hide nesting) */
static void resolved(const char *path, struct strbuf *out)
{
	char *real = realpath(path, NULL);

	strbuf_reset(out);
	strbuf_addstr(out, real ? real : path);
	free(real);
}

/*
 * What a GOROOT must stay clear of: it may hold none of `secret` (it
 * is bound into every sandbox) and lie inside none of `writable` (a
 * sandbox could then change the Go that others run).
 */
struct goroot_rules {
	struct strvec secret, writable;
};

/*
 * The GOROOT a real go binary finds by itself (cmd/go's findGOROOT):
 * the directory above its bin/ when that holds pkg/tool. Only for an
 * ELF executable whose real path ends in /bin/go and with GOROOT unset,
 * so that a wrapper script is asked instead. Spares a `go env` (a Go
 * start, slow on a busy host) at every sandbox start. Returns 0 with
 * the directory in out, -1 when go env must be asked.
 */
static int goroot_of_binary(const char *go, struct strbuf *out)
{
	char *real = realpath(go, NULL);
	char magic[4];
	size_t len = real ? strlen(real) : 0;
	struct stat st;
	int fd, ret = -1;

	if (!real || getenv("GOROOT") || len <= strlen("/bin/go") ||
	    strcmp(real + len - strlen("/bin/go"), "/bin/go"))
		goto out;
	fd = open(real, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto out;
	if (read_in_full(fd, magic, sizeof(magic)) != sizeof(magic) ||
	    memcmp(magic, "\177ELF", 4)) {
		close(fd);
		goto out;
	}
	close(fd);
	strbuf_reset(out);
	strbuf_add(out, real, len - strlen("/bin/go"));
	strbuf_addstr(out, "/pkg/tool");
	if (!stat(out->buf, &st) && S_ISDIR(st.st_mode)) {
		strbuf_setlen(out, len - strlen("/bin/go"));
		ret = 0;
	}
out:
	if (ret)
		strbuf_reset(out);
	free(real);
	return ret;
}

/*
 * The host's Go, as sandboxes see it: `go env GOROOT` of want (--go: a
 * go binary or a GOROOT), else of the `go` on our PATH (a wrapper script such
 * as ~/bin/go included; for a real go binary the same answer without running
 * it, goroot_of_binary()), trusted only when it is an absolute directory
 * holding an executable bin/go that keeps the rules. Returns 1 with the
 * resolved GOROOT in out, 0 when there is no `go` on PATH, -1 with the reason
 * in why.
 */
static int host_goroot(const struct goroot_rules *rules, const char *want,
		       struct strbuf *out, struct strbuf *why)
{
	struct strbuf go = STRBUF_INIT, sb = STRBUF_INIT;
	struct stat st;
	size_t i;
	int ret = -1;

	strbuf_reset(out);
	if (want) {
		/* --go: a GOROOT or a go binary */
		if (is_dir(want))
			strbuf_addf(&go, "%s/bin/go", want);
		else
			strbuf_addstr(&go, want);
		if (go.buf[0] != '/' || access(go.buf, X_OK)) {
			strbuf_addf(why,
				    "--go='%s' is neither an executable go "
				    "(an absolute path) nor a GOROOT",
				    want);
			strbuf_release(&go);
			return -1;
		}
	} else if (find_on_path("go", &go)) {
		strbuf_release(&go);
		return 0;
	}
	/* what go env would say, else go env (goenv.h keeps it) */
	if (goroot_of_binary(go.buf, &sb)) {
		struct strbuf err = STRBUF_INIT;

		strbuf_reset(&sb);
		if (goenv_get(go.buf, "GOROOT", &sb, &err) < 0)
			strbuf_reset(&sb);
		strbuf_release(&err);
	}

	if (!sb.len || sb.buf[0] != '/') {
		strbuf_addf(why, "'%s env GOROOT' gave no absolute path",
			    go.buf);
		goto out;
	}
	resolved(sb.buf, out);
	strbuf_reset(&sb);
	strbuf_addf(&sb, "%s/bin/go", out->buf);
	if (stat(sb.buf, &st) || !S_ISREG(st.st_mode) || access(sb.buf, X_OK)) {
		strbuf_addf(why, "GOROOT '%s' has no executable bin/go",
			    out->buf);
		goto out;
	}
	for (i = 0; i < rules->secret.nr; i++) {
		resolved(rules->secret.v[i], &sb);
		if (path_holds(out->buf, sb.buf)) {
			strbuf_addf(why, "GOROOT '%s' holds '%s'", out->buf,
				    sb.buf);
			goto out;
		}
	}
	for (i = 0; i < rules->writable.nr; i++) {
		resolved(rules->writable.v[i], &sb);
		if (path_holds(sb.buf, out->buf)) {
			strbuf_addf(why,
				    "GOROOT '%s' is inside '%s', which "
				    "sandboxes write",
				    out->buf, sb.buf);
			goto out;
		}
	}
	ret = 1;
out:
	if (ret < 0)
		strbuf_reset(out);
	strbuf_release(&go);
	strbuf_release(&sb);
	return ret;
}

static void warn_goroot_once(const char *why)
{
	static int warned;

	if (__atomic_exchange_n(&warned, 1, __ATOMIC_SEQ_CST))
		return;
	warning("sandboxes get no Go from this host: %s; see 'gosbx doctor'",
		why);
}

/* $<var>, else $HOME/<fallback>, then "/gosbx" */
static void gosbx_dir(const char *var, const char *fallback, struct strvec *out)
{
	const char *v = getenv(var), *home = getenv("HOME");

	if (v && *v == '/')
		strvec_pushf(out, "%s/gosbx", v);
	else if (home && *home == '/')
		strvec_pushf(out, "%s/%s/gosbx", home, fallback);
}

/*
 * The rules of host_goroot(): secret are the home, state, cache and
 * runtime directories and what the sandbox writes (cfg may be NULL);
 * writable are gosbx's state and cache directories (every claim, every
 * cache) and what this sandbox writes.
 */
static void goroot_rules(const struct isolate_config *cfg,
			 struct goroot_rules *r)
{
	static const char *const vars[] = { "HOME", "XDG_STATE_HOME",
					    "XDG_CACHE_HOME",
					    "XDG_RUNTIME_DIR" };
	size_t i;

	strvec_init(&r->secret);
	strvec_init(&r->writable);
	for (i = 0; i < ARRAY_SIZE(vars); i++) {
		const char *v = getenv(vars[i]);

		if (v && *v == '/')
			strvec_push(&r->secret, v);
	}
	gosbx_dir("XDG_STATE_HOME", ".local/state", &r->writable);
	gosbx_dir("XDG_CACHE_HOME", ".cache", &r->writable);
	if (cfg) {
		strvec_push(&r->writable, cfg->claim_dir);
		for (i = 0; i < cfg->rw_binds.nr; i++) {
			const char *bind = cfg->rw_binds.v[i];
			const char *colon = strchr(bind, ':');

			if (colon)
				strvec_pushf(&r->writable, "%.*s",
					     (int)(colon - bind), bind);
		}
	}
	if (cfg && cfg->home_dir)
		strvec_push(&r->writable, cfg->home_dir);
	if (cfg && cfg->tmp_dir)
		strvec_push(&r->writable, cfg->tmp_dir);
	for (i = 0; i < r->writable.nr; i++)
		strvec_push(&r->secret, r->writable.v[i]);
}

static void goroot_rules_release(struct goroot_rules *r)
{
	strvec_clear(&r->secret);
	strvec_clear(&r->writable);
}

int isolate_host_go(const char *want, struct strbuf *out, struct strbuf *why)
{
	struct goroot_rules rules;
	int r;

	goroot_rules(NULL, &rules);
	r = host_goroot(&rules, want, out, why);
	if (r > 0)
		strbuf_addstr(out, "/bin/go");
	goroot_rules_release(&rules);
	return r;
}

/*
 * The host's Go in the sandbox: its GOROOT (host_goroot()) bound
 * read-only at the same path unless it is under /usr (visible anyway),
 * and GOROOT/bin first on the sandbox PATH, so that no other go (e.g.
 * Debian's /usr/bin/go) shadows it. Without a trusted GOROOT the
 * sandbox gets no Go of ours (a warning says why, once); with --go
 * (cfg->go) that is an error: an explicit choice never degrades.
 * Returns 0 or -1 with error().
 */
static int add_host_go(const struct isolate_config *cfg, struct strvec *args,
		       struct strbuf *path_env)
{
	struct strbuf goroot = STRBUF_INIT, why = STRBUF_INIT;
	struct strbuf path = STRBUF_INIT, bin = STRBUF_INIT;
	struct goroot_rules rules;
	const char *p;
	int r, ret = 0;

	goroot_rules(cfg, &rules);
	r = host_goroot(&rules, cfg->go, &goroot, &why);
	if (r < 0 && cfg->go)
		ret = error("cannot create sandbox: go: %s", why.buf);
	else if (r < 0)
		warn_goroot_once(why.buf);
	if (r <= 0)
		goto out;
	strbuf_addf(&bin, "%s/bin", goroot.buf);
	strbuf_addbuf(&path, &bin);
	for (p = path_env->buf; *p;) {
		const char *colon = strchrnul(p, ':');

		if ((size_t)(colon - p) != bin.len ||
		    memcmp(p, bin.buf, bin.len))
			strbuf_addf(&path, ":%.*s", (int)(colon - p), p);
		p = *colon ? colon + 1 : colon;
	}
	strbuf_reset(path_env);
	strbuf_addbuf(path_env, &path);
	if (!starts_with(goroot.buf, "/usr/"))
		strvec_pushv(args, (const char *[]){ "--ro-bind", goroot.buf,
						     goroot.buf, NULL });
out:
	strbuf_release(&goroot);
	strbuf_release(&why);
	strbuf_release(&path);
	strbuf_release(&bin);
	goroot_rules_release(&rules);
	return ret;
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

static int64_t tmpfs_bytes(const struct isolate_config *cfg)
{
	int64_t n = cfg->tmpfs_bytes;

	if (n <= 0) {
		n = ISOLATE_TMPFS_MAX;
		if (cfg->memory_bytes > 0 && cfg->memory_bytes / 2 < n)
			n = cfg->memory_bytes / 2;
	}
	n &= ~(int64_t)4095;
	return n > 4096 ? n : 4096;
}

/*
 * files of /proc that tell of the host: /dev/null over them (on a nodev
 * bind it cannot even be opened)
 */
static const char *const proc_masked[] = { "/proc/cmdline", "/proc/config.gz" };

/*
 * What names netd to the sandbox (netd.h): the proxy variables curl,
 * pip, npm, git and Go read, and GOPROXY; GOTOOLCHAIN=auto when the
 * module path is open, so a go.mod that asks for a newer Go gets that
 * toolchain (golang.org/toolchain) through it. Without netd: no
 * proxy, GOPROXY=off, GOTOOLCHAIN=local (set before).
 */
static void add_net_env(const struct isolate_config *cfg, struct strvec *args)
{
	static const char *const proxy_vars[] = {
		"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
		"http_proxy", "https_proxy", "all_proxy",
	};
	char url[64];
	size_t i;

	if (!cfg->net_proxy || !cfg->modules)
		strvec_pushv(args, (const char *[]){ "--setenv", "GOPROXY",
						     "off", NULL });
	if (!cfg->net_proxy)
		return;
	xsnprintf(url, sizeof(url), "http://127.0.0.1:%d", NETD_PORT);
	for (i = 0; i < ARRAY_SIZE(proxy_vars); i++)
		strvec_pushv(args, (const char *[]){ "--setenv", proxy_vars[i],
						     url, NULL });
	strvec_pushv(args, (const char *[]){ "--setenv", "NO_PROXY",
					     "localhost,127.0.0.1,::1",
					     "--setenv", "no_proxy",
					     "localhost,127.0.0.1,::1", NULL });
	if (cfg->modules) {
		strvec_pushv(args,
			     (const char *[]){ "--setenv", "GOPROXY", NULL });
		strvec_pushf(args, "%s" NETD_GOPROXY_PATH, url);
		strvec_pushv(args, (const char *[]){ "--setenv", "GOTOOLCHAIN",
						     "auto", NULL });
	}
	if (cfg->resolv_conf)
		strvec_pushv(args,
			     (const char *[]){ "--ro-bind", cfg->resolv_conf,
					       "/etc/resolv.conf", NULL });
}

static int build_bwrap_args(const struct isolate_config *cfg,
			    struct strvec *args, int seccomp_fd, int info_fd,
			    int block_fd)
{
	static const char *const root_dirs[] = {
		"/bin", "/lib", "/lib64", "/lib32", "/libx32", "/sbin",
	};
	struct strbuf path_env = STRBUF_INIT;
	char uid[16], tmpfs_size[32];
	size_t i;
	int ret = -1;

	xsnprintf(tmpfs_size, sizeof(tmpfs_size), "%" PRId64, tmpfs_bytes(cfg));
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
	if (cfg->status_fd >= 0) {
		strvec_push(args, "--json-status-fd");
		strvec_pushf(args, "%d", cfg->status_fd);
	}
	/* the command waits until ns_limits_apply() is done */
	strvec_push(args, "--block-fd");
	strvec_pushf(args, "%d", block_fd);

	strvec_pushv(args,
		     (const char *[]){ "--ro-bind", "/usr", "/usr", "--ro-bind",
				       "/etc", "/etc", NULL });
	for (i = 0; i < ARRAY_SIZE(root_dirs); i++)
		add_root_dir(args, root_dirs[i]);
	strvec_pushv(args, (const char *[]){ "--proc", "/proc", "--dev", "/dev",
					     NULL });
	/*
	 * /dev/shm: a tmpfs of its own size, not the one of /dev (bwrap
	 * sizes neither its root nor /dev: each could take half of the
	 * host's memory when there is no memory limit); / and /dev are
	 * made read-only below, once everything is mounted on them
	 */
	strvec_pushv(args, (const char *[]){ "--size", tmpfs_size, "--tmpfs",
					     "/dev/shm", NULL });
	/*
	 * /tmp and HOME (with the Go caches): the claim's own storage, or
	 * tmpfs mounts that stop at their size, so that filling them gives
	 * ENOSPC instead of taking the whole memory limit.
	 */
	if (cfg->tmp_dir)
		strvec_pushv(args, (const char *[]){ "--bind", cfg->tmp_dir,
						     "/tmp", NULL });
	else
		strvec_pushv(args, (const char *[]){ "--size", tmpfs_size,
						     "--tmpfs", "/tmp", NULL });
	if (cfg->home_dir)
		strvec_pushv(args, (const char *[]){ "--bind", cfg->home_dir,
						     ISOLATE_HOME, NULL });
	else
		strvec_pushv(args,
			     (const char *[]){ "--size", tmpfs_size, "--tmpfs",
					       ISOLATE_HOME, NULL });

	/* sysctls: host-global ones must never be written from inside */
	strvec_pushv(args, (const char *[]){ "--ro-bind", "/proc/sys",
					     "/proc/sys", NULL });
	/* the host's boot line and kernel config are not the sandbox's */
	for (i = 0; i < ARRAY_SIZE(proc_masked); i++)
		if (!access(proc_masked[i], F_OK))
			strvec_pushv(args,
				     (const char *[]){ "--ro-bind", "/dev/null",
						       proc_masked[i], NULL });
	strbuf_addstr(&path_env, SANDBOX_PATH ":" ISOLATE_HOME "/go/bin");
	if (add_host_go(cfg, args, &path_env) < 0)
		goto out;
	if (cfg->gocache_lower)
		strvec_pushv(args,
			     (const char *[]){ "--ro-bind", cfg->gocache_lower,
					       GOSTD_SANDBOX_DIR, NULL });
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
		add_net_env(cfg, args);
	for (i = 0; i < cfg->env.nr; i++)
		setenv_arg(args, cfg->env.v[i]);
	/*
	 * Every place the sandbox can write is its storage (/app, /tmp,
	 * HOME: the disk quota) or a sized tmpfs (/dev/shm): the root and
	 * /dev, tmpfs mounts of bwrap's with no size, are read-only
	 */
	strvec_pushv(args, (const char *[]){ "--remount-ro", "/dev",
					     "--remount-ro", "/", NULL });
	strvec_push(args, "--");
	strvec_pushv(args, cfg->argv.v);
	ret = 0;
out:
	strbuf_release(&path_env);
	return ret;
}

/* --- root: staging the bind sources ------------------------------ */

/*
 * As root, the bind sources bwrap gets are staged (isolate.h): source i
 * of src is bound at dst[i], ISOLATE_STAGE_DIR/<i><source path> (the
 * source path kept, so that ps shows what a sandbox binds; the index,
 * so that no bind lands inside another), a directory or a file as
 * is_dir[i] says.
 */
struct stage {
	struct strvec src, dst;
	/* per source: overlay mount options, or "" to bind it */
	struct strvec overlay;
	int *is_dir;
	size_t alloc;
	/* to create first, parents first: the dst directories and theirs */
	struct strvec dirs;
};

/* bwrap options and how many arguments each takes (bwrap(1)) */
static const struct {
	const char *opt;
	int nargs;
	int sources; /* how many of them are host paths to resolve */
} bwrap_opts[] = {
	{ "--unshare-user", 0, 0 },
	{ "--unshare-user-try", 0, 0 },
	{ "--unshare-pid", 0, 0 },
	{ "--unshare-ipc", 0, 0 },
	{ "--unshare-uts", 0, 0 },
	{ "--unshare-net", 0, 0 },
	{ "--unshare-cgroup", 0, 0 },
	{ "--unshare-cgroup-try", 0, 0 },
	{ "--unshare-all", 0, 0 },
	{ "--share-net", 0, 0 },
	{ "--new-session", 0, 0 },
	{ "--die-with-parent", 0, 0 },
	{ "--as-pid-1", 0, 0 },
	{ "--clearenv", 0, 0 },
	{ "--disable-userns", 0, 0 },
	{ "--uid", 1, 0 },
	{ "--gid", 1, 0 },
	{ "--hostname", 1, 0 },
	{ "--chdir", 1, 0 },
	{ "--unsetenv", 1, 0 },
	{ "--seccomp", 1, 0 },
	{ "--add-seccomp-fd", 1, 0 },
	{ "--info-fd", 1, 0 },
	{ "--json-status-fd", 1, 0 },
	{ "--block-fd", 1, 0 },
	{ "--sync-fd", 1, 0 },
	{ "--cap-add", 1, 0 },
	{ "--cap-drop", 1, 0 },
	{ "--proc", 1, 0 },
	{ "--dev", 1, 0 },
	{ "--tmpfs", 1, 0 },
	{ "--mqueue", 1, 0 },
	{ "--dir", 1, 0 },
	{ "--remount-ro", 1, 0 },
	{ "--perms", 1, 0 },
	{ "--size", 1, 0 },
	{ "--tmp-overlay", 1, 0 },
	{ "--ro-overlay", 1, 0 },
	{ "--setenv", 2, 0 },
	{ "--symlink", 2, 0 },
	{ "--chmod", 2, 0 },
	{ "--file", 2, 0 },
	{ "--bind-data", 2, 0 },
	{ "--ro-bind-data", 2, 0 },
	{ "--bind-fd", 2, 0 },
	{ "--ro-bind-fd", 2, 0 },
	{ "--bind", 2, 1 },
	{ "--ro-bind", 2, 1 },
	{ "--dev-bind", 2, 1 },
	{ "--overlay-src", 1, 1 },
	{ "--overlay", 3, 2 },
};

static void stage_init(struct stage *st)
{
	memset(st, 0, sizeof(*st));
	strvec_init(&st->src);
	strvec_init(&st->dst);
	strvec_init(&st->overlay);
	strvec_init(&st->dirs);
}

static void stage_release(struct stage *st)
{
	strvec_clear(&st->src);
	strvec_clear(&st->dst);
	strvec_clear(&st->overlay);
	strvec_clear(&st->dirs);
	free(st->is_dir);
	stage_init(st);
}

/*
 * The host's shared directories whose files a sandbox could lock for
 * everyone (flock(2), fcntl(2) read locks need no write access): as
 * root they are staged as a read-only overlay of themselves, whose
 * files are other inodes, so a lock taken inside stays inside (issue
 * 17). Not where something is mounted below them (an overlay does not
 * show its lower layer's mounts: a container's /etc/resolv.conf, a
 * separate /usr/local): those keep the bind, as do normal users
 * (Debian's bwrap 0.8 cannot mount overlays).
 */
static const char *const lock_private[] = { "/usr", "/etc" };

static int has_submounts(const char *dir)
{
	struct strbuf info = STRBUF_INIT;
	size_t len = strlen(dir);
	char *line, *save = NULL;
	int found = 0;

	if (strbuf_read_file(&info, "/proc/self/mountinfo", 4096) < 0) {
		strbuf_release(&info);
		return 1;
	}
	for (line = strtok_r(info.buf, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save)) {
		/* "id parent major:minor root mountpoint ..." */
		char *f = line;
		int field;

		for (field = 0; field < 4 && f; field++) {
			f = strchr(f, ' ');
			if (f)
				f++;
		}
		if (f && !strncmp(f, dir, len) && f[len] == '/')
			found = 1;
	}
	strbuf_release(&info);
	return found;
}

static const char *overlay_options(const char *opt, const char *src)
{
	size_t k;

	if (strcmp(opt, "--ro-bind"))
		return "";
	for (k = 0; k < ARRAY_SIZE(lock_private); k++)
		if (!strcmp(src, lock_private[k]))
			return has_submounts(src) ? "" : src;
	return "";
}

/*
 * Replace every host path bwrap would resolve in args[from..] (up to
 * "--", the command) by its place under ISOLATE_STAGE_DIR, recorded in
 * st for the child to bind. An option not in bwrap_opts is an error,
 * so that no new bind escapes the staging unnoticed.
 */
static int stage_sources(struct strvec *args, size_t from, struct stage *st)
{
	size_t i = from, k;

	while (i < args->nr && strcmp(args->v[i], "--")) {
		const char *opt = args->v[i];
		int found = -1, n;

		for (k = 0; k < ARRAY_SIZE(bwrap_opts) && found < 0; k++)
			if (!strcmp(bwrap_opts[k].opt, opt))
				found = (int)k;
		if (found < 0)
			return error("cannot create sandbox: uid: cannot stage "
				     "the sources of bwrap option '%s'",
				     opt);
		if (i + bwrap_opts[found].nargs >= args->nr)
			return error("cannot create sandbox: bwrap option "
				     "'%s' lacks its arguments",
				     opt);
		for (n = 1; n <= bwrap_opts[found].sources; n++) {
			const char *src = args->v[i + n], *p;
			struct stat sb;
			struct strbuf dst = STRBUF_INIT;

			if (stat(src, &sb))
				return error_errno("cannot create sandbox: "
						   "bind source '%s'",
						   src);
			ALLOC_GROW(st->is_dir, st->src.nr + 1, st->alloc);
			st->is_dir[st->src.nr] = S_ISDIR(sb.st_mode);
			if (*overlay_options(opt, src))
				strvec_pushf(&st->overlay,
					     "lowerdir=%s:" ISOLATE_STAGE_DIR
					     "/empty",
					     src);
			else
				strvec_push(&st->overlay, "");
			strvec_push(&st->src, src);
			if (*src != '/')
				return error("cannot create sandbox: bind "
					     "source '%s' is not absolute",
					     src);
			strbuf_addf(&dst, ISOLATE_STAGE_DIR "/%u",
				    (unsigned)st->dst.nr);
			strvec_push(&st->dirs, dst.buf);
			for (p = src + 1; *p; p++)
				if (*p == '/' && p[-1] != '/')
					strvec_pushf(&st->dirs, "%s%.*s",
						     dst.buf, (int)(p - src),
						     src);
			strbuf_addstr(&dst, src);
			while (dst.buf[dst.len - 1] == '/')
				strbuf_setlen(&dst, dst.len - 1);
			if (st->is_dir[st->src.nr - 1] &&
			    strcmp(dst.buf, st->dirs.v[st->dirs.nr - 1]))
				strvec_push(&st->dirs, dst.buf);
			strvec_push(&st->dst, dst.buf);
			free((char *)args->v[i + n]);
			args->v[i + n] = strbuf_detach(&dst, NULL);
		}
		i += 1 + bwrap_opts[found].nargs;
	}
	if (mkdir_p(ISOLATE_STAGE_DIR, 0755))
		return error_errno("cannot create sandbox: uid: cannot create "
				   "'%s'",
				   ISOLATE_STAGE_DIR);
	return 0;
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
	STAGE_MOUNTNS,
	STAGE_BIND,
	STAGE_IDS,
	STAGE_FDS,
	STAGE_EXEC,
};

struct child_report {
	int stage;
	int err;
	int bind; /* STAGE_BIND: the index of the bind */
};

struct child_ctx {
	const struct isolate_config *cfg;
	const struct cgroup *join; /* NULL: none */
	struct rlimit nofile, fsize;
	int set_fsize;
	int keep_fds[4 + ISOLATE_MAX_PASS_FDS];
	int nr_keep_fds;
	const char *exe;
	char *const *argv;
	char *const *envp;
	const struct stage *stage; /* NULL: not root */
	uid_t uid;		   /* root: the ids to drop to */
	gid_t gid;
	int report_fd;
};

static NORETURN void child_fail(const struct child_ctx *ctx, int stage)
{
	struct child_report r = { stage, errno, -1 };

	ssize_t w = write(ctx->report_fd, &r, sizeof(r));

	(void)w; /* nothing left to do if the parent is gone */
	_exit(127);
}

/*
 * Root's child: stage the bind sources in a mount namespace of its own,
 * then become the sandbox's host uid and gid for good (no supplementary
 * groups; the kernel clears every capability with the uid change).
 */
static void child_drop(const struct child_ctx *ctx)
{
	const struct stage *st = ctx->stage;
	size_t i;

	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("gosbx-stage", ISOLATE_STAGE_DIR, "tmpfs",
		  MS_NOSUID | MS_NODEV, "mode=0755,size=64k") ||
	    mkdir(ISOLATE_STAGE_DIR "/empty", 0755))
		child_fail(ctx, STAGE_MOUNTNS);
	for (i = 0; i < st->dirs.nr; i++)
		if (mkdir(st->dirs.v[i], 0755) && errno != EEXIST)
			child_fail(ctx, STAGE_MOUNTNS);
	for (i = 0; i < st->src.nr; i++) {
		int fd = -1;

		if (!st->is_dir[i] &&
		    (fd = open(st->dst.v[i], O_WRONLY | O_CREAT | O_CLOEXEC,
			       0644)) < 0)
			goto fail;
		if (fd >= 0)
			close(fd);
		/* an overlay that cannot be had is the plain bind */
		if (*st->overlay.v[i] &&
		    !mount("gosbx-ro", st->dst.v[i], "overlay",
			   MS_RDONLY | MS_NOSUID | MS_NODEV, st->overlay.v[i]))
			continue;
		if (mount(st->src.v[i], st->dst.v[i], NULL, MS_BIND | MS_REC,
			  NULL))
			goto fail;
	}
	if (setgroups(0, NULL) || setresgid(ctx->gid, ctx->gid, ctx->gid) ||
	    setresuid(ctx->uid, ctx->uid, ctx->uid))
		child_fail(ctx, STAGE_IDS);
	if (getuid() != ctx->uid || geteuid() != ctx->uid || !setuid(0)) {
		errno = EPERM;
		child_fail(ctx, STAGE_IDS);
	}
	return;
fail : {
	struct child_report r = { STAGE_BIND, errno, (int)i };
	ssize_t w = write(ctx->report_fd, &r, sizeof(r));

	(void)w;
	_exit(127);
}
}

/* runs between fork() and exec(): async-signal-safe calls only */
static NORETURN void child_run(const struct child_ctx *ctx)
{
	const struct isolate_config *cfg = ctx->cfg;
	struct rlimit zero = { 0, 0 };
	sigset_t none;
	int sig, i, fd, null_fd;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	if (!cfg->die_with_parent && setsid() < 0)
		child_fail(ctx, STAGE_SESSION);
	/* no terminal or other descriptor of the caller's: /dev/null */
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd < 0 ||
	    dup2(cfg->stdin_fd >= 0 ? cfg->stdin_fd : null_fd, 0) < 0 ||
	    dup2(cfg->stdout_fd >= 0 ? cfg->stdout_fd : null_fd, 1) < 0 ||
	    dup2(cfg->stderr_fd >= 0 ? cfg->stderr_fd : null_fd, 2) < 0)
		child_fail(ctx, STAGE_STDIO);
	for (fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_SETFD, 0)) /* dup2(n, n) keeps CLOEXEC */
			child_fail(ctx, STAGE_STDIO);
	if (ctx->join && cgroup_join_self(ctx->join))
		child_fail(ctx, STAGE_CGROUP);
	if (setrlimit(RLIMIT_NOFILE, &ctx->nofile) ||
	    setrlimit(RLIMIT_CORE, &zero) ||
	    (ctx->set_fsize && setrlimit(RLIMIT_FSIZE, &ctx->fsize)))
		child_fail(ctx, STAGE_RLIMIT);
	if (ctx->stage)
		child_drop(ctx);
	/* no descriptor of ours leaks into the sandbox */
	if (syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */)) {
		for (fd = 3; fd < (int)ctx->nofile.rlim_cur && fd < 65536; fd++)
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
	for (i = 0; i < ctx->nr_keep_fds; i++)
		if (fcntl(ctx->keep_fds[i], F_SETFD, 0))
			child_fail(ctx, STAGE_FDS);
	execve(ctx->exe, ctx->argv, ctx->envp);
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
	case STAGE_MOUNTNS:
		return "uid: cannot stage the bind sources in a mount "
		       "namespace (" ISOLATE_STAGE_DIR ")";
	case STAGE_IDS:
		return "uid: cannot drop to the sandbox's host uid";
	case STAGE_FDS:
		return "passing descriptors to bwrap";
	default:
		return "cannot run bwrap";
	}
}

/*
 * Per-user kernel counts capped in the sandbox's own user namespace
 * (isolate.h, ISOLATE_INOTIFY_*). A file of /proc/sys/user is the
 * writer's user namespace's, and writable there with CAP_SYS_RESOURCE:
 * a child of ours joins the sandbox's namespace (we own it, or are
 * root: setns gives every capability inside it) and writes them while
 * bwrap waits on its --block-fd, before the command runs.
 */
#define STR_(x) #x
#define STR(x) STR_(x)
static const struct {
	const char *path;
	const char *value;
} ns_limits[] = {
	{ "/proc/sys/user/max_inotify_instances",
	  STR(ISOLATE_INOTIFY_INSTANCES) },
	{ "/proc/sys/user/max_inotify_watches", STR(ISOLATE_INOTIFY_WATCHES) },
};

/* the sockets of netd.h, made in the sandbox's network namespace */
static int make_net_sockets(int fds[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fds[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fds[0] < 0)
		return -1;
	a.sin_port = htons(NETD_PORT);
	if (setsockopt(fds[0], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fds[0], (struct sockaddr *)&a, sizeof(a)) ||
	    listen(fds[0], 128))
		return -1;
	fds[1] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fds[1] < 0)
		return -1;
	a.sin_port = htons(53);
	return bind(fds[1], (struct sockaddr *)&a, sizeof(a));
}

/* the child's answer: a report, and with NS_REPORT_OK the net sockets */
#define NS_REPORT_SETNS (-1)
#define NS_REPORT_NET (-2)
#define NS_REPORT_OK (-3)

/*
 * The overlay of isolate_config.gocache_lower, mounted in the sandbox's
 * mount namespace by a process with every capability of its user
 * namespace. As the sandbox user: the mounter's credentials are the
 * ones overlayfs copies up and creates with, and as root our own uid
 * has no rights on the sandbox's files (it is not even mapped there).
 * Returns 0 or -1 with errno; async-signal-safe.
 */
/*
 * The first id of /proc/self/uid_map or gid_map: in the user namespace
 * of the sandbox's mounts (its first), the id that is the sandbox's
 * host uid (bwrap maps one). Async-signal-safe. -1 when unreadable.
 */
static long first_mapped_id(const char *path)
{
	char buf[64];
	long id = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, i;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	for (i = 0; i < n && buf[i] == ' '; i++)
		;
	for (; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		id = (id < 0 ? 0 : id * 10) + (buf[i] - '0');
	return id;
}

static int mount_gocache(int mntns)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3,
						0 };
	struct __user_cap_data_struct caps[2];
	long uid = first_mapped_id("/proc/self/uid_map");
	long gid = first_mapped_id("/proc/self/gid_map");

	if (setns(mntns, CLONE_NEWNS) < 0)
		return -1;
	if (uid < 0 || gid < 0) {
		errno = EINVAL;
		return -1;
	}
	if (geteuid() != (uid_t)uid) {
		if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 ||
		    setresgid(gid, gid, gid) < 0 ||
		    setresuid(uid, uid, uid) < 0 ||
		    syscall(SYS_capget, &hdr, caps) < 0)
			return -1;
		caps[0].effective = caps[0].permitted;
		caps[1].effective = caps[1].permitted;
		if (syscall(SYS_capset, &hdr, caps) < 0)
			return -1;
	}
	return mount(
		"overlay", ISOLATE_GOCACHE, "overlay", MS_NOSUID | MS_NODEV,
		"lowerdir=" GOSTD_SANDBOX_DIR ",upperdir=" ISOLATE_GOCACHE_UPPER
		",workdir=" ISOLATE_GOCACHE_WORK ",userxattr");
}

static NORETURN void ns_child(int userns, int netns, int mntns, int out)
{
	/* async-signal-safe calls only; a failure is reported */
	int report[3] = { NS_REPORT_SETNS, 0, 0 }; /* stage, errno, overlay */
	int fds[2] = { -1, -1 };
	char cbuf[CMSG_SPACE(sizeof(fds))];
	struct iovec iov = { .iov_base = report, .iov_len = sizeof(report) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	size_t i;

	if (setns(userns, CLONE_NEWUSER) < 0)
		goto fail;
	for (i = 0; i < ARRAY_SIZE(ns_limits); i++) {
		size_t len = strlen(ns_limits[i].value);
		int f;

		report[0] = (int)i;
		f = open(ns_limits[i].path, O_WRONLY | O_CLOEXEC);
		if (f < 0 || write(f, ns_limits[i].value, len) != (ssize_t)len)
			goto fail;
		close(f);
	}
	report[0] = NS_REPORT_NET;
	if (netns >= 0 &&
	    (setns(netns, CLONE_NEWNET) < 0 || make_net_sockets(fds) < 0))
		goto fail;
	report[0] = NS_REPORT_OK;
	/* last: it may drop to the sandbox's uid */
	if (mntns >= 0 && mount_gocache(mntns) < 0)
		report[2] = errno ? errno : EINVAL;
	if (netns >= 0) {
		struct cmsghdr *cm;

		memset(cbuf, 0, sizeof(cbuf));
		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(fds));
		memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	}
	_exit(sendmsg(out, &msg, MSG_NOSIGNAL) == sizeof(report) ? 0 : 2);
fail:
	report[1] = errno;
	_exit(sendmsg(out, &msg, MSG_NOSIGNAL) == sizeof(report) ? 1 : 2);
}

/* receive the child's report (and sockets) into report and net_fds */
static ssize_t ns_receive(int fd, int report[3], int net_fds[2])
{
	int fds[2];
	char cbuf[CMSG_SPACE(sizeof(fds))];
	struct iovec iov = { .iov_base = report, .iov_len = 3 * sizeof(int) };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	ssize_t n;

	do
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	for (cm = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL; cm;
	     cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(fds))) {
			memcpy(fds, CMSG_DATA(cm), sizeof(fds));
			net_fds[0] = fds[0];
			net_fds[1] = fds[1];
		}
	return n;
}

static int ns_open(pid_t child, const char *ns)
{
	char path[64];
	int fd;

	xsnprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)child, ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		error_errno("cannot create sandbox: namespaces: "
			    "cannot open '%s'",
			    path);
	return fd;
}

/*
 * Wait until bwrap's pid 1 has set the sandbox up: its mounts are all
 * there once it drops its capabilities (CapEff 0 in /proc/<pid>/status,
 * bwrap's drop_privs()), just before it waits on --block-fd. bwrap says
 * nothing at that point; its --info-fd comes right after the clone.
 * Returns 0, or -1 with error() when it died or took over 10 s.
 */
static int wait_setup_done(pid_t child)
{
	struct strbuf path = STRBUF_INIT, sb = STRBUF_INIT;
	int ret = -1, i;

	strbuf_addf(&path, "/proc/%d/status", (int)child);
	for (i = 0; i < 10000; i++) {
		const char *cap;
		int fd = open(path.buf, O_RDONLY | O_CLOEXEC);

		strbuf_reset(&sb);
		if (fd < 0 || strbuf_read_fd(&sb, fd, 4096) < 0) {
			if (fd >= 0)
				close(fd);
			error("cannot create sandbox: namespaces: bwrap "
			      "ended while setting the sandbox up");
			goto out;
		}
		close(fd);
		cap = strstr(sb.buf, "\nCapEff:");
		if (cap && strtoull(cap + 8, NULL, 16) == 0) {
			ret = 0;
			goto out;
		}
		sleep_ms(1);
	}
	error("cannot create sandbox: namespaces: bwrap took over 10 s to "
	      "set the sandbox up");
out:
	strbuf_release(&path);
	strbuf_release(&sb);
	return ret;
}

/*
 * want_net: also make the sockets of netd.h in the sandbox's network
 * namespace (isolate_config.net_proxy) into h->net_fds
 */
static int ns_limits_apply(pid_t child, int want_net, int want_gocache,
			   struct isolate_handle *h)
{
	int report[3] = { NS_REPORT_SETNS, 0, 0 };
	int p[2], status, userns, netns = -1, mntns = -1;
	ssize_t n;
	pid_t pid;

	/*
	 * The user namespace that owns the sandbox's mounts and network,
	 * bwrap's first: its second, nested one (that maps the sandbox
	 * uid) may not exist yet, and has no say over either.
	 */
	/* the net sockets need its lo up, the overlay its mounts */
	if ((want_net || want_gocache) && wait_setup_done(child) < 0)
		return -1;
	mntns = ns_open(child, "mnt");
	if (mntns < 0)
		return -1;
	userns = ioctl(mntns, NS_GET_USERNS);
	if (userns < 0) {
		error_errno("cannot create sandbox: namespaces: cannot find "
			    "the user namespace of pid %d's mounts",
			    (int)child);
		close(mntns);
		return -1;
	}
	if (!want_gocache) {
		close(mntns);
		mntns = -1;
	}
	if ((want_net && (netns = ns_open(child, "net")) < 0) ||
	    (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) &&
	     error_errno("cannot create sandbox: socketpair"))) {
		close(userns);
		if (netns >= 0)
			close(netns);
		if (mntns >= 0)
			close(mntns);
		return -1;
	}
	pid = fork();
	if (!pid)
		ns_child(userns, netns, mntns, p[1]);
	close(userns);
	if (netns >= 0)
		close(netns);
	if (mntns >= 0)
		close(mntns);
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return error_errno("cannot create sandbox: fork");
	}
	n = ns_receive(p[0], report, h->net_fds);
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return error_errno("cannot create sandbox: waitpid");
	if (WIFEXITED(status) && !WEXITSTATUS(status) &&
	    report[0] == NS_REPORT_OK &&
	    (!want_net || (h->net_fds[0] >= 0 && h->net_fds[1] >= 0))) {
		if (report[2]) {
			errno = report[2];
			warning_errno("the sandbox builds the standard library "
				      "itself: cannot mount the shared build "
				      "cache (" GOSTD_SANDBOX_DIR ") under "
				      "its own");
		}
		return 0;
	}
	errno = n == sizeof(report) ? report[1] : 0;
	if (n == sizeof(report) && report[0] >= 0 &&
	    (size_t)report[0] < ARRAY_SIZE(ns_limits))
		return error_errno("cannot create sandbox: limits: cannot set "
				   "'%s' to %s in the sandbox's user "
				   "namespace",
				   ns_limits[report[0]].path,
				   ns_limits[report[0]].value);
	if (n == sizeof(report) && report[0] == NS_REPORT_NET)
		return error_errno("cannot create sandbox: network: cannot "
				   "listen on 127.0.0.1:%d and :53 in the "
				   "sandbox's network namespace",
				   NETD_PORT);
	return error_errno("cannot create sandbox: limits: cannot join the "
			   "sandbox's user namespace");
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
	struct strvec args = STRVEC_INIT, envp = STRVEC_INIT;
	struct strbuf exe = STRBUF_INIT, unit = STRBUF_INIT;
	struct strbuf envexe = STRBUF_INIT;
	struct stage stage;
	struct child_ctx ctx;
	struct child_report report;
	int seccomp_fd = -1, info[2] = { -1, -1 }, rep[2] = { -1, -1 },
	    block[2] = { -1, -1 };
	int ret = -1, status = 0, own_ids = 0;
	size_t bwrap_from;
	ssize_t n;
	pid_t pid;

	isolate_handle_init(h);
	stage_init(&stage);
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
	ctx.uid = cfg->host_uid;
	ctx.gid = cfg->host_gid;
	if (drops_ids() && !cfg->ids_reserved) {
		if (uidpool_reserve(&ctx.uid, &ctx.gid))
			return -1;
		own_ids = 1;
	}
	if (drops_ids() && (!ctx.uid || !ctx.gid)) {
		error("cannot create sandbox: uid: refusing to run a sandbox "
		      "as host uid or gid 0");
		goto release_ids;
	}
	cgroup_host_detect(&host);
	if (find_bwrap(&exe)) {
		error("cannot create sandbox: namespaces: bwrap not found "
		      "on PATH; install bubblewrap");
		goto out;
	}
	if (plan_rlimits(cfg, &ctx) || plan_limits(cfg, &host, &pl))
		goto out;

	seccomp_fd = seccomp_filter_fd();
	if (seccomp_fd < 0)
		goto out;
	if (pipe2(info, O_CLOEXEC) || pipe2(rep, O_CLOEXEC) ||
	    pipe2(block, O_CLOEXEC)) {
		error_errno("cannot create sandbox: pipe");
		goto out;
	}
	/* bwrap (and systemd-run) get nothing of our environment */
	strvec_push(&envp, ISOLATE_EXEC_PATH);
	if (pl.systemd) {
		/* what systemd-run needs to reach the user's manager */
		static const char *const bus_env[] = {
			"XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"
		};
		size_t i;

		for (i = 0; i < ARRAY_SIZE(bus_env); i++)
			if (getenv(bus_env[i]))
				strvec_pushf(&envp, "%s=%s", bus_env[i],
					     getenv(bus_env[i]));
		strbuf_addf(&unit, "%s%s.scope", SYSTEMD_PREFIX,
			    cfg->claim_name);
		systemd_prefix(cfg, &pl, &args);
		/* systemd-run passes its environment on: env -i clears it */
		if (find_on_path("env", &envexe)) {
			error("cannot create sandbox: 'env' not found");
			goto out;
		}
		strvec_pushv(&args,
			     (const char *[]){ envexe.buf, "-i",
					       ISOLATE_EXEC_PATH, NULL });
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
	bwrap_from = args.nr;
	if (build_bwrap_args(cfg, &args, seccomp_fd, info[1], block[0]))
		goto out;
	if (drops_ids()) {
		if (stage_sources(&args, bwrap_from, &stage))
			goto out;
		ctx.stage = &stage;
	}

	ctx.cfg = cfg;
	ctx.keep_fds[ctx.nr_keep_fds++] = seccomp_fd;
	ctx.keep_fds[ctx.nr_keep_fds++] = info[1];
	ctx.keep_fds[ctx.nr_keep_fds++] = block[0];
	if (cfg->status_fd >= 0)
		ctx.keep_fds[ctx.nr_keep_fds++] = cfg->status_fd;
	for (int i = 0; i < cfg->nr_pass_fds; i++)
		ctx.keep_fds[ctx.nr_keep_fds++] = cfg->pass_fds[i];
	ctx.exe = exe.buf;
	ctx.argv = (char *const *)args.v;
	ctx.envp = (char *const *)envp.v;
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
	close(block[0]);
	block[0] = -1;

	n = read_in_full(rep[0], &report, sizeof(report));
	if (n == sizeof(report) && report.stage == STAGE_BIND) {
		errno = report.err;
		error_errno("cannot create sandbox: uid: cannot stage bind "
			    "source '%s'",
			    report.bind >= 0 &&
					    (size_t)report.bind < stage.src.nr
				    ? stage.src.v[report.bind]
				    : "?");
		goto reap;
	}
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
		      "before the sandbox started (%s %d; its own message, "
		      "if any, went to the sandbox's stderr)",
		      WIFSIGNALED(status) ? "signal" : "exit status",
		      WIFSIGNALED(status) ? WTERMSIG(status)
					  : WEXITSTATUS(status));
		goto fail;
	}
	if (ns_limits_apply(h->child_pid, cfg->net_proxy && !cfg->network,
			    cfg->gocache_lower != NULL, h))
		goto fail;
	/* the command may start now: its limits are in place */
	if (write(block[1], "", 1) != 1) {
		error_errno("cannot create sandbox: namespaces: cannot "
			    "release bwrap");
		goto fail;
	}
	h->start = proc_start_time(pid);
	h->child_start = proc_start_time(h->child_pid);
	h->host_uid = ctx.uid;
	h->host_gid = ctx.gid;
	if (pl.systemd && (locate_scope(&host, pid, unit.buf, &h->cg) ||
			   verify_scope(&h->cg, &pl)))
		goto fail;
	if (drops_ids() && uidpool_bind(ctx.uid, pid, h->start))
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
	/* closed unwritten on failure: bwrap goes on, and is killed */
	if (block[0] >= 0)
		close(block[0]);
	if (block[1] >= 0)
		close(block[1]);
	strvec_clear(&args);
	strvec_clear(&envp);
	strbuf_release(&exe);
	strbuf_release(&unit);
	strbuf_release(&envexe);
	stage_release(&stage);
	cgroup_host_release(&host);
release_ids:
	if (ret && own_ids)
		uidpool_release(ctx.uid, 0, 0);
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

int isolate_destroy(struct isolate_handle *h)
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
	if (drops_ids() && h->host_uid != (uid_t)-1 && h->host_uid)
		uidpool_release(h->host_uid, h->pid, h->start);
	isolate_handle_free(h);
	return ret;
}

void isolate_state_format(const struct isolate_handle *h, struct strbuf *out)
{
	strbuf_addf(out, "pid %d\nstart %" PRIu64 "\n", (int)h->pid, h->start);
	strbuf_addf(out, "child-pid %d\nchild-start %" PRIu64 "\n",
		    (int)h->child_pid, h->child_start);
	strbuf_addf(out, "limits %u\n", h->limits);
	if (h->host_uid != (uid_t)-1)
		strbuf_addf(out, "host-uid %u\nhost-gid %u\n",
			    (unsigned)h->host_uid, (unsigned)h->host_gid);
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
		else if (skip_prefix(p, "host-uid ", &v))
			h->host_uid = (uid_t)strtoul(v, NULL, 10);
		else if (skip_prefix(p, "host-gid ", &v))
			h->host_gid = (gid_t)strtoul(v, NULL, 10);
		p = *eol ? eol + 1 : eol;
	}
	return cgroup_state_parse(&h->cg, text);
}

/* --- doctor ------------------------------------------------------- */

static void add_check(struct doctor_check **v, size_t *nr, size_t *alloc,
		      const char *name, enum doctor_status st, const char *msg,
		      const char *fix)
{
	struct doctor_check *c;

	ALLOC_GROW(*v, *nr + 1, *alloc);
	c = &(*v)[(*nr)++];
	c->name = xstrdup(name);
	c->status = st;
	c->message = xstrdup(msg);
	c->fix = fix && st != DOCTOR_OK ? xstrdup(fix) : NULL;
}

/*
 * A toolchain as sandboxes see it: go is found on our PATH (its GOROOT
 * is bound into every sandbox if host_goroot() trusts it, see
 * add_host_go()); anything else must
 * be in a directory of the sandbox's own PATH, whatever ours says (a
 * pyenv shim or an nvm node in $HOME is not visible inside).
 */
static void doctor_tool(struct doctor_check **v, size_t *nr, size_t *alloc,
			const char *tool, const char *flag, const char *fix,
			enum doctor_status missing)
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
	} else if (host) {
		struct goroot_rules rules;
		struct strbuf goroot = STRBUF_INIT, why = STRBUF_INIT;

		first_line(&out);
		goroot_rules(NULL, &rules);
		if (host_goroot(&rules, NULL, &goroot, &why) > 0) {
			strbuf_addf(&out, " (%s, GOROOT %s)", path.buf,
				    goroot.buf);
			add_check(v, nr, alloc, tool, DOCTOR_OK, out.buf, NULL);
		} else {
			strbuf_addf(&out,
				    " (%s), but sandboxes do not get it: %s",
				    path.buf, why.buf);
			add_check(v, nr, alloc, tool, missing, out.buf,
				  "put a Go whose GOROOT lies outside your "
				  "home, state and cache directories first "
				  "on PATH (or install golang-go)");
		}
		goroot_rules_release(&rules);
		strbuf_release(&goroot);
		strbuf_release(&why);
	} else {
		first_line(&out);
		strbuf_addf(&out, " (%s)", path.buf);
		add_check(v, nr, alloc, tool, DOCTOR_OK, out.buf, NULL);
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

/*
 * Run argv as root's sandboxes run: as a reserved host uid (given back
 * afterwards; *uid says which), no groups, no capabilities, only
 * ISOLATE_EXEC_PATH in the environment. Output appended to out.
 * Returns the wait status, or -1.
 */
static int run_as_sandbox(const char *const *argv, uid_t *uid,
			  struct strbuf *out)
{
	char *const envp[] = { (char *)ISOLATE_EXEC_PATH, NULL };
	gid_t gid;
	int pipefd[2], status = -1;
	pid_t pid;

	if (uidpool_reserve(uid, &gid)) {
		strbuf_addstr(out, last_error());
		return -1;
	}
	if (pipe2(pipefd, O_CLOEXEC)) {
		strbuf_addf(out, "pipe: %s", strerror(errno));
		goto out;
	}
	pid = fork();
	if (!pid) {
		int null_fd = open("/dev/null", O_RDONLY);

		if (null_fd < 0 || dup2(null_fd, 0) < 0 ||
		    dup2(pipefd[1], 1) < 0 || dup2(pipefd[1], 2) < 0 ||
		    setgroups(0, NULL) || setresgid(gid, gid, gid) ||
		    setresuid(*uid, *uid, *uid))
			_exit(126);
		execve(argv[0], (char *const *)argv, envp);
		_exit(127);
	}
	close(pipefd[1]);
	if (pid > 0) {
		char buf[512];
		ssize_t r;

		while ((r = xread(pipefd[0], buf, sizeof(buf))) > 0)
			strbuf_add(out, buf, r);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	close(pipefd[0]);
out:
	uidpool_release(*uid, 0, 0);
	return status;
}

/* which host uid sandboxes run as (Documentation/technical/design.md: never uid
 * 0) */
static void doctor_sandbox_user(struct doctor_check **v, size_t *nr,
				size_t *alloc)
{
	struct uidpool_range r;
	struct strbuf msg = STRBUF_INIT;
	size_t live = 0;

	if (!drops_ids()) {
		strbuf_addf(&msg,
			    "sandboxes run as your uid %u (uid %d inside); "
			    "as root each would get a host uid of its own",
			    (unsigned)geteuid(), ISOLATE_SANDBOX_UID);
		add_check(v, nr, alloc, "sandbox user", DOCTOR_OK, msg.buf,
			  NULL);
	} else if (uidpool_range(&r) || uidpool_count_live(&live)) {
		strbuf_addf(&msg, "root's sandboxes cannot get host uids: %s",
			    last_error());
		add_check(v, nr, alloc, "sandbox user", DOCTOR_FAIL, msg.buf,
			  "fix the 'gosbx' lines of /etc/subuid and "
			  "/etc/subgid (gosbx:<first>:<count>, both), or "
			  "remove both for the built-in range");
	} else {
		strbuf_addf(&msg,
			    "running as root: each sandbox runs as a host uid "
			    "and gid of its own, never 0, from %u-%u (%s), %zu "
			    "in use now",
			    r.uid_base, r.uid_base + r.count - 1, r.source,
			    live);
		add_check(v, nr, alloc, "sandbox user", DOCTOR_OK, msg.buf,
			  NULL);
	}
	strbuf_release(&msg);
}

int isolate_bwrap_version(struct strbuf *path, struct strbuf *version)
{
	const char *argv[] = { NULL, "--version", NULL };

	strbuf_reset(path);
	strbuf_reset(version);
	if (find_bwrap(path)) {
		strbuf_reset(path);
		return 0;
	}
	argv[0] = path->buf;
	if (!exited_ok(run_capture(argv, version, 10000))) {
		strbuf_reset(version);
		return -1;
	}
	first_line(version);
	return 1;
}

int isolate_doctor(struct doctor_check **checks, size_t *nr)
{
	struct doctor_check *v = NULL;
	size_t n = 0, alloc = 0;
	struct strbuf bwrap = STRBUF_INIT, out = STRBUF_INIT;
	struct cgroup_host host;
	int c;

	/* bubblewrap */
	if (find_bwrap(&bwrap)) {
		add_check(&v, &n, &alloc, "bwrap", DOCTOR_FAIL,
			  "bwrap not found on PATH",
			  "install bubblewrap (apt-get install bubblewrap, "
			  "dnf install bubblewrap)");
	} else {
		const char *argv[] = { bwrap.buf, "--version", NULL };

		if (exited_ok(run_capture(argv, &out, 10000))) {
			first_line(&out);
			strbuf_addf(&out, " (%s)", bwrap.buf);
			add_check(&v, &n, &alloc, "bwrap", DOCTOR_OK, out.buf,
				  NULL);
		} else {
			strbuf_reset(&out);
			strbuf_addf(&out, "'%s --version' failed", bwrap.buf);
			add_check(&v, &n, &alloc, "bwrap", DOCTOR_FAIL, out.buf,
				  "reinstall bubblewrap");
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

		uid_t uid = geteuid();
		int st = drops_ids() ? run_as_sandbox(argv, &uid, &out)
				     : run_capture(argv, &out, 10000);

		if (exited_ok(st)) {
			strbuf_reset(&out);
			strbuf_addf(&out,
				    "'bwrap --unshare-user true' works (as "
				    "uid %u%s)",
				    (unsigned)uid,
				    drops_ids() ? ", as root's sandboxes do"
						: "");
			add_check(&v, &n, &alloc, "user namespaces", DOCTOR_OK,
				  out.buf, NULL);
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
				&v, &n, &alloc, "user namespaces", DOCTOR_FAIL,
				out.buf,
				"allow unprivileged user namespaces: sysctl "
				"kernel.unprivileged_userns_clone=1 (Debian), "
				"sysctl user.max_user_namespaces=15000, or on "
				"Ubuntu 24.04+ sysctl kernel.apparmor_restrict_"
				"unprivileged_userns=0");
		}
	} else {
		add_check(&v, &n, &alloc, "user namespaces", DOCTOR_FAIL,
			  "not tried: bwrap is missing", "install bubblewrap");
	}

	doctor_sandbox_user(&v, &n, &alloc);

	/* seccomp */
	strbuf_reset(&out);
	if (seccomp_filter_available(&out))
		add_check(&v, &n, &alloc, "seccomp", DOCTOR_OK,
			  "the kernel filters system calls and libseccomp "
			  "builds the gosbx filter",
			  NULL);
	else
		add_check(&v, &n, &alloc, "seccomp", DOCTOR_FAIL, out.buf,
			  "use a kernel built with CONFIG_SECCOMP "
			  "and CONFIG_SECCOMP_FILTER");

	/* cgroups */
	cgroup_host_detect(&host);
	strbuf_reset(&out);
	cgroup_host_describe(&host, &out);
	add_check(&v, &n, &alloc, "cgroups",
		  host.layout == CGROUP_LAYOUT_NONE ? DOCTOR_WARN : DOCTOR_OK,
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
			  mode == MODE_NONE ? DOCTOR_WARN : DOCTOR_OK, out.buf,
			  limit_fix(&host, c, &fix));
		strbuf_release(&why);
		strbuf_release(&fix);
	}
	cgroup_host_release(&host);

	/* toolchains */
	doctor_tool(&v, &n, &alloc, "go", "version",
		    "install Go (apt-get install golang-go)", DOCTOR_FAIL);
	doctor_tool(&v, &n, &alloc, "python3", "--version",
		    "install Python 3 (apt-get install python3)", DOCTOR_WARN);
	doctor_tool(&v, &n, &alloc, "node", "--version",
		    "install Node.js (apt-get install nodejs)", DOCTOR_WARN);

	strbuf_release(&bwrap);
	strbuf_release(&out);
	*checks = v;
	*nr = n;
	return 0;
}

/*
 * The module proxy of local sandboxes (modproxy.h).
 *
 * Design: the request path is decoded once and checked against the
 * grammar of the GOPROXY and checksum database protocols before
 * anything else happens; what passes names a module version (or a
 * checksum database resource) and nothing else. A module version is
 * fetched by the host's go command, never by this file: `go list -m`
 * for .info and .mod (it fetches both and checks the go.mod against
 * GOSUMDB), `go mod download` for .zip (it checks the zip), each in a
 * clean environment, in an empty directory, in a process group of its
 * own that is killed at the time limit, with its output bounded. The
 * go command locks the module cache itself, so that requests from
 * several sandboxes for the same version may run at once. What the
 * cache then holds is served as it is. Checksum database requests are
 * relayed to sumdb_upstream with libcurl, bounded in size and time.
 */
#include "compat.h"
#include "dir.h"
#include "http.h"
#include "goenv.h"
#include "json.h"
#include "local/modproxy.h"
#include "log.h"
#include "run-command.h"
#include "strbuf.h"
#include "strvec.h"
#include "usage.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

extern char **environ;

/* what a go command may print that is kept, bytes */
#define GO_OUT_MAX (1 << 20)
#define GO_ERR_MAX (64 << 10)
/* the longest version or query, bytes */
#define VERSION_MAX 256
#define QUERY_MAX 128
/* the longest reason phrase and error body made of the go command's error */
#define REASON_MAX 300
#define ERROR_BODY_MAX 4096
/* `go env` at load time, and the probe of the GOPROXY's sumdb support */
#define GO_ENV_TIMEOUT_MS 60000
#define PROBE_TIMEOUT_MS 10000
#define FILE_CHUNK (64 << 10)

static const char *const go_env_vars[] = {
	"GOPROXY",    "GOSUMDB", "GOPRIVATE", "GONOPROXY", "GONOSUMDB",
	"GOINSECURE", "GOAUTH",	 "GOVCS",     "GOENV",
};
/* what of the caller's environment reaches the go command */
static const char *const pass_env_vars[] = {
	"http_proxy",  "https_proxy", "no_proxy",      "HTTP_PROXY",
	"HTTPS_PROXY", "NO_PROXY",    "SSL_CERT_FILE", "SSL_CERT_DIR",
};

void modproxy_config_init(struct modproxy_config *c)
{
	memset(c, 0, sizeof(*c));
	strvec_init(&c->env);
}

void modproxy_config_release(struct modproxy_config *c)
{
	free(c->go);
	free(c->cache_dir);
	strvec_clear(&c->env);
	free(c->sumdb_upstream);
	modproxy_config_init(c);
}

/* The value of key in c->env ("" when absent); owned by c. */
static const char *config_get(const struct modproxy_config *c, const char *key)
{
	size_t i, n = strlen(key);

	for (i = 0; i < c->env.nr; i++)
		if (!strncmp(c->env.v[i], key, n) && c->env.v[i][n] == '=')
			return c->env.v[i] + n + 1;
	return "";
}

/* ---- paths: decoding, escaping, the rules of golang.org/x/mod/module */

static int fail(struct strbuf *why, const char *msg)
{
	strbuf_addstr(why, msg);
	return -1;
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* percent-decode s once into out: printable ASCII only */
static int pct_decode(const char *s, struct strbuf *out, struct strbuf *why)
{
	for (; *s; s++) {
		int ch = (unsigned char)*s;

		if (ch == '%') {
			int hi = hexval((unsigned char)s[1]), lo;

			lo = hi < 0 ? -1 : hexval((unsigned char)s[2]);
			if (lo < 0) {
				strbuf_addstr(why, "bad percent-encoding");
				return -1;
			}
			ch = hi << 4 | lo;
			s += 2;
		}
		if (ch <= 0x20 || ch >= 0x7f) {
			strbuf_addf(why, "byte 0x%02x in path", ch);
			return -1;
		}
		strbuf_addch(out, ch);
	}
	return 0;
}

/* module.UnescapePath/UnescapeVersion: "!x" is 'X'; 'X' is refused */
static int unescape(const char *s, size_t len, struct strbuf *out,
		    struct strbuf *why)
{
	size_t i;

	strbuf_reset(out);
	for (i = 0; i < len; i++) {
		char ch = s[i];

		if (ch >= 'A' && ch <= 'Z') {
			strbuf_addstr(why,
				      "upper-case letter not escaped with '!'");
			return -1;
		}
		if (ch == '!') {
			if (i + 1 >= len || s[i + 1] < 'a' || s[i + 1] > 'z') {
				strbuf_addstr(why, "'!' not before a "
						   "lower-case letter");
				return -1;
			}
			ch = s[++i] - 'a' + 'A';
		}
		strbuf_addch(out, ch);
	}
	return 0;
}

static void escape(const char *s, struct strbuf *out)
{
	for (; *s; s++) {
		if (*s >= 'A' && *s <= 'Z') {
			strbuf_addch(out, '!');
			strbuf_addch(out, *s - 'A' + 'a');
		} else {
			strbuf_addch(out, *s);
		}
	}
}

static int is_lower_alnum(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
}

static int is_alnum(int ch)
{
	return is_lower_alnum(ch) || (ch >= 'A' && ch <= 'Z');
}

/* module.modPathOK */
static int mod_path_ok(int ch)
{
	return is_alnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~';
}

/* module.checkElem for a module path element */
static int check_elem(const char *e, size_t len, struct strbuf *why)
{
	static const char *const bad_windows[] = {
		"CON",	"PRN",	"AUX",	"NUL",	"COM1", "COM2", "COM3", "COM4",
		"COM5", "COM6", "COM7", "COM8", "COM9", "LPT1", "LPT2", "LPT3",
		"LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
	};
	const char *dot = memchr(e, '.', len), *tilde;
	size_t i, short_len = dot ? (size_t)(dot - e) : len;

	if (!len)
		return fail(why, "empty path element");
	if (e[0] == '.')
		return fail(why, "leading dot in path element");
	if (e[len - 1] == '.')
		return fail(why, "trailing dot in path element");
	for (i = 0; i < len; i++)
		if (!mod_path_ok((unsigned char)e[i])) {
			strbuf_addf(why, "invalid char '%c'", e[i]);
			return -1;
		}
	for (i = 0; i < ARRAY_SIZE(bad_windows); i++)
		if (strlen(bad_windows[i]) == short_len &&
		    !strncasecmp(e, bad_windows[i], short_len))
			return fail(why, "path element disallowed on "
					 "Windows");
	tilde = memrchr(e, '~', short_len);
	if (tilde && tilde < e + short_len - 1) {
		for (i = tilde + 1 - e; i < short_len; i++)
			if (e[i] < '0' || e[i] > '9')
				return 0;
		return fail(why, "trailing tilde and digits in path "
				 "element");
	}
	return 0;
}

/* module.SplitPathVersion's check of a "/vN" or gopkg.in ".vN" suffix */
static int check_path_major(const char *p, struct strbuf *why)
{
	size_t len = strlen(p), i = len;
	int dot = 0;

	if (starts_with(p, "gopkg.in/")) {
		size_t end = len;

		if (ends_with(p, "-unstable"))
			end -= strlen("-unstable");
		for (i = end; i > 0 && p[i - 1] >= '0' && p[i - 1] <= '9';)
			i--;
		if (i <= 1 || i == end || p[i - 1] != 'v' || p[i - 2] != '.' ||
		    (p[i] == '0' && end - i > 1))
			return fail(why, "invalid gopkg.in version suffix");
		return 0;
	}
	while (i > 0 &&
	       ((p[i - 1] >= '0' && p[i - 1] <= '9') || p[i - 1] == '.')) {
		dot |= p[i - 1] == '.';
		i--;
	}
	if (i <= 1 || i == len || p[i - 1] != 'v' || p[i - 2] != '/')
		return 0;
	if (dot || p[i] == '0' || (p[i] == '1' && i + 1 == len))
		return fail(why, "invalid major version suffix");
	return 0;
}

/* module.CheckPath */
static int check_module_path(const char *p, struct strbuf *why)
{
	const char *e = p, *slash;
	size_t first = strcspn(p, "/");
	size_t i;

	if (!*p)
		return fail(why, "empty module path");
	if (*p == '-')
		return fail(why, "leading dash");
	if (!first)
		return fail(why, "leading slash");
	for (;;) {
		slash = strchr(e, '/');
		if (check_elem(e, slash ? (size_t)(slash - e) : strlen(e),
			       why) < 0)
			return -1;
		if (!slash)
			break;
		e = slash + 1;
	}
	if (!memchr(p, '.', first))
		return fail(why, "missing dot in first path element");
	for (i = 0; i < first; i++)
		if (!is_lower_alnum((unsigned char)p[i]) && p[i] != '-' &&
		    p[i] != '.') {
			strbuf_addf(why,
				    "invalid char '%c' in first path "
				    "element",
				    p[i]);
			return -1;
		}
	return check_path_major(p, why);
}

/* a decimal number without leading zeros; advances *p */
static int skip_num(const char **p)
{
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return -1;
	if (*s == '0' && s[1] >= '0' && s[1] <= '9')
		return -1;
	while (*s >= '0' && *s <= '9')
		s++;
	*p = s;
	return 0;
}

/* a semver pre-release: identifiers of [0-9A-Za-z-] separated by '.' */
static int skip_prerelease(const char **p)
{
	const char *s = *p;

	for (;;) {
		const char *start = s;
		int digits = 1;

		while (is_alnum((unsigned char)*s) || *s == '-') {
			digits &= *s >= '0' && *s <= '9';
			s++;
		}
		if (s == start || (digits && *start == '0' && s - start > 1))
			return -1;
		if (*s != '.')
			break;
		s++;
	}
	*p = s;
	return 0;
}

/*
 * A canonical semantic version (golang.org/x/mod/semver Canonical(v)
 * == v), pseudo-versions included, with "+incompatible" from v2 on.
 */
static int is_canonical_version(const char *v)
{
	const char *p = v + 1, *major = p;

	if (*v != 'v' || skip_num(&p) < 0)
		return 0;
	if (p - major == 1 && (*major == '0' || *major == '1') &&
	    ends_with(v, "+incompatible"))
		return 0;
	if (*p++ != '.' || skip_num(&p) < 0 || *p++ != '.' || skip_num(&p) < 0)
		return 0;
	if (*p == '-' && (p++, skip_prerelease(&p) < 0))
		return 0;
	return !*p || !strcmp(p, "+incompatible");
}

/* a query the go command resolves: a branch, tag or commit name */
static int is_query(const char *v)
{
	const char *p;

	if (!is_alnum((unsigned char)*v) || strlen(v) > QUERY_MAX ||
	    strstr(v, ".."))
		return 0;
	for (p = v; *p; p++)
		if (!is_alnum((unsigned char)*p) && !strchr("._-", *p))
			return 0;
	return 1;
}

/* unescape and check an escaped version */
static int parse_version(const char *s, size_t len, int allow_query,
			 struct strbuf *out, struct strbuf *why)
{
	if (len > VERSION_MAX)
		return fail(why, "version too long");
	if (unescape(s, len, out, why) < 0)
		return -1;
	if (is_canonical_version(out->buf) ||
	    (allow_query && is_query(out->buf)))
		return 0;
	strbuf_addf(why, "version '%s' is not canonical", out->buf);
	return -1;
}

static int parse_module(const char *s, size_t len, struct strbuf *out,
			struct strbuf *why)
{
	if (unescape(s, len, out, why) < 0)
		return -1;
	if (check_module_path(out->buf, why) < 0)
		return -1;
	return 0;
}

/* three decimal digits; advances *p */
static int skip_3digits(const char **p)
{
	const char *s = *p;

	if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' ||
	    s[2] < '0' || s[2] > '9')
		return -1;
	*p = s + 3;
	return 0;
}

/*
 * golang.org/x/mod/sumdb/tlog ParseTilePath, height 8 only, at most 7
 * index groups: "8/<L>/[x<ddd>/]...<ddd>[.p/<W>]", t after "tile/"
 */
static int check_tile(const char *t, struct strbuf *why)
{
	const char *w;
	int groups = 0;

	if (!skip_prefix(t, "8/", &t))
		return fail(why, "tile height is not 8");
	if (!skip_prefix(t, "data/", &t)) {
		if (t[0] < '0' || t[0] > '9' || t[1] != '/')
			return fail(why, "bad tile level");
		t += 2;
	}
	for (;;) {
		int x = *t == 'x';

		t += x;
		if (skip_3digits(&t) < 0 || ++groups > 7)
			return fail(why, "bad tile index");
		if (!x)
			break;
		if (*t++ != '/')
			return fail(why, "bad tile index");
	}
	if (!*t)
		return 0;
	if (!skip_prefix(t, ".p/", &t))
		return fail(why, "bad tile index");
	w = t;
	if (skip_num(&t) < 0 || *t || t - w > 3 || atoi(w) < 1 || atoi(w) > 255)
		return fail(why, "bad partial tile width");
	return 0;
}

/* a checksum database name: a host name */
static int check_sumdb_name(const char *s, size_t len, struct strbuf *why)
{
	size_t i;

	if (!len || len > 253 || !is_alnum((unsigned char)*s))
		return fail(why, "bad checksum database name");
	for (i = 0; i < len; i++)
		if (!is_alnum((unsigned char)s[i]) && !strchr(".-_", s[i]))
			return fail(why, "bad checksum database name");
	return 0;
}

/* s: after "sumdb/" */
static int parse_sumdb(const char *s, struct strbuf *module,
		       struct strbuf *version, enum modproxy_kind *kind,
		       struct strbuf *why)
{
	const char *slash = strchr(s, '/'), *rest, *at;
	struct strbuf m = STRBUF_INIT, v = STRBUF_INIT;
	int ret = -1;

	if (!slash) {
		fail(why, "not a checksum database path");
		goto out;
	}
	if (check_sumdb_name(s, slash - s, why) < 0)
		goto out;
	strbuf_add(module, s, slash - s);
	rest = slash + 1;
	if (!strcmp(rest, "supported")) {
		*kind = MODPROXY_SUMDB_SUPPORTED;
	} else if (!strcmp(rest, "latest")) {
		*kind = MODPROXY_SUMDB_LATEST;
	} else if (skip_prefix(rest, "lookup/", &at)) {
		*kind = MODPROXY_SUMDB_LOOKUP;
		at = strchr(rest, '@');
		if (!at) {
			fail(why, "lookup without '@'");
			goto out;
		}
		if (parse_module(rest + 7, at - rest - 7, &m, why) < 0 ||
		    parse_version(at + 1, strlen(at + 1), 0, &v, why) < 0)
			goto out;
		strbuf_addstr(version, "lookup/");
		escape(m.buf, version);
		strbuf_addch(version, '@');
		escape(v.buf, version);
		ret = 0;
		goto out;
	} else if (skip_prefix(rest, "tile/", &at)) {
		*kind = MODPROXY_SUMDB_TILE;
		if (check_tile(at, why) < 0)
			goto out;
	} else {
		fail(why, "not a checksum database path");
		goto out;
	}
	strbuf_addstr(version, rest);
	ret = 0;
out:
	strbuf_release(&m);
	strbuf_release(&v);
	return ret;
}

/* s: "<module>/@v/..." or "<module>/@latest" */
static int parse_goproxy(const char *s, struct strbuf *module,
			 struct strbuf *version, enum modproxy_kind *kind,
			 struct strbuf *why)
{
	const char *at = strstr(s, "/@"), *file, *dot;

	if (!at)
		return fail(why, "not a GOPROXY path");
	if (parse_module(s, at - s, module, why) < 0)
		return -1;
	if (!strcmp(at, "/@latest")) {
		*kind = MODPROXY_LATEST;
		return 0;
	}
	if (!strcmp(at, "/@v/list")) {
		*kind = MODPROXY_LIST;
		return 0;
	}
	if (!skip_prefix(at, "/@v/", &file) || strchr(file, '/') ||
	    !(dot = strrchr(file, '.')))
		return fail(why, "not a GOPROXY path");
	if (!strcmp(dot, ".info"))
		*kind = MODPROXY_INFO;
	else if (!strcmp(dot, ".mod"))
		*kind = MODPROXY_MOD;
	else if (!strcmp(dot, ".zip"))
		*kind = MODPROXY_ZIP;
	else
		return fail(why, "not a GOPROXY path");
	return parse_version(file, dot - file, *kind == MODPROXY_INFO, version,
			     why);
}

int modproxy_parse_path(const char *path, struct strbuf *module,
			struct strbuf *version, enum modproxy_kind *kind,
			struct strbuf *why)
{
	struct strbuf dec = STRBUF_INIT;
	const char *rest;
	int ret = -1;

	strbuf_reset(module);
	strbuf_reset(version);
	if (strlen(path) > MODPROXY_PATH_MAX) {
		strbuf_addf(why, "path over %d bytes", MODPROXY_PATH_MAX);
		goto out;
	}
	if (pct_decode(path, &dec, why) < 0)
		goto out;
	if (strstr(dec.buf, "..")) {
		fail(why, "'..' in path");
		goto out;
	}
	if (!dec.len || dec.buf[0] == '/' || dec.buf[dec.len - 1] == '/') {
		fail(why, "'/' at an end of the path");
		goto out;
	}
	if (skip_prefix(dec.buf, "sumdb/", &rest))
		ret = parse_sumdb(rest, module, version, kind, why);
	else
		ret = parse_goproxy(dec.buf, module, version, kind, why);
out:
	if (ret < 0) {
		strbuf_reset(module);
		strbuf_reset(version);
	}
	strbuf_release(&dec);
	return ret;
}

/*
 * module.MatchPrefixPatterns: a comma-separated list of path.Match
 * globs, each matching the leading path elements of target (as many
 * as it has)
 */
static int match_prefix_patterns(const char *globs, const char *target)
{
	struct strbuf glob = STRBUF_INIT, prefix = STRBUF_INIT;
	int found = 0;

	while (*globs && !found) {
		size_t len = strcspn(globs, ","), n = 0, i;

		strbuf_reset(&glob);
		strbuf_add(&glob, globs, len);
		globs += len + (globs[len] == ',');
		while (glob.len && glob.buf[glob.len - 1] == '/')
			strbuf_setlen(&glob, glob.len - 1);
		if (!glob.len)
			continue;
		for (i = 0; i < glob.len; i++)
			n += glob.buf[i] == '/';
		for (i = 0; target[i]; i++) {
			if (target[i] != '/')
				continue;
			if (!n)
				break;
			n--;
		}
		if (n)
			continue; /* fewer elements than the glob */
		strbuf_reset(&prefix);
		strbuf_add(&prefix, target, i);
		found = !fnmatch(glob.buf, prefix.buf, FNM_PATHNAME);
	}
	strbuf_release(&glob);
	strbuf_release(&prefix);
	return found;
}

/* ---- running the go command */

/* append ": <strerror(errno)>" after what (thread-safe) */
static void add_errno(struct strbuf *sb, const char *what)
{
	char buf[128];

	strbuf_addf(sb, "%s: %s", what, strerror_r(errno, buf, sizeof(buf)));
}

static pthread_mutex_t go_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go_cond = PTHREAD_COND_INITIALIZER;
static int go_running;

/* wait at most wait_ms for one of the MODPROXY_MAX_GO places: 0 or -1 */
static int go_slot_take(uint64_t wait_ms)
{
	struct timespec ts;
	int ret = -1;

	deadline_in_ms(&ts, CLOCK_REALTIME, wait_ms);
	pthread_mutex_lock(&go_lock);
	while (go_running >= MODPROXY_MAX_GO)
		if (pthread_cond_timedwait(&go_cond, &go_lock, &ts) ==
		    ETIMEDOUT)
			break;
	if (go_running < MODPROXY_MAX_GO) {
		go_running++;
		ret = 0;
	}
	pthread_mutex_unlock(&go_lock);
	return ret;
}

static void go_slot_give(void)
{
	pthread_mutex_lock(&go_lock);
	go_running--;
	pthread_cond_signal(&go_cond);
	pthread_mutex_unlock(&go_lock);
}

/* async-signal-safe: between fork and exec, in a thread's child */
static NORETURN void exec_child(char *const *argv, char *const *envp,
				const char *cwd, int out, int err)
{
	int fds[3], i;
	sigset_t none;

	if (setpgid(0, 0) < 0)
		_exit(127);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	/* above 0-2 first, so that no dup2 overwrites a source */
	fds[0] = open("/dev/null", O_RDONLY);
	fds[1] = out;
	fds[2] = err;
	for (i = 0; i < 3; i++)
		if (fds[i] < 0 || (fds[i] = fcntl(fds[i], F_DUPFD, 10)) < 0)
			_exit(127);
	for (i = 0; i < 3; i++)
		if (dup2(fds[i], i) < 0)
			_exit(127);
	if (chdir(cwd) < 0)
		_exit(127);
	syscall(SYS_close_range, 3, ~0U, 0);
	execve(argv[0], argv, envp);
	_exit(127);
}

struct go_result {
	struct strbuf out, err; /* what it printed, bounded */
	int status;		/* wait status; -1: it did not run */
	int timed_out;		/* killed at the time limit */
};

#define GO_RESULT_INIT                                                         \
	{                                                                      \
		STRBUF_INIT, STRBUF_INIT, -1, 0                                \
	}

static void go_result_release(struct go_result *r)
{
	strbuf_release(&r->out);
	strbuf_release(&r->err);
}

/*
 * Read the child's stdout (fds[0]) and stderr (fds[1]) until both end
 * or the deadline passes; when the child itself ends (pidfd readable),
 * what is left of its process group is killed. Returns 1 when the
 * deadline passed.
 */
static int collect(pid_t pid, int fds[3], uint64_t deadline,
		   struct go_result *r)
{
	struct strbuf *bufs[2] = { &r->out, &r->err };
	const size_t caps[2] = { GO_OUT_MAX, GO_ERR_MAX };
	char *buf = xmalloc(16384);
	int timed_out = 0;

	while (fds[0] >= 0 || fds[1] >= 0) {
		struct pollfd p[3];
		int64_t left = (int64_t)(deadline - monotonic_ms());
		int i;

		if (left <= 0) {
			timed_out = 1;
			break;
		}
		for (i = 0; i < 3; i++) {
			p[i].fd = fds[i];
			p[i].events = POLLIN;
			p[i].revents = 0;
		}
		if (poll(p, 3, (int)left) < 0 && errno != EINTR)
			break;
		for (i = 0; i < 2; i++) {
			ssize_t n;

			if (fds[i] < 0 || !p[i].revents)
				continue;
			n = xread(fds[i], buf, 16384);
			if (n <= 0) {
				close(fds[i]);
				fds[i] = -1;
			} else if (bufs[i]->len < caps[i]) {
				strbuf_add(bufs[i], buf, n);
			}
		}
		if (fds[2] >= 0 && p[2].revents) {
			/* it ended: nothing of its group outlives it */
			kill(-pid, SIGKILL);
			close(fds[2]);
			fds[2] = -1;
		}
	}
	free(buf);
	return timed_out;
}

/* run argv with envp in cwd for at most timeout_ms; fills r */
static void run_child(char *const *argv, char *const *envp, const char *cwd,
		      uint64_t timeout_ms, struct go_result *r)
{
	int out[2] = { -1, -1 }, err[2] = { -1, -1 }, fds[3], i;
	pid_t pid;

	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		add_errno(&r->err, "pipe");
		goto out;
	}
	pid = fork();
	if (!pid)
		exec_child(argv, envp, cwd, out[1], err[1]);
	if (pid < 0) {
		add_errno(&r->err, "fork");
		goto out;
	}
	setpgid(pid, pid); /* either side may win the race */
	close(out[1]);
	close(err[1]);
	out[1] = err[1] = -1;
	fds[0] = out[0];
	fds[1] = err[0];
	fds[2] = (int)syscall(SYS_pidfd_open, pid, 0);
	out[0] = err[0] = -1;
	r->timed_out = collect(pid, fds, monotonic_ms() + timeout_ms, r);
	if (r->timed_out || fds[0] >= 0 || fds[1] >= 0)
		kill(-pid, SIGKILL);
	for (i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	while (waitpid(pid, &r->status, 0) < 0)
		if (errno != EINTR) {
			r->status = -1;
			break;
		}
	if (r->status == 127 << 8 && !r->out.len && !r->err.len)
		strbuf_addf(&r->err, "cannot run '%s'", argv[0]);
out:
	for (i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (err[i] >= 0)
			close(err[i]);
	}
}

/*
 * The working directory of the go commands: an empty directory of the
 * cache, so that no go.mod is found. 0, or -1 with the reason in err.
 */
static int work_dir(const struct modproxy_config *c, struct strbuf *out,
		    struct strbuf *err)
{
	strbuf_addf(out, "%s/.gosbx-cwd", c->cache_dir);
	if (mkdir(out->buf, 0700) < 0 && errno != EEXIST) {
		strbuf_addf(err, "cannot create '%s'", out->buf);
		add_errno(err, "");
		return -1;
	}
	return 0;
}

/*
 * Run `<go> <args>` the way every module is fetched: the config's
 * environment and nothing else of ours, GOMODCACHE the shared cache,
 * no go.mod, no go.work, this Go, at most MODPROXY_GO_TIMEOUT_MS
 * (waiting for a place included).
 */
static void run_go(const struct modproxy_config *c, const char *const *args,
		   struct go_result *r)
{
	struct strvec argv = STRVEC_INIT, env = STRVEC_INIT;
	struct strbuf cwd = STRBUF_INIT;
	uint64_t start = monotonic_ms(), used;

	strvec_push(&argv, c->go);
	strvec_pushv(&argv, (const char **)args);
	strvec_pushv(&env, c->env.v);
	strvec_pushf(&env, "GOMODCACHE=%s", c->cache_dir);
	strvec_push(&env, "GOFLAGS=-mod=mod");
	strvec_push(&env, "GOTOOLCHAIN=local");
	strvec_push(&env, "GOWORK=off");
	strvec_push(&env, "GO111MODULE=on");
	if (work_dir(c, &cwd, &r->err) < 0)
		goto out;
	if (go_slot_take(MODPROXY_GO_TIMEOUT_MS) < 0) {
		strbuf_addf(&r->err, "more than %d go commands at once",
			    MODPROXY_MAX_GO);
		goto out;
	}
	used = monotonic_ms() - start;
	run_child((char *const *)argv.v, (char *const *)env.v, cwd.buf,
		  used < MODPROXY_GO_TIMEOUT_MS ? MODPROXY_GO_TIMEOUT_MS - used
						: 1,
		  r);
	go_slot_give();
out:
	strvec_clear(&argv);
	strvec_clear(&env);
	strbuf_release(&cwd);
}

/*
 * The go command's error, one line or several: the "Error" of its
 * JSON, else what it printed on stderr, without "go: "
 */
static void go_error_text(const struct go_result *r, struct strbuf *msg)
{
	json_t *j =
		r->out.len ? json_parse(r->out.buf, r->out.len, NULL) : NULL;
	const char *e = json_object_str(j, "Error");

	if (r->timed_out)
		strbuf_addf(msg, "killed after %d s",
			    MODPROXY_GO_TIMEOUT_MS / 1000);
	else if (e && *e)
		strbuf_addstr(msg, e);
	else if (r->err.len)
		strbuf_addbuf(msg, &r->err);
	else if (r->status >= 0 && WIFSIGNALED(r->status))
		strbuf_addf(msg, "killed by signal %d", WTERMSIG(r->status));
	else
		strbuf_addf(msg, "exit status %d",
			    r->status >= 0 ? WEXITSTATUS(r->status) : -1);
	if (starts_with(msg->buf, "go: "))
		strbuf_remove(msg, 0, 4);
	strbuf_trim(msg);
	json_decref(j);
}

/* 1 when the go command succeeded; else the error in msg */
static int go_ok(const struct go_result *r, struct strbuf *msg)
{
	if (!r->timed_out && exited_ok(r->status))
		return 1;
	go_error_text(r, msg);
	return 0;
}

/* ---- answering */

/* one request: where it is answered and what it did, for the log */
struct request {
	const struct modproxy_config *c;
	int fd;
	int head_only;	    /* HEAD: the head of the answer only */
	const char *result; /* hit, fetched, denied, error */
	struct strbuf why;  /* for denied and error */
	uint64_t bytes;	    /* of the body sent */
};

/* a reason phrase (RFC 9112 4): one line of visible bytes, bounded */
static void add_reason(struct strbuf *out, const char *s)
{
	size_t n;

	for (n = 0; s[n] && s[n] != '\n' && n < REASON_MAX; n++) {
		unsigned char ch = s[n];

		strbuf_addch(out, ch < 0x20 || ch == 0x7f ? ' ' : ch);
	}
}

static int send_head(struct request *r, int code, const char *reason,
		     const char *type, uint64_t len)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	strbuf_addf(&sb, "HTTP/1.1 %03d ", code);
	add_reason(&sb, reason);
	strbuf_addf(&sb,
		    "\r\nContent-Type: %s\r\nContent-Length: %" PRIu64
		    "\r\nConnection: close\r\n\r\n",
		    type, len);
	ret = netd_write_all(r->fd, sb.buf, sb.len, MODPROXY_WRITE_TIMEOUT_MS);
	strbuf_release(&sb);
	return ret;
}

static void send_body(struct request *r, int code, const char *reason,
		      const char *type, const char *buf, size_t len)
{
	if (send_head(r, code, reason, type, len) < 0 || r->head_only)
		return;
	if (!netd_write_all(r->fd, buf, len, MODPROXY_WRITE_TIMEOUT_MS))
		r->bytes += len;
}

/*
 * Refuse (result "denied") or fail ("error"): the first line of text
 * is the reason phrase, which curl and the go command show, and text
 * (bounded) the body, which the go command shows for 404 and 410.
 */
static void answer_error(struct request *r, int code, const char *result,
			 const char *text)
{
	struct strbuf reason = STRBUF_INIT, body = STRBUF_INIT;

	add_reason(&reason, text);
	strbuf_add(&body, text, strnlen(text, ERROR_BODY_MAX));
	strbuf_complete_line(&body);
	r->result = result;
	strbuf_reset(&r->why);
	strbuf_addbuf(&r->why, &reason);
	send_body(r, code, reason.buf, "text/plain; charset=utf-8", body.buf,
		  body.len);
	strbuf_release(&reason);
	strbuf_release(&body);
}

/* serve a file of the cache; -1 (and nothing sent) when it is not there */
static int serve_file(struct request *r, const char *path, const char *type)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	uint64_t left;
	char *buf;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	if (send_head(r, 200, "OK", type, st.st_size) < 0 || r->head_only) {
		close(fd);
		return 0;
	}
	/* in chunks: a sandbox that does not read holds one chunk */
	buf = xmalloc(FILE_CHUNK);
	for (left = st.st_size; left;) {
		ssize_t n =
			xread(fd, buf, left < FILE_CHUNK ? left : FILE_CHUNK);

		if (n <= 0 || netd_write_all(r->fd, buf, n,
					     MODPROXY_WRITE_TIMEOUT_MS) < 0)
			break;
		r->bytes += n;
		left -= n;
	}
	free(buf);
	close(fd);
	return 0;
}

/* <cache>/cache/download/<escaped module>/@v/<escaped version>.<ext> */
static void cache_path(const struct modproxy_config *c, const char *mod,
		       const char *ver, const char *ext, struct strbuf *out)
{
	strbuf_addf(out, "%s/cache/download/", c->cache_dir);
	escape(mod, out);
	strbuf_addstr(out, "/@v/");
	escape(ver, out);
	strbuf_addf(out, ".%s", ext);
}

/* a go command failed: 404 with its error, as the go command shows it */
static void go_failed(struct request *r, const char *cmd,
		      const struct strbuf *msg)
{
	struct strbuf text = STRBUF_INIT;

	strbuf_addf(&text, "gosbx: %s: %s", cmd, msg->buf);
	answer_error(r, 404, "error", text.buf);
	strbuf_release(&text);
}

static const char *const kind_ext[] = {
	[MODPROXY_INFO] = "info",
	[MODPROXY_MOD] = "mod",
	[MODPROXY_ZIP] = "zip",
};
static const char *const kind_type[] = {
	[MODPROXY_INFO] = "application/json",
	[MODPROXY_MOD] = "text/plain; charset=utf-8",
	[MODPROXY_ZIP] = "application/zip",
};

/*
 * .info, .mod or .zip of a canonical version: from the cache, or
 * fetched: .info and .mod by `go list -m` (which checks the go.mod
 * against GOSUMDB), the zip, or what `go list -m` left out, by `go mod
 * download` (which checks the zip)
 */
static void serve_version(struct request *r, const char *mod, const char *ver,
			  enum modproxy_kind kind)
{
	static const char *const cmds[][2] = { { "list", "-m" },
					       { "mod", "download" } };
	static const char *const names[] = { "go list -m", "go mod download" };
	const char *args[] = { NULL, NULL, "-json", NULL, NULL };
	struct strbuf path = STRBUF_INIT, arg = STRBUF_INIT;
	struct strbuf msg = STRBUF_INIT;
	int step;

	cache_path(r->c, mod, ver, kind_ext[kind], &path);
	if (!serve_file(r, path.buf, kind_type[kind])) {
		r->result = "hit";
		goto out;
	}
	strbuf_addf(&arg, "%s@%s", mod, ver);
	args[3] = arg.buf;
	for (step = kind == MODPROXY_ZIP; step < 2; step++) {
		struct go_result g = GO_RESULT_INIT;
		int ok;

		args[0] = cmds[step][0];
		args[1] = cmds[step][1];
		run_go(r->c, args, &g);
		ok = go_ok(&g, &msg);
		go_result_release(&g);
		if (!ok) {
			go_failed(r, names[step], &msg);
			goto out;
		}
		if (!serve_file(r, path.buf, kind_type[kind])) {
			r->result = "fetched";
			goto out;
		}
	}
	strbuf_addf(&msg, "%s@%s.%s not in the cache after it", mod, ver,
		    kind_ext[kind]);
	go_failed(r, names[1], &msg);
out:
	strbuf_release(&path);
	strbuf_release(&arg);
	strbuf_release(&msg);
}

/*
 * @latest, or the .info of a query (a branch, a commit): what `go list
 * -m` resolves it to, served as the .info of that version
 */
static void serve_query(struct request *r, const char *mod, const char *query)
{
	const char *args[] = { "list", "-m", "-json", NULL, NULL };
	struct strbuf path = STRBUF_INIT, arg = STRBUF_INIT;
	struct strbuf msg = STRBUF_INIT, info = STRBUF_INIT;
	struct go_result g = GO_RESULT_INIT;
	const char *ver, *when;
	json_t *j = NULL;

	strbuf_addf(&arg, "%s@%s", mod, query);
	args[3] = arg.buf;
	run_go(r->c, args, &g);
	if (!go_ok(&g, &msg)) {
		go_failed(r, "go list -m", &msg);
		goto out;
	}
	j = json_parse(g.out.buf, g.out.len, &msg);
	ver = json_object_str(j, "Version");
	when = json_object_str(j, "Time");
	if (!ver || !is_canonical_version(ver)) {
		strbuf_addstr(&msg, "no version in its answer");
		go_failed(r, "go list -m", &msg);
		goto out;
	}
	r->result = "fetched";
	cache_path(r->c, mod, ver, "info", &path);
	if (!serve_file(r, path.buf, kind_type[MODPROXY_INFO]))
		goto out;
	/* the go command keeps no .info of some (GOPROXY=direct) */
	strbuf_addstr(&info, "{\"Version\":");
	json_add_str(&info, ver);
	if (when) {
		strbuf_addstr(&info, ",\"Time\":");
		json_add_str(&info, when);
	}
	strbuf_addstr(&info, "}\n");
	send_body(r, 200, "OK", kind_type[MODPROXY_INFO], info.buf, info.len);
out:
	json_decref(j);
	go_result_release(&g);
	strbuf_release(&path);
	strbuf_release(&arg);
	strbuf_release(&msg);
	strbuf_release(&info);
}

/* @v/list: the versions `go list -m -versions` knows, one a line */
static void serve_list(struct request *r, const char *mod)
{
	const char *args[] = { "list",	"-m", "-versions", "-retracted",
			       "-json", mod,  NULL };
	struct strbuf msg = STRBUF_INIT, list = STRBUF_INIT;
	struct go_result g = GO_RESULT_INIT;
	json_t *j = NULL, *v;
	size_t i;

	run_go(r->c, args, &g);
	if (!go_ok(&g, &msg)) {
		go_failed(r, "go list -m -versions", &msg);
		goto out;
	}
	j = json_parse(g.out.buf, g.out.len, &msg);
	if (!j) {
		go_failed(r, "go list -m -versions", &msg);
		goto out;
	}
	json_array_foreach (json_object_get(j, "Versions"), i, v) {
		const char *s = json_string_value(v);

		if (s && is_canonical_version(s))
			strbuf_addf(&list, "%s\n", s);
	}
	r->result = "fetched";
	send_body(r, 200, "OK", "text/plain; charset=utf-8", list.buf,
		  list.len);
out:
	json_decref(j);
	go_result_release(&g);
	strbuf_release(&msg);
	strbuf_release(&list);
}

/* the first entry of GOPROXY (entries separated by ',' or '|') is "off" */
static int goproxy_off(const struct modproxy_config *c)
{
	const char *p = config_get(c, "GOPROXY");
	size_t len = strcspn(p, ",|");

	return len == 3 && !strncmp(p, "off", 3);
}

static int is_private(const struct modproxy_config *c, const char *mod,
		      const char *also)
{
	return match_prefix_patterns(config_get(c, "GOPRIVATE"), mod) ||
	       match_prefix_patterns(config_get(c, also), mod);
}

static void serve_module(struct request *r, const char *mod, const char *ver,
			 enum modproxy_kind kind)
{
	struct strbuf msg = STRBUF_INIT;

	if (goproxy_off(r->c)) {
		answer_error(r, 404, "denied",
			     "gosbx: the host's GOPROXY is off");
	} else if (is_private(r->c, mod, "GONOPROXY")) {
		strbuf_addf(&msg,
			    "gosbx: %s is private (GOPRIVATE); vendor it or "
			    "push it into the sandbox",
			    mod);
		answer_error(r, 404, "denied", msg.buf);
	} else if (kind == MODPROXY_LIST) {
		serve_list(r, mod);
	} else if (kind == MODPROXY_LATEST) {
		serve_query(r, mod, "latest");
	} else if (kind == MODPROXY_INFO && !is_canonical_version(ver)) {
		serve_query(r, mod, ver);
	} else {
		serve_version(r, mod, ver, kind);
	}
	strbuf_release(&msg);
}

/* ---- the checksum database */

static int sumdb_off(const char *gosumdb)
{
	return !*gosumdb || !strcmp(gosumdb, "off");
}

/*
 * GOSUMDB "<name>[+<key>] [<url>]" (cmd/go internal/modfetch/sumdb.go):
 * its name, and its URL when it names one; "sum.golang.google.cn" is
 * sum.golang.org at that host
 */
static void sumdb_split(const char *gosumdb, struct strbuf *name,
			struct strbuf *url)
{
	size_t len;

	if (!strcmp(gosumdb, "sum.golang.google.cn")) {
		strbuf_addstr(name, "sum.golang.org");
		strbuf_addstr(url, "https://sum.golang.google.cn");
		return;
	}
	len = strcspn(gosumdb, " \t");
	strbuf_add(name, gosumdb, strcspn(gosumdb, "+ \t"));
	gosumdb += len;
	gosumdb += strspn(gosumdb, " \t");
	strbuf_add(url, gosumdb, strcspn(gosumdb, " \t"));
	while (url->len && url->buf[url->len - 1] == '/')
		strbuf_setlen(url, url->len - 1);
}

/*
 * GET base/path with libcurl, bounded; error() is silenced (the
 * message is in last_error()). Returns as http_request().
 */
static int quiet_get(const char *base, const char *path, long timeout_ms,
		     size_t max, struct http_resp *resp)
{
	struct http_client_opts o = { .connect_timeout_ms = 10000 };
	struct http_req req = { .method = "GET",
				.path = path,
				.timeout_ms = timeout_ms,
				.max_body = max };
	struct http_client *hc;
	report_fn saved;
	void *saved_data;
	int ret = -1;

	if (timeout_ms < o.connect_timeout_ms)
		o.connect_timeout_ms = timeout_ms;
	get_error_routine(&saved, &saved_data);
	set_error_routine(report_nothing, NULL);
	hc = http_client_new(base, &o);
	if (hc)
		ret = http_request(hc, &req, resp);
	http_client_free(hc);
	set_error_routine(saved, saved_data);
	return ret;
}

static void sumdb_relay(struct request *r, const char *sub,
			enum modproxy_kind kind)
{
	struct http_resp resp = HTTP_RESP_INIT;
	struct strbuf msg = STRBUF_INIT;
	const char *type = kind == MODPROXY_SUMDB_TILE
				   ? "application/octet-stream"
				   : "text/plain; charset=utf-8";

	if (quiet_get(r->c->sumdb_upstream, sub, MODPROXY_SUMDB_TIMEOUT_MS,
		      MODPROXY_SUMDB_MAX, &resp) < 0) {
		strbuf_addf(&msg, "gosbx: checksum database: %s", last_error());
		answer_error(r, 502, "error", msg.buf);
	} else if (resp.status == 200) {
		r->result = "fetched";
		send_body(r, 200, "OK", type, resp.body.buf, resp.body.len);
	} else if (resp.status == 404 || resp.status == 410) {
		/* "not found" is an answer the go command needs */
		r->result = "fetched";
		send_body(r, resp.status,
			  resp.status == 404 ? "Not Found" : "Gone",
			  "text/plain; charset=utf-8", resp.body.buf,
			  resp.body.len);
	} else {
		strbuf_addf(&msg, "gosbx: checksum database answered %ld",
			    resp.status);
		answer_error(r, 502, "error", msg.buf);
	}
	http_resp_release(&resp);
	strbuf_release(&msg);
}

/* the module of "lookup/<escaped module>@<escaped version>" */
static void lookup_module(const char *sub, struct strbuf *mod)
{
	struct strbuf why = STRBUF_INIT;
	const char *m = sub + strlen("lookup/");

	unescape(m, strcspn(m, "@"), mod, &why);
	strbuf_release(&why);
}

static void serve_sumdb(struct request *r, const char *name, const char *sub,
			enum modproxy_kind kind)
{
	const char *gosumdb = config_get(r->c, "GOSUMDB");
	struct strbuf want = STRBUF_INIT, url = STRBUF_INIT;
	struct strbuf msg = STRBUF_INIT, mod = STRBUF_INIT;

	sumdb_split(gosumdb, &want, &url);
	if (sumdb_off(gosumdb) || !r->c->sumdb_upstream) {
		answer_error(r, 404, "denied",
			     "gosbx: the host's GOSUMDB is off");
		goto out;
	}
	if (strcmp(name, want.buf)) {
		strbuf_addf(&msg,
			    "gosbx: %s is not the host's checksum database "
			    "(GOSUMDB=%s)",
			    name, want.buf);
		answer_error(r, 404, "denied", msg.buf);
		goto out;
	}
	if (kind == MODPROXY_SUMDB_LOOKUP) {
		lookup_module(sub, &mod);
		if (is_private(r->c, mod.buf, "GONOSUMDB")) {
			strbuf_addf(&msg, "gosbx: %s is private (GONOSUMDB)",
				    mod.buf);
			answer_error(r, 404, "denied", msg.buf);
			goto out;
		}
	}
	if (kind == MODPROXY_SUMDB_SUPPORTED) {
		r->result = "hit";
		send_body(r, 200, "OK", "text/plain; charset=utf-8", "", 0);
	} else {
		sumdb_relay(r, sub, kind);
	}
out:
	strbuf_release(&want);
	strbuf_release(&url);
	strbuf_release(&msg);
	strbuf_release(&mod);
}

static void log_request(const struct request *r, const char *mod,
			const char *ver, const char *target, uint64_t start)
{
	struct log_line l;

	if (!log_begin(&l, LOG_INFO, "module"))
		return;
	log_str(&l, "via", "goproxy");
	log_str(&l, "module", mod);
	log_str(&l, "version", ver);
	log_str(&l, "result", r->result);
	if (r->why.len)
		log_str(&l, "why", r->why.buf);
	if (!*mod && target) {
		struct strbuf t = STRBUF_INIT;

		strbuf_add(&t, target, strnlen(target, 200));
		log_str(&l, "target", t.buf);
		strbuf_release(&t);
	}
	log_int(&l, "bytes", (int64_t)r->bytes);
	log_int(&l, "ms", (int64_t)(monotonic_ms() - start));
	log_end(&l);
}

void modproxy_serve(const struct modproxy_config *c, int fd,
		    const struct netd_head *h)
{
	struct request r = { c, fd, 0, "error", STRBUF_INIT, 0 };
	struct strbuf mod = STRBUF_INIT, ver = STRBUF_INIT;
	struct strbuf why = STRBUF_INIT, msg = STRBUF_INIT;
	uint64_t start = monotonic_ms();
	enum modproxy_kind kind;
	const char *path;

	r.head_only = !strcmp(h->method, "HEAD");
	if (!r.head_only && strcmp(h->method, "GET")) {
		strbuf_addf(&msg,
			    "gosbx: the module proxy answers GET and HEAD, "
			    "not %s",
			    h->method);
		answer_error(&r, 405, "denied", msg.buf);
	} else if (!skip_prefix(h->target, NETD_GOPROXY_PATH "/", &path) ||
		   modproxy_parse_path(path, &mod, &ver, &kind, &why) < 0) {
		strbuf_addf(&msg, "gosbx: bad module request: %s",
			    why.len ? why.buf : "not a module proxy path");
		answer_error(&r, 400, "denied", msg.buf);
	} else if (kind >= MODPROXY_SUMDB_SUPPORTED) {
		strbuf_insert(&mod, 0, "sumdb/", 6);
		serve_sumdb(&r, mod.buf + 6, ver.buf, kind);
	} else {
		serve_module(&r, mod.buf, ver.buf, kind);
	}
	log_request(&r, mod.buf, ver.buf, h->target, start);
	strbuf_release(&r.why);
	strbuf_release(&mod);
	strbuf_release(&ver);
	strbuf_release(&why);
	strbuf_release(&msg);
}

/* ---- loading the settings */

/* the go binary: as given when it holds a '/' (made absolute), else on PATH */
static int find_go(const char *go, struct strbuf *out)
{
	const char *path = getenv("PATH"), *p;
	char cwd[PATH_MAX];

	if (strchr(go, '/')) {
		if (*go != '/' && getcwd(cwd, sizeof(cwd)))
			strbuf_addf(out, "%s/", cwd);
		strbuf_addstr(out, go);
		return access(out->buf, X_OK);
	}
	for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; p;) {
		size_t len = strcspn(p, ":");
		struct stat st;

		strbuf_reset(out);
		if (len && *p == '/')
			strbuf_addf(out, "%.*s/%s", (int)len, p, go);
		if (out->len && !stat(out->buf, &st) && S_ISREG(st.st_mode) &&
		    !access(out->buf, X_OK))
			return 0;
		p = p[len] ? p + len + 1 : NULL;
	}
	strbuf_reset(out);
	return -1;
}

static const char *home_dir(void)
{
	const char *home = getenv("HOME");
	struct passwd *pw;

	if (home && *home == '/')
		return home;
	pw = getpwuid(getuid());
	return pw && pw->pw_dir ? pw->pw_dir : NULL;
}

/* <XDG_CACHE_HOME or ~/.cache>/gosbx/gomod */
static int default_cache_dir(struct strbuf *out)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = home_dir();

	if (xdg && *xdg == '/')
		strbuf_addf(out, "%s/gosbx/gomod", xdg);
	else if (home)
		strbuf_addf(out, "%s/.cache/gosbx/gomod", home);
	else
		return error("cannot find the module cache: neither "
			     "XDG_CACHE_HOME nor HOME is set");
	return 0;
}

/* `<go> env <go_env_vars>` into c->env (goenv.h: this go, our environment) */
static int read_go_env(struct modproxy_config *c)
{
	struct strbuf out = STRBUF_INIT, why = STRBUF_INIT;
	const char *line;
	size_t i;
	int ret = -1;

	if (goenv_lines(c->go, go_env_vars, ARRAY_SIZE(go_env_vars), &out,
			&why) < 0) {
		error("cannot read the module settings with '%s env': %s",
		      c->go, why.buf);
		goto out;
	}
	line = out.buf;
	for (i = 0; i < ARRAY_SIZE(go_env_vars); i++) {
		const char *nl = strchrnul(line, '\n');

		if (nl > line)
			strvec_pushf(&c->env, "%s=%.*s", go_env_vars[i],
				     (int)(nl - line), line);
		line = *nl ? nl + 1 : nl;
	}
	ret = 0;
out:
	strbuf_release(&out);
	strbuf_release(&why);
	return ret;
}

/* PATH, HOME and what reaches the registries, from our environment */
static void pass_env(struct modproxy_config *c)
{
	const char *path = getenv("PATH"), *home = home_dir();
	size_t i;

	strvec_pushf(&c->env, "PATH=%s",
		     path ? path : "/usr/local/bin:/usr/bin:/bin");
	if (home)
		strvec_pushf(&c->env, "HOME=%s", home);
	for (i = 0; i < ARRAY_SIZE(pass_env_vars); i++) {
		const char *v = getenv(pass_env_vars[i]);

		if (v)
			strvec_pushf(&c->env, "%s=%s", pass_env_vars[i], v);
	}
}

/*
 * The go command's way to the checksum database (cmd/go
 * internal/modfetch/sumdb.go, initBase): the GOPROXY entries in turn
 * until "direct" or "off"; the first whose ".../sumdb/<name>/supported"
 * does not answer 404 or 410 is it; else GOSUMDB's URL
 */
static void find_sumdb_upstream(struct modproxy_config *c)
{
	const char *gosumdb = config_get(c, "GOSUMDB");
	const char *p = config_get(c, "GOPROXY");
	struct strbuf name = STRBUF_INIT, url = STRBUF_INIT;
	struct strbuf entry = STRBUF_INIT, path = STRBUF_INIT;

	if (sumdb_off(gosumdb))
		return;
	sumdb_split(gosumdb, &name, &url);
	strbuf_addf(&path, "sumdb/%s/supported", name.buf);
	while (*p) {
		size_t len = strcspn(p, ",|");
		struct http_resp resp = HTTP_RESP_INIT;
		int r;

		strbuf_reset(&entry);
		strbuf_add(&entry, p, len);
		p += len + !!p[len];
		while (entry.len && entry.buf[entry.len - 1] == '/')
			strbuf_setlen(&entry, entry.len - 1);
		if (!strcmp(entry.buf, "direct") || !strcmp(entry.buf, "off"))
			break;
		if (!starts_with(entry.buf, "https://") &&
		    !starts_with(entry.buf, "http://"))
			continue;
		r = quiet_get(entry.buf, path.buf, PROBE_TIMEOUT_MS, 4096,
			      &resp);
		http_resp_release(&resp);
		if (!r && (resp.status == 404 || resp.status == 410))
			continue;
		strbuf_addf(&entry, "/sumdb/%s", name.buf);
		c->sumdb_upstream = strbuf_detach(&entry, NULL);
		goto out;
	}
	if (!url.len)
		strbuf_addf(&url, "https://%s", name.buf);
	c->sumdb_upstream = strbuf_detach(&url, NULL);
out:
	strbuf_release(&name);
	strbuf_release(&url);
	strbuf_release(&entry);
	strbuf_release(&path);
}

int modproxy_config_load(struct modproxy_config *c, const char *go,
			 const char *cache_dir)
{
	struct strbuf sb = STRBUF_INIT;
	int ret = -1;

	modproxy_config_release(c);
	if (find_go(go, &sb) < 0) {
		error("cannot find '%s', the go command that fetches modules",
		      go);
		goto out;
	}
	c->go = strbuf_detach(&sb, NULL);
	if (cache_dir)
		strbuf_addstr(&sb, cache_dir);
	else if (default_cache_dir(&sb) < 0)
		goto out;
	if (mkdir_p(sb.buf, 0700) < 0) {
		error_errno("cannot create the module cache '%s'", sb.buf);
		goto out;
	}
	c->cache_dir = strbuf_detach(&sb, NULL);
	if (read_go_env(c) < 0)
		goto out;
	pass_env(c);
	find_sumdb_upstream(c);
	ret = 0;
out:
	if (ret < 0)
		modproxy_config_release(c);
	strbuf_release(&sb);
	return ret;
}

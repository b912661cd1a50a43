/*
 * gosbx doctor: diagnose the chosen backend and say what to fix
 * (DESIGN.md "One binary, many commands"). Each backend contributes a
 * list of checks (name, ok/warn/fail, what was found, how to fix it);
 * one printer shows any list as text or JSON. The local backend's
 * isolation checks come from isolate_doctor() (lib/isolate.h); the
 * state, cache, runtime and claims checks are made here.
 */
#include "compat.h"
#include "backend-local.h"
#include "builtin.h"
#include "dir.h"
#include "isolate.h"
#include "json.h"
#include "parse-options.h"
#include "session.h"
#include "strbuf.h"
#include "usage.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

static const char *const doctor_usage[] = {
	"gosbx doctor [--probe] [-o text|json]",
	NULL,
};

/* how long `gosbx-runtime --version` may take, ms */
#define VERSION_TIMEOUT_MS 10000

struct doctor_opts {
	struct gosbx_ctx *ctx;
	int probe;
};

/* A growing list of checks; entries own their strings. */
struct check_list {
	struct isolate_check *v;
	size_t nr, alloc;
};

static void check_add(struct check_list *cl, const char *name,
		      enum isolate_check_status status, const char *message,
		      const char *fix)
{
	struct isolate_check *c;

	ALLOC_GROW(cl->v, cl->nr + 1, cl->alloc);
	c = &cl->v[cl->nr++];
	c->name = xstrdup(name);
	c->status = status;
	c->message = xstrdup(message ? message : "");
	c->fix = status != ISOLATE_CHECK_OK && fix ? xstrdup(fix) : NULL;
}

/* move the entries of checks into cl and free the array */
static void check_take(struct check_list *cl, struct isolate_check *checks,
		       size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		ALLOC_GROW(cl->v, cl->nr + 1, cl->alloc);
		cl->v[cl->nr] = checks[i];
		if (checks[i].status == ISOLATE_CHECK_OK) {
			free(cl->v[cl->nr].fix);
			cl->v[cl->nr].fix = NULL;
		}
		cl->nr++;
	}
	free(checks);
}

static void check_list_release(struct check_list *cl)
{
	isolate_checks_free(cl->v, cl->nr);
	cl->v = NULL;
	cl->nr = cl->alloc = 0;
}

static void count(const struct check_list *cl, size_t n[3])
{
	n[0] = n[1] = n[2] = 0;
	for (size_t i = 0; i < cl->nr; i++)
		n[cl->v[i].status]++;
}

/*
 * ok    bwrap: bubblewrap 0.8.0
 * warn  cpu limit: cannot be applied: ...
 *       fix: ...
 */
static void print_text(const char *backend, const struct check_list *cl)
{
	size_t n[3];

	for (size_t i = 0; i < cl->nr; i++) {
		const struct isolate_check *c = &cl->v[i];

		printf("%-6s%s: %s\n", isolate_check_status_name(c->status),
		       c->name, c->message);
		if (c->fix && *c->fix)
			printf("      fix: %s\n", c->fix);
	}
	count(cl, n);
	printf("%s backend: %zu ok, %zu warning%s, %zu failed\n", backend, n[0],
	       n[1], n[1] == 1 ? "" : "s", n[2]);
}

static int print_json(const char *backend, const struct check_list *cl)
{
	json_t *root = json_object(), *arr = json_array(), *sum;
	size_t n[3];
	char *text;

	for (size_t i = 0; i < cl->nr; i++) {
		const struct isolate_check *c = &cl->v[i];
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(c->name));
		json_object_set_new(
			o, "status",
			json_string(isolate_check_status_name(c->status)));
		json_object_set_new(o, "message", json_string(c->message));
		json_object_set_new(o, "fix",
				    c->fix ? json_string(c->fix) : json_null());
		json_array_append_new(arr, o);
	}
	count(cl, n);
	sum = json_pack("{s:I, s:I, s:I}", "ok", (json_int_t)n[0], "warn",
			(json_int_t)n[1], "fail", (json_int_t)n[2]);
	json_object_set_new(root, "backend", json_string(backend));
	json_object_set_new(root, "ok", json_boolean(!n[2]));
	json_object_set_new(root, "summary", sum);
	json_object_set_new(root, "checks", arr);
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (!text)
		return error("cannot encode the checks as JSON");
	printf("%s\n", text);
	free(text);
	return 0;
}

/* ---- capturing what the library reports ---- */

struct capture {
	struct strbuf err;
	struct strbuf warn;
};

static void capture_report(const char *prefix, const char *msg, void *data)
{
	struct capture *cap = data;
	struct strbuf *sb =
		starts_with(prefix, "warning") ? &cap->warn : &cap->err;

	if (sb->len)
		strbuf_addstr(sb, "; ");
	strbuf_addstr(sb, msg);
}

static void capture_start(struct capture *cap)
{
	strbuf_init(&cap->err, 0);
	strbuf_init(&cap->warn, 0);
	set_error_routine(capture_report, cap);
}

static void capture_end(struct capture *cap)
{
	set_error_routine(NULL, NULL);
}

static void capture_release(struct capture *cap)
{
	strbuf_release(&cap->err);
	strbuf_release(&cap->warn);
}

/*
 * Run argv (no shell) with stdin from /dev/null and stdout+stderr into
 * out, for at most timeout_ms (then it is killed). Returns the wait
 * status, or -1 if it could not be started.
 */
static int run_capture(const char *const *argv, struct strbuf *out,
		       int timeout_ms)
{
	uint64_t deadline = monotonic_ms() + timeout_ms;
	int fds[2], status;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (!pid) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0)
			dup2(null, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
		int64_t left = (int64_t)deadline - (int64_t)monotonic_ms();
		char buf[4096];
		ssize_t n;

		if (left <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			break;
		if (!pfd.revents)
			continue;
		n = read(fds[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out->len < 65536)
			strbuf_add(out, buf, n);
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

static void first_line(struct strbuf *sb)
{
	char *nl = memchr(sb->buf, '\n', sb->len);

	if (nl)
		strbuf_setlen(sb, nl - sb->buf);
	strbuf_trim(sb);
}

/* ---- local backend ---- */

/* path exists (or is created) as a directory we can write into */
static void check_dir(struct check_list *cl, const char *name, const char *path,
		      const char *env)
{
	struct strbuf msg = STRBUF_INIT, fix = STRBUF_INIT;
	struct strbuf tmp = STRBUF_INIT;
	struct stat st;
	int fd;

	strbuf_addf(&fix,
		    "make '%s' a directory you can write to, or set "
		    "%s to another place",
		    path, env);
	if (mkdir_p(path, 0700) < 0) {
		strbuf_addf(&msg, "cannot create '%s': %s", path,
			    strerror(errno));
		goto fail;
	}
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		strbuf_addf(&msg, "'%s' is not a directory", path);
		goto fail;
	}
	strbuf_addf(&tmp, "%s/.gosbx-doctor-XXXXXX", path);
	fd = mkstemp(tmp.buf);
	if (fd < 0) {
		strbuf_addf(&msg, "cannot write in '%s': %s", path,
			    strerror(errno));
		goto fail;
	}
	close(fd);
	unlink(tmp.buf);
	strbuf_addf(&msg, "%s is writable", path);
	check_add(cl, name, ISOLATE_CHECK_OK, msg.buf, NULL);
	goto out;
fail:
	check_add(cl, name, ISOLATE_CHECK_FAIL, msg.buf, fix.buf);
out:
	strbuf_release(&msg);
	strbuf_release(&fix);
	strbuf_release(&tmp);
}

static void check_state_dir(struct check_list *cl)
{
	struct strbuf dir = STRBUF_INIT;
	struct capture cap;

	capture_start(&cap);
	if (local_claims_dir(&dir) < 0) {
		capture_end(&cap);
		check_add(cl, "state directory", ISOLATE_CHECK_FAIL,
			  cap.err.buf, "set HOME or XDG_STATE_HOME");
	} else {
		capture_end(&cap);
		check_dir(cl, "state directory", dir.buf, "XDG_STATE_HOME");
	}
	capture_release(&cap);
	strbuf_release(&dir);
}

static void check_cache_dir(struct check_list *cl)
{
	const char *cache = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	struct strbuf dir = STRBUF_INIT;

	if (cache && *cache == '/')
		strbuf_addf(&dir, "%s/gosbx", cache);
	else if (home && *home)
		strbuf_addf(&dir, "%s/.cache/gosbx", home);
	if (dir.len)
		check_dir(cl, "cache directory", dir.buf, "XDG_CACHE_HOME");
	else
		check_add(cl, "cache directory", ISOLATE_CHECK_FAIL,
			  "cannot find the cache directory: neither "
			  "XDG_CACHE_HOME nor HOME is set",
			  "set HOME or XDG_CACHE_HOME");
	strbuf_release(&dir);
}

static void check_runtime(struct check_list *cl)
{
	static const char fix_find[] =
		"install gosbx-runtime next to gosbx or on PATH, or set "
		"GOSBX_RUNTIME to its path";
	struct strbuf path = STRBUF_INIT, out = STRBUF_INIT;
	struct strbuf msg = STRBUF_INIT;
	struct capture cap;
	const char *version;
	int r, status;

	capture_start(&cap);
	r = local_find_runtime(&path);
	capture_end(&cap);
	if (r < 0) {
		check_add(cl, "gosbx-runtime", ISOLATE_CHECK_FAIL, cap.err.buf,
			  fix_find);
		goto out;
	}
	{
		const char *argv[] = {path.buf, "--version", NULL};
		status = run_capture(argv, &out, VERSION_TIMEOUT_MS);
	}
	first_line(&out);
	if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) ||
	    !skip_prefix(out.buf, "gosbx-runtime version ", &version)) {
		strbuf_addf(&msg, "'%s --version' failed", path.buf);
		if (out.len)
			strbuf_addf(&msg, ": %s", out.buf);
		check_add(cl, "gosbx-runtime", ISOLATE_CHECK_FAIL, msg.buf,
			  "reinstall gosbx-runtime from the same build as "
			  "gosbx, or set GOSBX_RUNTIME to a working one");
		goto out;
	}
	if (strcmp(version, GOSBX_VERSION)) {
		strbuf_addf(&msg, "%s is version %s but gosbx is %s", path.buf,
			    version, GOSBX_VERSION);
		check_add(cl, "gosbx-runtime", ISOLATE_CHECK_WARN, msg.buf,
			  "install gosbx and gosbx-runtime from the same "
			  "build");
		goto out;
	}
	strbuf_addf(&msg, "version %s (%s)", version, path.buf);
	check_add(cl, "gosbx-runtime", ISOLATE_CHECK_OK, msg.buf, NULL);
out:
	capture_release(&cap);
	strbuf_release(&path);
	strbuf_release(&out);
	strbuf_release(&msg);
}

static void check_stale_claims(struct check_list *cl)
{
	struct local_claim_info *list;
	struct strbuf msg = STRBUF_INIT, names = STRBUF_INIT;
	struct capture cap;
	size_t nr, stale = 0;
	int r;

	capture_start(&cap);
	r = local_claims_list(&list, &nr, 0);
	capture_end(&cap);
	if (r < 0) {
		check_add(cl, "claims", ISOLATE_CHECK_FAIL, cap.err.buf,
			  "make the state directory readable");
		goto out;
	}
	for (size_t i = 0; i < nr; i++) {
		if (list[i].status == LOCAL_CLAIM_READY)
			continue;
		stale++;
		if (names.len)
			strbuf_addstr(&names, ", ");
		strbuf_addf(&names, "%s (%s)", list[i].name,
			    local_claim_status_name(list[i].status));
	}
	if (stale) {
		strbuf_addf(&msg, "%zu of %zu claim%s expired or dead: %s",
			    stale, nr, nr == 1 ? "" : "s", names.buf);
		check_add(cl, "claims", ISOLATE_CHECK_WARN, msg.buf,
			  "gosbx claims prune");
	} else {
		strbuf_addf(&msg, "%zu claim%s, none expired or dead", nr,
			    nr == 1 ? "" : "s");
		check_add(cl, "claims", ISOLATE_CHECK_OK, msg.buf, NULL);
	}
	local_claims_free(list, nr);
out:
	capture_release(&cap);
	strbuf_release(&msg);
	strbuf_release(&names);
}

/* open a throwaway sandbox, run `true`, close it; report the time */
static void check_probe(struct check_list *cl, struct gosbx_ctx *ctx)
{
	struct session_opts o = {0};
	struct session_exec ex = {0};
	struct session_result res;
	struct session s;
	struct strbuf msg = STRBUF_INIT;
	struct capture cap;
	uint64_t t0, t_open, t_run = 0, t_close = 0;
	int r;

	ctx_session_opts(ctx, &o);
	o.purpose = "doctor";
	o.ttl_ms = 60 * 1000; /* expires soon should we be killed */
	ex.command = "true";
	session_result_init(&res);

	capture_start(&cap);
	t0 = monotonic_ms();
	r = session_open(&s, &o);
	t_open = monotonic_ms();
	if (r < 0)
		goto done;
	r = session_execute(&s, &ex, &res);
	t_run = monotonic_ms();
	if (!r && res.exit_code)
		r = error("'true' in the sandbox ended with %s, status %d",
			  res.reason, res.exit_code);
	else if (r > 0)
		r = error("'true' in the sandbox was cancelled");
	if (session_close(&s) < 0)
		r = -1;
	t_close = monotonic_ms();
done:
	capture_end(&cap);
	if (r < 0) {
		check_add(cl, "probe", ISOLATE_CHECK_FAIL,
			  cap.err.len ? cap.err.buf : "the probe failed",
			  "fix the failed checks above; 'gosbx open' shows "
			  "the same error");
	} else {
		strbuf_addf(&msg,
			    "opened a sandbox, ran 'true' and closed it "
			    "in %" PRIu64 " ms (open %" PRIu64
			    " ms, run %" PRIu64 " ms, close %" PRIu64 " ms)",
			    t_close - t0, t_open - t0, t_run - t_open,
			    t_close - t_run);
		if (cap.warn.len)
			strbuf_addf(&msg, "; %s", cap.warn.buf);
		check_add(cl, "probe",
			  cap.warn.len ? ISOLATE_CHECK_WARN : ISOLATE_CHECK_OK,
			  msg.buf, "see the warnings of the checks above");
	}
	session_result_release(&res);
	capture_release(&cap);
	strbuf_release(&msg);
}

static int doctor_local(struct check_list *cl, const struct doctor_opts *o)
{
	struct isolate_check *checks;
	struct capture cap;
	size_t nr;
	int r;

	capture_start(&cap);
	r = isolate_doctor(&checks, &nr);
	capture_end(&cap);
	if (r < 0)
		check_add(cl, "isolation", ISOLATE_CHECK_FAIL, cap.err.buf,
			  NULL);
	else
		check_take(cl, checks, nr);
	capture_release(&cap);

	check_state_dir(cl);
	check_cache_dir(cl);
	check_runtime(cl);
	check_stale_claims(cl);
	if (o->probe)
		check_probe(cl, o->ctx);
	return 0;
}

/* ---- url backend: can we reach the runtime? ---- */

static int doctor_url(struct check_list *cl, const struct doctor_opts *o)
{
	struct session_opts so = {0};
	struct strbuf msg = STRBUF_INIT;
	struct capture cap;
	struct session s;
	int r;

	ctx_session_opts(o->ctx, &so);
	capture_start(&cap);
	r = session_open(&s, &so);
	capture_end(&cap);
	if (r < 0) {
		check_add(cl, "runtime", ISOLATE_CHECK_FAIL, cap.err.buf,
			  "check --url (or GOSBX_URL) and that the runtime "
			  "server runs there");
	} else {
		strbuf_addf(&msg, "%s answers (server '%s')", s.claim,
			    *s.server ? s.server : "upstream");
		check_add(cl, "runtime", ISOLATE_CHECK_OK, msg.buf, NULL);
		session_disconnect(&s);
		if (o->probe)
			check_probe(cl, o->ctx);
	}
	capture_release(&cap);
	strbuf_release(&msg);
	return 0;
}

/*
 * One row per backend; a backend's checks are a function that fills
 * a check list (the kube backend adds its row here).
 */
static const struct {
	const char *backend;
	int (*run)(struct check_list *cl, const struct doctor_opts *o);
} sections[] = {
	{"local", doctor_local},
	{"url", doctor_url},
};

int cmd_doctor(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	struct doctor_opts dopts = {ctx, 0};
	struct check_list cl = {0};
	const char *format = "text";
	size_t i, n[3];
	int ret;
	struct option opts[] = {
		OPT_BOOL(0, "probe", &dopts.probe,
			 "also open a sandbox, run 'true' and close it"),
		OPT_STRING('o', "output", &format, "<format>",
			   "text (default) or json"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, doctor_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc) {
		error("unexpected argument '%s'", argv[0]);
		usage_with_options_to(stderr, doctor_usage, opts);
		return 129;
	}
	if (strcmp(format, "text") && strcmp(format, "json")) {
		error("unknown output format '%s' (expected text or json)",
		      format);
		return 129;
	}
	for (i = 0; i < ARRAY_SIZE(sections); i++)
		if (!strcmp(sections[i].backend, ctx->backend))
			break;
	if (i == ARRAY_SIZE(sections)) {
		error("doctor has no checks for the '%s' backend yet",
		      ctx->backend);
		return 1;
	}
	sections[i].run(&cl, &dopts);
	if (!strcmp(format, "json")) {
		if (print_json(ctx->backend, &cl) < 0) {
			check_list_release(&cl);
			return 1;
		}
	} else {
		print_text(ctx->backend, &cl);
	}
	count(&cl, n);
	ret = n[2] ? 1 : 0;
	check_list_release(&cl);
	return ret;
}

/*
 * gosbx exec: write files and run one command in a sandbox, with
 * live output and the command's exit status passed through
 * (Documentation/technical/design.md "One binary, many commands"); without a
 * command, read a script from standard input or, on a terminal, start the REPL
 * (builtin/repl.c).
 *
 * Without --claim the command runs in a throwaway sandbox that is
 * deleted afterwards, also after SIGINT or an error. SIGINT, SIGTERM
 * and SIGHUP cancel the running command: the client drops the
 * /v1/exec connection and the runtime kills the command's process
 * group (Documentation/protocol/runtime-api.md "exec-stream").
 */
#include "compat.h"
#include "builtin.h"
#include "session/interactive.h"
#include "json.h"
#include "output.h"
#include "parse-options.h"
#include "quote.h"
#include "session/jobs.h"
#include "session/session.h"
#include "strbuf.h"
#include "strvec.h"
#include "session/sandbox-limits.h"
#include "terminal.h"
#include "usage.h"
#include "workpath.h"

#include <math.h>
#include <signal.h>
#include <sys/stat.h>

static const char *const exec_usage[] = {
	"gosbx exec [--claim=<name>] [-i] [-t] [-f <local>[:<dest>]]... "
	"[--timeout=<duration>] [-e <K[=V]>]... [-w <dir>] [-o text|json] "
	"[--json] [--] <command>...",
	"gosbx exec --claim=<name>",
	"gosbx exec -d [-t] --claim=<name> [-e <K[=V]>]... [-w <dir>] "
	"[--timeout=<duration>] [--] <command>...",
	NULL,
};

/* idle TTL of a throwaway sandbox left behind by a killed gosbx exec */
#define THROWAWAY_TTL_MS (5 * 60 * 1000)

/* the signal that asked us to stop, 0 while none did */
static volatile sig_atomic_t exec_signal;

static void exec_on_signal(int sig)
{
	exec_signal = sig;
}

/* ---- -t: the local terminal (lib/terminal.h) ---- */

static volatile sig_atomic_t got_winch;

/*
 * SIGINT, SIGTERM and SIGHUP only set exec_signal: the running request
 * notices it (http.h: the interrupted wait returns at once) and we get
 * to close a throwaway sandbox before exiting. No SA_RESTART, so a
 * blocking wait returns EINTR.
 */
static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = exec_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* The files given with -f, read before any sandbox is opened. */
struct exec_files {
	struct session_file *files;
	struct strbuf *data;
	char **dest;
	size_t nr;
};

static void exec_files_release(struct exec_files *f)
{
	for (size_t i = 0; i < f->nr; i++) {
		strbuf_release(&f->data[i]);
		free(f->dest[i]);
	}
	free(f->files);
	free(f->data);
	free(f->dest);
	memset(f, 0, sizeof(*f));
}

/* The base name of a local path, trailing slashes ignored; owned. */
static char *local_base_name(const char *path)
{
	size_t len = strlen(path);
	const char *slash;

	while (len > 1 && path[len - 1] == '/')
		len--;
	slash = memrchr(path, '/', len);
	if (slash && slash + 1 < path + len)
		return xstrndup(slash + 1, path + len - slash - 1);
	return xstrndup(path, len);
}

/*
 * The destination of "-f <local>[:<dest>]" relative to /app, by the one
 * rule for paths in a sandbox (lib/workpath.h): <dest> after the first
 * ':', else the local base name; a <dest> that is /app or ends in '/' is
 * a directory the file goes into under its base name. Appended to dest.
 * Returns 0, or -1 with error() (a usage error: judged from the command
 * line alone).
 */
static int file_dest(const char *spec, struct strbuf *dest)
{
	const char *colon = strchr(spec, ':');
	char *local = colon ? xstrndup(spec, colon - spec) : xstrdup(spec);
	char *base = local_base_name(local);
	struct strbuf what = STRBUF_INIT;
	int into = 1, ret = 0;

	strbuf_addf(&what, "-f '%s'", spec);
	if (colon)
		ret = workpath_sandbox(what.buf, colon + 1, dest, &into);
	if (!ret && (into || !dest->len)) {
		if (dest->len)
			strbuf_addch(dest, '/');
		strbuf_addstr(dest, base);
	}
	if (!ret && session_check_path(dest->buf) < 0)
		ret = error("%s: name the file's destination under /app",
			    what.buf);
	strbuf_release(&what);
	free(base);
	free(local);
	return ret;
}

/* Each -f destination stays within /app. Returns 0, or -1 with error(). */
static int check_file_dests(const struct strvec *specs)
{
	struct strbuf dest = STRBUF_INIT;
	int ret = 0;

	for (size_t i = 0; !ret && i < specs->nr; i++) {
		strbuf_reset(&dest);
		ret = file_dest(specs->v[i], &dest);
	}
	strbuf_release(&dest);
	return ret;
}

/*
 * Read each "-f <local>[:<dest>]" (destinations checked already by
 * check_file_dests()): the first ':' separates the local path from
 * the destination under /app. Returns 0, or -1 with error().
 */
static int read_files(const struct strvec *specs, struct exec_files *f)
{
	f->nr = specs->nr;
	f->files = xcalloc(f->nr, sizeof(*f->files));
	f->data = xcalloc(f->nr, sizeof(*f->data));
	f->dest = xcalloc(f->nr, sizeof(*f->dest));
	for (size_t i = 0; i < f->nr; i++)
		strbuf_init(&f->data[i], 0);
	for (size_t i = 0; i < f->nr; i++) {
		const char *spec = specs->v[i];
		const char *colon = strchr(spec, ':');
		char *local =
			colon ? xstrndup(spec, colon - spec) : xstrdup(spec);
		struct stat st;
		struct strbuf dest = STRBUF_INIT;
		int bad = 0;

		file_dest(spec, &dest); /* checked by check_file_dests() */
		f->dest[i] = strbuf_detach(&dest, NULL);
		if (stat(local, &st) < 0)
			bad = error_errno("-f '%s': cannot read '%s'", spec,
					  local);
		else if (S_ISDIR(st.st_mode))
			bad = error("-f '%s': '%s' is a directory (copy "
				    "trees with 'gosbx push')",
				    spec, local);
		else if (strbuf_read_file(&f->data[i], local, st.st_size) < 0)
			bad = error_errno("-f '%s': cannot read '%s'", spec,
					  local);
		free(local);
		if (bad)
			return -1;
		f->files[i].path = f->dest[i];
		f->files[i].data = f->data[i].buf;
		f->files[i].len = f->data[i].len;
	}
	return 0;
}

struct output_state {
	int write_errno; /* set when stdout or stderr failed */
};

/* Live output: each chunk to our own stdout or stderr as it arrives. */
static int write_output(int stream, const char *buf, size_t len, void *data)
{
	struct output_state *st = data;

	if (write_in_full(stream == 2 ? 2 : 1, buf, len) < 0) {
		st->write_errno = errno;
		return -1;
	}
	return 0;
}

static void print_phase(const char *phase, void *data)
{
	fprintf(stderr, "gosbx: %s\n", phase);
}

/* The exit status for a finished command (cli-common "exit statuses"). */
static int exec_exit_status(const struct session_result *res)
{
	if (!strcmp(res->reason, "timeout"))
		return EXIT_TIMEOUT;
	if (!strcmp(res->reason, "oom"))
		return EXIT_OOM;
	if (!strcmp(res->reason, "cancelled"))
		return 128 + SIGINT;
	if (!strcmp(res->reason, "start_failed"))
		return EXIT_OWN_FAILURE;
	if (res->exit_code >= 0)
		return res->exit_code & 0xff;
	if (res->signal > 0)
		return 128 + res->signal;
	return EXIT_OWN_FAILURE;
}

static void add_int_or_null(struct strbuf *out, const char *key, int64_t v)
{
	if (v < 0)
		strbuf_addf(out, ",\"%s\":null", key);
	else
		strbuf_addf(out, ",\"%s\":%" PRId64, key, v);
}

/*
 * The -o json result object, one line (Documentation/gosbx-exec.txt
 * "JSON OUTPUT": every key always there, null when not known).
 */
static void print_json(const char *claim, const struct session_result *res)
{
	struct strbuf out = STRBUF_INIT;

	strbuf_addstr(&out, "{\"claim\":");
	json_add_str(&out, claim);
	strbuf_addf(&out, ",\"exit_code\":%d,\"reason\":", res->exit_code);
	json_add_str(&out, res->reason);
	add_int_or_null(&out, "signal", res->signal > 0 ? res->signal : -1);
	strbuf_addf(&out, ",\"duration_ms\":%" PRId64, res->duration_ms);
	add_int_or_null(&out, "cpu_ms", res->cpu_ms);
	add_int_or_null(&out, "peak_rss_kb", res->peak_rss_kb);
	strbuf_addstr(&out, ",\"stdout\":");
	json_add_string(&out, res->out.buf, res->out.len);
	strbuf_addstr(&out, ",\"stderr\":");
	json_add_string(&out, res->err.buf, res->err.len);
	strbuf_addf(&out, ",\"stdout_truncated\":%s,\"stderr_truncated\":%s}\n",
		    res->out_truncated ? "true" : "false",
		    res->err_truncated ? "true" : "false");
	fwrite(out.buf, 1, out.len, stdout);
	strbuf_release(&out);
}

/* Say why a command ended when its status alone does not. */
static void explain_end(const struct session_result *res, int64_t timeout_ms)
{
	if (!strcmp(res->reason, "timeout"))
		error("the command timed out after %" PRId64 " ms "
		      "(--timeout) and was killed",
		      timeout_ms);
	else if (!strcmp(res->reason, "oom"))
		error("the command ran out of memory and was killed");
	else if (!strcmp(res->reason, "output_limit"))
		error("the command wrote too much output and was killed");
	else if (!strcmp(res->reason, "start_failed"))
		error("the command could not start: %.*s", (int)res->err.len,
		      res->err.buf);
}

/*
 * The exit status when the run did not end with the command's own:
 * rc < 0, the session failed; rc 1, we stopped it (a signal to us, or
 * the command's output could not be written: EPIPE is 128 + SIGPIPE,
 * another error is said and is gosbx's own failure, gosbx(1) EXIT
 * STATUS).
 */
static int stopped_status(int rc, const struct output_state *ost)
{
	if (exec_signal)
		return 128 + exec_signal;
	if (rc < 0)
		return EXIT_OWN_FAILURE;
	if (ost->write_errno == EPIPE)
		return 128 + SIGPIPE;
	errno = ost->write_errno;
	error_errno("cannot write the command's output");
	return EXIT_OWN_FAILURE;
}

/* Run one command in an open session; returns the exit status. */
static int run_command(struct session *s, const char *command,
		       const struct exec_files *files, int64_t timeout_ms,
		       const struct strvec *env, const char *cwd, int json,
		       int verbose)
{
	struct output_state ost = { 0 };
	struct session_exec e = { 0 };
	struct session_result res;
	int rc, status;

	e.files = files->files;
	e.nr_files = files->nr;
	e.command = command;
	e.timeout_ms = timeout_ms;
	e.env = env->nr ? env->v : NULL;
	e.cwd = cwd;
	e.on_output = json ? NULL : write_output;
	e.data = &ost;
	e.cancel = &exec_signal;
	if (verbose)
		e.on_phase = print_phase;
	session_result_init(&res);
	rc = session_execute(s, &e, &res);
	if (rc < 0 || rc == 1) {
		status = stopped_status(rc, &ost);
		if (rc == 1 && json && exec_signal)
			print_json(s->claim, &res);
	} else {
		status = exec_exit_status(&res);
		if (json)
			print_json(s->claim, &res);
		else
			explain_end(&res, timeout_ms);
	}
	session_result_release(&res);
	return status;
}

/*
 * -i and -t (Documentation/gosbx-exec.txt): the command through the
 * runtime's interactive channel (lib/session/interactive.h), with standard
 * input passed on (-i) and a terminal in the sandbox (-t). Returns the
 * exit status.
 */
static int run_interactive(struct session *s, const char *command,
			   const struct exec_files *files, int64_t timeout_ms,
			   const struct strvec *env, const char *cwd,
			   int stdin_on, int tty, int verbose)
{
	struct output_state ost = { 0 };
	struct interactive_opts o = { 0 };
	struct session_result res;
	struct strvec full_env = STRVEC_INIT;
	int rc, status, have_term = 0;

	if (files->nr) {
		/* the files first, as a command of their own */
		struct session_exec e = { 0 };

		e.files = files->files;
		e.nr_files = files->nr;
		e.command = "true";
		e.cancel = &exec_signal;
		session_result_init(&res);
		rc = session_execute(s, &e, &res);
		session_result_release(&res);
		if (rc)
			return exec_signal ? 128 + exec_signal
					   : EXIT_OWN_FAILURE;
	}
	for (size_t i = 0; i < env->nr; i++) {
		if (starts_with(env->v[i], "TERM="))
			have_term = 1;
		strvec_push(&full_env, env->v[i]);
	}
	/* the program draws for this terminal: say which (as ssh does) */
	if (tty && !have_term)
		strvec_pushf(&full_env, "TERM=%s",
			     getenv("TERM") && *getenv("TERM") ? getenv("TERM")
							       : "xterm");
	o.command = command;
	o.env = full_env.nr ? full_env.v : NULL;
	o.cwd = cwd;
	o.timeout_ms = timeout_ms;
	o.tty = tty;
	o.on_output = write_output;
	o.data = &ost;
	o.cancel = &exec_signal;
	o.verbose = verbose;
	if (tty)
		terminal_size(&o.cols, &o.rows);
	if (tty && stdin_on) {
		terminal_watch_resize(&got_winch);
		if (terminal_make_raw() < 0) {
			strvec_clear(&full_env);
			return EXIT_OWN_FAILURE;
		}
	}
	session_result_init(&res);
	rc = interactive_run(s, &o, stdin_on ? 0 : -1, tty ? &got_winch : NULL,
			     terminal_size, &res);
	terminal_restore();
	if (rc < 0 || rc == 1) {
		status = stopped_status(rc, &ost);
	} else {
		status = exec_exit_status(&res);
		explain_end(&res, timeout_ms);
	}
	session_result_release(&res);
	strvec_clear(&full_env);
	return status;
}

/*
 * The sh -c text for the command words (Documentation/gosbx-exec.txt):
 * one word is a shell command line, as is; several words are an argv,
 * each quoted so that the program gets exactly those words (lib/quote.h),
 * as docker exec, kubectl exec and env(1) pass them. Owned.
 */
static char *command_text(int argc, const char **argv)
{
	struct strbuf sb = STRBUF_INIT;

	if (argc == 1)
		strbuf_addstr(&sb, argv[0]);
	else
		sq_quote_argv(&sb, argv, argc);
	return strbuf_detach(&sb, NULL);
}

/*
 * -e/--env as `docker run -e` takes it: "K=V" sets K to V, a bare "K"
 * passes gosbx's own $K on, and nothing when it is not set. Appends
 * "K=V" words to out. Returns 0, or -1 with error() for an empty name.
 */
static int resolve_env(const struct strvec *in, struct strvec *out)
{
	for (size_t i = 0; i < in->nr; i++) {
		const char *eq = strchr(in->v[i], '=');
		const char *val;

		if (eq == in->v[i] || !*in->v[i])
			return error("option '--env' expects K=V or K, not "
				     "'%s'",
				     in->v[i]);
		if (eq)
			strvec_push(out, in->v[i]);
		else if ((val = getenv(in->v[i])))
			strvec_pushf(out, "%s=%s", in->v[i], val);
	}
	return 0;
}

/*
 * `gosbx exec mybox -- go version`: a claim name where the command
 * belongs (Documentation/gosbx-exec.txt "A CLAIM NAME AS THE COMMAND").
 * It is one when no claim was given, the words did not follow a '--' of
 * their own, the second word is '--', and the first is a claim name the
 * backend takes and, where the backend can tell without opening it
 * (keep_claim), an existing claim. Then 1 with the corrected command
 * line said, else 0.
 */
static int claim_as_command(struct gosbx_ctx *ctx, int argc, const char **argv,
			    int after_dashdash)
{
	struct strbuf hint = STRBUF_INIT;
	struct session_opts o;
	report_fn fn;
	void *data;
	int looks;

	if (after_dashdash || argc < 2 || strcmp(argv[1], "--") ||
	    (ctx->ops->caps & BACKEND_FREE_NAMES))
		return 0;
	get_error_routine(&fn, &data);
	/* quietly: the word is taken as a command unless it names a claim */
	set_error_routine(report_nothing, NULL);
	ctx_session_opts(ctx, &o);
	looks = !ctx_check_claim_name(ctx, argv[0]) &&
		(!ctx->ops->keep_claim || !ctx->ops->keep_claim(&o, argv[0]));
	set_error_routine(fn, data);
	if (!looks)
		return 0;
	for (int i = 2; i < argc; i++) {
		strbuf_addch(&hint, ' ');
		if (argv[i][strcspn(argv[i], " \t\n'\"\\$`*?[]{}()<>|&;#~!")] ||
		    !*argv[i])
			sq_quote_buf(&hint, argv[i]);
		else
			strbuf_addstr(&hint, argv[i]);
	}
	error("'%s' looks like a claim, not a command: did you mean 'gosbx "
	      "exec "
	      "--claim=%s --%s'? (a command of that name runs as 'gosbx exec "
	      "-- %s -- ...')",
	      argv[0], argv[0], hint.buf, argv[0]);
	strbuf_release(&hint);
	return 1;
}

/*
 * -d: start the command as a job, print <claim>/<id>. With -t (docker's
 * -dt) the job runs on a terminal, of this terminal's size when there
 * is one, with TERM set as for exec -t; gosbx attach connects to it.
 */
static int start_job(struct session *s, const char *claim, const char *command,
		     int64_t timeout_ms, const struct strvec *env,
		     const char *cwd, int tty)
{
	struct session_exec e = { 0 };
	struct strvec full_env = STRVEC_INIT;
	json_t *job = NULL;
	int ret = EXIT_OWN_FAILURE;

	strvec_pushv(&full_env, env->v);
	if (tty) {
		int have_term = 0;

		for (size_t i = 0; i < env->nr; i++)
			have_term |= starts_with(env->v[i], "TERM=");
		if (!have_term)
			strvec_pushf(&full_env, "TERM=%s",
				     getenv("TERM") && *getenv("TERM")
					     ? getenv("TERM")
					     : "xterm");
		e.tty = 1;
		terminal_size(&e.cols, &e.rows);
	}
	e.command = command;
	e.timeout_ms = timeout_ms;
	e.env = full_env.nr ? full_env.v : NULL;
	e.cwd = cwd;
	if (!session_job_start(s, &e, &job)) {
		printf("%s/%s\n", claim, json_object_str(job, "id"));
		ret = 0;
	}
	json_decref(job);
	strvec_clear(&full_env);
	return ret;
}

int cmd_exec(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	struct session_opts o = { 0 };
	struct session s;
	struct exec_files files = { 0 };
	struct strvec file_specs = STRVEC_INIT, env_args = STRVEC_INIT,
		      env = STRVEC_INIT;
	struct strbuf cwd_rel = STRBUF_INIT;
	struct limit_args la = LIMIT_ARGS_INIT;
	const char *claim = NULL, *cwd = NULL;
	int64_t timeout_ms = 0;
	static const char *const formats[] = { "text", "json", NULL };
	struct output_opt output = OUTPUT_OPT_INIT;
	int status, rc;
	int want_repl = 0, stdin_on = 0, tty = 0, after_dashdash, detach = 0;
	int orig_argc = argc;
	const char **orig_argv = xcalloc(argc + 1, sizeof(*orig_argv));
	char *command = NULL;
	struct option opts[] = {
		OPT_STRING_ENV(0, "claim", &claim, "<name>",
			       "run in this kept sandbox (default: a "
			       "throwaway one)",
			       "GOSBX_CLAIM"),
		OPT_BOOL('i', "interactive", &stdin_on,
			 "pass standard input to the command"),
		OPT_BOOL('t', "tty", &tty,
			 "run the command on a terminal in the sandbox"),
		OPT_BOOL('d', "detach", &detach,
			 "start the command as a job of the kept sandbox, "
			 "print its id (see gosbx-jobs(1))"),
		OPT_STRING_LIST('f', "file", &file_specs, "<local>[:<dest>]",
				"copy a local file to /app/<dest> first"),
		OPT_DURATION(0, "timeout", &timeout_ms,
			     "kill the command after this long"),
		OPT_STRING_LIST('e', "env", &env_args, "<K[=V]>",
				"set an environment variable (K alone: "
				"gosbx's own $K)"),
		OPT_STRING('w', "cwd", &cwd, "<dir>",
			   "run in this directory under /app"),
		OPT_OUTPUT(&output, "text (default: live output) or json (one "
				    "object at the end)"),
		OPT_GROUP("throwaway sandbox (without --claim)"),
		OPT_SANDBOX_LIMITS(&la),
		OPT_END(),
	};

	memcpy(orig_argv, argv, argc * sizeof(*argv));
	argc = parse_options(argc, argv, opts, exec_usage,
			     PARSE_OPT_STOP_AT_NON_OPTION);
	if (argc < 0) {
		status = parse_options_status(argc);
		goto out;
	}
	/* the command words are the tail of argv: was a '--' before them? */
	after_dashdash = argc && !strcmp(orig_argv[orig_argc - argc - 1], "--");
	if (claim && !*claim)
		claim = NULL; /* GOSBX_CLAIM= */
	if (output_opt_resolve(&output, formats, exec_usage, opts)) {
		status = PARSE_OPT_USAGE_STATUS;
		goto out;
	}

	/* bad values are usage errors, refused before anything is opened */
	status = EXIT_USAGE;
	if (claim && limit_args_given(&la)) {
		status = usage_error(exec_usage, opts,
				     "--memory, --cpus, --pids, --disk and "
				     "--network apply to a throwaway sandbox, "
				     "not to claim '%s'",
				     claim);
		goto out;
	}
	if (claim && ctx_check_claim_name(ctx, claim) < 0) {
		status = usage_reported(exec_usage, opts);
		goto out;
	}
	if (!claim && claim_as_command(ctx, argc, argv, after_dashdash)) {
		status = usage_reported(exec_usage, opts);
		goto out;
	}
	if (detach && !claim) {
		status = usage_error(exec_usage, opts,
				     "-d needs --claim=<name>: a throwaway "
				     "sandbox would be deleted with its job");
		goto out;
	}
	if (detach && (stdin_on || output.json || !argc || file_specs.nr)) {
		status = usage_error(exec_usage, opts,
				     "-d takes a command and none of -i, -f, "
				     "-o json (its stdin: gosbx attach)");
		goto out;
	}
	if (timeout_ms < 0) {
		status = usage_error(exec_usage, opts,
				     "option '--timeout' expects a duration "
				     "above zero");
		goto out;
	}
	if ((stdin_on || tty) && (output.json || !argc)) {
		status = usage_error(
			exec_usage, opts,
			output.json ? "-o json cannot be used with -i or -t"
				    : "-i and -t need a command (e.g. gosbx "
				      "exec -it --claim=<name> -- bash)");
		goto out;
	}
	if (tty && stdin_on && !isatty(0)) {
		/* as kubectl exec -t does */
		warning("-t: standard input is not a terminal; running "
			"without one");
		tty = 0;
	}
	/* first: it sets all of o, the limits below included */
	ctx_session_opts(ctx, &o);
	/* paths by the one rule for paths in a sandbox (lib/workpath.h) */
	if (limit_args_apply(&la, &o) < 0 || resolve_env(&env_args, &env) < 0 ||
	    check_file_dests(&file_specs) < 0 ||
	    (cwd &&
	     workpath_sandbox("option '--cwd'", cwd, &cwd_rel, NULL) < 0)) {
		status = usage_reported(exec_usage, opts);
		goto out;
	}
	/* a local file that cannot be read is a failure, not usage */
	status = EXIT_OWN_FAILURE;
	if (read_files(&file_specs, &files) < 0)
		goto out;

	if (argc) {
		command = command_text(argc, argv);
	} else if (isatty(0)) {
		if (!claim && !(ctx->ops->caps & BACKEND_IMPLICIT_SANDBOX)) {
			status = usage_error(exec_usage, opts,
					     "no command given; the REPL needs "
					     "a kept sandbox: gosbx exec "
					     "--claim=<name> (see 'gosbx "
					     "open')");
			goto out;
		}
		if (output.json || files.nr || timeout_ms || env_args.nr ||
		    cwd) {
			status = usage_error(exec_usage, opts,
					     "-o json, -f, --timeout, --env "
					     "and --cwd need a command");
			goto out;
		}
		want_repl = 1;
	} else {
		/* the script is standard input */
		struct strbuf script = STRBUF_INIT;

		if (strbuf_read_fd(&script, 0, 0) < 0) {
			error_errno("cannot read the script from standard "
				    "input");
			strbuf_release(&script);
			goto out;
		}
		if (!script.len || memchr(script.buf, '\0', script.len)) {
			strbuf_release(&script);
			status = usage_error(exec_usage, opts,
					     "no command given and standard "
					     "input holds no script");
			goto out;
		}
		command = strbuf_detach(&script, NULL);
	}

	o.cancel =
		&exec_signal; /* Ctrl-C also stops a sandbox that is opening */
	o.claim = claim;
	o.purpose = "exec";
	/*
	 * A throwaway sandbox is closed as soon as the command ends; if
	 * gosbx itself is killed first, a short idle TTL ends it soon
	 * (a running command is never idle, however long it runs).
	 */
	if (!claim)
		o.ttl_ms = THROWAWAY_TTL_MS;

	catch_signals();
	rc = session_open(&s, &o);
	if (rc == SESSION_BAD_OPTS) {
		status = usage_reported(exec_usage, opts);
		goto out;
	} else if (rc < 0) {
		status = exec_signal ? 128 + exec_signal : EXIT_OWN_FAILURE;
		goto out;
	}
	if (ctx->verbose && !claim)
		fprintf(stderr, "gosbx: opened throwaway sandbox '%s'\n",
			s.claim);
	if (exec_signal)
		status = 128 + exec_signal;
	else if (detach)
		status = start_job(&s, claim, command, timeout_ms, &env,
				   cwd_rel.len ? cwd_rel.buf : NULL, tty);
	else if (want_repl)
		status = exec_repl(&s, &exec_signal);
	else if (stdin_on || tty)
		status = run_interactive(&s, command, &files, timeout_ms, &env,
					 cwd_rel.len ? cwd_rel.buf : NULL,
					 stdin_on, tty, ctx->verbose);
	else
		status = run_command(&s, command, &files, timeout_ms, &env,
				     cwd_rel.len ? cwd_rel.buf : NULL,
				     output.json, ctx->verbose);
	if (fflush(stdout) && status == 0) {
		error_errno("write failure on standard output");
		status = EXIT_OWN_FAILURE;
	}
	if (claim || want_repl) {
		session_disconnect(&s);
	} else {
		if (ctx->verbose)
			fprintf(stderr, "gosbx: deleting sandbox '%s'\n",
				s.claim);
		if (session_close(&s) < 0 && !status)
			status = EXIT_OWN_FAILURE;
	}
out:
	free(command);
	exec_files_release(&files);
	strvec_clear(&file_specs);
	strvec_clear(&env_args);
	strvec_clear(&env);
	strbuf_release(&cwd_rel);
	free(orig_argv);
	return status;
}

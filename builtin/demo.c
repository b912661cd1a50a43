/*
 * gosbx demo: the seed's proof of concept (seed 001 "Path A", the
 * seed's cmd/demo): open a sandbox, ship the built-in sample modules
 * (lib/mcp/samples.h) into it, build and run them, then delete the
 * sandbox, or keep it with --keep for a later --claim.
 *
 * Two flows: "smoke" (a single-file program run with go run, built
 * with go build, and the binary run again) and "multi" (a module with
 * a package and a test: go build, ./app, go test ./...). Every step
 * is printed as "-- <label> [exit=<N>] -- <output>" and checked; the
 * first step that fails ends the demo with exit status 1.
 */
#include "compat.h"
#include "builtin.h"
#include "parse-options.h"
#include "mcp/samples.h"
#include "session/session.h"
#include "strbuf.h"
#include "usage.h"

#include <signal.h>

static const char *const demo_usage[] = {
	"gosbx demo [--flow=smoke|multi|all] [--keep] [--claim=<name>] "
	"[--namespace=<ns>] [--template=<name>] "
	"[--open-timeout=<duration>]",
	NULL,
};

/* a step that runs longer than this is stopped and fails */
#define DEMO_STEP_TIMEOUT_MS (10 * 60 * 1000)

/* the signal that asked us to stop, 0 while none did */
static volatile sig_atomic_t demo_signal;
/* the label of the step running now, for the interruption message */
static const char *demo_step;

static void demo_on_signal(int sig)
{
	demo_signal = sig;
}

/*
 * SIGINT, SIGTERM and SIGHUP only set demo_signal: the running step is
 * cancelled (session_exec.cancel) and the sandbox is still deleted.
 * No SA_RESTART, so a blocking wait returns at once.
 */
static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = demo_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* One command of a flow and what its output must hold. */
struct demo_step {
	const char *label;   /* printed after "-- " */
	const char *command; /* sh -c text in /app */
	const char
		*sample; /* files written first (lib/mcp/samples.h), or NULL */
	const char *expect[4]; /* lines stdout must hold, NULL-ended */
};

#define SMOKE_LINE "hello from the sandbox! sum(1..100)=5050, go="
#define GREETING(name)                                                         \
	"hello, " name " \xe2\x80\x94 from the multi-file sandbox sample"

static const struct demo_step smoke_steps[] = {
	{ "go run main.go", "go run main.go", "smoke", { SMOKE_LINE } },
	{ "go build -o app .", "go build -o app .", NULL, { NULL } },
	{ "./app (re-runs the binary built in the previous call)",
	  "./app",
	  NULL,
	  { SMOKE_LINE } },
};

static const struct demo_step multi_steps[] = {
	{ "go build -o app .", "go build -o app .", "multifile", { NULL } },
	{ "./app",
	  "./app",
	  NULL,
	  { GREETING("Alice"), GREETING("Bob"), GREETING("Carol") } },
	{ "go test ./...",
	  "go test ./...",
	  NULL,
	  { "ok  \texample.com/multifile/greet" } },
};

struct demo_flow {
	const char *name;  /* --flow value */
	const char *title; /* the "=== ... ===" heading */
	int fresh;	   /* wipe /app first */
	const struct demo_step *steps;
	size_t nr_steps;
};

static const struct demo_flow flows[] = {
	{ "smoke", "single-file smoke flow", 0, smoke_steps,
	  ARRAY_SIZE(smoke_steps) },
	{ "multi", "multi-file module flow", 1, multi_steps,
	  ARRAY_SIZE(multi_steps) },
};

/* a sample the tables above name: it exists */
static const struct sample *builtin_sample(const char *name)
{
	const struct sample *sm = sample_find(name);

	if (!sm)
		die("BUG: no built-in sample '%s'", name);
	return sm;
}

/* The files of a sample as session_file entries; free() the array. */
static struct session_file *sample_files(const char *name, size_t *nr)
{
	const struct sample *sm = builtin_sample(name);
	struct session_file *f;

	f = xcalloc(sm->nr_files, sizeof(*f));
	for (size_t i = 0; i < sm->nr_files; i++) {
		f[i].path = sm->files[i].path;
		f[i].data = sm->files[i].data;
		f[i].len = strlen(sm->files[i].data);
	}
	*nr = sm->nr_files;
	return f;
}

/* text without its trailing newlines */
static int trimmed_len(const struct strbuf *sb)
{
	size_t len = sb->len;

	while (len && sb->buf[len - 1] == '\n')
		len--;
	return (int)len;
}

/* "-- <label> [exit=<N>] -- <output>", as seed 001 shows it */
static void print_step(const struct demo_step *st,
		       const struct session_result *res)
{
	int out = trimmed_len(&res->out), err = trimmed_len(&res->err);

	printf("-- %s [exit=%d", st->label, res->exit_code);
	if (strcmp(res->reason, "exited"))
		printf(", %s", res->reason);
	if (res->signal > 0)
		printf(", signal %d", res->signal);
	printf("] -- ");
	if (!out && !err)
		printf("(no output)");
	if (out)
		printf("%.*s", out, res->out.buf);
	if (res->out_truncated)
		printf("\n[stdout truncated]");
	if (err)
		printf("%s%.*s", out ? "\n" : "", err, res->err.buf);
	if (res->err_truncated)
		printf("\n[stderr truncated]");
	printf("\n");
	fflush(stdout);
}

/* 1 when text holds want as a whole line */
static int has_line(const struct strbuf *text, const char *want)
{
	size_t wlen = strlen(want);
	const char *p = text->buf, *end = text->buf + text->len;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		/* a line that starts with want (go test adds a time) */
		if (len >= wlen && !memcmp(p, want, wlen))
			return 1;
		p += len + 1;
	}
	return 0;
}

/*
 * Run one step and check it. Returns 0, 1 when it failed (reported),
 * 2 when it could not run (reported), or -1 when a signal interrupted
 * it.
 */
static int run_step(struct session *s, const struct demo_flow *flow,
		    const struct demo_step *st, int verbose)
{
	struct session_exec e = { 0 };
	struct session_result res;
	struct session_file *files = NULL;
	int rc, ret = 1;

	if (st->sample)
		files = sample_files(st->sample, &e.nr_files);
	e.files = files;
	e.command = st->command;
	e.timeout_ms = DEMO_STEP_TIMEOUT_MS;
	e.cancel = &demo_signal;
	if (verbose)
		fprintf(stderr, "gosbx: running '%s'%s\n", st->command,
			st->sample ? " after writing the sample files" : "");
	session_result_init(&res);
	demo_step = st->label;
	rc = session_execute(s, &e, &res);
	if (demo_signal) {
		ret = -1;
		goto out;
	}
	if (rc) {
		error("%s flow: step '%s' could not run", flow->name,
		      st->label);
		ret = 2;
		goto out;
	}
	print_step(st, &res);
	if (strcmp(res.reason, "exited") || res.exit_code) {
		int ended = strcmp(res.reason, "exited") != 0;

		error("%s flow: step '%s' failed: exit=%d%s%s%s", flow->name,
		      st->label, res.exit_code, ended ? " (" : "",
		      ended ? res.reason : "", ended ? ")" : "");
		goto out;
	}
	for (size_t i = 0; i < ARRAY_SIZE(st->expect) && st->expect[i]; i++)
		if (!has_line(&res.out, st->expect[i])) {
			error("%s flow: step '%s' failed: its output lacks "
			      "the line '%s'",
			      flow->name, st->label, st->expect[i]);
			goto out;
		}
	ret = 0;
out:
	session_result_release(&res);
	free(files);
	return ret;
}

/*
 * Returns 0, 1 when a step failed, 2 when a step or the reset could not
 * run, -1 when interrupted.
 */
static int run_flow(struct session *s, const struct demo_flow *flow,
		    int verbose)
{
	printf("\n=== %s ===\n", flow->title);
	fflush(stdout);
	if (flow->fresh) {
		/* a clean /app; the Go caches live elsewhere and stay */
		struct strbuf left = STRBUF_INIT;
		int rc = session_reset(s, &left);

		if (rc < 0) {
			strbuf_release(&left);
			if (demo_signal)
				return -1;
			error("%s flow: cannot empty /app", flow->name);
			return 2;
		}
		if (rc > 0)
			warning("%s flow: left in /app:\n%s", flow->name,
				left.buf);
		strbuf_release(&left);
	}
	for (size_t i = 0; i < flow->nr_steps; i++) {
		int rc = run_step(s, flow, &flow->steps[i], verbose);
		if (rc)
			return rc;
	}
	return 0;
}

/* how to reach a kept claim again, with the global options it needs */
static void print_reattach(const struct gosbx_ctx *ctx, const char *claim)
{
	struct strbuf g = STRBUF_INIT;

	if (ctx->ops != backend_lookup(NULL))
		strbuf_addf(&g, " --backend=%s", ctx->backend);
	if (ctx->url && (ctx->ops->caps & BACKEND_IMPLICIT_SANDBOX))
		strbuf_addf(&g, " --url=%s", ctx->url);
	printf("    claim=%s kept; reattach with: gosbx%s demo --claim=%s\n"
	       "    delete it with: gosbx%s close %s\n",
	       claim, g.buf, claim, g.buf, claim);
	strbuf_release(&g);
}

int cmd_demo(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	struct session_opts o = { 0 };
	struct backend_defaults bd;
	struct session s;
	const char *flow = "all", *claim = NULL;
	const char *namespace = NULL, *template = NULL;
	int64_t open_timeout = 5 * 60 * 1000;
	int keep = 0, status = 0, rc = 0;
	char *name;
	struct option opts[] = {
		OPT_STRING(0, "flow", &flow, "<flow>",
			   "smoke, multi or all (default all)"),
		OPT_BOOL(0, "keep", &keep,
			 "keep the sandbox afterwards and print its claim"),
		OPT_STRING(0, "claim", &claim, "<name>",
			   "reattach to this kept sandbox"),
		OPT_STRING(0, "namespace", &namespace, "<ns>",
			   "Kubernetes namespace (default: the global "
			   "--namespace, else the context's)"),
		OPT_STRING(0, "template", &template, "<name>",
			   "SandboxTemplate (default " BACKEND_KUBE_TEMPLATE
			   ")"),
		OPT_DURATION(0, "open-timeout", &open_timeout,
			     "longest wait for the sandbox (default 5m)"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, demo_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc)
		return usage_error(demo_usage, opts, "unexpected argument '%s'",
				   argv[0]);
	if (strcmp(flow, "all") && strcmp(flow, "smoke") &&
	    strcmp(flow, "multi"))
		return usage_error(demo_usage, opts,
				   "unknown flow '%s' (expected smoke, multi "
				   "or all)",
				   flow);
	if (open_timeout <= 0)
		return usage_error(demo_usage, opts,
				   "option '--open-timeout' expects a "
				   "duration above zero");
	if (claim && !*claim)
		claim = NULL;
	if (claim && ctx_check_claim_name(ctx, claim) < 0)
		return usage_reported(demo_usage, opts);

	ctx_session_opts(ctx, &o);
	o.claim = claim;
	o.keep = keep;
	/* given here, or globally; else the backend's default */
	if (namespace)
		o.namespace = namespace;
	if (template)
		o.template = template;
	o.open_timeout_ms = open_timeout;
	o.purpose = "demo";

	catch_signals();
	/* the backend's namespace and template (kube: the context's) */
	backend_defaults(&o, &bd);
	printf("==> opening sandbox (namespace=%s template=%s claim=\"%s\")\n",
	       bd.namespace, bd.template, claim ? claim : "");
	backend_defaults_release(&bd);
	fflush(stdout);
	if (session_open(&s, &o) < 0) {
		if (demo_signal)
			return 128 + demo_signal;
		error("cannot open the sandbox%s%s%s", claim ? " '" : "",
		      claim ? claim : "", claim ? "'" : "");
		return EXIT_OWN_FAILURE;
	}
	printf("    claim=%s\n", s.claim);
	fflush(stdout);

	for (size_t i = 0; i < ARRAY_SIZE(flows) && !rc; i++) {
		if (demo_signal) {
			rc = -1;
			break;
		}
		if (strcmp(flow, "all") && strcmp(flow, flows[i].name))
			continue;
		rc = run_flow(&s, &flows[i], ctx->verbose);
	}
	if (rc < 0) {
		if (demo_step)
			error("interrupted by signal %d during step '%s'",
			      (int)demo_signal, demo_step);
		else
			error("interrupted by signal %d", (int)demo_signal);
		status = 128 + demo_signal;
	} else if (rc) {
		/* a step that failed is the demo's verdict */
		status = rc == 2 ? EXIT_OWN_FAILURE : EXIT_NO;
	}

	name = xstrdup(s.claim);
	if (keep) {
		printf("==> disconnecting (sandbox %s preserved)\n", name);
		print_reattach(ctx, name);
		session_disconnect(&s);
	} else {
		printf("==> closing (deleting sandbox %s)\n", name);
		fflush(stdout);
		if (session_close(&s) < 0) {
			error("cannot delete sandbox '%s'", name);
			if (!status)
				status = EXIT_OWN_FAILURE;
		}
	}
	if (!status)
		printf("==> PoC complete\n");
	free(name);
	return status;
}

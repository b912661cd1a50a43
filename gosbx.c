/*
 * gosbx: one binary, git-style subcommands sharing libgosbx
 * (Documentation/technical/design.md "One binary, many commands").
 */
#include "compat.h"
#include "builtin.h"
#include "http-checks.h"
#include "parse-options.h"
#include "session/session.h"
#include "strbuf.h"
#include "strvec.h"
#include "usage.h"

#include <signal.h>

struct cmd_struct {
	const char *name;
	int (*fn)(int argc, const char **argv, struct gosbx_ctx *ctx);
	unsigned flags;
	const char *summary;
};

/* keep alphabetical; only commands that work are listed */
static struct cmd_struct commands[] = {
	{ "attach", cmd_attach, NEED_BACKEND,
	  "connect to a detached command's stdin and output" },
	{ "claims", cmd_claims, NEED_BACKEND | OWN_BACKEND,
	  "list sandboxes; prune stale ones" },
	{ "close", cmd_close, NEED_BACKEND, "delete sandboxes (or keep them)" },
	{ "cp", cmd_cp, NEED_BACKEND,
	  "copy files and trees between here and a sandbox's /app" },
	{ "demo", cmd_demo, NEED_BACKEND,
	  "run the seed's demo flows in a sandbox" },
	{ "doctor", cmd_doctor, NEED_BACKEND | OWN_BACKEND,
	  "diagnose the backend and say what to fix" },
	{ "exec", cmd_exec, NEED_BACKEND, "run a command in a sandbox" },
	{ "jobs", cmd_jobs, NEED_BACKEND,
	  "list the detached commands of a kept sandbox" },
	{ "kill", cmd_kill, NEED_BACKEND,
	  "signal a detached command's process group" },
	{ "logs", cmd_logs, NEED_BACKEND,
	  "show (or follow) the request log of a sandbox's runtime" },
	{ "mcp", cmd_mcp, NEED_BACKEND,
	  "the MCP server (stdio, or streamable HTTP)" },
	{ "netd", cmd_netd, HIDDEN_COMMAND,
	  "the host side of a local sandbox's network (internal)" },
	{ "open", cmd_open, NEED_BACKEND,
	  "open a kept sandbox, print its name" },
	{ "push", cmd_push, NEED_BACKEND,
	  "copy local files and trees into a sandbox's /app" },
	{ "resume", cmd_resume, NEED_BACKEND,
	  "start a suspended sandbox again" },
	{ "smoke", cmd_smoke, NEED_BACKEND,
	  "drive 'gosbx mcp' as an MCP client through the seed's flows" },
	{ "suspend", cmd_suspend, NEED_BACKEND,
	  "stop a kept sandbox, keeping its files" },
	{ "version", cmd_version, 0,
	  "the version, libraries, bwrap, Go and backend defaults" },
	{ "wait", cmd_wait, NEED_BACKEND,
	  "wait for a detached command, exit with its status" },
	{ NULL, NULL, 0, NULL },
};

void ctx_session_opts(const struct gosbx_ctx *ctx, struct session_opts *o)
{
	*o = ctx->session;
	o->backend = ctx->backend;
	o->url = ctx->url;
	o->verbose = ctx->verbose;
}

void ctx_global_args(const struct gosbx_ctx *ctx, struct strvec *argv)
{
	if (ctx->backend)
		strvec_pushf(argv, "--backend=%s", ctx->backend);
	if (ctx->url)
		strvec_pushf(argv, "--url=%s", ctx->url);
	if (ctx->verbose)
		strvec_push(argv, "-v");
	if (ctx->session.kubeconfig)
		strvec_pushf(argv, "--kubeconfig=%s", ctx->session.kubeconfig);
	if (ctx->session.context)
		strvec_pushf(argv, "--context=%s", ctx->session.context);
	if (ctx->session.namespace)
		strvec_pushf(argv, "--namespace=%s", ctx->session.namespace);
	if (ctx->session.template)
		strvec_pushf(argv, "--template=%s", ctx->session.template);
	if (ctx->session.warm_pool)
		strvec_pushf(argv, "--warm-pool=%s", ctx->session.warm_pool);
	if (ctx->session.api_version)
		strvec_pushf(argv, "--api-version=%s",
			     ctx->session.api_version);
	if (ctx->session.gateway)
		strvec_pushf(argv, "--gateway=%s", ctx->session.gateway);
	if (ctx->session.api_url)
		strvec_pushf(argv, "--api-url=%s", ctx->session.api_url);
	if (ctx->session.router_namespace)
		strvec_pushf(argv, "--router-namespace=%s",
			     ctx->session.router_namespace);
	if (ctx->session.open_timeout_ms > 0)
		strvec_pushf(argv, "--open-timeout=%" PRId64 "ms",
			     ctx->session.open_timeout_ms);
	if (ctx->router_token_file)
		strvec_pushf(argv, "--router-token-file=%s",
			     ctx->router_token_file);
}

/* The router token: --router-token-file, else $GOSBX_ROUTER_TOKEN. */
static int read_router_token(const char *path, struct strbuf *out)
{
	const char *env = getenv("GOSBX_ROUTER_TOKEN");

	if (!path) {
		if (env && *env)
			strbuf_addstr(out, env);
		return 0;
	}
	return http_token_read(path, out);
}

static const char *const gosbx_usage[] = {
	"gosbx [--version] [--backend=<local|kube|url>] [--url=<url>] [-v] "
	"[<kube options>] <command> [<args>]",
	NULL,
};

/*
 * The global options only some backends take (issue 19: never ignored
 * in silence); bit i of ctx->backend_options is backend_options[i].
 */
static const struct backend_option {
	const char *name; /* the long name in main()'s option table */
	unsigned caps;	  /* BACKEND_* bits of the backends that take it */
	const char *need; /* what to say instead */
} backend_options[] = {
	{ "kubeconfig", BACKEND_KUBE_API, "--backend=kube" },
	{ "context", BACKEND_KUBE_API, "--backend=kube" },
	{ "namespace", BACKEND_KUBE_API, "--backend=kube" },
	{ "template", BACKEND_KUBE_API, "--backend=kube" },
	{ "warm-pool", BACKEND_KUBE_API, "--backend=kube" },
	{ "api-version", BACKEND_KUBE_API, "--backend=kube" },
	{ "gateway", BACKEND_KUBE_API, "--backend=kube" },
	{ "api-url", BACKEND_KUBE_API, "--backend=kube" },
	{ "router-namespace", BACKEND_KUBE_API, "--backend=kube" },
	{ "open-timeout", BACKEND_KUBE_API, "--backend=kube" },
	{ "router-token-file", BACKEND_BEARER_TOKEN,
	  "--backend=kube or --backend=url" },
};

/*
 * Was o given on the command line, not only by its environment
 * variable? A string from the environment points into it
 * (parse_options()); a duration starts at -1 and is compared with its
 * variable's value.
 */
static int on_command_line(const struct option *o)
{
	const char *env = o->env ? getenv(o->env) : NULL;
	int64_t v, e;

	switch (o->type) {
	case OPTION_STRING:
		return *(const char **)o->value &&
		       *(const char **)o->value != env;
	case OPTION_DURATION:
		v = *(int64_t *)o->value;
		return v >= 0 &&
		       (!env || parse_duration_ms(env, &e) < 0 || e != v);
	default:
		return 0;
	}
}

/* the bits of backend_options[] given on the command line */
static unsigned given_backend_options(const struct option *opts)
{
	unsigned given = 0;

	for (size_t i = 0; i < ARRAY_SIZE(backend_options); i++)
		for (const struct option *o = opts; o->type != OPTION_END; o++)
			if (o->long_name &&
			    !strcmp(o->long_name, backend_options[i].name) &&
			    on_command_line(o))
				given |= 1u << i;
	return given;
}

int ctx_check_backend_options(const struct gosbx_ctx *ctx)
{
	const char *env = getenv("GOSBX_BACKEND");

	for (size_t i = 0; i < ARRAY_SIZE(backend_options); i++) {
		const struct backend_option *bo = &backend_options[i];

		if (!(ctx->backend_options & (1u << i)) ||
		    (ctx->ops->caps & bo->caps))
			continue;
		return error("option '--%s' needs %s; the backend here is "
			     "'%s'%s",
			     bo->name, bo->need, ctx->backend,
			     env && !strcmp(env, ctx->backend)
				     ? " (GOSBX_BACKEND)"
				     : "");
	}
	return 0;
}

int known_backend(const char *name)
{
	return name && backend_lookup(name) != NULL;
}

int ctx_set_backend(struct gosbx_ctx *ctx, const char *name)
{
	const struct backend_ops *ops = name ? backend_lookup(name) : NULL;

	if (!ops)
		return -1;
	ctx->backend = ops->name;
	ctx->ops = ops;
	return 0;
}

int ctx_check_claim_name(const struct gosbx_ctx *ctx, const char *name)
{
	if (ctx->ops->caps & BACKEND_FREE_NAMES)
		return 0;
	return session_check_claim_name(name);
}

static struct cmd_struct *find_command(const char *name)
{
	for (struct cmd_struct *c = commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* `gosbx`, `gosbx -h` and `gosbx help`: usage, global options, commands */
static void list_commands(FILE *fp, const struct option *opts)
{
	usage_with_options_to(fp, gosbx_usage, opts);
	fprintf(fp, "commands:\n");
	for (struct cmd_struct *c = commands; c->name; c++)
		if (!(c->flags & HIDDEN_COMMAND))
			fprintf(fp, "   %-10s %s\n", c->name, c->summary);
	fprintf(fp, "   %-10s %s\n", "help", "show help for a command");
	fprintf(fp, "\n'gosbx help <command>' or 'gosbx <command> -h' "
		    "shows a command's options\n");
}

/*
 * The exit status once everything is written: a write error on stdout
 * must not pass silently (125 instead of a success).
 */
static int flush_status(int status)
{
	if (status)
		return status;
	if (fflush(stdout) || ferror(stdout)) {
		error_errno("write failure on standard output");
		return EXIT_OWN_FAILURE;
	}
	return 0;
}

/*
 * The optimal string alignment distance between a and b (insertions,
 * deletions, substitutions and swaps of two neighbours, each 1), as
 * git's help.c ranks commands for "did you mean"; -1 past 64 bytes.
 */
static int edit_distance(const char *a, const char *b)
{
	int d[65][65];
	size_t la = strlen(a), lb = strlen(b);

	if (la > 64 || lb > 64)
		return -1;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			int v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[la][lb];
}

/*
 * `gosbx exce`: say so, with the listed commands nearest to name (at
 * most 2 edits, and fewer than its length: "did you mean 'exec'?").
 * Returns 129 (gosbx(1) EXIT STATUS: an unknown command).
 */
static int unknown_command(const char *name)
{
	struct strbuf near = STRBUF_INIT;
	int best = 3, n = 0;
	size_t len = strlen(name);

	for (int pass = 0; pass < 2; pass++) {
		for (struct cmd_struct *c = commands; c->name; c++) {
			int d = edit_distance(name, c->name);

			if ((c->flags & HIDDEN_COMMAND) || d < 0 ||
			    (size_t)d >= len)
				continue;
			if (!pass && d < best)
				best = d;
			else if (pass && d == best)
				strbuf_addf(&near, "%s'%s'", n++ ? ", " : "",
					    c->name);
		}
	}
	if (n)
		error("'%s' is not a gosbx command (see 'gosbx -h'); did "
		      "you mean %s%s?",
		      name, n > 1 ? "one of " : "", near.buf);
	else
		error("'%s' is not a gosbx command; see 'gosbx -h'", name);
	strbuf_release(&near);
	return EXIT_USAGE;
}

/*
 * Do the command's own options ask for its help (-h, --help)? Only
 * options before the first other word count: in `exec ls -h` the -h is
 * the sandbox command's, and the check must not be skipped.
 */
static int asks_help(int argc, const char **argv)
{
	for (int i = 1; i < argc && argv[i][0] == '-' && strcmp(argv[i], "--");
	     i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	return 0;
}

static int run_builtin(struct cmd_struct *c, int argc, const char **argv,
		       struct gosbx_ctx *ctx)
{
	/* `gosbx --namespace=x exec -h` shows exec's help anywhere */
	if ((c->flags & NEED_BACKEND) && !(c->flags & OWN_BACKEND) &&
	    !asks_help(argc, argv) && ctx_check_backend_options(ctx) < 0)
		return EXIT_USAGE;
	return flush_status(c->fn(argc, argv, ctx));
}

int main(int argc, const char **argv)
{
	struct gosbx_ctx ctx = { 0 };
	static struct strbuf router_token = STRBUF_INIT;
	const char *router_token_file = NULL;
	int64_t open_timeout_ms = -1; /* -1: not given */
	int show_version = 0;
	struct option opts[] = {
		OPT_BOOL(0, "version", &show_version, "print the version"),
		OPT_STRING_ENV(0, "backend", &ctx.backend, "<name>",
			       "where sandboxes live: local, kube or url",
			       "GOSBX_BACKEND"),
		OPT_STRING_ENV(0, "url", &ctx.url, "<url>",
			       "runtime base URL for the url backend",
			       "GOSBX_URL"),
		OPT_BOOL('v', "verbose", &ctx.verbose, "say more"),
		OPT_GROUP("kube backend"),
		OPT_STRING(0, "kubeconfig", &ctx.session.kubeconfig, "<path>",
			   "kubeconfig file (default $KUBECONFIG, "
			   "~/.kube/config, in-cluster)"),
		OPT_STRING(0, "context", &ctx.session.context, "<name>",
			   "kubeconfig context (default current-context)"),
		OPT_STRING_ENV(0, "namespace", &ctx.session.namespace, "<ns>",
			       "namespace of the claims (default the "
			       "context's, else default)",
			       "GOSBX_NAMESPACE"),
		OPT_STRING(0, "template", &ctx.session.template, "<name>",
			   "SandboxTemplate (default " BACKEND_KUBE_TEMPLATE
			   ")"),
		OPT_STRING(0, "warm-pool", &ctx.session.warm_pool, "<name>",
			   "warm pool of v1beta1 claims (default: the "
			   "template's pool)"),
		OPT_STRING(0, "api-version", &ctx.session.api_version, "<v>",
			   "claim API version: v1alpha1 or v1beta1 (default "
			   "newest served)"),
		OPT_STRING(0, "gateway", &ctx.session.gateway, "<addr>",
			   "reach the sandbox-router at http://<addr> "
			   "(default: port-forward)"),
		OPT_STRING(0, "api-url", &ctx.session.api_url, "<url>",
			   "reach the sandbox-router at this URL"),
		OPT_STRING_ENV(0, "router-namespace",
			       &ctx.session.router_namespace, "<ns>",
			       "namespace of the sandbox-router (default: the "
			       "claims', else agent-sandbox-system)",
			       "GOSBX_ROUTER_NAMESPACE"),
		OPT_DURATION_ENV(0, "open-timeout", &open_timeout_ms,
				 "longest wait for a new claim to be Ready "
				 "(default 5m)",
				 "GOSBX_OPEN_TIMEOUT"),
		OPT_STRING(0, "router-token-file", &router_token_file, "<path>",
			   "bearer token for the router (kube) or the "
			   "runtime (url) (else $GOSBX_ROUTER_TOKEN)"),
		OPT_END(),
	};
	struct cmd_struct *c;

	progname = "gosbx";
	/* gosbx(1) "EXIT STATUS": a failure of gosbx itself is 125 */
	die_status = EXIT_OWN_FAILURE;
	signal(SIGPIPE, SIG_IGN);
	if (argc == 2 && !strcmp(argv[1], "--list-cmds")) {
		/* hidden, for shell completion: one command a line */
		for (c = commands; c->name; c++)
			if (!(c->flags & HIDDEN_COMMAND))
				printf("%s\n", c->name);
		printf("help\n");
		return flush_status(0);
	}
	if (argc > 1 &&
	    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		list_commands(stdout, opts);
		return flush_status(0);
	}
	argc = parse_options(argc, argv, opts, gosbx_usage,
			     PARSE_OPT_STOP_AT_NON_OPTION);
	if (argc < 0)
		return parse_options_status(argc);
	ctx.backend_options = given_backend_options(opts);
	if (!ctx.backend)
		ctx.backend = "local";
	if (ctx_set_backend(&ctx, ctx.backend) < 0)
		return usage_error(gosbx_usage, opts,
				   "unknown backend '%s' (expected %s)",
				   ctx.backend, backend_names());
	if (ctx.session.api_version &&
	    strcmp(ctx.session.api_version, "v1alpha1") &&
	    strcmp(ctx.session.api_version, "v1beta1"))
		return usage_error(gosbx_usage, opts,
				   "option '--api-version' expects v1alpha1 "
				   "or v1beta1, not '%s'",
				   ctx.session.api_version);
	if (!open_timeout_ms)
		return usage_error(gosbx_usage, opts,
				   "option '--open-timeout' expects a "
				   "duration above zero");
	if (open_timeout_ms > 0)
		ctx.session.open_timeout_ms = open_timeout_ms;
	if (read_router_token(router_token_file, &router_token) < 0)
		return EXIT_OWN_FAILURE;
	if (router_token.len)
		ctx.session.router_token = router_token.buf;
	ctx.router_token_file = router_token_file;
	if (show_version) {
		const char *version_argv[] = { "version", NULL };

		return run_builtin(find_command("version"), 1, version_argv,
				   &ctx);
	}
	if (!argc) {
		list_commands(stdout, opts);
		return flush_status(0);
	}
	if (!strcmp(argv[0], "help")) {
		const char *help_argv[] = { NULL, "-h", NULL };

		if (argc < 2) {
			list_commands(stdout, opts);
			return flush_status(0);
		}
		if (!(c = find_command(argv[1]))) {
			error("no such command '%s'; see 'gosbx -h'", argv[1]);
			return EXIT_USAGE;
		}
		help_argv[0] = c->name;
		return flush_status(c->fn(2, help_argv, &ctx));
	}
	if (!(c = find_command(argv[0])))
		return unknown_command(argv[0]);
	return run_builtin(c, argc, argv, &ctx);
}

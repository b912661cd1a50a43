/*
 * gosbx mcp: the MCP server (Documentation/protocol/mcp.md,
 * Documentation/technical/design.md "The MCP server"), on stdio by default or
 * on streamable HTTP with --http. The protocol is lib/mcp/mcp.c and
 * lib/mcp/mcp-http.c; the tools are the toolsets chosen with --tools.
 */
#include "compat.h"
#include "builtin.h"
#include "http-checks.h"
#include "listen.h"
#include "mcp/mcp.h"
#include "parse-options.h"
#include "session/sandbox-limits.h"
#include "session/session.h"
#include "strbuf.h"
#include "usage.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

static const char *const mcp_usage[] = {
	"gosbx mcp [--http=<addr>] [--dev] [--token-file=<path>] "
	"[--tools=<list>] [--namespace=<ns>] [--template=<name>] "
	"[--claim=<name>] [--persistent] [--ephemeral] "
	"[--open-timeout=<duration>] [--call-timeout=<duration>] "
	"[--structured-content] [--memory=<size>] [--cpus=<n>] "
	"[--pids=<n>] [--disk=<size>] [--allow-net=<hosts>] "
	"[--modules=<on|off>] [--go=<path>] [--network] "
	"[--jobs-cpu-budget=<duration>] [--jobs-max-concurrent=<n>] "
	"[--max-sandboxes=<n>]",
	NULL,
};

/* written by the signal handler; the server polls the read end */
static int stop_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	/* a full pipe means a stop is pending anyway */
	if (write(stop_pipe[1], &c, 1) < 0)
		errno = saved;
	errno = saved;
}

static int catch_signals(void)
{
	struct sigaction sa;

	if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK))
		return error_errno("cannot create a pipe");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	return 0;
}

/*
 * --tools=go,sandbox,jobs: the toolsets, by name (mcp_toolset_index),
 * into sets in the order of mcp_toolsets[], each once. 0 or -1 with
 * error().
 */
static int parse_tools(const char *list, const struct mcp_toolset **sets,
		       size_t *nr)
{
	struct strbuf item = STRBUF_INIT;
	const char *p = list;
	int want[MCP_NR_TOOLSETS] = { 0 };
	int ret = 0;

	*nr = 0;
	while (*p) {
		size_t n = strcspn(p, ",");
		int i;

		strbuf_reset(&item);
		strbuf_add(&item, p, n);
		strbuf_trim(&item);
		if ((i = mcp_toolset_index(item.buf)) < 0) {
			ret = error("unknown toolset '%s' in --tools "
				    "(expected %s)",
				    item.buf, mcp_toolset_names());
			break;
		}
		want[i] = 1;
		p += n;
		if (*p)
			p++;
	}
	strbuf_release(&item);
	for (size_t i = 0; !ret && i < MCP_NR_TOOLSETS; i++)
		if (want[i])
			sets[(*nr)++] = mcp_toolsets[i];
	if (!ret && !*nr)
		ret = error("--tools names no toolset (expected %s)",
			    mcp_toolset_names());
	return ret;
}

/* the backend's check_limits (session.h), with what to do about it */
static int check_limits(const struct session_opts *o)
{
	const struct backend_ops *ops = backend_lookup(o->backend);
	const char *allow = getenv("GOSBX_ALLOW_NO_LIMITS");

	if (!ops || !ops->check_limits)
		return 0;
	if (allow && !strcmp(allow, "1")) {
		/* the operator's opt-out: the sandboxes warn once, as exec */
		return 0;
	}
	if (!ops->check_limits(o))
		return 0;
	return error("gosbx mcp runs an agent's code and will not run it "
		     "without the limits above: let this user apply them "
		     "(see 'gosbx doctor'), or say so: --memory=0, --pids=0 "
		     "or --cpus=0 for the ones it cannot have, or "
		     "GOSBX_ALLOW_NO_LIMITS=1 to run without every default "
		     "limit this host cannot apply");
}

/*
 * GOSBX_MCP_HEARTBEAT: the heartbeat interval (a duration; 0 turns
 * heartbeats off), for tests; gosbx-mcp(1) ENVIRONMENT. -1 with error()
 * on a bad value.
 */
static int heartbeat_env(int64_t *ms)
{
	const char *v = getenv("GOSBX_MCP_HEARTBEAT");
	int64_t n;

	if (!v || !*v)
		return 0;
	if (parse_duration_ms(v, &n) < 0)
		return error("GOSBX_MCP_HEARTBEAT: expected a duration such "
			     "as '5s' or 0, not '%s'",
			     v);
	*ms = n;
	return 0;
}

/*
 * The token lets anyone who reads it run code here: warn when the
 * file's group or others may read or write it (OpenSSH refuses such a
 * private key; a token of an earlier recipe may be 0644).
 */
static void warn_token_mode(const char *path)
{
	struct stat st;

	if (stat(path, &st) || !(st.st_mode & 077))
		return;
	warning("token file '%s' is open to other users (mode %04o): "
		"chmod 600 '%s'",
		path, (unsigned)(st.st_mode & 07777), path);
}

int cmd_mcp(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	struct mcp_options o;
	struct mcp_http_opts h = { 0 };
	const char *http = NULL, *token_file = NULL, *tools = NULL;
	struct limit_args la = LIMIT_ARGS_INIT;
	const char *env_token;
	int64_t open_timeout = -1, call_timeout = -1, jobs_budget = -1;
	int jobs_max = INT_MIN, max_sbx = INT_MIN, dev = 0, ret = 0, loopback;
	int in_fd = -1, out_fd = -1, null_fd;
	const struct mcp_toolset *sets[MCP_NR_TOOLSETS] = { &mcp_toolset_go };
	struct strbuf token = STRBUF_INIT;
	struct mcp_server *srv = NULL;
	struct strbuf names = STRBUF_INIT;
	size_t nr = 1; /* default: go */
	struct option opts[] = {
		OPT_STRING(0, "http", &http, "<addr>",
			   "serve streamable HTTP on host:port, path /mcp "
			   "(default: stdio)"),
		OPT_BOOL(0, "dev", &dev,
			 "HTTP without a bearer token (trusted machines "
			 "only)"),
		OPT_STRING(0, "token-file", &token_file, "<path>",
			   "file holding the HTTP bearer token (else "
			   "$GOSBX_MCP_TOKEN)"),
		OPT_STRING(0, "tools", &tools, "<list>",
			   "toolsets: go, sandbox, jobs (default go)"),
		OPT_STRING(0, "namespace", &o.namespace, "<ns>",
			   "namespace of the sandboxes (default: the global "
			   "--namespace, else the context's)"),
		OPT_STRING(0, "template", &o.template, "<name>",
			   "sandbox template (default " BACKEND_KUBE_TEMPLATE
			   ")"),
		OPT_STRING(0, "claim", &o.claim, "<name>",
			   "run_go_code reattaches to this claim"),
		OPT_BOOL(0, "persistent", &o.persistent,
			 "keep the sandboxes when the client goes away"),
		OPT_BOOL(0, "ephemeral", &o.ephemeral,
			 "wipe /app before every run_go_code call"),
		OPT_DURATION(0, "open-timeout", &open_timeout,
			     "longest wait for a new sandbox (default 5m)"),
		OPT_DURATION(0, "call-timeout", &call_timeout,
			     "longest run of one command of run_go_code and "
			     "sandbox_run_* (default 5m)"),
		OPT_BOOL(0, "structured-content", &o.structured_content,
			 "add outputSchema and structuredContent (hosts "
			 "then show the model JSON, not the text)"),
		OPT_GROUP("new sandboxes"),
		OPT_SANDBOX_LIMITS(&la),
		OPT_GROUP("jobs toolset, per client"),
		OPT_DURATION(0, "jobs-cpu-budget", &jobs_budget,
			     "CPU time a client's jobs may use per minute "
			     "(default 10s)"),
		OPT_INT(0, "jobs-max-concurrent", &jobs_max,
			"jobs a client may run at once, more are queued "
			"(default 2)"),
		OPT_GROUP("sandbox toolset, per client"),
		OPT_INT(0, "max-sandboxes", &max_sbx,
			"sandboxes a client may hold at once (default 4)"),
		OPT_END(),
	};

	mcp_options_init(&o);
	argc = parse_options(argc, argv, opts, mcp_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc)
		return usage_error(mcp_usage, opts, "unexpected argument '%s'",
				   argv[0]);
	if (tools && parse_tools(tools, sets, &nr) < 0)
		return usage_reported(mcp_usage, opts);
	if (open_timeout == 0)
		return usage_error(mcp_usage, opts,
				   "option '--open-timeout' expects a "
				   "duration above zero");
	if (open_timeout > 0)
		o.open_timeout_ms = open_timeout;
	if (call_timeout == 0) {
		error("option '--call-timeout' expects a duration above "
		      "zero");
		return 129;
	}
	if (call_timeout > 0)
		o.call_timeout_ms = call_timeout;
	if (heartbeat_env(&o.heartbeat_ms) < 0)
		return 129;
	if (o.claim && ctx_check_claim_name(ctx, o.claim) < 0)
		return usage_reported(mcp_usage, opts);
	ctx_session_opts(ctx, &o.sandbox);
	o.sandbox.purpose = "mcp";
	/* given here, else globally; else the backend decides (NULL) */
	if (o.namespace)
		o.sandbox.namespace = o.namespace;
	if (o.template)
		o.sandbox.template = o.template;
	o.namespace = o.sandbox.namespace;
	o.template = o.sandbox.template;
	o.sandbox.open_timeout_ms = o.open_timeout_ms;
	if (limit_args_apply(&la, &o.sandbox) < 0)
		return usage_reported(mcp_usage, opts);
	if (jobs_budget == 0 || (jobs_max != INT_MIN && jobs_max <= 0))
		return usage_error(mcp_usage, opts,
				   "--jobs-cpu-budget and "
				   "--jobs-max-concurrent must be above zero");
	if (jobs_budget > 0)
		o.jobs_cpu_budget_ms = jobs_budget;
	if (jobs_max != INT_MIN)
		o.jobs_max_concurrent = jobs_max;
	if (max_sbx != INT_MIN) {
		if (max_sbx <= 0) {
			error("option '--max-sandboxes' expects a number above "
			      "zero, not '%d'",
			      max_sbx);
			return 129;
		}
		o.max_sandboxes = max_sbx;
	}

	if (http) {
		if (listen_address_check(http, "127.0.0.1", &loopback) < 0)
			return usage_reported(mcp_usage, opts);
		/* nothing else keeps the rest of the network out */
		if (dev && loopback != 1)
			return usage_error(
				mcp_usage, opts,
				"--dev serves without a token: only on a "
				"loopback address (127.0.0.1, ::1), not "
				"'%s'; give a token (--token-file) to serve "
				"there",
				http);
		h.addr = http;
		o.shared_claim = o.claim != NULL;
		h.dev = dev;
		env_token = getenv("GOSBX_MCP_TOKEN");
		if (token_file) {
			/* a file that cannot be used: not a usage error */
			if (http_token_read(token_file, &token) < 0) {
				strbuf_release(&token);
				return EXIT_OWN_FAILURE;
			}
			h.token = token.buf;
			warn_token_mode(token_file);
		} else if (env_token && *env_token) {
			h.token = env_token;
		} else if (!dev) {
			return usage_error(
				mcp_usage, opts,
				"--http needs a bearer token: write one to a "
				"file and pass --token-file=<path> (e.g. "
				"'head -c 32 /dev/urandom | base64 >token'), "
				"or set GOSBX_MCP_TOKEN; --dev serves without "
				"one (trusted machines only)");
		}
	} else if (dev || token_file) {
		return usage_error(mcp_usage, opts,
				   "--dev and --token-file need --http");
	}

	/*
	 * An agent's code never runs unbounded unless the operator says
	 * so: every limit a new sandbox gets, the defaults too, must be
	 * one this host can apply, or given as 0 (issue 17; `gosbx exec`
	 * only warns).
	 */
	if (check_limits(&o.sandbox) < 0) {
		strbuf_release(&token);
		return EXIT_OWN_FAILURE;
	}
	if (!(srv = mcp_server_new(&o, sets, nr))) {
		strbuf_release(&token);
		return EXIT_OWN_FAILURE;
	}
	if (catch_signals() < 0) {
		ret = EXIT_OWN_FAILURE;
		goto out;
	}

	if (http) {
		if (mcp_serve_http(srv, &h, stop_pipe[0]) < 0)
			ret = EXIT_OWN_FAILURE;
		goto out;
	}
	/*
	 * stdout carries only protocol frames: keep private copies of
	 * stdin and stdout and point fds 0 and 1 elsewhere, so that no
	 * stray write and no child process touches the client's pipes.
	 */
	in_fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
	out_fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (in_fd < 0 || out_fd < 0 || null_fd < 0) {
		error_errno("cannot set up standard input and output");
		ret = EXIT_OWN_FAILURE;
		goto out;
	}
	dup2(null_fd, 0);
	dup2(2, 1);
	close(null_fd);
	for (size_t i = 0; i < nr; i++)
		strbuf_addf(&names, " %s", sets[i]->name);
	mcp_log_stderr("gosbx mcp: serving MCP on stdio (tools:%s)", names.buf);
	strbuf_release(&names);
	if (mcp_serve_stdio(srv, in_fd, out_fd, stop_pipe[0]) < 0)
		ret = EXIT_OWN_FAILURE;
out:
	if (in_fd >= 0)
		close(in_fd);
	if (out_fd >= 0)
		close(out_fd);
	mcp_server_free(srv);
	strbuf_release(&token);
	return ret;
}

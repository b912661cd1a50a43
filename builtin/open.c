/*
 * gosbx open: create a kept sandbox and print its claim name
 * (DESIGN.md "One binary, many commands"). The sandbox lives until
 * `gosbx close` or until it has been idle for its TTL.
 */
#include "compat.h"
#include "builtin.h"
#include "parse-options.h"
#include "session/session.h"
#include "session/sandbox-limits.h"
#include "usage.h"

static const char *const open_usage[] = {
	"gosbx open [--name=<name>] [--memory=<size>] [--cpus=<n>] "
	"[--pids=<n>] [--disk=<size>] [--allow-net=<hosts>] "
	"[--modules=<on|off>] [--go=<path>] [--network] [--ttl=<duration>] "
	"[-q]",
	NULL,
};

int cmd_open(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	struct session_opts o = { 0 };
	struct session s;
	struct limit_args la = LIMIT_ARGS_INIT;
	const char *name = NULL;
	int64_t ttl = -1;
	int quiet = 0, ret;
	struct option opts[] = {
		OPT_STRING(0, "name", &name, "<name>",
			   "claim name (default: generated)"),
		OPT_SANDBOX_LIMITS(&la),
		OPT_DURATION(0, "ttl", &ttl,
			     "close after being idle this long (default 1h)"),
		OPT_BOOL('q', "quiet", &quiet, "print only the claim name"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, open_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc)
		return usage_error(open_usage, opts, "unexpected argument '%s'",
				   argv[0]);

	ctx_session_opts(ctx, &o);
	o.name = name;
	o.keep = 1;
	if (limit_args_apply(&la, &o) < 0)
		return usage_reported(open_usage, opts);
	if (ttl >= 0) {
		if (!ttl)
			return usage_error(open_usage, opts,
					   "option '--ttl' expects a duration "
					   "above zero");
		o.ttl_ms = ttl;
	}
	if (name && ctx_check_claim_name(ctx, name) < 0)
		return usage_reported(open_usage, opts);

	ret = session_open(&s, &o);
	if (ret < 0)
		return ret == SESSION_BAD_OPTS
			       ? usage_reported(open_usage, opts)
			       : EXIT_OWN_FAILURE;
	printf("%s\n", s.claim);
	if (!quiet)
		fprintf(stderr,
			"use it with: gosbx exec --claim=%s -- "
			"<command>\nclose it with: gosbx close %s\n",
			s.claim, s.claim);
	session_disconnect(&s);
	return 0;
}

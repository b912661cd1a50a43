/*
 * gosbx push: copy local files and directory trees into a kept
 * sandbox's /app as one tar stream (Documentation/technical/design.md "One
 * binary, many commands"; Documentation/protocol/runtime-api.md "archive").
 * Each path lands under its base name, like `tar -C $(dirname p) -c $(basename
 * p)`.
 */
#include "compat.h"
#include "builtin.h"
#include "parse-options.h"
#include "session/session.h"
#include "strbuf.h"
#include "usage.h"
#include "workpath.h"

#include <sys/stat.h>

static const char *const push_usage[] = {
	"gosbx push [--claim=<name>] [--to=<dir>] <path>...",
	NULL,
};

int cmd_push(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	struct session_opts o = { 0 };
	struct session s;
	const char *claim = NULL, *to = NULL;
	struct strbuf dir = STRBUF_INIT;
	int verbose = 0, ret;
	struct option opts[] = {
		OPT_STRING_ENV(0, "claim", &claim, "<name>",
			       "the kept sandbox to copy into", "GOSBX_CLAIM"),
		OPT_STRING(0, "to", &to, "<dir>",
			   "directory under /app to copy into (default /app)"),
		OPT_BOOL('v', "verbose", &verbose, "say what was copied"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, push_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	verbose |= ctx->verbose;
	if (claim && !*claim)
		claim = NULL;
	/* e.g. the url backend's sandbox is the runtime at --url */
	if (!claim && !(ctx->ops->caps & BACKEND_IMPLICIT_SANDBOX))
		return usage_error(push_usage, opts,
				   "which sandbox? give --claim=<name> or set "
				   "GOSBX_CLAIM (a throwaway sandbox would be "
				   "deleted right after the push)");
	if (claim && ctx_check_claim_name(ctx, claim) < 0)
		return usage_reported(push_usage, opts);
	if (!argc)
		return usage_error(push_usage, opts,
				   "nothing to push: name at least one path");
	/* the one rule for paths in a sandbox (lib/workpath.h) */
	if (to && workpath_sandbox("option '--to'", to, &dir, NULL) < 0) {
		strbuf_release(&dir);
		return usage_reported(push_usage, opts);
	}
	to = dir.len ? dir.buf : NULL;
	for (int i = 0; i < argc; i++) {
		struct stat st;

		if (lstat(argv[i], &st) < 0) {
			error_errno("cannot push '%s'", argv[i]);
			strbuf_release(&dir);
			return EXIT_OWN_FAILURE;
		}
	}

	ctx_session_opts(ctx, &o);
	o.claim = claim;
	o.purpose = "push";
	ret = session_open(&s, &o);
	if (ret < 0) {
		strbuf_release(&dir);
		return ret == SESSION_BAD_OPTS
			       ? usage_reported(push_usage, opts)
			       : EXIT_OWN_FAILURE;
	}
	ret = session_push(&s, argv, argc, to);
	if (!ret && verbose) {
		for (int i = 0; i < argc; i++)
			fprintf(stderr,
				"pushed '%s' into claim '%s' at /app%s%s\n",
				argv[i], s.claim, to ? "/" : "", to ? to : "");
	}
	session_disconnect(&s);
	strbuf_release(&dir);
	return ret ? EXIT_OWN_FAILURE : 0;
}

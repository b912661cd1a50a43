/*
 * gosbx close: delete sandboxes (or, with --disconnect, keep them and
 * only drop the connection). Documentation/technical/design.md "One binary,
 * many commands".
 */
#include "compat.h"
#include "builtin.h"
#include "parse-options.h"
#include "session/session.h"
#include "usage.h"

static const char *const close_usage[] = {
	"gosbx close [--disconnect] [--all] <name>...",
	NULL,
};

static int close_one(struct gosbx_ctx *ctx, const char *name, int disconnect)
{
	const struct backend_ops *ops = ctx->ops;
	struct session_opts o = { 0 };
	struct session s;

	ctx_session_opts(ctx, &o);
	if (disconnect && ops->keep_claim) {
		/* nothing to drop: the claim only has to exist */
		if (ops->keep_claim(&o, name) < 0)
			return -1;
		fprintf(stderr, "kept claim '%s'\n", name);
		return 0;
	}
	if (!disconnect) {
		if (!ops->delete_claim) {
			/* url: the runtime is not ours to delete */
			fprintf(stderr,
				"nothing to close on the %s backend: '%s' "
				"is left running\n",
				ops->name, name);
			return 0;
		}
		/* no need to reach a sandbox that may never get Ready */
		if (ops->delete_claim(&o, name) < 0)
			return -1;
		fprintf(stderr, "closed claim '%s'\n", name);
		return 0;
	}
	o.claim = name;
	o.keep = 1;
	o.purpose = "close";
	if (session_open(&s, &o) < 0)
		return -1;
	session_disconnect(&s);
	fprintf(stderr, "kept claim '%s'\n", name);
	return 0;
}

static void say_closed(const char *name, void *data)
{
	(void)data;
	fprintf(stderr, "closed claim '%s'\n", name);
}

int cmd_close(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	int disconnect = 0, all = 0, ret = 0;
	struct option opts[] = {
		OPT_BOOL(0, "disconnect", &disconnect,
			 "keep the sandbox, only drop the connection"),
		OPT_BOOL(0, "all", &all,
			 "close every claim (kube: those gosbx made in the "
			 "namespace)"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, close_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (all && argc)
		return usage_error(close_usage, opts,
				   "--all takes no claim names");
	if (all && disconnect)
		return usage_error(close_usage, opts,
				   "--all and --disconnect cannot be used "
				   "together");
	if (!all && !argc)
		return usage_error(close_usage, opts,
				   "which claim? name at least one, or use "
				   "--all");
	if (all && !ctx->ops->delete_all)
		return usage_error(
			close_usage, opts,
			"--all needs a backend that lists its claims, "
			"not '%s' (a url backend has one sandbox: "
			"close it by name)",
			ctx->backend);
	/* every name is checked before any claim is closed */
	for (int i = 0; i < argc; i++)
		if (ctx_check_claim_name(ctx, argv[i]) < 0)
			return usage_reported(close_usage, opts);
	if (all) {
		struct session_opts o = { 0 };

		ctx_session_opts(ctx, &o);
		return ctx->ops->delete_all(&o, say_closed, NULL) < 0
			       ? EXIT_OWN_FAILURE
			       : 0;
	}
	for (int i = 0; i < argc; i++)
		if (close_one(ctx, argv[i], disconnect) < 0)
			ret = EXIT_OWN_FAILURE;
	return ret;
}

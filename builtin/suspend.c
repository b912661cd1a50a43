/*
 * gosbx suspend and gosbx resume: stop a kept sandbox, keeping its
 * files, and start it again (gosbx-suspend(1), gosbx-resume(1); issue
 * 20). Like builtin/close.c, they only parse and ask the backend.
 */
#include "compat.h"
#include "builtin.h"
#include "parse-options.h"
#include "session/session.h"
#include "usage.h"

static const char *const suspend_usage[] = {
	"gosbx suspend <name>...",
	NULL,
};

static const char *const resume_usage[] = {
	"gosbx resume <name>...",
	NULL,
};

/* suspend (resume 0) or resume each claim of argv */
static int run(int argc, const char **argv, struct gosbx_ctx *ctx, int resume)
{
	const char *const *usage = resume ? resume_usage : suspend_usage;
	const char *verb = resume ? "resume" : "suspend";
	int (*op)(const struct session_opts *, const char *) =
		resume ? ctx->ops->resume_claim : ctx->ops->suspend_claim;
	struct session_opts o;
	int ret = 0;
	struct option opts[] = {
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (!argc)
		return usage_error(usage, opts,
				   "which claim? name at least one");
	if (!op)
		return usage_error(usage, opts,
				   "the %s backend cannot %s a sandbox (it "
				   "has no claims of its own)",
				   ctx->backend, verb);
	/* every name is checked before any claim is touched */
	for (int i = 0; i < argc; i++)
		if (ctx_check_claim_name(ctx, argv[i]) < 0)
			return usage_reported(usage, opts);
	ctx_session_opts(ctx, &o);
	for (int i = 0; i < argc; i++) {
		int r = op(&o, argv[i]);

		if (r < 0)
			ret = EXIT_OWN_FAILURE;
		else if (r > 0)
			fprintf(stderr, "claim '%s' is already %s\n", argv[i],
				resume ? "running" : "suspended");
		else
			fprintf(stderr, "%s claim '%s'\n",
				resume ? "resumed" : "suspended", argv[i]);
	}
	return ret;
}

int cmd_suspend(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	return run(argc, argv, ctx, 0);
}

int cmd_resume(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	return run(argc, argv, ctx, 1);
}

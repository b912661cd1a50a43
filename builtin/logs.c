/*
 * gosbx logs: the request log of a kept sandbox's runtime (the seed's
 * `exec begin` / `exec done` lines, gosbx-runtime(1)), with -f to follow
 * it (issue 13). The backend finds the log (struct backend_ops logs).
 */
#include "compat.h"
#include "builtin.h"
#include "parse-options.h"
#include "session/session.h"
#include "usage.h"

static const char *const logs_usage[] = {
	"gosbx logs [-f] <claim>",
	NULL,
};

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

int cmd_logs(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	struct session_opts o = { 0 };
	struct session s;
	struct sigaction sa = { 0 };
	int follow = 0, ret;
	struct option opts[] = {
		OPT_BOOL('f', "follow", &follow,
			 "keep printing lines as they are added"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, logs_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc != 1) {
		error("name one claim");
		usage_with_options_to(stderr, logs_usage, opts);
		return 129;
	}
	ctx_session_opts(ctx, &o);
	o.claim = argv[0];
	o.purpose = "logs";
	o.allow_dead = 1; /* a dead claim's log is the one worth reading */
	ret = session_open(&s, &o);
	if (ret < 0)
		return ret == SESSION_BAD_OPTS
			       ? usage_reported(logs_usage, opts)
			       : EXIT_OWN_FAILURE;
	/* Ctrl-C or SIGTERM end -f: a clean end, status 0 */
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = session_logs(&s, follow, 1, &got_signal);
	session_disconnect(&s);
	return ret ? EXIT_OWN_FAILURE : 0;
}

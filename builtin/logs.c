/*
 * gosbx logs: the request log of a kept sandbox's runtime (the seed's
 * `exec begin` / `exec done` lines, gosbx-runtime(1)), with -f to follow
 * it (issue 13). The backend finds the log (struct backend_ops logs).
 */
#include "compat.h"
#include "builtin.h"
#include "parse-options.h"
#include "session/jobs.h"
#include "session/session.h"
#include "usage.h"

static const char *const logs_usage[] = {
	"gosbx logs [-f] <claim>",
	"gosbx logs --job=<job> [--claim=<name>] [-f] [--since=<offset>]",
	NULL,
};

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

/* --job: the job's output from since, -f to its end (its status). */
static int job_logs(struct gosbx_ctx *ctx, const char *job, const char *claim,
		    int follow, int64_t since)
{
	struct session_result res;
	struct session s;
	char *id = NULL;
	int rc, ended = 0;

	rc = job_session_open(ctx, job, claim, "logs", &s, &id);
	if (rc)
		return rc;
	session_result_init(&res);
	rc = session_job_output(&s, id, (uint64_t)since, follow, 1, 2,
				&got_signal, &res, &ended);
	session_disconnect(&s);
	free(id);
	if (rc > 0)
		rc = 0; /* Ctrl-C ends -f: a clean end */
	else if (rc < 0)
		rc = EXIT_OWN_FAILURE;
	else if (follow && ended)
		rc = session_job_exit_status(&res);
	session_result_release(&res);
	return rc;
}

int cmd_logs(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	struct session_opts o = { 0 };
	struct session s;
	struct sigaction sa = { 0 };
	const char *job = NULL, *claim = NULL;
	int64_t since = 0;
	int follow = 0, ret;
	struct option opts[] = {
		OPT_BOOL('f', "follow", &follow,
			 "keep printing lines as they are added"),
		OPT_STRING(0, "job", &job, "<job>",
			   "the output of a detached command (<claim>/<id>) "
			   "instead"),
		OPT_STRING_ENV(0, "claim", &claim, "<name>",
			       "with --job: the kept sandbox of a bare job id",
			       "GOSBX_CLAIM"),
		OPT_SIZE(0, "since", &since,
			 "with --job: start at this byte offset of its output"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, logs_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (job) {
		if (argc)
			return usage_error(logs_usage, opts,
					   "--job takes no claim argument "
					   "(use <claim>/<id> or --claim)");
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		ret = job_logs(ctx, job, claim, follow, since);
		return ret == EXIT_USAGE ? usage_reported(logs_usage, opts)
					 : ret;
	}
	if (since)
		return usage_error(logs_usage, opts, "--since needs --job");
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

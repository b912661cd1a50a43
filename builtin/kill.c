/*
 * gosbx kill: send a signal to the process group of a detached command
 * (gosbx exec -d), through the runtime's `jobs` extension.
 */
#include "compat.h"
#include "builtin.h"
#include "parse-options.h"
#include "session/jobs.h"
#include "session/session.h"
#include "usage.h"

static const char *const kill_usage[] = {
	"gosbx kill [--claim=<name>] [-s <signal>] <job>",
	NULL,
};

int cmd_kill(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	const char *claim = NULL, *sig = "TERM";
	struct session s;
	char *id = NULL;
	int rc;
	struct option opts[] = {
		OPT_STRING_ENV(0, "claim", &claim, "<name>",
			       "the kept sandbox of <job> when it is a bare id",
			       "GOSBX_CLAIM"),
		OPT_STRING('s', "signal", &sig, "<signal>",
			   "a name (TERM, SIGINT, KILL...) or a number "
			   "(default TERM)"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, kill_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc != 1)
		return usage_error(kill_usage, opts, "name one job");
	rc = job_session_open(ctx, argv[0], claim, "kill", &s, &id);
	if (rc)
		return rc == EXIT_USAGE ? usage_reported(kill_usage, opts) : rc;
	rc = session_job_signal(&s, id, sig);
	session_disconnect(&s);
	free(id);
	return rc < 0 ? EXIT_OWN_FAILURE : 0;
}

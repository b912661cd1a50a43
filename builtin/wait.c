/*
 * gosbx wait: wait for a detached command (gosbx exec -d) to end and
 * exit with its status (Documentation/gosbx.txt EXIT STATUS).
 */
#include "compat.h"
#include "builtin.h"
#include "json.h"
#include "parse-options.h"
#include "session/jobs.h"
#include "session/session.h"
#include "usage.h"

#include <signal.h>

static const char *const wait_usage[] = {
	"gosbx wait [--claim=<name>] <job>",
	NULL,
};

static volatile sig_atomic_t wait_signal;

static void on_signal(int sig)
{
	wait_signal = sig;
}

int cmd_wait(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	const char *claim = NULL;
	struct session_result res;
	struct sigaction sa = { 0 };
	struct session s;
	json_t *job = NULL;
	char *id = NULL;
	int rc;
	struct option opts[] = {
		OPT_STRING_ENV(0, "claim", &claim, "<name>",
			       "the kept sandbox of <job> when it is a bare id",
			       "GOSBX_CLAIM"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, wait_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc != 1)
		return usage_error(wait_usage, opts, "name one job");
	rc = job_session_open(ctx, argv[0], claim, "wait", &s, &id);
	if (rc)
		return rc == EXIT_USAGE ? usage_reported(wait_usage, opts) : rc;
	/* Ctrl-C stops waiting; the job runs on */
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rc = session_job_wait(&s, id, &wait_signal, &job);
	session_disconnect(&s);
	free(id);
	if (rc > 0)
		return 128 + wait_signal;
	if (rc < 0)
		return EXIT_OWN_FAILURE;
	session_result_init(&res);
	session_result_from_json(&res, job);
	json_decref(job);
	rc = session_job_exit_status(&res);
	session_result_release(&res);
	return rc;
}

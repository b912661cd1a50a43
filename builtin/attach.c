/*
 * gosbx attach: connect standard input to a detached command's stdin
 * (gosbx exec -d) and print its output as it comes, until it ends.
 * Standard input goes to the job in chunks as it is read; at its EOF
 * the job's stdin is closed and the output followed to the end. The
 * local terminal is not put in raw mode (a job on a terminal gets
 * lines as the local terminal hands them over).
 */
#include "compat.h"
#include "builtin.h"
#include "http.h"
#include "parse-options.h"
#include "session/jobs.h"
#include "session/session.h"
#include "usage.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>

static const char *const attach_usage[] = {
	"gosbx attach [--claim=<name>] <job>",
	NULL,
};

static volatile sig_atomic_t attach_signal;
/* set to stop following: a signal, or stdin that cannot be passed on */
static volatile sig_atomic_t attach_stop;

static void on_signal(int sig)
{
	attach_signal = sig;
	attach_stop = 1;
}

struct follower {
	struct session s; /* a copy with a connection of its own */
	const char *id;
	struct session_result res;
	int ended;
	int ret;
	int done; /* atomic */
};

static void *follow_run(void *arg)
{
	struct follower *f = arg;

	f->ret = session_job_output(&f->s, f->id, 0, 1, 1, 2, &attach_stop,
				    &f->res, &f->ended);
	__atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Copy standard input to the job until EOF, the follower is done or the
 * job takes no more (it ended or closed its stdin: the rest of the
 * input is not its, as with a pipe). 0 or -1 with error().
 */
static int pump_stdin(struct session *s, const char *id, struct follower *f)
{
	char buf[16384];

	while (!__atomic_load_n(&f->done, __ATOMIC_ACQUIRE) && !attach_stop) {
		int r;

		struct pollfd p = { .fd = 0, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 200) <= 0)
			continue;
		n = read(0, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return error_errno("cannot read standard input");
		r = session_job_stdin(s, id, buf, n, n == 0);
		if (r < 0)
			return -1;
		if (r > 0 || !n)
			return 0;
	}
	return 0;
}

int cmd_attach(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	const char *claim = NULL;
	struct follower f = { 0 };
	struct sigaction sa = { 0 };
	struct session s;
	pthread_t t;
	char *id = NULL;
	int rc;
	struct option opts[] = {
		OPT_STRING_ENV(0, "claim", &claim, "<name>",
			       "the kept sandbox of <job> when it is a bare id",
			       "GOSBX_CLAIM"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, attach_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc != 1)
		return usage_error(attach_usage, opts, "name one job");
	rc = job_session_open(ctx, argv[0], claim, "attach", &s, &id);
	if (rc)
		return rc == EXIT_USAGE ? usage_reported(attach_usage, opts)
					: rc;
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	f.s = s;
	f.s.http = http_client_dup(s.http);
	f.id = id;
	session_result_init(&f.res);
	rc = EXIT_OWN_FAILURE;
	if (!f.s.http || pthread_create(&t, NULL, follow_run, &f))
		goto out;
	if (pump_stdin(&s, id, &f) < 0) {
		attach_stop = 1; /* stop following too: gosbx failed */
		pthread_join(t, NULL);
		goto out;
	}
	pthread_join(t, NULL);
	if (attach_signal)
		rc = 128 + attach_signal;
	else if (!f.ret && f.ended)
		rc = session_job_exit_status(&f.res);
out:
	http_client_free(f.s.http);
	session_result_release(&f.res);
	session_disconnect(&s);
	free(id);
	return rc;
}

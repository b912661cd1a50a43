/*
 * gosbx attach: connect standard input to a detached command's stdin
 * (gosbx exec -d) and print its output as it comes, until it ends.
 * Standard input goes to the job in chunks as it is read; at its EOF
 * the job's stdin is closed and the output followed to the end.
 *
 * A job on a terminal (gosbx exec -dt) with standard input a terminal:
 * the local terminal goes to raw mode (every key to the job, Ctrl-C
 * included), the job's terminal takes the local window size now and at
 * every SIGWINCH, and Ctrl-P Ctrl-Q detaches (docker's keys). Otherwise
 * the local terminal is left as it is (lines go as they are typed) and
 * Ctrl-C detaches.
 */
#include "compat.h"
#include "builtin.h"
#include "http.h"
#include "json.h"
#include "parse-options.h"
#include "session/jobs.h"
#include "session/session.h"
#include "terminal.h"
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
static volatile sig_atomic_t attach_winch;

/* Ctrl-P Ctrl-Q, docker attach's detach keys (raw mode only) */
#define DETACH_1 0x10
#define DETACH_2 0x11

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

struct stdin_state {
	int raw;  /* the local terminal is raw: watch for the detach keys */
	int held; /* a Ctrl-P read last, not sent yet */
	int detached;
};

/* Send the job its terminal's size when ours changed. */
static void pass_resize(struct session *s, const char *id)
{
	unsigned cols, rows;

	if (!attach_winch)
		return;
	attach_winch = 0;
	if (!terminal_size(&cols, &rows))
		session_job_resize(s, id, cols, rows);
}

/*
 * Send n bytes of buf, in raw mode up to the detach keys: 0, 1 when
 * the job takes no more, 2 when the keys were typed, or -1.
 */
static int pass_input(struct session *s, const char *id, struct stdin_state *st,
		      const char *buf, size_t n)
{
	static const char ctrl_p = DETACH_1;
	size_t i, from = 0;
	int r;

	if (!st->raw)
		return session_job_stdin(s, id, buf, n, n == 0);
	for (i = 0; i < n; i++) {
		if (st->held) {
			st->held = 0;
			if (buf[i] == DETACH_2) {
				st->detached = 1;
				return 2;
			}
			/* not the keys: the Ctrl-P was the job's */
			r = session_job_stdin(s, id, &ctrl_p, 1, 0);
			if (r)
				return r;
		}
		if (buf[i] != DETACH_1)
			continue;
		if (i > from) {
			r = session_job_stdin(s, id, buf + from, i - from, 0);
			if (r)
				return r;
		}
		st->held = 1;
		from = i + 1;
	}
	if (n > from)
		return session_job_stdin(s, id, buf + from, n - from, 0);
	if (!n)
		return session_job_stdin(s, id, NULL, 0, 1);
	return 0;
}

/*
 * Copy standard input to the job until EOF, the follower is done, the
 * detach keys, or the job takes no more (it ended or closed its stdin:
 * the rest of the input is not its, as with a pipe). 0 or -1 with
 * error().
 */
static int pump_stdin(struct session *s, const char *id, struct follower *f,
		      struct stdin_state *st)
{
	char buf[16384];

	while (!__atomic_load_n(&f->done, __ATOMIC_ACQUIRE) && !attach_stop) {
		int r;

		struct pollfd p = { .fd = 0, .events = POLLIN };
		ssize_t n;

		pass_resize(s, id);
		if (poll(&p, 1, 200) <= 0)
			continue;
		n = read(0, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return error_errno("cannot read standard input");
		r = pass_input(s, id, st, buf, n);
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
	struct stdin_state st = { 0 };
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
	if (isatty(0)) {
		json_t *job = NULL;
		int tty = 0;

		if (session_job_get(&s, id, &job) < 0)
			goto out;
		json_object_bool(job, "tty", &tty);
		json_decref(job);
		if (tty) {
			terminal_watch_resize(&attach_winch);
			attach_winch = 1; /* the size now */
			if (terminal_make_raw() < 0)
				goto out;
			st.raw = 1;
		}
	}
	if (!f.s.http || pthread_create(&t, NULL, follow_run, &f))
		goto out;
	if (pump_stdin(&s, id, &f, &st) < 0) {
		attach_stop = 1; /* stop following too: gosbx failed */
		pthread_join(t, NULL);
		goto out;
	}
	if (st.detached)
		attach_stop = 1;
	pthread_join(t, NULL);
	terminal_restore();
	if (st.detached) {
		fprintf(stderr, "gosbx: detached from job %s; it runs on\n",
			argv[0]);
		rc = 128 + SIGINT;
	} else if (attach_signal)
		rc = 128 + attach_signal;
	else if (!f.ret && f.ended)
		rc = session_job_exit_status(&f.res);
out:
	terminal_restore();
	http_client_free(f.s.http);
	session_result_release(&f.res);
	session_disconnect(&s);
	free(id);
	return rc;
}

/*
 * gosbx smoke: an MCP client that spawns `gosbx mcp` (or any server
 * command) and drives it over stdio through the four flows of the
 * seed's smoke test (seed 000 "Smoke-test without an LLM"):
 * single-file go run, build + re-run binary, multi-file build+run,
 * intentional compile error. Unlike the seed it checks every result
 * (exit code, output, isError) and exits 1 naming the flow that went
 * wrong.
 *
 * The wire: newline-delimited JSON-RPC 2.0 on the server's stdin and
 * stdout (Documentation/protocol/mcp.md "Protocol"), the handshake of revision
 * 2025-11-25 (initialize, notifications/initialized), tools/list with
 * its pagination cursor, tools/call run_go_code. The server's stderr
 * is ours. The server runs in its own process group and is always
 * reaped: its stdin is closed (the client went away), then SIGTERM,
 * then SIGKILL to the group.
 */
#include "compat.h"
#include "builtin.h"
#include "json.h"
#include "parse-options.h"
#include "mcp/samples.h"
#include "strbuf.h"
#include "strvec.h"
#include "usage.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

static const char *const smoke_usage[] = {
	"gosbx smoke [--server=<cmd>] [--namespace=<ns>] [--template=<name>] "
	"[--timeout=<duration>]",
	NULL,
};

/* the revision we ask for, and the ones we accept in the answer */
#define SMOKE_PROTOCOL "2025-11-25"
static const char *const accepted_revisions[] = {
	"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", NULL,
};

/* after its stdin closed, the server has this long to exit by itself */
#define EXIT_GRACE_MS (60 * 1000)
/* then after SIGTERM, this long before SIGKILL */
#define TERM_GRACE_MS (5 * 1000)

/* exit status when a signal stopped us: 128 + the signal */
static volatile sig_atomic_t smoke_signal;

static void smoke_on_signal(int sig)
{
	smoke_signal = sig;
}

static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = smoke_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* The server process and our ends of its pipes. */
struct peer {
	pid_t pid;
	int to;		  /* its stdin; -1 once closed */
	int from;	  /* its stdout; -1 once closed */
	struct strbuf in; /* bytes read from it, not yet a full line */
	int eof;
	int64_t next_id;
	int verbose;
	int reaped;
	int wstatus; /* waitpid status once reaped */
};

/* Start argv[0] with pipes on stdin and stdout. 0, or -1 with error(). */
static int peer_start(struct peer *p, const char *const *argv)
{
	int to[2] = { -1, -1 }, from[2] = { -1, -1 }, info[2] = { -1, -1 };
	int child_errno = 0;
	ssize_t n;

	if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0 ||
	    pipe2(info, O_CLOEXEC) < 0) {
		error_errno("cannot create pipes for the server");
		goto fail;
	}
	fflush(NULL);
	p->pid = fork();
	if (p->pid < 0) {
		error_errno("cannot fork the server");
		goto fail;
	}
	if (!p->pid) {
		/* child: its own process group, default signals */
		sigset_t none;

		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(to[0], 0) < 0 || dup2(from[1], 1) < 0)
			goto child_fail;
		/* dup2() onto itself keeps close-on-exec: clear it */
		fcntl(0, F_SETFD, 0);
		fcntl(1, F_SETFD, 0);
		execv(argv[0], (char *const *)argv);
	child_fail:
		child_errno = errno;
		if (write(info[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(127);
		_exit(127);
	}
	setpgid(p->pid, p->pid); /* also here: no race with kill(-pid) */
	close(to[0]);
	close(from[1]);
	close(info[1]);
	p->to = to[1];
	p->from = from[0];
	/* the exec succeeded when the close-on-exec pipe reads EOF */
	n = read_in_full(info[0], &child_errno, sizeof(child_errno));
	close(info[0]);
	if (n == sizeof(child_errno)) {
		errno = child_errno;
		error_errno("cannot run '%s'", argv[0]);
		waitpid(p->pid, NULL, 0);
		p->reaped = 1;
		return -1;
	}
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (to[i] >= 0)
			close(to[i]);
		if (from[i] >= 0)
			close(from[i]);
		if (info[i] >= 0)
			close(info[i]);
	}
	p->pid = 0;
	return -1;
}

/* Reap without waiting; 1 once the server is gone. */
static int peer_try_reap(struct peer *p)
{
	pid_t r;

	if (p->reaped)
		return 1;
	r = waitpid(p->pid, &p->wstatus, WNOHANG);
	if (r == p->pid || (r < 0 && errno == ECHILD)) {
		p->reaped = 1;
		return 1;
	}
	return 0;
}

/* Read (and drop) the server's stdout while waiting up to ms for it. */
static int peer_wait_exit(struct peer *p, int64_t ms)
{
	uint64_t deadline = monotonic_ms() + ms;

	while (!peer_try_reap(p)) {
		int64_t left = (int64_t)(deadline - monotonic_ms());
		char buf[4096];

		if (left <= 0)
			return 0;
		if (p->from >= 0) {
			struct pollfd pfd = { p->from, POLLIN, 0 };
			if (poll(&pfd, 1, left > 50 ? 50 : (int)left) > 0 &&
			    xread(p->from, buf, sizeof(buf)) <= 0) {
				close(p->from);
				p->from = -1;
			}
		} else {
			poll(NULL, 0, left > 50 ? 50 : (int)left);
		}
	}
	return 1;
}

/*
 * End the server: close its stdin (the client went away,
 * Documentation/protocol/mcp.md), give it time to close its sandboxes and exit,
 * then SIGTERM and SIGKILL to its process group. Returns 0 when it exited by
 * itself with status 0, else -1 (with error() saying how it ended unless quiet:
 * the caller already reported a failure).
 */
static int peer_finish(struct peer *p, int quiet)
{
	int ret = 0;

	if (!p->pid)
		return 0;
	if (p->to >= 0) {
		close(p->to);
		p->to = -1;
	}
	if (!peer_wait_exit(p, EXIT_GRACE_MS)) {
		ret = -1;
		if (!quiet)
			error("the server did not exit within %d s after its "
			      "standard input closed; sending SIGTERM",
			      EXIT_GRACE_MS / 1000);
		kill(-p->pid, SIGTERM);
		if (!peer_wait_exit(p, TERM_GRACE_MS)) {
			kill(-p->pid, SIGKILL);
			waitpid(p->pid, &p->wstatus, 0);
			p->reaped = 1;
		}
	} else if (WIFSIGNALED(p->wstatus)) {
		ret = -1;
		if (!quiet)
			error("the server was killed by signal %d",
			      WTERMSIG(p->wstatus));
	} else if (WEXITSTATUS(p->wstatus)) {
		ret = -1;
		if (!quiet)
			error("the server exited with status %d",
			      WEXITSTATUS(p->wstatus));
	}
	/* nothing of the group may outlive us */
	kill(-p->pid, SIGKILL);
	if (p->from >= 0)
		close(p->from);
	p->from = -1;
	strbuf_release(&p->in);
	p->pid = 0;
	return ret;
}

/* How the server ended, for a message ("exited with status 3"). */
static void describe_exit(struct peer *p, struct strbuf *why)
{
	/* a server that closed its stdout is usually exiting: wait a bit */
	peer_wait_exit(p, 2000);
	if (!p->reaped)
		strbuf_addstr(why, "it closed its standard output");
	else if (WIFSIGNALED(p->wstatus))
		strbuf_addf(why, "the server was killed by signal %d",
			    WTERMSIG(p->wstatus));
	else
		strbuf_addf(why, "the server exited with status %d",
			    WEXITSTATUS(p->wstatus));
}

static void show_frame(struct peer *p, const char *dir, const char *buf,
		       size_t len)
{
	if (!p->verbose)
		return;
	if (len > 300)
		fprintf(stderr, "gosbx: %s %.300s... (%zu bytes)\n", dir, buf,
			len);
	else
		fprintf(stderr, "gosbx: %s %.*s\n", dir, (int)len, buf);
}

/* Send one message (a line). 0, or -1 with the reason in why. */
static int peer_send(struct peer *p, json_t *msg, struct strbuf *why)
{
	struct strbuf line = STRBUF_INIT;
	int ret = 0;

	if (json_dump_into(&line, msg) < 0) {
		strbuf_addstr(why, "cannot encode a request");
		ret = -1;
		goto out;
	}
	show_frame(p, "->", line.buf, line.len);
	strbuf_addch(&line, '\n');
	if (p->to < 0 || write_in_full(p->to, line.buf, line.len) < 0) {
		strbuf_addstr(why, "cannot write to the server: ");
		if (errno == EPIPE)
			describe_exit(p, why);
		else
			strbuf_addstr(why, strerror(errno));
		ret = -1;
	}
out:
	strbuf_release(&line);
	return ret;
}

/*
 * Read the next message (one line of JSON) before deadline (monotonic
 * ms). Returns 0 with *out set (caller json_decref()s), or -1 with the
 * reason in why (timeout, end of output, not JSON, a signal).
 */
static int peer_read(struct peer *p, uint64_t deadline, json_t **out,
		     struct strbuf *why)
{
	for (;;) {
		char *nl = memchr(p->in.buf, '\n', p->in.len);
		char buf[65536];
		ssize_t n;

		if (nl) {
			size_t len = nl - p->in.buf;
			struct strbuf err = STRBUF_INIT;
			json_t *v;

			show_frame(p, "<-", p->in.buf, len);
			v = json_parse(p->in.buf, len, &err);
			if (!v || !json_is_object(v)) {
				strbuf_addf(why,
					    "the server wrote a line that is "
					    "not a JSON-RPC message on its "
					    "standard output: '%.*s'%s",
					    len > 80 ? 80 : (int)len, p->in.buf,
					    len > 80 ? "..." : "");
				json_decref(v);
				strbuf_release(&err);
				return -1;
			}
			strbuf_release(&err);
			strbuf_remove(&p->in, 0, len + 1);
			*out = v;
			return 0;
		}
		if (p->eof) {
			strbuf_addstr(why, "no answer: ");
			describe_exit(p, why);
			return -1;
		}
		for (;;) {
			int64_t left = (int64_t)(deadline - monotonic_ms());
			struct pollfd pfd = { p->from, POLLIN, 0 };
			int r;

			if (smoke_signal) {
				strbuf_addf(why, "interrupted by signal %d",
					    (int)smoke_signal);
				return -1;
			}
			if (left <= 0) {
				strbuf_addstr(why, "no answer in time "
						   "(--timeout)");
				return -1;
			}
			r = poll(&pfd, 1, left > INT_MAX ? INT_MAX : left);
			if (r > 0)
				break;
			if (r < 0 && errno != EINTR) {
				strbuf_addf(why, "poll: %s", strerror(errno));
				return -1;
			}
		}
		n = xread(p->from, buf, sizeof(buf));
		if (n < 0) {
			strbuf_addf(why, "cannot read from the server: %s",
				    strerror(errno));
			return -1;
		}
		if (!n)
			p->eof = 1;
		else
			strbuf_add(&p->in, buf, n);
	}
}

/* Answer a request the server sent us (ping; anything else -32601). */
static int answer_server_request(struct peer *p, json_t *msg,
				 struct strbuf *why)
{
	const char *method = json_object_str(msg, "method");
	json_t *ans;
	int ret;

	if (method && !strcmp(method, "ping"))
		ans = json_pack("{s:s, s:O, s:{}}", "jsonrpc", "2.0", "id",
				json_object_get(msg, "id"), "result");
	else
		ans = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0",
				"id", json_object_get(msg, "id"), "error",
				"code", -32601, "message", "Method not found");
	ret = peer_send(p, ans, why);
	json_decref(ans);
	return ret;
}

/*
 * Send a request and wait for its answer. Returns 0 with *result (a
 * new reference), or -1 with the reason in why (including an error
 * answer). Notifications from the server are skipped (shown with -v);
 * requests from it are answered.
 */
static int peer_call(struct peer *p, const char *method, json_t *params,
		     int64_t timeout_ms, json_t **result, struct strbuf *why)
{
	uint64_t deadline = monotonic_ms() + timeout_ms;
	int64_t id = ++p->next_id;
	json_t *req;
	int ret;

	*result = NULL;
	req = json_pack("{s:s, s:I, s:s}", "jsonrpc", "2.0", "id",
			(json_int_t)id, "method", method);
	if (params)
		json_object_set(req, "params", params);
	ret = peer_send(p, req, why);
	json_decref(req);
	if (ret < 0)
		return -1;
	for (;;) {
		json_t *msg = NULL, *mid, *err;

		if (peer_read(p, deadline, &msg, why) < 0) {
			if (smoke_signal) {
				/* tell the server; it kills the command */
				json_t *c = json_pack(
					"{s:s, s:s, s:{s:I, s:s}}", "jsonrpc",
					"2.0", "method",
					"notifications/cancelled", "params",
					"requestId", (json_int_t)id, "reason",
					"gosbx smoke was interrupted");
				struct strbuf ignore = STRBUF_INIT;
				peer_send(p, c, &ignore);
				strbuf_release(&ignore);
				json_decref(c);
			}
			return -1;
		}
		mid = json_object_get(msg, "id");
		if (json_object_get(msg, "method")) {
			ret = mid ? answer_server_request(p, msg, why) : 0;
			json_decref(msg);
			if (ret < 0)
				return -1;
			continue;
		}
		if (!json_is_integer(mid) || json_integer_value(mid) != id) {
			/* an answer to nothing we asked: not for us */
			if (p->verbose)
				fprintf(stderr, "gosbx: ignoring an answer to "
						"an unknown request\n");
			json_decref(msg);
			continue;
		}
		err = json_object_get(msg, "error");
		if (err) {
			const char *m = json_object_str(err, "message");
			json_int_t code = json_integer_value(
				json_object_get(err, "code"));
			strbuf_addf(why,
				    "the server answered %s with error "
				    "%" JSON_INTEGER_FORMAT ": %s",
				    method, code, m ? m : "(no message)");
			json_decref(msg);
			return -1;
		}
		*result = json_incref(json_object_get(msg, "result"));
		json_decref(msg);
		if (!json_is_object(*result)) {
			json_decref(*result);
			*result = NULL;
			strbuf_addf(why,
				    "the server's answer to %s has no "
				    "result object",
				    method);
			return -1;
		}
		return 0;
	}
}

/* initialize + notifications/initialized. 0, or -1 with why. */
static int handshake(struct peer *p, int64_t timeout_ms, struct strbuf *why)
{
	json_t *params, *res = NULL, *note;
	const char *version, *name = NULL, *sver = NULL;
	int ret = -1, known = 0;

	params = json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion",
			   SMOKE_PROTOCOL, "capabilities", "clientInfo", "name",
			   "gosbx-smoke", "version", GOSBX_VERSION);
	if (peer_call(p, "initialize", params, timeout_ms, &res, why) < 0)
		goto out;
	version = json_object_str(res, "protocolVersion");
	for (size_t i = 0; version && accepted_revisions[i]; i++)
		known |= !strcmp(version, accepted_revisions[i]);
	if (!known) {
		strbuf_addf(why,
			    "the server chose protocol revision '%s', "
			    "which gosbx smoke does not speak",
			    version ? version : "(none)");
		goto out;
	}
	if (!json_is_object(json_object_get(res, "capabilities")) ||
	    !json_is_object(json_object_get(
		    json_object_get(res, "capabilities"), "tools"))) {
		strbuf_addstr(why, "the server does not advertise the tools "
				   "capability");
		goto out;
	}
	name = json_object_str(json_object_get(res, "serverInfo"), "name");
	sver = json_object_str(json_object_get(res, "serverInfo"), "version");
	printf("server: %s %s (protocol %s)\n", name ? name : "(unnamed)",
	       sver ? sver : "(no version)", version);
	note = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method",
			 "notifications/initialized");
	ret = peer_send(p, note, why);
	json_decref(note);
out:
	json_decref(params);
	json_decref(res);
	return ret;
}

/* The first line of s, for the tool listing. */
static int first_line_len(const char *s)
{
	const char *nl = strchr(s, '\n');

	return nl ? (int)(nl - s) : (int)strlen(s);
}

/*
 * tools/list, following nextCursor; prints the tools and checks that
 * run_go_code is one of them. 0, or -1 with why.
 */
static int list_tools(struct peer *p, int64_t timeout_ms, struct strbuf *why)
{
	json_t *all = json_array(), *params = NULL, *res = NULL;
	int ret = -1, have_run = 0, pages = 0;
	size_t i;
	json_t *t;

	for (;;) {
		json_t *tools, *cursor;

		if (++pages > 100) {
			strbuf_addstr(why, "tools/list: more than 100 pages "
					   "(a cursor loop?)");
			goto out;
		}
		if (peer_call(p, "tools/list", params, timeout_ms, &res, why) <
		    0)
			goto out;
		tools = json_object_get(res, "tools");
		if (!json_is_array(tools)) {
			strbuf_addstr(why, "tools/list: the result has no "
					   "tools array");
			goto out;
		}
		json_array_extend(all, tools);
		cursor = json_object_get(res, "nextCursor");
		json_decref(params);
		params = NULL;
		if (!json_is_string(cursor))
			break;
		params = json_pack("{s:O}", "cursor", cursor);
		json_decref(res);
		res = NULL;
	}
	printf("tools advertised: %zu\n", json_array_size(all));
	json_array_foreach (all, i, t) {
		const char *name = json_object_str(t, "name");
		const char *desc = json_object_str(t, "description");

		if (!name) {
			strbuf_addstr(why, "tools/list: a tool without a name");
			goto out;
		}
		have_run |= !strcmp(name, "run_go_code");
		printf("  - %s: %.*s\n", name, desc ? first_line_len(desc) : 0,
		       desc ? desc : "");
	}
	if (!have_run) {
		strbuf_addstr(why, "the server does not offer the tool "
				   "run_go_code");
		goto out;
	}
	ret = 0;
out:
	fflush(stdout);
	json_decref(params);
	json_decref(res);
	json_decref(all);
	return ret;
}

/* One flow of seed 000's smoke test and what its result must show. */
struct smoke_flow {
	const char *label;
	const char *sample; /* lib/mcp/samples.h, or NULL: no files */
	const char *command;
	int fails;	       /* expect exit != 0 and isError */
	const char *in_stdout; /* must appear in the stdout section */
	const char *in_stderr; /* must appear in the stderr section */
};

static const struct smoke_flow smoke_flows[] = {
	{ "single-file go run", "mcp-single", "go run main.go", 0,
	  "hello from mcp smoke", NULL },
	{ "build + re-run binary", NULL, "go build -o app main.go && ./app", 0,
	  "hello from mcp smoke", NULL },
	{ "multi-file build+run", "mcp-multi",
	  "rm -f app && go build -o app . && ./app", 0, "hi from sub-package",
	  NULL },
	{ "intentional compile error", "mcp-broken", "go run main.go", 1, NULL,
	  "undefined: broken" },
};

#define STDOUT_HEADING                                                         \
	"\xe2\x94\x80\xe2\x94\x80 stdout \xe2\x94\x80\xe2\x94\x80\n"
#define STDERR_HEADING                                                         \
	"\xe2\x94\x80\xe2\x94\x80 stderr \xe2\x94\x80\xe2\x94\x80\n"

/*
 * Does the section of the result text under heading hold want? The
 * stdout section ends where the stderr heading starts.
 */
static int section_has(const char *text, const char *heading, const char *want)
{
	const char *start = strstr(text, heading), *end;
	size_t wlen = strlen(want);

	if (!start)
		return 0;
	start += strlen(heading);
	end = strstr(start, STDERR_HEADING);
	if (!end)
		end = start + strlen(start);
	for (const char *p = start; p + wlen <= end; p++)
		if (!memcmp(p, want, wlen))
			return 1;
	return 0;
}

/* Check a tools/call result against the flow. 0, or -1 with why. */
static int check_result(const struct smoke_flow *f, json_t *res,
			struct strbuf *text, struct strbuf *why)
{
	json_t *content = json_object_get(res, "content"), *c;
	json_t *is_error = json_object_get(res, "isError");
	int err = json_is_true(is_error), code;
	char *end;
	size_t i;

	if (!json_is_array(content)) {
		strbuf_addstr(why, "the result has no content array");
		return -1;
	}
	json_array_foreach (content, i, c) {
		const char *t = json_object_str(c, "text");
		const char *type = json_object_str(c, "type");

		if (type && !strcmp(type, "text") && t)
			strbuf_addstr(text, t);
	}
	if (is_error && !json_is_boolean(is_error)) {
		strbuf_addstr(why, "isError is not a boolean");
		return -1;
	}
	if (!starts_with(text->buf, "exit=")) {
		strbuf_addf(why,
			    "the result text does not start with "
			    "'exit=<N>': '%.*s'",
			    first_line_len(text->buf), text->buf);
		return -1;
	}
	errno = 0;
	code = (int)strtol(text->buf + 5, &end, 10);
	if (errno || end == text->buf + 5) {
		strbuf_addstr(why, "the result text has no exit code");
		return -1;
	}
	if (err != (code != 0)) {
		strbuf_addf(why, "isError is %s but the exit code is %d",
			    err ? "true" : "false", code);
		return -1;
	}
	if (f->fails && !code) {
		strbuf_addstr(why, "the command succeeded but should have "
				   "failed (exit=0)");
		return -1;
	}
	if (!f->fails && code) {
		strbuf_addf(why, "exit=%d, isError=%s", code,
			    err ? "true" : "false");
		return -1;
	}
	if (f->in_stdout &&
	    !section_has(text->buf, STDOUT_HEADING, f->in_stdout)) {
		strbuf_addf(why, "stdout does not hold '%s'", f->in_stdout);
		return -1;
	}
	if (f->in_stderr &&
	    !section_has(text->buf, STDERR_HEADING, f->in_stderr)) {
		strbuf_addf(why, "stderr does not hold '%s'", f->in_stderr);
		return -1;
	}
	return 0;
}

/* a sample the flows above name: it exists */
static const struct sample *builtin_sample(const char *name)
{
	const struct sample *sm = sample_find(name);

	if (!sm)
		die("BUG: no built-in sample '%s'", name);
	return sm;
}

/* Run one flow through tools/call. 0, or -1 with why. */
static int run_flow(struct peer *p, const struct smoke_flow *f,
		    int64_t timeout_ms, struct strbuf *why)
{
	json_t *args, *params, *res = NULL;
	struct strbuf text = STRBUF_INIT;
	int ret = -1;

	printf("\n========== %s ==========\n", f->label);
	fflush(stdout);
	args = json_pack("{s:s}", "command", f->command);
	if (f->sample) {
		const struct sample *sm = builtin_sample(f->sample);
		json_t *files = json_object();

		for (size_t i = 0; i < sm->nr_files; i++)
			json_object_set_new(files, sm->files[i].path,
					    json_string(sm->files[i].data));
		json_object_set_new(args, "files", files);
	}
	params = json_pack("{s:s, s:o}", "name", "run_go_code", "arguments",
			   args);
	if (peer_call(p, "tools/call", params, timeout_ms, &res, why) < 0)
		goto out;
	ret = check_result(f, res, &text, why);
	/* print what came back, also when it is wrong */
	if (text.len) {
		strbuf_complete_line(&text);
		fputs(text.buf, stdout);
	}
	if (json_is_true(json_object_get(res, "isError")))
		printf("(tool reported IsError=true)\n");
	fflush(stdout);
out:
	strbuf_release(&text);
	json_decref(params);
	json_decref(res);
	return ret;
}

/* The argv of `gosbx mcp` from this very binary. */
static void default_server(struct strvec *argv, const struct gosbx_ctx *ctx,
			   const char *namespace, const char *template)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		self[n] = '\0';
		strvec_push(argv, self);
	} else {
		strvec_push(argv, "/proc/self/exe");
	}
	/* the global options (backend, kube...), never a token */
	ctx_global_args(ctx, argv);
	strvec_push(argv, "mcp");
	if (namespace)
		strvec_pushf(argv, "--namespace=%s", namespace);
	if (template)
		strvec_pushf(argv, "--template=%s", template);
}

int cmd_smoke(int argc, const char **argv, struct gosbx_ctx *ctx)
{
	const char *server = NULL;
	const char *namespace = NULL, *template = NULL;
	int64_t timeout_ms = 5 * 60 * 1000;
	struct strvec server_argv = STRVEC_INIT;
	struct strbuf why = STRBUF_INIT;
	struct peer p = { 0 };
	const char *stage = NULL;
	/* a step that fails is the verdict: EXIT_NO */
	int status = EXIT_NO;
	struct option opts[] = {
		OPT_STRING(0, "server", &server, "<cmd>",
			   "run this server command with sh -c (default: "
			   "this gosbx's 'mcp')"),
		OPT_STRING(0, "namespace", &namespace, "<ns>",
			   "passed to 'gosbx mcp' (default: its own)"),
		OPT_STRING(0, "template", &template, "<name>",
			   "passed to 'gosbx mcp' (default: its own)"),
		OPT_DURATION(0, "timeout", &timeout_ms,
			     "longest wait for one answer (default 5m)"),
		OPT_END(),
	};

	argc = parse_options(argc, argv, opts, smoke_usage, 0);
	if (argc < 0)
		return parse_options_status(argc);
	if (argc)
		return usage_error(smoke_usage, opts,
				   "unexpected argument '%s'", argv[0]);
	if (timeout_ms <= 0)
		return usage_error(smoke_usage, opts,
				   "option '--timeout' expects a duration "
				   "above zero");
	if (server && !*server)
		return usage_error(smoke_usage, opts,
				   "option '--server' expects a command");

	if (server) {
		strvec_push(&server_argv, "/bin/sh");
		strvec_push(&server_argv, "-c");
		strvec_push(&server_argv, server);
	} else {
		default_server(&server_argv, ctx, namespace, template);
	}
	if (ctx->verbose) {
		fprintf(stderr, "gosbx: starting the server:");
		for (size_t i = 0; i < server_argv.nr; i++)
			fprintf(stderr, " %s", server_argv.v[i]);
		fprintf(stderr, "\n");
	}

	catch_signals();
	p.to = p.from = -1;
	strbuf_init(&p.in, 0);
	p.verbose = ctx->verbose;
	if (peer_start(&p, server_argv.v) < 0) {
		status = EXIT_OWN_FAILURE;
		goto out;
	}

	stage = "initialize";
	if (handshake(&p, timeout_ms, &why) < 0)
		goto failed;
	stage = "tools/list";
	if (list_tools(&p, timeout_ms, &why) < 0)
		goto failed;
	for (size_t i = 0; i < ARRAY_SIZE(smoke_flows); i++) {
		stage = smoke_flows[i].label;
		if (run_flow(&p, &smoke_flows[i], timeout_ms, &why) < 0) {
			error("smoke: flow '%s' failed: %s", stage, why.buf);
			goto reap;
		}
	}
	stage = NULL;
	status = 0;
	goto reap;
failed:
	error("smoke: %s failed: %s", stage, why.buf);
reap:
	/* the client goes away: the server must close its sandbox */
	if (peer_finish(&p, status || smoke_signal) < 0)
		status = EXIT_NO;
	if (smoke_signal)
		status = 128 + smoke_signal;
	else if (!status)
		printf("\nsmoke complete\n");
out:
	strbuf_release(&p.in);
	strbuf_release(&why);
	strvec_clear(&server_argv);
	return status;
}

#include "compat.h"
#include "bench-lib.h"
#include "parse-options.h"
#include "strbuf.h"
#include "strvec.h"
#include "usage.h"

/*
 * bench-mcp: the MCP client behind the "mcp" section of t/perf/run.sh.
 * It measures `tools/call run_go_code {"command": <command>}` round
 * trips of `gosbx mcp` (JSON-RPC 2.0, MCP 2025-06-18) on a warm
 * sandbox: the first calls (--warmup, at least 1) open the session's
 * sandbox and are not measured. Each subcommand prints one line of
 * key=value pairs on stdout (latencies in microseconds, percentiles by
 * nearest rank); diagnostics go to stderr. Exit status: 0 when every
 * call succeeded, 1 when some failed, 129 on bad usage.
 *
 *   stdio  spawn `<cmd>...` (e.g. gosbx mcp) with pipes, newline-
 *          delimited JSON (gosbx-mcp(1) TRANSPORTS), sequential calls;
 *          closes its stdin at the end and waits for it to exit
 *   http   one streamable HTTP session (POST <url> with keep-alive),
 *          sequential calls; DELETE ends the session
 *   rps    --clients threads, each its own session and connection,
 *          calls back to back for --duration
 */

#include <curl/curl.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static const char *opt_url;
static const char *opt_token;
static const char *opt_command = "true";
static int opt_n = 500;
static int opt_warmup = 20;
static int opt_clients = 8;
static int64_t opt_duration_ms = 5000;
static int64_t opt_timeout_ms = 120000;

static const struct option bench_options[] = {
	OPT_STRING(0, "url", &opt_url, "<url>",
		   "the server's MCP endpoint (http, rps)"),
	OPT_STRING(0, "token", &opt_token, "<token>",
		   "bearer token (http, rps; default none: --dev server)"),
	OPT_STRING(0, "command", &opt_command, "<sh-text>",
		   "the run_go_code command (default: true)"),
	OPT_INT(0, "n", &opt_n, "measured calls (stdio, http)"),
	OPT_INT(0, "warmup", &opt_warmup,
		"unmeasured calls first, per session (at least 1)"),
	OPT_INT(0, "clients", &opt_clients, "concurrent sessions (rps)"),
	OPT_DURATION(0, "duration", &opt_duration_ms,
		     "how long to measure (rps)"),
	OPT_DURATION(0, "timeout", &opt_timeout_ms,
		     "longest wait for one answer (the first opens a "
		     "sandbox)"),
	OPT_END(),
};

static const char *const bench_usage[] = {
	"bench-mcp stdio [--n=<n>] [--warmup=<n>] -- <cmd>...",
	"bench-mcp http --url=<url> [--n=<n>] [--warmup=<n>]",
	"bench-mcp rps --url=<url> [--clients=<n>] [--duration=<d>]",
	NULL,
};

#define PROTOCOL "2025-06-18"

/* The tools/call request with this id, one line without the newline. */
static void call_request(struct strbuf *out, long id)
{
	json_t *cmd = json_string(opt_command);
	char *s;

	if (!cmd)
		die("--command is not valid UTF-8");
	s = json_dumps(cmd, JSON_ENCODE_ANY);
	json_decref(cmd);
	if (!s)
		die("cannot encode the command");
	strbuf_reset(out);
	strbuf_addf(out,
		    "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"run_go_code\",\"arguments\":"
		    "{\"command\":%s}}}",
		    id, s);
	free(s);
}

static const char init_request[] =
	"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	"\"params\":{\"protocolVersion\":\"" PROTOCOL "\","
	"\"capabilities\":{},\"clientInfo\":{\"name\":\"bench-mcp\","
	"\"version\":\"1\"}}}";
static const char initialized_note[] =
	"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";

/*
 * Check one answer: JSON-RPC with this id and a result; for a tool
 * call (tool != 0) a result whose isError is not true. Returns 0 when
 * it is the answer and good, -1 when it is the answer and bad, 1 when
 * it is another message (a notification, another id).
 */
static int check_answer(const char *buf, size_t len, long id, int tool)
{
	json_error_t jerr;
	json_t *root = json_loadb(buf, len, 0, &jerr), *v;
	int ret = 0;

	if (!root) {
		if (bench_may_report())
			error("bad JSON answer: %s: %.200s", jerr.text, buf);
		return -1;
	}
	v = json_object_get(root, "id");
	if (!json_is_integer(v) || json_integer_value(v) != id) {
		json_decref(root);
		return 1;
	}
	v = json_object_get(root, "result");
	if (!json_is_object(v) ||
	    (tool && json_is_true(json_object_get(v, "isError")))) {
		if (bench_may_report())
			error("call %ld failed: %.300s", id, buf);
		ret = -1;
	}
	json_decref(root);
	return ret;
}

/* --------------------------------------------------------------- */
/* stdio */

struct child {
	pid_t pid;
	int in, out;	   /* its stdin (we write), its stdout (we read) */
	struct strbuf buf; /* bytes read but not yet consumed */
};

static int child_start(struct child *c, const char **argv)
{
	posix_spawn_file_actions_t fa;
	int to[2], from[2], err;

	if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
		return error_errno("pipe");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, to[0], 0);
	posix_spawn_file_actions_adddup2(&fa, from[1], 1);
	err = posix_spawnp(&c->pid, argv[0], &fa, NULL, (char **)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(to[0]);
	close(from[1]);
	if (err) {
		close(to[1]);
		close(from[0]);
		errno = err;
		return error_errno("cannot run '%s'", argv[0]);
	}
	c->in = to[1];
	c->out = from[0];
	strbuf_init(&c->buf, 0);
	return 0;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return error_errno("write to the server");
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/*
 * Read the next line of the child's stdout into line (without the
 * newline), waiting at most timeout_ms. 0 on success, -1 on end of
 * output, a read error or the timeout.
 */
static int child_line(struct child *c, struct strbuf *line, int64_t timeout_ms)
{
	uint64_t deadline = monotonic_ns() + (uint64_t)timeout_ms * 1000000u;

	for (;;) {
		char *nl = memchr(c->buf.buf, '\n', c->buf.len);
		struct pollfd pfd = { .fd = c->out, .events = POLLIN };
		uint64_t now;
		ssize_t r;

		if (nl) {
			size_t n = (size_t)(nl - c->buf.buf);

			strbuf_reset(line);
			strbuf_add(line, c->buf.buf, n);
			strbuf_remove(&c->buf, 0, n + 1);
			return 0;
		}
		now = monotonic_ns();
		if (now >= deadline)
			return error("no answer within %" PRId64 " ms",
				     timeout_ms);
		if (poll(&pfd, 1, (int)((deadline - now) / 1000000u) + 1) < 0 &&
		    errno != EINTR)
			return error_errno("poll");
		if (!pfd.revents)
			continue;
		strbuf_grow(&c->buf, 65536);
		r = read(c->out, c->buf.buf + c->buf.len, 65536);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return error_errno("read from the server");
		}
		if (!r)
			return error("the server closed its output");
		strbuf_setlen(&c->buf, c->buf.len + (size_t)r);
	}
}

/* Send one request line and wait for its answer; ns, or 0 on failure. */
static uint64_t child_call(struct child *c, const struct strbuf *req, long id,
			   int tool, struct strbuf *line)
{
	uint64_t t0 = monotonic_ns();

	if (write_all(c->in, req->buf, req->len) < 0 ||
	    write_all(c->in, "\n", 1) < 0)
		return 0;
	for (;;) {
		int r;

		if (child_line(c, line, opt_timeout_ms) < 0)
			return 0;
		r = check_answer(line->buf, line->len, id, tool);
		if (r < 0)
			return 0;
		if (!r)
			break;
	}
	return monotonic_ns() - t0 ? monotonic_ns() - t0 : 1;
}

/* Close the child's stdin, wait up to 10 s for it, then kill it. */
static int child_finish(struct child *c)
{
	int status = 0, i;
	pid_t r = 0;

	close(c->in);
	for (i = 0; i < 1000; i++) {
		r = waitpid(c->pid, &status, WNOHANG);
		if (r != 0)
			break;
		poll(NULL, 0, 10);
	}
	if (!r) {
		error("the server did not exit within 10 s; killing it");
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &status, 0);
	}
	close(c->out);
	strbuf_release(&c->buf);
	return status;
}

static struct child *running_child;

/*
 * On SIGINT or SIGTERM, stop the server the way its clients do (it
 * ends its session and closes its sandbox on SIGTERM) and wait for it,
 * at most 10 s, so that nothing is left when this program is gone.
 */
static void on_signal(int sig)
{
	struct timespec tick = { 0, 10000000 };
	int i, status;

	if (running_child && running_child->pid > 0) {
		pid_t pid = running_child->pid;

		kill(pid, SIGTERM);
		for (i = 0; i < 1000; i++) {
			if (waitpid(pid, &status, WNOHANG) != 0)
				break;
			nanosleep(&tick, NULL);
		}
		if (i == 1000) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static int cmd_stdio(int argc, const char **argv)
{
	struct child c;
	struct strvec args = STRVEC_INIT;
	struct strbuf req = STRBUF_INIT, line = STRBUF_INIT;
	struct bench_samples s = { 0 };
	uint64_t ns, first = 0, t0;
	int i, errors = 0, status;
	long id = 1;
	double secs;

	if (argc < 1) {
		error("stdio needs the server's command after --");
		return 129;
	}
	strvec_pushv(&args, argv);
	i = child_start(&c, args.v);
	strvec_clear(&args);
	if (i < 0)
		return 1;
	running_child = &c;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);

	strbuf_addstr(&req, init_request);
	if (!child_call(&c, &req, 0, 0, &line)) {
		error("initialize failed");
		errors++;
		goto out;
	}
	if (write_all(c.in, initialized_note, strlen(initialized_note)) < 0 ||
	    write_all(c.in, "\n", 1) < 0) {
		errors++;
		goto out;
	}
	for (i = 0; i < opt_warmup || i < 1; i++) {
		call_request(&req, id);
		ns = child_call(&c, &req, id++, 1, &line);
		if (!ns) {
			error("warm-up call %d failed", i);
			errors++;
			goto out;
		}
		if (!i)
			first = ns;
	}
	t0 = monotonic_ns();
	for (i = 0; i < opt_n; i++) {
		call_request(&req, id);
		ns = child_call(&c, &req, id++, 1, &line);
		if (ns)
			bench_samples_add(&s, ns);
		else
			errors++;
	}
	secs = (double)(monotonic_ns() - t0) / 1e9;
	printf("bench=stdio n=%d errors=%d first_call_us=%.1f"
	       " calls_per_s=%.1f",
	       opt_n, errors, (double)first / 1000.0,
	       secs > 0 ? (double)s.nr / secs : 0.0);
	bench_print_stats(&s, "");
	printf("\n");
out:
	status = child_finish(&c);
	running_child = NULL;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		error("the server exited with status %d", status);
		errors++;
	}
	strbuf_release(&req);
	strbuf_release(&line);
	bench_samples_release(&s);
	return errors ? 1 : 0;
}

/* --------------------------------------------------------------- */
/* streamable HTTP */

struct session {
	CURL *curl;
	struct curl_slist *headers;
	struct strbuf body, sid, hdr;
	char errbuf[CURL_ERROR_SIZE];
	long connects;
	long id;
};

static size_t collect_cb(char *ptr, size_t size, size_t nmemb, void *data)
{
	strbuf_add(data, ptr, size * nmemb);
	return size * nmemb;
}

/* Keep the value of the Mcp-Session-Id response header. */
static size_t header_cb(char *ptr, size_t size, size_t nmemb, void *data)
{
	struct session *s = data;
	size_t len = size * nmemb;
	static const char name[] = "mcp-session-id:";

	if (len > sizeof(name) - 1 &&
	    !strncasecmp(ptr, name, sizeof(name) - 1)) {
		const char *p = ptr + sizeof(name) - 1, *end = ptr + len;

		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		while (end > p &&
		       (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
			end--;
		strbuf_reset(&s->sid);
		strbuf_add(&s->sid, p, (size_t)(end - p));
	}
	return len;
}

static void session_headers(struct session *s)
{
	curl_slist_free_all(s->headers);
	s->headers = curl_slist_append(NULL, "Content-Type: application/json");
	s->headers = curl_slist_append(
		s->headers, "Accept: application/json, text/event-stream");
	s->headers = curl_slist_append(s->headers, "Expect:");
	if (opt_token) {
		strbuf_reset(&s->hdr);
		strbuf_addf(&s->hdr, "Authorization: Bearer %s", opt_token);
		s->headers = curl_slist_append(s->headers, s->hdr.buf);
	}
	if (s->sid.len) {
		strbuf_reset(&s->hdr);
		strbuf_addf(&s->hdr, "Mcp-Session-Id: %s", s->sid.buf);
		s->headers = curl_slist_append(s->headers, s->hdr.buf);
		s->headers = curl_slist_append(
			s->headers, "MCP-Protocol-Version: " PROTOCOL);
	}
	curl_easy_setopt(s->curl, CURLOPT_HTTPHEADER, s->headers);
}

static void session_init(struct session *s)
{
	memset(s, 0, sizeof(*s));
	strbuf_init(&s->body, 0);
	strbuf_init(&s->sid, 0);
	strbuf_init(&s->hdr, 0);
	s->curl = curl_easy_init();
	if (!s->curl)
		die("curl_easy_init failed");
	curl_easy_setopt(s->curl, CURLOPT_URL, opt_url);
	curl_easy_setopt(s->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(s->curl, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(s->curl, CURLOPT_TIMEOUT_MS, (long)opt_timeout_ms);
	curl_easy_setopt(s->curl, CURLOPT_ERRORBUFFER, s->errbuf);
	curl_easy_setopt(s->curl, CURLOPT_WRITEFUNCTION, collect_cb);
	curl_easy_setopt(s->curl, CURLOPT_WRITEDATA, &s->body);
	curl_easy_setopt(s->curl, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(s->curl, CURLOPT_HEADERDATA, s);
	session_headers(s);
}

/*
 * POST one message (a request when id >= 0) and check the answer; ns,
 * or 0 on failure. An SSE answer's last "data:" line is the message.
 */
static uint64_t session_post(struct session *s, const struct strbuf *msg,
			     long id, int tool)
{
	uint64_t t0, t1;
	CURLcode rc;
	long status = 0, nc = 0;
	const char *json, *p;
	size_t len;

	strbuf_reset(&s->body);
	s->errbuf[0] = '\0';
	curl_easy_setopt(s->curl, CURLOPT_POSTFIELDS, msg->buf);
	curl_easy_setopt(s->curl, CURLOPT_POSTFIELDSIZE, (long)msg->len);
	t0 = monotonic_ns();
	rc = curl_easy_perform(s->curl);
	t1 = monotonic_ns();
	if (rc != CURLE_OK) {
		if (bench_may_report())
			error("%s: %s", opt_url,
			      s->errbuf[0] ? s->errbuf
					   : curl_easy_strerror(rc));
		return 0;
	}
	curl_easy_getinfo(s->curl, CURLINFO_NUM_CONNECTS, &nc);
	s->connects += nc;
	curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &status);
	if (id < 0) {
		if (status == 202 || status == 200)
			return t1 - t0 ? t1 - t0 : 1;
		if (bench_may_report())
			error("notification: HTTP %ld", status);
		return 0;
	}
	if (status != 200) {
		if (bench_may_report())
			error("%s: HTTP %ld: %.200s", opt_url, status,
			      s->body.buf);
		return 0;
	}
	json = s->body.buf;
	len = s->body.len;
	p = strstr(json, "data:");
	if (json[0] != '{' && p) {
		const char *last = p, *end;

		while ((p = strstr(p + 5, "\ndata:")))
			last = p + 1;
		json = last + 5;
		end = strchr(json, '\n');
		len = end ? (size_t)(end - json) : strlen(json);
	}
	if (check_answer(json, len, id, tool))
		return 0;
	return t1 - t0 ? t1 - t0 : 1;
}

/* initialize (retrying while the server starts) and initialized */
static int session_open(struct session *s)
{
	struct strbuf msg = STRBUF_INIT;
	uint64_t deadline = monotonic_ns() + 20000000000u;
	int ret = -1, saved = bench_error_budget;

	strbuf_addstr(&msg, init_request);
	for (;;) {
		/* connection refused while the server starts: quiet */
		bench_error_budget = monotonic_ns() < deadline ? 0 : saved;
		if (session_post(s, &msg, 0, 0))
			break;
		if (monotonic_ns() >= deadline) {
			error("initialize failed");
			goto out;
		}
		poll(NULL, 0, 50);
	}
	bench_error_budget = saved;
	if (!s->sid.len) {
		error("no Mcp-Session-Id in the initialize answer");
		goto out;
	}
	session_headers(s);
	strbuf_reset(&msg);
	strbuf_addstr(&msg, initialized_note);
	if (!session_post(s, &msg, -1, 0))
		goto out;
	s->id = 1;
	ret = 0;
out:
	strbuf_release(&msg);
	return ret;
}

static uint64_t session_call(struct session *s, struct strbuf *req)
{
	call_request(req, s->id);
	return session_post(s, req, s->id++, 1);
}

/* DELETE the session (its sandbox is closed) and free everything. */
static int session_close(struct session *s)
{
	long status = 0;
	int ret = 0;

	if (s->sid.len) {
		strbuf_reset(&s->body);
		curl_easy_setopt(s->curl, CURLOPT_CUSTOMREQUEST, "DELETE");
		curl_easy_setopt(s->curl, CURLOPT_HTTPGET, 1L);
		if (curl_easy_perform(s->curl) != CURLE_OK ||
		    (curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE,
				       &status),
		     status != 204 && status != 200)) {
			error("DELETE of session %s: HTTP %ld", s->sid.buf,
			      status);
			ret = -1;
		}
	}
	curl_easy_cleanup(s->curl);
	curl_slist_free_all(s->headers);
	strbuf_release(&s->body);
	strbuf_release(&s->sid);
	strbuf_release(&s->hdr);
	return ret;
}

/* Open the session and make the warm-up calls (the first opens a sandbox). */
static int session_warm(struct session *s, struct strbuf *req, uint64_t *first)
{
	int i;

	if (session_open(s) < 0)
		return -1;
	for (i = 0; i < opt_warmup || i < 1; i++) {
		uint64_t ns = session_call(s, req);

		if (!ns)
			return error("warm-up call %d failed", i);
		if (!i && first)
			*first = ns;
	}
	s->connects = 0;
	return 0;
}

static int need_url(void)
{
	if (!opt_url) {
		error("--url is required");
		return -1;
	}
	return 0;
}

static int cmd_http(int argc, const char **argv)
{
	struct session s;
	struct strbuf req = STRBUF_INIT;
	struct bench_samples smp = { 0 };
	uint64_t first = 0, t0;
	int i, errors = 0;
	double secs;

	(void)argv;
	if (argc || need_url())
		return 129;
	session_init(&s);
	if (session_warm(&s, &req, &first) < 0) {
		errors++;
		goto out;
	}
	t0 = monotonic_ns();
	for (i = 0; i < opt_n; i++) {
		uint64_t ns = session_call(&s, &req);

		if (ns)
			bench_samples_add(&smp, ns);
		else
			errors++;
	}
	secs = (double)(monotonic_ns() - t0) / 1e9;
	printf("bench=http n=%d errors=%d connects=%ld first_call_us=%.1f"
	       " calls_per_s=%.1f",
	       opt_n, errors, s.connects, (double)first / 1000.0,
	       secs > 0 ? (double)smp.nr / secs : 0.0);
	bench_print_stats(&smp, "");
	printf("\n");
out:
	if (session_close(&s) < 0)
		errors++;
	strbuf_release(&req);
	bench_samples_release(&smp);
	return errors ? 1 : 0;
}

struct worker {
	struct session s;
	struct strbuf req;
};

static int worker_warm(void *data)
{
	struct worker *w = data;

	return session_warm(&w->s, &w->req, NULL);
}

static uint64_t worker_call(void *data)
{
	struct worker *w = data;

	return session_call(&w->s, &w->req);
}

static int cmd_rps(int argc, const char **argv)
{
	struct bench_rps_result r;
	struct worker *w;
	long connects = 0;
	int i;

	(void)argv;
	if (argc || need_url())
		return 129;
	if (opt_clients < 1) {
		error("--clients must be at least 1");
		return 129;
	}
	w = xcalloc(opt_clients, sizeof(*w));
	for (i = 0; i < opt_clients; i++) {
		strbuf_init(&w[i].req, 0);
		session_init(&w[i].s);
	}
	bench_rps(w, opt_clients, sizeof(*w), worker_warm, worker_call,
		  opt_duration_ms, &r);
	for (i = 0; i < opt_clients; i++) {
		connects += w[i].s.connects;
		if (session_close(&w[i].s) < 0)
			r.errors++;
		strbuf_release(&w[i].req);
	}
	printf("bench=rps clients=%d failed_sessions=%d seconds=%.3f"
	       " calls=%zu errors=%" PRIu64 " connects=%ld calls_per_s=%.1f",
	       opt_clients, r.failed, r.secs, r.all.nr, r.errors, connects,
	       r.secs > 0 ? (double)r.all.nr / r.secs : 0.0);
	bench_print_stats(&r.all, "");
	printf("\n");
	bench_samples_release(&r.all);
	free(w);
	return r.errors || r.failed ? 1 : 0;
}

static const struct bench_cmd subcommands[] = {
	{ "http", cmd_http, 1 },
	{ "rps", cmd_rps, 1 },
	{ "stdio", cmd_stdio, 1 },
};

int main(int argc, const char **argv)
{
	int ret;

	progname = "bench-mcp";
	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		die("curl_global_init failed");
	ret = bench_main(argc, argv, subcommands, ARRAY_SIZE(subcommands),
			 bench_usage, bench_options);
	curl_global_cleanup();
	return ret;
}

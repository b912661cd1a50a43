#include "compat.h"
#include "bench-lib.h"
#include "parse-options.h"
#include "strbuf.h"
#include "strvec.h"
#include "usage.h"

/*
 * bench-runtime: the load generator behind t/perf/run.sh for the
 * runtime server (Documentation/protocol/runtime-api.md). Each subcommand
 * prints one line of key=value pairs on stdout that run.sh turns into its
 * table; diagnostics go to stderr. Exit status: 0 when every request succeeded,
 * 1 when some failed (the numbers are still printed), 129 on bad usage.
 *
 *   direct   posix_spawn("sh -c <command>") + waitpid, the baseline;
 *            with --no-shell posix_spawnp(<command>), no arguments
 *   latency  sequential POSTs on one keep-alive connection
 *   rps      N threads, each with its own keep-alive connection
 *   stream   one POST /v1/exec, counting the decoded data bytes
 *   wait     poll GET / until it answers 200 (readiness)
 *   free-port  print a loopback TCP port that was free a moment ago
 */

#include <curl/curl.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static const char *opt_unix;
static const char *opt_tcp;
static const char *opt_command;
static const char *opt_path;
static int opt_n = 2000;
static int opt_warmup = 100;
static int opt_clients = 8;
static int opt_parse = 1;
static int opt_shell = 1;
static int64_t opt_duration_ms = 5000;
static int64_t opt_timeout_ms = 120000;
static int64_t opt_bytes = -1;
static struct strvec opt_headers = STRVEC_INIT;

static const struct option bench_options[] = {
	OPT_STRING(0, "unix", &opt_unix, "<path>",
		   "server listens on this unix socket"),
	OPT_STRING(0, "tcp", &opt_tcp, "<host:port>",
		   "server listens on this TCP address"),
	OPT_STRING(0, "command", &opt_command, "<sh-text>",
		   "command to run (default: true; stream: yes | head)"),
	OPT_STRING(0, "path", &opt_path, "<path>",
		   "request path (default: /execute; stream: /v1/exec)"),
	OPT_INT(0, "n", &opt_n, "measured requests (latency, direct)"),
	OPT_INT(0, "warmup", &opt_warmup,
		"unmeasured requests first (per client for rps)"),
	OPT_INT(0, "clients", &opt_clients, "concurrent clients (rps)"),
	OPT_DURATION(0, "duration", &opt_duration_ms,
		     "how long to measure (rps)"),
	OPT_DURATION(0, "timeout", &opt_timeout_ms,
		     "give up after this long (stream, wait)"),
	OPT_SIZE(0, "bytes", &opt_bytes,
		 "stdout bytes to expect (stream; default 1g of yes | head)"),
	OPT_BOOL(0, "shell", &opt_shell,
		 "direct: run sh -c <command> (--no-shell: the program)"),
	OPT_BOOL(0, "parse", &opt_parse,
		 "parse the event stream (stream; --no-parse counts bytes)"),
	OPT_STRING_LIST(0, "header", &opt_headers, "<name: value>",
			"add this request header (repeatable; latency, rps)"),
	OPT_END(),
};

static const char *const bench_usage[] = {
	"bench-runtime direct [--n=<n>] [--command=<sh-text>] [--no-shell]",
	"bench-runtime latency (--unix=<path> | --tcp=<host:port>) [--n=<n>]",
	"bench-runtime rps (--unix=<path> | --tcp=<host:port>) "
	"[--clients=<n>] [--duration=<d>]",
	"bench-runtime stream (--unix=<path> | --tcp=<host:port>) "
	"[--bytes=<size>] [--no-parse]",
	"bench-runtime wait (--unix=<path> | --tcp=<host:port>) "
	"[--timeout=<d>]",
	"bench-runtime free-port",
	NULL,
};

static const char *target_name(void)
{
	return opt_unix ? "unix" : "tcp";
}

/* "http://localhost<path>" for a unix socket, else "http://<tcp><path>". */
static void target_url(struct strbuf *url, const char *path)
{
	strbuf_reset(url);
	if (opt_unix)
		strbuf_addf(url, "http://localhost%s", path);
	else
		strbuf_addf(url, "http://%s%s", opt_tcp, path);
}

/* One keep-alive connection: an easy handle reused for every request. */
struct conn {
	CURL *curl;
	struct curl_slist *headers;
	struct strbuf url;
	struct strbuf body;
	char errbuf[CURL_ERROR_SIZE];
	long connects; /* new connections curl had to open */
};

static size_t collect_cb(char *ptr, size_t size, size_t nmemb, void *data)
{
	strbuf_add(data, ptr, size * nmemb);
	return size * nmemb;
}

/*
 * Set up c for requests to `path`; a non-NULL post_body makes them
 * POSTs of that JSON text (which must outlive c).
 */
static void conn_init(struct conn *c, const char *path, const char *post_body)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	strbuf_init(&c->url, 0);
	strbuf_init(&c->body, 0);
	c->curl = curl_easy_init();
	if (!c->curl)
		die("curl_easy_init failed");
	target_url(&c->url, path);
	curl_easy_setopt(c->curl, CURLOPT_URL, c->url.buf);
	if (opt_unix)
		curl_easy_setopt(c->curl, CURLOPT_UNIX_SOCKET_PATH, opt_unix);
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, c->errbuf);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, collect_cb);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &c->body);
	for (i = 0; i < opt_headers.nr; i++)
		c->headers = curl_slist_append(c->headers, opt_headers.v[i]);
	if (post_body) {
		c->headers = curl_slist_append(
			c->headers, "Content-Type: application/json");
		c->headers = curl_slist_append(c->headers, "Expect:");
	}
	if (c->headers)
		curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, c->headers);
	if (post_body) {
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, post_body);
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE,
				 (long)strlen(post_body));
	}
}

static void conn_release(struct conn *c)
{
	curl_easy_cleanup(c->curl);
	curl_slist_free_all(c->headers);
	strbuf_release(&c->url);
	strbuf_release(&c->body);
}

/*
 * Perform one request and return its duration in ns, or 0 on a
 * transport error or a status other than 200 (reported on stderr).
 */
static uint64_t conn_perform(struct conn *c)
{
	uint64_t t0, t1;
	CURLcode rc;
	long status = 0, nc = 0;

	strbuf_reset(&c->body);
	c->errbuf[0] = '\0';
	t0 = monotonic_ns();
	rc = curl_easy_perform(c->curl);
	t1 = monotonic_ns();
	if (rc != CURLE_OK) {
		if (bench_may_report())
			error("%s: %s", c->url.buf,
			      c->errbuf[0] ? c->errbuf
					   : curl_easy_strerror(rc));
		return 0;
	}
	curl_easy_getinfo(c->curl, CURLINFO_NUM_CONNECTS, &nc);
	c->connects += nc;
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		if (bench_may_report())
			error("%s: HTTP %ld: %.200s", c->url.buf, status,
			      c->body.buf);
		return 0;
	}
	return t1 > t0 ? t1 - t0 : 1;
}

/* Check an /execute answer: JSON with "exit_code": 0. */
static int check_execute_answer(const struct strbuf *body)
{
	json_error_t jerr;
	json_t *root = json_loadb(body->buf, body->len, 0, &jerr);
	json_t *code;
	int ret = 0;

	if (!root) {
		if (bench_may_report())
			error("bad JSON answer: %s: %.200s", jerr.text,
			      body->buf);
		return -1;
	}
	code = json_object_get(root, "exit_code");
	if (!json_is_integer(code) || json_integer_value(code) != 0) {
		if (bench_may_report())
			error("command failed: %.200s", body->buf);
		ret = -1;
	}
	json_decref(root);
	return ret;
}

/* One request of the latency/rps loops; returns ns, or 0 on failure. */
static uint64_t execute_once(struct conn *c)
{
	uint64_t ns = conn_perform(c);

	if (ns && check_execute_answer(&c->body))
		return 0;
	return ns;
}

/* The JSON body {"command": <command>}; the caller frees it. */
static char *command_body(const char *command)
{
	json_t *obj = json_pack("{s:s}", "command", command);
	char *s;

	if (!obj)
		die("cannot build JSON body");
	s = json_dumps(obj, JSON_COMPACT);
	json_decref(obj);
	if (!s)
		die("cannot build JSON body");
	return s;
}

static int need_target(void)
{
	if (!!opt_unix == !!opt_tcp) {
		error("give exactly one of --unix and --tcp");
		return -1;
	}
	return 0;
}

/*
 * Run sh -c <command> (opt_shell), else the program <command> found in
 * PATH with no arguments, with stdin/stdout/stderr on /dev/null; the
 * time from spawn to reaped in ns, or 0 when it failed.
 */
static uint64_t spawn_once(const char *command,
			   const posix_spawn_file_actions_t *fa)
{
	char *sh_argv[] = { (char *)"sh", (char *)"-c", (char *)command, NULL };
	char *prog_argv[] = { (char *)command, NULL };
	uint64_t t0 = monotonic_ns(), t1;
	pid_t pid;
	int status, err;

	if (opt_shell)
		err = posix_spawn(&pid, "/bin/sh", fa, NULL, sh_argv, environ);
	else
		err = posix_spawnp(&pid, command, fa, NULL, prog_argv, environ);
	if (err) {
		errno = err;
		if (bench_may_report())
			error_errno("cannot spawn %s",
				    opt_shell ? "/bin/sh" : command);
		return 0;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			error_errno("waitpid");
			return 0;
		}
	t1 = monotonic_ns();
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		if (bench_may_report())
			error("'%s' failed (status %d)", command, status);
		return 0;
	}
	return t1 - t0;
}

static int cmd_direct(int argc, const char **argv)
{
	const char *command = opt_command ? opt_command : "true";
	posix_spawn_file_actions_t fa;
	struct bench_samples s = { 0 };
	int i, errors = 0;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	for (i = 0; i < opt_warmup; i++)
		spawn_once(command, &fa);
	for (i = 0; i < opt_n; i++) {
		uint64_t ns = spawn_once(command, &fa);

		if (ns)
			bench_samples_add(&s, ns);
		else
			errors++;
	}
	posix_spawn_file_actions_destroy(&fa);
	printf("bench=direct n=%d errors=%d", opt_n, errors);
	bench_print_stats(&s, "");
	printf("\n");
	bench_samples_release(&s);
	return errors ? 1 : 0;
}

static int cmd_latency(int argc, const char **argv)
{
	char *body;
	struct bench_samples s = { 0 };
	struct conn c;
	int i, errors = 0;
	uint64_t t0;
	double secs;

	if (need_target())
		return 129;
	body = command_body(opt_command ? opt_command : "true");
	conn_init(&c, opt_path ? opt_path : "/execute", body);
	for (i = 0; i < opt_warmup; i++)
		execute_once(&c);
	c.connects = 0;
	t0 = monotonic_ns();
	for (i = 0; i < opt_n; i++) {
		uint64_t ns = execute_once(&c);

		if (ns)
			bench_samples_add(&s, ns);
		else
			errors++;
	}
	secs = (double)(monotonic_ns() - t0) / 1e9;
	printf("bench=latency target=%s n=%d errors=%d connects=%ld"
	       " rps=%.1f",
	       target_name(), opt_n, errors, c.connects,
	       secs > 0 ? (double)s.nr / secs : 0.0);
	bench_print_stats(&s, "");
	printf("\n");
	conn_release(&c);
	bench_samples_release(&s);
	free(body);
	return errors ? 1 : 0;
}

static int worker_warm(void *data)
{
	struct conn *c = data;
	int i;

	for (i = 0; i < opt_warmup; i++)
		execute_once(c);
	c->connects = 0;
	return 0;
}

static uint64_t worker_call(void *data)
{
	return execute_once(data);
}

static int cmd_rps(int argc, const char **argv)
{
	char *body;
	const char *path = opt_path ? opt_path : "/execute";
	struct bench_rps_result r;
	struct conn *c;
	long connects = 0;
	int i;

	if (need_target())
		return 129;
	if (opt_clients < 1) {
		error("--clients must be at least 1");
		return 129;
	}
	body = command_body(opt_command ? opt_command : "true");
	c = xcalloc(opt_clients, sizeof(*c));
	for (i = 0; i < opt_clients; i++)
		conn_init(&c[i], path, body);
	bench_rps(c, opt_clients, sizeof(*c), worker_warm, worker_call,
		  opt_duration_ms, &r);
	for (i = 0; i < opt_clients; i++) {
		connects += c[i].connects;
		conn_release(&c[i]);
	}
	printf("bench=rps target=%s clients=%d seconds=%.3f requests=%zu"
	       " errors=%" PRIu64 " connects=%ld rps=%.1f",
	       target_name(), opt_clients, r.secs, r.all.nr, r.errors, connects,
	       r.secs > 0 ? (double)r.all.nr / r.secs : 0.0);
	bench_print_stats(&r.all, "");
	printf("\n");
	bench_samples_release(&r.all);
	free(c);
	free(body);
	return r.errors ? 1 : 0;
}

/*
 * The event stream of POST /v1/exec (spec "exec-stream"): one JSON
 * object per line. Lines are scanned without building a JSON tree
 * (a tree per 64 KiB event would make the client the bottleneck);
 * only the final "exit" event goes through jansson.
 */
struct stream {
	struct strbuf line;  /* a line split across write callbacks */
	uint64_t body_bytes; /* HTTP body bytes as received */
	uint64_t out_bytes;  /* decoded stdout bytes (data or b64) */
	uint64_t err_bytes;  /* decoded stderr bytes */
	uint64_t events;
	uint64_t bad_lines;
	uint64_t first_byte_ns;
	int exit_seen;
	int exit_code;
	char reason[32];
};

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++;
	return p;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Scan a JSON string whose opening quote is just before p. Stores the
 * length of its UTF-8 decoding in *decoded and returns the position
 * after the closing quote, or NULL when malformed.
 */
static const char *scan_string(const char *p, const char *end,
			       uint64_t *decoded)
{
	uint64_t n = 0;

	/*
	 * memchr finds the candidate closing quote and each backslash
	 * before it (vectorised in glibc): much faster than a byte loop
	 * over megabytes of "data". An escaped quote moves the candidate.
	 */
	for (;;) {
		const char *quote = memchr(p, '"', end - p);

		if (!quote)
			return NULL;
		while (p <= quote) {
			const char *bs = memchr(p, '\\', quote - p);

			if (!bs) {
				n += quote - p;
				*decoded = n;
				return quote + 1;
			}
			n += bs - p;
			if (bs + 1 >= end)
				return NULL;
			if (bs[1] == 'u') {
				unsigned cp = 0;
				int i;

				if (bs + 6 > end)
					return NULL;
				for (i = 2; i < 6; i++) {
					int h = hexval((unsigned char)bs[i]);

					if (h < 0)
						return NULL;
					cp = cp << 4 | (unsigned)h;
				}
				if (cp < 0x80)
					n += 1;
				else if (cp < 0x800)
					n += 2;
				else if (cp >= 0xd800 && cp < 0xdc00)
					n += 4; /* pair; low half adds 0 */
				else if (cp < 0xdc00 || cp >= 0xe000)
					n += 3;
				p = bs + 6;
			} else {
				n += 1;
				p = bs + 2;
			}
		}
		/* the escape just handled ended past the candidate quote */
	}
}

/* Skip a non-string JSON value (number, literal, object, array). */
static const char *skip_value(const char *p, const char *end)
{
	int depth = 0;

	while (p < end) {
		uint64_t ignored;

		switch (*p) {
		case '"':
			p = scan_string(p + 1, end, &ignored);
			if (!p)
				return NULL;
			continue;
		case '{':
		case '[':
			depth++;
			break;
		case '}':
		case ']':
			if (!depth)
				return p;
			depth--;
			break;
		case ',':
			if (!depth)
				return p;
			break;
		}
		p++;
	}
	return depth ? NULL : p;
}

static void stream_exit_event(struct stream *st, const char *p, size_t len)
{
	json_error_t jerr;
	json_t *root = json_loadb(p, len, 0, &jerr);
	json_t *v;

	st->exit_seen = 1;
	st->exit_code = -1;
	if (!root) {
		st->bad_lines++;
		error("bad exit event: %s", jerr.text);
		return;
	}
	v = json_object_get(root, "exit_code");
	if (json_is_integer(v))
		st->exit_code = (int)json_integer_value(v);
	v = json_object_get(root, "reason");
	if (json_is_string(v))
		xsnprintf(st->reason, sizeof(st->reason), "%.31s",
			  json_string_value(v));
	json_decref(root);
}

/* Handle one event line (without its newline). */
static void stream_line(struct stream *st, const char *p, size_t len)
{
	const char *start = p, *end = p + len;
	char type[16] = "";
	uint64_t data = 0, b64 = 0;

	p = skip_ws(p, end);
	if (p == end)
		return; /* blank line: tolerated */
	if (*p++ != '{')
		goto bad;
	for (;;) {
		const char *key;
		size_t keylen;
		uint64_t n;

		p = skip_ws(p, end);
		if (p < end && *p == '}')
			break;
		if (p >= end || *p != '"')
			goto bad;
		key = p + 1;
		p = scan_string(p + 1, end, &n);
		if (!p)
			goto bad;
		keylen = p - 1 - key;
		p = skip_ws(p, end);
		if (p >= end || *p++ != ':')
			goto bad;
		p = skip_ws(p, end);
		if (p < end && *p == '"') {
			const char *val = p + 1;

			p = scan_string(p + 1, end, &n);
			if (!p)
				goto bad;
			if (keylen == 4 && !memcmp(key, "type", 4)) {
				size_t vlen = p - 1 - val;

				if (vlen >= sizeof(type))
					vlen = sizeof(type) - 1;
				memcpy(type, val, vlen);
				type[vlen] = '\0';
			} else if (keylen == 4 && !memcmp(key, "data", 4)) {
				data += n;
			} else if (keylen == 3 && !memcmp(key, "b64", 3)) {
				uint64_t pad = 0;

				if (n && p[-2] == '=')
					pad++;
				if (n > 1 && p[-3] == '=')
					pad++;
				b64 += n / 4 * 3 - pad;
			}
		} else {
			p = skip_value(p, end);
			if (!p)
				goto bad;
		}
		p = skip_ws(p, end);
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end && *p == '}')
			break;
		goto bad;
	}
	st->events++;
	if (!strcmp(type, "stdout"))
		st->out_bytes += data + b64;
	else if (!strcmp(type, "stderr"))
		st->err_bytes += data + b64;
	else if (!strcmp(type, "exit"))
		stream_exit_event(st, start, len);
	return;
bad:
	st->bad_lines++;
	if (st->bad_lines <= 3)
		error("bad event line: %.120s", start);
}

static size_t stream_cb(char *ptr, size_t size, size_t nmemb, void *data)
{
	struct stream *st = data;
	size_t len = size * nmemb;
	const char *p = ptr, *end = ptr + len;

	if (!st->first_byte_ns)
		st->first_byte_ns = monotonic_ns();
	st->body_bytes += len;
	if (!opt_parse)
		return len;
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);

		if (!nl) {
			strbuf_add(&st->line, p, end - p);
			break;
		}
		if (st->line.len) {
			strbuf_add(&st->line, p, nl - p);
			stream_line(st, st->line.buf, st->line.len);
			strbuf_reset(&st->line);
		} else {
			stream_line(st, p, nl - p);
		}
		p = nl + 1;
	}
	return len;
}

static int cmd_stream(int argc, const char **argv)
{
	struct strbuf cmd = STRBUF_INIT;
	struct stream st = { STRBUF_INIT };
	struct conn c;
	char *body;
	uint64_t t0, t1, counted;
	CURLcode rc;
	long status = 0;
	double secs;
	int ret = 0;

	if (need_target())
		return 129;
	if (opt_command) {
		strbuf_addstr(&cmd, opt_command);
	} else {
		if (opt_bytes < 0)
			opt_bytes = 1073741824;
		/* 64-byte lines of printable text, produced fast */
		strbuf_addstr(&cmd, "yes ");
		for (int i = 0; i < 63; i++)
			strbuf_addch(&cmd, 'a');
		strbuf_addf(&cmd, " | head -c %" PRId64, opt_bytes);
	}
	body = command_body(cmd.buf);
	conn_init(&c, opt_path ? opt_path : "/v1/exec", body);
	curl_easy_setopt(c.curl, CURLOPT_WRITEFUNCTION, stream_cb);
	curl_easy_setopt(c.curl, CURLOPT_WRITEDATA, &st);
	curl_easy_setopt(c.curl, CURLOPT_BUFFERSIZE, 512L * 1024);
	curl_easy_setopt(c.curl, CURLOPT_TIMEOUT_MS, (long)opt_timeout_ms);
	t0 = monotonic_ns();
	rc = curl_easy_perform(c.curl);
	t1 = monotonic_ns();
	if (rc != CURLE_OK)
		ret = error("%s: %s", c.url.buf,
			    c.errbuf[0] ? c.errbuf : curl_easy_strerror(rc));
	curl_easy_getinfo(c.curl, CURLINFO_RESPONSE_CODE, &status);
	if (!ret && status != 200)
		ret = error("%s: HTTP %ld", c.url.buf, status);
	if (st.line.len)
		stream_line(&st, st.line.buf, st.line.len);
	if (!ret && opt_parse) {
		if (!st.exit_seen)
			ret = error("stream ended without an exit event");
		else if (st.exit_code)
			ret = error("command exited with %d", st.exit_code);
		else if (st.bad_lines)
			ret = error("%" PRIu64 " malformed event lines",
				    st.bad_lines);
		else if (opt_bytes >= 0 && st.out_bytes != (uint64_t)opt_bytes)
			ret = error("got %" PRIu64 " stdout bytes, expected"
				    " %" PRId64,
				    st.out_bytes, opt_bytes);
	}
	secs = (double)(t1 - t0) / 1e9;
	counted = opt_parse ? st.out_bytes + st.err_bytes : st.body_bytes;
	printf("bench=stream target=%s parse=%d status=%ld errors=%d"
	       " seconds=%.3f body_bytes=%" PRIu64 " stdout_bytes=%" PRIu64
	       " stderr_bytes=%" PRIu64 " events=%" PRIu64
	       " exit_code=%d reason=%s ttfb_ms=%.1f"
	       " body_mb_per_s=%.1f mb_per_s=%.1f\n",
	       target_name(), opt_parse, status, ret ? 1 : 0, secs,
	       st.body_bytes, st.out_bytes, st.err_bytes, st.events,
	       st.exit_code, st.reason[0] ? st.reason : "-",
	       st.first_byte_ns ? (double)(st.first_byte_ns - t0) / 1e6 : 0.0,
	       secs > 0 ? (double)st.body_bytes / secs / 1e6 : 0.0,
	       secs > 0 ? (double)counted / secs / 1e6 : 0.0);
	conn_release(&c);
	strbuf_release(&st.line);
	strbuf_release(&cmd);
	free(body);
	return ret ? 1 : 0;
}

static int cmd_wait(int argc, const char **argv)
{
	uint64_t t0 = monotonic_ns(), deadline;
	struct conn c;
	int ret = -1;

	if (need_target())
		return 129;
	deadline = t0 + (uint64_t)opt_timeout_ms * 1000000u;
	conn_init(&c, opt_path ? opt_path : "/", NULL);
	curl_easy_setopt(c.curl, CURLOPT_TIMEOUT_MS, 2000L);
	while (monotonic_ns() < deadline) {
		struct timespec ts = { 0, 20 * 1000000 };
		long status = 0;

		strbuf_reset(&c.body);
		if (curl_easy_perform(c.curl) == CURLE_OK) {
			curl_easy_getinfo(c.curl, CURLINFO_RESPONSE_CODE,
					  &status);
			if (status == 200) {
				ret = 0;
				break;
			}
		}
		nanosleep(&ts, NULL);
	}
	if (ret) {
		error("server at %s not ready after %" PRId64 " ms",
		      opt_unix ? opt_unix : opt_tcp, opt_timeout_ms);
	} else {
		/* GET / of gosbx-runtime names the server and its version */
		json_t *root = json_loadb(c.body.buf, c.body.len, 0, NULL);
		const char *server =
			json_string_value(json_object_get(root, "server"));
		const char *version =
			json_string_value(json_object_get(root, "version"));

		printf("bench=wait target=%s ready_ms=%.1f server=%s"
		       " version=%s\n",
		       target_name(), (double)(monotonic_ns() - t0) / 1e6,
		       server && !strpbrk(server, " =") ? server : "-",
		       version && !strpbrk(version, " =") ? version : "-");
		json_decref(root);
	}
	conn_release(&c);
	return ret ? 1 : 0;
}

static int cmd_free_port(int argc, const char **argv)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		die_errno("socket");
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		die_errno("cannot bind a loopback port");
	printf("%d\n", ntohs(sa.sin_port));
	close(fd);
	return 0;
}

static const struct bench_cmd subcommands[] = {
	{ "direct", cmd_direct, 0 },   { "free-port", cmd_free_port, 0 },
	{ "latency", cmd_latency, 0 }, { "rps", cmd_rps, 0 },
	{ "stream", cmd_stream, 0 },   { "wait", cmd_wait, 0 },
};

int main(int argc, const char **argv)
{
	int ret;

	progname = "bench-runtime";
	if (curl_global_init(CURL_GLOBAL_DEFAULT))
		die("curl_global_init failed");
	ret = bench_main(argc, argv, subcommands, ARRAY_SIZE(subcommands),
			 bench_usage, bench_options);
	curl_global_cleanup();
	strvec_clear(&opt_headers);
	return ret;
}

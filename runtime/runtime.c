/*
 * gosbx-runtime: the HTTP server that runs inside each sandbox. It
 * speaks the upstream go-runtime-sandbox contract unchanged and adds
 * the extensions of Documentation/protocol/runtime-api.md, advertised in GET /.
 *
 * Concurrency model: libmicrohttpd with one thread per connection, so
 * a handler may block on its command while other connections are
 * served; commands run in their own process groups, each below a shim
 * that can kill everything the command started (lib/exec.c), forked
 * by a spawner started before the first thread.
 *
 * Who may talk to us: the local backend of gosbx binds and listens on
 * the socket itself, in a claim directory the sandbox cannot see, and
 * hands it down (--addr=fd:N); we make ourselves non-dumpable at once
 * (PR_SET_DUMPABLE 0), so code in the sandbox, of the same uid, cannot
 * take that socket (or any descriptor of ours) through /proc or
 * pidfd_getfd(). So every request comes from the owner, and only the
 * owner's requests count as activity for --idle-timeout. --owner-fd
 * ties our life to the owner's process: EOF on that pipe (the owner
 * exited or was killed) ends the server, and with it the sandbox.
 */
#include "compat.h"
#include "dir.h"
#include "exec.h"
#include "http-checks.h"
#include "http-guard.h"
#include "json.h"
#include "listen.h"
#include "log.h"
#include "parse-options.h"
#include "runtime.h"
#include "strbuf.h"
#include "strvec.h"
#include "usage.h"

#include <ctype.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>

struct runtime rt;
static atomic_int inflight;
/* connections that have not sent a request head yet (http-guard.h) */
static struct http_guard *guard;
/* monotonic ms of the last request start or end (idle timeout) */
static atomic_uint_fast64_t last_activity_ms;

/*
 * Set by unescape_url() when the request's path held "%00": the
 * decoded path would be cut at the NUL, so the request is refused
 * instead (thread per connection: the handler runs in this thread).
 */
static __thread int url_had_nul;

/*
 * Who else may talk to us (lib/http-checks.h): on a TCP listener any
 * program of the machine, and through the browser any web page the
 * user has open. The checks of check_web().
 */
static struct {
	struct strvec allow_hosts; /* --allow-host, lower case */
	struct strbuf token;	   /* --token-file; empty: none */
} web = { STRVEC_INIT, STRBUF_INIT };

/*
 * What a listener serves, the cls of its daemon: the runtime's API on
 * --addr, the sandboxd REST API (runtime-sandboxd.c) on --sandboxd-rest.
 */
struct listener {
	int sandboxd;
	int tcp; /* a TCP listener: Host is checked */
};
static struct listener main_listener, sandboxd_listener = { 1, 0 };

/* Percent-decoding of the path (RFC 3986 section 2.1), refusing %00. */
static size_t unescape_url(void *cls, struct MHD_Connection *c, char *s)
{
	char *in = s, *out = s;

	while (*in) {
		if (in[0] == '%' && isxdigit((unsigned char)in[1]) &&
		    isxdigit((unsigned char)in[2])) {
			char hex[3] = { in[1], in[2], 0 };
			char v = (char)strtol(hex, NULL, 16);
			if (!v) {
				url_had_nul = 1;
				v = '?';
			}
			*out++ = v;
			in += 3;
			continue;
		}
		*out++ = *in++;
	}
	*out = '\0';
	return out - s;
}

static const char *const runtime_usage[] = {
	"gosbx-runtime [--addr=<addr>] [--workdir=<dir>] [--log-level=<level>] "
	"[--shutdown-grace=<duration>]",
	"              [--idle-timeout=<duration> [--expired-file=<path>] "
	"[--expired-fd=<n>]] [--heartbeat=<duration>]",
	"              [--owner-fd=<n>] [--ready-fd=<n>] "
	"[--allow-host=<names>] [--token-file=<path>]",
	"              [--sandboxd-rest[=<addr>]] [--sandboxd-grpc[=<addr>]]",
	NULL,
};

int connection_fd(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

	return ci ? ci->connect_fd : -1;
}

enum MHD_Result reply(struct MHD_Connection *c, struct request *r,
		      unsigned status, struct MHD_Response *resp)
{
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	r->status = status;
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

enum MHD_Result reply_json(struct MHD_Connection *c, struct request *r,
			   unsigned status, struct strbuf *body)
{
	size_t len;
	char *buf = strbuf_detach(body, &len);
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		len, buf, MHD_RESPMEM_MUST_FREE);

	if (!resp) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", "application/json");
	return reply(c, r, status, resp);
}

enum MHD_Result reply_error(struct MHD_Connection *c, struct request *r,
			    unsigned status, const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT, body = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	strbuf_addstr(&body, "{\"detail\":");
	json_add_string(&body, msg.buf, msg.len);
	strbuf_addch(&body, '}');
	strbuf_release(&msg);
	return reply_json(c, r, status, &body);
}

/*
 * GET /v1/logs[?since=N] (extension `logs`): the last lines of our own
 * log, kept by log_ring_enable(), as {"from":F,"next":N,"log":"..."}.
 */
static enum MHD_Result handle_logs(struct MHD_Connection *c, struct request *r)
{
	const char *arg =
		MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "since");
	struct strbuf body = STRBUF_INIT, text = STRBUF_INIT;
	uint64_t since = 0, from, next;
	char *end;

	if (arg) {
		errno = 0;
		since = strtoull(arg, &end, 10);
		if (!*arg || *end || errno || *arg == '-')
			return reply_error(c, r, 400,
					   "since: not a byte offset");
	}
	log_ring_read(since, &text, &from, &next);
	strbuf_addf(&body,
		    "{\"from\":%" PRIu64 ",\"next\":%" PRIu64 ",\"log\":", from,
		    next);
	json_add_string(&body, text.buf, text.len);
	strbuf_addch(&body, '}');
	strbuf_release(&text);
	return reply_json(c, r, 200, &body);
}

static enum MHD_Result handle_root(struct MHD_Connection *c, struct request *r)
{
	struct strbuf body = STRBUF_INIT;

	strbuf_addstr(&body, "{\"status\":\"ok\",\"server\":\"gosbx-runtime\","
			     "\"version\":\"" GOSBX_VERSION "\",\"features\":"
			     "[\"archive\",\"exec-cancel\",\"exec-input\","
			     "\"exec-interactive\",\"exec-options\","
			     "\"exec-stream\",\"files\",\"jobs\",\"logs\","
			     "\"metrics\"],"
			     "\"heartbeat_ms\":");
	strbuf_addf(&body, "%lld}", (long long)rt.heartbeat_ms);
	return reply_json(c, r, 200, &body);
}

/*
 * Decide the route from the method and the URL; on a miss, the status
 * to answer (404 or 405) goes into r->status.
 */
static void route_request(struct request *r, const char *method,
			  const char *url)
{
	int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	int post = !strcmp(method, "POST");
	const char *rest;
	struct {
		const char *path;
		int prefix; /* also matches path + "/..." */
		int ok;
		enum route route;
	} table[] = {
		{ "/", 0, get, R_ROOT },
		{ "/execute", 0, post, R_EXECUTE },
		{ "/v1/exec", 0, post, R_EXEC_STREAM },
		{ "/v1/exec", 1, !strcmp(method, "DELETE"), R_EXEC_CANCEL },
		{ "/v1/exec", 0, get, R_EXEC_WS },
		{ "/v1/exec", 1, post, R_EXEC_INPUT },
		{ "/upload", 0, post, R_UPLOAD },
		{ "/download", 1, get, R_DOWNLOAD },
		{ "/list", 1, get, R_LIST },
		{ "/exists", 1, get, R_EXISTS },
		{ "/v1/archive", 0, post, R_ARCHIVE_IN },
		{ "/v1/archive", 0, get, R_ARCHIVE_OUT },
		{ "/v1/metrics", 0, get, R_METRICS },
		{ "/v1/logs", 0, get, R_LOGS },
		{ "/v1/files", 1, !strcmp(method, "PUT"), R_FILE_PUT },
		{ "/v1/files", 1, !strcmp(method, "DELETE"), R_FILE_DELETE },
	};
	int path_known = 0;

	r->route = R_NONE;
	if (jobs_route(method, url, r)) {
		if (!r->status)
			r->route = R_JOBS;
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(table); i++) {
		int match = !strcmp(url, table[i].path) ||
			    (table[i].prefix &&
			     skip_prefix(url, table[i].path, &rest) &&
			     *rest == '/');
		if (!match)
			continue;
		path_known = 1;
		if (table[i].ok) {
			r->route = table[i].route;
			return;
		}
	}
	r->status = path_known ? 405 : 404;
}

/* The path after a route prefix such as "/download". */
static const char *route_path(const char *url, const char *prefix)
{
	const char *rest = url;

	skip_prefix(url, prefix, &rest);
	return rest;
}

/*
 * A body type that a web page can send without a CORS preflight (WHATWG
 * Fetch: CORS-safelisted Content-Type), or none at all: such a body is
 * not one of our clients'.
 */
static int simple_body_type(const char *ct)
{
	return !ct || !*ct || http_content_type_is(ct, "text/plain") ||
	       http_content_type_is(ct, "application/x-www-form-urlencoded") ||
	       http_content_type_is(ct, "multipart/form-data");
}

/*
 * Refuse what a web page could send (lib/http-checks.h): an Origin not
 * of this machine, on a TCP listener a Host that is neither an address
 * nor an allowed name (DNS rebinding), a missing bearer token (with
 * --token-file), a command body that is not application/json, an
 * archive or input body of a type a page can send. Returns 0, or the
 * HTTP status with the message in msg.
 */
static unsigned check_web(struct MHD_Connection *c, const struct request *r,
			  struct strbuf *msg)
{
	const char *origin =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	const char *host =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	const char *ct =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");

	if (origin && !http_origin_local(origin)) {
		strbuf_addf(msg,
			    "origin '%.200s' is not allowed: "
			    "gosbx-runtime takes no requests from web pages",
			    origin);
		return 403;
	}
	if (r->tcp && !http_host_allowed(host, web.allow_hosts.v)) {
		strbuf_addf(msg,
			    "host '%.200s' is not allowed: use an "
			    "address, or start gosbx-runtime with "
			    "--allow-host=<name>",
			    host);
		return 403;
	}
	if (web.token.len &&
	    !http_bearer_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							"Authorization"),
			    web.token.buf)) {
		strbuf_addstr(msg, "unauthorized: Authorization: Bearer "
				   "<token> is required");
		return 401;
	}
	if ((r->route == R_EXECUTE || r->route == R_EXEC_STREAM) &&
	    !http_content_type_is(ct, "application/json")) {
		strbuf_addstr(msg, "Content-Type must be application/json");
		return 415;
	}
	if (r->route == R_JOBS && jobs_op_takes_json(r) &&
	    !http_content_type_is(ct, "application/json")) {
		strbuf_addstr(msg, "Content-Type must be application/json");
		return 415;
	}
	if (r->route == R_JOBS && jobs_op_takes_stdin(r) &&
	    simple_body_type(ct)) {
		strbuf_addstr(msg, "Content-Type must be "
				   "application/octet-stream");
		return 415;
	}
	if ((r->route == R_ARCHIVE_IN || r->route == R_EXEC_INPUT) &&
	    simple_body_type(ct)) {
		strbuf_addf(msg, "Content-Type must be %s",
			    r->route == R_ARCHIVE_IN
				    ? "application/x-tar (or gzip, zstd)"
				    : "application/octet-stream (stdin) or "
				      "application/json (control)");
		return 415;
	}
	return 0;
}

static int wants_spool(enum route route)
{
	return route == R_UPLOAD || route == R_ARCHIVE_IN ||
	       route == R_FILE_PUT || route == R_SBX_PUT;
}

static enum MHD_Result dispatch(struct MHD_Connection *c, struct request *r)
{
	if (r->sandboxd)
		return handle_sandboxd(c, r);
	switch (r->route) {
	case R_NONE:
		if (r->bad_path)
			return reply_error(c, r, 400,
					   "path must not contain NUL bytes");
		return reply_error(c, r, r->status,
				   r->status == 405 ? "method not allowed"
						    : "not found");
	case R_ROOT:
		return handle_root(c, r);
	case R_EXECUTE:
		return handle_execute(c, r);
	case R_EXEC_STREAM:
		return handle_exec_stream(c, r);
	case R_UPLOAD:
		return handle_upload_done(c, r);
	case R_DOWNLOAD:
		return handle_download(c, r, route_path(r->url, "/download"));
	case R_LIST:
		return handle_list(c, r, route_path(r->url, "/list"));
	case R_EXISTS:
		return handle_exists(c, r, route_path(r->url, "/exists"));
	case R_ARCHIVE_IN:
		return handle_archive_in(c, r);
	case R_ARCHIVE_OUT:
		return handle_archive_out(c, r);
	case R_METRICS:
		return handle_metrics(c, r);
	case R_LOGS:
		return handle_logs(c, r);
	case R_FILE_PUT:
		return handle_file_put(c, r, route_path(r->url, "/v1/files"));
	case R_FILE_DELETE:
		return handle_file_delete(c, r,
					  route_path(r->url, "/v1/files"));
	case R_EXEC_CANCEL:
		return handle_exec_cancel(c, r, route_path(r->url, "/v1/exec"));
	case R_EXEC_WS:
		return handle_exec_ws(c, r);
	case R_EXEC_INPUT:
		return handle_exec_input(c, r);
	case R_JOBS:
		return handle_jobs(c, r);
	default: /* the sandboxd routes, handled above */
		break;
	}
	return MHD_NO;
}

/*
 * check_web() on a new request: on a refusal, answer at once (the body,
 * if any, is never read: libmicrohttpd closes the connection after the
 * answer) and return 1.
 */
static int check_web_or_reply(struct MHD_Connection *c, struct request *r)
{
	struct strbuf msg = STRBUF_INIT, body = STRBUF_INIT;
	unsigned status = check_web(c, r, &msg);
	struct MHD_Response *resp;
	size_t len;
	char *buf;

	if (!status)
		return 0;
	r->route = R_NONE;
	r->refused = 1;
	if (r->sandboxd) {
		sandboxd_error_body(&body, status, msg.buf);
	} else {
		strbuf_addstr(&body, "{\"detail\":");
		json_add_string(&body, msg.buf, msg.len);
		strbuf_addch(&body, '}');
	}
	strbuf_release(&msg);
	buf = strbuf_detach(&body, &len);
	resp = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(buf);
		return 1;
	}
	MHD_add_response_header(resp, "Content-Type", "application/json");
	/* RFC 6750 section 3: the scheme a 401 asks for */
	if (status == 401)
		MHD_add_response_header(resp, "WWW-Authenticate", "Bearer");
	reply(c, r, status, resp);
	return 1;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c,
			       const char *url, const char *method,
			       const char *version, const char *upload_data,
			       size_t *upload_data_size, void **con_cls)
{
	const struct listener *l = cls;
	struct request *r = *con_cls;

	if (!r) {
		r = xcalloc(1, sizeof(*r));
		r->sandboxd = l->sandboxd;
		r->tcp = l->tcp;
		r->start_us = monotonic_us();
		r->url = xstrdup(url);
		snprintf(r->method, sizeof(r->method), "%s", method);
		r->spool_fd = -1;
		strbuf_init(&r->body, 0);
		if (r->sandboxd)
			sandboxd_route(r, method, r->url);
		else
			route_request(r, method, r->url);
		if (url_had_nul) {
			url_had_nul = 0;
			r->route = R_NONE;
			r->status = 400;
			r->bad_path = 1;
		}
		*con_cls = r;
		atomic_fetch_add(&inflight, 1);
		atomic_store(&last_activity_ms, monotonic_ms());
		if (check_web_or_reply(c, r))
			return MHD_YES;
		if (wants_spool(r->route) && upload_begin(c, r) < 0)
			r->write_failed = 1;
		if (r->route == R_EXEC_INPUT)
			exec_input_begin(c, r);
		if (r->route == R_JOBS)
			jobs_begin(c, r);
		return MHD_YES;
	}
	if (r->refused) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (*upload_data_size) {
		size_t n = *upload_data_size;

		*upload_data_size = 0;
		/* a body that moves keeps its connection (http-guard.h) */
		http_guard_progress(guard, c);
		if (r->route == R_EXECUTE || r->route == R_EXEC_STREAM) {
			if (r->body.len + n > UPSTREAM_JSON_LIMIT)
				r->too_large = 1;
			else
				strbuf_add(&r->body, upload_data, n);
		} else if (wants_spool(r->route)) {
			upload_take(r, upload_data, n);
		} else if (r->route == R_EXEC_INPUT) {
			exec_input_take(r, upload_data, n);
		} else if (r->route == R_JOBS) {
			jobs_take(r, upload_data, n);
		}
		return MHD_YES;
	}
	/* a whole request: no head and body deadline any more */
	http_guard_trust(guard, c);
	return dispatch(c, r);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct request *r = *con_cls;
	struct log_line l;

	if (!r)
		return;
	if (log_begin(&l, LOG_INFO, "request")) {
		log_str(&l, "method", r->method);
		log_str(&l, "path", r->url);
		log_int(&l, "status", r->status);
		log_int(&l, "duration_ms",
			(int64_t)((monotonic_us() - r->start_us) / 1000));
		log_end(&l);
	}
	request_release_spool(r);
	exec_input_release(r);
	jobs_release(r);
	strbuf_release(&r->body);
	free(r->url);
	free(r);
	*con_cls = NULL;
	atomic_store(&last_activity_ms, monotonic_ms());
	atomic_fetch_sub(&inflight, 1);
}

/*
 * As pid 1 of the sandbox's pid namespace (the local backend, a pod's
 * container), a signal whose sender has a pid here came from code in
 * the sandbox (`kill -TERM 1`): the sandbox would end itself and every
 * file of it with the owner's session. Whoever owns us signals from
 * outside the namespace (the kernel gives such a sender pid 0: gosbx,
 * the kubelet), or closes --owner-fd. Not pid 1: anyone who may signal
 * us is trusted.
 */
static int from_sandbox(const struct signalfd_siginfo *si)
{
	return getpid() == 1 && si->ssi_pid != 0;
}

/* SIGABRT handler of pid 1 (see main): end as abort() would. */
static void exit_on_abort(int sig)
{
	_exit(128 + sig);
}

/* True when nothing happened for idle_ms and nothing is running. */
static int idle_expired(int64_t idle_ms)
{
	if (idle_ms <= 0 || atomic_load(&inflight) > 0 ||
	    exec_running_count() > 0)
		return 0;
	return monotonic_ms() - atomic_load(&last_activity_ms) >=
	       (uint64_t)idle_ms;
}

static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_vaddf(&sb, fmt, ap);
	strbuf_rtrim(&sb);
	log_msg(LOG_DEBUG, "libmicrohttpd", "detail", sb.buf);
	strbuf_release(&sb);
}

static int prepare_workdir(const char *dir)
{
	struct strbuf probe = STRBUF_INIT;
	int fd;

	if (mkdir_p(dir, 0755) < 0) {
		struct log_line l;
		if (log_begin(&l, LOG_ERROR, "workdir not writable")) {
			log_str(&l, "workdir", dir);
			log_str(&l, "error", strerror(errno));
			log_end(&l);
		}
		return -1;
	}
	strbuf_addf(&probe, "%s/.gosbx-probe-%d", dir, (int)getpid());
	fd = open(probe.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, "ok", 2) != 2) {
		struct log_line l;
		if (log_begin(&l, LOG_ERROR, "workdir not writable")) {
			log_str(&l, "workdir", dir);
			log_str(&l, "error", strerror(errno));
			log_end(&l);
		}
		if (fd >= 0)
			close(fd);
		unlink(probe.buf);
		strbuf_release(&probe);
		return -1;
	}
	close(fd);
	unlink(probe.buf);
	strbuf_release(&probe);
	return 0;
}

/*
 * A descriptor given as --<name>-fd=N: -1 (unset) or an open one, made
 * close-on-exec. Returns 0, or -1 after logging why.
 */
static int check_fd_option(const char *name, int fd)
{
	char num[16];

	if (fd == -1)
		return 0;
	xsnprintf(num, sizeof(num), "%d", fd);
	if (fd < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		struct log_line l;
		if (log_begin(&l, LOG_ERROR, "bad descriptor option")) {
			log_str(&l, "option", name);
			log_str(&l, "fd", num);
			log_str(&l, "error",
				fd < 0 ? "negative" : strerror(errno));
			log_end(&l);
		}
		return -1;
	}
	return 0;
}

/* One line into a descriptor handed to us (ready, expired), then close. */
static void tell_fd(int *fd, const char *line)
{
	if (*fd < 0)
		return;
	(void)!write_in_full(*fd, line, strlen(line));
	close(*fd);
	*fd = -1;
}

/* Stop taking connections on d (NULL: none). */
static void quiesce(struct MHD_Daemon *d)
{
	MHD_socket lfd = d ? MHD_quiesce_daemon(d) : MHD_INVALID_SOCKET;

	if (lfd != MHD_INVALID_SOCKET)
		close(lfd);
}

/* d: the runtime's API; sd: the sandboxd listener, or NULL */
static void shutdown_server(struct MHD_Daemon *d, struct MHD_Daemon *sd,
			    int64_t grace_ms)
{
	uint64_t deadline = monotonic_ms() + grace_ms;

	quiesce(d);
	quiesce(sd);
	while (atomic_load(&inflight) > 0 && monotonic_ms() < deadline)
		usleep(10000);
	if (exec_kill_all() > 0)
		log_msg(LOG_WARN, "shutdown: killed running commands", NULL,
			NULL);
	interactive_shutdown(grace_ms);
	MHD_stop_daemon(d);
	if (sd)
		MHD_stop_daemon(sd);
	jobs_shutdown();
}

extern char **environ;

/*
 * The workload finds sandboxd by the variables SANDBOXD_REST_ADDR and
 * SANDBOXD_GRPC_ADDR (KEP-539.2, "Endpoint discovery"; the SDKs fall
 * back to the seed's API without them). Set them to the address each
 * TCP listener got (rest, grpc: NULL when not serving), so that every
 * command we start, and its SDK, finds us; an address given as
 * ":port" or with port 0 is told as the client dials it
 * (listen_connect_address()). A unix socket's variable is left as it
 * is: the SDKs dial host:port only.
 *
 * Other threads may already be reading environ (a request that came
 * before this; write_request() in lib/exec.c): the new array replaces
 * the old in one store and the old one is never freed.
 */
static void export_sandboxd_addrs(const struct listen_info *rest,
				  const struct listen_info *grpc)
{
	static const char *const names[] = { "SANDBOXD_REST_ADDR",
					     "SANDBOXD_GRPC_ADDR" };
	const struct listen_info *li[] = { rest, grpc };
	struct strvec add = STRVEC_INIT, env = STRVEC_INIT;

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		struct strbuf v = STRBUF_INIT;

		if (!li[i] || li[i]->ss.ss_family == AF_UNIX)
			continue;
		strbuf_addf(&v, "%s=", names[i]);
		listen_connect_address(li[i], &v);
		strvec_push(&add, v.buf);
		strbuf_release(&v);
	}
	if (!add.nr)
		return;
	for (char **e = environ; *e; e++) {
		size_t i;

		for (i = 0; i < add.nr; i++) {
			const char *eq = strchr(add.v[i], '=');

			if (!strncmp(*e, add.v[i], eq - add.v[i] + 1))
				break;
		}
		if (i == add.nr)
			strvec_push(&env, *e);
	}
	for (size_t i = 0; i < add.nr; i++)
		strvec_push(&env, add.v[i]);
	strvec_clear(&add);
	/* reachable through environ until exit, as glibc's own copy */
	__atomic_store_n(&environ, (char **)strvec_detach(&env),
			 __ATOMIC_RELEASE);
}

/*
 * Listen on addr and serve what l says, one thread a connection. The
 * daemon, or NULL after logging why. *li receives the socket's address.
 */
static struct MHD_Daemon *start_daemon(const char *addr, struct listener *l,
				       struct listen_info *li)
{
	struct MHD_Daemon *d;
	int lfd = listen_address(addr, NULL, 256, li);

	if (lfd < 0) {
		log_msg(LOG_ERROR, "cannot listen", "addr", addr);
		return NULL;
	}
	l->tcp = li->ss.ss_family == AF_INET || li->ss.ss_family == AF_INET6;
	d = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD |
			MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
			MHD_USE_ERROR_LOG | MHD_ALLOW_UPGRADE,
		0, NULL, NULL, handler, l, MHD_OPTION_LISTEN_SOCKET, lfd,
		MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, NULL,
		MHD_OPTION_UNESCAPE_CALLBACK, unescape_url, NULL,
		MHD_OPTION_NOTIFY_CONNECTION, http_guard_notify, guard,
		MHD_OPTION_CONNECTION_TIMEOUT, http_guard_head_timeout(guard),
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)1000,
		MHD_OPTION_THREAD_STACK_SIZE, (size_t)(512 * 1024),
		MHD_OPTION_END);
	if (!d) {
		close(lfd);
		log_msg(LOG_ERROR, "cannot start the HTTP server", "addr",
			addr);
		return NULL;
	}
	{
		struct log_line ll;
		if (log_begin(&ll, LOG_INFO,
			      l->sandboxd ? "sandboxd listening"
					  : "server listening")) {
			log_str(&ll, "addr", addr);
			log_str(&ll, "workdir", rt.root);
			log_end(&ll);
		}
	}
	return d;
}

/*
 * --sandboxd-rest takes its value only as --sandboxd-rest=<addr>; given
 * alone it means upstream sandboxd's default address (cmd/sandboxd).
 * parse_options() has no optional values, so the bare form is rewritten
 * here, in a copy of argv that the caller frees (the strings are not
 * copied).
 */
static const char **default_sandboxd_rest(int argc, const char **argv)
{
	const char **v = xcalloc(argc + 1, sizeof(*v));

	for (int i = 0; i < argc; i++) {
		v[i] = argv[i];
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--sandboxd-rest"))
			v[i] = "--sandboxd-rest=127.0.0.1:8080";
		if (!strcmp(argv[i], "--sandboxd-grpc"))
			v[i] = "--sandboxd-grpc=127.0.0.1:9090";
	}
	for (int i = 0; i < argc; i++)
		if (!v[i])
			v[i] = argv[i];
	return v;
}

int main(int argc, const char **argv)
{
	const char *addr = "127.0.0.1:8888", *workdir = "/app", *level = NULL;
	int64_t grace_ms = 5000, idle_ms = 0, heartbeat_ms = 20000;
	const char *expired_file = NULL, *allow_host = NULL;
	const char *token_file = NULL, *sandboxd_rest = NULL;
	const char *sandboxd_grpc = NULL;
	int show_version = 0, owner_fd = -1, ready_fd = -1, expired_fd = -1;
	struct option opts[] = {
		OPT_STRING_ENV(0, "addr", &addr, "<addr>",
			       "listen on host:port, :port (all interfaces) or "
			       "unix:/path (default 127.0.0.1:8888)",
			       "SANDBOX_ADDR"),
		OPT_STRING_ENV(0, "workdir", &workdir, "<dir>",
			       "directory commands run in (created)",
			       "SANDBOX_WORKDIR"),
		OPT_STRING_ENV(0, "log-level", &level, "<level>",
			       "debug, info, warn or error",
			       "SANDBOX_LOG_LEVEL"),
		OPT_DURATION(0, "shutdown-grace", &grace_ms,
			     "on SIGTERM, time given to running requests"),
		OPT_DURATION(0, "idle-timeout", &idle_ms,
			     "exit after this long without requests"),
		OPT_STRING(
			0, "expired-file", &expired_file, "<path>",
			"file created when the idle timeout ends the server"),
		OPT_INT(0, "expired-fd", &expired_fd,
			"write \"expired\" here when the idle timeout ends "
			"the server"),
		OPT_INT(0, "owner-fd", &owner_fd,
			"exit when this descriptor (the owner's pipe) reaches "
			"EOF"),
		OPT_INT(0, "ready-fd", &ready_fd,
			"write \"ready\" here, then close it, once serving"),
		OPT_DURATION(0, "heartbeat", &heartbeat_ms,
			     "/v1/exec: a heartbeat event after this much "
			     "silence (default 20s)"),
		OPT_STRING_ENV(0, "allow-host", &allow_host, "<names>",
			       "on TCP, also answer requests whose Host is "
			       "one of these names (comma-separated, "
			       "*.suffix for subdomains); addresses and "
			       "localhost always",
			       "SANDBOX_ALLOW_HOSTS"),
		OPT_STRING_ENV(0, "token-file", &token_file, "<path>",
			       "require Authorization: Bearer <the token in "
			       "this file> on every request",
			       "SANDBOX_TOKEN_FILE"),
		OPT_STRING_ENV(0, "sandboxd-rest", &sandboxd_rest, "<addr>",
			       "also serve the sandboxd REST API (files, "
			       "health, metadata) here; alone: "
			       "127.0.0.1:8080",
			       "SANDBOXD_REST_ADDR"),
		OPT_STRING_ENV(0, "sandboxd-grpc", &sandboxd_grpc, "<addr>",
			       "also serve the sandboxd gRPC ProcessService "
			       "here; alone: 127.0.0.1:9090",
			       "SANDBOXD_GRPC_ADDR"),
		OPT_BOOL(0, "version", &show_version, "print the version"),
		OPT_END(),
	};
	struct MHD_Daemon *d, *sd = NULL;
	struct listen_info li, sli = { 0 }, gli = { 0 };
	/* static: argv's copy lives as long as the process, whatever
	 * return comes first (LeakSanitizer sees it as reachable) */
	static const char **args;
	sigset_t set;
	int sfd;

	args = default_sandboxd_rest(argc, argv);
	progname = "gosbx-runtime";
	argc = parse_options(argc, args, opts, runtime_usage, 0);
	argv = args;
	if (argc < 0)
		return parse_options_status(argc);
	if (show_version) {
		printf("gosbx-runtime version %s\n", GOSBX_VERSION);
		return 0;
	}
	if (argc) {
		error("unexpected argument '%s'", argv[0]);
		usage_with_options_to(stderr, runtime_usage, opts);
		return 129;
	}
	if (level && log_parse_level(level, &log_min_level) < 0) {
		error("unknown log level '%s' (debug, info, warn, error)",
		      level);
		return 129;
	}
	if (allow_host && http_host_list_parse(allow_host, &web.allow_hosts))
		return 129;
	if (token_file && http_token_read(token_file, &web.token) < 0)
		return 1;
	/* GET /v1/logs: the last MiB of our log lines */
	log_ring_enable(1 << 20);

	/*
	 * Before anything else: code of the same uid (the sandbox's) must
	 * not read our memory or take our descriptors (the listening
	 * socket above all) through /proc/<pid>/fd or pidfd_getfd(). The
	 * spawner and the shims of commands inherit this (fork, no exec).
	 */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* orphans of the commands come to us, not to an init elsewhere */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	/*
	 * As pid 1 of a sandbox (the local backend's bwrap --as-pid-1): end
	 * with the bwrap process that started us, the one gosbx watches, so
	 * that killing it never leaves a sandbox running that nobody knows
	 * of. The kernel delivers this SIGKILL to a namespace's pid 1 (its
	 * sender is outside the namespace). Not inherited by our forks.
	 */
	if (getpid() == 1) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		/*
		 * pid 1 ignores its own SIGABRT: abort() (a failed assert, a
		 * sanitizer's report) would hang, and the sandbox with it
		 */
		signal(SIGABRT, exit_on_abort);
	}
	if (check_fd_option("owner-fd", owner_fd) ||
	    check_fd_option("ready-fd", ready_fd) ||
	    check_fd_option("expired-fd", expired_fd))
		return 129;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	if (heartbeat_ms < 100 || heartbeat_ms > INT_MAX) {
		error("--heartbeat wants a duration from 100ms to 24 days");
		return 129;
	}
	rt.heartbeat_ms = heartbeat_ms;
	rt.workdir = workdir;
	if (prepare_workdir(workdir) < 0)
		return 1;
	rt.root = realpath(workdir, NULL);
	if (!rt.root) {
		log_msg(LOG_ERROR, "workdir not writable", "workdir", workdir);
		return 1;
	}
	rt.started_ms = monotonic_ms();
	atomic_store(&last_activity_ms, rt.started_ms);
	exec_setup_oom_source();
	/* while we are small and have one thread (lib/exec.h) */
	if (exec_spawner_start() < 0)
		log_msg(LOG_WARN,
			"no command spawner: commands fork the server", "error",
			last_error());
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0) {
		log_msg(LOG_ERROR, "cannot wait for signals", "error",
			strerror(errno));
		return 1;
	}

	/* 600 s of idle time once a request came, as before */
	guard = http_guard_new(&(struct http_guard_opts){ 0, 600, 0, 0 });
	d = start_daemon(addr, &main_listener, &li);
	if (!d)
		return 1;
	if (sandboxd_rest) {
		sd = start_daemon(sandboxd_rest, &sandboxd_listener, &sli);
		if (!sd)
			return 1;
	}
	if (sandboxd_grpc &&
	    grpc_start(sandboxd_grpc, web.token.buf,
		       (const char *const *)web.allow_hosts.v, &gli) < 0)
		return 1;
	export_sandboxd_addrs(sandboxd_rest ? &sli : NULL,
			      sandboxd_grpc ? &gli : NULL);
	tell_fd(&ready_fd, "ready\n");
	for (;;) {
		struct pollfd pfd[2] = { { sfd, POLLIN, 0 },
					 { owner_fd, POLLIN, 0 } };
		int r = poll(pfd, owner_fd >= 0 ? 2 : 1, 1000);
		struct signalfd_siginfo si;
		char buf[64];
		ssize_t n;

		if (r > 0 && pfd[0].revents &&
		    read(sfd, &si, sizeof(si)) == sizeof(si) &&
		    (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)) {
			const char *name =
				si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT";

			if (from_sandbox(&si)) {
				struct log_line l;

				if (log_begin(&l, LOG_WARN,
					      "ignoring a signal from the "
					      "sandbox")) {
					log_str(&l, "signal", name);
					log_int(&l, "pid", si.ssi_pid);
					log_end(&l);
				}
				continue;
			}
			log_msg(LOG_INFO, "shutting down", "signal", name);
			break;
		}
		if (r > 0 && owner_fd >= 0 && pfd[1].revents) {
			n = read(owner_fd, buf, sizeof(buf));
			if (!n ||
			    (n < 0 && errno != EAGAIN && errno != EINTR)) {
				/* nobody will read answers any more */
				log_msg(LOG_INFO, "owner gone, exiting", NULL,
					NULL);
				grace_ms = 0;
				break;
			}
		}
		exec_kill_strays();
		exec_reap_orphans();
		http_guard_tick(guard);
		if (idle_expired(idle_ms)) {
			log_msg(LOG_INFO, "idle timeout, exiting", NULL, NULL);
			if (expired_file) {
				int fd = open(expired_file,
					      O_WRONLY | O_CREAT | O_CLOEXEC,
					      0644);
				if (fd >= 0)
					close(fd);
			}
			tell_fd(&expired_fd, "expired\n");
			break;
		}
	}
	shutdown_server(d, sd, grace_ms);
	http_guard_free(guard);
	if (li.unix_path)
		unlink(li.unix_path);
	listen_info_release(&li);
	if (sli.unix_path)
		unlink(sli.unix_path);
	if (sd)
		listen_info_release(&sli);
	if (gli.unix_path)
		unlink(gli.unix_path);
	listen_info_release(&gli);
	free(args);
	strvec_clear(&web.allow_hosts);
	strbuf_release(&web.token);
	free(rt.root);
	return 0;
}

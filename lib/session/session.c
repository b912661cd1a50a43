/*
 * The session API (session.h): backends give a claim and a connection
 * to its runtime; this file speaks the runtime protocol
 * (Documentation/protocol/runtime-api.md) on top, with the upstream fallbacks.
 */
#include "compat.h"
#include "dl/dl.h"
#include "http.h"
#include "json.h"
#include "proto/exec-events.h"
#include "quote.h"
#include "session/sandboxd.h"
#include "session/session.h"
#include "strvec.h"
#include "tarball.h"
#include "usage.h"
#include "utf8.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>

/* the upstream per-stream cap, also applied to streamed output */
#define STREAM_CAP (8u << 20)
#define SEED_UPLOAD_TAR ".goruntime-upload.tar"
/* the seed's head and tail of long output, bytes each */
#define HEAD_TAIL 8192
/*
 * Bounds on what a runtime can make the client hold (a hostile runtime
 * answers without end): a /v1/exec event line, EXEC_EVENT_LINE_MAX.
 * An /execute answer holds two streams of at most STREAM_CAP bytes
 * (and the "[truncated]" marker), each byte at most 6 in JSON, and a
 * few small fields.
 */
#define EXECUTE_ANSWER_MAX (12 * (size_t)STREAM_CAP + ((size_t)1 << 20))
/* a file fetched with session_get(): the runtime's upload limit */
#define GET_MAX ((size_t)256 << 20)
/* GET / of the keepalive thread: a few hundred bytes in truth */
#define PROBE_MAX ((size_t)64 << 10)

void session_result_init(struct session_result *res)
{
	memset(res, 0, sizeof(*res));
	res->reason = "exited";
	res->cpu_ms = -1;
	res->peak_rss_kb = -1;
	strbuf_init(&res->out, 0);
	strbuf_init(&res->err, 0);
	strbuf_init(&res->out_tail, 0);
	strbuf_init(&res->err_tail, 0);
	strbuf_init(&res->held_output, 0);
	strbuf_init(&res->hint, 0);
}

void session_result_release(struct session_result *res)
{
	strbuf_release(&res->out);
	strbuf_release(&res->err);
	strbuf_release(&res->out_tail);
	strbuf_release(&res->err_tail);
	strbuf_release(&res->held_output);
	strbuf_release(&res->hint);
}

/* every backend, the default first */
static const struct backend_ops *const backends[] = {
	&backend_local,
	&backend_kube,
	&backend_url,
};

const struct backend_ops *backend_lookup(const char *name)
{
	if (!name)
		return backends[0];
	for (size_t i = 0; i < ARRAY_SIZE(backends); i++)
		if (!strcmp(name, backends[i]->name))
			return backends[i];
	return NULL;
}

const struct backend_ops *backend_find(const char *name)
{
	const struct backend_ops *ops = backend_lookup(name);

	if (ops)
		return ops;
	error("unknown backend '%s' (expected %s)", name, backend_names());
	return NULL;
}

const char *backend_names(void)
{
	return "local, kube or url";
}

int backend_defaults(const struct session_opts *opts,
		     struct backend_defaults *d)
{
	const struct backend_ops *ops = backend_find(opts->backend);
	int ret = 0;

	memset(d, 0, sizeof(*d));
	if (!ops)
		return -1;
	if (ops->defaults)
		ret = ops->defaults(opts, d);
	if (opts->namespace) {
		free(d->namespace);
		d->namespace = xstrdup(opts->namespace);
	}
	if (opts->template) {
		free(d->template);
		d->template = xstrdup(opts->template);
	}
	/* the seed's values, which its log line shows on every backend */
	if (!d->namespace)
		d->namespace = xstrdup("default");
	if (!d->template)
		d->template = xstrdup(BACKEND_KUBE_TEMPLATE);
	return ret;
}

void backend_defaults_release(struct backend_defaults *d)
{
	free(d->namespace);
	free(d->template);
	memset(d, 0, sizeof(*d));
}

int session_check_path(const char *path)
{
	const char *p = path;

	if (!path || !*path)
		return error("invalid file path '': must not be empty");
	if (*path == '/')
		return error("invalid file path '%s': must be relative", path);
	while (*p) {
		const char *seg = p;
		size_t n;

		while (*p && *p != '/')
			p++;
		n = p - seg;
		if (!n || (n == 1 && seg[0] == '.') ||
		    (n == 2 && seg[0] == '.' && seg[1] == '.'))
			return error("invalid file path '%s': empty, '.' or "
				     "'..' segment",
				     path);
		if (*p == '/') {
			p++;
			if (!*p)
				return error("invalid file path '%s': empty "
					     "segment",
					     path);
		}
	}
	return 0;
}

int session_check_claim_name(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (!n || n > 63)
		return error("invalid claim name '%s': want 1 to 63 "
			     "characters",
			     name ? name : "");
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      (c == '-' && i > 0)))
			return error("invalid claim name '%s': use lower-case "
				     "letters, digits and '-'",
				     name);
	}
	return 0;
}

int session_truncate_head_tail(struct strbuf *sb)
{
	struct strbuf out = STRBUF_INIT;
	size_t elided;

	if (sb->len <= 16384)
		return 0;
	elided = sb->len - 16384;
	strbuf_grow(&out, 16384 + 48);
	strbuf_add(&out, sb->buf, 8192);
	strbuf_addf(&out, "\n... [%zu bytes elided] ...\n", elided);
	strbuf_add(&out, sb->buf + sb->len - 8192, 8192);
	strbuf_release(sb);
	*sb = out;
	return 1;
}

static int head_tail(struct strbuf *sb, const struct strbuf *tail, size_t total,
		     int *truncated)
{
	struct strbuf out = STRBUF_INIT;

	if (total <= 2 * HEAD_TAIL || sb->len < HEAD_TAIL ||
	    tail->len < HEAD_TAIL)
		return session_truncate_head_tail(sb) ? (*truncated = 1) : 0;
	strbuf_grow(&out, 2 * HEAD_TAIL + 48);
	strbuf_add(&out, sb->buf, HEAD_TAIL);
	strbuf_addf(&out, "\n... [%zu bytes elided] ...\n",
		    total - 2 * HEAD_TAIL);
	strbuf_add(&out, tail->buf + tail->len - HEAD_TAIL, HEAD_TAIL);
	strbuf_release(sb);
	*sb = out;
	*truncated = 1;
	return 1;
}

int session_result_head_tail(struct session_result *res)
{
	int a = head_tail(&res->out, &res->out_tail, res->out_total,
			  &res->out_truncated);
	int b = head_tail(&res->err, &res->err_tail, res->err_total,
			  &res->err_truncated);

	return a || b;
}

/* The runtime's feature names (GET /, Documentation/gosbx-runtime.txt) */
static const struct {
	const char *name;
	unsigned bit;
} feature_names[] = {
	{ "archive", SESSION_FEAT_ARCHIVE },
	{ "exec-cancel", SESSION_FEAT_EXEC_CANCEL },
	{ "exec-input", SESSION_FEAT_EXEC_INPUT },
	{ "exec-interactive", SESSION_FEAT_EXEC_INTERACTIVE },
	{ "exec-options", SESSION_FEAT_EXEC_OPTIONS },
	{ "exec-stream", SESSION_FEAT_EXEC_STREAM },
	{ "files", SESSION_FEAT_FILES },
	{ "jobs", SESSION_FEAT_JOBS },
	{ "logs", SESSION_FEAT_LOGS },
	{ "metrics", SESSION_FEAT_METRICS },
};

static void read_features(struct session *s, json_t *root)
{
	json_t *f = json_object_get(root, "features"), *v;
	const char *server = json_object_str(root, "server");
	size_t i;

	s->features = 0;
	s->heartbeat_ms =
		(long)json_integer_value(json_object_get(root, "heartbeat_ms"));
	if (s->heartbeat_ms < 0 || s->heartbeat_ms > 3600000)
		s->heartbeat_ms = 0;
	free(s->server);
	s->server = xstrdup(server ? server : "");
	json_array_foreach (f, i, v) {
		const char *name = json_string_value(v);
		if (!name)
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(feature_names); k++)
			if (!strcmp(name, feature_names[k].name))
				s->features |= feature_names[k].bit;
	}
}

struct session_keepalive {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	int stop;
	int64_t interval_ms;
	struct http_client *http; /* its own connection */
	struct session *s;
};

static void *keepalive_thread(void *arg)
{
	struct session_keepalive *k = arg;
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { 0 };

	req.path = "/";
	req.timeout_ms = 10000;
	req.max_body = PROBE_MAX;
	pthread_mutex_lock(&k->mu);
	while (!k->stop) {
		struct timespec ts;

		deadline_in_ms(&ts, CLOCK_MONOTONIC, (uint64_t)k->interval_ms);
		if (pthread_cond_timedwait(&k->cond, &k->mu, &ts) !=
			    ETIMEDOUT ||
		    k->stop)
			continue;
		pthread_mutex_unlock(&k->mu);
		/* errors are not ours to report: the next command will */
		if (http_request(k->http, &req, &resp) == 0 && k->s->ops->touch)
			k->s->ops->touch(k->s);
		pthread_mutex_lock(&k->mu);
	}
	pthread_mutex_unlock(&k->mu);
	http_resp_release(&resp);
	return NULL;
}

static void *keepalive_main(void *arg)
{
	set_error_routine(report_nothing, NULL);
	return keepalive_thread(arg);
}

int session_keepalive_start(struct session *s, int64_t interval_ms)
{
	struct session_keepalive *k;
	pthread_condattr_t ca;

	if (s->keepalive || interval_ms <= 0)
		return 0;
	k = xcalloc(1, sizeof(*k));
	k->interval_ms = interval_ms;
	k->s = s;
	k->http = http_client_dup(s->http);
	if (!k->http) {
		free(k);
		return -1;
	}
	pthread_mutex_init(&k->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&k->thread, NULL, keepalive_main, k)) {
		pthread_cond_destroy(&k->cond);
		pthread_mutex_destroy(&k->mu);
		http_client_free(k->http);
		free(k);
		return error("cannot start the keepalive thread");
	}
	s->keepalive = k;
	return 0;
}

static void keepalive_stop(struct session *s)
{
	struct session_keepalive *k = s->keepalive;

	if (!k)
		return;
	pthread_mutex_lock(&k->mu);
	k->stop = 1;
	pthread_cond_signal(&k->cond);
	pthread_mutex_unlock(&k->mu);
	pthread_join(k->thread, NULL);
	pthread_cond_destroy(&k->cond);
	pthread_mutex_destroy(&k->mu);
	http_client_free(k->http);
	free(k);
	s->keepalive = NULL;
}

static void session_free(struct session *s)
{
	if (s->sandboxd)
		sandboxd_close(s);
	http_client_free(s->http);
	free(s->claim);
	free(s->server);
	free(s->granted.go_version);
	memset(s, 0, sizeof(*s));
}

/* error() for options that do not go together: SESSION_BAD_OPTS */
static int PRINTF_LIKE(1, 2) error_bad_opts(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	error("%s", sb.buf);
	strbuf_release(&sb);
	return SESSION_BAD_OPTS;
}

int session_open(struct session *s, const struct session_opts *opts)
{
	json_t *root = NULL;
	long status = 0;
	int rc;

	memset(s, 0, sizeof(*s));
	s->granted.memory_bytes = s->granted.pids = -1;
	s->granted.disk_bytes = -1;
	s->granted.cpus = -1;
	s->ops = backend_find(opts->backend);
	if (!s->ops)
		return -1;
	if (opts->claim && !(s->ops->caps & BACKEND_FREE_NAMES) &&
	    session_check_claim_name(opts->claim) < 0)
		return -1;
	s->keep = opts->keep;
	if (!opts->claim && opts->allow_net &&
	    !(s->ops->caps & BACKEND_ALLOW_NET))
		return error_bad_opts(
			"the %s backend cannot enforce --allow-net: its "
			"sandboxes' network is the cluster's or the "
			"runtime's (an egress NetworkPolicy decides "
			"there, see gosbx-mcp(1) and "
			"Documentation/technical/network.txt)",
			s->ops->name);
	if (!opts->claim && opts->go && !(s->ops->caps & BACKEND_GO))
		return error_bad_opts(
			"the %s backend cannot run the Go of --go: its "
			"sandboxes run the image's Go",
			s->ops->name);
	rc = s->ops->open(s, opts);
	if (rc < 0) {
		session_free(s);
		return rc == SESSION_BAD_OPTS ? rc : -1;
	}
	/* a server with its own protocol: the backend reached it */
	if (s->ops->run)
		return 0;
	/* a dead claim opened for its log (allow_dead): nothing to reach */
	if (!s->http && opts->allow_dead)
		return 0;
	if (http_json(s->http, "GET", "/", NULL, &status, &root) < 0 ||
	    !json_is_object(root)) {
		struct strbuf msg = STRBUF_INIT;
		strbuf_addstr(&msg, last_error());
		json_decref(root);
		error("cannot reach the runtime of claim '%s': %s", s->claim,
		      msg.len ? msg.buf : "unexpected answer to GET /");
		strbuf_release(&msg);
		if (!opts->claim)
			s->ops->destroy(s); /* roll back what we created */
		else if (s->ops->detach)
			s->ops->detach(s); /* free the backend's state */
		session_free(s);
		return -1;
	}
	read_features(s, root);
	json_decref(root);
	return 0;
}

static void touch(struct session *s)
{
	if (s->ops && s->ops->touch)
		s->ops->touch(s);
}

/* ---- running commands ---- */

struct stream_state {
	struct session_result *res;
	const struct session_exec *exec;
	struct strbuf line;
	int got_exit;
	int cancelled;
	int bad;      /* an event that could not be decoded */
	int bad_line; /* a line that is no event: the stream is broken */
	int overlong; /* a line over EXEC_EVENT_LINE_MAX */
};

/* Keep the last HEAD_TAIL to 2 * HEAD_TAIL bytes seen in tail. */
static void add_tail(struct strbuf *tail, const char *buf, size_t len)
{
	if (len >= HEAD_TAIL) {
		strbuf_reset(tail);
		strbuf_add(tail, buf + len - HEAD_TAIL, HEAD_TAIL);
		return;
	}
	strbuf_add(tail, buf, len);
	if (tail->len > 2 * HEAD_TAIL)
		strbuf_remove(tail, 0, tail->len - HEAD_TAIL);
}

void session_result_add_output(struct session_result *res, int stream,
			       const char *buf, size_t len)
{
	struct strbuf *sb = stream == 1 ? &res->out : &res->err;
	int *trunc = stream == 1 ? &res->out_truncated : &res->err_truncated;
	size_t keep =
		res->keep && res->keep < STREAM_CAP ? res->keep : STREAM_CAP;

	add_tail(stream == 1 ? &res->out_tail : &res->err_tail, buf, len);
	*(stream == 1 ? &res->out_total : &res->err_total) += len;

	if (sb->len + len > keep) {
		len = sb->len < keep ? keep - sb->len : 0;
		*trunc = 1;
	}
	if (len)
		strbuf_add(sb, buf, len);
}

void session_result_from_json(struct session_result *res, const void *o)
{
	int64_t v;
	const char *reason = json_object_str(o, "reason");
	int b;
	static const char *const reasons[] = {
		"exited",    "signaled",     "timeout",	     "oom",
		"cancelled", "output_limit", "start_failed",
	};

	if (json_object_int(o, "exit_code", &v) > 0)
		res->exit_code = (int)v;
	res->reason = res->exit_code == -1 ? "signaled" : "exited";
	for (size_t i = 0; reason && i < ARRAY_SIZE(reasons); i++)
		if (!strcmp(reason, reasons[i]))
			res->reason = reasons[i];
	if (json_object_int(o, "signal", &v) > 0)
		res->signal = (int)v;
	if (json_object_int(o, "duration_ms", &v) > 0)
		res->duration_ms = v;
	if (json_object_int(o, "cpu_ms", &v) > 0)
		res->cpu_ms = v;
	if (json_object_int(o, "peak_rss_kb", &v) > 0)
		res->peak_rss_kb = v;
	if (json_object_bool(o, "stdout_truncated", &b) > 0 && b)
		res->out_truncated = 1;
	if (json_object_bool(o, "stderr_truncated", &b) > 0 && b)
		res->err_truncated = 1;
	if (json_object_bool(o, "output_held", &b) > 0 && b) {
		const char *f = json_object_str(o, "held_output");

		res->output_held = 1;
		strbuf_reset(&res->held_output);
		/* a path in the sandbox, shown to people: no controls */
		if (f)
			utf8_escape_into(&res->held_output, f, strlen(f), 0);
	}
}

static int stream_event(struct stream_state *st, const char *line, size_t len)
{
	struct exec_event ev = EXEC_EVENT_INIT;
	int rc = exec_event_parse(&ev, line, len, NULL);
	int stream = exec_event_stream(ev.type), ret = 0;

	if (rc < 0 && !ev.name) {
		st->bad_line = 1;
		ret = -1;
	} else if (rc < 0) {
		st->bad = 1; /* a bad event of a known type: skipped */
	} else if (rc) {
		; /* a newer runtime's event */
	} else if (stream) {
		session_result_add_output(st->res, stream, ev.data.buf,
					  ev.data.len);
		if (st->exec->on_output &&
		    st->exec->on_output(stream, ev.data.buf, ev.data.len,
					st->exec->data) < 0) {
			st->cancelled = 1;
			ret = -1;
		}
	} else if (ev.type == EXEC_EVENT_EXIT) {
		session_result_from_json(st->res, ev.json);
		st->got_exit = 1;
	}
	exec_event_release(&ev);
	return ret;
}

static int stream_line(const char *line, size_t len, void *data)
{
	return stream_event(data, line, len);
}

static int stream_data(const char *buf, size_t len, void *data)
{
	struct stream_state *st = data;
	int rc = exec_event_split(&st->line, buf, len, EXEC_EVENT_LINE_MAX,
				  stream_line, st);

	/* one endless line: never hold more than the bound */
	if (rc == EXEC_EVENT_OVERLONG)
		st->overlong = 1;
	return rc < 0 ? -1 : 0;
}

/* The JSON body of /execute and /v1/exec. */
static json_t *exec_body(struct session *s, const struct session_exec *e)
{
	json_t *o = json_object();

	json_object_set_new(o, "command", json_string(e->command));
	if (!(s->features & SESSION_FEAT_EXEC_OPTIONS))
		return o;
	if (e->timeout_ms > 0)
		json_object_set_new(o, "timeout_ms",
				    json_integer(e->timeout_ms));
	if (e->env && e->env[0]) {
		json_t *env = json_object();
		for (const char *const *p = e->env; *p; p++) {
			const char *eq = strchr(*p, '=');
			struct strbuf k = STRBUF_INIT;
			if (!eq)
				continue;
			strbuf_add(&k, *p, eq - *p);
			json_object_set_new(env, k.buf, json_string(eq + 1));
			strbuf_release(&k);
		}
		json_object_set_new(o, "env", env);
	}
	if (e->cwd && *e->cwd)
		json_object_set_new(o, "cwd", json_string(e->cwd));
	if (e->stdin_data)
		json_object_set_new(o, "stdin",
				    json_stringn(e->stdin_data, e->stdin_len));
	return o;
}

static unsigned long error_mark(struct session *s)
{
	return s->ops->error_mark ? s->ops->error_mark(s) : 0;
}

/*
 * A runtime request failed in transport (http_request() printed what
 * libcurl saw): add what the backend knows of the cause since mark, so
 * that last_error() names it (a refused port-forward, not "connection
 * reset").
 */
static void explain_failure(struct session *s, unsigned long mark)
{
	char *why;

	if (!s->ops->error_since)
		return;
	why = s->ops->error_since(s, mark);
	if (why)
		error("%s", why);
	free(why);
}

/*
 * After we abandoned a command (cancel flag): closing our connection
 * kills it on a directly reached runtime, but a proxy in between (the
 * sandbox-router, a gateway, a port-forward) may pass the disconnect
 * on late or never, so ask the runtime by name too (feature
 * exec-cancel, Documentation/gosbx-runtime.txt). Best effort, 5 s.
 */
static void cancel_remote(struct session *s, const char *rid)
{
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { 0 };
	struct strbuf path = STRBUF_INIT;

	if (!(s->features & SESSION_FEAT_EXEC_CANCEL) || !*rid)
		return;
	strbuf_addf(&path, "/v1/exec/%s", rid);
	req.method = "DELETE";
	req.path = path.buf;
	req.timeout_ms = 5000;
	/* 204: killed; 404: it ended already; either way it is gone */
	(void)http_request(s->http, &req, &resp);
	strbuf_release(&path);
	http_resp_release(&resp);
}

static int run_streamed(struct session *s, const struct session_exec *e,
			struct session_result *res)
{
	struct stream_state st = { res, e, STRBUF_INIT, 0, 0, 0, 0, 0 };
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { 0 };
	json_t *body = exec_body(s, e);
	char *text = json_dumps(body, JSON_COMPACT);
	int rc, ret = -1;

	char rid[17] = "";
	unsigned long mark = error_mark(s);

	req.method = "POST";
	req.path = "/v1/exec";
	req.body = text;
	req.body_len = strlen(text);
	req.content_type = "application/json";
	req.id_out = rid;
	req.on_data = stream_data;
	req.on_data_arg = &st;
	req.cancel = e->cancel;
	/* the runtime's heartbeat: silence past three of them is a lost
	 * connection (Documentation/gosbx-runtime.txt, exec-stream) */
	if (s->heartbeat_ms > 0)
		req.idle_timeout_ms = 3 * s->heartbeat_ms + 5000;
	rc = http_request(s->http, &req, &resp);
	if (rc == HTTP_ABORTED && (st.overlong || st.bad_line)) {
		/* the runtime broke the protocol: no result to trust */
		cancel_remote(s, rid);
		if (st.overlong)
			error("execute failed: runtime event line over %zu "
			      "bytes (POST '/v1/exec')",
			      EXEC_EVENT_LINE_MAX);
		else
			error("execute failed: the runtime sent a line that "
			      "is not an event (POST '/v1/exec')");
	} else if (rc == HTTP_ABORTED) {
		if (e->cancel && *e->cancel)
			cancel_remote(s, rid);
		res->reason = "cancelled";
		res->exit_code = -1;
		ret = 1;
	} else if (rc < 0) {
		explain_failure(s, mark);
	} else if (resp.status != 200) {
		struct strbuf msg = STRBUF_INIT;
		http_error_text(&msg, resp.status, &resp.body);
		error("execute failed: %s", msg.buf);
		strbuf_release(&msg);
	} else if (!st.got_exit) {
		error("execute failed: the output stream ended before the "
		      "command's exit status");
	} else {
		ret = 0;
	}
	free(text);
	json_decref(body);
	strbuf_release(&st.line);
	http_resp_release(&resp);
	return ret;
}

static int post_execute(struct session *s, json_t *body, int64_t timeout_ms,
			volatile sig_atomic_t *cancel, json_t **out)
{
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { 0 };
	char *text = json_dumps(body, JSON_COMPACT);
	int rc, ret = -1;
	char rid[17] = "";
	unsigned long mark = error_mark(s);
	uint64_t t0 = monotonic_ms();

	req.method = "POST";
	req.path = "/execute";
	req.body = text;
	req.body_len = strlen(text);
	req.content_type = "application/json";
	req.id_out = rid;
	req.cancel = cancel;
	req.max_body = EXECUTE_ANSWER_MAX;
	/* an upstream server cannot time out by itself: give up waiting */
	if (timeout_ms > 0 && !(s->features & SESSION_FEAT_EXEC_OPTIONS))
		req.timeout_ms = timeout_ms;
	rc = http_request(s->http, &req, &resp);
	if (rc == HTTP_ABORTED) {
		cancel_remote(s, rid);
		ret = 1;
	} else if (rc < 0) {
		explain_failure(s, mark);
		/* our own timeout; not any failure (an answer too big) */
		if (req.timeout_ms &&
		    monotonic_ms() - t0 >= (uint64_t)req.timeout_ms)
			ret = 2;
	} else if (resp.status != 200) {
		struct strbuf msg = STRBUF_INIT;
		http_error_text(&msg, resp.status, &resp.body);
		error("execute failed: %s", msg.buf);
		strbuf_release(&msg);
	} else {
		*out = json_parse(resp.body.buf, resp.body.len, NULL);
		if (!json_is_object(*out)) {
			json_decref(*out);
			*out = NULL;
			error("execute failed: the answer is not a JSON "
			      "object");
		} else {
			ret = 0;
		}
	}
	free(text);
	http_resp_release(&resp);
	return ret;
}

static int run_plain(struct session *s, const struct session_exec *e,
		     struct session_result *res)
{
	json_t *body = exec_body(s, e), *ans = NULL;
	uint64_t t0 = monotonic_ms();
	int rc = post_execute(s, body, e->timeout_ms, e->cancel, &ans);

	json_decref(body);
	if (rc == 1 || rc == 2) {
		res->exit_code = -1;
		res->reason = rc == 1 ? "cancelled" : "timeout";
		res->duration_ms = monotonic_ms() - t0;
		return rc == 1 ? 1 : 0;
	}
	if (rc < 0)
		return -1;
	res->duration_ms = monotonic_ms() - t0;
	session_result_from_json(res, ans);
	for (int stream = 1; stream <= 2; stream++) {
		json_t *v =
			json_object_get(ans, stream == 1 ? "stdout" : "stderr");
		const char *text = json_string_value(v);
		size_t len = json_string_length(v);

		if (!text || !len)
			continue;
		session_result_add_output(res, stream, text, len);
		/* all of it, not just what res keeps */
		if (e->on_output)
			e->on_output(stream, text, len, e->data);
	}
	json_decref(ans);
	return 0;
}

/*
 * POST /v1/archive (extension `archive`) of the tar in data/len, or read
 * from fd when fd >= 0, into dir. touch: ask the runtime to give every
 * file the time it writes it (mtime=now, gosbx-runtime(1)) instead of
 * the tar's; a runtime that predates it ignores the parameter and
 * restores the tar's times.
 */
static int post_archive(struct session *s, const char *dir, const void *data,
			size_t len, int fd, int touch)
{
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { 0 };
	struct strbuf query = STRBUF_INIT;
	int ret = 0;

	if (dir && *dir)
		http_query_add(&query, "dir", dir);
	if (touch)
		http_query_add(&query, "mtime", "now");
	req.method = "POST";
	req.path = "/v1/archive";
	req.query = query.len ? query.buf : NULL;
	req.content_type = "application/x-tar";
	if (fd >= 0) {
		req.read_body = http_read_fd;
		req.read_data = &fd;
		req.body_len = HTTP_LEN_UNKNOWN;
	} else {
		req.body = data;
		req.body_len = len;
	}
	if (http_request(s->http, &req, &resp) < 0) {
		ret = -1;
	} else if (resp.status != 200) {
		struct strbuf msg = STRBUF_INIT;
		http_error_text(&msg, resp.status, &resp.body);
		ret = error("writing files failed: %s", msg.buf);
		strbuf_release(&msg);
	}
	strbuf_release(&query);
	http_resp_release(&resp);
	return ret;
}

/*
 * Upload a tar with /upload and unpack it with tar -xf (the seed's
 * fallback, Documentation/protocol/runtime-api.md) into dir. touch: `tar -xmf`,
 * so that files get the time they are written (-m is in GNU tar, busybox and
 * bsdtar) rather than the tar's.
 */
static int upload_tar_fallback(struct session *s, const struct strbuf *tar,
			       const char *dir, int touch)
{
	const char *x = touch ? "tar -xmf " : "tar -xf ";
	struct http_resp resp = HTTP_RESP_INIT;
	struct strbuf cmd = STRBUF_INIT;
	json_t *body, *ans = NULL;
	int ret = -1;

	if (http_upload_multipart(s->http, "/upload", "file", SEED_UPLOAD_TAR,
				  tar->buf, tar->len, &resp) < 0)
		goto out;
	if (resp.status != 200) {
		struct strbuf msg = STRBUF_INIT;
		http_error_text(&msg, resp.status, &resp.body);
		error("writing files failed: %s", msg.buf);
		strbuf_release(&msg);
		goto out;
	}
	if (dir && *dir) {
		strbuf_addstr(&cmd, "mkdir -p -- ");
		sq_quote_buf(&cmd, dir);
		strbuf_addf(&cmd, " && %s" SEED_UPLOAD_TAR " -C ", x);
		sq_quote_buf(&cmd, dir);
		strbuf_addstr(&cmd, " && rm -f " SEED_UPLOAD_TAR);
	} else {
		strbuf_addf(&cmd,
			    "%s" SEED_UPLOAD_TAR " && rm -f " SEED_UPLOAD_TAR,
			    x);
	}
	body = json_object();
	json_object_set_new(body, "command", json_string(cmd.buf));
	if (post_execute(s, body, 0, NULL, &ans) == 0) {
		int64_t code = -1;
		json_object_int(ans, "exit_code", &code);
		if (code)
			error("writing files failed: tar -xf exited %d: %s",
			      (int)code, json_object_str(ans, "stderr") ?: "");
		else
			ret = 0;
	}
	json_decref(body);
	json_decref(ans);
out:
	strbuf_release(&cmd);
	http_resp_release(&resp);
	return ret;
}

static int write_files(struct session *s, const struct session_exec *e)
{
	struct tar_file *tf;
	struct strbuf tar = STRBUF_INIT, err = STRBUF_INIT;
	struct timespec now;
	int nested = 0, ret = -1;

	tf = xcalloc(e->nr_files, sizeof(*tf));
	for (size_t i = 0; i < e->nr_files; i++) {
		tf[i].path = e->files[i].path;
		tf[i].data = e->files[i].data;
		tf[i].len = e->files[i].len;
		if (strchr(e->files[i].path, '/'))
			nested = 1;
	}
	if (!(s->features & SESSION_FEAT_ARCHIVE) && !nested) {
		/* upstream: one /upload per file */
		struct http_resp resp = HTTP_RESP_INIT;
		ret = 0;
		for (size_t i = 0; i < e->nr_files && !ret; i++) {
			if (http_upload_multipart(s->http, "/upload", "file",
						  tf[i].path, tf[i].data,
						  tf[i].len, &resp) < 0) {
				ret = -1;
			} else if (resp.status != 200) {
				struct strbuf msg = STRBUF_INIT;
				http_error_text(&msg, resp.status, &resp.body);
				ret = error("writing '%s' failed: %s",
					    tf[i].path, msg.buf);
				strbuf_release(&msg);
			}
		}
		http_resp_release(&resp);
		goto out;
	}
	/*
	 * Files written now get the time of now, not the seed's 0: go
	 * test's cache (mtime and size) and make must see them change.
	 * The sandbox's own clock stamps them (mtime=now, tar -m); the
	 * tar carries ours for a runtime that predates mtime=now.
	 */
	clock_gettime(CLOCK_REALTIME, &now);
	if (tar_build_seed(tf, e->nr_files, &now, &tar, &err) < 0) {
		error("%s", err.buf);
		goto out;
	}
	if (s->features & SESSION_FEAT_ARCHIVE)
		ret = post_archive(s, NULL, tar.buf, tar.len, -1, 1);
	else
		ret = upload_tar_fallback(s, &tar, NULL, 1);
out:
	free(tf);
	strbuf_release(&tar);
	strbuf_release(&err);
	return ret;
}

int session_execute(struct session *s, const struct session_exec *e,
		    struct session_result *res)
{
	int ret;

	if (!e->command || !*e->command)
		return error("command must not be empty");
	for (size_t i = 0; i < e->nr_files; i++)
		if (session_check_path(e->files[i].path) < 0)
			return -1;
	if (s->ops->run && e->nr_files && !s->ops->write_files)
		return error("the server of '%s' (%s) cannot take files "
			     "with a command",
			     s->claim, s->server ? s->server : s->ops->name);
	touch(s);
	if (e->nr_files) {
		if (e->on_phase)
			e->on_phase("writing files", e->data);
		if (s->ops->write_files
			    ? s->ops->write_files(s, e->files, e->nr_files) < 0
			    : write_files(s, e) < 0)
			return -1;
	}
	if (e->cancel && *e->cancel) {
		res->reason = "cancelled";
		res->exit_code = -1;
		return 1;
	}
	/* every way of running below adds through session_result_add_output */
	res->keep = e->keep_bytes;
	if (e->on_phase)
		e->on_phase("running", e->data);
	if (s->ops->exec_hook)
		s->ops->exec_hook(s, 0, res);
	if (s->ops->run)
		ret = s->ops->run(s, e, res);
	else if (s->features & SESSION_FEAT_EXEC_STREAM)
		ret = run_streamed(s, e, res);
	else
		ret = run_plain(s, e, res);
	if (s->ops->exec_hook && ret >= 0)
		s->ops->exec_hook(s, 1, res);
	if (res->hint.len) {
		session_result_add_output(res, 2, res->hint.buf, res->hint.len);
		if (e->on_output)
			e->on_output(2, res->hint.buf, res->hint.len, e->data);
	}
	touch(s);
	return ret;
}

/* ---- files ---- */

struct push_job {
	const char *const *paths;
	size_t nr;
	int fd;
	int failed;
	struct strbuf err;
};

static int push_write(const void *buf, size_t len, void *data)
{
	struct push_job *job = data;

	return write_in_full(job->fd, buf, len) < 0 ? -1 : 0;
}

static void *push_thread(void *arg)
{
	struct push_job *job = arg;

	if (tar_write_local(job->paths, job->nr, push_write, job, &job->err) <
	    0)
		job->failed = 1;
	close(job->fd);
	return NULL;
}

static int buf_write(const void *buf, size_t len, void *data)
{
	strbuf_add(data, buf, len);
	return 0;
}

int session_push(struct session *s, const char *const *paths, size_t nr,
		 const char *dir)
{
	struct push_job job = { paths, nr, -1, 0, STRBUF_INIT };
	pthread_t th;
	int fds[2], ret;

	if (dir && *dir && session_check_path(dir) < 0)
		return -1;
	/* before the upload starts: its empty body would hide the reason */
	if (dl_archive_error())
		return error("%s", dl_archive_error());
	touch(s);
	if (s->ops->push)
		return s->ops->push(s, paths, nr, dir);
	if (!(s->features & SESSION_FEAT_ARCHIVE)) {
		struct strbuf tar = STRBUF_INIT;

		if (tar_write_local(paths, nr, buf_write, &tar, &job.err) < 0) {
			ret = error("%s", job.err.buf);
		} else {
			ret = upload_tar_fallback(s, &tar, dir, 0);
		}
		strbuf_release(&tar);
		strbuf_release(&job.err);
		return ret;
	}
	/* stream: a thread writes the tar into a pipe, curl sends it */
	if (pipe2(fds, O_CLOEXEC) < 0)
		return error_errno("cannot create pipe");
	job.fd = fds[1];
	if (pthread_create(&th, NULL, push_thread, &job)) {
		close(fds[0]);
		close(fds[1]);
		return error("cannot start the archive writer");
	}
	ret = post_archive(s, dir, NULL, 0, fds[0], 0);
	close(fds[0]); /* unblocks the writer if the upload failed */
	pthread_join(th, NULL);
	if (job.failed) {
		if (!ret)
			ret = -1;
		error("%s", job.err.len ? job.err.buf : "cannot read files");
	}
	strbuf_release(&job.err);
	return ret;
}

struct fd_sink {
	int fd;
	uint64_t written, max; /* bytes; max 0: no bound */
	int over;
};

static int fd_write(const char *buf, size_t len, void *data)
{
	struct fd_sink *k = data;

	if (k->max && len > k->max - k->written) {
		k->over = 1;
		return -1;
	}
	k->written += len;
	return write_in_full(k->fd, buf, len) < 0 ? -1 : 0;
}

int session_fetch_archive(struct session *s, const char *path, int fd,
			  uint64_t max_bytes, volatile sig_atomic_t *cancel)
{
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { 0 };
	struct strbuf query = STRBUF_INIT;
	struct fd_sink sink = { fd, 0, max_bytes, 0 };
	int ret = 0, rc;

	if (s->ops->fetch_archive) {
		if (path && *path && strcmp(path, ".") &&
		    session_check_path(path) < 0)
			return -1;
		return s->ops->fetch_archive(s, path && *path ? path : "", fd,
					     max_bytes, cancel);
	}
	if (!(s->features & SESSION_FEAT_ARCHIVE))
		return error("the runtime of claim '%s' cannot send archives "
			     "(no extension 'archive': not a gosbx-runtime?)",
			     s->claim);
	if (path && *path && strcmp(path, ".") && session_check_path(path) < 0)
		return -1;
	touch(s);
	http_query_add(&query, "path", path && *path ? path : ".");
	req.path = "/v1/archive";
	req.query = query.buf;
	req.on_data = fd_write;
	req.on_data_arg = &sink;
	req.cancel = cancel;
	rc = http_request(s->http, &req, &resp);
	if (rc == HTTP_ABORTED && cancel && *cancel) {
		ret = 1;
	} else if (rc == HTTP_ABORTED && sink.over) {
		error("the archive of '%s' is larger than %" PRIu64 " bytes",
		      path && *path ? path : ".", max_bytes);
		ret = SESSION_FETCH_TOO_LARGE;
	} else if (rc == HTTP_ABORTED) {
		ret = error_errno("cannot write the archive of '%s'", path);
	} else if (rc < 0) {
		ret = -1;
	} else if (resp.status != 200) {
		struct strbuf msg = STRBUF_INIT;
		http_error_text(&msg, resp.status, &resp.body);
		ret = error("cannot get '%s': %s", path, msg.buf);
		strbuf_release(&msg);
	}
	strbuf_release(&query);
	http_resp_release(&resp);
	return ret;
}

int session_logs(struct session *s, int follow, int fd,
		 volatile sig_atomic_t *cancel)
{
	if (!s->ops->logs)
		return error("the %s backend cannot show a runtime's log yet",
			     s->ops->name);
	return s->ops->logs(s, follow, fd, cancel);
}

/* how often session_http_logs() asks again with follow, ms */
#define LOGS_POLL_MS 200

int session_http_logs(struct session *s, int follow, int fd,
		      volatile sig_atomic_t *cancel)
{
	struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
	uint64_t since = 0;
	int ret = 0;

	if (!(s->features & SESSION_FEAT_LOGS))
		return error("the runtime of claim '%s' has no 'logs' "
			     "extension (GET /v1/logs): it is older than "
			     "this gosbx",
			     s->claim);
	while (!(cancel && *cancel)) {
		json_t *m = NULL;
		const char *log;
		int64_t next;

		strbuf_reset(&path);
		strbuf_addf(&path, "/v1/logs?since=%" PRIu64, since);
		touch(s);
		if (http_json(s->http, "GET", path.buf, NULL, NULL, &m) < 0) {
			ret = (cancel && *cancel) ? 0 : -1;
			break;
		}
		log = json_object_str(m, "log");
		if (!log || json_object_int(m, "next", &next) <= 0 ||
		    next < 0) {
			json_decref(m);
			ret = error("the runtime of claim '%s' answered "
				    "GET /v1/logs without 'log' and 'next'",
				    s->claim);
			break;
		}
		strbuf_reset(&text);
		strbuf_addstr(&text, log);
		json_decref(m);
		since = (uint64_t)next;
		/* the sandbox can write into the log: no terminal control */
		if (session_write_sandbox_text(fd, &text, 1) < 0) {
			ret = error_errno("cannot write the log");
			break;
		}
		if (!follow)
			break;
		poll(NULL, 0, LOGS_POLL_MS);
	}
	strbuf_release(&path);
	strbuf_release(&text);
	return ret;
}

int session_gone(struct session *s, struct strbuf *why)
{
	if (!s->ops || !s->ops->gone)
		return 0;
	return s->ops->gone(s, why) > 0;
}

int session_write_sandbox_text(int fd, struct strbuf *pend, int final)
{
	struct strbuf esc = STRBUF_INIT;
	size_t keep = final ? 0 : utf8_incomplete_tail(pend->buf, pend->len);
	int ret = 0;

	utf8_escape_into(&esc, pend->buf, pend->len - keep,
			 UTF8_ESCAPE_KEEP_LINES);
	if (write_in_full(fd, esc.buf, esc.len) < 0)
		ret = -1;
	strbuf_remove(pend, 0, pend->len - keep);
	strbuf_release(&esc);
	return ret;
}

/* session_stdin_retry(): the pauses and their sum, in ms */
#define STDIN_RETRY_MAX_PAUSE_MS 100
#define STDIN_RETRY_TOTAL_MS 30000

int session_stdin_busy(const struct http_resp *resp)
{
	struct strbuf text = STRBUF_INIT;
	int busy;

	if (resp->status != 409)
		return 0;
	http_error_text(&text, resp->status, &resp->body);
	busy = strstr(text.buf, "stdin request of this") &&
	       strstr(text.buf, "in progress");
	strbuf_release(&text);
	return busy;
}

int session_stdin_retry(const struct http_resp *resp, unsigned *tries,
			volatile sig_atomic_t *cancel)
{
	unsigned pause = 1, slept = 0, i;
	int busy = session_stdin_busy(resp);

	/* what the tries before this one slept: 1, 2, 4, ... ms */
	for (i = 0; i < *tries; i++) {
		slept += pause;
		if (pause < STDIN_RETRY_MAX_PAUSE_MS)
			pause = pause * 2 < STDIN_RETRY_MAX_PAUSE_MS
					? pause * 2
					: STDIN_RETRY_MAX_PAUSE_MS;
	}
	if (!busy || slept >= STDIN_RETRY_TOTAL_MS)
		return 0;
	(*tries)++;
	for (i = 0; i < pause && !(cancel && *cancel); i += 10)
		poll(NULL, 0, pause - i < 10 ? (int)(pause - i) : 10);
	return !(cancel && *cancel);
}

int session_get(struct session *s, const char *path, struct strbuf *out)
{
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { 0 };
	struct strbuf p = STRBUF_INIT;
	int ret = 0;

	touch(s);
	if (s->ops->get)
		return s->ops->get(s, path, GET_MAX, out);
	strbuf_addstr(&p, "/download/");
	http_pct_encode_path(&p, path);
	req.path = p.buf;
	req.max_body = GET_MAX;
	if (http_request(s->http, &req, &resp) < 0) {
		ret = -1;
	} else if (resp.status != 200) {
		struct strbuf msg = STRBUF_INIT;
		http_error_text(&msg, resp.status, &resp.body);
		ret = error("cannot get '%s': %s", path, msg.buf);
		strbuf_release(&msg);
	} else {
		strbuf_addbuf(out, &resp.body);
	}
	strbuf_release(&p);
	http_resp_release(&resp);
	return ret;
}

/* the most lines of the remover's messages session_reset() keeps */
#define RESET_LEFT_LINES 10

int session_reset(struct session *s, struct strbuf *left)
{
	struct session_exec e = { 0 };
	struct session_result res;
	int ret;

	/* chmod -R does not follow symlinks met on the way */
	e.command = "chmod -R u+rwX . 2>/dev/null; "
		    "find . -mindepth 1 -maxdepth 1 -exec rm -rf -- {} +";
	session_result_init(&res);
	ret = session_execute(s, &e, &res);
	if (ret) {
		ret = -1;
	} else if (res.exit_code) {
		const char *p = res.err.buf, *end = p + res.err.len;
		size_t lines = 0;

		ret = 1;
		while (left && p < end) {
			const char *nl = memchr(p, '\n', end - p);
			size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

			if (lines++ < RESET_LEFT_LINES) {
				if (left->len)
					strbuf_addch(left, '\n');
				strbuf_add(left, p, n);
			}
			p += n + 1;
		}
		if (left && lines > RESET_LEFT_LINES)
			strbuf_addf(left, "\n... (%zu more lines)",
				    lines - RESET_LEFT_LINES);
		if (left && !lines)
			strbuf_addf(left, "the remover exited %d",
				    res.exit_code);
	}
	session_result_release(&res);
	return ret;
}

int session_metrics(struct session *s, double *cpu_percent, double *mem_mib,
		    int64_t *disk_bytes, int *processes)
{
	json_t *m = NULL;
	int64_t v;
	int ret = -1;

	if (!(s->features & SESSION_FEAT_METRICS))
		return error("the runtime of claim '%s' has no metrics",
			     s->claim);
	if (http_json(s->http, "GET", "/v1/metrics", NULL, NULL, &m) < 0)
		goto out;
	if (cpu_percent)
		*cpu_percent =
			json_number_value(json_object_get(m, "cpu_usage"));
	if (mem_mib)
		*mem_mib =
			json_number_value(json_object_get(m, "memory_usage"));
	if (disk_bytes && json_object_int(m, "disk_usage", &v) > 0)
		*disk_bytes = v;
	if (processes && json_object_int(m, "processes", &v) > 0)
		*processes = (int)v;
	ret = 0;
out:
	json_decref(m);
	return ret;
}

int session_close(struct session *s)
{
	int ret = 0;

	if (!s->ops)
		return 0;
	if (s->keep)
		return session_disconnect(s);
	keepalive_stop(s);
	http_client_free(s->http);
	s->http = NULL;
	ret = s->ops->destroy(s);
	session_free(s);
	return ret;
}

void session_exec_hook(struct session *s, int after, struct session_result *res)
{
	if (s->ops && s->ops->exec_hook)
		s->ops->exec_hook(s, after, res);
}

int session_disconnect(struct session *s)
{
	if (!s->ops)
		return 0;
	keepalive_stop(s);
	if (s->ops->detach)
		s->ops->detach(s);
	session_free(s);
	return 0;
}

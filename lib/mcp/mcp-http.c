/*
 * The streamable HTTP transport of `gosbx mcp --http`
 * (Documentation/protocol/mcp.md "Protocol", the wire reference's section 4
 * and 3.7): POST /mcp with one JSON-RPC message (or a 2025-03-26 batch),
 * answered with JSON or an SSE stream; Mcp-Session-Id sessions for the
 * handshake revisions, none for 2026-07-28; DELETE ends a session; Origin and
 * bearer token checks.
 *
 * libmicrohttpd with one thread per connection: a handler may block
 * until its tools/call answers (JSON) and an SSE reader callback may
 * block until the next event, while other connections are served.
 */
#include "compat.h"
#include "http-checks.h"
#include "http-guard.h"
#include "json.h"
#include "listen.h"
#include "mcp/mcp-internal.h"
#include "strbuf.h"
#include "usage.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <microhttpd.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#define MAX_SESSIONS 256
#define SSE_QUEUE_CAP ((size_t)8 << 20)
#define WAIT_SLICE_MS 250
#define KEEPALIVE_MS 15000
#define DELETE_WAIT_MS 30000
#define SHUTDOWN_WAIT_MS 3000

struct hsess {
	struct mcp_session *s;
	struct hsess *next;
};

struct http_server {
	struct mcp_server *srv;
	const struct mcp_http_opts *h;
	int64_t idle_ms;
	pthread_mutex_t mu; /* sessions */
	struct hsess *sessions;
	int nr_sessions; /* handshake sessions and named stateless ones */
	atomic_int stopping;
	struct http_guard *guard; /* pre-authentication limits */
};

/* ---- exchanges: the answer channel of one POST ---- */

struct exchange {
	struct mcp_chan ch;
	struct http_server *hs;
	struct mcp_session *s; /* busy reference, dropped at the end */
	int own_session;       /* s is this exchange's own: ended with it */
	pthread_mutex_t mu;
	pthread_cond_t cond;
	int owed;	   /* final sends still expected */
	int status;	   /* HTTP status of the answer */
	int sse;	   /* notifications are streamed */
	int nr_notes;	   /* notifications queued */
	int gone;	   /* the client went away / the end */
	struct strbuf out; /* SSE bytes not yet written */
	size_t off;
	/*
	 * Where the answer's event starts in out (SIZE_MAX: not there):
	 * the stream gives it in a write of its own, after the
	 * notifications before it (Documentation/protocol/mcp.md "Protocol",
	 * progress).
	 */
	size_t final_at;
	struct strbuf final; /* the answer as plain JSON */
	int have_final;
	int fd;
	uint64_t last_write_ms;
};

static void add_event(struct strbuf *out, const char *msg, size_t len)
{
	strbuf_addstr(out, "event: message\ndata: ");
	strbuf_add(out, msg, len);
	strbuf_addstr(out, "\n\n");
}

static void x_send(struct mcp_chan *ch, const char *msg, size_t len, int final,
		   int status)
{
	struct exchange *x = (struct exchange *)ch;

	pthread_mutex_lock(&x->mu);
	if (final) {
		x->owed--;
		if (msg && !x->have_final) {
			strbuf_add(&x->final, msg, len);
			x->have_final = 1;
			x->status = status;
			if (x->sse && !x->gone) {
				x->final_at = x->out.len;
				add_event(&x->out, msg, len);
			}
		}
	} else if (x->sse && !x->gone && msg &&
		   x->out.len + len < SSE_QUEUE_CAP) {
		add_event(&x->out, msg, len);
		x->nr_notes++;
	}
	pthread_cond_broadcast(&x->cond);
	pthread_mutex_unlock(&x->mu);
}

static void x_destroy(struct mcp_chan *ch)
{
	struct exchange *x = (struct exchange *)ch;

	strbuf_release(&x->out);
	strbuf_release(&x->final);
	pthread_mutex_destroy(&x->mu);
	pthread_cond_destroy(&x->cond);
	free(x);
}

static struct exchange *x_new(struct http_server *hs, struct mcp_session *s,
			      int fd)
{
	struct exchange *x = xcalloc(1, sizeof(*x));

	mcp_chan_init(&x->ch);
	x->ch.send = x_send;
	x->ch.destroy = x_destroy;
	x->hs = hs;
	x->s = s;
	x->status = 200;
	x->fd = fd;
	x->final_at = SIZE_MAX;
	pthread_mutex_init(&x->mu, NULL);
	pthread_cond_init(&x->cond, NULL);
	strbuf_init(&x->out, 0);
	strbuf_init(&x->final, 0);
	x->last_write_ms = monotonic_ms();
	return x;
}

/* the client closed its end of the connection */
static int peer_closed(int fd)
{
	struct pollfd p = { fd, POLLRDHUP, 0 };

	if (fd < 0)
		return 0;
	return poll(&p, 1, 0) > 0 &&
	       (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

static void timed_wait(pthread_cond_t *cond, pthread_mutex_t *mu, int ms)
{
	struct timespec ts;

	deadline_in_ms(&ts, CLOCK_REALTIME, ms > 0 ? (uint64_t)ms : 0);
	pthread_cond_timedwait(cond, mu, &ts);
}

/* the end of an exchange: cancel what still runs, drop the session */
static void x_finish(struct exchange *x)
{
	int owed;

	pthread_mutex_lock(&x->mu);
	x->gone = 1;
	owed = x->owed;
	pthread_mutex_unlock(&x->mu);
	if (owed > 0)
		mcp_session_cancel_chan(x->s, &x->ch);
	mcp_session_put(x->s);
	/* a stateless request's state: its sandboxes go with it */
	if (x->own_session)
		mcp_session_end(x->s, 0);
	x->s = NULL;
	mcp_chan_unref(&x->ch);
}

static ssize_t sse_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct exchange *x = cls;
	size_t n;

	pthread_mutex_lock(&x->mu);
	while (x->off == x->out.len) {
		strbuf_reset(&x->out);
		x->off = 0;
		x->final_at = SIZE_MAX;
		if (x->owed <= 0) {
			pthread_mutex_unlock(&x->mu);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		if (x->gone || atomic_load(&x->hs->stopping)) {
			pthread_mutex_unlock(&x->mu);
			return MHD_CONTENT_READER_END_WITH_ERROR;
		}
		timed_wait(&x->cond, &x->mu, WAIT_SLICE_MS);
		if (x->off == x->out.len && peer_closed(x->fd)) {
			/* closing the stream cancels the call */
			pthread_mutex_unlock(&x->mu);
			return MHD_CONTENT_READER_END_WITH_ERROR;
		}
		if (x->off == x->out.len &&
		    monotonic_ms() - x->last_write_ms >= KEEPALIVE_MS)
			strbuf_addstr(&x->out, ": keep-alive\n\n");
	}
	n = x->out.len - x->off;
	/* the notifications first, the answer in the next write */
	if (x->final_at != SIZE_MAX && x->off < x->final_at)
		n = x->final_at - x->off;
	if (n > max)
		n = max;
	memcpy(buf, x->out.buf + x->off, n);
	x->off += n;
	x->last_write_ms = monotonic_ms();
	pthread_mutex_unlock(&x->mu);
	return n;
}

static void sse_free(void *cls)
{
	x_finish(cls);
}

/* ---- replies ---- */

struct conn {
	struct strbuf body;
	int authorized; /* the bearer token (or --dev) */
	int too_large;
	int reject;	 /* HTTP status decided before the body */
	int reject_code; /* JSON-RPC code of that answer */
	const char *reject_msg;
};

static enum MHD_Result queue(struct MHD_Connection *c, unsigned status,
			     struct MHD_Response *resp)
{
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static struct MHD_Response *buf_response(struct strbuf *body, const char *ctype)
{
	size_t len;
	char *buf = strbuf_detach(body, &len);
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		len, buf, MHD_RESPMEM_MUST_FREE);

	if (!resp) {
		free(buf);
		return NULL;
	}
	if (ctype)
		MHD_add_response_header(resp, "Content-Type", ctype);
	return resp;
}

static enum MHD_Result reply_error(struct MHD_Connection *c, unsigned status,
				   int code, const char *msg)
{
	struct strbuf body = STRBUF_INIT;
	struct MHD_Response *resp;

	mcp_error_msg(&body, NULL, code, msg, NULL);
	resp = buf_response(&body, "application/json");
	if (resp && status == 401)
		MHD_add_response_header(resp, "WWW-Authenticate", "Bearer");
	if (resp && status == 405)
		MHD_add_response_header(resp, "Allow", "POST, DELETE");
	return queue(c, status, resp);
}

static enum MHD_Result reply_empty(struct MHD_Connection *c, unsigned status)
{
	struct strbuf body = STRBUF_INIT;

	return queue(c, status, buf_response(&body, NULL));
}

/* ---- checks ---- */

static const char *header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

static int conn_fd(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

	return ci ? ci->connect_fd : -1;
}

/* ---- sessions ---- */

/* the session with this id, with a busy reference; or NULL */
static struct mcp_session *get_session(struct http_server *hs, const char *id)
{
	struct mcp_session *s = NULL;

	pthread_mutex_lock(&hs->mu);
	for (struct hsess *e = hs->sessions; e; e = e->next)
		if (!strcmp(mcp_session_id(e->s), id)) {
			s = e->s;
			mcp_session_get(s);
			break;
		}
	pthread_mutex_unlock(&hs->mu);
	return s;
}

/* a name of MCP_META_SESSION: [A-Za-z0-9._-]{1,64} */
static int valid_state_name(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > 64)
		return 0;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("._-", *p))
			return 0;
	return 1;
}

/*
 * The state a 2026-07-28 request names (MCP_META_SESSION): the
 * session whose id is "~<name>", made on first use. NULL when the
 * session table is full.
 */
static struct mcp_session *get_named_state(struct http_server *hs,
					   const char *name)
{
	struct strbuf id = STRBUF_INIT;
	struct mcp_session *s = NULL;

	strbuf_addf(&id, "~%s", name);
	pthread_mutex_lock(&hs->mu);
	for (struct hsess *e = hs->sessions; e && !s; e = e->next)
		if (!strcmp(mcp_session_id(e->s), id.buf))
			s = e->s;
	if (!s && hs->nr_sessions < MAX_SESSIONS) {
		struct hsess *e = xcalloc(1, sizeof(*e));

		s = e->s = mcp_session_new(hs->srv, id.buf, id.buf, 1);
		e->next = hs->sessions;
		hs->sessions = e;
		hs->nr_sessions++;
	}
	if (s)
		mcp_session_get(s);
	pthread_mutex_unlock(&hs->mu);
	strbuf_release(&id);
	return s;
}

/* remove the session with this id from the table; NULL if unknown */
static struct mcp_session *take_session(struct http_server *hs, const char *id)
{
	struct mcp_session *s = NULL;

	pthread_mutex_lock(&hs->mu);
	for (struct hsess **p = &hs->sessions; *p; p = &(*p)->next)
		if (!strcmp(mcp_session_id((*p)->s), id)) {
			struct hsess *e = *p;

			s = e->s;
			*p = e->next;
			free(e);
			hs->nr_sessions--;
			break;
		}
	pthread_mutex_unlock(&hs->mu);
	return s;
}

static void new_session_id(char *hex /* 33 bytes */)
{
	unsigned char rnd[16];

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		/* not expected on Linux >= 3.17; still unpredictable-ish */
		uint64_t t = monotonic_us() ^ ((uint64_t)getpid() << 32);

		for (size_t i = 0; i < sizeof(rnd); i++)
			rnd[i] = (unsigned char)(t >> (8 * (i % 8))) ^
				 (unsigned char)(i * 131);
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
}

/* ---- POST ---- */

static int accept_ok(const char *accept)
{
	return !accept || strstr(accept, "application/json") ||
	       strstr(accept, "text/event-stream") || strstr(accept, "*/*") ||
	       strstr(accept, "application/*");
}

/* =?base64?...?= header values of 2026-07-28, decoded into out */
static void header_value(const char *v, struct strbuf *out)
{
	size_t n = strlen(v);

	strbuf_reset(out);
	if (n > 12 && starts_with(v, "=?base64?") && ends_with(v, "?=") &&
	    !base64_decode_into(out, v + 9, n - 11))
		return;
	strbuf_addstr(out, v);
}

/* 2026-07-28 headers must agree with the body; 0 or -1 (*msg set) */
static int check_modern_headers(struct MHD_Connection *c, json_t *msg,
				struct strbuf *why)
{
	const char *pv = header(c, "MCP-Protocol-Version");
	const char *mm = header(c, "Mcp-Method");
	const char *mn = header(c, "Mcp-Name");
	json_t *params = json_object_get(msg, "params");
	json_t *meta = json_object_get(params, "_meta");
	const char *ver = json_object_str(meta, MCP_META_VERSION);
	const char *method = mcp_message_method(msg);
	struct strbuf v = STRBUF_INIT;
	int ret = 0;

	if (pv && ver && strcmp(pv, ver)) {
		strbuf_addf(why,
			    "Header mismatch: MCP-Protocol-Version header "
			    "value '%s' does not match body value '%s'",
			    pv, ver);
		ret = -1;
	} else if (mm && method &&
		   (header_value(mm, &v), strcmp(v.buf, method))) {
		strbuf_addf(why,
			    "Header mismatch: Mcp-Method header value '%s' "
			    "does not match body value '%s'",
			    v.buf, method);
		ret = -1;
	} else if (mn && json_object_str(params, "name") &&
		   (header_value(mn, &v),
		    strcmp(v.buf, json_object_str(params, "name")))) {
		strbuf_addf(why,
			    "Header mismatch: Mcp-Name header value '%s' "
			    "does not match body value '%s'",
			    v.buf, json_object_str(params, "name"));
		ret = -1;
	}
	strbuf_release(&v);
	return ret;
}

/*
 * Wait for the answer (JSON) or start the SSE stream. x holds a busy
 * reference on its session and is released here or by the stream.
 */
static enum MHD_Result answer(struct MHD_Connection *c, struct exchange *x,
			      const char *new_sid)
{
	struct MHD_Response *resp;
	struct strbuf body = STRBUF_INIT;
	unsigned status;

	pthread_mutex_lock(&x->mu);
	while (x->owed > 0 && !x->sse) {
		if (atomic_load(&x->hs->stopping) || peer_closed(x->fd)) {
			pthread_mutex_unlock(&x->mu);
			x_finish(x);
			return MHD_NO;
		}
		timed_wait(&x->cond, &x->mu, WAIT_SLICE_MS);
	}
	if (x->owed > 0) {
		/* an SSE stream: events as they come, the answer last */
		pthread_mutex_unlock(&x->mu);
		resp = MHD_create_response_from_callback(
			MHD_SIZE_UNKNOWN, 64 * 1024, sse_reader, x, sse_free);
		if (!resp) {
			x_finish(x);
			return MHD_NO;
		}
		MHD_add_response_header(resp, "Content-Type",
					"text/event-stream");
		MHD_add_response_header(resp, "Cache-Control",
					"no-cache, no-transform");
		MHD_add_response_header(resp, "X-Accel-Buffering", "no");
		return queue(c, 200, resp);
	}
	if (x->have_final) {
		strbuf_addbuf(&body, &x->final);
		status = x->status;
	} else {
		status = 202; /* notifications only, or cancelled */
	}
	pthread_mutex_unlock(&x->mu);
	x_finish(x);
	resp = buf_response(&body, status == 202 ? NULL : "application/json");
	if (resp && new_sid)
		MHD_add_response_header(resp, "Mcp-Session-Id", new_sid);
	return queue(c, status, resp);
}

static enum MHD_Result handle_post(struct MHD_Connection *c,
				   struct http_server *hs, struct conn *k)
{
	const char *ctype = header(c, "Content-Type");
	const char *accept = header(c, "Accept");
	const char *sid = header(c, "Mcp-Session-Id");
	const char *pv = header(c, "MCP-Protocol-Version");
	struct strbuf err = STRBUF_INIT, why = STRBUF_INIT;
	struct mcp_session *s = NULL;
	struct exchange *x;
	char new_sid[33] = "", label[9];
	int is_init = 0, batch, own = 0;
	enum MHD_Result ret;
	const char *method;
	json_t *v;

	if (!ctype || strncasecmp(ctype, "application/json", 16))
		return reply_error(c, 415, MCP_INVALID_REQUEST,
				   "Unsupported Media Type: Content-Type "
				   "must be application/json");
	if (!accept_ok(accept))
		return reply_error(c, 406, MCP_INVALID_REQUEST,
				   "Not Acceptable: Accept must list "
				   "application/json or text/event-stream");
	v = json_parse(k->body.buf, k->body.len, &err);
	if (!v) {
		strbuf_addf(&why, "Parse error: %s", err.buf);
		ret = reply_error(c, 400, MCP_PARSE_ERROR, why.buf);
		goto out;
	}
	batch = json_is_array(v);
	method = mcp_message_method(v);
	if (!batch && method && !strcmp(method, "initialize") &&
	    json_object_get(v, "id")) {
		is_init = 1;
		if (sid) {
			ret = reply_error(c, 400, MCP_INVALID_REQUEST,
					  "Invalid Request: Server already "
					  "initialized (send initialize "
					  "without Mcp-Session-Id for a new "
					  "session)");
			goto out;
		}
		pthread_mutex_lock(&hs->mu);
		if (hs->nr_sessions >= MAX_SESSIONS) {
			pthread_mutex_unlock(&hs->mu);
			ret = reply_error(c, 503, MCP_INTERNAL_ERROR,
					  "Service Unavailable: too many "
					  "sessions");
			goto out;
		}
		pthread_mutex_unlock(&hs->mu);
		new_session_id(new_sid);
		/* its label: the first 8 characters of the id */
		snprintf(label, sizeof(label), "%.8s", new_sid);
		s = mcp_session_new(hs->srv, new_sid, label, 0);
		mcp_session_get(s);
	} else if (!batch && mcp_message_is_modern(v)) {
		if (check_modern_headers(c, v, &why) < 0) {
			ret = reply_error(c, 400, MCP_HEADER_MISMATCH, why.buf);
			goto out;
		}
		const char *name = mcp_message_meta_string(v, MCP_META_SESSION);

		if (sid && (s = get_session(hs, sid))) {
			; /* a session the client has */
		} else if (name && !valid_state_name(name)) {
			ret = reply_error(
				c, 400, MCP_INVALID_PARAMS,
				"Bad Request: _meta \"" MCP_META_SESSION
				"\" must be 1 to 64 of A-Z a-z 0-9 . _ "
				"-");
			goto out;
		} else if (name) {
			if (!(s = get_named_state(hs, name))) {
				ret = reply_error(c, 503, MCP_INTERNAL_ERROR,
						  "Service Unavailable: too "
						  "many sessions");
				goto out;
			}
		} else {
			/* no two clients share state they did not name */
			s = mcp_session_new(hs->srv, NULL, "stateless", 1);
			mcp_session_get(s);
			own = 1;
		}
	} else {
		if (!sid) {
			ret = reply_error(
				c, 400, MCP_INVALID_PARAMS,
				"Bad Request: Mcp-Session-Id header is "
				"required (or _meta \"" MCP_META_VERSION
				"\" for 2026-07-28)");
			goto out;
		}
		if (!(s = get_session(hs, sid))) {
			ret = reply_error(c, 404, -32001, "Session not found");
			goto out;
		}
		/*
		 * Any revision we speak is served, as the official SDK
		 * does (a client may send another one than it negotiated,
		 * e.g. the conformance suite's 2025-03-26 on a 2025-11-25
		 * session); only an unknown or malformed value is 400.
		 */
		if (pv && mcp_rev_parse(pv) == MCP_REV_NONE) {
			mcp_session_put(s);
			strbuf_addf(&why,
				    "Bad Request: Unsupported protocol "
				    "version '%.64s' (supported versions: ",
				    pv);
			for (int i = 0; i < MCP_REV_NR; i++)
				strbuf_addf(&why, "%s%s", i ? ", " : "",
					    mcp_rev_name(i));
			strbuf_addch(&why, ')');
			ret = reply_error(c, 400, MCP_INVALID_REQUEST, why.buf);
			goto out;
		}
	}

	x = x_new(hs, s, conn_fd(c));
	x->own_session = own;
	if (batch) {
		x->owed = 1;
		mcp_handle_batch(s, v, &x->ch);
	} else {
		x->sse = accept && strstr(accept, "text/event-stream") &&
			 mcp_message_may_stream(s, v);
		x->owed = mcp_message_expects_answer(v);
		mcp_handle_message(s, v, &x->ch);
	}
	if (is_init) {
		if (mcp_session_rev(s) == MCP_REV_NONE) {
			new_sid[0] = '\0'; /* initialize failed */
		} else {
			struct hsess *e = xcalloc(1, sizeof(*e));

			e->s = s;
			pthread_mutex_lock(&hs->mu);
			e->next = hs->sessions;
			hs->sessions = e;
			hs->nr_sessions++;
			pthread_mutex_unlock(&hs->mu);
		}
	}
	if (is_init && !new_sid[0]) {
		/* answer (synchronous), then end the session that never was */
		ret = answer(c, x, NULL);
		mcp_session_end(s, -1);
	} else {
		ret = answer(c, x, new_sid[0] ? new_sid : NULL);
	}
out:
	if (v)
		json_decref(v);
	strbuf_release(&err);
	strbuf_release(&why);
	return ret;
}

/* ---- DELETE, routing ---- */

static enum MHD_Result handle_delete(struct MHD_Connection *c,
				     struct http_server *hs)
{
	const char *sid = header(c, "Mcp-Session-Id");
	struct mcp_session *s;

	if (!sid)
		return reply_error(c, 400, MCP_INVALID_REQUEST,
				   "Bad Request: Mcp-Session-Id header is "
				   "required");
	if (!(s = take_session(hs, sid)))
		return reply_error(c, 404, -32001, "Session not found");
	/* running calls are cancelled; the toolsets close the sandboxes */
	mcp_session_end(s, DELETE_WAIT_MS);
	return reply_empty(c, 204);
}

/* checks that need no body: set k->reject */
static void precheck(struct MHD_Connection *c, struct http_server *hs,
		     struct conn *k, const char *url, const char *method)
{
	const char *origin = header(c, "Origin");
	const char *len = header(c, "Content-Length");

	k->authorized = hs->h->dev || http_bearer_ok(header(c, "Authorization"),
						     hs->h->token);
	if (strcmp(url, "/mcp")) {
		k->reject = 404;
		k->reject_code = MCP_INVALID_REQUEST;
		k->reject_msg = "Not Found: the MCP endpoint is /mcp";
	} else if (origin && !http_origin_local(origin)) {
		k->reject = 403;
		k->reject_code = MCP_INVALID_REQUEST;
		k->reject_msg = "Forbidden: Origin not allowed";
	} else if (!k->authorized) {
		k->reject = 401;
		k->reject_code = MCP_INVALID_REQUEST;
		k->reject_msg = "Unauthorized: Authorization: Bearer <token> "
				"is required";
	} else if (strcmp(method, "POST") && strcmp(method, "DELETE")) {
		k->reject = 405;
		k->reject_code = MCP_INVALID_REQUEST;
		k->reject_msg = "Method Not Allowed: use POST (or DELETE to "
				"end a session)";
	} else if (atomic_load(&hs->stopping)) {
		k->reject = 503;
		k->reject_code = MCP_INTERNAL_ERROR;
		k->reject_msg = "Service Unavailable: shutting down";
	} else if (len && strtoull(len, NULL, 10) > MCP_MAX_MESSAGE) {
		k->too_large = 1;
	}
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c,
			       const char *url, const char *method,
			       const char *version, const char *upload_data,
			       size_t *upload_data_size, void **con_cls)
{
	struct http_server *hs = cls;
	struct conn *k = *con_cls;

	if (!k) {
		k = xcalloc(1, sizeof(*k));
		strbuf_init(&k->body, 0);
		*con_cls = k;
		precheck(c, hs, k, url, method);
		/* a client with the token: no pre-authentication limits */
		if (k->authorized && k->reject != 403)
			http_guard_trust(hs->guard, c);
		if (k->too_large)
			return reply_error(c, 413, MCP_INVALID_REQUEST,
					   "Payload Too Large: more than "
					   "64 MiB");
		return MHD_YES;
	}
	if (*upload_data_size) {
		size_t n = *upload_data_size;

		*upload_data_size = 0;
		if (k->reject || k->too_large)
			return MHD_YES;
		if (k->body.len + n > MCP_MAX_MESSAGE) {
			k->too_large = 1;
			strbuf_release(&k->body);
			return MHD_YES;
		}
		strbuf_add(&k->body, upload_data, n);
		return MHD_YES;
	}
	if (k->reject)
		return reply_error(c, k->reject, k->reject_code, k->reject_msg);
	if (k->too_large)
		return reply_error(c, 413, MCP_INVALID_REQUEST,
				   "Payload Too Large: more than 64 MiB");
	if (!strcmp(method, "DELETE"))
		return handle_delete(c, hs);
	return handle_post(c, hs, k);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct conn *k = *con_cls;

	if (!k)
		return;
	strbuf_release(&k->body);
	free(k);
	*con_cls = NULL;
}

static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
	/* libmicrohttpd's own chatter (client resets...) stays quiet */
}

/* ---- listening ---- */

/* bind and listen on addr (loopback unless a host is named) */
static int listen_on(const char *addr, struct strbuf *url)
{
	struct listen_info li;
	int fd = listen_address(addr, "127.0.0.1", 64, &li);

	if (fd < 0)
		return -1;
	if (li.unix_path) {
		/* HTTP clients of MCP speak TCP: keep it simple */
		close(fd);
		unlink(li.unix_path);
		listen_info_release(&li);
		return error("--http wants host:port, not a unix socket");
	}
	strbuf_addstr(url, "http://");
	listen_describe(&li, url);
	strbuf_addstr(url, "/mcp");
	if (!listen_is_loopback(&li))
		warning("--http=%s is not a loopback address: anyone who can "
			"reach it and has the token can run code here",
			addr);
	listen_info_release(&li);
	return fd;
}

/* end idle sessions (all of them when stopping) */
static void reap_sessions(struct http_server *hs, int all)
{
	uint64_t now = monotonic_ms();
	struct mcp_session *done[MAX_SESSIONS];
	int nr = 0;

	pthread_mutex_lock(&hs->mu);
	for (struct hsess **p = &hs->sessions; *p;) {
		struct hsess *e = *p;

		if (all || (!mcp_session_busy(e->s) &&
			    now - mcp_session_last_used(e->s) >=
				    (uint64_t)hs->idle_ms)) {
			done[nr++] = e->s;
			*p = e->next;
			free(e);
			hs->nr_sessions--;
			continue;
		}
		p = &e->next;
	}
	pthread_mutex_unlock(&hs->mu);
	for (int i = 0; i < nr; i++) {
		if (!all)
			mcp_log_stderr("gosbx mcp: session %s idle, ending "
				       "it",
				       mcp_session_label(done[i]));
		mcp_session_end(done[i], all ? SHUTDOWN_WAIT_MS : -1);
	}
}

int mcp_serve_http(struct mcp_server *srv, const struct mcp_http_opts *h,
		   int stop_fd)
{
	struct http_server hs = { 0 };
	struct strbuf url = STRBUF_INIT;
	struct MHD_Daemon *d;
	int lfd;
	/* 300 s of idle time once authenticated, as before */
	struct http_guard_opts go = { 0, 300, 0, 0 };

	hs.srv = srv;
	hs.h = h;
	hs.idle_ms =
		h->session_idle_ms > 0 ? h->session_idle_ms : 60 * 60 * 1000;
	pthread_mutex_init(&hs.mu, NULL);
	atomic_init(&hs.stopping, 0);
	if ((lfd = listen_on(h->addr, &url)) < 0) {
		strbuf_release(&url);
		pthread_mutex_destroy(&hs.mu);
		return -1;
	}
	hs.guard = http_guard_new(&go);
	d = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD |
			MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
			MHD_USE_ERROR_LOG,
		0, NULL, NULL, handler, &hs, MHD_OPTION_LISTEN_SOCKET, lfd,
		MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
		MHD_OPTION_NOTIFY_CONNECTION, http_guard_notify, hs.guard,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, NULL,
		MHD_OPTION_CONNECTION_TIMEOUT,
		http_guard_head_timeout(hs.guard), MHD_OPTION_CONNECTION_LIMIT,
		(unsigned int)1000, MHD_OPTION_THREAD_STACK_SIZE,
		(size_t)(512 * 1024), MHD_OPTION_END);
	if (!d) {
		close(lfd);
		strbuf_release(&url);
		http_guard_free(hs.guard);
		pthread_mutex_destroy(&hs.mu);
		return error("cannot start the HTTP server on '%s'", h->addr);
	}
	mcp_log_stderr("gosbx mcp: listening on %s", url.buf);
	for (;;) {
		struct pollfd p = { stop_fd, POLLIN, 0 };
		int n = poll(&p, stop_fd >= 0 ? 1 : 0, 1000);

		if (n < 0 && errno != EINTR)
			break;
		if (n > 0)
			break;
		reap_sessions(&hs, 0);
		http_guard_tick(hs.guard);
	}
	atomic_store(&hs.stopping, 1);
	reap_sessions(&hs, 1);
	MHD_stop_daemon(d);
	http_guard_free(hs.guard);
	strbuf_release(&url);
	pthread_mutex_destroy(&hs.mu);
	return 0;
}

/*
 * Interactive commands on the gosbx side (interactive.h): the
 * WebSocket channel of feature exec-interactive, and the exec-input
 * fallback for proxies that carry plain HTTP only.
 */
#include "compat.h"
#include "parse-options.h"
#include "session/interactive.h"
#include "http.h"
#include "json.h"
#include "proto/channel.h"
#include "proto/exec-events.h"
#include "strvec.h"
#include "usage.h"
#include "session/websocket.h"

#include <fcntl.h>
#include <pthread.h>
#include <time.h>

/* the largest message taken from the runtime (its chunks are 256 KiB) */
#define MAX_MSG (4u << 20)
/* stdin in one message, and in one POST of the exec-input transport */
#define WS_CHUNK (64 * 1024)
#define POST_CHUNK (1u << 20)

enum transport { IA_WS, IA_HTTP, IA_BACKEND };

/* records from the output thread (exec-input) to interactive_step() */
enum record { REC_STDOUT = 1, REC_STDERR = 2, REC_EXIT = 3, REC_ERROR = 4 };

struct interactive {
	struct session *s;
	struct interactive_opts o;
	enum transport mode;
	int done;      /* the exit status arrived */
	int failed;    /* the channel broke (reported) */
	int cancelled; /* opts.cancel or on_output stopped it */
	int eof_given; /* interactive_eof() */
	json_t *exit;  /* the exit event */
	size_t out_total, err_total;
	char rid[17]; /* X-Request-ID of the command */

	/* IA_WS */
	struct ws_client ws; /* ws.conn once open */

	/* IA_BACKEND: the state of s->ops->proc */
	void *bp;

	/* IA_HTTP */
	struct http_client *in_http;  /* the input requests' connection */
	struct http_client *out_http; /* the output stream's: s->http stays
				       * free for the caller meanwhile */
	pthread_t out_thread, in_thread;
	int threads;
	int pipe[2]; /* records from the output thread */
	int wake[2]; /* the input thread made room in inq */
	struct strbuf rec;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	struct strbuf inq;		 /* stdin not yet posted */
	int inq_eof;			 /* post eof after inq */
	struct strvec ctrlq;		 /* control messages not yet posted */
	int started;			 /* the "started" event arrived */
	int stop;			 /* the threads are to stop */
	int in_dead;			 /* the input thread gave up */
	volatile sig_atomic_t abort_req; /* stops their requests */
	struct strbuf body;		 /* the POST /v1/exec body */
	struct strbuf line;		 /* an event line being assembled */
	int bad_stream;
};

/* The start message / POST /v1/exec body (Documentation/gosbx-runtime.txt). */
static void build_body(const struct interactive_opts *o, int http,
		       struct strbuf *out)
{
	json_t *b = json_object(), *env;

	if (!http)
		json_object_set_new(b, "type", json_string("start"));
	json_object_set_new(b, "command", json_string(o->command));
	if (o->timeout_ms > 0)
		json_object_set_new(b, "timeout_ms",
				    json_integer(o->timeout_ms));
	if (o->env && o->env[0]) {
		env = json_object();
		for (const char *const *p = o->env; *p; p++) {
			const char *eq = strchr(*p, '=');
			char *k;

			if (!eq)
				continue;
			k = xstrndup(*p, eq - *p);
			json_object_set_new(env, k, json_string(eq + 1));
			free(k);
		}
		json_object_set_new(b, "env", env);
	}
	if (o->cwd && *o->cwd)
		json_object_set_new(b, "cwd", json_string(o->cwd));
	if (o->tty) {
		json_object_set_new(b, "tty", json_true());
		if (o->tty_raw)
			json_object_set_new(b, "tty_raw", json_true());
		if (o->cols && o->rows && o->cols < 65536 && o->rows < 65536) {
			json_object_set_new(b, "cols", json_integer(o->cols));
			json_object_set_new(b, "rows", json_integer(o->rows));
		}
	}
	if (http)
		json_object_set_new(b, "stdin_stream", json_true());
	json_dump_into(out, b);
	json_decref(b);
}

/* A message of the runtime, made safe to print: printable ASCII only. */
static void add_printable(struct strbuf *out, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len && i < 200; i++)
		strbuf_addch(out, p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?');
}

static int deliver(struct interactive *ia, int stream, const char *buf,
		   size_t len)
{
	if (stream == 1)
		ia->out_total += len;
	else
		ia->err_total += len;
	if (!len || ia->cancelled)
		return 0;
	if (ia->o.on_output(stream, buf, len, ia->o.data) < 0) {
		ia->cancelled = 1;
		return -1;
	}
	return 0;
}

static int take_exit(struct interactive *ia, const char *buf, size_t len)
{
	struct exec_event ev = EXEC_EVENT_INIT;

	if (exec_event_parse(&ev, buf, len, NULL) ||
	    ev.type != EXEC_EVENT_EXIT) {
		exec_event_release(&ev);
		return error("the runtime sent a malformed exit status");
	}
	json_decref(ia->exit);
	ia->exit = json_incref(ev.json);
	ia->done = 1;
	exec_event_release(&ev);
	return 0;
}

/* ---- IA_WS ---- */

static void ws_on_msg(struct ws_conn *conn, int opcode, const uint8_t *data,
		      size_t len, uint16_t code, void *cb_data)
{
	struct interactive *ia = cb_data;
	const char *msg = (const char *)data;

	const void *payload;
	size_t plen;
	unsigned ch;

	if (opcode == WS_CLOSE) {
		if (!ia->done && !ia->failed && !ia->cancelled) {
			struct strbuf why = STRBUF_INIT;

			add_printable(&why, msg, len);
			error("the runtime closed the interactive channel "
			      "(code %u)%s%s",
			      code, why.len ? ": " : "", why.buf);
			strbuf_release(&why);
			ia->failed = 1;
		}
		return;
	}
	if (opcode != WS_BINARY || ia->failed ||
	    exec_channel_split(msg, len, &ch, &payload, &plen) < 0)
		return;
	switch (ch) {
	case EXEC_CH_STDOUT:
	case EXEC_CH_STDERR:
		if (ia->done)
			return; /* nothing counts after the exit status */
		if (deliver(ia, (int)ch, payload, plen) < 0)
			ws_conn_stop_reading(conn);
		break;
	case EXEC_CH_STATUS:
		if (!ia->done && take_exit(ia, payload, plen) < 0)
			ia->failed = 1;
		break;
	default:
		break; /* a newer runtime's channel: not ours */
	}
}

static void ws_send_control(struct interactive *ia, const char *json)
{
	struct strbuf sb = STRBUF_INIT;

	exec_channel_frame(&sb, EXEC_CH_CONTROL, json, strlen(json));
	ws_conn_send(&ia->ws.conn, WS_BINARY, sb.buf, sb.len);
	strbuf_release(&sb);
}

/*
 * 0: open, 1: refused on the way (ws.status and ws.body say how),
 * -1: failed (reported).
 */
static int ws_open(struct interactive *ia)
{
	struct strbuf body = STRBUF_INIT;
	const char *env = getenv("GOSBX_WS_TIMEOUT");
	int64_t timeout_ms = 0;
	int r;

	/* gosbx(1) ENVIRONMENT: how long an upgrade may go unanswered */
	if (env && *env &&
	    (parse_duration_ms(env, &timeout_ms) < 0 || timeout_ms <= 0))
		return error("GOSBX_WS_TIMEOUT: '%s' is not a duration (e.g. "
			     "30s)",
			     env);
	r = ws_client_open(&ia->ws, ia->s->http, "/v1/exec",
			   EXEC_CHANNEL_PROTOCOL, NULL, timeout_ms,
			   ia->o.cancel, ia->rid, MAX_MSG, ws_on_msg, ia);
	if (r)
		return r;
	build_body(&ia->o, 0, &body);
	ws_send_control(ia, body.buf);
	strbuf_release(&body);
	ia->mode = IA_WS;
	return 0;
}

/*
 * poll() our own nr_own descriptors (pfd[0..nr_own-1], room after them
 * for n more) with the caller's n extra ones appended; the extras get
 * their revents back (0 when poll() saw nothing or failed).
 */
static int poll_with_extra(struct pollfd *pfd, unsigned nr_own,
			   struct pollfd *extra, unsigned n, int wait_ms)
{
	int r;

	for (unsigned i = 0; i < n; i++) {
		pfd[nr_own + i] = extra[i];
		pfd[nr_own + i].revents = 0;
	}
	r = poll(pfd, nr_own + n, wait_ms);
	for (unsigned i = 0; i < n; i++)
		extra[i].revents = r > 0 ? pfd[nr_own + i].revents : 0;
	return r;
}

/* The runtime broke the protocol: say how (0), or nothing to say (-1). */
static int ws_broken(struct interactive *ia)
{
	struct strbuf err = STRBUF_INIT;

	if (!ws_conn_error(&ia->ws.conn, &err))
		return -1;
	error("the interactive channel broke: %s", err.buf);
	strbuf_release(&err);
	return 0;
}

static int ws_step(struct interactive *ia, int wait_ms, struct pollfd *extra,
		   unsigned nr_extra)
{
	struct ws_conn *conn = &ia->ws.conn;
	struct pollfd pfd[1 + 8];
	unsigned n = nr_extra > 8 ? 8 : nr_extra;
	int r;

	/* TLS may hold decrypted bytes that poll() cannot see: read first */
	if (ws_conn_want_read(conn) && ws_conn_read(conn) < 0 && !conn->eof)
		return error("the interactive channel broke (bad data from "
			     "the runtime)");
	if (ia->done || ia->failed || ia->cancelled)
		goto out;
	ws_conn_write(conn);
	if (conn->eof)
		goto out;
	pfd[0].fd = ia->ws.sock;
	pfd[0].events = POLLIN | ws_conn_events(conn);
	pfd[0].revents = 0;
	r = poll_with_extra(pfd, 1, extra, n, wait_ms);
	if (r < 0 && errno != EINTR)
		return error_errno("poll");
	if (r > 0 && (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) &&
	    ws_conn_want_read(conn) && ws_conn_read(conn) < 0 && !conn->eof)
		return error("the interactive channel broke (bad data from "
			     "the runtime)");
	if (ws_conn_want_write(conn))
		ws_conn_write(conn);
out:
	if (ia->failed)
		return -1;
	if (ia->done)
		return 0;
	if (ia->cancelled)
		return -1;
	if (!ws_broken(ia))
		return -1;
	if (ws_conn_done(conn))
		return error("the connection to the runtime was lost before "
			     "the command's exit status");
	return 1;
}

/* ---- IA_HTTP ---- */

static void put_record(struct interactive *ia, enum record type,
		       const void *buf, size_t len)
{
	unsigned char h[5];

	h[0] = type;
	h[1] = len & 0xff;
	h[2] = (len >> 8) & 0xff;
	h[3] = (len >> 16) & 0xff;
	h[4] = (len >> 24) & 0xff;
	/* blocks while interactive_step() does not read: flow control */
	if (write_in_full(ia->pipe[1], h, sizeof(h)) < 0 ||
	    (len && write_in_full(ia->pipe[1], buf, len) < 0))
		ia->abort_req = 1;
}

static void http_event(struct interactive *ia, const char *line, size_t len)
{
	struct exec_event ev = EXEC_EVENT_INIT;
	int rc = exec_event_parse(&ev, line, len, NULL);
	int stream = exec_event_stream(ev.type);

	if (rc < 0) {
		ia->bad_stream = 1;
	} else if (rc) {
		; /* a newer runtime's event */
	} else if (ev.type == EXEC_EVENT_STARTED) {
		pthread_mutex_lock(&ia->mu);
		ia->started = 1;
		pthread_cond_broadcast(&ia->cond);
		pthread_mutex_unlock(&ia->mu);
	} else if (stream) {
		put_record(ia, stream == 1 ? REC_STDOUT : REC_STDERR,
			   ev.data.buf, ev.data.len);
	} else if (ev.type == EXEC_EVENT_EXIT) {
		put_record(ia, REC_EXIT, line, len);
	}
	exec_event_release(&ev);
}

static int http_line(const char *line, size_t len, void *data)
{
	struct interactive *ia = data;

	http_event(ia, line, len);
	return ia->abort_req ? -1 : 0;
}

static int http_data(const char *buf, size_t len, void *data)
{
	struct interactive *ia = data;
	int rc = exec_event_split(&ia->line, buf, len, EXEC_EVENT_LINE_MAX,
				  http_line, ia);

	if (rc == EXEC_EVENT_OVERLONG)
		ia->bad_stream = 1;
	return rc < 0 ? -1 : 0;
}

static void *out_main(void *arg)
{
	struct interactive *ia = arg;
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { 0 };
	struct strbuf msg = STRBUF_INIT;
	int rc;

	req.method = "POST";
	req.path = "/v1/exec";
	req.body = ia->body.buf;
	req.body_len = ia->body.len;
	req.content_type = "application/json";
	req.on_data = http_data;
	req.on_data_arg = ia;
	req.cancel = &ia->abort_req;
	req.id_out = ia->rid;
	rc = http_request(ia->out_http, &req, &resp);
	if (ia->bad_stream)
		strbuf_addstr(&msg, "the runtime sent a malformed output "
				    "stream");
	else if (rc == HTTP_ABORTED)
		strbuf_addstr(&msg, "cancelled");
	else if (rc < 0)
		strbuf_addstr(&msg, last_error());
	else if (resp.status != 200) {
		strbuf_addstr(&msg, "interactive command failed: ");
		http_error_text(&msg, resp.status, &resp.body);
	}
	if (msg.len)
		put_record(ia, REC_ERROR, msg.buf, msg.len);
	close(ia->pipe[1]);
	ia->pipe[1] = -1;
	/* the input thread waits for "started": it will not come now */
	pthread_mutex_lock(&ia->mu);
	ia->stop = 1;
	pthread_cond_broadcast(&ia->cond);
	pthread_mutex_unlock(&ia->mu);
	strbuf_release(&msg);
	http_resp_release(&resp);
	return NULL;
}

/* One input request: 0 done, 1 the command takes no more, -1 failed. */
static int post_input(struct interactive *ia, const char *what,
		      const char *query, const char *body, size_t len)
{
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { 0 };
	struct strbuf path = STRBUF_INIT;
	unsigned tries = 0;
	int ret = 0, rc;

	strbuf_addf(&path, "/v1/exec/%s/%s", ia->rid, what);
	req.method = "POST";
	req.path = path.buf;
	req.query = query;
	req.body = body;
	req.body_len = len;
	req.content_type = strcmp(what, "control") ? "application/octet-stream"
						   : "application/json";
	req.cancel = &ia->abort_req;
	while ((rc = http_request(ia->in_http, &req, &resp)) >= 0 &&
	       session_stdin_retry(&resp, &tries, &ia->abort_req)) {
		http_resp_release(&resp);
		http_resp_init(&resp);
	}
	if (rc < 0)
		ret = -1;
	else if (session_stdin_busy(&resp)) {
		/* someone else held the input all along: say so */
		struct strbuf text = STRBUF_INIT;

		http_error_text(&text, resp.status, &resp.body);
		error("the runtime refused this input: %s", text.buf);
		strbuf_release(&text);
		ret = -1;
	} else if (resp.status == 404 || resp.status == 409)
		ret = 1; /* finished, or its input is closed */
	else if (resp.status != 204)
		ret = -1;
	strbuf_release(&path);
	http_resp_release(&resp);
	return ret;
}

static void *in_main(void *arg)
{
	struct interactive *ia = arg;
	struct strbuf chunk = STRBUF_INIT;

	pthread_mutex_lock(&ia->mu);
	for (;;) {
		int eof = 0, r = 0;
		char *ctrl = NULL;

		while (!ia->stop &&
		       (!ia->started ||
			(!ia->inq.len && !ia->inq_eof && !ia->ctrlq.nr)))
			pthread_cond_wait(&ia->cond, &ia->mu);
		if (ia->stop)
			break;
		if (ia->ctrlq.nr) {
			/* the oldest first */
			ctrl = (char *)ia->ctrlq.v[0];
			memmove(ia->ctrlq.v, ia->ctrlq.v + 1,
				ia->ctrlq.nr * sizeof(*ia->ctrlq.v));
			ia->ctrlq.nr--;
		} else {
			size_t n = ia->inq.len < POST_CHUNK ? ia->inq.len
							    : POST_CHUNK;

			strbuf_reset(&chunk);
			strbuf_add(&chunk, ia->inq.buf, n);
			strbuf_remove(&ia->inq, 0, n);
			eof = ia->inq_eof && !ia->inq.len;
			if (eof)
				ia->inq_eof = 0;
			pthread_cond_broadcast(&ia->cond);
			/* interactive_step() may wait for room: wake it */
			if (write(ia->wake[1], "", 1) < 0 && errno != EAGAIN)
				ia->in_dead = 1;
		}
		pthread_mutex_unlock(&ia->mu);
		if (ctrl)
			r = post_input(ia, "control", NULL, ctrl, strlen(ctrl));
		else if (chunk.len || eof)
			r = post_input(ia, "stdin", eof ? "eof=1" : NULL,
				       chunk.buf, chunk.len);
		free(ctrl);
		pthread_mutex_lock(&ia->mu);
		if (r) {
			/* the command takes no more input: drop the rest */
			ia->in_dead = 1;
			strbuf_reset(&ia->inq);
			ia->inq_eof = 0;
			if (r < 0)
				break;
		}
	}
	pthread_mutex_unlock(&ia->mu);
	strbuf_release(&chunk);
	return NULL;
}

static int http_open(struct interactive *ia)
{
	int fl;

	if (pipe2(ia->pipe, O_CLOEXEC) < 0 ||
	    pipe2(ia->wake, O_CLOEXEC | O_NONBLOCK) < 0)
		return error_errno("cannot create a pipe");
	fl = fcntl(ia->pipe[0], F_GETFL);
	fcntl(ia->pipe[0], F_SETFL, fl | O_NONBLOCK);
	ia->in_http = http_client_dup(ia->s->http);
	ia->out_http = http_client_dup(ia->s->http);
	if (!ia->in_http || !ia->out_http)
		return -1;
	build_body(&ia->o, 1, &ia->body);
	ia->mode = IA_HTTP;
	if (pthread_create(&ia->out_thread, NULL, out_main, ia))
		return error("cannot start a thread");
	ia->threads = 1;
	if (pthread_create(&ia->in_thread, NULL, in_main, ia)) {
		ia->abort_req = 1;
		return error("cannot start a thread");
	}
	ia->threads = 2;
	return 0;
}

/* Deliver the complete records in ia->rec. */
static int http_records(struct interactive *ia)
{
	size_t off = 0;
	int ret = 0;

	while (ia->rec.len - off >= 5) {
		const unsigned char *h =
			(const unsigned char *)ia->rec.buf + off;
		size_t len = h[1] | h[2] << 8 | h[3] << 16 | (size_t)h[4] << 24;
		const char *p = ia->rec.buf + off + 5;

		if (ia->rec.len - off - 5 < len)
			break;
		off += 5 + len;
		if (h[0] == REC_STDOUT || h[0] == REC_STDERR) {
			if (!ia->done)
				deliver(ia, h[0], p, len);
		} else if (h[0] == REC_EXIT) {
			if (!ia->done && take_exit(ia, p, len) < 0)
				ia->failed = 1;
		} else if (h[0] == REC_ERROR && !ia->done && !ia->cancelled) {
			error("%.*s", (int)len, p);
			ia->failed = 1;
			ret = -1;
		}
	}
	strbuf_remove(&ia->rec, 0, off);
	return ret;
}

static int http_step(struct interactive *ia, int wait_ms, struct pollfd *extra,
		     unsigned nr_extra)
{
	struct pollfd pfd[2 + 8];
	unsigned n = nr_extra > 8 ? 8 : nr_extra;
	int r, eof = 0;

	pfd[0].fd = ia->pipe[0];
	pfd[0].events = POLLIN;
	pfd[0].revents = 0;
	pfd[1].fd = ia->wake[0];
	pfd[1].events = POLLIN;
	pfd[1].revents = 0;
	r = poll_with_extra(pfd, 2, extra, n, wait_ms);
	if (r < 0 && errno != EINTR)
		return error_errno("poll");
	if (r > 0 && pfd[1].revents) {
		char drain[64];

		while (read(ia->wake[0], drain, sizeof(drain)) > 0)
			;
	}
	if (r > 0 && pfd[0].revents) {
		char buf[65536];
		ssize_t got = read(ia->pipe[0], buf, sizeof(buf));

		if (got > 0)
			strbuf_add(&ia->rec, buf, got);
		else if (!got)
			eof = 1;
		http_records(ia);
	}
	if (ia->failed)
		return -1;
	if (ia->done)
		return 0;
	if (ia->cancelled)
		return -1;
	if (eof)
		return error("the output stream of the runtime ended before "
			     "the command's exit status");
	return 1;
}

/* ---- the API ---- */

int interactive_open(struct session *s, const struct interactive_opts *opts,
		     struct interactive **out)
{
	struct interactive *ia;
	int have_ws = !!(s->features & SESSION_FEAT_EXEC_INTERACTIVE);
	int have_in = !!(s->features & SESSION_FEAT_EXEC_INPUT);
	int r = 1;

	*out = NULL;
	if (!have_ws && !have_in && !s->ops->proc)
		return error("the runtime of claim '%s' (%s) has no "
			     "interactive channel (features exec-interactive "
			     "and exec-input): stdin (-i), a terminal (-t) "
			     "and the REPL's live shell need gosbx-runtime "
			     "0.1.0 or later",
			     s->claim,
			     s->server && *s->server ? s->server
						     : "an upstream runtime "
						       "server");
	ia = xcalloc(1, sizeof(*ia));
	ia->s = s;
	ia->o = *opts;
	ia->pipe[0] = ia->pipe[1] = -1;
	ia->wake[0] = ia->wake[1] = -1;
	ia->ws.sock = -1;
	strbuf_init(&ia->rec, 0);
	strbuf_init(&ia->inq, 0);
	strbuf_init(&ia->body, 0);
	strbuf_init(&ia->line, 0);
	strvec_init(&ia->ctrlq);
	pthread_mutex_init(&ia->mu, NULL);
	pthread_cond_init(&ia->cond, NULL);
	ia->mode = IA_WS;
	if (s->ops->proc) {
		/* the backend drives the command itself */
		ia->mode = IA_BACKEND;
		ia->bp = s->ops->proc->start(s, opts);
		if (!ia->bp) {
			interactive_finish(ia, NULL);
			return -1;
		}
		*out = ia;
		return 0;
	}
	/* an upgrade of this session already went unanswered */
	if (have_ws && !s->no_websocket) {
		r = ws_open(ia);
		if (r < 0) {
			interactive_finish(ia, NULL);
			return -1;
		}
		if (r > 0) {
			struct strbuf why = STRBUF_INIT;

			if (ia->ws.no_answer) {
				strbuf_addbuf(&why, &ia->ws.body);
				/* not again for this session: the same way */
				s->no_websocket = 1;
			} else {
				http_error_text(&why, ia->ws.status,
						&ia->ws.body);
			}
			if (!have_in) {
				error("the interactive channel to claim '%s' "
				      "was refused on the way: %s",
				      s->claim, why.buf);
				strbuf_release(&why);
				interactive_finish(ia, NULL);
				return -1;
			}
			/* a wait the user sat through is always explained */
			if (opts->verbose || ia->ws.no_answer)
				fprintf(stderr,
					"gosbx: no WebSocket to the runtime "
					"(%s): input goes through separate "
					"requests (sandbox-router v0.4.6 and "
					"v0.5.0 carry no WebSocket; v0.5.2 and "
					"later do)\n",
					why.buf);
			strbuf_release(&why);
			ws_client_close(&ia->ws);
		}
	}
	if (r > 0 && http_open(ia) < 0) {
		interactive_finish(ia, NULL);
		return -1;
	}
	*out = ia;
	return 0;
}

ssize_t interactive_write(struct interactive *ia, const void *buf, size_t len)
{
	size_t room, n;

	if (ia->eof_given || ia->done || ia->failed)
		return -1;
	if (ia->mode == IA_BACKEND)
		return (ssize_t)ia->s->ops->proc->write(ia->bp, buf, len);
	if (ia->mode == IA_WS) {
		size_t queued = ws_conn_queued_bytes(&ia->ws.conn);
		struct strbuf sb = STRBUF_INIT;

		room = queued < INTERACTIVE_QUEUE ? INTERACTIVE_QUEUE - queued
						  : 0;
		n = len < room ? len : room;
		if (n > WS_CHUNK)
			n = WS_CHUNK;
		if (!n)
			return 0;
		exec_channel_frame(&sb, EXEC_CH_STDIN, buf, n);
		if (ws_conn_send(&ia->ws.conn, WS_BINARY, sb.buf, sb.len))
			n = 0;
		strbuf_release(&sb);
		return n;
	}
	pthread_mutex_lock(&ia->mu);
	if (ia->in_dead) {
		/* the command takes no more: as if it had read it */
		pthread_mutex_unlock(&ia->mu);
		return len;
	}
	room = ia->inq.len < INTERACTIVE_QUEUE ? INTERACTIVE_QUEUE - ia->inq.len
					       : 0;
	n = len < room ? len : room;
	strbuf_add(&ia->inq, buf, n);
	pthread_cond_broadcast(&ia->cond);
	pthread_mutex_unlock(&ia->mu);
	return n;
}

int interactive_can_write(struct interactive *ia)
{
	int ok;

	if (ia->eof_given || ia->done || ia->failed)
		return 0;
	if (ia->mode == IA_BACKEND)
		return ia->s->ops->proc->can_write(ia->bp);
	if (ia->mode == IA_WS)
		return ws_conn_queued_bytes(&ia->ws.conn) < INTERACTIVE_QUEUE;
	pthread_mutex_lock(&ia->mu);
	ok = ia->inq.len < INTERACTIVE_QUEUE;
	pthread_mutex_unlock(&ia->mu);
	return ok;
}

/* Send a control message (proto/channel.h); sb is released */
static void send_control(struct interactive *ia, struct strbuf *sb)
{
	if (ia->mode == IA_WS) {
		ws_send_control(ia, sb->buf);
	} else {
		pthread_mutex_lock(&ia->mu);
		strvec_push(&ia->ctrlq, sb->buf);
		pthread_cond_broadcast(&ia->cond);
		pthread_mutex_unlock(&ia->mu);
	}
	strbuf_release(sb);
}

void interactive_eof(struct interactive *ia)
{
	struct strbuf sb = STRBUF_INIT;

	if (ia->eof_given || ia->done || ia->failed)
		return;
	ia->eof_given = 1;
	if (ia->mode == IA_BACKEND) {
		ia->s->ops->proc->eof(ia->bp);
		return;
	}
	if (ia->mode == IA_WS) {
		exec_control_add_eof(&sb);
		send_control(ia, &sb);
		return;
	}
	pthread_mutex_lock(&ia->mu);
	ia->inq_eof = 1;
	pthread_cond_broadcast(&ia->cond);
	pthread_mutex_unlock(&ia->mu);
}

void interactive_resize(struct interactive *ia, unsigned cols, unsigned rows)
{
	struct strbuf sb = STRBUF_INIT;

	if (!ia->o.tty || ia->done || ia->failed || !cols || !rows ||
	    cols > 65535 || rows > 65535)
		return;
	if (ia->mode == IA_BACKEND) {
		ia->s->ops->proc->resize(ia->bp, cols, rows);
		return;
	}
	exec_control_add_resize(&sb, cols, rows);
	send_control(ia, &sb);
}

void interactive_signal(struct interactive *ia, const char *name)
{
	struct strbuf sb = STRBUF_INIT;

	if (!ia->o.tty || ia->done || ia->failed)
		return;
	if (ia->mode == IA_BACKEND) {
		ia->s->ops->proc->signal(ia->bp, name);
		return;
	}
	exec_control_add_signal(&sb, name);
	send_control(ia, &sb);
}

static int backend_step(struct interactive *ia, int wait_ms,
			struct pollfd *extra, unsigned nr_extra)
{
	int r = ia->s->ops->proc->step(ia->bp, wait_ms, extra, nr_extra);

	if (r > 0)
		return 1;
	if (r < 0) {
		ia->failed = 1;
		return -1;
	}
	ia->done = 1;
	return 0;
}

int interactive_step(struct interactive *ia, int wait_ms, struct pollfd *extra,
		     unsigned nr_extra)
{
	if (ia->o.cancel && *ia->o.cancel)
		ia->cancelled = 1;
	if (ia->done)
		return 0;
	if (ia->failed || ia->cancelled)
		return -1;
	if (ia->mode == IA_BACKEND)
		return backend_step(ia, wait_ms, extra, nr_extra);
	if (ia->mode == IA_WS)
		return ws_step(ia, wait_ms, extra, nr_extra);
	return http_step(ia, wait_ms, extra, nr_extra);
}

/* After giving up on a running command: name it to the runtime too. */
static void cancel_remote(struct interactive *ia)
{
	struct http_resp resp = HTTP_RESP_INIT;
	struct http_req req = { 0 };
	struct strbuf path = STRBUF_INIT;

	if (!(ia->s->features & SESSION_FEAT_EXEC_CANCEL) || !*ia->rid)
		return;
	strbuf_addf(&path, "/v1/exec/%s", ia->rid);
	req.method = "DELETE";
	req.path = path.buf;
	req.timeout_ms = 5000;
	(void)http_request(ia->s->http, &req, &resp);
	strbuf_release(&path);
	http_resp_release(&resp);
}

int interactive_finish(struct interactive *ia, struct session_result *res)
{
	int ret = ia->done ? 0 : -1;
	int had_ws = ia->mode == IA_WS && ia->ws.have_conn;

	if (ia->mode == IA_BACKEND) {
		if (ia->bp)
			ret = ia->s->ops->proc->finish(ia->bp, res);
		else if (res)
			res->exit_code = -1;
		goto free;
	}

	if (!ia->done && ia->mode == IA_WS && ia->ws.have_conn &&
	    !ia->ws.conn.eof) {
		/* a polite close first; the runtime kills the command */
		ws_conn_close(&ia->ws.conn, 1000, NULL);
		ws_conn_write(&ia->ws.conn);
	}
	if (ia->mode == IA_WS)
		ws_client_close(&ia->ws);
	if (ia->threads) {
		if (!ia->done)
			ia->abort_req = 1;
		pthread_mutex_lock(&ia->mu);
		ia->stop = 1;
		pthread_cond_broadcast(&ia->cond);
		pthread_mutex_unlock(&ia->mu);
		/* the output thread may wait for room in the pipe */
		if (ia->pipe[0] >= 0) {
			close(ia->pipe[0]);
			ia->pipe[0] = -1;
		}
		if (ia->threads > 1)
			pthread_join(ia->in_thread, NULL);
		ia->abort_req = 1;
		pthread_join(ia->out_thread, NULL);
	}
	if (!ia->done && *ia->rid &&
	    (ia->cancelled || ia->failed || ia->mode == IA_HTTP || had_ws))
		cancel_remote(ia);
	if (res) {
		if (ia->exit)
			session_result_from_json(res, ia->exit);
		else {
			res->exit_code = -1;
			res->reason = "cancelled";
		}
		res->out_total = ia->out_total;
		res->err_total = ia->err_total;
	}
free:
	json_decref(ia->exit);
	if (ia->pipe[0] >= 0)
		close(ia->pipe[0]);
	if (ia->pipe[1] >= 0)
		close(ia->pipe[1]);
	for (int i = 0; i < 2; i++)
		if (ia->wake[i] >= 0)
			close(ia->wake[i]);
	http_client_free(ia->in_http);
	http_client_free(ia->out_http);
	strbuf_release(&ia->rec);
	strbuf_release(&ia->inq);
	strbuf_release(&ia->body);
	strbuf_release(&ia->line);
	strvec_clear(&ia->ctrlq);
	pthread_mutex_destroy(&ia->mu);
	pthread_cond_destroy(&ia->cond);
	free(ia);
	return ret;
}

int interactive_run(struct session *s, const struct interactive_opts *opts,
		    int in_fd, volatile sig_atomic_t *winch,
		    int (*get_size)(unsigned *cols, unsigned *rows),
		    struct session_result *res)
{
	struct interactive *ia;
	char *buf;
	size_t have = 0, off = 0;
	int in_eof = in_fd < 0, r, cancelled;

	if (interactive_open(s, opts, &ia) < 0)
		return opts->cancel && *opts->cancel ? 1 : -1;
	/* no input: without a terminal, the command reads end-of-file */
	if (in_fd < 0 && !opts->tty)
		interactive_eof(ia);
	buf = xmalloc(WS_CHUNK);
	for (;;) {
		struct pollfd pfd = { .fd = -1, .events = POLLIN };
		unsigned cols, rows;

		if (winch && *winch) {
			*winch = 0;
			if (get_size && !get_size(&cols, &rows))
				interactive_resize(ia, cols, rows);
		}
		while (off < have) {
			ssize_t n =
				interactive_write(ia, buf + off, have - off);

			if (n <= 0)
				break;
			off += (size_t)n;
		}
		if (off == have)
			off = have = 0;
		if (!in_eof && !have && interactive_can_write(ia))
			pfd.fd = in_fd;
		r = interactive_step(ia, 1000, &pfd, 1);
		if (r <= 0)
			break;
		if (pfd.fd >= 0 && pfd.revents) {
			ssize_t n = read(in_fd, buf, WS_CHUNK);

			if (n > 0) {
				have = (size_t)n;
			} else if (!n || (errno != EINTR && errno != EAGAIN)) {
				if (n < 0)
					warning_errno("cannot read standard "
						      "input; closing the "
						      "command's");
				in_eof = 1;
				interactive_eof(ia);
			}
		}
	}
	free(buf);
	cancelled = ia->cancelled && !(ia->done);
	if (interactive_finish(ia, res) < 0)
		return cancelled ? 1 : -1;
	return 0;
}

/*
 * The url backend on agent-sandbox's sandboxd (session/sandboxd.h):
 * commands through the gRPC ProcessService.Start, as upstream's Go SDK
 * does (clients/go/sandbox commands.go: Start, then WriteStdin and
 * SendSignal by the process id of its init event, on the same
 * connection).
 *
 * One thread drives the connection: the Start call streams events
 * while WriteStdin (input, then EOF once the input was taken) and
 * SendSignal are unary calls started from the same loop.
 */
#include "compat.h"
#include "http.h"
#include "json.h"
#include "proto/grpc-client.h"
#include "session/interactive.h"
#include "session/sandboxd.h"
#include "session/session.h"
#include "usage.h"

#include <poll.h>
#include <time.h>

#include "process/v1/process.pb-c.h"

#define SANDBOXD_GRPC_PORT "9090" /* upstream's defaults */
#define SANDBOXD_REST_PORT "8080"
/* how long a killed command's Start may take to end, ms */
#define SANDBOXD_SIGNAL_GRACE_MS 10000
#define METHOD(m) "/process.v1.ProcessService/" m
/* stdin in one WriteStdin, bytes */
#define SANDBOXD_STDIN_CHUNK (64 * 1024)
/*
 * A refused SendSignal or ResizeTTY followed by the exit event within
 * this many ms was the process's end, not a refusal: upstream sandboxd
 * answers a call that meets a process between its Wait and its exit
 * event with INTERNAL or FAILED_PRECONDITION (pkg/server/process.go),
 * and its exit event follows at once.
 */
#define SANDBOXD_END_RACE_MS 2000

/* monotonic_ms(), signed for deadlines */
static int64_t mono_ms(void)
{
	return (int64_t)monotonic_ms();
}

struct sandboxd {
	struct grpc_conn *conn;
	char *grpc_addr; /* host:port, to connect again */
};

/*
 * The connection for the next call. A server may end a connection
 * that was idle (GOAWAY NO_ERROR: gosbx-runtime after 5 minutes
 * without a stream, Documentation/gosbx-runtime.txt; grpc-go's
 * MaxConnectionIdle) or close it; a gRPC client then connects again for
 * its next call, and so does this. What the idle connection had
 * pending is read first, quietly: an ended connection is news only if
 * the new one fails too. Returns 0, or -1 with error().
 */
static int sd_conn(struct sandboxd *sd)
{
	report_fn fn;
	void *data;
	int r;

	if (!grpc_conn_open_calls(sd->conn)) {
		get_error_routine(&fn, &data);
		set_error_routine(report_nothing, NULL);
		r = grpc_conn_step(sd->conn, 0);
		set_error_routine(fn, data);
		if (r < 0 || !grpc_conn_usable(sd->conn)) {
			struct grpc_conn *c =
				grpc_connect(sd->grpc_addr, NULL, 10000);

			if (!c)
				return -1;
			grpc_conn_free(sd->conn);
			sd->conn = c;
		}
	}
	return 0;
}

int sandboxd_url(const char *url)
{
	return url && starts_with(url, "sandboxd://");
}

/* sandboxd://host[:grpc][?rest=port] into "host:grpc", rest URL */
static int parse_url(const char *url, struct strbuf *grpc, struct strbuf *rest)
{
	const char *p = url + strlen("sandboxd://");
	const char *q = strchr(p, '?'), *end = q ? q : p + strlen(p);
	const char *colon = memrchr(p, ':', (size_t)(end - p));
	const char *rport = SANDBOXD_REST_PORT;
	struct strbuf host = STRBUF_INIT;

	if (colon && *p == '[' && !memchr(colon, ']', (size_t)(end - colon)))
		; /* "[v6]:port" */
	else if (colon && *p == '[')
		colon = NULL;
	strbuf_add(&host, p, (size_t)((colon ? colon : end) - p));
	if (!host.len || strpbrk(host.buf, "/@ ")) {
		strbuf_release(&host);
		return error("malformed sandboxd URL '%s': want "
			     "sandboxd://<host>[:<grpc_port>][?rest=<port>]",
			     url);
	}
	strbuf_addf(grpc, "%s:", host.buf);
	if (colon)
		strbuf_add(grpc, colon + 1, (size_t)(end - colon - 1));
	else
		strbuf_addstr(grpc, SANDBOXD_GRPC_PORT);
	if (q) {
		if (!skip_prefix(q, "?rest=", &rport) || !*rport ||
		    strspn(rport, "0123456789") != strlen(rport)) {
			strbuf_release(&host);
			return error("malformed sandboxd URL '%s': the only "
				     "parameter is rest=<port>",
				     url);
		}
	}
	strbuf_addf(rest, "http://%s:%s", host.buf, rport);
	strbuf_release(&host);
	return 0;
}

int sandboxd_connect(struct session *s, const char *grpc_addr,
		     const char *rest_url, const struct http_client_opts *ho)
{
	struct http_client_opts none = { 0 };
	struct sandboxd *sd;
	json_t *root = NULL;
	long status = 0;
	int ret = -1;

	s->http = http_client_new(rest_url, ho ? ho : &none);
	if (!s->http)
		goto out;
	/* the SDKs' health check (clients/go/sandbox connector.go) */
	if (http_json(s->http, "GET", "/v1/health", NULL, &status, &root) < 0) {
		error("sandboxd at '%s' is not healthy", rest_url);
		goto out;
	}
	sd = xcalloc(1, sizeof(*sd));
	sd->conn = grpc_connect(grpc_addr, NULL, 10000);
	if (!sd->conn) {
		free(sd);
		goto out;
	}
	sd->grpc_addr = xstrdup(grpc_addr);
	s->sandboxd = sd;
	free(s->server);
	s->server = xstrdup("sandboxd");
	ret = 0;
out:
	if (ret < 0) {
		http_client_free(s->http);
		s->http = NULL;
	}
	json_decref(root);
	return ret;
}

int sandboxd_open(struct session *s, const char *url,
		  const struct session_opts *opts)
{
	struct strbuf grpc = STRBUF_INIT, rest = STRBUF_INIT;
	int ret;

	(void)opts;
	if (parse_url(url, &grpc, &rest) < 0)
		ret = SESSION_BAD_OPTS;
	else
		ret = sandboxd_connect(s, grpc.buf, rest.buf, NULL);
	if (!ret)
		s->claim = xstrdup(url);
	strbuf_release(&grpc);
	strbuf_release(&rest);
	return ret;
}

int sandboxd_logs(struct session *s, int follow, int fd,
		  volatile sig_atomic_t *cancel)
{
	/* KEP-539.2 has no log API: the container's log is it */
	return error("sandbox '%s' runs sandboxd, which serves no log of its "
		     "own (agent-sandbox KEP-539.2); read its container's log "
		     "(kubectl logs) instead",
		     s->claim);
}

void sandboxd_close(struct session *s)
{
	struct sandboxd *sd = s->sandboxd;

	http_client_free(s->http);
	s->http = NULL;
	if (!sd)
		return;
	grpc_conn_free(sd->conn);
	free(sd->grpc_addr);
	free(sd);
	s->sandboxd = NULL;
}

/* ---- a command ---- */

struct run_state {
	struct grpc_conn *conn;
	const struct session_exec *e;
	struct session_result *res;
	int32_t pid; /* from the init event; 0 before */
	int exited;
	int start_done;
	struct grpc_status start_st;
	int stdin_step;	    /* 0 to send, 1 input sent, 2 EOF sent */
	int stdin_inflight; /* a WriteStdin call is open */
	int signal_sent;
	int cancelled;
	int gave_up; /* the Start call was cancelled by us */
	/* a command driven step by step (sandboxd_proc_ops) */
	int interactive;
	int keep_output;       /* add its output to res (sandboxd_run),
				* the first res->keep bytes of each stream */
	int tty;	       /* Start with a PTY of cols x rows */
	unsigned cols, rows;   /* characters; 0: the server's */
	struct strbuf inq;     /* stdin not sent yet */
	int want_eof;	       /* EOF after inq */
	int resize_pending;    /* cols x rows to send with ResizeTTY */
	int ctl_failed;	       /* a ResizeTTY or SendSignal failed */
	struct strbuf ctl_err; /* the first such failure, for the end */
	int64_t ctl_fail_ms;   /* when it came (mono_ms()); 0: no race */
};

static int start_event(const uint8_t *msg, size_t len, void *data)
{
	struct run_state *r = data;
	Process__V1__StartResponse *ev =
		process__v1__start_response__unpack(NULL, len, msg);
	int ret = 0;

	if (!ev) {
		error("sandboxd sent a Start event that is not one");
		return -1;
	}
	switch (ev->event_case) {
	case PROCESS__V1__START_RESPONSE__EVENT_INIT:
		r->pid = ev->init->process_id;
		break;
	case PROCESS__V1__START_RESPONSE__EVENT_STDOUT:
	case PROCESS__V1__START_RESPONSE__EVENT_STDERR: {
		int stream =
			ev->event_case ==
					PROCESS__V1__START_RESPONSE__EVENT_STDOUT
				? 1
				: 2;
		ProtobufCBinaryData *b =
			stream == 1 ? &ev->stdout : &ev->stderr;

		if (r->keep_output)
			session_result_add_output(
				r->res, stream, (const char *)b->data, b->len);
		if (r->e->on_output &&
		    r->e->on_output(stream, (const char *)b->data, b->len,
				    r->e->data) < 0)
			r->cancelled = 1;
		break;
	}
	case PROCESS__V1__START_RESPONSE__EVENT_EXIT:
		r->exited = 1;
		/* a refusal just before the end met the end (ctl_end()) */
		if (r->ctl_fail_ms &&
		    mono_ms() - r->ctl_fail_ms <= SANDBOXD_END_RACE_MS) {
			r->ctl_failed = 0;
			strbuf_reset(&r->ctl_err);
		}
		r->res->exit_code = ev->exit->exit_code;
		if (!r->res->reason || strcmp(r->res->reason, "timeout"))
			r->res->reason = "exited";
		break;
	default:
		break; /* a newer event: not ours to read */
	}
	process__v1__start_response__free_unpacked(ev, NULL);
	return ret;
}

static void start_close(const struct grpc_status *st, void *data)
{
	struct run_state *r = data;

	r->start_done = 1;
	r->start_st.code = st->code;
	strbuf_addbuf(&r->start_st.message, &st->message);
}

static void aux_close(const struct grpc_status *st, void *data)
{
	struct run_state *r = data;

	r->stdin_inflight = 0;
	if (st->code == GRPC_STATUS_OK)
		return;
	/*
	 * Stdin the server would not take has no reader: the process ended
	 * or closed its stdin (upstream answers NOT_FOUND once the process
	 * is gone, INTERNAL "file already closed" between its Wait and its
	 * exit event, and either may beat the exit event here). As with a
	 * local pipe whose reader went away, that is no error; what is left
	 * is dropped, and EOF is still sent after refused input, so that a
	 * process still reading does not wait for more.
	 */
	strbuf_reset(&r->inq);
	if (r->stdin_step < 2)
		r->want_eof = 1;
}
/*
 * The end of a SendSignal or ResizeTTY (stdin may be in flight): the
 * first failure is kept, said when the command ends (proc_finish()),
 * not on a terminal in raw mode. A process that ended meanwhile makes
 * NOT_FOUND: no news.
 */
static void ctl_end(struct run_state *r, const char *what,
		    const struct grpc_status *st)
{
	if (st->code == GRPC_STATUS_OK || st->code == GRPC_STATUS_NOT_FOUND ||
	    r->exited || r->ctl_failed)
		return;
	r->ctl_failed = 1;
	r->ctl_fail_ms = mono_ms();
	strbuf_addf(&r->ctl_err, "sandboxd refused a %s: %s (gRPC status %d)",
		    what, st->message.len ? st->message.buf : "no message",
		    st->code);
}

static void signal_close(const struct grpc_status *st, void *data)
{
	ctl_end(data, "signal (SendSignal)", st);
}

static void resize_close(const struct grpc_status *st, void *data)
{
	ctl_end(data, "window size (ResizeTTY)", st);
}

static void send_stdin(struct run_state *r)
{
	Process__V1__WriteStdinRequest req;
	Google__Protobuf__Empty eof;
	struct grpc_call_cb cb = { NULL, aux_close, r };
	uint8_t *buf;
	size_t len;

	process__v1__write_stdin_request__init(&req);
	google__protobuf__empty__init(&eof);

	req.process_id = r->pid;
	if (r->interactive && r->inq.len) {
		req.payload_case =
			PROCESS__V1__WRITE_STDIN_REQUEST__PAYLOAD_INPUT;
		req.input.data = (uint8_t *)r->inq.buf;
		req.input.len = r->inq.len < SANDBOXD_STDIN_CHUNK
					? r->inq.len
					: SANDBOXD_STDIN_CHUNK;
	} else if (r->interactive) {
		req.payload_case =
			PROCESS__V1__WRITE_STDIN_REQUEST__PAYLOAD_EOF;
		req.eof = &eof;
		r->stdin_step = 2;
	} else if (r->stdin_step == 0 && r->e->stdin_data && r->e->stdin_len) {
		req.payload_case =
			PROCESS__V1__WRITE_STDIN_REQUEST__PAYLOAD_INPUT;
		req.input.data = (uint8_t *)r->e->stdin_data;
		req.input.len = r->e->stdin_len;
		r->stdin_step = 1;
	} else {
		req.payload_case =
			PROCESS__V1__WRITE_STDIN_REQUEST__PAYLOAD_EOF;
		req.eof = &eof;
		r->stdin_step = 2;
	}
	len = process__v1__write_stdin_request__get_packed_size(&req);
	buf = xmalloc(len ? len : 1);
	process__v1__write_stdin_request__pack(&req, buf);
	if (grpc_call_start(r->conn, METHOD("WriteStdin"), buf, len, &cb) > 0)
		r->stdin_inflight = 1;
	if (req.payload_case ==
		    PROCESS__V1__WRITE_STDIN_REQUEST__PAYLOAD_INPUT &&
	    r->interactive)
		strbuf_remove(&r->inq, 0, req.input.len);
	free(buf);
}

static void send_signal(struct run_state *r, Process__V1__Signal sig)
{
	Process__V1__SendSignalRequest req;
	struct grpc_call_cb cb = { NULL, signal_close, r };
	uint8_t buf[32];

	process__v1__send_signal_request__init(&req);

	req.process_id = r->pid;
	req.signal = sig;
	if (process__v1__send_signal_request__get_packed_size(&req) >
	    sizeof(buf))
		return;
	grpc_call_start(r->conn, METHOD("SendSignal"), buf,
			process__v1__send_signal_request__pack(&req, buf), &cb);
	r->signal_sent = 1;
}

static int start_call(struct run_state *r)
{
	Process__V1__StartRequest req;
	Process__V1__ProcessConfig cfg;
	Process__V1__ProcessConfig__EnvVarsEntry *envs = NULL, **envp = NULL;
	char *argv[] = { "sh", "-c", (char *)r->e->command };
	struct grpc_call_cb cb = { start_event, start_close, r };
	Process__V1__PTY pty;
	size_t nr_env = 0, len;
	uint8_t *buf;
	int id;

	process__v1__start_request__init(&req);
	process__v1__process_config__init(&cfg);
	cfg.n_command = 3;
	cfg.command = argv;
	if (r->e->cwd && *r->e->cwd)
		cfg.cwd = (char *)r->e->cwd;
	for (nr_env = 0; r->e->env && r->e->env[nr_env]; nr_env++)
		;
	if (nr_env) {
		envs = xcalloc(nr_env, sizeof(*envs));
		envp = xcalloc(nr_env, sizeof(*envp));
		for (size_t i = 0; i < nr_env; i++) {
			const char *kv = r->e->env[i], *eq = strchr(kv, '=');

			process__v1__process_config__env_vars_entry__init(
				&envs[i]);
			envs[i].key = xstrndup(kv, eq ? (size_t)(eq - kv)
						      : strlen(kv));
			envs[i].value = xstrdup(eq ? eq + 1 : "");
			envp[i] = &envs[i];
		}
	}
	cfg.n_env_vars = nr_env;
	cfg.env_vars = envp;
	req.config = &cfg;
	if (r->tty) {
		process__v1__pty__init(&pty);
		pty.cols = r->cols ? r->cols : 80;
		pty.rows = r->rows ? r->rows : 24;
		req.pty = &pty;
	}
	len = process__v1__start_request__get_packed_size(&req);
	buf = xmalloc(len);
	process__v1__start_request__pack(&req, buf);
	id = grpc_call_start(r->conn, METHOD("Start"), buf, len, &cb);
	free(buf);
	for (size_t i = 0; i < nr_env; i++) {
		free(envs[i].key);
		free(envs[i].value);
	}
	free(envs);
	free(envp);
	return id;
}

int sandboxd_run(struct session *s, const struct session_exec *e,
		 struct session_result *res)
{
	struct sandboxd *sd = s->sandboxd;
	struct run_state r = { .e = e, .res = res, .keep_output = 1 };
	int64_t t0 = mono_ms();
	int id;
	int64_t deadline = e->timeout_ms > 0 ? t0 + e->timeout_ms : 0;
	int ret = -1;

	if (sd_conn(sd) < 0)
		return -1;
	r.conn = sd->conn;
	grpc_status_init(&r.start_st);
	res->exit_code = -1;
	id = start_call(&r);
	if (id < 0)
		goto out;
	while (!r.start_done) {
		int wait = 100;
		int64_t now = mono_ms();

		/*
		 * a server that stops answering: no process to signal, or
		 * the signal did not end it in SANDBOXD_SIGNAL_GRACE_MS
		 */
		if (!r.gave_up &&
		    ((deadline && now >= deadline + SANDBOXD_SIGNAL_GRACE_MS) ||
		     (!r.pid && ((deadline && now >= deadline) ||
				 (e->cancel && *e->cancel))))) {
			r.gave_up = 1;
			r.cancelled = e->cancel && *e->cancel;
			grpc_call_cancel(sd->conn, id);
		}

		if (r.pid && r.stdin_step < 2 && !r.stdin_inflight)
			send_stdin(&r);
		if (r.pid && !r.signal_sent && !r.exited) {
			if (e->cancel && *e->cancel)
				r.cancelled = 1;
			if (r.cancelled) {
				send_signal(&r,
					    PROCESS__V1__SIGNAL__SIGNAL_SIGINT);
			} else if (deadline && mono_ms() >= deadline) {
				res->reason = "timeout";
				send_signal(
					&r,
					PROCESS__V1__SIGNAL__SIGNAL_SIGKILL);
			}
		}
		if (grpc_conn_step(sd->conn, wait) < 0)
			break;
	}
	/* let a last WriteStdin or SendSignal finish on the connection */
	while (grpc_conn_open_calls(sd->conn) &&
	       grpc_conn_step(sd->conn, 100) >= 0)
		;
	res->duration_ms = mono_ms() - t0;
	if (r.gave_up && !r.cancelled) {
		if (r.pid)
			error("sandboxd did not end the command within %d ms "
			      "of SIGKILL: the server stopped answering",
			      SANDBOXD_SIGNAL_GRACE_MS);
		else
			error("sandboxd did not start the command within the "
			      "timeout of %" PRId64 " ms: the server stopped "
			      "answering",
			      e->timeout_ms);
		goto out;
	}
	if (r.gave_up) {
		res->reason = "cancelled";
		ret = 1;
		goto out;
	}
	if (r.start_st.code != GRPC_STATUS_OK) {
		error("sandboxd Start failed: %s (gRPC status %d)",
		      r.start_st.message.buf, r.start_st.code);
		goto out;
	}
	if (!r.exited) {
		error("sandboxd ended Start without an exit event");
		goto out;
	}
	if (res->reason && !strcmp(res->reason, "timeout"))
		res->exit_code = -1;
	ret = r.cancelled ? 1 : 0;
	if (r.cancelled)
		res->reason = "cancelled";
out:
	strbuf_release(&r.ctl_err);
	grpc_status_release(&r.start_st);
	return ret;
}

/* ---- a command driven step by step: -i, -t ---- */

struct sandboxd_proc {
	struct run_state r;
	struct session_exec e;
	struct session_result res; /* exit_code and reason only */
	int64_t t0, deadline;	   /* ms, monotonic; deadline 0: none */
	int id;			   /* the Start call's stream */
};

static void *proc_start(struct session *s, const struct interactive_opts *o)
{
	struct sandboxd *sd = s->sandboxd;
	struct sandboxd_proc *p;

	if (sd_conn(sd) < 0)
		return NULL;
	p = xcalloc(1, sizeof(*p));

	p->e.command = o->command;
	p->e.env = o->env;
	p->e.cwd = o->cwd;
	p->e.on_output = o->on_output;
	p->e.data = o->data;
	p->e.cancel = o->cancel;
	session_result_init(&p->res);
	p->res.exit_code = -1;
	p->r.conn = sd->conn;
	p->r.e = &p->e;
	p->r.res = &p->res;
	p->r.interactive = 1;
	p->r.tty = o->tty;
	p->r.cols = o->cols;
	p->r.rows = o->rows;
	strbuf_init(&p->r.inq, 0);
	strbuf_init(&p->r.ctl_err, 0);
	grpc_status_init(&p->r.start_st);
	p->t0 = mono_ms();
	p->deadline = o->timeout_ms > 0 ? p->t0 + o->timeout_ms : 0;
	p->id = start_call(&p->r);
	if (p->id < 0) {
		strbuf_release(&p->r.inq);
		grpc_status_release(&p->r.start_st);
		session_result_release(&p->res);
		free(p);
		return NULL;
	}
	return p;
}

static size_t proc_write(void *data, const void *buf, size_t len)
{
	struct sandboxd_proc *p = data;
	size_t room, n;

	if (p->r.want_eof || p->r.start_done)
		return 0;
	room = p->r.inq.len < INTERACTIVE_QUEUE
		       ? INTERACTIVE_QUEUE - p->r.inq.len
		       : 0;
	n = len < room ? len : room;
	strbuf_add(&p->r.inq, buf, n);
	return n;
}

static int proc_can_write(void *data)
{
	struct sandboxd_proc *p = data;

	return !p->r.want_eof && !p->r.start_done &&
	       p->r.inq.len < INTERACTIVE_QUEUE;
}

static void proc_eof(void *data)
{
	struct sandboxd_proc *p = data;

	p->r.want_eof = 1;
}

static void proc_resize(void *data, unsigned cols, unsigned rows)
{
	struct sandboxd_proc *p = data;

	p->r.cols = cols;
	p->r.rows = rows;
	p->r.resize_pending = 1;
}

static void send_resize(struct run_state *r)
{
	Process__V1__ResizeTTYRequest req;
	struct grpc_call_cb cb = { NULL, resize_close, r };
	uint8_t buf[32];

	process__v1__resize_ttyrequest__init(&req);
	req.process_id = r->pid;
	req.cols = r->cols;
	req.rows = r->rows;
	r->resize_pending = 0;
	if (process__v1__resize_ttyrequest__get_packed_size(&req) > sizeof(buf))
		return;
	grpc_call_start(r->conn, METHOD("ResizeTTY"), buf,
			process__v1__resize_ttyrequest__pack(&req, buf), &cb);
}

static void proc_signal(void *data, const char *name)
{
	struct sandboxd_proc *p = data;
	Process__V1__Signal sig;

	if (!strcmp(name, "INT"))
		sig = PROCESS__V1__SIGNAL__SIGNAL_SIGINT;
	else if (!strcmp(name, "TERM"))
		sig = PROCESS__V1__SIGNAL__SIGNAL_SIGTERM;
	else if (!strcmp(name, "KILL"))
		sig = PROCESS__V1__SIGNAL__SIGNAL_SIGKILL;
	else {
		/* the only signals of the proto: say so once, at the end */
		if (!p->r.ctl_failed) {
			p->r.ctl_failed = 1;
			strbuf_addf(&p->r.ctl_err,
				    "SIG%s was not sent: sandboxd forwards "
				    "only INT, TERM and KILL",
				    name);
		}
		return;
	}
	if (p->r.pid && !p->r.exited)
		send_signal(&p->r, sig);
}

/* what is due: stdin, a resize, the timeout's SIGKILL */
static void proc_pump(struct sandboxd_proc *p)
{
	struct run_state *r = &p->r;

	if (!r->pid || r->exited)
		return;
	if (!r->stdin_inflight && r->stdin_step < 2 &&
	    (r->inq.len || r->want_eof))
		send_stdin(r);
	if (r->tty && r->resize_pending)
		send_resize(r);
	if (p->deadline && mono_ms() >= p->deadline && !r->signal_sent) {
		p->res.reason = "timeout";
		send_signal(r, PROCESS__V1__SIGNAL__SIGNAL_SIGKILL);
	}
}

static int proc_step(void *data, int wait_ms, struct pollfd *extra,
		     unsigned nr_extra)
{
	struct sandboxd_proc *p = data;
	struct pollfd pfd[8];
	unsigned n = nr_extra < 7 ? nr_extra : 7;

	if (p->r.start_done)
		return 0;
	proc_pump(p);
	pfd[0].fd = grpc_conn_fd(p->r.conn);
	pfd[0].events =
		POLLIN | (grpc_conn_want_write(p->r.conn) ? POLLOUT : 0);
	pfd[0].revents = 0;
	for (unsigned i = 0; i < n; i++) {
		pfd[i + 1] = extra[i];
		pfd[i + 1].revents = 0;
	}
	if (poll(pfd, n + 1, wait_ms) < 0 && errno != EINTR)
		return error_errno("poll");
	for (unsigned i = 0; i < n; i++)
		extra[i].revents = pfd[i + 1].revents;
	if (grpc_conn_step(p->r.conn, 0) < 0)
		return -1;
	if (p->r.cancelled)
		return -1; /* on_output stopped it */
	proc_pump(p);
	if (!p->r.start_done)
		return 1;
	if (p->r.start_st.code != GRPC_STATUS_OK)
		return error("sandboxd Start failed: %s (gRPC status %d)",
			     p->r.start_st.message.buf, p->r.start_st.code);
	if (!p->r.exited)
		return error("sandboxd ended Start without an exit event");
	return 0;
}

static int proc_finish(void *data, struct session_result *res)
{
	struct sandboxd_proc *p = data;
	int64_t until = mono_ms() + SANDBOXD_SIGNAL_GRACE_MS;
	int ret = p->r.exited ? 0 : -1;

	if (!p->r.start_done) {
		/* given up on: end the process, then the call */
		if (p->r.pid && !p->r.signal_sent)
			send_signal(&p->r, PROCESS__V1__SIGNAL__SIGNAL_SIGKILL);
		grpc_call_cancel(p->r.conn, p->id);
	}
	while (grpc_conn_open_calls(p->r.conn) && mono_ms() < until &&
	       grpc_conn_step(p->r.conn, 100) >= 0)
		;
	if (res) {
		res->exit_code = p->r.exited ? p->res.exit_code : -1;
		res->reason = p->r.exited ? p->res.reason : "cancelled";
		if (p->res.reason && !strcmp(p->res.reason, "timeout")) {
			res->reason = "timeout";
			res->exit_code = -1;
		}
		res->duration_ms = mono_ms() - p->t0;
	}
	if (p->r.ctl_err.len)
		/* \r: the terminal may still be raw (no output processing) */
		warning("%s%s", p->r.ctl_err.buf, p->r.tty ? "\r" : "");
	strbuf_release(&p->r.ctl_err);
	strbuf_release(&p->r.inq);
	grpc_status_release(&p->r.start_st);
	session_result_release(&p->res);
	free(p);
	return ret;
}

const struct backend_proc_ops sandboxd_proc_ops = {
	.start = proc_start,
	.write = proc_write,
	.can_write = proc_can_write,
	.eof = proc_eof,
	.resize = proc_resize,
	.signal = proc_signal,
	.step = proc_step,
	.finish = proc_finish,
};

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
#include "session/sandboxd.h"
#include "session/session.h"
#include "usage.h"

#include <time.h>

#include "process/v1/process.pb-c.h"

#define SANDBOXD_GRPC_PORT "9090" /* upstream's defaults */
#define SANDBOXD_REST_PORT "8080"
/* how long a killed command's Start may take to end, ms */
#define SANDBOXD_SIGNAL_GRACE_MS 10000
#define METHOD(m) "/process.v1.ProcessService/" m

struct sandboxd {
	struct grpc_conn *conn;
};

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

int sandboxd_open(struct session *s, const char *url,
		  const struct session_opts *opts)
{
	struct strbuf grpc = STRBUF_INIT, rest = STRBUF_INIT;
	struct http_client_opts ho = { 0 };
	struct sandboxd *sd;
	json_t *root = NULL;
	long status = 0;
	int ret = -1;

	if (parse_url(url, &grpc, &rest) < 0) {
		ret = SESSION_BAD_OPTS;
		goto out;
	}
	s->claim = xstrdup(url);
	s->http = http_client_new(rest.buf, &ho);
	if (!s->http)
		goto out;
	/* the SDKs' health check (clients/go/sandbox connector.go) */
	if (http_json(s->http, "GET", "/v1/health", NULL, &status, &root) < 0) {
		error("sandboxd at '%s' is not healthy", rest.buf);
		goto out;
	}
	sd = xcalloc(1, sizeof(*sd));
	sd->conn = grpc_connect(grpc.buf, NULL, 10000);
	if (!sd->conn) {
		free(sd);
		goto out;
	}
	s->backend = sd;
	s->server = xstrdup("sandboxd");
	ret = 0;
out:
	json_decref(root);
	strbuf_release(&grpc);
	strbuf_release(&rest);
	return ret;
}

void sandboxd_close(struct session *s)
{
	struct sandboxd *sd = s->backend;

	if (!sd)
		return;
	grpc_conn_free(sd->conn);
	free(sd);
	s->backend = NULL;
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
	struct grpc_status aux_st;
	int aux_failed;
	int signal_sent;
	int cancelled;
	int gave_up; /* the Start call was cancelled by us */
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

		session_result_add_output(r->res, stream, (const char *)b->data,
					  b->len);
		if (r->e->on_output &&
		    r->e->on_output(stream, (const char *)b->data, b->len,
				    r->e->data) < 0)
			r->cancelled = 1;
		break;
	}
	case PROCESS__V1__START_RESPONSE__EVENT_EXIT:
		r->exited = 1;
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
	/* the process may have ended first: not an error of ours */
	if (st->code != GRPC_STATUS_OK && !r->exited && !r->aux_failed) {
		r->aux_failed = 1;
		r->aux_st.code = st->code;
		strbuf_addbuf(&r->aux_st.message, &st->message);
	}
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
	if (r->stdin_step == 0 && r->e->stdin_data && r->e->stdin_len) {
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
	free(buf);
}

static void send_signal(struct run_state *r, Process__V1__Signal sig)
{
	Process__V1__SendSignalRequest req;
	struct grpc_call_cb cb = { NULL, aux_close, r };
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

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int start_call(struct run_state *r)
{
	Process__V1__StartRequest req;
	Process__V1__ProcessConfig cfg;
	Process__V1__ProcessConfig__EnvVarsEntry *envs = NULL, **envp = NULL;
	char *argv[] = { "sh", "-c", (char *)r->e->command };
	struct grpc_call_cb cb = { start_event, start_close, r };
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
	struct sandboxd *sd = s->backend;
	struct run_state r = { .conn = sd->conn, .e = e, .res = res };
	int64_t t0 = mono_ms();
	int id;
	int64_t deadline = e->timeout_ms > 0 ? t0 + e->timeout_ms : 0;
	int ret = -1;

	grpc_status_init(&r.start_st);
	grpc_status_init(&r.aux_st);
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
	if (r.aux_failed)
		warning("sandboxd: %s", r.aux_st.message.buf);
	if (res->reason && !strcmp(res->reason, "timeout"))
		res->exit_code = -1;
	ret = r.cancelled ? 1 : 0;
	if (r.cancelled)
		res->reason = "cancelled";
out:
	grpc_status_release(&r.start_st);
	grpc_status_release(&r.aux_st);
	return ret;
}

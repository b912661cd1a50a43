/*
 * POST /execute (upstream contract) and POST /v1/exec (`exec-stream`),
 * with the `exec-options` extension (Documentation/protocol/runtime-api.md).
 */
#include "compat.h"
#include "exec.h"
#include "json.h"
#include "log.h"
#include "proto/exec-events.h"
#include "runtime.h"
#include "strvec.h"
#include "utf8.h"
#include "workpath.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

extern char **environ;

/* Where the cgroup counts OOM kills: memory.events or memory.oom_control */
static const char *oom_source;

void exec_setup_oom_source(void)
{
	static const char *candidates[] = {
		"/sys/fs/cgroup/memory.events",
		"/sys/fs/cgroup/memory/memory.oom_control",
	};
	const char *env = getenv("SANDBOX_OOM_EVENTS");

	if (env && *env && !access(env, R_OK)) {
		oom_source = env;
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(candidates); i++)
		if (!access(candidates[i], R_OK)) {
			oom_source = candidates[i];
			return;
		}
}

/* The cgroup's oom_kill counter, or -1 when unknown. */
int64_t oom_kills(void)
{
	struct strbuf sb = STRBUF_INIT;
	int64_t n = -1;
	const char *p;

	if (!oom_source || strbuf_read_file(&sb, oom_source, 256) < 0)
		goto out;
	p = strstr(sb.buf, "oom_kill ");
	if (p)
		n = strtoll(p + strlen("oom_kill "), NULL, 10);
out:
	strbuf_release(&sb);
	return n;
}

void exec_params_release(struct exec_params *p)
{
	exec_input_detach(p);
	json_decref(p->json);
	free(p->tag);
	strvec_clear(&p->env);
	strbuf_release(&p->cwd);
	strbuf_release(&p->held);
}

/*
 * wait_delay_ms (default RUNTIME_WAIT_DELAY_MS; 0 waits for the output
 * to close) and the file later output of what the command left goes
 * to: <TMPDIR or /tmp>/gosbx-output-<time>-<n>.log. 0 or the status.
 */
static unsigned parse_wait_delay(struct exec_params *p, struct strbuf *err)
{
	static unsigned counter;
	const char *tmp = getenv("TMPDIR");
	int64_t v;
	int rc = json_object_int(p->json, "wait_delay_ms", &v);

	if (rc < 0 || (rc > 0 && v < 0)) {
		strbuf_addstr(err,
			      "wait_delay_ms must be a non-negative integer");
		return 400;
	}
	/* a terminal's session ends when its output does */
	p->req.wait_delay_ms = rc > 0	    ? v
			       : p->req.tty ? 0
					    : RUNTIME_WAIT_DELAY_MS;
	if (!tmp || *tmp != '/')
		tmp = "/tmp";
	strbuf_addf(&p->held, "%s/gosbx-output-%lld-%u.log", tmp,
		    (long long)time(NULL),
		    __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
	p->req.held_output_path = p->held.buf;
	return 0;
}

/*
 * Validate the JSON body into p. Returns 0, or the HTTP status with
 * the message in err.
 */
unsigned parse_exec_body(struct request *r, struct exec_params *p,
			 struct strbuf *err)
{
	struct strbuf perr = STRBUF_INIT;
	const char *command;
	json_t *env, *stdin_v, *cwd_v;
	int64_t v;
	int rc;

	exec_request_init(&p->req);
	strvec_init(&p->env);
	strbuf_init(&p->cwd, 0);
	strbuf_init(&p->held, 0);
	p->json = NULL;
	p->tag = NULL;
	p->input = NULL;
	if (r->too_large) {
		strbuf_addstr(err, "request body too large");
		return 413;
	}
	p->json = json_parse(r->body.buf, r->body.len, &perr);
	if (!p->json) {
		strbuf_addf(err, "invalid JSON body: %s", perr.buf);
		strbuf_release(&perr);
		return 400;
	}
	strbuf_release(&perr);
	if (!json_is_object(p->json)) {
		strbuf_addstr(err, "invalid JSON body: expected an object");
		return 400;
	}
	command = json_object_str(p->json, "command");
	if (!command || !*command) {
		strbuf_addstr(err, "command must not be empty");
		return 400;
	}
	if (strlen(command) !=
	    json_string_length(json_object_get(p->json, "command"))) {
		strbuf_addstr(err, "command must not contain NUL bytes");
		return 400;
	}
	p->req.command = command;

	rc = json_object_int(p->json, "timeout_ms", &v);
	if (rc < 0 || (rc > 0 && v < 0)) {
		strbuf_addstr(err, "timeout_ms must be a non-negative integer");
		return 400;
	}
	if (rc > 0)
		p->req.timeout_ms = v;
	rc = json_object_int(p->json, "max_output_bytes", &v);
	if (rc < 0 || (rc > 0 && v < 0)) {
		strbuf_addstr(
			err, "max_output_bytes must be a non-negative integer");
		return 400;
	}
	if (rc > 0)
		p->req.max_output_bytes = v;

	env = json_object_get(p->json, "env");
	if (env && !json_is_null(env)) {
		const char *key;
		json_t *val;

		if (!json_is_object(env)) {
			strbuf_addstr(err, "env must be an object of strings");
			return 400;
		}
		json_object_foreach (env, key, val) {
			if (!json_is_string(val) || !*key || strchr(key, '=') ||
			    strlen(json_string_value(val)) !=
				    json_string_length(val)) {
				strbuf_addstr(err, "env must be an object of "
						   "strings with names "
						   "without '='");
				return 400;
			}
		}
		for (char **e = environ; *e; e++) {
			const char *eq = strchr(*e, '=');
			struct strbuf name = STRBUF_INIT;

			if (!eq)
				continue;
			strbuf_add(&name, *e, eq - *e);
			if (!json_object_get(env, name.buf))
				strvec_push(&p->env, *e);
			strbuf_release(&name);
		}
		json_object_foreach (env, key, val)
			strvec_pushf(&p->env, "%s=%s", key,
				     json_string_value(val));
		p->req.env = p->env.v;
	}

	stdin_v = json_object_get(p->json, "stdin");
	if (stdin_v && !json_is_null(stdin_v)) {
		if (!json_is_string(stdin_v)) {
			strbuf_addstr(err, "stdin must be a string");
			return 400;
		}
		p->req.stdin_data = json_string_value(stdin_v);
		p->req.stdin_len = json_string_length(stdin_v);
	}
	rc = parse_interactive_fields(p, err);
	if (rc)
		return rc;
	rc = parse_wait_delay(p, err);
	if (rc)
		return rc;

	cwd_v = json_object_get(p->json, "cwd");
	if (cwd_v && !json_is_null(cwd_v)) {
		struct stat st;

		if (!json_is_string(cwd_v) ||
		    strlen(json_string_value(cwd_v)) !=
			    json_string_length(cwd_v)) {
			strbuf_addstr(err, "cwd must be a string without NUL "
					   "bytes");
			return 400;
		}
		if (workpath_resolve(rt.root, json_string_value(cwd_v), &p->cwd,
				     NULL) < 0) {
			strbuf_addstr(err, "cwd must be within workdir");
			return 400;
		}
		if (stat(p->cwd.buf, &st) < 0 || !S_ISDIR(st.st_mode)) {
			strbuf_addf(err, "cwd not found: %s",
				    json_string_value(cwd_v));
			return 400;
		}
		p->req.cwd = p->cwd.buf;
	} else {
		p->req.cwd = rt.root;
	}
	return 0;
}

void log_exec_begin(const char *command)
{
	struct log_line l;

	if (log_begin(&l, LOG_INFO, "exec begin")) {
		struct strbuf preview = STRBUF_INIT;
		log_command_preview(&preview, command);
		log_str(&l, "command", preview.buf);
		log_end(&l);
		strbuf_release(&preview);
	}
}

void log_exec_done(const char *command, const struct exec_result *res)
{
	struct log_line l;

	if (log_begin(&l, LOG_INFO, "exec done")) {
		struct strbuf preview = STRBUF_INIT;
		log_command_preview(&preview, command);
		log_str(&l, "command", preview.buf);
		log_int(&l, "exit", res->exit_code);
		log_int(&l, "stdout_bytes", (int64_t)res->out_total);
		log_int(&l, "stderr_bytes", (int64_t)res->err_total);
		log_int(&l, "duration_ms", res->duration_ms);
		if (strcmp(res->reason, "exited"))
			log_str(&l, "reason", res->reason);
		log_end(&l);
		strbuf_release(&preview);
	}
}

/* After the command: turn a SIGKILL that the cgroup counted into "oom". */
void classify_oom(struct exec_params *p, struct exec_result *res)
{
	int64_t after;

	if (p->oom_before < 0)
		return;
	if (!(res->signal == SIGKILL || res->exit_code == 128 + SIGKILL))
		return;
	if (!strcmp(res->reason, "timeout") ||
	    !strcmp(res->reason, "cancelled"))
		return;
	after = oom_kills();
	if (after > p->oom_before)
		res->reason = "oom";
}

/* A stream's text for JSON: valid UTF-8, never split, marker if cut. */
static void add_stream_text(struct strbuf *out, const struct strbuf *data,
			    int truncated)
{
	size_t len = data->len;

	if (!truncated) {
		json_add_string(out, data->buf, len);
		return;
	}
	{
		struct strbuf tmp = STRBUF_INIT;

		len -= utf8_incomplete_tail(data->buf, len);
		strbuf_grow(&tmp, len + 20);
		strbuf_add(&tmp, data->buf, len);
		strbuf_addstr(&tmp, "\n... [truncated]");
		json_add_string(out, tmp.buf, tmp.len);
		strbuf_release(&tmp);
	}
}

/* Name the command after the request's X-Request-ID, for cancel. */
void set_tag(struct MHD_Connection *c, struct exec_params *p)
{
	const char *id =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Request-ID");

	if (id && *id) {
		p->tag = xstrdup(id);
		p->req.tag = p->tag;
	}
}

enum MHD_Result handle_exec_cancel(struct MHD_Connection *c, struct request *r,
				   const char *id)
{
	struct MHD_Response *resp;

	if (*id == '/')
		id++;
	if (!*id || strchr(id, '/'))
		return reply_error(c, r, 400,
				   "DELETE /v1/exec/<request id>: the "
				   "X-Request-ID of the command to cancel");
	if (!exec_cancel_tag(id, "cancelled"))
		return reply_error(c, r, 404,
				   "no running command has "
				   "request id '%s'",
				   id);
	resp = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	return reply(c, r, 204, resp);
}

enum MHD_Result handle_execute(struct MHD_Connection *c, struct request *r)
{
	struct exec_params p;
	struct exec_result res;
	struct strbuf err = STRBUF_INIT, body = STRBUF_INIT;
	unsigned status = parse_exec_body(r, &p, &err);
	enum MHD_Result ret;

	if (!status && (p.req.stdin_stream || p.req.tty)) {
		status = 400;
		strbuf_addstr(&err,
			      "stdin_stream and tty need POST /v1/exec or "
			      "GET /v1/exec (Documentation/"
			      "gosbx-runtime.txt)");
	}
	if (status) {
		ret = reply_error(c, r, status, "%s", err.buf);
		goto out;
	}
	p.req.stream_cap = UPSTREAM_STREAM_CAP;
	p.req.cancel_fd = connection_fd(c);
	set_tag(c, &p);
	p.oom_before = oom_kills();
	log_exec_begin(p.req.command);
	exec_result_init(&res);
	exec_run(&p.req, &res);
	classify_oom(&p, &res);
	log_exec_done(p.req.command, &res);

	strbuf_grow(&body, res.out.len + res.err.len + 256);
	strbuf_addf(&body, "{\"exit_code\":%d,\"stderr\":", res.exit_code);
	add_stream_text(&body, &res.err, res.err_truncated);
	strbuf_addstr(&body, ",\"stdout\":");
	add_stream_text(&body, &res.out, res.out_truncated);
	exec_result_add_fields(&body, &res, 1);
	strbuf_addch(&body, '}');
	exec_result_release(&res);
	ret = reply_json(c, r, 200, &body);
out:
	exec_params_release(&p);
	strbuf_release(&err);
	return ret;
}

/* A running POST /v1/exec: events are produced as the reader asks. */
struct exec_stream_state {
	struct exec_params p;
	struct exec_proc *proc;
	struct strbuf pending; /* encoded events not yet sent */
	size_t off;
	struct strbuf carry[2]; /* incomplete UTF-8 tails per stream */
	int finished;
	int done;
	uint64_t last_sent_ms; /* monotonic ms of the last bytes given out */
};

static int stream_output(enum exec_stream stream, const char *buf, size_t len,
			 void *data)
{
	struct exec_stream_state *s = data;
	struct strbuf *carry = &s->carry[stream - 1];
	struct strbuf joined = STRBUF_INIT;
	size_t tail;

	if (carry->len) {
		strbuf_addbuf(&joined, carry);
		strbuf_add(&joined, buf, len);
		strbuf_reset(carry);
		buf = joined.buf;
		len = joined.len;
	}
	tail = utf8_incomplete_tail(buf, len);
	exec_event_add_output(&s->pending, stream, buf, len - tail, -1);
	strbuf_add(carry, buf + len - tail, tail);
	strbuf_release(&joined);
	return 0;
}

static void stream_finish(struct exec_stream_state *s)
{
	struct exec_result res;

	exec_result_init(&res);
	exec_input_detach(&s->p);
	exec_finish(s->proc, &res);
	s->proc = NULL;
	classify_oom(&s->p, &res);
	log_exec_done(s->p.req.command, &res);
	for (int i = 0; i < 2; i++) {
		/* a cut character at the very end travels as base64 */
		if (s->carry[i].len)
			exec_event_add_output(&s->pending, i + 1,
					      s->carry[i].buf, s->carry[i].len,
					      -1);
		strbuf_reset(&s->carry[i]);
	}
	exec_event_begin_exit(&s->pending, &res);
	exec_event_end_exit(&s->pending, 1);
	exec_result_release(&res);
	s->finished = 1;
}

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct exec_stream_state *s = cls;
	size_t n;

	while (s->off == s->pending.len) {
		strbuf_reset(&s->pending);
		s->off = 0;
		if (s->finished)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (!exec_step(s->proc, (int)rt.heartbeat_ms))
			stream_finish(s);
		else if (!s->pending.len &&
			 monotonic_ms() - s->last_sent_ms >= rt.heartbeat_ms)
			/* a quiet command must not look like a dead
			 * connection to proxies with idle timeouts (the
			 * sandbox-router's is 180 s) */
			exec_event_add_simple(&s->pending,
					      EXEC_EVENT_HEARTBEAT);
	}
	n = s->pending.len - s->off;
	if (n > max)
		n = max;
	s->last_sent_ms = monotonic_ms();
	memcpy(buf, s->pending.buf + s->off, n);
	s->off += n;
	return n;
}

static void stream_free(void *cls)
{
	struct exec_stream_state *s = cls;

	if (s->proc) {
		/* the client went away before the end */
		exec_cancel(s->proc, "cancelled");
		stream_finish(s);
	}
	exec_params_release(&s->p);
	strbuf_release(&s->pending);
	strbuf_release(&s->carry[0]);
	strbuf_release(&s->carry[1]);
	free(s);
}

enum MHD_Result handle_exec_stream(struct MHD_Connection *c, struct request *r)
{
	struct exec_stream_state *s = xcalloc(1, sizeof(*s));
	struct strbuf err = STRBUF_INIT;
	unsigned status = parse_exec_body(r, &s->p, &err);
	struct MHD_Response *resp;
	enum MHD_Result ret;

	strbuf_init(&s->pending, 0);
	strbuf_init(&s->carry[0], 0);
	strbuf_init(&s->carry[1], 0);
	if (status) {
		ret = reply_error(c, r, status, "%s", err.buf);
		strbuf_release(&err);
		stream_free(s);
		return ret;
	}
	s->p.req.stream_cap = 1; /* everything is streamed, keep nothing */
	s->last_sent_ms = monotonic_ms();
	s->p.req.cancel_fd = connection_fd(c);
	set_tag(c, &s->p);
	s->p.req.on_output = stream_output;
	s->p.req.data = s;
	if (s->p.req.stdin_stream) {
		/* feature exec-input: stdin through other requests */
		status = exec_input_reserve(&s->p, &err);
		if (status) {
			ret = reply_error(c, r, status, "%s", err.buf);
			strbuf_release(&err);
			stream_free(s);
			return ret;
		}
		exec_event_add_simple(&s->pending, EXEC_EVENT_STARTED);
	}
	s->p.oom_before = oom_kills();
	log_exec_begin(s->p.req.command);
	exec_start(&s->p.req, &s->proc);
	exec_input_attach(&s->p, s->proc);
	strbuf_release(&err);
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 256 * 1024,
						 stream_reader, s, stream_free);
	if (!resp) {
		stream_free(s);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", "application/x-ndjson");
	MHD_add_response_header(resp, "Cache-Control", "no-cache");
	return reply(c, r, 200, resp);
}

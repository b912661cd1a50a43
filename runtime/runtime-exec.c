/*
 * POST /execute (upstream contract) and POST /v1/exec (`exec-stream`),
 * with the `exec-options` extension (Documentation/protocol/runtime-api.md).
 */
#include "compat.h"
#include "exec.h"
#include "json.h"
#include "proto/exec-events.h"
#include "runtime.h"
#include "utf8.h"

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
	exec_result_init(&res);
	command_run(&p, &res);

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
	command_finish(&s->p, s->proc, &res);
	s->proc = NULL;
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
	command_start(&s->p, &s->proc);
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

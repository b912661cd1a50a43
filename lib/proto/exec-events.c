/*
 * The exec stream's events, both ends (exec-events.h).
 */
#include "compat.h"
#include "proto/exec-events.h"
#include "utf8.h"

static const struct {
	enum exec_event_type type;
	const char *name;
} names[] = {
	{ EXEC_EVENT_STDOUT, "stdout" },
	{ EXEC_EVENT_STDERR, "stderr" },
	{ EXEC_EVENT_EXIT, "exit" },
	{ EXEC_EVENT_STARTED, "started" },
	{ EXEC_EVENT_HEARTBEAT, "heartbeat" },
	{ EXEC_EVENT_TRIMMED, "trimmed" },
};

static const char *type_name(enum exec_event_type type)
{
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].type == type)
			return names[i].name;
	return "unknown";
}

static void add_output_head(struct strbuf *out, const char *type,
			    int64_t offset)
{
	strbuf_addf(out, "{\"type\":\"%s\"", type);
	if (offset >= 0)
		strbuf_addf(out, ",\"offset\":%" PRId64, offset);
}

void exec_event_add_output(struct strbuf *out, enum exec_stream stream,
			   const char *buf, size_t len, int64_t offset)
{
	const char *type = stream == EXEC_STDOUT ? "stdout" : "stderr";
	size_t start = out->len;

	if (!len)
		return;
	add_output_head(out, type, offset);
	strbuf_addstr(out, ",\"data\":");
	if (json_add_string_strict(out, buf, len) < 0) {
		strbuf_setlen(out, start);
		add_output_head(out, type, offset);
		strbuf_addstr(out, ",\"b64\":\"");
		base64_encode_into(out, buf, len);
		strbuf_addch(out, '"');
	}
	strbuf_addstr(out, "}\n");
}

void exec_event_add_simple(struct strbuf *out, enum exec_event_type type)
{
	strbuf_addf(out, "{\"type\":\"%s\"}\n", type_name(type));
}

void exec_event_add_trimmed(struct strbuf *out, uint64_t bytes, uint64_t offset)
{
	strbuf_addf(out,
		    "{\"type\":\"trimmed\",\"bytes\":%" PRIu64
		    ",\"offset\":%" PRIu64 "}\n",
		    bytes, offset);
}

void exec_result_add_fields(struct strbuf *out, const struct exec_result *res,
			    int with_truncation)
{
	strbuf_addf(out, ",\"duration_ms\":%" PRId64 ",\"reason\":\"%s\"",
		    res->duration_ms, res->reason);
	if (res->signal)
		strbuf_addf(out, ",\"signal\":%d", res->signal);
	strbuf_addf(out, ",\"cpu_ms\":%" PRId64 ",\"peak_rss_kb\":%" PRId64,
		    res->cpu_ms, res->peak_rss_kb);
	strbuf_addf(out, ",\"stdout_truncated\":%s,\"stderr_truncated\":%s",
		    with_truncation && res->out_truncated ? "true" : "false",
		    with_truncation && res->err_truncated ? "true" : "false");
	if (res->output_held) {
		strbuf_addstr(out, ",\"output_held\":true");
		if (res->held_output) {
			strbuf_addstr(out, ",\"held_output\":");
			json_add_string(out, res->held_output,
					strlen(res->held_output));
		}
	}
}

void exec_event_begin_exit(struct strbuf *out, const struct exec_result *res)
{
	strbuf_addf(out, "{\"type\":\"exit\",\"exit_code\":%d", res->exit_code);
	exec_result_add_fields(out, res, 0);
}

void exec_event_end_exit(struct strbuf *out, int newline)
{
	strbuf_addstr(out, newline ? "}\n" : "}");
}

void exec_event_init(struct exec_event *ev)
{
	ev->type = EXEC_EVENT_UNKNOWN;
	ev->name = NULL;
	ev->data.buf = "";
	ev->data.len = 0;
	strbuf_init(&ev->b64, 0);
	ev->offset = -1;
	ev->bytes = 0;
	ev->json = NULL;
}

void exec_event_release(struct exec_event *ev)
{
	json_decref(ev->json);
	strbuf_release(&ev->b64);
	exec_event_init(ev);
}

static int bad(struct strbuf *err, const char *fmt, ...) PRINTF_LIKE(2, 3);
static int bad(struct strbuf *err, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		va_start(ap, fmt);
		strbuf_vaddf(err, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/*
 * "data" or "b64" of an output event into ev->data: "data" in place,
 * where jansson decoded it (a copy per output byte less, issue 22)
 */
static int take_output(struct exec_event *ev, struct strbuf *err)
{
	json_t *data = json_object_get(ev->json, "data");
	json_t *b64 = json_object_get(ev->json, "b64");

	if (json_is_string(data)) {
		ev->data.buf = json_string_value(data);
		ev->data.len = json_string_length(data);
		return 0;
	}
	if (!json_is_string(b64))
		return bad(err, "%s event without a string \"data\" or \"b64\"",
			   ev->name);
	if (base64_decode_into(&ev->b64, json_string_value(b64),
			       json_string_length(b64)) < 0)
		return bad(err, "%s event with bad base64", ev->name);
	ev->data.buf = ev->b64.buf;
	ev->data.len = ev->b64.len;
	return 0;
}

static int take_int(struct exec_event *ev, const char *key, int64_t *out,
		    struct strbuf *err)
{
	if (json_object_int(ev->json, key, out) < 0)
		return bad(err, "%s event with a non-integer \"%s\"", ev->name,
			   key);
	return 0;
}

int exec_event_parse(struct exec_event *ev, const char *line, size_t len,
		     struct strbuf *err)
{
	struct strbuf perr = STRBUF_INIT;
	int64_t v;

	exec_event_release(ev);
	if (len > EXEC_EVENT_LINE_MAX)
		return bad(err, "event line over %zu bytes",
			   EXEC_EVENT_LINE_MAX);
	ev->json = json_parse(line, len, &perr);
	if (!ev->json) {
		bad(err, "event line is not JSON: %s", perr.buf);
		strbuf_release(&perr);
		return -1;
	}
	strbuf_release(&perr);
	if (!json_is_object(ev->json))
		return bad(err, "event line is not a JSON object");
	ev->name = json_object_str(ev->json, "type");
	if (!ev->name)
		return bad(err, "event without a string \"type\"");
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(ev->name, names[i].name))
			ev->type = names[i].type;
	switch (ev->type) {
	case EXEC_EVENT_UNKNOWN:
		if (err) {
			strbuf_addstr(err, "unknown event type '");
			utf8_escape_into(err, ev->name, strnlen(ev->name, 32),
					 0);
			strbuf_addch(err, '\'');
		}
		return 1;
	case EXEC_EVENT_STDOUT:
	case EXEC_EVENT_STDERR:
		if (take_int(ev, "offset", &ev->offset, err) < 0)
			return -1;
		return take_output(ev, err);
	case EXEC_EVENT_EXIT:
		return take_int(ev, "exit_code", &v, err);
	case EXEC_EVENT_TRIMMED:
		if (take_int(ev, "offset", &ev->offset, err) < 0 ||
		    take_int(ev, "bytes", &ev->bytes, err) < 0)
			return -1;
		return 0;
	case EXEC_EVENT_STARTED:
	case EXEC_EVENT_HEARTBEAT:
		return 0;
	}
	return 0;
}

int exec_event_split(struct strbuf *line, const char *buf, size_t len,
		     size_t max,
		     int (*fn)(const char *text, size_t len, void *data),
		     void *data)
{
	while (len) {
		const char *nl = memchr(buf, '\n', len);
		size_t n = nl ? (size_t)(nl - buf) : len;

		if (n > max - line->len)
			return EXEC_EVENT_OVERLONG;
		if (!nl) {
			strbuf_add(line, buf, n);
			return 0;
		}
		if (line->len) {
			strbuf_add(line, buf, n);
			if (fn(line->buf, line->len, data) < 0)
				return -1;
			strbuf_reset(line);
		} else if (n && fn(buf, n, data) < 0) {
			/* a whole line in buf: no copy */
			return -1;
		}
		buf += n + 1;
		len -= n + 1;
	}
	return 0;
}

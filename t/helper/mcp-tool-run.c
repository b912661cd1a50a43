#include "compat.h"
#include "json.h"
#include "mcp.h"
#include "usage.h"

#include <stdarg.h>

/*
 * Test helper: call the toolset "go" (lib/mcp-tools-go.c) without the
 * protocol core, as one MCP session would. Each argument after the
 * options is the JSON arguments object of one run_go_code call; call
 * N (from 1) leaves its text in N.txt, "true" or "false" (isError) in
 * N.err and its structuredContent in N.json (empty without) in the
 * current directory. Progress notifications go to stderr as
 * "progress <n> <message>". When the calls are done the session ends
 * (the toolset's session_end). Exit status 0, 1 when a call failed
 * internally, 129 on usage errors.
 *
 * With --stdio it serves JSON-RPC lines on stdin instead (see
 * serve_stdio()).
 *
 * It carries small stand-ins for the core's functions that the
 * toolset uses, so it links whether or not lib/mcp.c exists.
 */

struct mcp_session {
	struct mcp_options opts;
	void *state;
	pthread_mutex_t lock;
};

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static int stdio_mode;

/* one JSON-RPC message on stdout (--stdio) */
static void send_message(json_t *msg)
{
	struct strbuf sb = STRBUF_INIT;

	if (json_dump_into(&sb, msg) < 0)
		die("cannot encode a message");
	strbuf_addch(&sb, '\n');
	pthread_mutex_lock(&log_lock);
	if (write_in_full(1, sb.buf, sb.len) < 0)
		die_errno("cannot write to stdout");
	pthread_mutex_unlock(&log_lock);
	strbuf_release(&sb);
	json_decref(msg);
}

void mcp_call_progress(struct mcp_call *call, double progress, double total,
		       const char *message)
{
	json_t *token = call->core, *params;

	if (!stdio_mode) {
		pthread_mutex_lock(&log_lock);
		fprintf(stderr, "progress %g %s\n", progress,
			message ? message : "");
		pthread_mutex_unlock(&log_lock);
		return;
	}
	if (!token)
		return;
	params = json_pack("{s:O,s:f}", "progressToken", token, "progress",
			   progress);
	if (total > 0)
		json_object_set_new(params, "total", json_real(total));
	if (message)
		json_object_set_new(params, "message", json_string(message));
	send_message(json_pack("{s:s,s:s,s:o}", "jsonrpc", "2.0", "method",
			       "notifications/progress", "params", params));
}

void mcp_log_stderr(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&log_lock);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	pthread_mutex_unlock(&log_lock);
}

void mcp_result_init(struct mcp_result *res)
{
	strbuf_init(&res->text, 0);
	res->is_error = 0;
	res->structured = NULL;
}

void mcp_result_release(struct mcp_result *res)
{
	strbuf_release(&res->text);
	json_decref(res->structured);
	res->structured = NULL;
}

void mcp_result_error(struct mcp_result *res, const char *fmt, ...)
{
	va_list ap;

	strbuf_reset(&res->text);
	va_start(ap, fmt);
	strbuf_vaddf(&res->text, fmt, ap);
	va_end(ap);
	res->is_error = 1;
}

const struct mcp_options *mcp_session_options(struct mcp_session *s)
{
	return &s->opts;
}

void **mcp_session_state(struct mcp_session *s, const struct mcp_toolset *ts)
{
	return &s->state;
}

void mcp_session_lock(struct mcp_session *s)
{
	pthread_mutex_lock(&s->lock);
}

void mcp_session_unlock(struct mcp_session *s)
{
	pthread_mutex_unlock(&s->lock);
}

static int write_string(const char *name, const char *buf, size_t len)
{
	FILE *f = fopen(name, "wb");

	if (!f)
		return error_errno("cannot create '%s'", name);
	if (len)
		fwrite(buf, 1, len, f);
	if (fclose(f))
		return error_errno("cannot write '%s'", name);
	return 0;
}

static int one_call(struct mcp_session *s, int nr, const char *arg)
{
	struct strbuf name = STRBUF_INIT, js = STRBUF_INIT, perr = STRBUF_INIT;
	struct mcp_call call = { 0 };
	struct mcp_result res;
	json_t *args = json_parse(arg, strlen(arg), &perr);
	int ret = 0;

	if (!json_is_object(args)) {
		json_decref(args);
		ret = error("call %d: arguments are not an object: %s", nr,
			    perr.buf);
		strbuf_release(&perr);
		return ret;
	}
	call.session = s;
	call.tool = mcp_toolset_go.tools[0].name;
	call.args = args;
	mcp_result_init(&res);
	if (mcp_toolset_go.tools[0].call(&call, &res) < 0)
		ret = error("call %d failed internally", nr);
	strbuf_addf(&name, "%d.txt", nr);
	write_string(name.buf, res.text.buf, res.text.len);
	strbuf_reset(&name);
	strbuf_addf(&name, "%d.err", nr);
	write_string(name.buf, res.is_error ? "true\n" : "false\n",
		     res.is_error ? 5 : 6);
	strbuf_reset(&name);
	strbuf_addf(&name, "%d.json", nr);
	if (res.structured && json_dump_into(&js, res.structured) < 0)
		ret = error("call %d: structuredContent cannot be encoded", nr);
	if (js.len)
		strbuf_addch(&js, '\n');
	write_string(name.buf, js.buf, js.len);
	mcp_result_release(&res);
	json_decref(args);
	strbuf_release(&name);
	strbuf_release(&js);
	strbuf_release(&perr);
	return ret;
}

static json_t *tool_json(const struct mcp_tool *t)
{
	json_t *o = json_pack("{s:s,s:s,s:s}", "name", t->name, "title",
			      t->title, "description", t->description);

	json_object_set_new(o, "inputSchema",
			    json_loads(t->input_schema, 0, NULL));
	if (t->output_schema)
		json_object_set_new(o, "outputSchema",
				    json_loads(t->output_schema, 0, NULL));
	return o;
}

static json_t *answer(json_t *req, json_t *result)
{
	return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id",
			 json_object_get(req, "id"), "result", result);
}

/*
 * --stdio: a minimal sequential stand-in for `gosbx mcp` on stdio
 * (initialize, tools/list, tools/call of run_go_code with progress),
 * enough for t/t4020 until the protocol core exists. EOF ends the
 * session.
 */
static int serve_stdio(struct mcp_session *s)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	while ((n = getline(&line, &cap, stdin)) > 0) {
		json_t *req = json_loads(line, 0, NULL);
		const char *method = json_object_str(req, "method");
		json_t *params = json_object_get(req, "params");

		if (!method || !json_object_get(req, "id")) {
			json_decref(req);
			continue;
		}
		if (!strcmp(method, "initialize")) {
			send_message(answer(
				req,
				json_pack("{s:O,s:{s:{}},s:{s:s,s:s}}",
					  "protocolVersion",
					  json_object_get(params,
							  "protocolVersion"),
					  "capabilities", "tools", "serverInfo",
					  "name", "mcp-tool-run", "version",
					  "0")));
		} else if (!strcmp(method, "tools/list")) {
			json_t *tools = json_array();

			for (size_t i = 0; i < mcp_toolset_go.nr_tools; i++)
				json_array_append_new(
					tools,
					tool_json(&mcp_toolset_go.tools[i]));
			send_message(answer(
				req, json_pack("{s:o}", "tools", tools)));
		} else if (!strcmp(method, "tools/call")) {
			struct mcp_call call = { 0 };
			struct mcp_result res;
			json_t *r, *args = json_object_get(params, "arguments");

			call.session = s;
			call.tool = mcp_toolset_go.tools[0].name;
			call.args = json_is_object(args) ? args : json_object();
			call.core = json_object_get(
				json_object_get(params, "_meta"),
				"progressToken");
			mcp_result_init(&res);
			if (mcp_toolset_go.tools[0].call(&call, &res) < 0)
				die("the tool failed internally");
			r = json_pack("{s:[{s:s,s:s%}],s:b}", "content", "type",
				      "text", "text", res.text.buf,
				      res.text.len, "isError", res.is_error);
			if (res.structured)
				json_object_set(r, "structuredContent",
						res.structured);
			send_message(answer(req, r));
			if (!json_is_object(args))
				json_decref(call.args);
			mcp_result_release(&res);
		}
		json_decref(req);
	}
	free(line);
	return 0;
}

int main(int argc, const char **argv)
{
	struct mcp_session s;
	int i, ret = 0;

	memset(&s, 0, sizeof(s));
	pthread_mutex_init(&s.lock, NULL);
	s.opts.namespace = "default";
	s.opts.template = "go-runtime-template";
	s.opts.open_timeout_ms = 5 * 60 * 1000;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v;

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (*a != '-')
			break;
		if (!strcmp(a, "--persistent")) {
			s.opts.persistent = 1;
		} else if (!strcmp(a, "--ephemeral")) {
			s.opts.ephemeral = 1;
		} else if (skip_prefix(a, "--claim=", &v)) {
			s.opts.claim = v;
		} else if (skip_prefix(a, "--backend=", &v)) {
			s.opts.sandbox.backend = v;
		} else if (skip_prefix(a, "--url=", &v)) {
			s.opts.sandbox.url = v;
		} else if (skip_prefix(a, "--namespace=", &v)) {
			s.opts.namespace = v;
		} else if (skip_prefix(a, "--template=", &v)) {
			s.opts.template = v;
		} else if (!strcmp(a, "--stdio")) {
			stdio_mode = 1;
		} else {
			fprintf(stderr,
				"usage: mcp-tool-run [--persistent] "
				"[--ephemeral] [--claim=<name>] "
				"[--backend=<b>] [--url=<u>] [--stdio] "
				"[--namespace=<ns>] [--template=<t>] [--] "
				"<args-json>...\n");
			return 129;
		}
	}
	if (stdio_mode)
		ret = serve_stdio(&s);
	for (int nr = 1; i < argc; i++, nr++)
		if (one_call(&s, nr, argv[i]) < 0)
			ret = 1;
	if (mcp_toolset_go.session_end)
		mcp_toolset_go.session_end(&s, s.state);
	pthread_mutex_destroy(&s.lock);
	return ret;
}

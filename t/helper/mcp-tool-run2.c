#include "compat.h"
#include "json.h"
#include "mcp.h"
#include "strbuf.h"
#include "usage.h"

#include <pthread.h>

/*
 * A stand-in for the MCP protocol core (lib/mcp.c) while it is being
 * written: serves one toolset over stdio with the bare minimum of
 * JSON-RPC (initialize, tools/list, tools/call on a thread per call),
 * implementing the mcp.h functions the toolsets use. At EOF it waits
 * for the calls, then ends the session. Test-only.
 *
 *   mcp-tool-run2 --tools=sandbox|jobs [--persistent]
 */

struct mcp_session {
	pthread_mutex_t lock;
	void *state[3];
	struct mcp_options opts;
};

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct mcp_toolset *toolset;

void mcp_options_init(struct mcp_options *o)
{
	memset(o, 0, sizeof(*o));
	o->namespace = "default";
	o->template = "go-runtime-template";
	o->open_timeout_ms = 300000;
	o->jobs_cpu_budget_ms = 10000;
	o->jobs_max_concurrent = 2;
}

void mcp_call_progress(struct mcp_call *call, double progress, double total,
		       const char *message)
{
	(void)call;
	(void)progress;
	(void)total;
	(void)message;
}

void mcp_call_log(struct mcp_call *call, const char *level, const char *fmt,
		  ...)
{
	va_list ap;

	(void)call;
	pthread_mutex_lock(&out_lock);
	fprintf(stderr, "[%s] ", level);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	pthread_mutex_unlock(&out_lock);
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
	if (ts == &mcp_toolset_sandbox)
		return &s->state[1];
	return &s->state[2];
}

void mcp_session_lock(struct mcp_session *s)
{
	pthread_mutex_lock(&s->lock);
}

void mcp_session_unlock(struct mcp_session *s)
{
	pthread_mutex_unlock(&s->lock);
}

const char *mcp_session_label(struct mcp_session *s)
{
	(void)s;
	return "stdio";
}

void mcp_log_stderr(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&out_lock);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	pthread_mutex_unlock(&out_lock);
}

static void send_json(json_t *msg)
{
	struct strbuf sb = STRBUF_INIT;

	json_dump_into(&sb, msg);
	strbuf_addch(&sb, '\n');
	pthread_mutex_lock(&out_lock);
	fwrite(sb.buf, 1, sb.len, stdout);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	strbuf_release(&sb);
}

struct call_job {
	struct mcp_call call;
	json_t *id;
	json_t *args;
	const struct mcp_tool *tool;
	pthread_t thread;
};

static void *call_thread(void *arg)
{
	struct call_job *cj = arg;
	struct mcp_result res;
	json_t *result, *msg;

	mcp_result_init(&res);
	if (cj->tool->call(&cj->call, &res) < 0) {
		msg = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0",
				"id", cj->id, "error", "code", -32603,
				"message", "internal error");
	} else {
		struct strbuf text = STRBUF_INIT;
		strbuf_addbuf(&text, &res.text);
		result = json_pack("{s:[{s:s, s:s%}], s:b}", "content", "type",
				   "text", "text", text.buf, text.len,
				   "isError", res.is_error);
		if (!result)
			result = json_pack("{s:[{s:s, s:s}], s:b}", "content",
					   "type", "text", "text",
					   "(invalid UTF-8)", "isError", 1);
		if (res.structured)
			json_object_set(result, "structuredContent",
					res.structured);
		msg = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id",
				cj->id, "result", result);
		strbuf_release(&text);
	}
	send_json(msg);
	json_decref(msg);
	mcp_result_release(&res);
	return NULL;
}

static json_t *tools_list(void)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < toolset->nr_tools; i++) {
		const struct mcp_tool *t = &toolset->tools[i];
		json_t *schema = json_loads(t->input_schema, 0, NULL);
		json_t *o;
		if (!schema)
			die("bad input schema of %s", t->name);
		o = json_pack("{s:s, s:s, s:o}", "name", t->name, "description",
			      t->description, "inputSchema", schema);
		if (t->output_schema) {
			json_t *os = json_loads(t->output_schema, 0, NULL);
			if (!os)
				die("bad output schema of %s", t->name);
			json_object_set_new(o, "outputSchema", os);
		}
		json_object_set_new(
			o, "annotations",
			json_pack("{s:b, s:b, s:b}", "readOnlyHint",
				  !!(t->hints & MCP_HINT_READ_ONLY),
				  "destructiveHint",
				  !!(t->hints & MCP_HINT_DESTRUCTIVE),
				  "idempotentHint",
				  !!(t->hints & MCP_HINT_IDEMPOTENT)));
		json_array_append_new(arr, o);
	}
	return arr;
}

int main(int argc, const char **argv)
{
	struct mcp_session sess;
	struct strbuf line = STRBUF_INIT;
	struct call_job **calls = NULL;
	size_t nr = 0, alloc = 0;

	memset(&sess, 0, sizeof(sess));
	pthread_mutex_init(&sess.lock, NULL);
	mcp_options_init(&sess.opts);
	sess.opts.sandbox.backend = getenv("GOSBX_BACKEND");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--tools=sandbox"))
			toolset = &mcp_toolset_sandbox;
		else if (!strcmp(argv[i], "--tools=jobs"))
			toolset = &mcp_toolset_jobs;
		else if (!strcmp(argv[i], "--persistent"))
			sess.opts.persistent = 1;
		else
			die("usage: mcp-tool-run2 --tools=sandbox|jobs "
			    "[--persistent]");
	}
	if (!toolset)
		die("usage: mcp-tool-run2 --tools=sandbox|jobs");

	while (strbuf_getline(&line, stdin) != EOF) {
		json_t *msg = json_loads(line.buf, 0, NULL);
		const char *method = json_object_str(msg, "method");
		json_t *id = json_object_get(msg, "id");
		json_t *params = json_object_get(msg, "params");

		if (!method || !id) {
			json_decref(msg);
			continue;
		}
		if (!strcmp(method, "initialize")) {
			json_t *r = json_pack(
				"{s:s, s:O, s:{s:s, s:{s:{}}, s:{s:s, s:s}}}",
				"jsonrpc", "2.0", "id", id, "result",
				"protocolVersion", "2025-06-18", "capabilities",
				"tools", "serverInfo", "name", "mcp-tool-run2",
				"version", "0");
			send_json(r);
			json_decref(r);
		} else if (!strcmp(method, "tools/list")) {
			json_t *r = json_pack("{s:s, s:O, s:{s:o}}", "jsonrpc",
					      "2.0", "id", id, "result",
					      "tools", tools_list());
			send_json(r);
			json_decref(r);
		} else if (!strcmp(method, "tools/call")) {
			const char *name = json_object_str(params, "name");
			json_t *args = json_object_get(params, "arguments");
			const struct mcp_tool *tool = NULL;
			struct call_job *cj;

			for (size_t i = 0; name && i < toolset->nr_tools; i++)
				if (!strcmp(toolset->tools[i].name, name))
					tool = &toolset->tools[i];
			if (!tool) {
				json_t *r = json_pack(
					"{s:s, s:O, s:{s:i, s:s}}", "jsonrpc",
					"2.0", "id", id, "error", "code",
					-32602, "message", "unknown tool");
				send_json(r);
				json_decref(r);
				json_decref(msg);
				continue;
			}
			cj = xcalloc(1, sizeof(*cj));
			cj->id = json_incref(id);
			cj->args = json_is_object(args) ? json_incref(args)
							: json_object();
			cj->tool = tool;
			cj->call.session = &sess;
			cj->call.tool = tool->name;
			cj->call.args = cj->args;
			if (pthread_create(&cj->thread, NULL, call_thread, cj))
				die("pthread_create");
			ALLOC_GROW(calls, nr + 1, alloc);
			calls[nr++] = cj;
		}
		json_decref(msg);
	}
	for (size_t i = 0; i < nr; i++) {
		pthread_join(calls[i]->thread, NULL);
		json_decref(calls[i]->id);
		json_decref(calls[i]->args);
		free(calls[i]);
	}
	free(calls);
	if (toolset->session_end)
		toolset->session_end(&sess, *mcp_session_state(&sess, toolset));
	strbuf_release(&line);
	pthread_mutex_destroy(&sess.lock);
	return 0;
}

/*
 * libFuzzer harness: MCP message handling (lib/mcp/mcp.c), as the stdio
 * transport feeds it (Documentation/protocol/mcp.md "Protocol"). The input is a
 * conversation: newline-delimited JSON-RPC messages, each served in
 * order by one session of a server with a small toolset (echo, and a
 * tool that fails), so that initialize, every revision's checks,
 * tools/list paging, tools/call, batches, cancellations and the
 * 2026-07-28 requests are all reached without sandboxes. Properties:
 * every message the server sends is valid JSON, one JSON-RPC message
 * (an object) or a batch answer (a non-empty array of them), and the
 * session ends once its calls are done.
 */
#include "compat.h"
#include "json.h"
#include "mcp/mcp-internal.h"
#include "mcp/mcp.h"
#include "strbuf.h"
#include "usage.h"

#include <stdint.h>

static struct mcp_server *srv;

static int echo_call(struct mcp_call *call, struct mcp_result *res)
{
	json_dump_into(&res->text, call->args);
	res->structured = json_deep_copy(call->args);
	return 0;
}

static int fail_call(struct mcp_call *call, struct mcp_result *res)
{
	mcp_call_progress(call, 1, 2, "half");
	mcp_call_log(call, "info", "failing %s", call->tool);
	return -1;
}

static const struct mcp_tool tools[] = {
	{ "echo", "Echo", "Echo the arguments.",
	  "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":"
	  "\"string\"}}}",
	  NULL, MCP_HINT_READ_ONLY, echo_call },
	{ "fail", NULL, "Fail.", "{\"type\":\"object\"}", NULL, 0, fail_call },
};

static const struct mcp_toolset fuzz_toolset = {
	"fuzz",
	tools,
	ARRAY_SIZE(tools),
	NULL,
};

static void quiet(const char *prefix, const char *msg, void *data)
{
}

static void check_send(struct mcp_chan *ch, const char *msg, size_t len,
		       int final, int http_status)
{
	json_t *v;

	if (!msg)
		return;
	v = json_loadb(msg, len, 0, NULL);
	/* a JSON-RPC message, or a batch answer: an array of them */
	if (json_is_array(v)) {
		size_t i;
		json_t *e;

		if (!json_array_size(v))
			abort(); /* an empty batch answer is never sent */
		json_array_foreach (v, i, e)
			if (!json_is_object(e))
				abort();
	} else if (!json_is_object(v)) {
		abort(); /* the server sent something that is not JSON-RPC */
	}
	json_decref(v);
}

static void no_destroy(struct mcp_chan *ch)
{
}

static void setup(void)
{
	const struct mcp_toolset *sets[] = { &fuzz_toolset };
	struct mcp_options o;

	set_error_routine(quiet, NULL);
	mcp_options_init(&o);
	srv = mcp_server_new(&o, sets, 1);
	if (!srv)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mcp_chan ch;
	struct mcp_session *s;
	const char *p = (const char *)data, *end = p + size;

	if (!srv)
		setup();
	mcp_chan_init(&ch);
	ch.send = check_send;
	ch.destroy = no_destroy;
	s = mcp_session_new(srv, NULL, "fuzz", 0);
	mcp_session_get(s);
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		json_t *v = json_parse(p, n, NULL);

		/* as the stdio transport: batches and single messages */
		if (json_is_array(v))
			mcp_handle_batch(s, v, &ch);
		else if (v)
			mcp_handle_message(s, v, &ch);
		json_decref(v);
		p += n + 1;
	}
	mcp_session_put(s);
	/* waits for the calls still running; they hold ch */
	mcp_session_end(s, -1);
	return 0;
}

/*
 * test-mcp-server: the MCP core (lib/mcp/mcp.c, lib/mcp/mcp-http.c) with a
 * toolset made for the protocol tests (t4000, t4010), so they do not
 * depend on sandboxes:
 *
 *   test-mcp-server            serve stdio
 *   test-mcp-server <addr>     serve HTTP (--dev) on addr
 *
 * structuredContent and outputSchema are on (--structured-content)
 * unless TEST_MCP_STRUCTURED=0.
 *
 * Tools: echo (text = the arguments, structuredContent), sleep {ms,
 * steps, delay} (delay ms, then progress each step, cancellable), log
 * {level, text}, fail (internal error), bad (isError result),
 * pad00..pad11 (17 tools in all).
 * stderr gets "cancelled <tool>" when a call saw its cancellation and
 * "session_end <label> calls=<n>" when a session ends.
 */
#include "compat.h"
#include "json.h"
#include "mcp/mcp.h"
#include "strbuf.h"
#include "usage.h"

#include <fcntl.h>
#include <signal.h>

static const struct mcp_toolset test_toolset;

static void count_call(struct mcp_call *call)
{
	void **slot;

	mcp_session_lock(call->session);
	slot = mcp_session_state(call->session, &test_toolset);
	if (!*slot)
		*slot = xcalloc(1, sizeof(int));
	(*(int *)*slot)++;
	mcp_session_unlock(call->session);
}

static int echo_call(struct mcp_call *call, struct mcp_result *res)
{
	count_call(call);
	json_dump_into(&res->text, call->args);
	res->structured = json_deep_copy(call->args);
	return 0;
}

static int sleep_call(struct mcp_call *call, struct mcp_result *res)
{
	int64_t ms = 100, steps = 1, delay = 0;

	count_call(call);
	json_object_int(call->args, "ms", &ms);
	json_object_int(call->args, "steps", &steps);
	json_object_int(call->args, "delay", &delay);
	usleep((useconds_t)delay * 1000);
	for (int64_t i = 1; i <= steps; i++) {
		for (int64_t t = 0; t < ms; t += 10) {
			if (call->cancelled) {
				mcp_log_stderr("cancelled %s", call->tool);
				strbuf_addstr(&res->text, "cancelled");
				return 0;
			}
			usleep(10000);
		}
		struct strbuf m = STRBUF_INIT;
		strbuf_addf(&m, "step %" PRId64, i);
		mcp_call_progress(call, (double)i, (double)steps, m.buf);
		strbuf_release(&m);
	}
	strbuf_addf(&res->text, "slept %" PRId64 " steps", steps);
	return 0;
}

static int log_call(struct mcp_call *call, struct mcp_result *res)
{
	const char *level = json_object_str(call->args, "level");
	const char *text = json_object_str(call->args, "text");

	mcp_call_log(call, level ? level : "info", "%s", text ? text : "");
	strbuf_addstr(&res->text, "logged");
	return 0;
}

static int fail_call(struct mcp_call *call, struct mcp_result *res)
{
	return error("boom");
}

static int bad_call(struct mcp_call *call, struct mcp_result *res)
{
	mcp_result_error(res, "bad arguments: %s", "nope");
	return 0;
}

static int pad_call(struct mcp_call *call, struct mcp_result *res)
{
	strbuf_addstr(&res->text, call->tool);
	return 0;
}

#define OBJ "{\"type\":\"object\"}"
#define PAD(n)                                                                 \
	{                                                                      \
		"pad" #n, NULL, "padding for pagination", OBJ, NULL,           \
			MCP_HINT_READ_ONLY, pad_call                           \
	}

static const struct mcp_tool tools[] = {
	{ "echo", "Echo", "returns its arguments", OBJ, OBJ,
	  MCP_HINT_READ_ONLY | MCP_HINT_IDEMPOTENT, echo_call },
	{ "sleep", "Sleep", "sleeps, with progress",
	  "{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":"
	  "\"integer\"},\"steps\":{\"type\":\"integer\"}}}",
	  NULL, MCP_HINT_NOT_DESTRUCTIVE | MCP_HINT_OPEN_WORLD, sleep_call },
	{ "log", NULL, "logs a line", OBJ, NULL, 0, log_call },
	{ "fail", NULL, "fails inside", OBJ, NULL, MCP_HINT_DESTRUCTIVE,
	  fail_call },
	{ "bad", NULL, "answers isError", OBJ, NULL, 0, bad_call },
	PAD(00),
	PAD(01),
	PAD(02),
	PAD(03),
	PAD(04),
	PAD(05),
	PAD(06),
	PAD(07),
	PAD(08),
	PAD(09),
	PAD(10),
	PAD(11),
};

static void test_session_end(struct mcp_session *s, void *state)
{
	mcp_log_stderr("session_end %s calls=%d", mcp_session_label(s),
		       *(int *)state);
	free(state);
}

static const struct mcp_toolset test_toolset = {
	"test",
	tools,
	ARRAY_SIZE(tools),
	test_session_end,
};

static int stop_pipe[2];

static void on_signal(int sig)
{
	char c = (char)sig;

	if (write(stop_pipe[1], &c, 1) < 0)
		errno = 0;
}

int main(int argc, const char **argv)
{
	const struct mcp_toolset *sets[] = { &test_toolset };
	struct mcp_options o;
	struct mcp_server *srv;
	struct sigaction sa;
	int ret;

	progname = "test-mcp-server";
	signal(SIGPIPE, SIG_IGN);
	if (pipe2(stop_pipe, O_CLOEXEC))
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	mcp_options_init(&o);
	o.structured_content = !getenv("TEST_MCP_STRUCTURED") ||
			       strcmp(getenv("TEST_MCP_STRUCTURED"), "0");
	if (!(srv = mcp_server_new(&o, sets, 1)))
		return 1;
	if (argc > 1) {
		struct mcp_http_opts h = { .addr = argv[1], .dev = 1 };
		const char *tok = getenv("TEST_MCP_TOKEN");
		const char *idle = getenv("TEST_MCP_IDLE_MS");

		if (tok) {
			h.token = tok;
			h.dev = 0;
		}
		if (idle)
			h.session_idle_ms = atoll(idle);
		ret = mcp_serve_http(srv, &h, stop_pipe[0]);
	} else {
		ret = mcp_serve_stdio(srv, 0, 1, stop_pipe[0]);
	}
	mcp_server_free(srv);
	close(stop_pipe[0]);
	close(stop_pipe[1]);
	return ret < 0 ? 1 : 0;
}

#ifndef MCP_H
#define MCP_H

#include "compat.h"
#include "session/session.h"
#include "strbuf.h"

#include <jansson.h>
#include <pthread.h>
#include <signal.h>

/*
 * The MCP server core (`gosbx mcp`, Documentation/protocol/mcp.md):
 * JSON-RPC 2.0 over stdio or streamable HTTP, every revision of
 * Documentation/protocol/mcp.md, and the tools of the toolsets chosen with
 * --tools. This header is the boundary between the protocol core
 * (lib/mcp/mcp.c, lib/mcp/mcp-http.c) and the toolsets (lib/mcp/mcp-tools-go.c,
 * lib/mcp/mcp-tools-sandbox.c, lib/mcp/mcp-tools-jobs.c).
 *
 * An MCP session is one stdio connection, or one HTTP session
 * (Mcp-Session-Id) of a handshake revision; a 2026-07-28 request on
 * HTTP without one has a session of its own, ended with the request,
 * unless it names a state (_meta "dev.gosbx/session", gosbx-mcp(1)).
 * Toolsets keep their per-session state (the lazy sandbox, named
 * sandboxes, jobs) in mcp_session.state[], created on first use and
 * freed when the session ends (client gone, DELETE, SIGTERM).
 */

struct mcp_server;
struct mcp_session;

/*
 * How often the toolsets touch the sandboxes they hold
 * (session_keepalive_start): well inside the local backend's default
 * idle TTL of 1 h, so a sandbox lives as long as its MCP session and
 * expires after the TTL once the server is gone.
 */
#define MCP_KEEPALIVE_MS (5 * 60 * 1000)

/*
 * Heartbeats: while a tools/call that carries a progressToken runs, the
 * core sends notifications/progress ("running, 30 s") whenever nothing
 * was sent for this long, output or not, so that a client that resets
 * its request timeout on progress (the official SDKs'
 * resetTimeoutOnProgress; their default timeout is 60 s) never gives up
 * on a live command (issue 21). Milliseconds; GOSBX_MCP_HEARTBEAT
 * (a duration, gosbx-mcp(1) ENVIRONMENT) overrides it for tests.
 */
#define MCP_HEARTBEAT_MS (5 * 1000)

/* Server-wide options (seed 000 flags, Documentation/protocol/mcp.md
 * "Lifecycle"). */
struct mcp_options {
	/* backend for sandboxes: backend, url, limits (session_opts) */
	struct session_opts sandbox;
	/* NULL: the backend decides (backend_defaults(), lib/session/session.h)
	 */
	const char *namespace;
	const char *template;
	const char *claim; /* reattach run_go_code to this claim */
	int persistent;	   /* keep sandboxes when the client goes */
	/*
	 * --claim on streamable HTTP: every session reattaches to the
	 * same claim, so a session that ends only disconnects from it
	 * (deleting it would pull it from under the others).
	 */
	int shared_claim;
	int ephemeral;		 /* wipe /app before every run_go_code */
	int64_t open_timeout_ms; /* default 5 min */
	/*
	 * Longest run of one command of run_go_code, sandbox_run_code
	 * and sandbox_run_command, in ms (--call-timeout); default 5 min,
	 * the seed's defaultExecuteTimeout. Jobs keep their own limit.
	 */
	int64_t call_timeout_ms;
	/* heartbeat interval in ms (MCP_HEARTBEAT_MS); <= 0: none */
	int64_t heartbeat_ms;
	/*
	 * --structured-content: tools/list gives each tool's outputSchema
	 * and results carry structuredContent (2025-06-18 on). Off by
	 * default: Claude Code and VS Code hand the model the JSON of
	 * structuredContent instead of the text (Documentation/protocol/mcp.md
	 * "Tool run_go_code"), and the peers of seeds 002 and 003 send text.
	 */
	int structured_content;
	/* jobs toolset: CPU budget in CPU-ms per minute, concurrency */
	int64_t jobs_cpu_budget_ms; /* default 10,000 */
	int jobs_max_concurrent;    /* running at once; default 2 */
	/* sandbox toolset: sandboxes one MCP session may hold at once */
	int max_sandboxes; /* default 4 */
};

void mcp_options_init(struct mcp_options *o);

/* One tools/call being served. */
struct mcp_call {
	struct mcp_session *session;
	const char *tool; /* tool name */
	json_t *args;	  /* the arguments object (borrowed; never NULL) */
	/*
	 * Set when the client cancels the request (notifications/
	 * cancelled, or the HTTP stream closed): pass it to
	 * session_exec.cancel so the command's process group is killed.
	 */
	volatile sig_atomic_t cancelled;
	/* private to the core */
	void *core;
};

/*
 * Send notifications/progress for this call (only if the client gave
 * a progressToken; otherwise nothing happens). progress must grow with
 * every call; total <= 0 leaves it out; message may be NULL (only sent
 * from revision 2025-03-26 on). Thread-safe. The core's heartbeats
 * (MCP_HEARTBEAT_MS) go between these: each shifts the values sent
 * later (progress and total) up by one, so that what the client sees
 * still grows strictly (the MCP spec's rule).
 */
void mcp_call_progress(struct mcp_call *call, double progress, double total,
		       const char *message);

/*
 * Did the client give this call a progressToken, so that
 * mcp_call_progress() sends anything? 1 or 0. A tool skips the work of
 * progress messages nobody gets (run_go_code's live output).
 */
int mcp_call_wants_progress(const struct mcp_call *call);

/*
 * Log to the client (notifications/message, handshake revisions, at or
 * above the level the client set) and to stderr. level: "debug",
 * "info", "notice", "warning", "error". Thread-safe.
 */
void mcp_call_log(struct mcp_call *call, const char *level, const char *fmt,
		  ...) PRINTF_LIKE(3, 4);

/*
 * What a tool returns: one text block, isError, structuredContent. The
 * core sends structured only when the operator asked for it
 * (mcp_options.structured_content); the text must say everything.
 */
struct mcp_result {
	struct strbuf text; /* the text content block */
	int is_error;
	json_t *structured; /* structuredContent (owned) or NULL */
};

void mcp_result_init(struct mcp_result *res);
void mcp_result_release(struct mcp_result *res);
/* Replace the text with a formatted message and set is_error. */
void mcp_result_error(struct mcp_result *res, const char *fmt, ...)
	PRINTF_LIKE(2, 3);

/*
 * The timeout argument of a tool that runs a command (issue 21: no
 * hidden limit): args "timeout" absent or null gives dflt_ms; a number
 * of seconds (> 0) or a duration string ("90s", "2m") gives that, if it
 * is at most the operator's --call-timeout (mcp_options.call_timeout_ms).
 * Returns 0 with *out_ms set, or -1 with res an error result naming the
 * limit (a larger value is refused, never clamped).
 */
int mcp_call_timeout_arg(struct mcp_call *call, struct mcp_result *res,
			 int64_t dflt_ms, int64_t *out_ms);
/* the inputSchema property of that argument, for the tools' schemas */
#define MCP_TIMEOUT_PROP                                                       \
	"\"timeout\":{\"type\":\"number\","                                    \
	"\"description\":\"Longest run of the command in seconds, above 0 (a " \
	"duration string such as \\\"90s\\\" or \\\"2m\\\" is accepted too); " \
	"at most the server's call timeout (gosbx mcp --call-timeout; a "      \
	"larger value is refused). Default: the tool's limit. A command "      \
	"cut by it is killed and the result says reason=timeout.\"}"

/* MCP tool annotations (2025-03-26 on): bits of mcp_tool.hints */
#define MCP_HINT_READ_ONLY (1u << 0)
#define MCP_HINT_DESTRUCTIVE (1u << 1)
#define MCP_HINT_IDEMPOTENT (1u << 2)
#define MCP_HINT_OPEN_WORLD (1u << 3)
#define MCP_HINT_NOT_DESTRUCTIVE (1u << 4) /* destructiveHint: false */

struct mcp_tool {
	const char *name;
	const char *title; /* 2025-06-18 on; may be NULL */
	const char *description;
	const char *input_schema; /* JSON text of the inputSchema */
	/* JSON text or NULL (2025-06-18 on, with structured_content) */
	const char *output_schema;
	unsigned hints; /* MCP_HINT_* */
	/*
	 * Serve the call. Arguments were checked to be an object; the
	 * tool validates them against its schema itself and answers bad
	 * ones with mcp_result_error() (never a crash). Runs on a worker
	 * thread; may block for as long as the command runs. Returns 0;
	 * -1 only for an internal failure (the core answers -32603).
	 */
	int (*call)(struct mcp_call *call, struct mcp_result *res);
	/*
	 * Optional: append to the description what depends on the
	 * server's options (e.g. the operator's limits), once, when the
	 * server is made. NULL: the description is used as written.
	 */
	void (*describe)(const struct mcp_options *o, struct strbuf *out);
};

/* A toolset: its tools and its per-session state. */
struct mcp_toolset {
	const char *name; /* "go", "sandbox", "jobs" */
	const struct mcp_tool *tools;
	size_t nr_tools;
	/*
	 * Called when a session ends (client gone, DELETE, shutdown) with
	 * the state the toolset stored in mcp_session_state(); frees it and
	 * closes (or, with --persistent, disconnects) its sandboxes. May be
	 * NULL.
	 */
	void (*session_end)(struct mcp_session *s, void *state);
};

extern const struct mcp_toolset mcp_toolset_go;
extern const struct mcp_toolset mcp_toolset_sandbox;
extern const struct mcp_toolset mcp_toolset_jobs;

/* How many toolsets there are (the most --tools can name). */
#define MCP_NR_TOOLSETS 3

/*
 * Every toolset, in the order of tools/list (go, sandbox, jobs): a new
 * toolset is one entry in this table (lib/mcp/mcp.c), found by its name.
 */
extern const struct mcp_toolset *const mcp_toolsets[MCP_NR_TOOLSETS];
/* The toolset called name (--tools), or NULL. */
const struct mcp_toolset *mcp_toolset_find(const char *name);
/* Its index in mcp_toolsets[], or -1. */
int mcp_toolset_index(const char *name);
/* Their names, "go, sandbox, jobs", for messages. */
const char *mcp_toolset_names(void);

/* The server's options (valid for the server's life). */
const struct mcp_options *mcp_session_options(struct mcp_session *s);

/*
 * The toolset's state slot in this session: *mcp_session_state(s, ts)
 * is NULL until the toolset stores something there. The session lock
 * (mcp_session_lock) guards it.
 */
void **mcp_session_state(struct mcp_session *s, const struct mcp_toolset *ts);
void mcp_session_lock(struct mcp_session *s);
void mcp_session_unlock(struct mcp_session *s);

/*
 * A short id of the session for logs and claim labels ("stdio" or the
 * first 8 characters of the HTTP session id).
 */
const char *mcp_session_label(struct mcp_session *s);

/* Log one line to stderr (never stdout), as given: no prefix. */
void mcp_log_stderr(const char *fmt, ...) PRINTF_LIKE(1, 2);

/* ---- the server (lib/mcp/mcp.c, lib/mcp/mcp-http.c), for `gosbx mcp` ---- */

/*
 * A server offering the tools of the given toolsets (in that order in
 * tools/list). o is copied (its strings must outlive the server).
 * Returns NULL with error() when a tool's schema is not valid JSON or
 * two tools share a name. Free with mcp_server_free() after serving.
 */
struct mcp_server *mcp_server_new(const struct mcp_options *o,
				  const struct mcp_toolset *const *toolsets,
				  size_t nr);
void mcp_server_free(struct mcp_server *srv);

/*
 * Serve one session over stdio (newline-delimited JSON-RPC,
 * Documentation/protocol/mcp.md "Protocol"): read in_fd, write frames to
 * out_fd. Returns 0 when in_fd reached EOF (the client went away) or stop_fd
 * became readable (a signal): running calls are cancelled, waited for (at most
 * 3 s) and the session ends (toolsets close their sandboxes). -1 with error()
 * only when in_fd cannot be read at all.
 */
int mcp_serve_stdio(struct mcp_server *srv, int in_fd, int out_fd, int stop_fd);

/* Options of the streamable HTTP transport. */
struct mcp_http_opts {
	const char *addr;	 /* "127.0.0.1:5555", "[::1]:0", ":5555" */
	const char *token;	 /* bearer token; NULL only with dev */
	int dev;		 /* no Authorization needed */
	int64_t session_idle_ms; /* idle sessions end; 0: 1 h */
};

/*
 * Serve streamable HTTP on h->addr, path /mcp (Documentation/protocol/mcp.md),
 * until stop_fd becomes readable; then all sessions end. Prints "listening on
 * http://<host>:<port>/mcp" to stderr once ready (the real port when the
 * address asks for port 0). Returns 0, or -1 with error() when it cannot
 * listen.
 */
int mcp_serve_http(struct mcp_server *srv, const struct mcp_http_opts *h,
		   int stop_fd);

#endif /* MCP_H */

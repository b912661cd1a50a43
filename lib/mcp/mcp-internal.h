#ifndef MCP_INTERNAL_H
#define MCP_INTERNAL_H

#include "compat.h"
#include "mcp/mcp.h"

#include <stdatomic.h>

/*
 * Shared by the MCP protocol core (lib/mcp/mcp.c), the streamable HTTP
 * transport (lib/mcp/mcp-http.c) and the task store (lib/mcp/mcp-tasks.c);
 * not for toolsets or commands.
 */

/* Protocol revisions, oldest first (Documentation/protocol/mcp.md "Protocol").
 */
enum mcp_rev {
	MCP_REV_NONE = -1, /* no handshake yet */
	MCP_REV_2024_11_05 = 0,
	MCP_REV_2025_03_26,
	MCP_REV_2025_06_18,
	MCP_REV_2025_11_25,
	MCP_REV_2026_07_28,
	MCP_REV_NR
};

/* "2025-06-18" -> MCP_REV_2025_06_18; MCP_REV_NONE if unknown. */
int mcp_rev_parse(const char *s);
const char *mcp_rev_name(int rev);

/* the _meta keys of 2026-07-28 (mcp-wire.md section 3.2) */
#define MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define MCP_META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define MCP_META_LOGLEVEL "io.modelcontextprotocol/logLevel"
#define MCP_META_SERVERINFO "io.modelcontextprotocol/serverInfo"
/*
 * gosbx's own _meta key for 2026-07-28 requests on HTTP: the name of
 * the state (sandboxes) a stateless client keeps across requests;
 * without it each request has state of its own (gosbx-mcp(1)).
 */
#define MCP_META_SESSION "dev.gosbx/session"

/*
 * Where the answers to messages go: stdout (stdio), one HTTP exchange
 * (a POST's JSON body or SSE stream), or a batch collector. Reference
 * counted: each running tools/call holds a reference, so the channel
 * outlives a client that went away.
 */
struct mcp_chan {
	atomic_int refs;
	/*
	 * Deliver one message. final: it is the answer to a request (or
	 * to an invalid message) and each such message gets exactly one
	 * final send; msg NULL means "no answer" (a cancelled request).
	 * final 0: a notification related to the request (progress, log).
	 * http_status: the HTTP status the answer deserves (200, 400 for
	 * malformed messages, 404 for an unknown 2026-07-28 method).
	 */
	void (*send)(struct mcp_chan *ch, const char *msg, size_t len,
		     int final, int http_status);
	/* free the channel (refs reached 0) */
	void (*destroy)(struct mcp_chan *ch);
};

void mcp_chan_init(struct mcp_chan *ch);
void mcp_chan_ref(struct mcp_chan *ch);
void mcp_chan_unref(struct mcp_chan *ch);

/*
 * Sessions. A session is busy while a transport uses it (handler
 * reference) or a tools/call of it runs; it ends (toolsets'
 * session_end) when mcp_session_end() was called and it is no longer
 * busy.
 */

/*
 * A new session of srv; id is the HTTP session id (copied) or NULL
 * for stdio; label as mcp_session_label(). shared: a session of
 * 2026-07-28 HTTP traffic (one request's, or the named one of
 * MCP_META_SESSION; notifications/cancelled is ignored there: its
 * request ids are not unique). Returns a session nobody
 * holds (busy 0).
 */
struct mcp_session *mcp_session_new(struct mcp_server *srv, const char *id,
				    const char *label, int shared);
const char *mcp_session_id(struct mcp_session *s);
/* take / drop a busy reference */
void mcp_session_get(struct mcp_session *s);
void mcp_session_put(struct mcp_session *s);
/* 1 while busy (references or calls), else 0 */
int mcp_session_busy(struct mcp_session *s);
/* monotonic ms of the last message handled */
uint64_t mcp_session_last_used(struct mcp_session *s);
/* the negotiated handshake revision or MCP_REV_NONE */
int mcp_session_rev(struct mcp_session *s);
/*
 * End the session: no new calls, running ones are cancelled, then
 * wait up to timeout_ms (<0: forever) for them. If they finished, the
 * toolsets' session_end run here and s is freed: returns 0. Otherwise
 * the last call to finish does that later: returns 1 (s must not be
 * used any more either way). The caller holds no busy reference.
 */
int mcp_session_end(struct mcp_session *s, int64_t timeout_ms);
/* Cancel the running calls whose answers go to ch (stream closed). */
void mcp_session_cancel_chan(struct mcp_session *s, struct mcp_chan *ch);

/*
 * Messages. mcp_handle_message() serves one decoded JSON-RPC message
 * (any JSON value) of session s: answers go to ch (answers of
 * tools/call later, from a worker thread). mcp_handle_batch() serves
 * an array (JSON-RPC batch, revision 2025-03-26): one final send to
 * ch with the array of answers, or NULL when there is none.
 */
void mcp_handle_message(struct mcp_session *s, json_t *msg,
			struct mcp_chan *ch);
void mcp_handle_batch(struct mcp_session *s, json_t *arr, struct mcp_chan *ch);

/*
 * 1 if the message gets a final send (a request, or anything that is
 * neither a valid notification nor a response), else 0.
 */
int mcp_message_expects_answer(const json_t *msg);
/* 1 if msg is a request carrying the 2026-07-28 _meta version key */
int mcp_message_is_modern(const json_t *msg);
/*
 * The string value of key in msg's params._meta, or NULL (no such key,
 * not a string). Points into msg.
 */
const char *mcp_message_meta_string(const json_t *msg, const char *key);
/* the method of msg or NULL */
const char *mcp_message_method(const json_t *msg);
/*
 * 1 if answering msg may involve notifications before the result
 * (tools/call with a progressToken or a log level), so that an HTTP
 * client that accepts it should get an SSE stream.
 */
int mcp_message_may_stream(struct mcp_session *s, const json_t *msg);

/*
 * Append {"jsonrpc":"2.0","id":<id or null>,"error":{...}} to out;
 * data may be NULL.
 */
void mcp_error_msg(struct strbuf *out, const json_t *id, int code,
		   const char *message, const json_t *data);

/* JSON-RPC and MCP error codes (mcp-wire.md section 1.3) */
#define MCP_PARSE_ERROR (-32700)
#define MCP_INVALID_REQUEST (-32600)
#define MCP_METHOD_NOT_FOUND (-32601)
#define MCP_INVALID_PARAMS (-32602)
#define MCP_INTERNAL_ERROR (-32603)
#define MCP_HEADER_MISMATCH (-32020)
#define MCP_UNSUPPORTED_VERSION (-32022)

/* The largest message accepted on stdio or HTTP (bytes). */
#define MCP_MAX_MESSAGE ((size_t)64 << 20)

/*
 * Tasks (revision 2025-11-25, lib/mcp/mcp-tasks.c): a store per MCP
 * session; tasks of one session are invisible to every other. Bounds
 * (gosbx-mcp(1) LIMITS): MCP_TASKS_MAX tasks a session; a task that
 * ended is dropped once its ttl (ms from creation, at most
 * MCP_TASK_TTL_MAX_MS, the default too) has passed, and every task
 * goes with its session.
 */
#define MCP_TASKS_MAX 64
#define MCP_TASK_TTL_MAX_MS ((int64_t)60 * 60 * 1000)
#define MCP_TASK_POLL_MS 1000 /* the pollInterval we suggest */
#define MCP_META_RELATED_TASK "io.modelcontextprotocol/related-task"

struct mcp_task_store;
struct mcp_task_store *mcp_tasks_new(void);
/* free the store; the session's calls must be done */
void mcp_tasks_free(struct mcp_task_store *st);
/*
 * A new working task: returns its channel (the store's reference; take
 * your own for the call) and appends "task":{Task} to out; ttl_ms < 0:
 * the default. NULL with error() when the store is full or no random id
 * can be had.
 */
struct mcp_chan *mcp_task_create(struct mcp_task_store *st, int64_t ttl_ms,
				 struct strbuf *out);
/* forget the task of channel ch (its call could not start) */
void mcp_task_forget(struct mcp_task_store *st, struct mcp_chan *ch);
/* append the Task's fields to out: 0, or -1 when id is unknown */
int mcp_task_get(struct mcp_task_store *st, const char *id, struct strbuf *out);
/* append "tasks":[...] (every task, one page) to out */
void mcp_tasks_list(struct mcp_task_store *st, struct strbuf *out);
/*
 * Mark a working task cancelled and append its fields to out; returns
 * its channel (a reference the caller drops) so that the caller cancels
 * the call. NULL when id is unknown, or *was_done set when it had
 * already ended.
 */
struct mcp_chan *mcp_task_cancel(struct mcp_task_store *st, const char *id,
				 struct strbuf *out, int *was_done);
/*
 * Answer a tasks/result (request id req_id) on ch: now if the task
 * ended, else when it does. 0, or -1 (nothing sent) when id is unknown.
 */
int mcp_task_result(struct mcp_task_store *st, const char *id,
		    struct mcp_chan *ch, const json_t *req_id);

/* the server (lib/mcp/mcp.c) */
const struct mcp_options *mcp_server_options(struct mcp_server *srv);

#endif /* MCP_INTERNAL_H */

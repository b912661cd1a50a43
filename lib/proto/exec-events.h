#ifndef PROTO_EXEC_EVENTS_H
#define PROTO_EXEC_EVENTS_H

#include "compat.h"
#include "exec.h"
#include "json.h"
#include "strbuf.h"

/*
 * The events of the exec stream, encoded and decoded in this one place
 * (gosbx-runtime writes them, gosbx reads them).
 *
 * Source: the runtime API spec (Documentation/protocol/runtime-api.md,
 * "gosbx extensions", feature exec-stream) and
 * Documentation/gosbx-runtime.txt (exec-stream, exec-input, jobs).
 * POST /v1/exec answers application/x-ndjson: one JSON object a line,
 * each ended by "\n", its member "type" saying what it is:
 *
 *   {"type":"stdout","data":"<text>"}     output bytes that are valid
 *   {"type":"stderr","data":"<text>"}     UTF-8, as a JSON string
 *   {"type":"stdout","b64":"<base64>"}    any other bytes (RFC 4648
 *                                         section 4); never lost or
 *                                         reordered within a stream
 *   {"type":"exit","exit_code":N,...}     last: every field of the
 *                                         /execute answer but the
 *                                         stream texts
 *   {"type":"started"}                    exec-input: the command runs
 *                                         and takes stdin requests
 *   {"type":"heartbeat"}                  a quiet command's keep-alive
 *   {"type":"trimmed","bytes":N}          jobs: output that was dropped
 *
 * Output events of a job's stream also carry "offset" (the output
 * offset of their first byte), as does "trimmed". Readers ignore event
 * types they do not know (a newer runtime's), and members they do not
 * know.
 */

/*
 * The longest event line a reader takes, bytes (without its newline):
 * a line carries at most one output chunk of gosbx-runtime (256 KiB, at
 * most 6 bytes each in JSON: "\u0000"), so 8 MiB is far above it, and
 * bounds what a hostile runtime makes the client hold.
 */
#define EXEC_EVENT_LINE_MAX ((size_t)8 << 20)

enum exec_event_type {
	EXEC_EVENT_UNKNOWN = 0, /* a type this side does not know */
	EXEC_EVENT_STDOUT,
	EXEC_EVENT_STDERR,
	EXEC_EVENT_EXIT,
	EXEC_EVENT_STARTED,
	EXEC_EVENT_HEARTBEAT,
	EXEC_EVENT_TRIMMED,
};

/* ---- encoding (gosbx-runtime) ---- */

/*
 * Append an output event of stream (EXEC_STDOUT or EXEC_STDERR) holding
 * the len bytes at buf, and its newline, to out: "data" when the bytes
 * are valid UTF-8, else "b64". offset >= 0 adds "offset" (jobs); pass
 * -1 for none. Nothing is appended when len is 0.
 */
void exec_event_add_output(struct strbuf *out, enum exec_stream stream,
			   const char *buf, size_t len, int64_t offset);

/*
 * Append a member-less event ("started", "heartbeat") and its newline
 * to out.
 */
void exec_event_add_simple(struct strbuf *out, enum exec_event_type type);

/*
 * Append a "trimmed" event: bytes of output dropped before offset.
 */
void exec_event_add_trimmed(struct strbuf *out, uint64_t bytes,
			    uint64_t offset);

/*
 * The fields of a command's result that /execute answers after
 * "exit_code", "stderr" and "stdout", and that the exit event carries:
 * ",\"duration_ms\":N,\"reason\":\"...\"" and so on (spec, exec-options).
 * with_truncation 0 writes both *_truncated as false (a stream that
 * was sent whole).
 */
void exec_result_add_fields(struct strbuf *out, const struct exec_result *res,
			    int with_truncation);

/*
 * Begin an exit event: "{\"type\":\"exit\",\"exit_code\":N" and the
 * fields of exec_result_add_fields(res, 0). The caller may add more
 * members (",\"k\":v") and ends it with exec_event_end_exit().
 */
void exec_event_begin_exit(struct strbuf *out, const struct exec_result *res);
/* End an exit event: '}', and the newline when newline is non-zero */
void exec_event_end_exit(struct strbuf *out, int newline);

/* ---- decoding (gosbx) ---- */

struct exec_event {
	enum exec_event_type type;
	/*
	 * The "type" member as sent (owned by json), or NULL when the line
	 * had none.
	 */
	const char *name;
	/*
	 * output events: the len bytes of "data" as json holds them (no
	 * copy), or of "b64" decoded into b64; "" and 0 for other events.
	 * Valid until ev is parsed again or released.
	 */
	struct {
		const char *buf;
		size_t len;
	} data;
	struct strbuf b64;
	int64_t offset; /* "offset", or -1 when absent */
	int64_t bytes;	/* "trimmed": "bytes", else 0 */
	/* the whole event (the exit fields are read from it), or NULL */
	json_t *json;
};

#define EXEC_EVENT_INIT                                                        \
	{                                                                      \
		EXEC_EVENT_UNKNOWN, NULL, { "", 0 }, STRBUF_INIT, -1, 0, NULL  \
	}

void exec_event_init(struct exec_event *ev);
void exec_event_release(struct exec_event *ev);

/*
 * Decode one event line (len bytes, without its newline) into ev,
 * replacing what it held. Returns:
 *   0  a known event;
 *   1  a well-formed event of a type this side does not know
 *      (ev->type EXEC_EVENT_UNKNOWN, ev->name its type; err says so):
 *      readers skip it;
 *  -1  a malformed line, with the reason in err: over
 *      EXEC_EVENT_LINE_MAX, not JSON (jansson also refuses invalid
 *      UTF-8), not an object, no string "type" (ev->type
 *      EXEC_EVENT_UNKNOWN, ev->name NULL: the stream is broken), or a
 *      known type whose members are wrong: an output event with
 *      neither a string "data" nor valid "b64", a non-integer
 *      "exit_code", "offset" or "bytes" (ev->type is then set, so
 *      that a reader may count the bad event and go on).
 * err may be NULL.
 */
int exec_event_parse(struct exec_event *ev, const char *line, size_t len,
		     struct strbuf *err);

/*
 * Split the bytes of an event stream, as they arrive, into lines:
 * line keeps an unfinished line between calls (the caller's; it
 * releases it). fn(text, len, data) is called for each complete
 * non-empty line, without its newline; a negative return of fn stops
 * the split and -1 is returned. A line over max bytes (finished or
 * not) returns EXEC_EVENT_OVERLONG at once, without calling fn: a
 * reader never holds more than max bytes of one line. Else 0.
 */
#define EXEC_EVENT_OVERLONG (-2)
int exec_event_split(struct strbuf *line, const char *buf, size_t len,
		     size_t max,
		     int (*fn)(const char *text, size_t len, void *data),
		     void *data);

/* The stream (1 stdout, 2 stderr) of an output event type, else 0 */
static inline int exec_event_stream(enum exec_event_type type)
{
	return type == EXEC_EVENT_STDOUT   ? 1
	       : type == EXEC_EVENT_STDERR ? 2
					   : 0;
}

#endif /* PROTO_EXEC_EVENTS_H */

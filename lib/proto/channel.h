#ifndef PROTO_CHANNEL_H
#define PROTO_CHANNEL_H

#include "compat.h"
#include "json.h"
#include "strbuf.h"

/*
 * The interactive channel of an exec command, both ends (gosbx's
 * lib/session/interactive.c, gosbx-runtime's
 * runtime/runtime-interactive.c).
 *
 * Source: Documentation/gosbx-runtime.txt, "Interactive commands"
 * (feature exec-interactive; exec-input for the control messages), an
 * extension of the runtime API spec (Documentation/protocol/
 * runtime-api.md, "gosbx extensions"). In the spirit of Kubernetes'
 * v5.channel.k8s.io:
 *
 * - GET /v1/exec upgraded to a WebSocket (RFC 6455) with subprotocol
 *   EXEC_CHANNEL_PROTOCOL;
 * - every message is binary, its first byte the channel, the rest the
 *   payload: 0 stdin (client to runtime, bytes), 1 stdout and 2 stderr
 *   (runtime to client, bytes; an empty stdout message is a
 *   heartbeat), 3 status (runtime to client, once: the exit event of
 *   proto/exec-events.h, JSON without a newline), 4 control (client to
 *   runtime, JSON, see below); a message without a channel byte is a
 *   protocol error;
 * - control messages are JSON objects with a "type": "start" first and
 *   once (the POST /v1/exec body, "stdin" excluded), then any of
 *   {"type":"resize","cols":C,"rows":R} (1 to 65535, a terminal only),
 *   {"type":"signal","signal":"<name>"} (to the terminal's foreground
 *   process group; names below) and {"type":"eof"} (stdin ends).
 *   exec-input carries the same control messages as the body of
 *   POST /v1/exec/<request id>/control.
 */

#define EXEC_CHANNEL_PROTOCOL "gosbx.exec.v1"

enum exec_channel {
	EXEC_CH_STDIN = 0,
	EXEC_CH_STDOUT = 1,
	EXEC_CH_STDERR = 2,
	EXEC_CH_STATUS = 3,
	EXEC_CH_CONTROL = 4,
};

/*
 * Append one channel message to out: the channel byte, then the len
 * bytes at data (data may be NULL when len is 0).
 */
void exec_channel_frame(struct strbuf *out, enum exec_channel ch,
			const void *data, size_t len);

/*
 * Split a received message of len bytes: *ch its channel byte (which
 * may name a channel this side does not know), *payload and *plen the
 * rest (pointing into msg). Returns 0, or -1 for an empty message.
 */
int exec_channel_split(const void *msg, size_t len, unsigned *ch,
		       const void **payload, size_t *plen);

/* ---- control messages ---- */

enum exec_control_type {
	EXEC_CONTROL_START,
	EXEC_CONTROL_RESIZE,
	EXEC_CONTROL_SIGNAL,
	EXEC_CONTROL_EOF,
};

struct exec_control {
	enum exec_control_type type;
	unsigned cols, rows; /* resize: each from 1 to 65535 */
	int signo;	     /* signal: the signal number */
};

/*
 * Append a control message's JSON to out (no channel byte): resize of
 * cols x rows, signal of a signal's name without "SIG" (one of
 * HUP, INT, QUIT, KILL, USR1, USR2, TERM, CONT, STOP, TSTP, WINCH), eof. Start
 * messages are built by the caller (they are the exec body).
 */
void exec_control_add_resize(struct strbuf *out, unsigned cols, unsigned rows);
void exec_control_add_signal(struct strbuf *out, const char *name);
void exec_control_add_eof(struct strbuf *out);

/*
 * Decode a control message j into c. Only the members of the type are
 * checked (a start message is the exec body, for the caller to
 * check). Returns 0, or -1 with the reason in err (a message for the
 * client): j is no object or has no "type", an unknown type, a resize
 * without cols and rows in range, a signal with a name not listed.
 */
int exec_control_parse(const json_t *j, struct exec_control *c,
		       struct strbuf *err);

#endif /* PROTO_CHANNEL_H */

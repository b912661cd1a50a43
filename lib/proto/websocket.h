#ifndef PROTO_WEBSOCKET_H
#define PROTO_WEBSOCKET_H

#include "compat.h"
#include "strbuf.h"

#include <wslay/wslay.h>

/*
 * One WebSocket endpoint (RFC 6455), client or server, over any byte
 * transport: libcurl's CONNECT_ONLY socket (lib/session/websocket.c), a
 * socket libmicrohttpd upgraded (gosbx-runtime), a plain socket (tests).
 * wslay does the framing (section 5): masking of client frames (5.3),
 * fragmentation (5.4), ping and pong (5.5.2, 5.5.3, answered here by
 * wslay), close (5.5.1, 7.4 codes); this file adds the transport, the
 * message size limit, a readable error when the peer breaks the
 * protocol, and the opening handshake's keys (section 4).
 *
 * Everything is non-blocking: ws_conn_read() and ws_conn_write() do what
 * the transport allows now and return; callers poll() the transport's
 * descriptor for ws_conn_events(). ws_conn_wait() does that for a
 * transport with a descriptor, for callers that want to block.
 */

/* ws_transport.read and .write: nothing can be done now */
#define WS_AGAIN (-2)

/*
 * A byte transport. read() returns the bytes read (at most len), 0 at
 * end of file, WS_AGAIN, or -1 when the transport broke. write() returns
 * the bytes taken (at least 1), WS_AGAIN or -1; more is non-zero when
 * wslay has more of the same frame to write (a hint, e.g. MSG_MORE).
 * fd is the descriptor to poll() for both, or -1. ctx is theirs.
 */
struct ws_transport {
	ssize_t (*read)(void *ctx, void *buf, size_t len);
	ssize_t (*write)(void *ctx, const void *buf, size_t len, int more);
	int fd;
	void *ctx;
};

/*
 * A non-blocking socket as a transport (recv() and send() with
 * MSG_DONTWAIT, MSG_NOSIGNAL, MSG_MORE for more); fd stays the caller's.
 */
void ws_socket_transport(struct ws_transport *t, int fd);

enum ws_role {
	WS_CLIENT, /* masks its frames (section 5.3) */
	WS_SERVER,
};

/* opcodes (section 5.2) */
enum ws_opcode {
	WS_TEXT = WSLAY_TEXT_FRAME,
	WS_BINARY = WSLAY_BINARY_FRAME,
	WS_CLOSE = WSLAY_CONNECTION_CLOSE,
	WS_PING = WSLAY_PING,
	WS_PONG = WSLAY_PONG,
};

struct ws_conn;

/*
 * A complete message, its fragments joined (section 5.4), or a control
 * frame (ping and pong are answered already). For WS_CLOSE, code is the
 * peer's status code (section 7.1.5; 1005 when it gave none) and data
 * its reason. data is valid during the call only.
 */
typedef void (*ws_msg_fn)(struct ws_conn *ws, int opcode, const uint8_t *data,
			  size_t len, uint16_t code, void *cb_data);

struct ws_conn {
	wslay_event_context_ptr ctx;
	struct ws_transport t;
	ws_msg_fn on_msg;
	void *cb_data;
	size_t max_msg;
	/* bytes read with the handshake, given to wslay first */
	struct strbuf pre;
	size_t pre_off;
	/* WS_COALESCE: a frame header held back to go with its payload */
	int coalesce;
	uint8_t hold[14];
	size_t hold_len;
	struct strbuf wbuf;
	int eof;	  /* the transport ended or broke */
	int close_queued; /* ws_conn_close() was called */
	int stopped;	  /* ws_conn_stop_reading() was called */
	int failed;	  /* wslay closed on the peer's protocol error */
	int bad_close;	  /* the peer's close frame was malformed */
};

/* ws_conn_init() flags */
#define WS_COALESCE 1 /* write a frame's header and payload at once */

/*
 * Set up ws over transport t in the given role. Messages over max_msg
 * bytes (0: wslay's default, 2^31 - 1) close the connection with 1009
 * (section 7.4.1). WS_COALESCE writes each frame's header with its
 * payload (one TLS record per frame; some servers mishandle a header
 * alone). Returns 0, or -1 with error() when out of memory. Release
 * ws with ws_conn_release() after success.
 */
int ws_conn_init(struct ws_conn *ws, enum ws_role role,
		 const struct ws_transport *t, size_t max_msg, int flags,
		 ws_msg_fn on_msg, void *cb_data);
void ws_conn_release(struct ws_conn *ws);

/*
 * Bytes of the peer's frames already read (after the handshake), and
 * how many of them wslay has yet to take (poll() cannot see them).
 */
void ws_conn_preload(struct ws_conn *ws, const void *buf, size_t len);
size_t ws_conn_buffered(const struct ws_conn *ws);

/*
 * Queue a message (WS_TEXT, WS_BINARY, WS_PING, WS_PONG) of len bytes,
 * copied; control frames carry at most 125 (section 5.5). Returns 0, or
 * -1 when it cannot be queued (too long, closing: no error() printed).
 */
int ws_conn_send(struct ws_conn *ws, int opcode, const void *buf, size_t len);

/*
 * Queue the close frame (section 5.5.1), after what is queued already:
 * code (0: none) and reason, cut to the 123 bytes a close frame holds.
 */
int ws_conn_close(struct ws_conn *ws, uint16_t code, const char *reason);

/* Read no more frames (e.g. on_msg's receiver gave up). */
void ws_conn_stop_reading(struct ws_conn *ws);

/* What wslay would do now; events for poll() (POLLIN, POLLOUT). */
int ws_conn_want_read(const struct ws_conn *ws);
int ws_conn_want_write(const struct ws_conn *ws);
short ws_conn_events(const struct ws_conn *ws);
/* Messages queued and their bytes (for flow control). */
size_t ws_conn_queued_count(const struct ws_conn *ws);
size_t ws_conn_queued_bytes(const struct ws_conn *ws);
/* Messages can still be queued: no close queued or sent, not broken. */
int ws_conn_want_write_more(const struct ws_conn *ws);
/* The peer's close frame has arrived. */
int ws_conn_close_received(const struct ws_conn *ws);
/* Neither side has anything more to say: the connection can go. */
int ws_conn_done(const struct ws_conn *ws);

/*
 * Read what the transport has and hand complete messages to on_msg;
 * write what is queued. 0, or -1 when the transport broke or ended
 * (ws->eof). A peer breaking the protocol is not -1: wslay queues a
 * close (1002 a bad frame, 1009 an oversized message, 1007 bad UTF-8 in
 * a text message or close reason) and ws_conn_error() tells about it.
 */
int ws_conn_read(struct ws_conn *ws);
int ws_conn_write(struct ws_conn *ws);

/*
 * When the peer broke the protocol, append a sentence saying how to
 * err (may be NULL) and return the close code it deserved (the one sent,
 * except for a close with a 1-byte body, which wslay answers with an
 * empty close); otherwise 0.
 */
uint16_t ws_conn_error(const struct ws_conn *ws, struct strbuf *err);

/*
 * Blocking use: poll t.fd for ws_conn_events() up to timeout_ms (-1
 * forever), then read and write. 0, or -1 as ws_conn_read() (or with
 * error() when poll fails).
 */
int ws_conn_wait(struct ws_conn *ws, int timeout_ms);

/* ---- the opening handshake (section 4) ---- */

/* Fill buf with len random bytes (getrandom); 0 or -1 (errno). */
int ws_random(void *buf, size_t len);

/* Append a new random Sec-WebSocket-Key (section 4.1, item 7); 0/-1. */
int ws_client_key(struct strbuf *out);

/*
 * Append to out the Sec-WebSocket-Accept value for the client's
 * Sec-WebSocket-Key key: base64(SHA-1(key + the GUID of section 1.3)),
 * section 4.2.2, item 5.4.
 */
void ws_accept_key(const char *key, struct strbuf *out);

#endif /* PROTO_WEBSOCKET_H */

#ifndef PROTO_GRPC_CLIENT_H
#define PROTO_GRPC_CLIENT_H

#include "compat.h"
#include "strbuf.h"

#include <signal.h>
#include <stdint.h>

/*
 * A gRPC client over one HTTP/2 connection (cleartext, "h2c" with
 * prior knowledge), for sandboxd's ProcessService (agent-sandbox
 * v1.0.3, packages/sandboxd/spec/process/v1/process.proto; the url
 * backend, lib/session/sandboxd.c).
 *
 * HTTP/2 is nghttp2's client session; messages are the caller's
 * (protobuf-c, lib/proto/pb/). What is ours is gRPC's framing
 * (grpc/doc/PROTOCOL-HTTP2.md): a request is POST <path> with
 * content-type application/grpc and te: trailers; each message on the
 * wire is a compressed-flag byte (we send 0 and refuse 1: no
 * grpc-encoding is negotiated) and a 4-byte big-endian length; the
 * answer ends with the trailers grpc-status and grpc-message
 * (percent-decoded here), or is "trailers-only" (the status in the
 * headers).
 *
 * Calls are multiplexed on the connection and driven by the caller's
 * thread: grpc_call_start() queues a call, grpc_conn_step() moves bytes
 * and runs the callbacks. One thread a connection.
 *
 * The server is not trusted: a message over GRPC_CLIENT_MESSAGE_LIMIT,
 * a compressed message, a malformed HTTP/2 frame (nghttp2's verdict),
 * an HTTP status other than 200 or a non-gRPC content-type end the
 * call (or the connection) with an error, never a crash.
 */

/* the largest message taken from a server, bytes (gRPC's default 4 MiB
 * is upstream's; we allow the 8 MiB of an output stream and framing) */
#define GRPC_CLIENT_MESSAGE_LIMIT (16u << 20)

/* gRPC status codes used here (grpc/doc/statuscodes.md) */
#define GRPC_STATUS_OK 0
#define GRPC_STATUS_CANCELLED 1
#define GRPC_STATUS_UNKNOWN 2
#define GRPC_STATUS_DEADLINE_EXCEEDED 4
#define GRPC_STATUS_NOT_FOUND 5
#define GRPC_STATUS_UNIMPLEMENTED 12
#define GRPC_STATUS_INTERNAL 13
#define GRPC_STATUS_UNAVAILABLE 14

struct grpc_conn;

/* The end of a call. */
struct grpc_status {
	int code;	       /* grpc-status, GRPC_STATUS_* */
	struct strbuf message; /* grpc-message decoded, or our own reason */
};

void grpc_status_init(struct grpc_status *st);
void grpc_status_release(struct grpc_status *st);

/* What a call reports, from grpc_conn_step() on the caller's thread. */
struct grpc_call_cb {
	/*
	 * One message of the answer (its protobuf bytes, len bytes, valid
	 * during the call). Return <0 to cancel the call (RST_STREAM
	 * CANCEL; on_close then says GRPC_STATUS_CANCELLED). May be NULL.
	 */
	int (*on_message)(const uint8_t *msg, size_t len, void *data);
	/* The call ended: st is the server's status or ours (a reset
	 * stream, a bad answer, a broken connection). Called once. */
	void (*on_close)(const struct grpc_status *st, void *data);
	void *data;
};

/*
 * Connect to addr ("host:port", "[v6]:port") over TCP, or to the unix
 * socket of "unix:<path>" (gRPC's naming syntax), and send the HTTP/2
 * preface and SETTINGS. authority: the :authority of the calls (NULL:
 * addr, "localhost" for a unix socket). timeout_ms: of the TCP connect
 * (0: the system's).
 * Returns the connection (free with grpc_conn_free()), or NULL with
 * error() naming addr and why.
 */
struct grpc_conn *grpc_connect(const char *addr, const char *authority,
			       int64_t timeout_ms);

/* Close the connection; calls still open get on_close (UNAVAILABLE). */
void grpc_conn_free(struct grpc_conn *c);

/*
 * Start a call of method path ("/process.v1.ProcessService/Start")
 * with one request message (req, len bytes, copied) and end the
 * request stream: unary and server-streaming calls. cb is copied.
 * Returns the stream id (> 0), or -1 with error() (the connection is
 * broken, no more streams).
 */
int grpc_call_start(struct grpc_conn *c, const char *path, const void *req,
		    size_t len, const struct grpc_call_cb *cb);

/* Cancel a started call (RST_STREAM CANCEL); its on_close follows. */
void grpc_call_cancel(struct grpc_conn *c, int stream_id);

/*
 * Wait up to timeout_ms (0: do not wait, -1: forever) for the
 * connection's socket, then read and write what can be and run the
 * callbacks. Returns 0, or -1 with error() when the connection broke
 * (closed by the server, a malformed frame, a write error): every open
 * call has had on_close by then.
 */
int grpc_conn_step(struct grpc_conn *c, int timeout_ms);

/* The socket, for a caller's own poll(): POLLIN always, POLLOUT when
 * grpc_conn_want_write(). */
int grpc_conn_fd(struct grpc_conn *c);
int grpc_conn_want_write(struct grpc_conn *c);

/* The calls not closed yet. */
int grpc_conn_open_calls(struct grpc_conn *c);

/*
 * 1 when a new call can start on c: not broken, and no GOAWAY from the
 * server (RFC 9113 section 6.8: it takes no new streams); else 0.
 */
int grpc_conn_usable(struct grpc_conn *c);

/*
 * A unary call to its end: the one answer message into resp (appended;
 * may be NULL), the status into st (initialised by the caller).
 * timeout_ms: the most to wait for the answer (0: forever); when it
 * passes the call is cancelled and st says DEADLINE_EXCEEDED ("no
 * answer from the server in N ms"). Returns 0 when st is OK, 1 when
 * the server (or a deadline) gave another status, -1 with error() when
 * the connection broke.
 */
int grpc_unary(struct grpc_conn *c, const char *path, const void *req,
	       size_t len, struct strbuf *resp, struct grpc_status *st,
	       int64_t timeout_ms);

#endif

#ifndef WEBSOCKET_H
#define WEBSOCKET_H

#include "compat.h"
#include "strbuf.h"

#include "proto/websocket.h"

#include <signal.h>

/*
 * WebSocket (RFC 6455) pieces shared by both ends of gosbx-runtime's
 * interactive channel (Documentation/gosbx-runtime.txt, "Interactive
 * commands"): the accept key of the opening handshake, and a client
 * connection made the way lib/kube/portforward.c makes its own: libcurl
 * connects (TCP or unix socket, TLS, with the settings of an
 * http_client) with CURLOPT_CONNECT_ONLY, because Debian's libcurl 7.88
 * has no WebSocket support; the upgrade request is written here and the
 * frames are lib/proto/websocket.h's, over curl_easy_send() and
 * curl_easy_recv().
 */

struct http_client;

/* A client connection; zero it, then ws_client_open(). */
struct ws_client {
	void *curl; /* CURL *, CONNECT_ONLY */
	int sock;   /* its socket, for poll(); -1 when not connected */
	/* the WebSocket once open: a WS_CLIENT over curl, WS_COALESCE */
	struct ws_conn conn;
	int have_conn;
	/* a refused upgrade: its HTTP status and body */
	long status;
	struct strbuf body;
	/*
	 * 1: not a byte came back to the upgrade (no answer in time, or
	 * the connection closed): ws_client_open() returned 1 with status
	 * 0 and body saying which
	 */
	int no_answer;
};

/*
 * Open a WebSocket to path (e.g. "/v1/exec") on the server of c: its
 * base URL, transport (unix socket, TLS, certificates) and the header
 * lines of every request of c (http_client_header_lines()), plus
 * "Sec-WebSocket-Protocol: <proto>", the headers given (NULL-terminated
 * "Name: value" strings, or NULL) and "X-Request-ID: <16 hex digits>"
 * (copied to id_out, 17 bytes, when not NULL).
 *
 * Waits for the answer up to timeout_ms (0: 30 s), or until *cancel
 * (may be NULL) becomes non-zero.
 *
 * Returns 0 when the server switched protocols with the right accept
 * key and subprotocol, ws->conn then set up (ws_conn_init(): messages
 * up to max_msg bytes go to on_msg with cb_data); 1 when it answered
 * with another status, kept in ws->status and ws->body (at most 64 KiB of it:
 * callers decide, e.g. fall back when a proxy in between does not carry
 * WebSockets), or sent nothing back at all (ws->no_answer, status 0,
 * body the reason: nothing reached the server's application, as far as
 * the client can tell); -1 with error() on a transport failure, a
 * malformed answer, a
 * 101 with a wrong key or subprotocol, or a cancel. Release ws with
 * ws_client_close() whatever was returned.
 */
int ws_client_open(struct ws_client *ws, struct http_client *c,
		   const char *path, const char *proto,
		   const char *const *headers, long timeout_ms,
		   volatile sig_atomic_t *cancel, char *id_out, size_t max_msg,
		   ws_msg_fn on_msg, void *cb_data);

/* Close the connection and free what ws holds; ws can be opened again. */
void ws_client_close(struct ws_client *ws);

#endif /* WEBSOCKET_H */

#ifndef WEBSOCKET_H
#define WEBSOCKET_H

#include "compat.h"
#include "strbuf.h"

#include <signal.h>

#include <wslay/wslay.h>

/*
 * WebSocket (RFC 6455) pieces shared by both ends of gosbx-runtime's
 * interactive channel (Documentation/gosbx-runtime.txt, "Interactive
 * commands"): the accept key of the opening handshake, and a client
 * connection made the way lib/kube/portforward.c makes its own: libcurl
 * connects (TCP or unix socket, TLS, with the settings of an
 * http_client) with CURLOPT_CONNECT_ONLY, because Debian's libcurl 7.88
 * has no WebSocket support; the upgrade request is written here and the
 * frames are wslay's, over curl_easy_send() and curl_easy_recv().
 */

struct http_client;

/*
 * Append to out the Sec-WebSocket-Accept value for the client's
 * Sec-WebSocket-Key key: base64(SHA-1(key + the RFC's GUID)), RFC 6455
 * section 4.2.2.
 */
void ws_accept_key(const char *key, struct strbuf *out);

/* A client connection; zero it, then ws_client_open(). */
struct ws_client {
	void *curl;	   /* CURL *, CONNECT_ONLY */
	int sock;	   /* its socket, for poll(); -1 when not connected */
	struct strbuf pre; /* frames read with the 101 answer */
	size_t pre_off;
	/* a frame header held back to go out with its payload */
	uint8_t hold[14];
	size_t hold_len;
	struct strbuf wbuf;
	int eof; /* the server closed the connection */
	/* a refused upgrade: its HTTP status and body */
	long status;
	struct strbuf body;
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
 * key and subprotocol; 1 when it answered with another status, kept in
 * ws->status and ws->body (at most 64 KiB of it: callers decide, e.g.
 * fall back when a proxy in between does not carry WebSockets); -1 with
 * error() on a transport failure, a malformed answer, a 101 with a
 * wrong key or subprotocol, or a cancel. Release ws with
 * ws_client_close() whatever was returned.
 */
int ws_client_open(struct ws_client *ws, struct http_client *c,
		   const char *path, const char *proto,
		   const char *const *headers, long timeout_ms,
		   volatile sig_atomic_t *cancel, char *id_out);

/* Close the connection and free what ws holds; ws can be opened again. */
void ws_client_close(struct ws_client *ws);

/*
 * The transport of a wslay client context whose user data leads to ws
 * (call them from the context's recv and send callbacks): they return
 * as wslay wants, setting WSLAY_ERR_WOULDBLOCK or
 * WSLAY_ERR_CALLBACK_FAILURE on ctx. ws_client_send() sends a frame
 * header together with its payload (one TLS record per frame, as
 * lib/kube/portforward.c does); ws_client_flush() sends a header held back
 * when wslay has nothing more to write: 0, or -1 when the connection
 * broke.
 */
ssize_t ws_client_recv(struct ws_client *ws, wslay_event_context_ptr ctx,
		       uint8_t *buf, size_t len);
ssize_t ws_client_send(struct ws_client *ws, wslay_event_context_ptr ctx,
		       const uint8_t *buf, size_t len, int flags);
int ws_client_flush(struct ws_client *ws);

/* A wslay genmask callback: random masking keys (getrandom). */
int ws_genmask(wslay_event_context_ptr ctx, uint8_t *buf, size_t len,
	       void *data);

#endif /* WEBSOCKET_H */

#ifndef PORTFORWARD_H
#define PORTFORWARD_H

/*
 * Native Kubernetes port-forward over WebSocket (spec/kubernetes.md,
 * "Port-forward over WebSocket"): a local listener whose every accepted
 * connection is tunnelled through its own WebSocket
 * GET /api/v1/namespaces/<ns>/pods/<pod>/portforward?ports=<port>
 * with subprotocol v4.channel.k8s.io (RFC 6455 framing by wslay over a
 * libcurl CONNECT_ONLY handle, because Debian's libcurl 7.88 has no
 * WebSocket support).
 *
 * Threads: one accept thread, plus one thread per forwarded connection
 * (blocking connect + TLS + upgrade, then a poll loop over the local
 * socket and the WebSocket). Connections are few and long lived
 * (HTTP keep-alive), and a thread per connection keeps each tunnel's
 * state machine linear and independent: a broken tunnel only ends its
 * own local connection.
 *
 * Close: v4.channel.k8s.io has no half-close, so an EOF from the local
 * peer sends what it wrote, then closes the WebSocket (close frame,
 * code 1000); what the pod sent until the server's close frame is still
 * delivered, then the local connection is closed. A WebSocket close or
 * error closes the local connection after its pending bytes.
 *
 * Recovery: when a WebSocket dies, its local connection is closed. The
 * next accepted connection opens a new WebSocket, so a client must
 * retry a request on a fresh connection when its old one was closed;
 * lib/http.h's libcurl client reconnects for the next request.
 *
 * Backpressure: at most KUBE_FORWARD_BUF bytes (plus one WebSocket
 * message) are held per direction; the side whose peer does not drain
 * is not read.
 */

#include <stddef.h>

struct http_client;

#define KUBE_FORWARD_BUF (256 * 1024)

struct kube_forward_opts {
	/*
	 * The API server client: its base URL and transport (unix socket,
	 * TLS, CA, client certificate) are used for each WebSocket, via
	 * http_client_apply_transport(). Must outlive the forward.
	 */
	const struct http_client *client;
	/* "Authorization: Bearer <token>" on the upgrade; NULL: none. */
	const char *bearer_token;
	const char *namespace; /* pod namespace */
	const char *pod;       /* pod name */
	unsigned port;	       /* pod port, 1..65535 */
	/*
	 * 0: listen on a unix socket in a private (0700) directory made
	 * under $TMPDIR (or /tmp); 1: listen on 127.0.0.1, a free port.
	 */
	int tcp;
};

/*
 * Start forwarding: open the local listener and the accept thread.
 * Returns the forward, to end with kube_forward_stop(), or NULL with
 * error() (bad options, cannot listen, cannot start a thread). The
 * API server is not contacted until the first local connection.
 */
struct kube_forward *kube_forward_start(const struct kube_forward_opts *o);

/*
 * What an http_client should use: the unix socket path (for
 * http_client_opts.unix_socket, with base URL "http://localhost") or,
 * with opts.tcp, "http://127.0.0.1:<port>". Owned by f.
 */
const char *kube_forward_address(const struct kube_forward *f);

/*
 * Number of WebSocket upgrades attempted so far (one per accepted
 * local connection).
 */
unsigned long kube_forward_tunnels(struct kube_forward *f);

/*
 * The last tunnel error (failed upgrade with its HTTP status and the
 * Kubernetes Status message, an error text received on channel 1, a
 * wrong port prefix, a broken WebSocket), or NULL when none yet.
 * Returns a copy the caller frees. Each such error is also printed
 * with error().
 */
char *kube_forward_last_error(struct kube_forward *f);

/*
 * Close the listener and every forwarded connection and its WebSocket,
 * join all threads, remove the unix socket and its directory, free f.
 * NULL is allowed.
 */
void kube_forward_stop(struct kube_forward *f);

#endif

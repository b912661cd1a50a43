#ifndef PORTFORWARD_H
#define PORTFORWARD_H

/*
 * Native Kubernetes port-forward over WebSocket
 * (Documentation/protocol/kubernetes.md, "Port-forward over WebSocket"): a
 * local listener whose every accepted connection is tunnelled through its own
 * WebSocket GET /api/v1/namespaces/<ns>/pods/<pod>/portforward?ports=<port>
 * with subprotocol v4.channel.k8s.io (RFC 6455: lib/proto/websocket.h, over
 * a libcurl CONNECT_ONLY handle, because Debian's libcurl 7.88 has no
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
 * Credentials: the bearer token of each upgrade comes from
 * opts.get_token when set (asked anew for every tunnel, and once more
 * after a 401), else the fixed opts.bearer_token; TLS settings and a
 * client certificate come from opts.client, fixed at start.
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
struct strbuf;

#define KUBE_FORWARD_BUF (256 * 1024)

struct kube_forward_opts {
	/*
	 * The API server client: its base URL and transport (unix socket,
	 * TLS, CA, client certificate) are used for each WebSocket, via
	 * http_client_apply_transport(). Must outlive the forward.
	 */
	const struct http_client *client;
	/*
	 * "Authorization: Bearer <token>" on every upgrade; NULL: none.
	 * A fixed token for callers without get_token (ignored when
	 * get_token is set).
	 */
	const char *bearer_token;
	/*
	 * Other "Name: value" header lines for every upgrade, or NULL:
	 * the kubeconfig's Basic credentials and impersonation
	 * (Impersonate-User, -Group, -Uid, -Extra-*; kube_auth.headers),
	 * which the API server applies to pods/portforward as to any
	 * request. Copied by kube_forward_start(); a line holding CR or
	 * LF is refused there.
	 */
	const char *const *headers;
	/*
	 * Optional credential source for credentials that rotate (exec
	 * plugin tokens expire after about an hour, projected
	 * service-account token files are replaced): the tunnel thread
	 * calls it before each upgrade with forget 0 and sends the token
	 * it appends to token (given empty; left empty: no Authorization
	 * header). When the API server answers the upgrade with HTTP 401
	 * Unauthorized, it is called once more with forget 1 (drop any
	 * cached credential and fetch it anew, as client-go does after a
	 * 401), and the upgrade is retried once on a new connection; a
	 * second 401 closes that local connection with the error
	 * "port-forward to pod '<ns>/<pod>' port <n> refused: HTTP 401:
	 * <Status message> (again with a fresh credential)".
	 *
	 * Threads: called from the forward's tunnel threads, never two
	 * calls at once for one forward (the forward serialises them), so
	 * it needs to be safe only against the caller's own other threads
	 * using token_data. It may block (an exec plugin runs); a tunnel
	 * waits for it, and kube_forward_stop() waits for a call in
	 * progress to return.
	 *
	 * Returns 0, or -1 after error() (the message is kept in
	 * kube_forward_last_error(), prefixed with the pod); the local
	 * connection is then closed. A token holding a line break is
	 * refused the same way. token_data is the caller's, passed as
	 * data, and must outlive the forward.
	 */
	int (*get_token)(void *data, int forget, struct strbuf *token);
	void *token_data;
	/*
	 * Optional: the pod to forward to now, when the upgrade to the
	 * current one is answered 404 (the pod is gone: a rollout of the
	 * router replaced it). It appends the pod's name to pod (given
	 * empty) and returns 0, or -1 after error(); another name than
	 * the current one becomes the forward's pod, and the upgrade is
	 * tried once more there. Called with token_data, from tunnel
	 * threads, never two calls at once for one forward (and never at
	 * the same time as get_token()). client-go's port-forward names
	 * one pod for its life; kubectl port-forward svc/... resolves
	 * once too: this is for long sessions that outlive a rollout.
	 */
	int (*resolve_pod)(void *data, struct strbuf *pod);
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
 * Number of local connections accepted so far; each gets its own
 * WebSocket (whose upgrade may be tried twice: see get_token).
 */
unsigned long kube_forward_tunnels(struct kube_forward *f);

/*
 * The last tunnel error (failed upgrade with its HTTP status and the
 * Kubernetes Status message, no credential from get_token, an error
 * text received on channel 1, a wrong port prefix, a broken
 * WebSocket), or NULL when none yet.
 * Returns a copy the caller frees. Each such error is also printed
 * with error().
 */
char *kube_forward_last_error(struct kube_forward *f);

/*
 * The HTTP status of an upgrade the API server refused for good: 403
 * (the authorizer: RBAC has no get+create on pods/portforward for this
 * user, impersonated or not), or 401 again after a fresh credential (or
 * with a credential that cannot be refreshed); 0 when none. Retrying
 * cannot help: callers fail at once (issue 20).
 */
int kube_forward_denied(struct kube_forward *f);

/*
 * quiet 1: tunnel errors are only kept (kube_forward_error_since()),
 * not printed with error(), while a caller retries and reports the
 * last one itself; 0 (the default): printed as they happen.
 */
void kube_forward_set_quiet(struct kube_forward *f, int quiet);

/*
 * How many tunnel errors happened so far (a mark for
 * kube_forward_error_since()).
 */
unsigned long kube_forward_errors(struct kube_forward *f);

/*
 * The last tunnel error if one happened after mark (a value of
 * kube_forward_errors()), else NULL: what explains a request through
 * the forward that failed in transport. A copy the caller frees.
 */
char *kube_forward_error_since(struct kube_forward *f, unsigned long mark);

/*
 * Close the listener and every forwarded connection and its WebSocket,
 * join all threads, remove the unix socket and its directory, free f.
 * NULL is allowed.
 */
void kube_forward_stop(struct kube_forward *f);

#endif

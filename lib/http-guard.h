#ifndef HTTP_GUARD_H
#define HTTP_GUARD_H

#include "compat.h"

#include <microhttpd.h>

/*
 * Defences of gosbx's HTTP servers (gosbx-runtime, gosbx mcp --http:
 * libmicrohttpd, one thread per connection) against clients that
 * connect and never finish a request, e.g. slowloris: 1,000 idle TCP
 * connections used to take every connection slot for the whole
 * connection timeout (300 s), and no honest client was served.
 *
 * A connection is "pending" from its accept until the server trusts
 * it: gosbx mcp once a request head carried the bearer token (or at
 * once with --dev), gosbx-runtime once a whole request (head and body)
 * has arrived: a client that sends a head and stalls its body is as
 * idle as one that never sends a head. A pending connection
 *   - has head_timeout_s seconds from its accept to send its request
 *     head, however slowly it sends (a total deadline, not an idle
 *     timeout), and an
 *     idle timeout of head_timeout_s too (MHD_OPTION_CONNECTION_TIMEOUT,
 *     see http_guard_head_timeout());
 *   - counts against max_pending (all clients) and max_pending_per_client
 *     (one IP address; every loopback and unix socket client is one
 *     client): a new connection past either limit makes the server shut
 *     down the oldest pending one (of that client, for its limit), so
 *     idle connections cannot keep a new honest one out.
 * A body that arrives moves its connection's deadline: each chunk
 * (http_guard_progress()) gives it head_timeout_s more and makes it the
 * newest pending connection, so the limits evict the connections that
 * stalled longest first, and one that stalls for head_timeout_s is shut
 * down.
 * A trusted connection gets trusted_timeout_s of idle time (the slots
 * the pending limit leaves free are theirs).
 *
 * Pass to MHD_start_daemon():
 *	MHD_OPTION_NOTIFY_CONNECTION, http_guard_notify, guard,
 *	MHD_OPTION_CONNECTION_TIMEOUT, http_guard_head_timeout(guard),
 * call http_guard_trust() from the access handler, and
 * http_guard_tick() about once a second.
 *
 * Threads: every function may be called from any thread.
 */

struct http_guard_opts {
	unsigned head_timeout_s;	 /* 0: 10 */
	unsigned trusted_timeout_s;	 /* 0: 300 */
	unsigned max_pending;		 /* 0: 256 */
	unsigned max_pending_per_client; /* 0: 64 */
};

struct http_guard;

/* A guard; opts may be NULL (every default). Free with http_guard_free. */
struct http_guard *http_guard_new(const struct http_guard_opts *opts);

/* Free g after the daemon that used it was stopped. NULL is allowed. */
void http_guard_free(struct http_guard *g);

/* The idle timeout of pending connections, in seconds (for the daemon). */
unsigned int http_guard_head_timeout(const struct http_guard *g);

/*
 * MHD_OPTION_NOTIFY_CONNECTION callback, cls the guard: records each
 * new connection as pending (evicting others past the limits) and
 * forgets it when it closes. Uses the connection's socket context.
 */
void http_guard_notify(void *cls, struct MHD_Connection *c,
		       void **socket_context,
		       enum MHD_ConnectionNotificationCode toe);

/*
 * Trust connection c (from the access handler, once its request head
 * passed the server's checks): no longer pending, idle timeout
 * trusted_timeout_s. Trusting it again does nothing.
 */
void http_guard_trust(struct http_guard *g, struct MHD_Connection *c);

/*
 * A pending connection c made progress (a chunk of its request body
 * arrived, from the access handler): its head_timeout_s starts again
 * and it becomes the newest pending connection. Does nothing for a
 * trusted connection.
 */
void http_guard_progress(struct http_guard *g, struct MHD_Connection *c);

/*
 * Shut down the pending connections whose head_timeout_s since accept
 * is over. Returns how many.
 */
int http_guard_tick(struct http_guard *g);

/* Connections shut down so far: evicted by the limits, and expired. */
void http_guard_stats(struct http_guard *g, uint64_t *evicted,
		      uint64_t *expired);

#endif /* HTTP_GUARD_H */
